#include "engine/core/context.h"

#include <algorithm>
#include <string>
#include <vector>

#include "engine/core/barriers.h"
#include "shaders/shader_params.h"
#include "engine/core/vk_check.h"

namespace tvlm {

namespace {

// Quad and shuffle operations in compute shaders, subgroups of at least 8 (the word
// shaders exchange texels between lanes 4 apart), and workgroups of 256 made of whole
// subgroups (what REQUIRE_FULL_SUBGROUPS asks of the local size).
bool shuffles_in_compute(VkPhysicalDevice physical) {
    VkPhysicalDeviceVulkan13Properties p13{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_3_PROPERTIES};
    VkPhysicalDeviceVulkan11Properties p11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES, &p13};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &p11};
    vkGetPhysicalDeviceProperties2(physical, &props);
    return (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) &&
           (p11.subgroupSupportedOperations & VK_SUBGROUP_FEATURE_QUAD_BIT) &&
           (p11.subgroupSupportedOperations & VK_SUBGROUP_FEATURE_SHUFFLE_BIT) && p13.minSubgroupSize >= 8 &&
           TVLM_BOX_THREADS % p13.maxSubgroupSize == 0;
}

// The float controls box_mips_rgba16f_rte.comp asks for: conversions to float16 that round
// to nearest even (without RoundingModeRTE their rounding is the implementation's), and
// infinities, NaNs and signed zeros kept in 16-, 32- and 64-bit arithmetic (without
// SignedZeroInfNanPreserve an implementation may drop them, and NVIDIA's did).
bool ieee_half_arithmetic(VkPhysicalDevice physical) {
    VkPhysicalDeviceVulkan12Properties p12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
    VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, &p12};
    vkGetPhysicalDeviceProperties2(physical, &props);
    return p12.shaderRoundingModeRTEFloat16 && p12.shaderSignedZeroInfNanPreserveFloat16 &&
           p12.shaderSignedZeroInfNanPreserveFloat32 && p12.shaderSignedZeroInfNanPreserveFloat64;
}

}  // namespace

