// Layouts on the host: coverage without gaps or overlap, budgets, the foveated level rule,
// determinism, edge and multiple fixations, bad input.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "engine/error.h"
#include "engine/mips/mip_filter.h"
#include "engine/sampling/patch_layouts.h"

using namespace tvlm;

namespace {

struct PixelRect {
    long x0, y0, x1, y1;
};

PixelRect pixel_rect(const Patch& p, uint32_t w, uint32_t h) {
    const double cu = p.cu, cv = p.cv, su = p.su, sv = p.sv;
    return {std::lround((cu - su / 2) * w), std::lround((cv - sv / 2) * h), std::lround((cu + su / 2) * w),
            std::lround((cv + sv / 2) * h)};
}

// Every P x P unit of the image is covered by exactly one patch (foveated cells are unions
// of such units, clipped at the image's edge).
void check_tiles_image(const PatchLayout& layout) {
    const uint32_t p = layout.patch_size, w = layout.width, h = layout.height;
    const uint32_t cols = (w + p - 1) / p, rows = (h + p - 1) / p;
    std::vector<int> covered(size_t{cols} * rows, 0);
    for (const Patch& patch : layout.patches) {
        const PixelRect r = pixel_rect(patch, w, h);
        REQUIRE(r.x0 >= 0);
        REQUIRE(r.y0 >= 0);
        REQUIRE(r.x1 <= long(w));
        REQUIRE(r.y1 <= long(h));
        REQUIRE(r.x0 % p == 0);
        REQUIRE(r.y0 % p == 0);
        for (long y = r.y0; y < r.y1; y += p)
            for (long x = r.x0; x < r.x1; x += p) ++covered[size_t(y / p) * cols + size_t(x / p)];
    }
    for (int c : covered) REQUIRE(c == 1);
}

struct Case {
    uint32_t w, h, patch;
    std::vector<Fixation> fixations;
    uint32_t budget;
};

void check_foveated(const Case& c) {
    CAPTURE(c.w);
    CAPTURE(c.h);
    CAPTURE(c.budget);
    CAPTURE(c.fixations.front().x);
    CAPTURE(c.fixations.front().y);
    FoveatedParams params;
    params.fixations = c.fixations;
    params.budget = c.budget;
    params.patch_size = c.patch;
    const FoveatedLayout f = foveated_layout(c.w, c.h, params);
    const PatchLayout& layout = f.layout;
    check_tiles_image(layout);
    const size_t n = layout.patches.size();
    CHECK(n <= c.budget);
    CHECK(layout.patches_per_image == n);
    // Within 3 of the budget unless the rule wanted nothing more (threshold 0).
    if (f.threshold > 0) CHECK(n + 3 > c.budget);

    uint32_t fovea_level = 99, min_level = 99, root = 0;
    for (size_t i = 0; i < n; ++i) {
        const Patch& p = layout.patches[i];
        const uint32_t level = f.cell_level[i];
        root = std::max(root, level);
        const PixelRect r = pixel_rect(p, c.w, c.h);
        // A whole cell samples one texel of its level per sample; a clipped one finer.
        const double extent = double(std::max(r.x1 - r.x0, r.y1 - r.y0));
        CHECK(p.level == doctest::Approx(std::max(0.0, std::log2(extent / c.patch))).epsilon(1e-5));
        CHECK(p.level <= level + 1e-5);
        CHECK(p.layer == 0);
        min_level = std::min(min_level, level);
        for (const Fixation& fx : c.fixations)
            if (fx.x * c.w >= double(r.x0) && fx.x * c.w <= double(r.x1) && fx.y * c.h >= double(r.y0) &&
                fx.y * c.h <= double(r.y1))
                fovea_level = std::min(fovea_level, level);
    }
    // The fixation gets the finest patch there is.
    CHECK(fovea_level == min_level);
    // The level rule: an unsplit cell is no more wanted than the threshold, and every
    // cell's parent was at least that wanted, so L - D(e) stays within one level of the
    // threshold and levels grow with eccentricity as D(e) does.
    for (size_t i = 0; i < n; ++i) {
        const PixelRect r = pixel_rect(layout.patches[i], c.w, c.h);
        const uint32_t level = f.cell_level[i];
        const double want = level - desired_level(params, eccentricity(params, c.w, c.h, double(r.x0), double(r.y0),
                                                                       double(r.x1), double(r.y1)));
        if (level > 0) CHECK(want <= f.threshold + 1e-9);
        if (level < root) {
            const long size = long(c.patch) << (level + 1);
            const long px = r.x0 / size * size, py = r.y0 / size * size;
            const double parent_e = eccentricity(params, c.w, c.h, double(px), double(py),
                                                 double(std::min(px + size, long(c.w))),
                                                 double(std::min(py + size, long(c.h))));
            const double parent_want = level + 1 - desired_level(params, parent_e);
            CHECK(parent_want >= f.threshold - 1e-9);
        }
    }
    // Deterministic to the bit.
    const FoveatedLayout again = foveated_layout(c.w, c.h, params);
    REQUIRE(again.layout.patches.size() == n);
    CHECK(std::memcmp(again.layout.patches.data(), layout.patches.data(), n * sizeof(Patch)) == 0);
}

}  // namespace

