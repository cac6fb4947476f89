#pragma once
// Vulkan through volk: function pointers are loaded at run time, so a machine without a
// Vulkan loader gets an error that names the package instead of failing to start.
#include <volk.h>
