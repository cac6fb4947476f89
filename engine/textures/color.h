#pragma once
// sRGB transfer functions (IEC 61966-2-1), used where sRGB texels are filtered in linear light.

namespace tvlm {

double srgb_to_linear(double encoded);
double linear_to_srgb(double linear);

}  // namespace tvlm
