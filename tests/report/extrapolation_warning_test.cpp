// The warning about predictions priced mostly outside a machine's measured
// op times: when it speaks, what it names, and when it keeps quiet.

#include <gtest/gtest.h>

#include "report/comparison.hpp"
#include "report/extrapolation_warning.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace extrapolation_warning_test {
namespace {

using testing::compute_span;
using testing::run_result;
using testing::single_plan;

/// A comparison of one run of `single` (400 µs) with `share` of its predicted compute time measured.
Comparison one_run(std::string backend, std::optional<double> share) {
  ComparisonBuilder builder(ReportContext{});
  RunResult result = run_result({Timeline{{compute_span(0, 0, 0, 400)}}}, std::move(backend), "host");
  result.info.calibrated_share = share;
  builder.add(single_plan(400), std::move(result));
  return std::move(builder).build();
}

TEST(ExtrapolationWarning, NamesPredictionsMostlyPricedOutsideTheMeasuredOpTimes) {
  const auto warning = extrapolation_warning(one_run("sim", 0.2));
  ASSERT_TRUE(warning);
  EXPECT_EQ(warning->rfind("warning: only 20% of single of the predicted compute time came from host's measured op "
                           "times",
                           0),
            0u)
      << *warning;
  EXPECT_NE(warning->find("calibrate --networks"), std::string::npos) << *warning;
}

TEST(ExtrapolationWarning, KeepsQuietFromHalfUpWithoutATableAndForMeasuredRuns) {
  EXPECT_FALSE(extrapolation_warning(one_run("sim", 0.5)).has_value());
  EXPECT_FALSE(extrapolation_warning(one_run("sim", std::nullopt)).has_value());
  EXPECT_FALSE(extrapolation_warning(one_run("cpu", 0.0)).has_value());
}

}  // namespace
}  // namespace extrapolation_warning_test
}  // namespace splitscope
