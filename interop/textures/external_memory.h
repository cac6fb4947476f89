#pragma once
// CUDA's view of Vulkan memory: the imported allocation and the mipmapped array mapped
// from it. Free order: array, then external memory.
#include <cstddef>

#include "cuda/cuda_handle.h"
#include "engine/core/unique_fd.h"

namespace tvlm {

// Imports a dedicated Vulkan allocation of `size` bytes. Importing takes ownership of the
// fd on success; on failure the fd is closed by `fd`'s destructor.
ExternalMemory import_dedicated_memory(UniqueFd fd, size_t size);

// Maps the whole allocation as a mipmapped array (the descriptor must match the image).
MipmappedArray map_mipmapped_array(const ExternalMemory& memory, const cudaExternalMemoryMipmappedArrayDesc& desc);

}  // namespace tvlm
