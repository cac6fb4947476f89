#pragma once
// A patch layout as an overlay scene: what `tvlm sample --viz` and `tvlm video --viz-video`
// draw through the overlay renderer. Each patch of image `b` is a box outlined in a colour
// for its level (blue = finest .. red = coarsest; rotated patches drawn unrotated), each
// fixation a white cross.
#include <cstdint>
#include <span>

#include "engine/overlay/overlay_scene.h"
#include "engine/sampling/patch.h"
#include "engine/sampling/patch_layouts.h"

namespace tvlm {

// The scene for a width x height picture of image `b` of `layout`.
OverlayScene layout_overlay(const PatchLayout& layout, uint32_t b, uint32_t width, uint32_t height,
                            std::span<const Fixation> fixations);

}  // namespace tvlm
