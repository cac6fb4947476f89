#pragma once
// viz.png of `tvlm sample`: on the left the image with every patch outlined in a colour
// for its level (blue = finest .. red = coarsest), drawn by the overlay renderer
// (engine/overlay/layout_overlay.h); on the right what the model sees, each patch's P x P
// samples painted back over its footprint.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/textures/image.h"
#include "engine/sampling/patch.h"
#include "engine/sampling/patch_layouts.h"

namespace tvlm {

// `image` at width x height (at most its own size) for display: down its box mip chain,
// then an area average, so fine detail averages instead of aliasing.
ImageF panel_image(const ImageF& image, uint32_t width, uint32_t height);

// `samples` is the output [B, N, C, P, P]; image `b` of the batch is drawn. `linear` says
// the samples are linear light (sRGB textures) and must be encoded for display.
ImageF sample_visualisation(const ImageF& image, const PatchLayout& layout, const std::vector<float>& samples,
                            uint32_t channels, uint32_t b, bool linear);

// tvlm video --viz-video: image `b`'s patch outlines (colours as above) and a white cross
// at each fixation drawn over an RGBA8 frame of width x height, in place.
void draw_patch_outlines(std::span<uint8_t> rgba, uint32_t width, uint32_t height, const PatchLayout& layout,
                         uint32_t b, std::span<const Fixation> fixations);

}  // namespace tvlm
