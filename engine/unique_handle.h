#pragma once
// The one move-only owner of an API handle, Vulkan's or CUDA's: it holds the handle and how
// to release it, releases it once, and moves. Owner classes hold these and default their
// moves: none writes move or destroy code of its own. A class's handles are released in the
// reverse order of their declaration (a pipeline before its layout). Header-only and free of
// any API header: engine/core/vk_handle.h and cuda/cuda_handle.h name the releases.
#include <utility>

namespace tvlm {

// Release: a small copyable callable, `void operator()(Handle) const`, that may carry what
// the release needs (the VkDevice that made the handle); a null handle (Handle{}) is never
// released.
template <class Handle, class Release>
class UniqueHandle {
public:
    UniqueHandle() = default;
    explicit UniqueHandle(Handle handle, Release release = {})
        : release_(release), handle_(handle) {}  // takes ownership
    UniqueHandle(UniqueHandle&& o) noexcept : release_(o.release_), handle_(std::exchange(o.handle_, Handle{})) {}
    UniqueHandle& operator=(UniqueHandle&& o) noexcept {
        if (this != &o) {
            reset();
            release_ = o.release_;
            handle_ = std::exchange(o.handle_, Handle{});
        }
        return *this;
    }
    UniqueHandle(const UniqueHandle&) = delete;
    UniqueHandle& operator=(const UniqueHandle&) = delete;
    ~UniqueHandle() { reset(); }

    Handle get() const { return handle_; }
    explicit operator bool() const { return handle_ != Handle{}; }

    // Where a create call (vkCreate*, cudaCreate*) writes the new handle, owned from then on:
    // the current one is released and the slot left null first, so a create call that fails
    // (and leaves it null) leaves nothing to release.
    Handle* create(Release release = {}) {
        reset();
        release_ = release;
        return &handle_;
    }

    // Releases now; errors at teardown have no one to go to.
    void reset() {
        if (handle_ != Handle{}) release_(handle_);
        handle_ = Handle{};
    }

private:
    [[no_unique_address]] Release release_{};
    Handle handle_{};
};

}  // namespace tvlm
