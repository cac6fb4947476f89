// The host half of frame differencing: the reference of the GPU's changed tiles and the
// merge of tiles into few rectangles (engine/video/changed_tiles.h).
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "engine/error.h"
#include "engine/video/changed_tiles.h"
#include "shaders/shader_params.h"

namespace tvlm {
namespace {

constexpr uint32_t kTile = TVLM_CHANGE_TILE;

// Whether tile (x, y) of `layer` lies in some region, and in how many.
size_t covering(const std::vector<DirtyRegion>& regions, uint32_t layer, uint32_t x, uint32_t y) {
    size_t n = 0;
    for (const DirtyRegion& r : regions)
        n += r.first_layer == layer && x * kTile >= r.x && x * kTile < r.x + r.width && y * kTile >= r.y &&
             y * kTile < r.y + r.height;
    return n;
}

TEST_CASE("changed tiles: one byte over the threshold marks exactly its tile, edge tiles included") {
    const TileGrid grid{100, 70, 2};  // 4 x 3 tiles, the last column and row partial
    CHECK(grid.tiles_x() == 4);
    CHECK(grid.tiles_y() == 3);
    std::vector<uint8_t> before(100 * 70 * 2 * 4, 100), after = before;
    after[((1 * 70 + 69) * 100 + 99) * 4 + 3] = 105;  // layer 1, the last texel, alpha
    after[((0 * 70 + 40) * 100 + 10) * 4 + 0] = 104;  // layer 0, tile (0, 1), within a threshold of 4
    const std::vector<uint32_t> at4 = reference_changed_tiles(before, after, grid, 4);
    std::vector<uint32_t> expected(grid.tile_count(), 0);
    expected[12 + 2 * 4 + 3] = 1;
    CHECK(at4 == expected);
    const std::vector<uint32_t> at3 = reference_changed_tiles(before, after, grid, 3);
    expected[1 * 4 + 0] = 1;
    CHECK(at3 == expected);
    CHECK_THROWS_AS(reference_changed_tiles(before, std::vector<uint8_t>(10), grid, 0), Error);
}

TEST_CASE("changed tiles: a texel's channels are its own; a change in the next texel marks only its tile") {
    const TileGrid grid{2 * kTile, 1, 1};
    std::vector<uint8_t> before(size_t{2} * kTile * 4, 0), after = before;
    after[size_t{kTile} * 4] = 255;  // red of the first texel of tile 1, right after tile 0's last texel
    CHECK(reference_changed_tiles(before, after, grid, 0) == std::vector<uint32_t>{0, 1});
}

TEST_CASE("a change threshold of 255 is the largest accepted; 256 is refused") {
    CHECK(checked({.threshold = 255}).threshold == 255);
    CHECK_THROWS_WITH_AS(checked({.threshold = 256}), doctest::Contains("give 0 to 255"), Error);
}

TEST_CASE("merged rectangles: a block is one rectangle, far tiles stay apart, edges are clipped") {
    const TileGrid grid{200, 150, 1};  // 7 x 5 tiles
    std::vector<uint32_t> changed(grid.tile_count(), 0);
    for (uint32_t y = 1; y < 3; ++y)
        for (uint32_t x = 2; x < 5; ++x) changed[y * 7 + x] = 1;
    changed[4 * 7 + 6] = 1;  // the bottom-right corner tile: 8 x 22 texels
    const std::vector<DirtyRegion> regions = merge_changed_tiles(changed, grid);
    REQUIRE(regions.size() == 2);
    CHECK(regions[0].x == 64);
    CHECK(regions[0].y == 32);
    CHECK(regions[0].width == 96);
    CHECK(regions[0].height == 64);
    CHECK(regions[1].x == 192);
    CHECK(regions[1].y == 128);
    CHECK(regions[1].width == 8);
    CHECK(regions[1].height == 22);
    CHECK(merge_changed_tiles(std::vector<uint32_t>(grid.tile_count(), 0), grid).empty());
    CHECK_THROWS_AS(merge_changed_tiles(std::vector<uint32_t>(3, 0), grid), Error);
}

TEST_CASE("merged rectangles of a disc: few, no overlap, every changed tile covered, little waste") {
    const TileGrid grid{1024, 768, 1};
    std::vector<uint32_t> changed(grid.tile_count(), 0);
    size_t count = 0;
    for (uint32_t y = 0; y < grid.tiles_y(); ++y)
        for (uint32_t x = 0; x < grid.tiles_x(); ++x)
            if ((x - 12.0) * (x - 12.0) + (y - 9.0) * (y - 9.0) <= 36.0) changed[y * grid.tiles_x() + x] = 1, ++count;
    const std::vector<DirtyRegion> regions = merge_changed_tiles(changed, grid);
    size_t covered_tiles = 0;
    for (uint32_t y = 0; y < grid.tiles_y(); ++y)
        for (uint32_t x = 0; x < grid.tiles_x(); ++x) {
            const size_t n = covering(regions, 0, x, y);
            CHECK(n <= 1);
            if (changed[y * grid.tiles_x() + x]) CHECK(n == 1);
            covered_tiles += n;
        }
    MESSAGE("disc of " << count << " tiles: " << regions.size() << " rectangles covering " << covered_tiles
                       << " tiles");
    CHECK(regions.size() <= 7);
    CHECK(double(covered_tiles) <= 1.5 * double(count));
}

TEST_CASE("merged rectangles of random tiles over layers cover each changed tile exactly once") {
    const TileGrid grid{300, 200, 3};
    std::mt19937 random(11);
    for (int round = 0; round < 20; ++round) {
        std::vector<uint32_t> changed(grid.tile_count());
        for (uint32_t& c : changed) c = random() % 4 == 0;
        const std::vector<DirtyRegion> regions = merge_changed_tiles(changed, grid);
        for (const DirtyRegion& r : regions) {
            CHECK(r.width > 0);
            CHECK(r.height > 0);
            CHECK(r.x + r.width <= grid.width);
            CHECK(r.y + r.height <= grid.height);
            CHECK(r.layers == 1);
        }
        size_t changed_count = 0, covered = 0;
        for (uint32_t layer = 0; layer < grid.layers; ++layer)
            for (uint32_t y = 0; y < grid.tiles_y(); ++y)
                for (uint32_t x = 0; x < grid.tiles_x(); ++x) {
                    const size_t n = covering(regions, layer, x, y);
                    CHECK(n <= 1);
                    const bool was_changed = changed[(layer * grid.tiles_y() + y) * grid.tiles_x() + x] != 0;
                    if (was_changed) CHECK(n == 1);
                    changed_count += was_changed;
                    covered += n;
                }
        // Each merge adds at most half the changed tiles it joins.
        CHECK(double(covered) <= 1.5 * double(changed_count) + 1e-9);
    }
}

}  // namespace
}  // namespace tvlm

