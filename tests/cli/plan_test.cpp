// End to end: `splitscope plan` for every zoo network and strategy.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace plan_test {
namespace {

TEST(PlanCommand, JsonForEveryZooNetworkAndStrategy) {
  for (const char* network : {"mlp", "cnn", "lstm", "gru", "mlp-small", "cnn-small", "lstm-small", "gru-small"}) {
    for (const char* strategy : {"single", "horizontal", "pipeline", "vertical", "tensor"}) {
      const int devices = std::string(strategy) == "single" ? 1 : 2;
      const std::string microbatches = std::string(strategy) == "pipeline" ? " --microbatches 2" : "";
      const CommandResult result = run_splitscope(std::string("plan ") + network + " --strategy " + strategy +
                                                  " --devices " + std::to_string(devices) + microbatches + " --json");
      ASSERT_EQ(result.exit_code, 0) << network << " " << strategy << ": " << result.err;
      const auto doc = nlohmann::json::parse(result.out);
      EXPECT_EQ(doc["strategy"], strategy);
      EXPECT_EQ(doc["devices"], devices);
      ASSERT_EQ(doc["per_device"].size(), static_cast<size_t>(devices));
      for (const auto& device : doc["per_device"]) {
        for (const char* field : {"id", "ops", "flops", "memory_peak_bytes"}) EXPECT_TRUE(device.contains(field));
      }
      for (const char* field : {"count", "bytes"}) {
        EXPECT_TRUE(doc["transfers"].contains(field));
        EXPECT_TRUE(doc["collectives"].contains(field));
      }
      if (std::string(strategy) == "pipeline") {
        // (N-1)/(M+N-1) = 1/3
        EXPECT_NEAR(doc["ideal_bubble"].get<double>(), 1.0 / 3.0, 1e-12);
      } else {
        EXPECT_TRUE(doc["ideal_bubble"].is_null());
      }
    }
  }
}

TEST(PlanCommand, TextShowsDevicesAndMovement) {
  const CommandResult result = run_splitscope("plan cnn-small --strategy vertical --devices 2");
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("device 0 runs:"), std::string::npos);
  EXPECT_NE(result.out.find("all-gather"), std::string::npos);
}

TEST(PlanCommand, ImpossibleOptionsAreExitTwo) {
  const CommandResult too_many = run_splitscope("plan mlp-small --strategy vertical --devices 11");
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_NE(too_many.err.find("at most 10 devices"), std::string::npos) << too_many.err;
  const CommandResult unknown = run_splitscope("plan mlp-small --strategy diagonal --devices 2");
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown strategy 'diagonal'"), std::string::npos) << unknown.err;
  const CommandResult microbatches = run_splitscope("plan mlp-small --strategy vertical --devices 2 --microbatches 2");
  EXPECT_EQ(microbatches.exit_code, 2);
  EXPECT_NE(microbatches.err.find("only the pipeline strategy"), std::string::npos) << microbatches.err;
}

}  // namespace
}  // namespace plan_test
}  // namespace splitscope::testing