TEST_CASE("level grid: a ViT patchify of one level, edge patches keep their spacing") {
    for (auto [w, h, p, level] :
         {std::array<uint32_t, 4>{64, 48, 16, 0}, {97, 61, 8, 1}, {1536, 1024, 16, 3}, {5, 3, 4, 2}, {1, 1, 1, 0}}) {
        CAPTURE(w);
        CAPTURE(h);
        CAPTURE(level);
        const PatchLayout layout = level_grid_layout(w, h, p, level);
        const Extent2D e = level_extent(w, h, level);
        const uint32_t cols = (e.width + p - 1) / p, rows = (e.height + p - 1) / p;
        REQUIRE(layout.patches.size() == size_t{cols} * rows);
        CHECK(layout.levels_needed == level + 1);
        CHECK(layout.mode == SamplingMode::level);
        // Sample (j, k) of patch (a, b) sits on the centre of texel (a*P + j, b*P + k).
        for (uint32_t b = 0; b < rows; ++b)
            for (uint32_t a = 0; a < cols; ++a) {
                const Patch& patch = layout.patches[size_t{b} * cols + a];
                CHECK(patch.level == float(level));
                for (uint32_t k = 0; k < p; k += std::max(1u, p - 1))
                    for (uint32_t j = 0; j < p; j += std::max(1u, p - 1)) {
                        const SamplePosition s = sample_position(patch, j, k, p, w, h);
                        CHECK(s.u * e.width - 0.5 == doctest::Approx(a * p + j).epsilon(1e-6));
                        CHECK(s.v * e.height - 0.5 == doctest::Approx(b * p + k).epsilon(1e-6));
                    }
            }
    }
    CHECK_THROWS_WITH_AS(level_grid_layout(64, 48, 16, 7), doctest::Contains("level 7 does not exist"), Error);
    CHECK_THROWS_WITH_AS(level_grid_layout(64, 48, 0, 0), doctest::Contains("patch size 0 is out of range"), Error);
    CHECK_THROWS_WITH_AS(level_grid_layout(64, 48, 65, 0), doctest::Contains("use 1 to 64"), Error);
    CHECK_THROWS_AS(level_grid_layout(0, 48, 16, 0), Error);
}

TEST_CASE("foveated: tiles the image, respects the budget, levels follow eccentricity") {
    const std::vector<Case> cases = {
        {4096, 4096, 16, {{0.5, 0.5}}, 273},
        {4096, 4096, 16, {{0.0, 0.0}}, 273},
        {4096, 4096, 16, {{1.0, 1.0}}, 100},
        {4096, 4096, 16, {{1.0, 0.3}}, 500},
        {1536, 1024, 16, {{0.5, 0.0}}, 273},
        {1000, 700, 16, {{0.31, 0.77}}, 200},
        {97, 61, 4, {{0.9, 0.1}}, 60},
        {4096, 64, 16, {{0.25, 0.5}}, 300},
        {64, 4096, 16, {{0.5, 1.0}}, 300},
        {2048, 1024, 16, {{0.2, 0.2}, {0.8, 0.7}}, 400},
        {1024, 1024, 16, {{0.5, 0.5}}, 100000},  // more than full resolution: stops when nothing is wanted
        {7, 5, 16, {{0.5, 0.5}}, 1},
    };
    for (const Case& c : cases) check_foveated(c);
}

