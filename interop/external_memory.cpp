#include "external_memory.h"

#include <utility>

#include "cuda_check.h"
#include "error.h"

namespace tvlm {

ExternalMemory ExternalMemory::import_dedicated(UniqueFd fd, size_t size) {
    if (!fd.valid()) throw Error("cannot import memory into CUDA: the fd is not valid");
    if (size == 0) throw Error("cannot import memory into CUDA: the size is 0");
    cudaExternalMemoryHandleDesc desc{};
    desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
    desc.handle.fd = fd.get();
    desc.size = size;
    desc.flags = cudaExternalMemoryDedicated;  // one dedicated VkDeviceMemory per image
    ExternalMemory m;
    TVLM_CUDA_CHECK(cudaImportExternalMemory(&m.memory_, &desc));
    fd.release();  // CUDA owns the fd now
    return m;
}

ExternalMemory::ExternalMemory(ExternalMemory&& o) noexcept : memory_(std::exchange(o.memory_, nullptr)) {}
ExternalMemory& ExternalMemory::operator=(ExternalMemory&& o) noexcept {
    if (this != &o) {
        if (memory_) cudaDestroyExternalMemory(memory_);
        memory_ = std::exchange(o.memory_, nullptr);
    }
    return *this;
}
ExternalMemory::~ExternalMemory() {
    if (memory_) cudaDestroyExternalMemory(memory_);
}

MipmappedArray::MipmappedArray(const ExternalMemory& memory, const cudaExternalMemoryMipmappedArrayDesc& desc) {
    TVLM_CUDA_CHECK(cudaExternalMemoryGetMappedMipmappedArray(&array_, memory.handle(), &desc));
}
MipmappedArray::MipmappedArray(MipmappedArray&& o) noexcept : array_(std::exchange(o.array_, nullptr)) {}
MipmappedArray& MipmappedArray::operator=(MipmappedArray&& o) noexcept {
    if (this != &o) {
        if (array_) cudaFreeMipmappedArray(array_);
        array_ = std::exchange(o.array_, nullptr);
    }
    return *this;
}
MipmappedArray::~MipmappedArray() {
    if (array_) cudaFreeMipmappedArray(array_);
}

}  // namespace tvlm
