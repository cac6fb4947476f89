#pragma once
// Where the model looks in each frame of a video: fixed fixations, a timeline of them, or
// fixations that move `per_second` times a second to the strongest points of a saliency
// signal the caller gives with each frame (the design doc's example: 4 a second, following
// what moves). Fixations are normalized image coordinates, as the foveated layouts take.
#include <cstdint>
#include <span>
#include <vector>

#include "engine/sampling/patch_layouts.h"

namespace tvlm {

// A saliency grid over the frame (any resolution, row-major, values >= 0), e.g. the
// changed tiles of VideoTexture, or a model's attention.
struct SaliencyMap {
    uint32_t width = 0, height = 0;
    std::span<const float> values;
};

// The `count` strongest cells of `map` whose centres lie at least `separation` apart
// (normalized distance in units of the map's longer side), strongest first, ties in
// row-major order; cells of value 0 are never chosen, so an empty map gives none.
// Throws Error for an empty map, a size mismatch, or a NaN, infinite or negative value.
std::vector<Fixation> strongest_points(const SaliencyMap& map, uint32_t count, double separation);

struct TimedFixations {
    double time = 0;  // seconds from the start of the video
    std::vector<Fixation> fixations;
};

class FixationSchedule {
public:
    // Each throws Error for what cannot be followed: no fixations, a coordinate that is NaN
    // or outside [0, 1], times that are not finite or not increasing, a rate that is not
    // positive and finite, a count of 0, a separation outside [0, 1).
    static FixationSchedule fixed(std::vector<Fixation> fixations);
    // Each set holds from its time until the next; frames before the first time get the first.
    static FixationSchedule timeline(std::vector<TimedFixations> keyframes);
    // Starts at `start`; then at most `per_second` moves a second, each to the `count`
    // strongest well-separated points (strongest_points) of the saliency summed over the
    // frames since the last move. Where that sum is empty the fixations stay.
    static FixationSchedule following(double per_second, uint32_t count = 1, double separation = 0.2,
                                      std::vector<Fixation> start = {Fixation{}});

    bool needs_saliency() const { return kind_ == Kind::following; }
    // The fixations for the frame at `time` seconds (non-decreasing from call to call).
    // Following schedules take the frame's saliency (a null map: no signal this frame).
    // Throws Error, changing nothing, for a NaN or decreasing time, or a saliency map of
    // another size than the earlier ones.
    const std::vector<Fixation>& at(double time, const SaliencyMap* saliency = nullptr);
    // Whether the last at() moved the fixations (a new layout is needed).
    bool moved() const { return moved_; }

private:
    enum class Kind { fixed, timeline, following };
    Kind kind_ = Kind::fixed;
    std::vector<TimedFixations> keyframes_;
    std::vector<Fixation> current_;
    double per_second_ = 0, separation_ = 0;
    uint32_t count_ = 1;
    double last_time_ = -1e300, next_move_ = -1e300;
    uint32_t map_width_ = 0, map_height_ = 0;
    std::vector<float> summed_;
    bool moved_ = false, started_ = false;
};

}  // namespace tvlm
