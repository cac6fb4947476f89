#pragma once
// Move-only owner of a 2D (array) image with a mip chain and its own dedicated memory.
// Every engine operation leaves the whole image in SHADER_READ_ONLY_OPTIMAL, the layout
// in which samplers and CUDA read it.
#include <cstdint>
#include <vector>

#include "engine/core/device_memory.h"
#include "engine/textures/format.h"
#include "engine/textures/texture_desc.h"
#include "engine/core/unique_fd.h"
#include "engine/core/vulkan.h"

namespace tvlm {

class Context;
class CommandQueue;

// How a level view is read or written: in the stored encoding (read: texelFetch, write:
// imageStore), or, for RGBA8 and RGBA16F textures that allow it (words_allowed()), as one
// R32_UINT (R32G32_UINT) word per texel (read_words: textureGather of 2x2 texels at once,
// write_words).
enum class LevelAccess : uint8_t { read, write, read_words, write_words };

// Vulkan's format for an engine format (sRGB formats decode in the sampler).
VkFormat vk_format(Format format);

// An image the application created and owns (its memory too), described as it was created
// and in the layout it is in now; `levels` 0 means the full chain.
struct ApplicationImage {
    VkDevice device = VK_NULL_HANDLE;  // the device that created it: the context's
    VkImage image = VK_NULL_HANDLE;
    TextureDesc desc;                                  // extent, layers, levels, format (exportable: false)
    VkImageUsageFlags usage = 0;                       // as created
    VkImageCreateFlags flags = 0;                      // as created
    VkImageLayout layout = VK_IMAGE_LAYOUT_UNDEFINED;  // now (UNDEFINED: content not kept)
    // Set only where the application allocated the image's memory for export (CUDA then
    // maps it zero-copy: CudaTexture::import): the image created with
    // VkExternalMemoryImageCreateInfo, and bound at offset 0 to this allocation, made with
    // VkMemoryDedicatedAllocateInfo and VkExportMemoryAllocateInfo, both OPAQUE_FD, on a
    // device with VK_KHR_external_memory_fd (docs/cpp.md). `memory_size` is the
    // VkMemoryAllocateInfo::allocationSize it was made with.
    VkDeviceMemory exportable_memory = VK_NULL_HANDLE;
    VkDeviceSize memory_size = 0;
};

class Texture {
public:
    // Throws Error for zero or oversize extents, too many layers or levels, and formats
    // the device cannot sample, store, copy or export.
    static Texture create(Context& context, const TextureDesc& desc);
    // An image bound to memory imported from an fd that export_memory_fd() made for a
    // texture of the same desc. Importing takes ownership of the fd on success; on failure
    // the fd is closed by `fd`'s destructor. The content is acquired in SHADER_READ_ONLY.
    static Texture import_memory(Context& context, const TextureDesc& desc, UniqueFd fd, VkDeviceSize allocation_size);

    // The application's image as a texture, in place: mips and Vulkan-compute sampling
    // write and read it directly, each step checking the usage bits it needs first
    // (require_usage). The texture never destroys the image or its memory; its own views
    // are destroyed with it. After each step layout() is the layout the image was left in.
    // With `exportable_memory` the texture is exportable (desc().exportable) and CUDA can
    // import it; Throws Error when that memory is smaller than the image needs or the
    // device cannot export memory.
    static Texture wrap(Context& context, const ApplicationImage& image);

    // Throws Error, naming each missing usage bit and `step`, unless the image was created
    // with every bit of `needed` (textures texturevlm creates have them all).
    void require_usage(VkImageUsageFlags needed, const char* step) const;

    // Bytes of the dedicated allocation an image of `desc` needs on this device (what an
    // exporter of such an image must have allocated). Throws Error like create().
    static VkDeviceSize required_memory(Context& context, const TextureDesc& desc);

    Texture() = default;
    Texture(Texture&& other) noexcept = default;
    Texture& operator=(Texture&& other) noexcept;  // waits for the replaced texture's last use
    ~Texture();  // waits for the last use (mark_used), then destroys views, image and memory

    // A new fd for the memory each call; the caller owns it (CUDA takes it on import).
    UniqueFd export_memory_fd() const;

    VkImage image() const { return owned_image_ ? owned_image_.get() : application_image_.get(); }
    const TextureDesc& desc() const { return desc_; }
    uint32_t levels() const { return desc_.mip_levels(); }
    Extent2D extent(uint32_t level) const { return level_extent(desc_.width, desc_.height, level); }
    // The dedicated allocation: texturevlm's own, or the application's exportable one.
    VkDeviceSize allocation_size() const { return owned_image_ ? memory_.size() : application_memory_size_; }
    VkDeviceMemory memory() const { return owned_image_ ? memory_.handle() : application_memory_; }
    VkImageUsageFlags usage() const { return usage_; }
    VkImageCreateFlags flags() const { return flags_; }
    bool valid() const { return image() != VK_NULL_HANDLE; }

    // A view of one level, all layers, as a 2D array, in the stored encoding (sRGB textures
    // through UNORM: compute shaders see the bytes): `read` for texelFetch, `write` for
    // imageStore; the *_words accesses view texels as words (RGBA8: R32_UINT, RGBA16F:
    // R32G32_UINT). Created on
    // first use, kept. Throws Error for word views of a texture that does not allow them.
    VkImageView level_view(uint32_t level, LevelAccess access);
    // Whether texels can be viewed as words: RGBA8 and RGBA16F textures texturevlm creates
    // can (VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT); an application's image only if it was
    // created so.
    bool words_allowed() const;
    // A view of every level and layer as a 2D array, in the texture's format (sRGB decodes):
    // what samplers read. Created on first use, kept.
    VkImageView sampled_view();

    // Layout tracking for the engine's own command recording (whole image, one layout).
    VkImageLayout layout() const { return layout_; }
    void set_layout(VkImageLayout layout) { layout_ = layout; }
    // The context's timeline value after which no submitted work uses the texture; the
    // destructor waits for it so an image is never destroyed while the GPU reads it.
    void mark_used(uint64_t timeline_value) { last_use_ = timeline_value; }

private:
    // Validates `desc`, checks the format and creates the image, not yet bound to memory.
    static Texture unbound(Context& context, const TextureDesc& desc);
    // Creates the view into `slot` unless it holds one already; returns it.
    VkImageView view(VkImageViewHandle& slot, uint32_t base_level, uint32_t level_count, VkImageUsageFlags usage,
                     VkFormat format);
    // An application's image: held, never destroyed here.
    static void leave_image(VkDevice, VkImage, const VkAllocationCallbacks*) {}
    VkDevice device_ = VK_NULL_HANDLE;
    // Destroyed in reverse order: views, then the image, then its memory.
    DeviceMemory memory_;
    VkImageHandle owned_image_;
    VkHandle<VkImage, leave_image> application_image_;
    std::vector<VkImageViewHandle> views_;  // [level * 4 + access], then the sampled view; null until used
    TextureDesc desc_;
    VkImageUsageFlags usage_ = 0;
    VkImageCreateFlags flags_ = 0;
    VkImageLayout layout_ = VK_IMAGE_LAYOUT_UNDEFINED;
    CommandQueue* queue_ = nullptr;
    uint64_t last_use_ = 0;
    VkDeviceMemory application_memory_ = VK_NULL_HANDLE;  // wrapped images: the application's, if exportable
    VkDeviceSize application_memory_size_ = 0;
};

}  // namespace tvlm
