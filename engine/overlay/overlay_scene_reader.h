#pragma once
// The overlay scene schema (docs/cli.md, "The scene schema") read from any tree of objects,
// lists, numbers, booleans and strings: JSON text (overlay_scene_json.cpp) and Python dicts
// (python/bindings/overlay.cpp) share this one reader, so both accept and refuse the same
// scenes with the same messages. Errors name the path of what is wrong
// ("the scene: boxes[3].stroke: expected ...").
//
// Tree: a type with a cheap, copyable `Node` and static functions
//   bool valid(Node)                    a node was found
//   bool is_object(Node), is_array(Node)
//   template <class F> void for_each_key(Node object, F f)   f(std::string_view key)
//   Node find(Node object, const char* key)                   invalid where absent
//   size_t size(Node array);  Node at(Node array, size_t i)
//   std::optional<double> number(Node)      numbers only (not booleans)
//   std::optional<int64_t> integer(Node)    whole numbers only
//   std::optional<uint64_t> unsigned_integer(Node)   whole numbers 0 .. 2^64 - 1
//   std::optional<bool> boolean(Node);  std::optional<std::string> string(Node)
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include "engine/error.h"
#include "engine/overlay/overlay_scene.h"
#include "engine/overlay/overlay_scene_json.h"

namespace tvlm {

namespace scene_reader {

// One object of the scene: its fields read with their defaults, unknown keys refused. The
// path in messages is built only when something is wrong.
template <class Tree>
class Fields {
public:
    using Node = typename Tree::Node;
    Fields(Node object, const std::string& name, const char* list, size_t index,
           std::initializer_list<std::string_view> known)
        : object_(object), name_(name), list_(list), index_(index) {
        if (!Tree::is_object(object)) fail("", "an object");
        Tree::for_each_key(object, [&](std::string_view key) {
            if (std::find(known.begin(), known.end(), key) == known.end())
                throw Error(where() + ": unknown key \"" + std::string(key) + "\"");
        });
    }
    Node find(const char* key) const { return Tree::find(object_, key); }
    float number(const char* key, float fallback) const {
        const Node v = find(key);
        if (!Tree::valid(v)) return fallback;
        return number_of(v, key);
    }
    float number_of(Node v, const char* key) const {
        const std::optional<double> d = Tree::number(v);
        if (!d) fail(key, "a number");
        if (!std::isfinite(*d)) fail(key, "a finite number, not NaN or infinite: give finite pixels");
        // Pixels are floats: a finite double past float's range would become infinite.
        if (std::abs(*d) > double(std::numeric_limits<float>::max()))
            fail(key, "a number of pixels within a float's range (at most 3.4e38 in magnitude)");
        return float(*d);
    }
    float required(const char* key) const {
        if (!Tree::valid(find(key))) throw Error(where() + ": \"" + key + "\" is missing");
        return number(key, 0);
    }
    bool flag(const char* key, bool fallback) const {
        const Node v = find(key);
        if (!Tree::valid(v)) return fallback;
        const std::optional<bool> b = Tree::boolean(v);
        if (!b) fail(key, "true or false");
        return *b;
    }
    OverlayColor color(const char* key, OverlayColor fallback) const {
        const Node v = find(key);
        if (!Tree::valid(v)) return fallback;
        const char* expected = "[r, g, b] or [r, g, b, a], bytes 0-255";
        if (!Tree::is_array(v) || (Tree::size(v) != 3 && Tree::size(v) != 4)) fail(key, expected);
        uint8_t c[4] = {0, 0, 0, 255};
        for (size_t i = 0; i < Tree::size(v); ++i) {
            const std::optional<int64_t> byte = Tree::integer(Tree::at(v, i));
            if (!byte || *byte < 0 || *byte > 255) fail(key, expected);
            c[i] = uint8_t(*byte);
        }
        return {c[0], c[1], c[2], c[3]};
    }
    uint64_t track(uint64_t fallback) const {
        const Node v = find("track");
        if (!Tree::valid(v)) return fallback;
        const std::optional<uint64_t> id = Tree::unsigned_integer(v);
        if (!id) fail("track", "a non-negative integer");
        return *id;
    }
    std::string text(const char* key) const {
        const Node v = find(key);
        std::optional<std::string> s = Tree::valid(v) ? Tree::string(v) : std::nullopt;
        if (!s) fail(key, "a string");
        return std::move(*s);
    }
    std::string where() const { return name_ + ": " + list_ + "[" + std::to_string(index_) + "]"; }
    [[noreturn]] void fail(const std::string& key, const char* expected) const {
        throw Error(where() + (key.empty() ? "" : "." + key) + ": expected " + expected);
    }

private:
    Node object_;
    const std::string& name_;
    const char* list_;
    size_t index_;
};

template <class Tree>
typename Tree::Node list(typename Tree::Node root, const char* key, const std::string& name) {
    const typename Tree::Node v = Tree::find(root, key);
    if (Tree::valid(v) && !Tree::is_array(v)) throw Error(name + ": \"" + key + "\" must be a list");
    return v;
}

template <class Tree>
size_t length(typename Tree::Node list) {
    return Tree::valid(list) ? Tree::size(list) : 0;
}

}  // namespace scene_reader

// The scene in `root`; `name` ("the scene", a file's path) starts every message.
template <class Tree>
OverlaySceneFile read_overlay_scene_tree(typename Tree::Node root, const std::string& name) {
    using namespace scene_reader;
    using F = Fields<Tree>;
    if (!Tree::is_object(root)) throw Error(name + ": the scene is an object with boxes, points, lines and curves");
    Tree::for_each_key(root, [&](std::string_view key) {
        if (key != "boxes" && key != "points" && key != "lines" && key != "curves" && key != "trails" &&
            key != "labels")
            throw Error(name + ": unknown key \"" + std::string(key) +
                        "\" (a scene has boxes, points, lines, curves, trails and labels)");
    });
    OverlaySceneFile file;
    const auto boxes = list<Tree>(root, "boxes", name);
    for (size_t i = 0; i < length<Tree>(boxes); ++i) {
        const F f(Tree::at(boxes, i), name, "boxes", i,
                  {"x", "y", "width", "height", "radius", "stroke_width", "stroke", "fill"});
        const OverlayBox d;
        file.scene.boxes.push_back({f.required("x"), f.required("y"), f.required("width"), f.required("height"),
                                    f.number("radius", d.radius), f.number("stroke_width", d.stroke_width),
                                    f.color("stroke", d.stroke), f.color("fill", d.fill)});
    }
    const auto points = list<Tree>(root, "points", name);
    for (size_t i = 0; i < length<Tree>(points); ++i) {
        const F f(Tree::at(points, i), name, "points", i, {"x", "y", "radius", "color", "track"});
        const OverlayPoint d;
        file.scene.points.push_back(
            {f.required("x"), f.required("y"), f.number("radius", d.radius), f.color("color", d.color)});
        file.point_tracks.push_back(f.track(i));
    }
    const auto lines = list<Tree>(root, "lines", name);
    for (size_t i = 0; i < length<Tree>(lines); ++i) {
        const F f(Tree::at(lines, i), name, "lines", i, {"x0", "y0", "x1", "y1", "width", "round_caps", "color"});
        const OverlayLine d;
        file.scene.lines.push_back({f.required("x0"), f.required("y0"), f.required("x1"), f.required("y1"),
                                    f.number("width", d.width), f.flag("round_caps", d.round_caps),
                                    f.color("color", d.color)});
    }
    const auto curves = list<Tree>(root, "curves", name);
    for (size_t i = 0; i < length<Tree>(curves); ++i) {
        const F f(Tree::at(curves, i), name, "curves", i, {"x0", "y0", "x1", "y1", "width", "color"});
        const OverlayCurve d;
        file.scene.curves.push_back({f.required("x0"), f.required("y0"), f.required("x1"), f.required("y1"),
                                     f.number("width", d.width), f.color("color", d.color)});
    }
    const auto trails = list<Tree>(root, "trails", name);
    for (size_t i = 0; i < length<Tree>(trails); ++i) {
        const F f(Tree::at(trails, i), name, "trails", i, {"xy", "width", "color"});
        const OverlayTrail d;
        OverlayTrail t{{}, f.number("width", d.width), f.color("color", d.color)};
        const auto xy = f.find("xy");
        if (Tree::valid(xy)) {
            if (!Tree::is_array(xy)) f.fail("xy", "[x0, y0, x1, y1, ...]");
            for (size_t k = 0; k < Tree::size(xy); ++k) {
                if (!Tree::number(Tree::at(xy, k))) f.fail("xy", "[x0, y0, x1, y1, ...]");
                t.xy.push_back(f.number_of(Tree::at(xy, k), "xy"));
            }
        }
        file.scene.trails.push_back(std::move(t));
    }
    const auto labels = list<Tree>(root, "labels", name);
    for (size_t i = 0; i < length<Tree>(labels); ++i) {
        const F f(Tree::at(labels, i), name, "labels", i, {"x", "y", "size", "text", "color", "background"});
        const OverlayLabel d;
        std::string text = f.text("text");
        file.scene.labels.push_back({f.required("x"), f.required("y"), f.number("size", d.size), std::move(text),
                                     f.color("color", d.color), f.color("background", d.background)});
    }
    return file;
}

}  // namespace tvlm
