#include "engine/textures/texture.h"

#include <memory>
#include <string>
#include <utility>

#include "engine/core/barriers.h"
#include "engine/core/context.h"
#include "engine/core/vk_check.h"

namespace tvlm {

VkFormat vk_format(Format format) {
    switch (format) {
        case Format::rgba8_unorm: return VK_FORMAT_R8G8B8A8_UNORM;
        case Format::rgba8_srgb: return VK_FORMAT_R8G8B8A8_SRGB;
        case Format::rgba16f: return VK_FORMAT_R16G16B16A16_SFLOAT;
        case Format::rgba32f: return VK_FORMAT_R32G32B32A32_SFLOAT;
        case Format::r32f: return VK_FORMAT_R32_SFLOAT;
    }
    return VK_FORMAT_UNDEFINED;
}

namespace {

// Sampled by shaders and CUDA, written by copies, blits and compute mip generation.
// sRGB formats cannot be storage images: they are mutable so compute writes through a
// UNORM view (and encode sRGB itself).
constexpr VkImageUsageFlags kUsage = VK_IMAGE_USAGE_SAMPLED_BIT | VK_IMAGE_USAGE_STORAGE_BIT |
                                     VK_IMAGE_USAGE_TRANSFER_SRC_BIT | VK_IMAGE_USAGE_TRANSFER_DST_BIT;

// RGBA8 and RGBA16F textures are mutable too, so the packed box shaders read and write
// their texels as words (2x2 texels per textureGather: box_mips_words.glsl).
VkImageCreateFlags create_flags(Format format) {
    if (format_info(format).srgb) return VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT | VK_IMAGE_CREATE_EXTENDED_USAGE_BIT;
    return format == Format::rgba8_unorm || format == Format::rgba16f ? VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT : 0;
}

std::string describe(const TextureDesc& d) {
    return std::to_string(d.width) + "x" + std::to_string(d.height) + "x" + std::to_string(d.layers) + " " +
           std::string(format_info(d.format).name) + " with " + std::to_string(d.levels) + " levels";
}

void validate(const Context& context, const TextureDesc& d) {
    check_texture_desc(d, {context.limits().maxImageDimension2D, context.limits().maxImageArrayLayers,
                           "maxImageDimension2D", "maxImageArrayLayers", "Vulkan device"});
}

VkImageCreateInfo image_info(const TextureDesc& d, const void* next) {
    VkImageCreateInfo info{VK_STRUCTURE_TYPE_IMAGE_CREATE_INFO, next};
    info.flags = create_flags(d.format);
    info.imageType = VK_IMAGE_TYPE_2D;
    info.format = vk_format(d.format);
    info.extent = {d.width, d.height, 1};
    info.mipLevels = d.mip_levels();
    info.arrayLayers = d.layers;
    info.samples = VK_SAMPLE_COUNT_1_BIT;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;  // what CUDA mipmapped arrays expect
    info.usage = kUsage;
    info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
    info.initialLayout = VK_IMAGE_LAYOUT_UNDEFINED;
    return info;
}

void check_format_support(const Context& context, const TextureDesc& d) {
    VkPhysicalDeviceExternalImageFormatInfo external{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_EXTERNAL_IMAGE_FORMAT_INFO};
    external.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    VkPhysicalDeviceImageFormatInfo2 info{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_IMAGE_FORMAT_INFO_2,
                                          d.exportable ? &external : nullptr};
    info.format = vk_format(d.format);
    info.type = VK_IMAGE_TYPE_2D;
    info.tiling = VK_IMAGE_TILING_OPTIMAL;
    info.usage = kUsage;
    info.flags = create_flags(d.format);
    VkExternalImageFormatProperties external_props{VK_STRUCTURE_TYPE_EXTERNAL_IMAGE_FORMAT_PROPERTIES};
    VkImageFormatProperties2 props{VK_STRUCTURE_TYPE_IMAGE_FORMAT_PROPERTIES_2, &external_props};
    const VkResult r = vkGetPhysicalDeviceImageFormatProperties2(context.physical_device(), &info, &props);
    const std::string device = context.device_info().name;
    if (r == VK_ERROR_FORMAT_NOT_SUPPORTED)
        throw Error("format " + std::string(format_info(d.format).name) + (d.exportable ? " (exportable)" : "") +
                    " is not supported for sampled+storage+transfer optimal images on " + device +
                    ": choose another format");
    check_vk(r, "vkGetPhysicalDeviceImageFormatProperties2");
    const VkImageFormatProperties& p = props.imageFormatProperties;
    if (d.width > p.maxExtent.width || d.height > p.maxExtent.height || d.layers > p.maxArrayLayers ||
        d.mip_levels() > p.maxMipLevels)
        throw Error("texture " + describe(d) + " exceeds what " + device + " supports for this format (max " +
                    std::to_string(p.maxExtent.width) + "x" + std::to_string(p.maxExtent.height) + ", " +
                    std::to_string(p.maxArrayLayers) + " layers)");
    VkDeviceSize bytes = 0;  // the levels' texels: what the image holds at least
    for (uint32_t l = 0; l < d.mip_levels(); ++l) {
        const Extent2D e = level_extent(d.width, d.height, l);
        bytes += VkDeviceSize{e.width} * e.height * format_info(d.format).texel_bytes();
    }
    bytes *= d.layers;
    if (bytes > p.maxResourceSize)
        throw Error("texture " + describe(d) + " holds " + std::to_string(bytes >> 20) + " MiB, more than the " +
                    std::to_string(p.maxResourceSize >> 20) + " MiB " + device +
                    " takes in one image of this format: use a smaller image or batch");
    if (d.exportable) {
        if (!context.memory_export())
            throw Error("exportable textures need VK_KHR_external_memory_fd, which " + device + " lacks");
        if (!(external_props.externalMemoryProperties.externalMemoryFeatures &
              VK_EXTERNAL_MEMORY_FEATURE_EXPORTABLE_BIT))
            throw Error("format " + std::string(format_info(d.format).name) + " cannot be exported as an fd on " +
                        device);
    }
}

}  // namespace

Texture Texture::unbound(Context& context, const TextureDesc& desc) {
    validate(context, desc);
    check_format_support(context, desc);
    Texture t;
    t.device_ = context.device();
    t.queue_ = &context.queue();
    t.desc_ = desc;
    t.usage_ = kUsage;
    t.flags_ = create_flags(desc.format);
    VkExternalMemoryImageCreateInfo external{VK_STRUCTURE_TYPE_EXTERNAL_MEMORY_IMAGE_CREATE_INFO};
    external.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    const VkImageCreateInfo info = image_info(desc, desc.exportable ? &external : nullptr);
    check_vk(vkCreateImage(t.device_, &info, nullptr, t.owned_image_.create(t.device_)), "vkCreateImage");
    return t;
}

Texture Texture::create(Context& context, const TextureDesc& desc) {
    Texture t = unbound(context, desc);
    t.memory_ = allocate_image_memory(context.physical_device(), t.device_, t.image(), desc.exportable);
    return t;
}

VkDeviceSize Texture::required_memory(Context& context, const TextureDesc& desc) {
    TextureDesc d = desc;
    d.exportable = true;
    const Texture probe = unbound(context, d);  // an image only: destroyed on return
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(probe.device_, probe.image(), &req);
    return req.size;
}

Texture Texture::import_memory(Context& context, const TextureDesc& desc, UniqueFd fd, VkDeviceSize allocation_size) {
    if (!fd.valid()) throw Error("cannot import texture memory: the fd is not valid");
    TextureDesc d = desc;
    d.exportable = true;  // external memory image: same create info as the exporter's
    Texture t = unbound(context, d);
    VkMemoryRequirements req;
    vkGetImageMemoryRequirements(t.device_, t.image(), &req);
    if (req.size > allocation_size)
        throw Error("imported memory of " + std::to_string(allocation_size) + " bytes is smaller than the " +
                    std::to_string(req.size) + " bytes a " + describe(d) + " texture needs");
    VkMemoryDedicatedAllocateInfo dedicated{VK_STRUCTURE_TYPE_MEMORY_DEDICATED_ALLOCATE_INFO};
    dedicated.image = t.image();
    VkImportMemoryFdInfoKHR import_info{VK_STRUCTURE_TYPE_IMPORT_MEMORY_FD_INFO_KHR, &dedicated};
    import_info.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    import_info.fd = fd.get();
    const uint32_t type = find_memory_type(context.physical_device(), req.memoryTypeBits,
                                           VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT);
    t.memory_ = allocate_memory(t.device_, allocation_size, type, &import_info);
    fd.release();  // a successful import owns the fd
    check_vk(vkBindImageMemory(t.device_, t.image(), t.memory_.handle(), 0), "vkBindImageMemory");
    // Acquire from the external owner. The exporter left SHADER_READ_ONLY, but validation
    // (1.3.239) tracks a new image as UNDEFINED and rejects naming that layout here; images
    // exported as opaque fds carry no layout-dependent metadata on lavapipe or NVIDIA (CUDA
    // reads them as plain arrays), so the content survives, as the export test checks.
    const uint32_t family = context.queue().family();
    const uint64_t done = context.queue().submit([&](VkCommandBuffer cmd) {
        record_barrier(cmd, {.image = t.image(),
                             .old_layout = VK_IMAGE_LAYOUT_UNDEFINED,
                             .new_layout = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL,
                             .src_stages = VK_PIPELINE_STAGE_2_NONE,
                             .src_access = VK_ACCESS_2_NONE,
                             .src_queue_family = VK_QUEUE_FAMILY_EXTERNAL,
                             .dst_queue_family = family});
    });
    context.queue().wait(done);
    t.layout_ = VK_IMAGE_LAYOUT_SHADER_READ_ONLY_OPTIMAL;
    return t;
}

Texture Texture::wrap(Context& context, const ApplicationImage& a) {
    if (!a.image) throw Error("no VkImage to wrap: pass the application's image");
    // Vulkan cannot be asked which device made an image, so the caller says; using an image
    // with another device's commands is undefined behaviour, refused here.
    if (a.device != context.device())
        throw Error(
            "the image was created on another VkDevice than the context's: wrap it with a Context that "
            "adopts that device (ApplicationImage::device names the image's device)");
    if (a.desc.exportable)
        throw Error(
            "texturevlm cannot make an application's image exportable: allocate its memory exportable "
            "yourself and pass it as ApplicationImage::exportable_memory, or copy the image into an "
            "exportable texturevlm texture for CUDA (record_copy)");
    validate(context, a.desc);
    if (a.exportable_memory) {
        if (!context.memory_export())
            throw Error(
                "the application's image memory cannot be exported: enable VK_KHR_external_memory_fd at "
                "device creation (HostVulkan::enabled_extensions)");
        VkMemoryRequirements req;
        vkGetImageMemoryRequirements(context.device(), a.image, &req);
        if (a.memory_size < req.size)
            throw Error("ApplicationImage::memory_size is " + std::to_string(a.memory_size) +
                        " bytes but the image "
                        "needs " +
                        std::to_string(req.size) +
                        ": pass the VkMemoryAllocateInfo::allocationSize of "
                        "its dedicated allocation");
    }
    if (format_info(a.desc.format).srgb && !(a.flags & VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT) &&
        (a.usage & VK_IMAGE_USAGE_STORAGE_BIT))
        throw Error(
            "an sRGB image written by compute needs VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT (and "
            "VK_IMAGE_CREATE_EXTENDED_USAGE_BIT): its levels are stored through a UNORM view");
    Texture t;
    t.device_ = context.device();
    t.queue_ = &context.queue();
    t.desc_ = a.desc;
    *t.application_image_.create(a.device) = a.image;
    t.usage_ = a.usage;
    t.flags_ = a.flags;
    t.layout_ = a.layout;
    t.application_memory_ = a.exportable_memory;
    t.application_memory_size_ = a.memory_size;
    t.desc_.exportable = a.exportable_memory != VK_NULL_HANDLE;
    return t;
}

void Texture::require_usage(VkImageUsageFlags needed, const char* step) const {
    static constexpr std::pair<VkImageUsageFlags, const char*> kBits[] = {
        {VK_IMAGE_USAGE_SAMPLED_BIT, "VK_IMAGE_USAGE_SAMPLED_BIT"},
        {VK_IMAGE_USAGE_STORAGE_BIT, "VK_IMAGE_USAGE_STORAGE_BIT"},
        {VK_IMAGE_USAGE_TRANSFER_SRC_BIT, "VK_IMAGE_USAGE_TRANSFER_SRC_BIT"},
        {VK_IMAGE_USAGE_TRANSFER_DST_BIT, "VK_IMAGE_USAGE_TRANSFER_DST_BIT"}};
    std::string missing;
    for (const auto& [bit, name] : kBits)
        if ((needed & bit) && !(usage_ & bit)) missing += (missing.empty() ? "" : ", ") + std::string(name);
    if (!missing.empty())
        throw Error(std::string(step) + " needs an image created with " + missing +
                    " in VkImageCreateInfo::usage; this one lacks it (nothing was recorded)");
}

Texture& Texture::operator=(Texture&& o) noexcept {
    if (this != &o) {  // the destructor's wait and teardown, then the moved-in members
        std::destroy_at(this);
        std::construct_at(this, std::move(o));
    }
    return *this;
}

Texture::~Texture() {
    if (image() && queue_ && last_use_) {
        try {
            queue_->wait(last_use_);
        } catch (const Error&) {
            // Device lost: nothing will use the image again; destroy it anyway.
        }
    }
}

bool Texture::words_allowed() const {
    // sRGB bytes as words too: a word view sees the stored bytes (the overlay encodes sRGB
    // itself; the box chains of sRGB textures do not use word views).
    return (desc_.format == Format::rgba8_unorm || desc_.format == Format::rgba8_srgb ||
            desc_.format == Format::rgba16f) &&
           (flags_ & VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT);
}

namespace {
constexpr size_t kAccesses = 4;  // LevelAccess values: views_ holds levels * kAccesses, then the sampled view
}  // namespace

VkImageView Texture::level_view(uint32_t level, LevelAccess access) {
    if (views_.empty()) views_.resize(size_t{levels()} * kAccesses + 1);
    const bool words = access == LevelAccess::read_words || access == LevelAccess::write_words;
    if (words && !words_allowed())
        throw Error(
            "word views need an RGBA8 (UNORM or sRGB) or RGBA16F texture created with "
            "VK_IMAGE_CREATE_MUTABLE_FORMAT_BIT");
    const bool write = access == LevelAccess::write || access == LevelAccess::write_words;
    VkImageViewHandle& slot = views_[size_t{level} * kAccesses + static_cast<size_t>(access)];
    const FormatInfo& info = format_info(desc_.format);
    // sRGB textures are viewed as UNORM (storage images cannot be sRGB; reads see bytes).
    const VkFormat word_format = info.texel_bytes() == 8 ? VK_FORMAT_R32G32_UINT : VK_FORMAT_R32_UINT;
    const VkFormat format = words ? word_format : info.srgb ? VK_FORMAT_R8G8B8A8_UNORM : vk_format(desc_.format);
    return view(slot, level, 1, write ? VK_IMAGE_USAGE_STORAGE_BIT : VK_IMAGE_USAGE_SAMPLED_BIT, format);
}

VkImageView Texture::sampled_view() {
    if (views_.empty()) views_.resize(size_t{levels()} * kAccesses + 1);
    return view(views_.back(), 0, levels(), VK_IMAGE_USAGE_SAMPLED_BIT, vk_format(desc_.format));
}

VkImageView Texture::view(VkImageViewHandle& slot, uint32_t base_level, uint32_t level_count,
                          VkImageUsageFlags usage_bits, VkFormat format) {
    if (slot) return slot.get();
    VkImageViewUsageCreateInfo usage{VK_STRUCTURE_TYPE_IMAGE_VIEW_USAGE_CREATE_INFO};
    usage.usage = usage_bits;
    VkImageViewCreateInfo view_info{VK_STRUCTURE_TYPE_IMAGE_VIEW_CREATE_INFO, &usage};
    view_info.image = image();
    view_info.viewType = VK_IMAGE_VIEW_TYPE_2D_ARRAY;
    view_info.format = format;
    view_info.subresourceRange = {VK_IMAGE_ASPECT_COLOR_BIT, base_level, level_count, 0, desc_.layers};
    check_vk(vkCreateImageView(device_, &view_info, nullptr, slot.create(device_)), "vkCreateImageView");
    return slot.get();
}

UniqueFd Texture::export_memory_fd() const {
    if (!desc_.exportable)
        throw Error(
            "this texture was not created exportable: set TextureDesc::exportable (or, for an "
            "application's image, ApplicationImage::exportable_memory)");
    VkMemoryGetFdInfoKHR info{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
    info.memory = memory();
    info.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
    int fd = -1;
    check_vk(vkGetMemoryFdKHR(device_, &info, &fd), "vkGetMemoryFdKHR");
    return UniqueFd(fd);
}

}  // namespace tvlm
