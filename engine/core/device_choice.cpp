#include "engine/core/device_choice.h"

#include <algorithm>
#include <cctype>

#include "engine/error.h"

namespace tvlm {

namespace {

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

int type_rank(const std::string& type) {
    if (type == "discrete") return 0;
    if (type == "integrated") return 1;
    if (type == "virtual") return 2;
    if (type == "cpu") return 3;
    return 4;
}

}  // namespace

DeviceSelector DeviceSelector::parse(const std::string& text) {
    DeviceSelector s;
    if (text.empty()) return s;
    if (std::all_of(text.begin(), text.end(), [](unsigned char c) { return std::isdigit(c); }) && text.size() < 6) {
        s.index = static_cast<uint32_t>(std::stoul(text));
    } else if (auto uuid = Uuid::parse(text)) {
        s.uuid = uuid;
    } else {
        s.name_contains = text;
    }
    return s;
}

std::string DeviceSelector::describe() const {
    std::string d;
    if (index) d += "index " + std::to_string(*index);
    if (!name_contains.empty()) d += (d.empty() ? "" : ", ") + std::string("name containing '") + name_contains + "'";
    if (uuid) d += (d.empty() ? "" : ", ") + std::string("UUID ") + uuid->str();
    if (require_memory_export) d += (d.empty() ? "" : ", ") + std::string("memory export");
    return d.empty() ? "any device" : d;
}

std::string rejection_reason(const DeviceInfo& d, const DeviceSelector& s) {
    if (s.index && *s.index != d.index) return "not index " + std::to_string(*s.index);
    if (!s.name_contains.empty() && lower(d.name).find(lower(s.name_contains)) == std::string::npos)
        return "name does not contain '" + s.name_contains + "'";
    if (s.uuid && *s.uuid != d.uuid) return "UUID " + d.uuid.str() + " differs from " + s.uuid->str();
    if (d.api_version < VK_API_VERSION_1_3)
        return "Vulkan " + api_version_string(d.api_version) + " < 1.3 (update the driver)";
    if (d.queue_family == UINT32_MAX) return "no queue family with graphics and compute";
    if (!d.timeline_semaphores) return "no timeline semaphores";
    if (!d.synchronization2) return "no synchronization2";
    if (!d.push_descriptor) return "no VK_KHR_push_descriptor";
    if (!d.storage_without_format) return "no shaderStorageImageWriteWithoutFormat";
    if (s.require_memory_export && !d.memory_fd_export) return "cannot export image memory as an fd";
    return "";
}

size_t choose_device(const std::vector<DeviceInfo>& devices, const DeviceSelector& selector) {
    if (devices.empty())
        throw Error(
            "no Vulkan device found: the Vulkan loader found no driver. Install one: "
            "apt-get install mesa-vulkan-drivers (CPU lavapipe) or the NVIDIA driver; "
            "if a driver is installed, point VK_DRIVER_FILES at its ICD json "
            "(e.g. /usr/share/vulkan/icd.d/nvidia_icd.json)");
    std::optional<size_t> best;
    std::string rejected;
    for (size_t i = 0; i < devices.size(); ++i) {
        const std::string why = rejection_reason(devices[i], selector);
        if (!why.empty()) {
            rejected += std::string(rejected.empty() ? " " : "; ") + "[" + std::to_string(devices[i].index) + "] " +
                        devices[i].name + " (" + devices[i].type + ", UUID " + devices[i].uuid.str() + "): " + why;
        } else if (!best || type_rank(devices[i].type) < type_rank(devices[*best].type)) {
            best = i;
        }
    }
    if (!best)
        throw Error("no Vulkan device fits " + selector.describe() + "; devices and why each was rejected:" + rejected +
                    ". Choose another with --device (index, name or UUID).");
    return *best;
}

}  // namespace tvlm
