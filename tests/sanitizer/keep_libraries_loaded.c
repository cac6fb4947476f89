/* Preloaded into the sanitizer runs (.ci/sanitize): dlclose() does nothing, so the Vulkan
 * loader and driver stay mapped until exit and LeakSanitizer can name the module and
 * function of each leak it reports. Without it, leaks inside the driver (which the loader
 * unloads at vkDestroyInstance) show as "<unknown module>", and could not be told apart
 * from ours. */
int dlclose(void* handle) {
    (void)handle;
    return 0;
}