TEST_CASE("foveated: counts, ties and the budget") {
    FoveatedParams params;
    // A symmetric fixation makes four equally wanted cells: ties still fill the budget.
    for (uint32_t budget : {1u, 3u, 4u, 7u, 10u, 273u, 1000u}) {
        params.budget = budget;
        const auto f = foveated_layout(4096, 4096, params);
        CHECK(f.layout.patches.size() <= budget);
        CHECK(f.layout.patches.size() + 3 > budget);
    }
    // A large budget with nothing more wanted: the whole image at level 0.
    params.budget = 1 << 20;
    params.bias = -100;
    CHECK(foveated_layout(256, 128, params).layout.patches.size() == 16 * 8);
    // Two fixations: each gets the finest level of the layout.
    params = FoveatedParams{};
    params.fixations = std::vector<Fixation>{Fixation{0.1, 0.1}, Fixation{0.9, 0.9}};
    const auto two = foveated_layout(2048, 2048, params);
    int finest_near[2] = {99, 99};
    for (size_t i = 0; i < two.layout.patches.size(); ++i) {
        const Patch& p = two.layout.patches[i];
        for (int k = 0; k < 2; ++k)
            if (std::fabs(p.cu - params.fixations[size_t(k)].x) <= p.su / 2 &&
                std::fabs(p.cv - params.fixations[size_t(k)].y) <= p.sv / 2)
                finest_near[k] = std::min(finest_near[k], int(two.cell_level[i]));
    }
    const uint32_t finest = *std::min_element(two.cell_level.begin(), two.cell_level.end());
    CHECK(finest_near[0] == int(finest));
    CHECK(finest_near[1] == int(finest));
}

TEST_CASE("foveated: bad input is refused") {
    FoveatedParams params;
    params.fixations = {{std::numeric_limits<double>::quiet_NaN(), 0.5}};
    CHECK_THROWS_WITH_AS(foveated_layout(256, 256, params), doctest::Contains("outside the image"), Error);
    params.fixations = {{0.5, 1.5}};
    CHECK_THROWS_WITH_AS(foveated_layout(256, 256, params), doctest::Contains("use normalized coordinates"), Error);
    params.fixations = {};
    CHECK_THROWS_WITH_AS(foveated_layout(256, 256, params), doctest::Contains("at least one fixation"), Error);
    params = {};
    params.budget = 0;
    CHECK_THROWS_WITH_AS(foveated_layout(256, 256, params), doctest::Contains("budget 0 is below the 1 patches"),
                         Error);
    params.budget = 10;
    CHECK_THROWS_WITH_AS(foveated_layout(4096, 64, params), doctest::Contains("below the 64 patches"), Error);
    params.budget = 273;
    params.patch_size = 65;
    CHECK_THROWS_AS(foveated_layout(256, 256, params), Error);
    params.patch_size = 16;
    params.e0 = 0;
    CHECK_THROWS_WITH_AS(foveated_layout(256, 256, params), doctest::Contains("e0 > 0"), Error);
}

