#include "engine/core/instance.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>

#include "engine/core/vk_check.h"
#include "engine/core/loader.h"

namespace tvlm {

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";

bool has_layer(const char* name) {
    uint32_t count = 0;
    vkEnumerateInstanceLayerProperties(&count, nullptr);
    std::vector<VkLayerProperties> layers(count);
    vkEnumerateInstanceLayerProperties(&count, layers.data());
    for (const auto& l : layers)
        if (std::strcmp(l.layerName, name) == 0) return true;
    return false;
}

}  // namespace

bool validation_requested_by_env() {
    const char* v = std::getenv("TVLM_VALIDATION");
    return v && *v && std::string(v) != "0";
}

Instance::Instance(bool validation) : validation_(validation) {
    load_vulkan_loader();
    api_version_ = volkGetInstanceVersion();
    if (api_version_ < VK_API_VERSION_1_3)
        throw Error("the Vulkan loader is version " + api_version_string(api_version_) +
                    "; texturevlm needs 1.3: update libvulkan1");

    std::vector<const char*> layers, extensions;
    if (validation_) {
        if (!has_layer(kValidationLayer))
            throw Error(
                "validation was requested but VK_LAYER_KHRONOS_validation is not installed: "
                "apt-get install vulkan-validationlayers, or unset TVLM_VALIDATION");
        layers.push_back(kValidationLayer);
        extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
        extensions.push_back(VK_EXT_VALIDATION_FEATURES_EXTENSION_NAME);  // the layer's own
    }
    VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
    app.pApplicationName = "texturevlm";
    app.pEngineName = "texturevlm";
    app.apiVersion = VK_API_VERSION_1_3;
    VkDebugUtilsMessengerCreateInfoEXT messenger_info = log_->messenger_info();
    // Synchronization validation too: a missing barrier between our own passes (mips, copies,
    // sampling) is a hazard report, so a test fails on it like on any other message.
    const VkValidationFeatureEnableEXT enabled[] = {VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT};
    VkValidationFeaturesEXT features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
    features.pNext = &messenger_info;  // the messenger also reports during create/destroy
    features.enabledValidationFeatureCount = 1;
    features.pEnabledValidationFeatures = enabled;
    VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
    info.pNext = validation_ ? &features : nullptr;
    info.pApplicationInfo = &app;
    info.enabledLayerCount = static_cast<uint32_t>(layers.size());
    info.ppEnabledLayerNames = layers.data();
    info.enabledExtensionCount = static_cast<uint32_t>(extensions.size());
    info.ppEnabledExtensionNames = extensions.data();
    const VkResult result = vkCreateInstance(&info, nullptr, &instance_);
    if (result == VK_ERROR_INCOMPATIBLE_DRIVER)
        throw Error(
            "no Vulkan driver found (vkCreateInstance: VK_ERROR_INCOMPATIBLE_DRIVER). Install one: "
            "apt-get install mesa-vulkan-drivers (CPU lavapipe) or the NVIDIA driver; if a driver "
            "is installed, point VK_DRIVER_FILES at its ICD json");
    check_vk(result, "vkCreateInstance");
    // Device functions through the loader's trampolines, so several contexts (and devices)
    // can live in one process.
    volkLoadInstance(instance_);
    if (validation_) {
        destroy_messenger_ = reinterpret_cast<PFN_vkDestroyDebugUtilsMessengerEXT>(
            vkGetInstanceProcAddr(instance_, "vkDestroyDebugUtilsMessengerEXT"));
        const VkResult r = vkCreateDebugUtilsMessengerEXT(instance_, &messenger_info, nullptr, &messenger_);
        if (r != VK_SUCCESS) {
            vkDestroyInstance(instance_, nullptr);
            check_vk(r, "vkCreateDebugUtilsMessengerEXT");
        }
    }
    try {
        devices_ = enumerate_devices(instance_);
    } catch (...) {
        if (messenger_) destroy_messenger_(instance_, messenger_, nullptr);
        vkDestroyInstance(instance_, nullptr);
        throw;
    }
}

Instance::Instance(VkInstance adopted, PFN_vkGetInstanceProcAddr get_instance_proc_addr) : adopted_(true) {
    if (!adopted) throw Error("no VkInstance to adopt: pass the application's instance");
    if (get_instance_proc_addr) volkInitializeCustom(get_instance_proc_addr);
    else load_vulkan_loader();
    api_version_ = volkGetInstanceVersion();
    instance_ = adopted;
    volkLoadInstance(instance_);  // device functions through the loader's trampolines, as for our own
    devices_ = enumerate_devices(instance_);
}

Instance::Instance(Instance&& other) noexcept
    : instance_(std::exchange(other.instance_, VK_NULL_HANDLE)),
      messenger_(std::exchange(other.messenger_, VK_NULL_HANDLE)),
      destroy_messenger_(std::exchange(other.destroy_messenger_, nullptr)),
      log_(std::move(other.log_)),
      validation_(other.validation_),
      adopted_(other.adopted_),
      api_version_(other.api_version_),
      devices_(std::move(other.devices_)) {}

Instance::~Instance() {
    if (!instance_ || adopted_) return;
    if (messenger_) destroy_messenger_(instance_, messenger_, nullptr);
    vkDestroyInstance(instance_, nullptr);
}

}  // namespace tvlm