Context::Context(const ContextDesc& desc) : instance_(desc.validation) {
    info_ = instance_.devices()[choose_device(instance_.devices(), desc.device)];
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(info_.handle, &props);
    limits_ = props.limits;

    const DeviceRequirements wanted(info_.handle, info_.memory_fd_export, info_.semaphore_fd_export);
    half_storage_ = wanted.v11.storageBuffer16BitAccess == VK_TRUE;
    // lavapipe (Mesa 22.3) advertises anisotropy, but its anisotropic sampler returns wrong
    // values for textureLod and textureGrad in compute shaders (seen in our tests: even
    // isotropic gradients came back blurred by several levels), so CPU devices sample
    // isotropically.
    anisotropy_ = wanted.features.features.samplerAnisotropy == VK_TRUE &&
                  props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;
    float64_ = wanted.features.features.shaderFloat64 == VK_TRUE;
    subgroup_shuffles_ = wanted.v13.computeFullSubgroups == VK_TRUE && shuffles_in_compute(info_.handle);
    ieee_float16_ = wanted.v12.shaderFloat16 == VK_TRUE && ieee_half_arithmetic(info_.handle);

    const float priority = 1.0f;
    VkDeviceQueueCreateInfo queue_info{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
    queue_info.queueFamilyIndex = info_.queue_family;
    queue_info.queueCount = 1;
    queue_info.pQueuePriorities = &priority;
    VkDeviceCreateInfo info{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, &wanted.features};
    info.queueCreateInfoCount = 1;
    info.pQueueCreateInfos = &queue_info;
    info.enabledExtensionCount = static_cast<uint32_t>(wanted.extensions.size());
    info.ppEnabledExtensionNames = wanted.extensions.data();
    check_vk(vkCreateDevice(info_.handle, &info, nullptr, &device_), "vkCreateDevice");
    finish_setup(info_.semaphore_fd_export, 0);
}

Context::Context(const HostVulkan& host) : instance_(host.instance, host.get_instance_proc_addr) {
    owns_device_ = false;
    device_ = host.device;
    if (!device_ || !host.physical_device) throw Error("no VkDevice / VkPhysicalDevice to adopt");
    const auto it = std::find_if(instance_.devices().begin(), instance_.devices().end(),
                                 [&](const DeviceInfo& d) { return d.handle == host.physical_device; });
    if (it == instance_.devices().end())
        throw Error(
            "the physical device is not one of the instance's: pass the VkPhysicalDevice the device was "
            "created from");
    info_ = *it;
    VkPhysicalDeviceProperties props;
    vkGetPhysicalDeviceProperties(info_.handle, &props);
    limits_ = props.limits;
    std::vector<std::string> missing;
    if (props.apiVersion < VK_API_VERSION_1_3)
        missing.push_back("Vulkan 1.3: the device offers " + api_version_string(props.apiVersion));
    uint32_t families = 0;
    vkGetPhysicalDeviceQueueFamilyProperties(info_.handle, &families, nullptr);
    std::vector<VkQueueFamilyProperties> family(families);
    vkGetPhysicalDeviceQueueFamilyProperties(info_.handle, &families, family.data());
    if (host.queue_family >= families || !(family[host.queue_family].queueFlags & VK_QUEUE_COMPUTE_BIT) ||
        host.queue_index >= family[host.queue_family].queueCount)
        missing.push_back("a compute queue: queue " + std::to_string(host.queue_index) + " of family " +
                          std::to_string(host.queue_family) + " is not one the device has with compute");
    const HostFeatures f = host_features(host);
    for (std::string& m : missing_requirements(f)) missing.push_back(std::move(m));
    if (!missing.empty()) {
        std::string text = "the application's Vulkan device lacks what texturevlm needs; enable at vkCreateDevice:";
        for (const std::string& m : missing) text += "\n  - " + m;
        throw Error(text);
    }
    half_storage_ = f.storage_16bit;
    anisotropy_ = f.anisotropy && props.deviceType != VK_PHYSICAL_DEVICE_TYPE_CPU;  // lavapipe: see above
    float64_ = f.float64;
    subgroup_shuffles_ = f.full_subgroups && shuffles_in_compute(info_.handle);
    ieee_float16_ = f.float16 && ieee_half_arithmetic(info_.handle);
    info_.memory_fd_export = info_.memory_fd_export && f.memory_fd;
    info_.semaphore_fd_export = info_.semaphore_fd_export && f.semaphore_fd;
    info_.queue_family = host.queue_family;
    finish_setup(info_.semaphore_fd_export, host.queue_index);
}

void Context::finish_setup(bool exportable_timeline, uint32_t queue_index) {
    try {
        queue_ = std::make_unique<CommandQueue>(device_, info_.queue_family, exportable_timeline, queue_index);
        VkSamplerCreateInfo sampler{VK_STRUCTURE_TYPE_SAMPLER_CREATE_INFO};
        sampler.magFilter = sampler.minFilter = VK_FILTER_NEAREST;
        sampler.mipmapMode = VK_SAMPLER_MIPMAP_MODE_NEAREST;
        sampler.addressModeU = sampler.addressModeV = sampler.addressModeW = VK_SAMPLER_ADDRESS_MODE_CLAMP_TO_EDGE;
        check_vk(vkCreateSampler(device_, &sampler, nullptr, point_sampler_.create(device_)), "vkCreateSampler");
    } catch (...) {
        queue_.reset();
        if (owns_device_) vkDestroyDevice(device_, nullptr);
        throw;
    }
}

Context::~Context() {
    queue_.reset();  // waits for in-flight work
    pipelines_.clear();
    constants_.clear();
    point_sampler_.reset();  // everything made from the device goes before it
    if (owns_device_) vkDestroyDevice(device_, nullptr);
}

const ComputePipeline& Context::pipeline(const std::string& key, const ComputePipelineDesc& desc) {
    const std::lock_guard lock(registry_mutex_);
    auto& slot = pipelines_[key];
    if (!slot) slot = std::make_unique<ComputePipeline>(device_, desc);
    return *slot;
}

const GpuBuffer& Context::constant_buffer(const std::string& key, std::span<const uint32_t> words) {
    {
        const std::lock_guard lock(registry_mutex_);
        if (const auto found = constants_.find(key); found != constants_.end()) return *found->second;
    }
    // Filled without the registry's lock: this runs inside record callbacks, which hold the
    // queue's lock, so holding the registry's while submitting could deadlock with them.
    auto buffer = std::make_unique<GpuBuffer>(info_.handle, device_, words.size_bytes(),
                                              VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT);
    const uint64_t filled = queue_->submit([&](VkCommandBuffer cmd) {
        vkCmdUpdateBuffer(cmd, buffer->handle(), 0, words.size_bytes(), words.data());  // at most 64 KiB
        record_memory_barrier(cmd, VK_PIPELINE_STAGE_2_COPY_BIT, VK_ACCESS_2_TRANSFER_WRITE_BIT,
                              VK_PIPELINE_STAGE_2_ALL_COMMANDS_BIT, VK_ACCESS_2_SHADER_STORAGE_READ_BIT);
    });
    const GpuBuffer* kept = nullptr;
    {
        const std::lock_guard lock(registry_mutex_);
        auto& slot = constants_[key];
        if (!slot) {
            slot = std::move(buffer);
            return *slot;
        }
        kept = slot.get();  // another thread registered it meanwhile
    }
    queue_->wait(filled);  // ours is freed once its fill has run
    return *kept;
}

}  // namespace tvlm
