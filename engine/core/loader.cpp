#include "engine/core/loader.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "engine/error.h"
#include "engine/core/vulkan.h"

namespace tvlm {

void load_vulkan_loader() {
    static std::mutex mutex;
    static void* library = nullptr;
    std::lock_guard lock(mutex);
    if (library) return;
    const char* override_name = std::getenv("TVLM_VULKAN_LOADER");
    const std::string name = override_name && *override_name ? override_name : "libvulkan.so.1";
    void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* reason = dlerror();
        throw Error("no Vulkan loader: cannot load " + name + " (" + (reason ? reason : "unknown") +
                    "). Install it: apt-get install libvulkan1 (Debian/Ubuntu), or set "
                    "TVLM_VULKAN_LOADER to the loader's path");
    }
    auto get_proc = reinterpret_cast<PFN_vkGetInstanceProcAddr>(dlsym(handle, "vkGetInstanceProcAddr"));
    if (!get_proc) {
        dlclose(handle);
        throw Error(name + " has no vkGetInstanceProcAddr: it is not a Vulkan loader");
    }
    volkInitializeCustom(get_proc);
    library = handle;  // kept for the life of the process, as the loader expects
}

}  // namespace tvlm