TEST_CASE("anisotropic: elongated patches sampled with gradients") {
    const PatchLayout h = anisotropic_layout(256, 128, {.patch_size = 8, .level = 1, .elongation = 4});
    CHECK(h.mode == SamplingMode::gradients);
    CHECK(h.patches.size() == size_t{4} * 8);  // level 1 is 128x64: 32-texel-wide, 8-tall patches
    check_tiles_image(level_grid_layout(256, 128, 8, 0));
    for (const Patch& p : h.patches) {
        CHECK(p.su * 256 == doctest::Approx(4 * p.sv * 128));
        CHECK(p.level == doctest::Approx(1.0));  // the minor axis picks the level; 4 taps along the major
        const GradientFootprint f = gradient_footprint(patch_gradients(p, 8, 256, 128), 256, 128);
        CHECK(f.taps == 4);
        CHECK(f.major_is_x);
    }
    const PatchLayout v = anisotropic_layout(256, 128,
                                             {.patch_size = 8, .level = 0, .elongation = 2, .vertical = true});
    CHECK(v.patches.size() == size_t{32} * 8);
    CHECK(!gradient_footprint(patch_gradients(v.patches[0], 8, 256, 128), 256, 128).major_is_x);
    // A rotated axis turns the footprint: the gradients rotate with it.
    Patch rotated = h.patches[0];
    rotated.axis_x = 0.0f;
    rotated.axis_y = 1.0f;
    const Gradients g = patch_gradients(rotated, 8, 256, 128);
    CHECK(g.dudx == doctest::Approx(0.0));
    CHECK(g.dvdx * 128 == doctest::Approx(h.patches[0].su * 256 / 8));
    CHECK_THROWS_WITH_AS(anisotropic_layout(256, 128, {.elongation = 17}), doctest::Contains("use 1 to 16"), Error);
    CHECK_THROWS_AS(anisotropic_layout(256, 128, {.elongation = 0}), Error);
}

TEST_CASE("batch: one layout per layer, padded to one count") {
    FoveatedParams a, b;
    a.fixations = {{0.1, 0.1}};
    b.fixations = {{0.5, 0.5}};
    a.budget = 30;
    b.budget = 20;
    const PatchLayout la = foveated_layout(512, 512, a).layout, lb = foveated_layout(512, 512, b).layout;
    const PatchLayout batch = batch_layouts(std::vector<PatchLayout>{la, lb});
    CHECK(batch.images == 2);
    CHECK(batch.patches_per_image == std::max(la.patches.size(), lb.patches.size()));
    REQUIRE(batch.patches.size() == 2 * batch.patches_per_image);
    for (uint32_t i = 0; i < batch.patches_per_image; ++i) {
        CHECK(batch.patches[i].layer == 0);
        CHECK(batch.patches[batch.patches_per_image + i].layer == 1);
        if (i >= lb.patches.size()) CHECK(batch.patches[batch.patches_per_image + i].level == -1.0f);
    }
    const std::vector<float> meta = patch_metadata(batch);
    CHECK(meta.size() == batch.patches.size() * 5);
    CHECK_THROWS_AS(batch_layouts(std::vector<PatchLayout>{la, level_grid_layout(256, 512, 16, 0)}), Error);
}

TEST_CASE("fill_budget refines past the magnification rule to within 2 of the budget, tiling the image") {
    // The photo of issue 13: without filling, 273 asked gives 159 patches.
    for (const uint32_t budget : {273u, 100u, 574u, 1000u}) {
        for (const Fixation fixation : {Fixation{0.5, 0.5}, Fixation{0.0, 1.0}, Fixation{0.9, 0.2}}) {
            CAPTURE(budget);
            CAPTURE(fixation.x);
            FoveatedParams params;
            params.fixations = {fixation};
            params.budget = budget;
            const PatchLayout plain = foveated_layout(720, 477, params).layout;
            params.fill_budget = true;
            const PatchLayout filled = foveated_layout(720, 477, params).layout;
            check_tiles_image(filled);
            CHECK(filled.patches.size() <= budget);
            CHECK(filled.patches.size() + 2 >= budget);
            CHECK(filled.patches.size() >= plain.patches.size());
        }
    }
    FoveatedParams params;
    params.budget = 273;
    CHECK(foveated_layout(720, 477, params).layout.patches.size() < 200);
    // Every cell at level 0 already: nothing finer exists, the count stays below the budget.
    params.fill_budget = true;
    params.budget = 1000;
    const PatchLayout all_fine = foveated_layout(64, 64, params).layout;
    CHECK(all_fine.patches.size() == 16);
}

