#pragma once
// One validated Vulkan context per test process (lavapipe in CI). Every test case that
// uses it fails if the validation layers reported anything during the case.
#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "engine/core/context.h"

namespace tvlm::test {

inline Context& shared_context() {
    static std::unique_ptr<Context> context = [] {
        ContextDesc desc;
        desc.validation = true;  // always on in tests
        return std::make_unique<Context>(desc);
    }();
    return *context;
}

struct VulkanFixture {
    Context& context = shared_context();
    VulkanFixture() { context.validation_log().clear(); }
    ~VulkanFixture() {
        const auto messages = context.validation_log().messages();
        for (const std::string& m : messages) FAIL_CHECK(m);
        CHECK_MESSAGE(messages.empty(), "Vulkan validation reported messages during this test");
    }
};

}  // namespace tvlm::test
