#pragma once
// The overlay scene schema (docs/cli.md, "The scene schema") read from any tree of objects,
// lists, numbers, booleans and strings: JSON text (overlay_scene_json.cpp) and Python dicts
// (python/bindings/overlay.cpp) share this one reader, so both accept and refuse the same
// scenes with the same messages. Errors name the path of what is wrong
// ("the scene: boxes[3].stroke: expected ...").
//
// Tree: a type with a cheap, copyable `Node` and `Key` and static functions
//   bool valid(Node)                    a node was found
//   bool is_object(Node), is_array(Node)
//   size_t key_count(Node object)        how many keys the object has
//   template <class F> void for_each_key(Node object, F f)   f(std::string_view key)
//   Key key(const char* name)            a schema key, made once per name (kept for the process)
//   Node find(Node object, Key key)      invalid where absent
//   size_t size(Node array);  Node at(Node array, size_t i)
//   std::optional<double> number(Node)      numbers only (not booleans)
//   std::optional<int64_t> integer(Node)    whole numbers only
//   std::optional<uint64_t> unsigned_integer(Node)   whole numbers 0 .. 2^64 - 1
//   std::optional<bool> boolean(Node);  std::optional<std::string> string(Node)
// and, where walking an object's items costs less than looking its keys up (Python dicts):
//   template <class F> void for_each_item(Node object, F f)   f(Key key, Node value)
//   std::string_view key_text(Key key)   the key's text (a placeholder for a key that is not text)
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <cstring>
#include <string>
#include <string_view>

#include "engine/error.h"
#include "engine/overlay/overlay_scene.h"
#include "engine/overlay/overlay_scene_json.h"

