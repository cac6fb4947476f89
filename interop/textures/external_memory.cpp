#include "interop/textures/external_memory.h"

#include "cuda/cuda_check.h"
#include "engine/error.h"

namespace tvlm {

ExternalMemory import_dedicated_memory(UniqueFd fd, size_t size) {
    if (!fd.valid()) throw Error("cannot import memory into CUDA: the fd is not valid");
    if (size == 0) throw Error("cannot import memory into CUDA: the size is 0");
    cudaExternalMemoryHandleDesc desc{};
    desc.type = cudaExternalMemoryHandleTypeOpaqueFd;
    desc.handle.fd = fd.get();
    desc.size = size;
    desc.flags = cudaExternalMemoryDedicated;  // one dedicated VkDeviceMemory per image
    cudaExternalMemory_t memory = nullptr;
    TVLM_CUDA_CHECK(cudaImportExternalMemory(&memory, &desc));
    fd.release();  // CUDA owns the fd now
    return ExternalMemory(memory);
}

MipmappedArray map_mipmapped_array(const ExternalMemory& memory, const cudaExternalMemoryMipmappedArrayDesc& desc) {
    cudaMipmappedArray_t array = nullptr;
    TVLM_CUDA_CHECK(cudaExternalMemoryGetMappedMipmappedArray(&array, memory.get(), &desc));
    return MipmappedArray(array);
}

}  // namespace tvlm
