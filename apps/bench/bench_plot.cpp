#include "apps/bench/bench_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>

#include "apps/bench/bench_rows.h"

// stb_easy_font: text as quads (Debian's libstb-dev), rasterised here into the image.
#include <stb/stb_easy_font.h>

namespace tvlm {

namespace {

constexpr int kWidth = 1400, kLabel = 470, kBarLeft = 480, kBarRight = 1280, kRow = 16, kScale = 1;

struct Canvas {
    Rgba8Image image;
    void fill(int x0, int y0, int x1, int y1, const uint8_t* rgb) {
        x0 = std::clamp(x0, 0, static_cast<int>(image.width));
        x1 = std::clamp(x1, 0, static_cast<int>(image.width));
        y0 = std::clamp(y0, 0, static_cast<int>(image.height));
        y1 = std::clamp(y1, 0, static_cast<int>(image.height));
        for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x) {
                uint8_t* p = &image.texels[(static_cast<size_t>(y) * image.width + static_cast<size_t>(x)) * 4];
                p[0] = rgb[0];
                p[1] = rgb[1];
                p[2] = rgb[2];
                p[3] = 255;
            }
    }
    void text(int x, int y, const std::string& s, const uint8_t* rgb, int scale = kScale) {
        std::vector<char> buffer(s.size() * 270 + 64);  // stb_easy_font: about 270 bytes per character
        const int quads = stb_easy_font_print(0, 0, const_cast<char*>(s.c_str()), nullptr, buffer.data(),
                                              static_cast<int>(buffer.size()));
        const auto* v = reinterpret_cast<const float*>(buffer.data());  // 4 vertices of (x, y, z, rgba) per quad
        for (int q = 0; q < quads; ++q) {
            const float* a = v + q * 16;
            const float* c = a + 8;  // the opposite corner
            fill(x + static_cast<int>(a[0]) * scale, y + static_cast<int>(a[1]) * scale,
                 x + static_cast<int>(c[0]) * scale, y + static_cast<int>(c[1]) * scale, rgb);
        }
    }
};

const uint8_t kPalette[][3] = {{31, 119, 180},  {255, 127, 14}, {44, 160, 44},   {214, 39, 40},
                               {148, 103, 189}, {140, 86, 75},  {227, 119, 194}, {127, 127, 127}};
const uint8_t kInk[3] = {20, 20, 20}, kGrid[3] = {225, 225, 225}, kFloor[3] = {0, 0, 0};

// A duration label short enough to fit right of the longest bar (milliseconds from 10 ms).
std::string microseconds(double us) {
    char text[32];
    if (us >= 1e4) std::snprintf(text, sizeof text, us < 1e5 ? "%.1f ms" : "%.0f ms", us * 1e-3);
    else std::snprintf(text, sizeof text, us < 10 ? "%.2f us" : us < 100 ? "%.1f us" : "%.0f us", us);
    return text;
}

}  // namespace

Rgba8Image bar_chart(const std::string& title, const std::vector<Row>& rows, const std::string& axis) {
    std::vector<std::string> jobs, methods;
    for (const Row& r : rows) {
        if (std::find(jobs.begin(), jobs.end(), r.job) == jobs.end()) jobs.push_back(r.job);
        if (std::find(methods.begin(), methods.end(), r.method) == methods.end()) methods.push_back(r.method);
    }
    double low = 1e30, high = 0;
    for (const Row& r : rows) {
        low = std::min({low, r.median_us, r.floor_us > 0 ? r.floor_us : r.median_us});
        high = std::max(high, r.median_us);
    }
    low = std::pow(10.0, std::floor(std::log10(std::max(low, 1e-3))));
    high = std::pow(10.0, std::ceil(std::log10(std::max(high, low * 10))));
    const auto x_of = [&](double us) {
        const double t = (std::log10(std::max(us, low)) - std::log10(low)) / (std::log10(high) - std::log10(low));
        return kBarLeft + static_cast<int>(t * (kBarRight - kBarLeft));
    };

    const int top = 60;
    int height = top + 30;
    for (const std::string& job : jobs)
        height += kRow * (1 + static_cast<int>(std::count_if(rows.begin(), rows.end(),
                                                             [&](const Row& r) { return r.job == job; }))) +
                  10;
    Canvas canvas{{kWidth, static_cast<uint32_t>(height),
                   std::vector<uint8_t>(size_t{kWidth} * static_cast<size_t>(height) * 4, 255)}};

    canvas.text(10, 10, title, kInk, 2);
    for (double decade = low; decade <= high * 1.001; decade *= 10) {  // grid at every decade
        canvas.fill(x_of(decade), top, x_of(decade) + 1, height - 20, kGrid);
        canvas.text(x_of(decade) - 10, height - 16, microseconds(decade), kInk);
    }
    canvas.text(10, top - 18, axis + ", log scale; | = floor (bytes moved / measured bandwidth)", kInk);

    int y = top;
    for (const std::string& job : jobs) {
        canvas.text(10, y + 3, job, kInk);
        y += kRow;
        for (const Row& r : rows) {
            if (r.job != job) continue;
            const auto m = static_cast<size_t>(std::find(methods.begin(), methods.end(), r.method) - methods.begin());
            const uint8_t* colour = kPalette[m % std::size(kPalette)];
            canvas.text(30, y + 3, r.method, colour);
            canvas.fill(kBarLeft, y + 2, x_of(r.median_us), y + kRow - 3, colour);
            canvas.text(x_of(r.median_us) + 4, y + 3, microseconds(r.median_us), kInk);
            if (r.floor_us > 0) canvas.fill(x_of(r.floor_us), y, x_of(r.floor_us) + 2, y + kRow, kFloor);
            y += kRow;
        }
        y += 10;
    }
    return canvas.image;
}

Rgba8Image stack_charts(const std::vector<Rgba8Image>& charts) {
    Rgba8Image stacked{kWidth, 0, {}};
    for (const Rgba8Image& chart : charts) {
        stacked.height += chart.height;
        stacked.texels.insert(stacked.texels.end(), chart.texels.begin(), chart.texels.end());
    }
    return stacked;
}

}  // namespace tvlm