namespace tvlm {

namespace scene_reader {

// The keys of one kind of object (boxes, points, ...), made once: a lookup is then a
// hash-free find per key (Python: interned strings).
template <class Tree, size_t N>
struct Schema {
    explicit Schema(const std::array<const char*, N>& key_names) : names(key_names) {
        for (size_t i = 0; i < N; ++i) keys[i] = Tree::key(names[i]);
    }
    std::array<const char*, N> names;
    std::array<typename Tree::Key, N> keys{};
};

// One object of the scene: its fields read with their defaults, unknown keys refused. Every
// known key is looked up once; the object's keys are walked only when it has one that is
// not known (to name it). The path in messages is built only when something is wrong.
template <class Tree, size_t N>
class Fields {
public:
    using Node = typename Tree::Node;
    Fields(Node object, const std::string& name, const char* list, size_t index, const Schema<Tree, N>& schema)
        : object_(object), name_(name), list_(list), index_(index), names_(schema.names) {
        if (!Tree::is_object(object)) fail("", "an object");
        if constexpr (requires(Node n) { Tree::for_each_item(n, [](typename Tree::Key, Node) {}); }) {
            read_items(schema);
            return;
        }
        size_t found = 0;
        for (size_t i = 0; i < N; ++i) {
            nodes_[i] = Tree::find(object, schema.keys[i]);
            found += Tree::valid(nodes_[i]) ? 1u : 0u;
        }
        if (found == Tree::key_count(object)) return;
        Tree::for_each_key(object, [&](std::string_view key) {
            if (std::find(names_.begin(), names_.end(), key) == names_.end())
                throw Error(where() + ": unknown key \"" + std::string(key) + "\"");
        });
    }
    // The node of `key`, one of the schema's names (invalid where absent). Fields are mostly
    // read in the schema's order, so the search starts after the last one found; the names
    // are the same literals, so pointers are compared before any text.
    Node find(const char* key) const {
        for (size_t k = 0; k < N; ++k) {
            const size_t i = (next_ + k) % N;
            if (names_[i] == key) return found(i);
        }
        for (size_t i = 0; i < N; ++i)
            if (std::strcmp(names_[i], key) == 0) return found(i);
        return Node{};
    }
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
        const Node v = find(key);
        if (!Tree::valid(v)) throw Error(where() + ": \"" + key + "\" is missing");
        return number_of(v, key);
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
        if (!Tree::is_array(v)) fail(key, expected);
        const size_t n = Tree::size(v);
        if (n != 3 && n != 4) fail(key, expected);
        uint8_t c[4] = {0, 0, 0, 255};
        for (size_t i = 0; i < n; ++i) {
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
    Node found(size_t i) const {
        next_ = i + 1;
        return nodes_[i];
    }
    // One walk over the object's items: each key matched to the schema's by identity (Python
    // keys written in source are the interned ones), else by text; unknown keys refused.
    void read_items(const Schema<Tree, N>& schema) {
        size_t next = 0;  // items usually come in the schema's order
        Tree::for_each_item(object_, [&](typename Tree::Key key, Node value) {
            size_t i = N;
            for (size_t k = 0; k < N && i == N; ++k)
                if (schema.keys[(next + k) % N] == key) i = (next + k) % N;
            if (i == N) {
                const std::string_view text = Tree::key_text(key);
                for (size_t k = 0; k < N && i == N; ++k)
                    if (text == names_[k]) i = k;
                if (i == N) throw Error(where() + ": unknown key \"" + std::string(text) + "\"");
            }
            nodes_[i] = value;
            next = i + 1;
        });
    }

    Node object_;
    const std::string& name_;
    const char* list_;
    size_t index_;
    const std::array<const char*, N>& names_;
    std::array<Node, N> nodes_{};
    mutable size_t next_ = 0;  // where find() starts
};

// The scene's list `i` of `lists` (invalid where the scene has none).
template <class Tree, size_t N>
typename Tree::Node list(typename Tree::Node root, const Schema<Tree, N>& lists, size_t i, const std::string& name) {
    const typename Tree::Node v = Tree::find(root, lists.keys[i]);
    if (Tree::valid(v) && !Tree::is_array(v)) throw Error(name + ": \"" + lists.names[i] + "\" must be a list");
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
    // The schema's keys, made once per tree type.
    static const Schema<Tree, 6> lists({"boxes", "points", "lines", "curves", "trails", "labels"});
    static const Schema<Tree, 8> box_keys({"x", "y", "width", "height", "radius", "stroke_width", "stroke", "fill"});
    static const Schema<Tree, 5> point_keys({"x", "y", "radius", "color", "track"});
    static const Schema<Tree, 7> line_keys({"x0", "y0", "x1", "y1", "width", "round_caps", "color"});
    static const Schema<Tree, 6> curve_keys({"x0", "y0", "x1", "y1", "width", "color"});
    static const Schema<Tree, 3> trail_keys({"xy", "width", "color"});
    static const Schema<Tree, 6> label_keys({"x", "y", "size", "text", "color", "background"});
    if (!Tree::is_object(root)) throw Error(name + ": the scene is an object with boxes, points, lines and curves");
    Tree::for_each_key(root, [&](std::string_view key) {
        if (key != "boxes" && key != "points" && key != "lines" && key != "curves" && key != "trails" &&
            key != "labels")
            throw Error(name + ": unknown key \"" + std::string(key) +
                        "\" (a scene has boxes, points, lines, curves, trails and labels)");
    });
    OverlaySceneFile file;
    const auto boxes = list(root, lists, 0, name);
    file.scene.boxes.reserve(length<Tree>(boxes));
    for (size_t i = 0; i < length<Tree>(boxes); ++i) {
        const Fields f(Tree::at(boxes, i), name, "boxes", i, box_keys);
        const OverlayBox d;
        file.scene.boxes.push_back({f.required("x"), f.required("y"), f.required("width"), f.required("height"),
                                    f.number("radius", d.radius), f.number("stroke_width", d.stroke_width),
                                    f.color("stroke", d.stroke), f.color("fill", d.fill)});
    }
    const auto points = list(root, lists, 1, name);
    file.scene.points.reserve(length<Tree>(points));
    file.point_tracks.reserve(length<Tree>(points));
    for (size_t i = 0; i < length<Tree>(points); ++i) {
        const Fields f(Tree::at(points, i), name, "points", i, point_keys);
        const OverlayPoint d;
        file.scene.points.push_back(
            {f.required("x"), f.required("y"), f.number("radius", d.radius), f.color("color", d.color)});
        file.point_tracks.push_back(f.track(i));
    }
    const auto lines = list(root, lists, 2, name);
    for (size_t i = 0; i < length<Tree>(lines); ++i) {
        const Fields f(Tree::at(lines, i), name, "lines", i, line_keys);
        const OverlayLine d;
        file.scene.lines.push_back({f.required("x0"), f.required("y0"), f.required("x1"), f.required("y1"),
                                    f.number("width", d.width), f.flag("round_caps", d.round_caps),
                                    f.color("color", d.color)});
    }
    const auto curves = list(root, lists, 3, name);
    for (size_t i = 0; i < length<Tree>(curves); ++i) {
        const Fields f(Tree::at(curves, i), name, "curves", i, curve_keys);
        const OverlayCurve d;
        file.scene.curves.push_back({f.required("x0"), f.required("y0"), f.required("x1"), f.required("y1"),
                                     f.number("width", d.width), f.color("color", d.color)});
    }
    const auto trails = list(root, lists, 4, name);
    for (size_t i = 0; i < length<Tree>(trails); ++i) {
        const Fields f(Tree::at(trails, i), name, "trails", i, trail_keys);
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
    const auto labels = list(root, lists, 5, name);
    file.scene.labels.reserve(length<Tree>(labels));
    for (size_t i = 0; i < length<Tree>(labels); ++i) {
        const Fields f(Tree::at(labels, i), name, "labels", i, label_keys);
        const OverlayLabel d;
        std::string text = f.text("text");
        file.scene.labels.push_back({f.required("x"), f.required("y"), f.number("size", d.size), std::move(text),
                                     f.color("color", d.color), f.color("background", d.background)});
    }
    return file;
}

}  // namespace tvlm
