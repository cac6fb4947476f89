#pragma once
// Loads the Vulkan loader library once per process.

namespace tvlm {

// dlopens libvulkan.so.1 (or $TVLM_VULKAN_LOADER) and loads global entry points.
// Throws Error naming the package to install when no loader is found.
void load_vulkan_loader();

}  // namespace tvlm
