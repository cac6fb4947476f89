#pragma once
// The image processors' one kernel (python/texturevlm/processors): resize, optional crop,
// rescale + normalize, and the model's tensor layout, fused, so each output value is
// written once. Two filters with one target:
//  - the texture unit: one anisotropic trilinear sample of the box mip chain per output
//    pixel, footprint = one output pixel (what texturevlm is for);
//  - software: PyTorch's antialiased bicubic or bilinear (torch.nn.functional.interpolate(
//    mode="bicubic" / "bilinear", antialias=True), which Hugging Face's torchvision
//    processors call), read straight from the input tensor, for outputs that equal theirs.
#include <cuda_runtime_api.h>

#include <cstdint>

#include "cuda/tensors/tensor_texels.h"

namespace tvlm {

// Where output values go. `planar`: [images, 3, height, width] (CLIP / SigLIP
// pixel_values). `merged_patches`: Qwen2-VL's [patches, 3 * T * P * P] with patches in its
// order (merge_size x merge_size groups of P x P patches, row-major groups, row-major
// inside a group) and values in (channel, time, y, x) order; an image fills time slots
// [first_time, first_time + times) with the same pixels (T copies for a still image).
// `tiles`: the window cut into tile_height x tile_width tiles, row-major, each written
// planar [3, tile_height, tile_width] (InternVL's crop_to_patches): [tiles, 3, th, tw].
enum class ResizeLayout : uint8_t { planar, merged_patches, tiles };

// The software filter: PyTorch's antialiased bicubic (Keys, a = -0.5, two input pixels a
// side per unit of scale) or bilinear (a triangle, one a side).
enum class SoftwareFilter : uint8_t { bicubic, bilinear };

struct ResizeTarget {
    uint32_t images = 1;                             // consecutive layers of the source
    uint32_t first_layer = 0;                        // source layer of image 0
    uint32_t resized_width = 0, resized_height = 0;  // the image after resizing
    // The window written, in resized pixels. It may reach past the resized image on any side
    // (a negative crop, or beyond its far edge): pixels there are 0 before rescale and
    // normalize, the zero padding of LLaVA-NeXT's AnyRes tiles.
    int32_t crop_x = 0, crop_y = 0;
    uint32_t width = 0, height = 0;
    ResizeLayout layout = ResizeLayout::planar;
    uint32_t patch_size = 14, merge_size = 2, temporal_patch_size = 2;  // merged_patches
    uint32_t first_time = 0, times = 1;
    uint32_t tile_width = 0, tile_height = 0;  // tiles
    uint64_t image_stride = 0;                 // values from one image's output to the next
    // value -> (value * multiply - subtract[c]) / divide[c], value in the input's units
    // (0..255 for uint8 inputs): Hugging Face's rescale and normalize, in its order.
    float multiply = 1.0f;
    float subtract[3] = {0, 0, 0}, divide[3] = {1, 1, 1};
    // Round the resized value to an integer in [0, 255] first: what resizing a uint8
    // image to a uint8 image does (Hugging Face resizes uint8 inputs that way).
    bool round_to_byte = false;
    // f32, f16 or bf16; or u8 for the resized image itself (round_to_byte, no rescale or normalize:
    // the input of a second resize, as chained processors such as Idefics3 resize twice).
    TensorDtype out_dtype = TensorDtype::f32;
    void* out = nullptr;  // device memory
};

// The texture holds the images at level 0 with their box mips; texels read as floats are
// multiplied by `texel_scale` to give input units (255 for 8-bit textures, 1 for float).
void resize_from_texture(cudaTextureObject_t texture, bool layered, uint32_t source_width, uint32_t source_height,
                         float texel_scale, const ResizeTarget& target, cudaStream_t stream);

// Device memory a software resize works in, not read or written by other work until the
// stream has run it: the two axes' spans and weights (`tables`, software_tables_bytes(),
// written first unless `tables_written`: they already hold this source size's, window's
// and filter's, a previous call's on this stream) and the rows between the two passes
// (`rows`, `rows_bytes` long: software_rows_bytes(); none where that is 0).
struct SoftwareScratch {
    unsigned char* tables = nullptr;
    bool tables_written = false;
    float* rows = nullptr;
    size_t rows_bytes = 0;
};

// The same target from the tensor itself (element (b, c, y, x) of `source`, b counted from
// target.first_layer; from sources.images[b] where the list is not empty), with PyTorch's
// antialiased weights of `filter`, in two passes (across each source row, then down each
// output column) whose values equal torch's 2-D sum bit for bit; 8-bit images take both
// passes in one kernel where they shrink a lot (fused_resize.h), and are copied where they
// keep their size (torch's weights there are 0 and 1).
void resize_software(const TensorView& source, uint32_t source_width, uint32_t source_height,
                     const ResizeTarget& target, SoftwareFilter filter, const SoftwareScratch& scratch,
                     cudaStream_t stream, const ImageList& sources = {});
size_t software_tables_bytes(uint32_t source_width, uint32_t source_height, const ResizeTarget& target,
                             SoftwareFilter filter);
// The rows' bytes for `target` as it will run, all its images: which kernel takes a resize
// can depend on the batch (two_pass_resize.h), and a run of fewer images of the same target
// needs no more rows per image.
size_t software_rows_bytes(uint32_t source_width, uint32_t source_height, const ResizeTarget& target,
                           SoftwareFilter filter, TensorDtype source_dtype);

// Throws Error unless the target is one these kernels can write: a non-empty window that
// overlaps the resized image, patch-aligned for merged_patches, whole tiles for tiles, an
// output pointer, 1..T time slots.
void check_resize_target(const ResizeTarget& target);

}  // namespace tvlm
