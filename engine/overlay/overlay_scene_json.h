#pragma once
// An overlay scene as JSON (schema in docs/cli.md, "The scene schema"; tvlm overlay's file and
// texturevlm.overlay's dicts), read with nlohmann/json into an OverlayScene and the points'
// track ids for the KNN links.
#include <cstdint>
#include <string>
#include <vector>

#include "engine/overlay/overlay_scene.h"

namespace tvlm {

struct OverlaySceneFile {
    OverlayScene scene;
    std::vector<uint64_t> point_tracks;  // one per point: its "track", else its index
};

// The largest scene file read (a million labelled boxes take about 150 MiB of JSON).
inline constexpr uintmax_t kMaxSceneFileBytes = uintmax_t{1} << 30;

// Throws Error naming the file and the JSON path of what is wrong: a missing file, one that
// is not a regular file or is over kMaxSceneFileBytes, malformed JSON, numbers out of a
// float's range, unknown keys, wrong types, colours that are not 3 or 4 bytes.
OverlaySceneFile read_overlay_scene(const std::string& path);
OverlaySceneFile parse_overlay_scene(const std::string& text, const std::string& name);

}  // namespace tvlm
