#include "apps/args.h"

#include <cstdint>
#include <cstdlib>
#include <sstream>

#include "engine/error.h"

namespace tvlm {

Args::Args(int argc, char** argv, int first, const std::set<std::string>& options, const std::set<std::string>& flags) {
    for (int i = first; i < argc; ++i) {
        std::string a = argv[i];
        if (a.rfind("--", 0) != 0 || a == "--") {
            positionals_.push_back(a);
            continue;
        }
        std::string name = a.substr(2), value;
        const size_t eq = name.find('=');
        const bool inline_value = eq != std::string::npos;
        if (inline_value) {
            value = name.substr(eq + 1);
            name = name.substr(0, eq);
        }
        if (flags.count(name)) {
            if (inline_value) throw Error("--" + name + " is a flag and takes no value: write --" + name);
            flags_.insert(name);
        } else if (options.count(name)) {
            if (!inline_value) {
                if (i + 1 >= argc) throw Error("option --" + name + " needs a value");
                value = argv[++i];
            }
            options_[name] = value;
        } else {
            throw Error("unknown option --" + name + " (see --help)");
        }
    }
}

std::optional<std::string> Args::option(const std::string& name) const {
    auto it = options_.find(name);
    return it == options_.end() ? std::nullopt : std::optional<std::string>(it->second);
}

std::string Args::option_or(const std::string& name, const std::string& fallback) const {
    return option(name).value_or(fallback);
}

std::optional<uint32_t> Args::uint_option(const std::string& name) const {
    const auto text = option(name);
    if (!text) return std::nullopt;
    size_t used = 0;
    unsigned long value = 0;
    try {
        value = std::stoul(*text, &used);
    } catch (const std::exception&) { used = 0; }
    if (used != text->size() || text->empty() || (*text)[0] == '-' || value > UINT32_MAX)
        throw Error("--" + name + " expects a non-negative integer, not '" + *text + "'");
    return static_cast<uint32_t>(value);
}

double parse_number(const std::string& text, const std::string& what) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || *end != '\0') throw Error(what + " expects a number, got '" + text + "'");
    return v;
}

std::vector<Fixation> parse_fixations(const std::string& text, const std::string& what) {
    std::vector<Fixation> fixations;
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ';');) {
        const size_t comma = item.find(',');
        if (comma == std::string::npos) throw Error(what + " expects x,y pairs separated by ';', got '" + item + "'");
        fixations.push_back({parse_number(item.substr(0, comma), what), parse_number(item.substr(comma + 1), what)});
    }
    if (fixations.empty()) throw Error(what + " expects at least one x,y pair");
    return fixations;
}

}  // namespace tvlm
