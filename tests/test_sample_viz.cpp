// tvlm sample --viz's left panel: the image shrunk for display must average fine detail
// (a point-sampled shrink turns 1-pixel stripes and checkers into solid colours or false
// patterns), and must equal the exact area average of the image at any ratio.
#include <doctest/doctest.h>

#include <cmath>
#include <random>

#include "apps/sample_viz.h"

namespace tvlm {
namespace {

// The average of `image` over the rectangle [x0, x1) x [y0, y1) of real coordinates.
double area_average(const ImageF& image, double x0, double x1, double y0, double y1, uint32_t c) {
    double sum = 0;
    for (auto y = uint32_t(y0); y < std::ceil(y1); ++y)
        for (auto x = uint32_t(x0); x < std::ceil(x1); ++x) {
            const double w = (std::min(x1, x + 1.0) - std::max(x0, double(x))) *
                             (std::min(y1, y + 1.0) - std::max(y0, double(y)));
            sum += w * image.at(x, y, c);
        }
    return sum / ((x1 - x0) * (y1 - y0));
}

}  // namespace

TEST_CASE("the viz panel of a one-pixel teal checker is teal, not a false colour") {
    ImageF checker(1536, 1024, 4);
    for (uint32_t y = 0; y < checker.height; ++y)
        for (uint32_t x = 0; x < checker.width; ++x) {
            const bool teal = (x + y) % 2 == 0;
            checker.at(x, y, 0) = teal ? 0.0f : 1.0f;
            checker.at(x, y, 1) = teal ? 0.5f : 1.0f;
            checker.at(x, y, 2) = teal ? 0.5f : 1.0f;
            checker.at(x, y, 3) = 1.0f;
        }
    for (const auto& [w, h] : {std::pair{1024u, 683u}, std::pair{768u, 512u}, std::pair{300u, 200u}}) {
        const ImageF panel = panel_image(checker, w, h);
        REQUIRE(panel.width == w);
        REQUIRE(panel.height == h);
        double worst = 0;
        for (uint32_t y = 1; y + 1 < h; ++y)  // the edge rows and columns may cover an odd count
            for (uint32_t x = 1; x + 1 < w; ++x) {
                worst = std::max(worst, std::abs(panel.at(x, y, 0) - 0.5));
                worst = std::max(worst, std::abs(panel.at(x, y, 1) - 0.75));
            }
        CAPTURE(w);
        CHECK(worst < 0.2);  // a point sample is 0.5 off (pure teal or white)
    }
}

TEST_CASE("the viz panel is the area average of the image, through its mip chain") {
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> value(0.0f, 1.0f);
    ImageF image(257, 190, 4);  // odd sizes: the box chain's three-tap levels too
    for (float& t : image.texels) t = value(rng);
    for (const auto& [w, h] :
         {std::pair{257u, 190u}, std::pair{200u, 150u}, std::pair{128u, 95u}, std::pair{40u, 31u}}) {
        const ImageF panel = panel_image(image, w, h);
        const double sx = double(image.width) / w, sy = double(image.height) / h;
        double worst = 0, mean_error = 0;
        for (uint32_t y = 0; y < h; ++y)
            for (uint32_t x = 0; x < w; ++x)
                for (uint32_t c = 0; c < 4; ++c) {
                    const double want = area_average(image, x * sx, (x + 1) * sx, y * sy, (y + 1) * sy, c);
                    const double error = std::abs(panel.at(x, y, c) - want);
                    worst = std::max(worst, error);
                    mean_error += error / (w * h * 4.0);
                }
        CAPTURE(w);
        if (w * 2 > image.width || w == (image.width >> 1)) {
            CHECK(worst < 1e-6);  // the image itself, or one exact box level: the area average
        } else {
            // Deeper in the chain a pixel's footprint is rounded to the chain's texels: close
            // to the exact area average, far from a point sample's error (about 0.25 here).
            CHECK(mean_error < 0.03);
            CHECK(worst < 0.15);
        }
    }
}

}  // namespace tvlm