TEST_CASE("batch_layouts pads every image to at least the asked count with masked slots") {
    FoveatedParams params;
    params.budget = 10;
    const PatchLayout one = foveated_layout(64, 64, params).layout;
    const PatchLayout padded = batch_layouts(std::span(&one, 1), 20);
    REQUIRE(padded.patches.size() == 20);
    CHECK(padded.patches_per_image == 20);
    for (size_t i = one.patches.size(); i < 20; ++i) CHECK(padded.patches[i].level == -1.0f);
    CHECK(batch_layouts(std::span(&one, 1), 0).patches.size() == one.patches.size());
}

TEST_CASE("check_patch_geometry: patch sizes 1 and kMaxPatchSize pass, 0 and one more fail, empty images fail") {
    CHECK_NOTHROW(check_patch_geometry(8, 8, 1));
    CHECK_NOTHROW(check_patch_geometry(8, 8, kMaxPatchSize));
    CHECK_THROWS_WITH_AS(check_patch_geometry(8, 8, 0), doctest::Contains("patch size 0 is out of range"), Error);
    CHECK_THROWS_WITH_AS(check_patch_geometry(8, 8, kMaxPatchSize + 1), doctest::Contains("is out of range: use 1 to"),
                         Error);
    CHECK_THROWS_WITH_AS(check_patch_geometry(0, 8, 4), doctest::Contains("empty 0x8"), Error);
    CHECK_THROWS_WITH_AS(check_patch_geometry(8, 0, 4), doctest::Contains("empty 8x0"), Error);
}

TEST_CASE("resize layouts need the levels their largest scale reaches, a fractional level rounded up") {
    // 1000 -> 300: one output pixel spans 3.33 texels, level log2(3.33) = 1.74: levels 0..2.
    CHECK(resize_layout(1000, 1000, {300, 300, 0, 0, 300, 300, 20}).levels_needed == 3);
    // 1000 -> 250: exactly level 2 (float noise above it does not ask for level 3).
    CHECK(resize_layout(1000, 1000, {250, 250, 0, 0, 250, 250, 25}).levels_needed == 3);
    // Enlarging: level 0 only.
    CHECK(resize_layout(100, 100, {300, 300, 0, 0, 300, 300, 20}).levels_needed == 1);
}

// Cells that want refinement equally are split in row-major order (the top row first, then
// the left cell): with the fixation at the centre of a square image, the four cells around
// it tie, and a budget that splits only some of them splits the top-left ones first.
TEST_CASE("foveated ties are split in row-major order: the top row first, then the left cell") {
    FoveatedParams p;
    p.fill_budget = true;
    const auto finest_quadrants = [&](uint32_t budget) {
        p.budget = budget;
        const FoveatedLayout f = foveated_layout(256, 256, p);
        const uint32_t finest = *std::min_element(f.cell_level.begin(), f.cell_level.end());
        bool quadrant[2][2] = {};  // [bottom][right]
        for (size_t i = 0; i < f.layout.patches.size(); ++i)
            if (f.layout.patches[i].level >= 0 && f.cell_level[i] == finest)
                quadrant[f.layout.patches[i].cv > 0.5f][f.layout.patches[i].cu > 0.5f] = true;
        return std::vector<bool>{quadrant[0][0], quadrant[0][1], quadrant[1][0], quadrant[1][1]};
    };
    CHECK(finest_quadrants(7) == std::vector<bool>{true, false, false, false});  // one split: top-left
    CHECK(finest_quadrants(10) == std::vector<bool>{true, true, false, false});  // two: the top row
    CHECK(finest_quadrants(13) == std::vector<bool>{true, true, true, false});   // three: then bottom-left
}

TEST_CASE("a resize window empty on either axis is refused") {
    CHECK(resize_layout(100, 100, {40, 40, 0, 0, 40, 40, 20}).patches.size() == 4);
    CHECK_THROWS_AS(resize_layout(100, 100, {40, 40, 0, 0, 0, 40, 20}), Error);
    CHECK_THROWS_AS(resize_layout(100, 100, {40, 40, 0, 0, 40, 0, 20}), Error);
}

