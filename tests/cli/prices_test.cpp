// `splitscope prices`: every op slice of the networks asked for, priced by
// the datasheet rules and by the machine's model, and its refusals.

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cli_test_support.hpp"

namespace splitscope::testing {
namespace prices_test {
namespace {

TEST(Prices, GivesEachSliceItsDatasheetPriceAndItsBody) {
  const CommandResult priced = run_splitscope("prices --machine h100-nvlink-8 mlp-small");
  ASSERT_EQ(priced.exit_code, 0) << priced.err;
  const auto document = nlohmann::json::parse(priced.out);
  EXPECT_EQ(document["schema"], "splitscope.prices/1");
  EXPECT_EQ(document["achieved_rates"], "");
  ASSERT_FALSE(document["ops"].empty());
  for (const auto& op : document["ops"]) {
    SCOPED_TRACE(op["signature"].get<std::string>());
    // No rules named: the model is the datasheet rules. The body is the same rules with no launch overhead:
    // at least one 5 us launch less (a split-K product may split differently when its reduction's launch is free,
    // so not always a whole number of launches less).
    EXPECT_FALSE(op["learned"].get<bool>());
    EXPECT_DOUBLE_EQ(op["modelled_us"].get<double>(), op["datasheet_us"].get<double>());
    if (op["body_us"].get<double>() > 0) {
      EXPECT_GE(op["datasheet_us"].get<double>() - op["body_us"].get<double>(), 5 - 1e-9);
    }
  }
}

TEST(Prices, OnALearnedPresetTheRulesPriceTheFamiliesTheyCover) {
  const CommandResult priced = run_splitscope("prices --machine h100-nvlink-8-learned mlp-small");
  ASSERT_EQ(priced.exit_code, 0) << priced.err;
  const auto document = nlohmann::json::parse(priced.out);
  EXPECT_EQ(document["achieved_rates"], "achieved-rates");
  int learned = 0;
  for (const auto& op : document["ops"]) {
    if (op["families"][0] == "product.fma.skinny") {
      EXPECT_TRUE(op["learned"].get<bool>());
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
