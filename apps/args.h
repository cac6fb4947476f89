#pragma once
// A small command-line parser: positionals, --name value options and --flags.
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/sampling/patch_layouts.h"

namespace tvlm {

// `text` as a number; throws Error naming `what` (the option) otherwise.
double parse_number(const std::string& text, const std::string& what);
// "x,y" pairs separated by ';' (normalized coordinates), at least one; Error otherwise.
std::vector<Fixation> parse_fixations(const std::string& text, const std::string& what = "--fixation");

class Args {
public:
    // `options` take a value, `flags` do not; anything else starting with -- is an error.
    Args(int argc, char** argv, int first, const std::set<std::string>& options, const std::set<std::string>& flags);

    const std::vector<std::string>& positionals() const { return positionals_; }
    bool flag(const std::string& name) const { return flags_.count(name) != 0; }
    std::optional<std::string> option(const std::string& name) const;
    std::string option_or(const std::string& name, const std::string& fallback) const;
    // Parses an unsigned integer option; throws Error naming the option on bad input.
    std::optional<uint32_t> uint_option(const std::string& name) const;

private:
    std::vector<std::string> positionals_;
    std::map<std::string, std::string> options_;
    std::set<std::string> flags_;
};

}  // namespace tvlm
