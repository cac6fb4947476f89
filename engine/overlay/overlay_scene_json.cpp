#include "engine/overlay/overlay_scene_json.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/error.h"

namespace tvlm {

namespace {

using nlohmann::json;

// Reads one object's fields, refusing keys it does not know.
class Fields {
public:
    Fields(const json& object, std::string where, const std::set<std::string>& known)
        : object_(object), where_(std::move(where)) {
        if (!object.is_object()) fail("", "an object");
        for (const auto& [key, value] : object.items())
            if (!known.count(key)) throw Error(where_ + ": unknown key \"" + key + "\"");
    }
    float number(const char* key, float fallback) const {
        if (!object_.contains(key)) return fallback;
        const json& v = object_.at(key);
        if (!v.is_number()) fail(key, "a number");
        // Pixels are floats: a finite double past float's range would become infinite.
        if (std::abs(v.get<double>()) > double(std::numeric_limits<float>::max()))
            fail(key, "a number of pixels within a float's range (at most 3.4e38 in magnitude)");
        return v.get<float>();
    }
    float required(const char* key) const {
        if (!object_.contains(key)) throw Error(where_ + ": \"" + key + "\" is missing");
        return number(key, 0);
    }
    bool flag(const char* key, bool fallback) const {
        if (!object_.contains(key)) return fallback;
        if (!object_.at(key).is_boolean()) fail(key, "true or false");
        return object_.at(key).get<bool>();
    }
    OverlayColor color(const char* key, OverlayColor fallback) const {
        if (!object_.contains(key)) return fallback;
        const json& v = object_.at(key);
        if (!v.is_array() || (v.size() != 3 && v.size() != 4)) fail(key, "[r, g, b] or [r, g, b, a], bytes 0-255");
        uint8_t c[4] = {0, 0, 0, 255};
        for (size_t i = 0; i < v.size(); ++i) {
            if (!v[i].is_number_integer() || v[i].get<int64_t>() < 0 || v[i].get<int64_t>() > 255)
                fail(key, "[r, g, b] or [r, g, b, a], bytes 0-255");
            c[i] = uint8_t(v[i].get<int64_t>());
        }
        return {c[0], c[1], c[2], c[3]};
    }
    uint64_t track(uint64_t fallback) const {
        if (!object_.contains("track")) return fallback;
        const json& v = object_.at("track");
        if (!v.is_number_unsigned()) fail("track", "a non-negative integer");
        return v.get<uint64_t>();
    }

private:
    [[noreturn]] void fail(const std::string& key, const char* expected) const {
        throw Error(where_ + (key.empty() ? "" : "." + key) + ": expected " + expected);
    }
    const json& object_;
    std::string where_;
};

const json& list(const json& root, const char* key, const std::string& name) {
    static const json empty = json::array();
    if (!root.contains(key)) return empty;
    if (!root.at(key).is_array()) throw Error(name + ": \"" + key + "\" must be a list");
    return root.at(key);
}

}  // namespace

OverlaySceneFile parse_overlay_scene(const std::string& text, const std::string& name) {
    json root;
    try {
        root = json::parse(text);
    } catch (const json::out_of_range& e) {  // a number beyond double's range, such as 1e999
        throw Error(name + " holds a number out of range: " + e.what() + " (pixels are at most 3.4e38 in magnitude)");
    } catch (const json::exception& e) { throw Error(name + " is not valid JSON: " + e.what()); }
    if (!root.is_object()) throw Error(name + ": the scene is a JSON object with boxes, points, lines and curves");
    for (const auto& [key, value] : root.items())
        if (key != "boxes" && key != "points" && key != "lines" && key != "curves" && key != "trails" &&
            key != "labels")
            throw Error(name + ": unknown key \"" + key +
                        "\" (a scene has boxes, points, lines, curves, trails and labels)");
    OverlaySceneFile file;
    const json& boxes = list(root, "boxes", name);
    for (size_t i = 0; i < boxes.size(); ++i) {
        const Fields f(boxes[i], name + ": boxes[" + std::to_string(i) + "]",
                       {"x", "y", "width", "height", "radius", "stroke_width", "stroke", "fill"});
        const OverlayBox d;
        file.scene.boxes.push_back({f.required("x"), f.required("y"), f.required("width"), f.required("height"),
                                    f.number("radius", d.radius), f.number("stroke_width", d.stroke_width),
                                    f.color("stroke", d.stroke), f.color("fill", d.fill)});
    }
    const json& points = list(root, "points", name);
    for (size_t i = 0; i < points.size(); ++i) {
        const Fields f(points[i], name + ": points[" + std::to_string(i) + "]", {"x", "y", "radius", "color", "track"});
        const OverlayPoint d;
        file.scene.points.push_back(
            {f.required("x"), f.required("y"), f.number("radius", d.radius), f.color("color", d.color)});
        file.point_tracks.push_back(f.track(i));
    }
    const json& lines = list(root, "lines", name);
    for (size_t i = 0; i < lines.size(); ++i) {
        const Fields f(lines[i], name + ": lines[" + std::to_string(i) + "]",
                       {"x0", "y0", "x1", "y1", "width", "round_caps", "color"});
        const OverlayLine d;
        file.scene.lines.push_back({f.required("x0"), f.required("y0"), f.required("x1"), f.required("y1"),
                                    f.number("width", d.width), f.flag("round_caps", d.round_caps),
                                    f.color("color", d.color)});
    }
    const json& curves = list(root, "curves", name);
    for (size_t i = 0; i < curves.size(); ++i) {
        const Fields f(curves[i], name + ": curves[" + std::to_string(i) + "]",
                       {"x0", "y0", "x1", "y1", "width", "color"});
        const OverlayCurve d;
        file.scene.curves.push_back({f.required("x0"), f.required("y0"), f.required("x1"), f.required("y1"),
                                     f.number("width", d.width), f.color("color", d.color)});
    }
    const json& trails = list(root, "trails", name);
    for (size_t i = 0; i < trails.size(); ++i) {
        const std::string where = name + ": trails[" + std::to_string(i) + "]";
        const Fields f(trails[i], where, {"xy", "width", "color"});
        const OverlayTrail d;
        OverlayTrail t{{}, f.number("width", d.width), f.color("color", d.color)};
        const json& xy = trails[i].contains("xy") ? trails[i].at("xy") : json::array();
        if (!xy.is_array()) throw Error(where + ".xy: expected [x0, y0, x1, y1, ...]");
        for (const json& v : xy) {
            if (!v.is_number()) throw Error(where + ".xy: expected [x0, y0, x1, y1, ...]");
            t.xy.push_back(v.get<float>());
        }
        file.scene.trails.push_back(std::move(t));
    }
    const json& labels = list(root, "labels", name);
    for (size_t i = 0; i < labels.size(); ++i) {
        const std::string where = name + ": labels[" + std::to_string(i) + "]";
        const Fields f(labels[i], where, {"x", "y", "size", "text", "color", "background"});
        const OverlayLabel d;
        if (!labels[i].contains("text") || !labels[i].at("text").is_string())
            throw Error(where + ".text: expected a string");
        file.scene.labels.push_back({f.required("x"), f.required("y"), f.number("size", d.size),
                                     labels[i].at("text").get<std::string>(), f.color("color", d.color),
                                     f.color("background", d.background)});
    }
    return file;
}

OverlaySceneFile read_overlay_scene(const std::string& path) {
    std::error_code ec;
    const std::filesystem::file_status status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status))
        throw Error("cannot read the scene file " + path + ": check that it exists and is readable");
    // A FIFO blocks and a device (/dev/zero) never ends: only regular files, of bounded size.
    if (!std::filesystem::is_regular_file(status))
        throw Error("the scene file " + path + " is not a regular file (a folder, FIFO, socket or device)");
    if (const uintmax_t size = std::filesystem::file_size(path, ec); !ec && size > kMaxSceneFileBytes)
        throw Error("the scene file " + path + " is " + std::to_string(size) + " bytes: scenes over " +
                    std::to_string(kMaxSceneFileBytes >> 20) + " MiB are refused (draw it in parts)");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw Error("cannot read the scene file " + path + ": check that it exists and is readable");
    std::ostringstream text;
    text << in.rdbuf();
    return parse_overlay_scene(text.str(), path);
}

}  // namespace tvlm
