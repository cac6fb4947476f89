// Fixation schedules for video (engine/video/fixation_schedule.h): fixed, a timeline, and
// following a saliency signal at a limited rate.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "engine/error.h"
#include "engine/video/fixation_schedule.h"

namespace tvlm {
namespace {

TEST_CASE("strongest points: strongest first, neighbours suppressed, ties row-major, zeros never") {
    std::vector<float> values(10 * 5, 0.0f);
    values[2 * 10 + 3] = 5.0f;  // the strongest
    values[2 * 10 + 4] = 4.0f;  // its neighbour: suppressed at separation 0.2
    values[4 * 10 + 9] = 3.0f;
    values[0 * 10 + 0] = 1.0f;
    values[0 * 10 + 5] = 1.0f;  // ties with (0, 0): row-major order picks (0, 0) first
    const SaliencyMap map{10, 5, values};
    const std::vector<Fixation> points = strongest_points(map, 4, 0.2);
    REQUIRE(points.size() == 4);
    CHECK(points[0].x == doctest::Approx(0.35));
    CHECK(points[0].y == doctest::Approx(0.5));
    CHECK(points[1].x == doctest::Approx(0.95));
    CHECK(points[2].x == doctest::Approx(0.05));
    CHECK(points[3].x == doctest::Approx(0.55));
    CHECK(strongest_points(map, 2, 0.0)[1].x == doctest::Approx(0.45));  // no separation: the neighbour
    CHECK(strongest_points(map, 10, 0.2).size() == 4);                   // only non-zero cells
    CHECK(strongest_points({10, 5, std::vector<float>(50, 0.0f)}, 3, 0.1).empty());
    std::vector<float> bad = values;
    bad[7] = std::numeric_limits<float>::quiet_NaN();
    CHECK_THROWS_WITH_AS(strongest_points({10, 5, bad}, 1, 0.1), doctest::Contains("finite and non-negative"), Error);
    bad[7] = -1.0f;
    CHECK_THROWS_AS(strongest_points({10, 5, bad}, 1, 0.1), Error);
    CHECK_THROWS_WITH_AS(strongest_points({10, 4, values}, 1, 0.1), doctest::Contains("needs 40 values"), Error);
    CHECK_THROWS_WITH_AS(strongest_points({0, 0, {}}, 1, 0.1), doctest::Contains("empty"), Error);
}

TEST_CASE("fixed and timeline schedules give their fixations and say when they moved") {
    FixationSchedule fixed = FixationSchedule::fixed({{0.2, 0.3}});
    CHECK(fixed.at(0.0)[0].x == 0.2);
    CHECK(fixed.moved());
    CHECK(fixed.at(0.04)[0].y == 0.3);
    CHECK(!fixed.moved());

    FixationSchedule timeline = FixationSchedule::timeline({{1.0, {{0.1, 0.1}}}, {2.0, {{0.9, 0.9}, {0.5, 0.5}}}});
    CHECK(timeline.at(0.0)[0].x == 0.1);  // before the first entry: the first
    CHECK(timeline.moved());
    CHECK(timeline.at(1.96)[0].x == 0.1);
    CHECK(!timeline.moved());
    CHECK(timeline.at(2.0).size() == 2);
    CHECK(timeline.moved());
    CHECK(timeline.at(50.0)[0].x == 0.9);
    CHECK_THROWS_WITH_AS(timeline.at(49.0), doctest::Contains("non-decreasing"), Error);
    CHECK_THROWS_AS(timeline.at(std::nan("")), Error);
    CHECK(timeline.at(50.0)[0].x == 0.9);  // the refused calls changed nothing

    CHECK_THROWS_WITH_AS(FixationSchedule::fixed({}), doctest::Contains("at least one"), Error);
    CHECK_THROWS_WITH_AS(FixationSchedule::fixed({{std::nan(""), 0.5}}), doctest::Contains("NaN or outside"), Error);
    CHECK_THROWS_WITH_AS(FixationSchedule::timeline({{1.0, {{0.1, 0.1}}}, {1.0, {{0.2, 0.2}}}}),
                         doctest::Contains("increasing"), Error);
    CHECK_THROWS_AS(FixationSchedule::following(0.0), Error);
    CHECK_THROWS_AS(FixationSchedule::following(4.0, 0), Error);
    CHECK_THROWS_AS(FixationSchedule::following(4.0, 1, 1.0), Error);
}

TEST_CASE("following saliency: at most `per_second` moves a second, each to where the signal was") {
    FixationSchedule schedule = FixationSchedule::following(4.0);
    CHECK(schedule.needs_saliency());
    constexpr uint32_t kW = 32, kH = 18;
    std::vector<float> values(kW * kH);
    int moves = 0;
    for (int frame = 0; frame < 50; ++frame) {  // 2 s at 25 frames a second
        CAPTURE(frame);
        const double time = frame / 25.0;
        const uint32_t bx = uint32_t(frame * 0.6), by = 9;  // a blob moving right
        std::fill(values.begin(), values.end(), 0.0f);
        values[by * kW + bx] = 1.0f;
        const SaliencyMap map{kW, kH, values};
        const std::vector<Fixation>& f = schedule.at(time, &map);
        if (schedule.moved()) {
            ++moves;
            // The most recent position has the most weight only on ties; the sum since the last
            // move peaks at a cell the blob crossed in that interval.
            CHECK(f[0].y == doctest::Approx((by + 0.5) / kH));
            CHECK(f[0].x <= (bx + 0.5) / kW + 1e-9);
            CHECK(f[0].x >= (bx + 0.5) / kW - 0.25 * 25 * 0.6 / kW - 1e-9);
        }
    }
    CHECK(moves >= 8);
    CHECK(moves <= 9);  // 4 a second over 2 s, the first at time 0
    // No signal: the fixation stays.
    const Fixation held = schedule.at(10.0)[0];
    std::fill(values.begin(), values.end(), 0.0f);
    const SaliencyMap empty{kW, kH, values};
    CHECK(schedule.at(11.0, &empty)[0].x == held.x);
    CHECK(!schedule.moved());
    const std::vector<float> other(4, 1.0f);
    const SaliencyMap small{2, 2, other};
    CHECK_THROWS_WITH_AS(schedule.at(12.0, &small), doctest::Contains("changed size"), Error);
}

TEST_CASE("fixations on the image's edges are inside; a hair outside, or NaN, is refused") {
    for (const Fixation f : {Fixation{0.0, 0.0}, Fixation{1.0, 1.0}, Fixation{1.0, 0.0}, Fixation{0.0, 1.0}})
        CHECK_NOTHROW(FixationSchedule::fixed({f}));
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (const Fixation f : {Fixation{1.0 + 1e-9, 0.5}, Fixation{0.5, 1.0 + 1e-9}, Fixation{-1e-9, 0.5},
                             Fixation{0.5, -1e-9}, Fixation{nan, 0.5}, Fixation{0.5, nan}})
        CHECK_THROWS_WITH_AS(FixationSchedule::fixed({f}), doctest::Contains("is NaN or outside [0,1]^2"), Error);
}

TEST_CASE("timeline times must increase strictly: a repeated time is refused") {
    CHECK_NOTHROW(FixationSchedule::timeline({{0.0, {{0.5, 0.5}}}, {0.5, {{0.2, 0.2}}}}));
    CHECK_THROWS_WITH_AS(FixationSchedule::timeline({{0.0, {{0.5, 0.5}}}, {0.0, {{0.2, 0.2}}}}),
                         doctest::Contains("finite and increasing: entry 1 is at 0"), Error);
    CHECK_THROWS_WITH_AS(FixationSchedule::timeline({{1.0, {{0.5, 0.5}}}, {0.5, {{0.2, 0.2}}}}),
                         doctest::Contains("entry 1"), Error);
}

}  // namespace
}  // namespace tvlm
