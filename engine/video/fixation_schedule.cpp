#include "engine/video/fixation_schedule.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "engine/error.h"

namespace tvlm {

namespace {

void check_fixations(const std::vector<Fixation>& fixations) {
    if (fixations.empty()) throw Error("a fixation schedule needs at least one fixation");
    for (const Fixation& f : fixations)
        if (!(f.x >= 0.0 && f.x <= 1.0 && f.y >= 0.0 && f.y <= 1.0))
            throw Error("fixation (" + std::to_string(f.x) + ", " + std::to_string(f.y) +
                        ") is NaN or outside [0,1]^2: give normalized image coordinates");
}

bool same(const std::vector<Fixation>& a, const std::vector<Fixation>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const Fixation& p, const Fixation& q) { return p.x == q.x && p.y == q.y; });
}

}  // namespace

std::vector<Fixation> strongest_points(const SaliencyMap& map, uint32_t count, double separation) {
    if (map.width == 0 || map.height == 0) throw Error("an empty saliency map: give at least one cell");
    if (map.values.size() != size_t{map.width} * map.height)
        throw Error("a saliency map of " + std::to_string(map.width) + "x" + std::to_string(map.height) + " needs " +
                    std::to_string(size_t{map.width} * map.height) + " values, not " +
                    std::to_string(map.values.size()));
    for (float v : map.values)
        if (!(std::isfinite(v) && v >= 0.0f))
            throw Error("saliency values must be finite and non-negative, not " + std::to_string(v));
    std::vector<uint32_t> order(map.values.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return map.values[a] > map.values[b]; });
    const double longer = std::max(map.width, map.height);
    std::vector<Fixation> points;
    for (uint32_t cell : order) {
        if (points.size() == count || map.values[cell] <= 0.0f) break;
        const double px = (cell % map.width + 0.5), py = (cell / map.width + 0.5);
        const bool apart = std::all_of(points.begin(), points.end(), [&](const Fixation& f) {
            return std::hypot(f.x * map.width - px, f.y * map.height - py) / longer >= separation;
        });
        if (apart) points.push_back({px / map.width, py / map.height});
    }
    return points;
}

FixationSchedule FixationSchedule::fixed(std::vector<Fixation> fixations) {
    check_fixations(fixations);
    FixationSchedule s;
    s.current_ = std::move(fixations);
    return s;
}

FixationSchedule FixationSchedule::timeline(std::vector<TimedFixations> keyframes) {
    if (keyframes.empty()) throw Error("a fixation timeline needs at least one entry");
    for (size_t i = 0; i < keyframes.size(); ++i) {
        check_fixations(keyframes[i].fixations);
        if (!std::isfinite(keyframes[i].time) || (i > 0 && !(keyframes[i].time > keyframes[i - 1].time)))
            throw Error("fixation times must be finite and increasing: entry " + std::to_string(i) + " is at " +
                        std::to_string(keyframes[i].time) + " s");
    }
    FixationSchedule s;
    s.kind_ = Kind::timeline;
    s.keyframes_ = std::move(keyframes);
    return s;
}

FixationSchedule FixationSchedule::following(double per_second, uint32_t count, double separation,
                                             std::vector<Fixation> start) {
    if (!(std::isfinite(per_second) && per_second > 0.0))
        throw Error("fixations must move a positive, finite number of times a second, not " +
                    std::to_string(per_second));
    if (count == 0) throw Error("following saliency needs a count of at least 1 fixation");
    if (!(separation >= 0.0 && separation < 1.0))
        throw Error("the separation of fixations must lie in [0, 1), not " + std::to_string(separation));
    check_fixations(start);
    FixationSchedule s;
    s.kind_ = Kind::following;
    s.per_second_ = per_second;
    s.count_ = count;
    s.separation_ = separation;
    s.current_ = std::move(start);
    return s;
}

const std::vector<Fixation>& FixationSchedule::at(double time, const SaliencyMap* saliency) {
    if (std::isnan(time) || time < last_time_)
        throw Error("frame times must be non-decreasing numbers: " + std::to_string(time) + " s after " +
                    std::to_string(last_time_) + " s");
    if (saliency && kind_ == Kind::following) {
        if (map_width_ && (saliency->width != map_width_ || saliency->height != map_height_))
            throw Error("saliency maps changed size: " + std::to_string(saliency->width) + "x" +
                        std::to_string(saliency->height) + " after " + std::to_string(map_width_) + "x" +
                        std::to_string(map_height_));
        strongest_points(*saliency, 1, 0.0);  // validates the values before anything changes
        if (!map_width_) {
            map_width_ = saliency->width;
            map_height_ = saliency->height;
            summed_.assign(saliency->values.size(), 0.0f);
        }
        for (size_t i = 0; i < summed_.size(); ++i) summed_[i] += saliency->values[i];
    }
    last_time_ = time;
    const std::vector<Fixation> before = current_;
    if (kind_ == Kind::timeline) {
        size_t k = 0;
        while (k + 1 < keyframes_.size() && keyframes_[k + 1].time <= time) ++k;
        current_ = keyframes_[k].fixations;
    } else if (kind_ == Kind::following && time >= next_move_ && !summed_.empty()) {
        std::vector<Fixation> points = strongest_points({map_width_, map_height_, summed_}, count_, separation_);
        if (!points.empty()) {
            current_ = std::move(points);
            next_move_ = time + 1.0 / per_second_;
            std::fill(summed_.begin(), summed_.end(), 0.0f);
        }
    }
    moved_ = !started_ || !same(before, current_);
    started_ = true;
    return current_;
}

}  // namespace tvlm
