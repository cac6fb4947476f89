#pragma once
// The one error type of texturevlm: environment and input failures (no device, missing
// package, bad file, bad argument). Messages say what was wrong, what was expected and
// what to do. Programmer errors assert instead. Header-only and API-free, so the CUDA
// code throws the same type without knowing Vulkan.
#include <stdexcept>
#include <string>

namespace tvlm {

class Error : public std::runtime_error {
public:
    explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace tvlm