namespace tvlm {
namespace {

TEST_CASE("merged rectangles capped per layer still cover each changed tile exactly once") {
    const TileGrid grid{300, 200, 2};
    std::mt19937 random(12);
    for (uint32_t cap : {1u, 3u, 8u}) {
        CAPTURE(cap);
        for (int round = 0; round < 10; ++round) {
            std::vector<uint32_t> changed(grid.tile_count());
            for (uint32_t& c : changed) c = random() % 5 == 0;
            const std::vector<DirtyRegion> regions = merge_changed_tiles(changed, grid, cap);
            for (uint32_t layer = 0; layer < grid.layers; ++layer) {
                CHECK(std::count_if(regions.begin(), regions.end(),
                                    [&](const DirtyRegion& r) { return r.first_layer == layer; }) <= cap);
                for (uint32_t y = 0; y < grid.tiles_y(); ++y)
                    for (uint32_t x = 0; x < grid.tiles_x(); ++x) {
                        const size_t n = covering(regions, layer, x, y);
                        CHECK(n <= 1);
                        if (changed[(layer * grid.tiles_y() + y) * grid.tiles_x() + x]) CHECK(n == 1);
                    }
            }
        }
    }
    CHECK_THROWS_AS(merge_changed_tiles(std::vector<uint32_t>(grid.tile_count(), 1), grid, 0), Error);
}

TEST_CASE("rectangles that only touch do not overlap: a pair beside a third still merges") {
    // Tiles (1 = changed):   1 1 0 1 1 0
    //                        1 1 1 1 1 0
    // Row 0's two runs merge (one unchanged tile in their box) though row 1's run touches
    // that box's lower edge; the result merges once more into one 5 x 2 tile rectangle.
    const TileGrid grid{6 * 32, 2 * 32, 1};
    const std::vector<uint32_t> changed{1, 1, 0, 1, 1, 0, 1, 1, 1, 1, 1, 0};
    const std::vector<DirtyRegion> regions = merge_changed_tiles(changed, grid);
    REQUIRE(regions.size() == 1);
    CHECK(regions[0].x == 0);
    CHECK(regions[0].y == 0);
    CHECK(regions[0].width == 5 * 32);
    CHECK(regions[0].height == 2 * 32);
    // The same above the pair's box.
    const std::vector<uint32_t> above{1, 1, 1, 1, 1, 0, 1, 1, 0, 1, 1, 0};
    CHECK(merge_changed_tiles(above, grid).size() == 1);
    // Beside it: a 2x3 and a 2x2 run merge (5 unchanged tiles of 15), and a single tile that
    // touches their box's right (then left) edge in the bottom row neither blocks that merge
    // nor joins it (11 changed of 18): two rectangles.
    const TileGrid three_rows{6 * 32, 3 * 32, 1};
    const std::vector<uint32_t> right{1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 0, 0, 1};
    const std::vector<uint32_t> left{0, 1, 1, 0, 1, 1, 0, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 1};
    CHECK(merge_changed_tiles(right, three_rows).size() == 2);
    CHECK(merge_changed_tiles(left, three_rows).size() == 2);
}

// Scattered changes: up to 256 run rectangles are merged pair by pair; more are first
// joined into one box. Isolated tiles 3 apart never merge (their pair's box is half waste).
TEST_CASE("256 scattered tiles are merged down to max_regions; 257 are joined into one box first") {
    const auto scattered = [](uint32_t count) {
        const TileGrid grid{48 * 32, 51 * 32, 1};
        std::vector<uint32_t> changed(grid.tile_count(), 0);
        for (uint32_t i = 0; i < count; ++i) changed[size_t{(i / 16) * 3} * 48 + (i % 16) * 3] = 1;
        return merge_changed_tiles(changed, grid, 8);
    };
    CHECK(scattered(256).size() == 8);
    CHECK(scattered(257).size() == 1);
}

}  // namespace
}  // namespace tvlm
