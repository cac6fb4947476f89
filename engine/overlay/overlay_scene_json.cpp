#include "engine/overlay/overlay_scene_json.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "engine/error.h"
#include "engine/overlay/overlay_scene_reader.h"

namespace tvlm {

namespace {

using nlohmann::json;

// nlohmann/json's tree for read_overlay_scene_tree.
struct JsonTree {
    using Node = const json*;
    using Key = const char*;
    static bool valid(Node n) { return n != nullptr; }
    static bool is_object(Node n) { return n->is_object(); }
    static bool is_array(Node n) { return n->is_array(); }
    template <class F>
    static void for_each_key(Node n, F f) {
        for (const auto& [key, value] : n->items()) f(std::string_view(key));
    }
    static size_t key_count(Node n) { return n->size(); }
    static Key key(const char* name) { return name; }
    static Node find(Node n, Key key) {
        const auto it = n->find(key);
        return it == n->end() ? nullptr : &*it;
    }
    static size_t size(Node n) { return n->size(); }
    static Node at(Node n, size_t i) { return &(*n)[i]; }
    static std::optional<double> number(Node n) {
        return n->is_number() ? std::optional<double>(n->get<double>()) : std::nullopt;
    }
    static std::optional<int64_t> integer(Node n) {
        if (n->is_number_unsigned())
            return n->get<uint64_t>() > uint64_t(std::numeric_limits<int64_t>::max())
                       ? std::nullopt
                       : std::optional<int64_t>(int64_t(n->get<uint64_t>()));
        return n->is_number_integer() ? std::optional<int64_t>(n->get<int64_t>()) : std::nullopt;
    }
    static std::optional<uint64_t> unsigned_integer(Node n) {
        return n->is_number_unsigned() ? std::optional<uint64_t>(n->get<uint64_t>()) : std::nullopt;
    }
    static std::optional<bool> boolean(Node n) {
        return n->is_boolean() ? std::optional<bool>(n->get<bool>()) : std::nullopt;
    }
    static std::optional<std::string> string(Node n) {
        return n->is_string() ? std::optional<std::string>(n->get<std::string>()) : std::nullopt;
    }
};

}  // namespace

OverlaySceneFile parse_overlay_scene(const std::string& text, const std::string& name) {
    json root;
    try {
        root = json::parse(text);
    } catch (const json::out_of_range& e) {  // a number beyond double's range, such as 1e999
        throw Error(name + " holds a number out of range: " + e.what() + " (pixels are at most 3.4e38 in magnitude)");
    } catch (const json::exception& e) { throw Error(name + " is not valid JSON: " + e.what()); }
    return read_overlay_scene_tree<JsonTree>(&root, name);
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
