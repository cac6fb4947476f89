#pragma once
// Move-only owners of CUDA's view of Vulkan memory: the imported allocation and the
// mipmapped array mapped from it. Free order: array, then external memory.
#include <cuda_runtime_api.h>

#include <cstddef>

#include "unique_fd.h"

namespace tvlm {

class ExternalMemory {
public:
    ExternalMemory() = default;
    // Imports a dedicated Vulkan allocation of `size` bytes. Importing takes ownership of
    // the fd on success; on failure the fd is closed by `fd`'s destructor.
    static ExternalMemory import_dedicated(UniqueFd fd, size_t size);
    ExternalMemory(ExternalMemory&& o) noexcept;
    ExternalMemory& operator=(ExternalMemory&& o) noexcept;
    ExternalMemory(const ExternalMemory&) = delete;
    ExternalMemory& operator=(const ExternalMemory&) = delete;
    ~ExternalMemory();

    cudaExternalMemory_t handle() const { return memory_; }

private:
    cudaExternalMemory_t memory_ = nullptr;
};

class MipmappedArray {
public:
    MipmappedArray() = default;
    // Maps the whole allocation as a mipmapped array (descriptor must match the image).
    MipmappedArray(const ExternalMemory& memory, const cudaExternalMemoryMipmappedArrayDesc& desc);
    MipmappedArray(MipmappedArray&& o) noexcept;
    MipmappedArray& operator=(MipmappedArray&& o) noexcept;
    MipmappedArray(const MipmappedArray&) = delete;
    MipmappedArray& operator=(const MipmappedArray&) = delete;
    ~MipmappedArray();

    cudaMipmappedArray_t handle() const { return array_; }

private:
    cudaMipmappedArray_t array_ = nullptr;
};

}  // namespace tvlm
