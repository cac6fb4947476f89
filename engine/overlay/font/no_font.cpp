// Built where stb_truetype or the font was not found: no label font.
#include "engine/overlay/overlay_font.h"

namespace tvlm {

const OverlayFont* overlay_font() { return nullptr; }

}  // namespace tvlm
