#include "engine/sampling/tolerance.h"

#include <algorithm>
#include <cfloat>
#include <cmath>

#include "engine/textures/color.h"

namespace tvlm {

namespace {

// Distance to the next representable value above |v| in `format`.
double storage_step(Format format, double v) {
    const double a = std::max(std::fabs(v), 1e-30);
    switch (format_info(format).component) {
        case ComponentType::u8: return 1.0 / 255.0;
        case ComponentType::f16: return std::max(std::ldexp(1.0, std::ilogb(a) - 10), std::ldexp(1.0, -24));
        // Filtering arithmetic rounds once per tap: up to 4 float32 roundings per bilinear sample.
        case ComponentType::f32: return 4.0 * std::max(std::ldexp(1.0, std::ilogb(a) - 23), std::ldexp(1.0, -149));
    }
    return 0.0;
}

// Texel values arrive as float (byte/255 rounded to float): allow their own rounding.
double float_slack(double magnitude) { return 2.0 * FLT_EPSILON * std::max(magnitude, 1e-30); }

}  // namespace

double sample_tolerance(bool gradients, bool half_output, double value) {
    const double magnitude = std::max(std::fabs(value), 1e-30);
    const double half_rounding = half_output
                                     ? std::max(std::ldexp(1.0, std::ilogb(magnitude) - 11), std::ldexp(1.0, -25))
                                     : 0.0;
    return (gradients ? kGradientSampleError : kSampleWeightError) + half_rounding + float_slack(magnitude);
}

bool texel_matches(Format format, bool colour_channel, double expected, double actual, Weights weights) {
    if (std::isnan(expected) || std::isnan(actual)) return false;
    const double weight_error = weights == Weights::hardware ? kHardwareWeightError : 0.0;
    if (format_info(format).srgb && colour_channel) {
        // One 8-bit sRGB step, measured in linear light where the filter works.
        const double hi = std::clamp(std::max(expected, actual) + 1.0 / 255.0, 0.0, 1.0);
        const double step = srgb_to_linear(hi) - srgb_to_linear(hi - 1.0 / 255.0);
        return std::fabs(srgb_to_linear(expected) - srgb_to_linear(actual)) <= weight_error + step + float_slack(1.0);
    }
    const double step = storage_step(format, std::max(std::fabs(expected), std::fabs(actual)));
    return std::fabs(expected - actual) <=
           weight_error + step + float_slack(std::max(std::fabs(expected), std::fabs(actual)));
}

}  // namespace tvlm
