// The foveated layout: a quadtree refined toward the fixations under a patch budget.
#include <algorithm>
#include <cmath>
#include <queue>
#include <string>

#include "engine/error.h"
#include "engine/mips/mip_filter.h"
#include "engine/sampling/patch_layouts.h"

namespace tvlm {

namespace {

struct Cell {
    uint32_t x0, y0, x1, y1;  // pixel rectangle [x0, x1) x [y0, y1), clipped to the image
    uint32_t level;           // quadtree level: the unclipped cell is P * 2^level texels wide
    double want;              // level - D(e_nearest): > 0 means a finer level is wanted
};

// Most wanted first; ties to the cell first in row-major order, so the result is deterministic.
struct LessWanted {
    bool operator()(const Cell& a, const Cell& b) const {
        if (a.want != b.want) return a.want < b.want;
        if (a.y0 != b.y0) return a.y0 > b.y0;
        return a.x0 > b.x0;
    }
};

void check_params(const FoveatedParams& p) {
    if (p.fixations.empty()) throw Error("a foveated layout needs at least one fixation");
    for (const Fixation& f : p.fixations)
        if (!(f.x >= 0 && f.x <= 1 && f.y >= 0 && f.y <= 1))  // also rejects NaN
            throw Error("fixation (" + std::to_string(f.x) + ", " + std::to_string(f.y) +
                        ") is outside the image: use normalized coordinates in [0,1]");
    if (!(p.m0 > 0) || !std::isfinite(p.m0) || !(p.e0 > 0) || !std::isfinite(p.e0) || !std::isfinite(p.bias))
        throw Error("cortical magnification needs m0 > 0, e0 > 0 and a finite bias");
}

}  // namespace

double desired_level(const FoveatedParams& params, double e) {
    return -std::log2(params.m0 / (e + params.e0)) + params.bias;
}

double eccentricity(const FoveatedParams& params, uint32_t width, uint32_t height, double x0, double y0, double x1,
                    double y1) {
    double nearest = INFINITY;
    for (const Fixation& f : params.fixations) {
        const double px = f.x * width, py = f.y * height;
        const double dx = std::max({x0 - px, 0.0, px - x1}), dy = std::max({y0 - py, 0.0, py - y1});
        nearest = std::min(nearest, std::hypot(dx, dy));
    }
    return nearest / std::max(width, height);
}

FoveatedLayout foveated_layout(uint32_t width, uint32_t height, const FoveatedParams& params) {
    const uint32_t p = params.patch_size;
    check_patch_geometry(width, height, p);
    check_params(params);

    // Root cells: the smallest level whose cells span the shorter side (and that exists).
    const uint32_t max_level = full_mip_count(width, height) - 1;
    uint32_t root = 0;
    while (root < max_level && (uint64_t{p} << root) < std::min(width, height)) ++root;
    const uint64_t root_size = uint64_t{p} << root;
    const uint64_t columns = (width + root_size - 1) / root_size, rows = (height + root_size - 1) / root_size;
    if (params.budget < columns * rows)
        throw Error("budget " + std::to_string(params.budget) + " is below the " + std::to_string(columns * rows) +
                    " patches a " + std::to_string(width) + "x" + std::to_string(height) + " image needs with " +
                    std::to_string(p) + "x" + std::to_string(p) +
                    " patches (one per root cell): raise the budget "
                    "or the patch size");

    const auto make_cell = [&](uint64_t x0, uint64_t y0, uint64_t size, uint32_t level) {
        Cell c{uint32_t(x0),
               uint32_t(y0),
               uint32_t(std::min<uint64_t>(x0 + size, width)),
               uint32_t(std::min<uint64_t>(y0 + size, height)),
               level,
               0.0};
        const double e = eccentricity(params, width, height, c.x0, c.y0, c.x1, c.y1);
        // Unclamped D orders cells that the clamp would tie (all of a fovea wants level 0);
        // whether a split is wanted is the same either way, since 0 <= level <= root.
        c.want = level - desired_level(params, e);
        return c;
    };
    std::vector<Cell> leaves;
    std::priority_queue<Cell, std::vector<Cell>, LessWanted> splittable;
    const auto place = [&](const Cell& c) {
        if (c.level > 0 && (c.want > 0 || params.fill_budget)) splittable.push(c);
        else leaves.push_back(c);
    };
    for (uint64_t y = 0; y < rows; ++y)
        for (uint64_t x = 0; x < columns; ++x) place(make_cell(x * root_size, y * root_size, root_size, root));

    uint64_t count = columns * rows;
    double threshold = 0.0;
    while (!splittable.empty()) {
        const Cell c = splittable.top();
        const uint64_t half = (uint64_t{p} << c.level) / 2;
        std::vector<Cell> children;
        for (uint64_t y = c.y0; y < c.y1; y += half)
            for (uint64_t x = c.x0; x < c.x1; x += half) children.push_back(make_cell(x, y, half, c.level - 1));
        if (count - 1 + children.size() > params.budget) {
            if (params.fill_budget && count < params.budget) {  // a clipped cell may still fit
                splittable.pop();
                leaves.push_back(c);
                continue;
            }
            threshold = c.want;  // the first split refused: everything left is at most this wanted
            break;
        }
        splittable.pop();
        count += children.size() - 1;
        for (const Cell& child : children) place(child);
    }
    for (; !splittable.empty(); splittable.pop()) leaves.push_back(splittable.top());
    std::sort(leaves.begin(), leaves.end(),
              [](const Cell& a, const Cell& b) { return a.y0 != b.y0 ? a.y0 < b.y0 : a.x0 < b.x0; });

    FoveatedLayout result;
    result.threshold = threshold;
    PatchLayout& layout = result.layout;
    layout = {.kind = "foveated", .width = width, .height = height, .patch_size = p};
    double max_lod = 0;
    for (const Cell& c : leaves) {
        const double w = c.x1 - c.x0, h = c.y1 - c.y0;
        // One sample per texel of this level: clipped cells have a finer spacing.
        const double lod = std::max(0.0, std::log2(std::max(w, h) / p));
        max_lod = std::max(max_lod, lod);
        layout.patches.push_back({.cu = float((c.x0 + w / 2) / width),
                                  .cv = float((c.y0 + h / 2) / height),
                                  .su = float(w / width),
                                  .sv = float(h / height),
                                  .level = float(lod),
                                  .axis_x = 1.0f,
                                  .axis_y = 0.0f,
                                  .layer = 0});
        result.cell_level.push_back(c.level);
    }
    layout.patches_per_image = static_cast<uint32_t>(layout.patches.size());
    layout.levels_needed = std::min(static_cast<uint32_t>(std::ceil(max_lod)) + 1, max_level + 1);
    return result;
}

}  // namespace tvlm
