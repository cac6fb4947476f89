#pragma once
// Minimal JSON string quoting for the command line's --json outputs.
#include <cstdio>
#include <string>

namespace tvlm {

inline std::string json_quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (static_cast<unsigned char>(c) < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += c;
                }
        }
    }
    return out + "\"";
}

inline const char* json_bool(bool b) { return b ? "true" : "false"; }

}  // namespace tvlm