TEST_CASE("check_patch_target: exactly the levels, layers and bytes a layout needs pass; one short fails") {
    PatchLayout layout = level_grid_layout(64, 48, 8, 0);
    layout.levels_needed = 3;
    const PatchOutput output{.channels = 3};
    const size_t bytes = output.bytes(layout);
    CHECK(bytes == layout.patches.size() * 3 * 8 * 8 * 4);
    CHECK_NOTHROW(check_patch_target(layout, output, 64, 48, 3, 1, bytes));
    CHECK_THROWS_WITH_AS(check_patch_target(layout, output, 64, 48, 2, 1, bytes),
                         doctest::Contains("samples 3 mip levels but the texture has 2"), Error);
    CHECK_THROWS_WITH_AS(check_patch_target(layout, output, 64, 48, 3, 0, bytes),
                         doctest::Contains("1 images but the texture has 0 layers"), Error);
    CHECK_THROWS_AS(check_patch_target(layout, output, 64, 48, 3, 1, bytes + 1), Error);
    CHECK_THROWS_AS(check_patch_target(layout, output, 64, 48, 3, 1, bytes - 1), Error);
    CHECK_THROWS_AS(check_patch_target(layout, output, 65, 48, 3, 1, bytes), Error);
    CHECK_THROWS_AS(check_patch_target(layout, output, 64, 47, 3, 1, bytes), Error);
}

TEST_CASE("same_sampling: a copy samples the same; a moved patch, another count or another mode does not") {
    const PatchLayout layout = level_grid_layout(64, 48, 8, 0);
    CHECK(layout.same_sampling(layout));
    PatchLayout moved = layout;
    moved.patches.back().cu += 0.01f;
    CHECK_FALSE(layout.same_sampling(moved));
    PatchLayout fewer = layout;
    fewer.patches.pop_back();
    --fewer.patches_per_image;
    CHECK_FALSE(layout.same_sampling(fewer));
    PatchLayout graded = layout;
    graded.mode = SamplingMode::gradients;
    CHECK_FALSE(layout.same_sampling(graded));
}

TEST_CASE("batch_layouts: another sampling mode or a layout already batched is refused; kinds mix to \"mixed\"") {
    const PatchLayout grid = level_grid_layout(256, 128, 8, 0);
    const PatchLayout aniso = anisotropic_layout(256, 128, {.patch_size = 8, .level = 0, .elongation = 2});
    CHECK_THROWS_WITH_AS(batch_layouts(std::vector<PatchLayout>{grid, aniso}),
                         doctest::Contains("share image size, patch size and sampling mode"), Error);
    const PatchLayout pair = batch_layouts(std::vector<PatchLayout>{grid, grid});
    CHECK(pair.kind == "grid");
    CHECK_THROWS_AS(batch_layouts(std::vector<PatchLayout>{grid, pair}), Error);
    FoveatedParams params;
    params.budget = 20;
    params.patch_size = 8;
    const PatchLayout foveated = foveated_layout(256, 128, params).layout;
    CHECK(batch_layouts(std::vector<PatchLayout>{grid, foveated}).kind == "mixed");
    CHECK(batch_layouts(std::vector<PatchLayout>{foveated, foveated}).kind == "foveated");
}

TEST_CASE("an anisotropic glimpse keeps 1 to every tile; 0 and one more are refused") {
    AnisotropicParams params{.patch_size = 8, .level = 1, .elongation = 4, .fixation = Fixation{0.5, 0.5}};
    const size_t tiles = anisotropic_layout(256, 128, {.patch_size = 8, .level = 1, .elongation = 4}).patches.size();
    params.count = uint32_t(tiles);
    CHECK(anisotropic_layout(256, 128, params).patches.size() == tiles);
    params.count = 1;
    CHECK(anisotropic_layout(256, 128, params).patches.size() == 1);
    params.count = uint32_t(tiles) + 1;
    const std::string ask = "ask for 1 to " + std::to_string(tiles);
    CHECK_THROWS_WITH_AS(anisotropic_layout(256, 128, params), doctest::Contains(ask.c_str()), Error);
    params.count = 0;
    CHECK_THROWS_AS(anisotropic_layout(256, 128, params), Error);
}
