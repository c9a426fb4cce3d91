// `splitscope prices`: every op slice of the networks asked for, priced by
// the datasheet rules and by the machine's model, and its refusals.

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace prices_test {
namespace {

// A GPU preset's file with `"achieved_rates": "none"` added: the datasheet rules alone.
std::string datasheet_only_h100() {
  const std::string dir = fresh_temp_dir("prices-datasheet-only");
  auto machine = nlohmann::json::parse(read_text_file(std::string(std::getenv("SPLITSCOPE_SOURCE_ROOT")) + "/models/machines/h100-nvlink-8.json"));
  machine["device"]["achieved_rates"] = "none";
  const std::string path = dir + "/h100-datasheet.json";
  std::ofstream(path) << machine.dump();
  return path;
}

TEST(Prices, GivesEachSliceItsDatasheetPriceAndItsBody) {
  const CommandResult priced = run_splitscope("prices --machine " + datasheet_only_h100() + " mlp-small");
  ASSERT_EQ(priced.exit_code, 0) << priced.err;
  const auto document = nlohmann::json::parse(priced.out);
  EXPECT_EQ(document["schema"], "splitscope.prices/1");
  EXPECT_EQ(document["achieved_rates"], "none");
  ASSERT_FALSE(document["ops"].empty());
  for (const auto& op : document["ops"]) {
    SCOPED_TRACE(op["signature"].get<std::string>());
    // Rules turned off: the model is the datasheet rules. The body is the same rules with no launch overhead:
    // at least one 5 us launch less (a split-K product may split differently when its reduction's launch is free,
    // so not always a whole number of launches less).
    EXPECT_FALSE(op["learned"].get<bool>());
    EXPECT_DOUBLE_EQ(op["modelled_us"].get<double>(), op["datasheet_us"].get<double>());
    if (op["body_us"].get<double>() > 0) {
      EXPECT_GE(op["datasheet_us"].get<double>() - op["body_us"].get<double>(), 5 - 1e-9);
    }
  }
}

// A GPU preset names no rules, so it takes the learned ones: each covered op costs its family's rule on the
// same body as the datasheet-only machine's.
TEST(Prices, AGpuPresetIsPricedByTheLearnedRulesByDefault) {
  const CommandResult priced = run_splitscope("prices --machine h100-nvlink-8 mlp-small");
  ASSERT_EQ(priced.exit_code, 0) << priced.err;
  const auto document = nlohmann::json::parse(priced.out);
  EXPECT_EQ(document["achieved_rates"], "achieved-rates");
  const CommandResult datasheet = run_splitscope("prices --machine " + datasheet_only_h100() + " mlp-small");
  ASSERT_EQ(datasheet.exit_code, 0) << datasheet.err;
  const auto datasheet_ops = nlohmann::json::parse(datasheet.out)["ops"];
  ASSERT_EQ(document["ops"].size(), datasheet_ops.size());
  int learned = 0;
  for (size_t i = 0; i < datasheet_ops.size(); ++i) {
    const auto& op = document["ops"][i];
    SCOPED_TRACE(op["signature"].get<std::string>());
    EXPECT_DOUBLE_EQ(op["body_us"].get<double>(), datasheet_ops[i]["body_us"].get<double>());
    if (op["families"][0] == "product.fma.skinny") {
      EXPECT_TRUE(op["learned"].get<bool>());
      // The rules' fixed cost alone (14 us for skinny products) is more than the datasheet's 5 us launch.
      EXPECT_GT(op["modelled_us"].get<double>(), op["datasheet_us"].get<double>());
      ++learned;
    }
  }
  EXPECT_GT(learned, 0);
}

TEST(Prices, AnUnknownMachineIsExitTwo) {
  const CommandResult priced = run_splitscope("prices --machine no-such-machine mlp-small");
  EXPECT_EQ(priced.exit_code, 2);
  EXPECT_NE(priced.err.find("no-such-machine"), std::string::npos) << priced.err;
  EXPECT_TRUE(priced.out.empty());
}

}  // namespace
}  // namespace prices_test
}  // namespace splitscope::testing
