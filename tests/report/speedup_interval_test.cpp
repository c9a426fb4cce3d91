// The speedup's bootstrap interval, the `uncertain` verdict it leads to, and
// the busy-machine warning, on hand-made repeats worked out by hand.

#include <gtest/gtest.h>

#include "report/comparison.hpp"
#include "report/judgement.hpp"
#include "report/noise_warning.hpp"
#include "report/run_report.hpp"
#include "report/speedup_interval.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace speedup_interval_test {
namespace {

using testing::compute_span;
using testing::run_result;
using testing::single_plan;

TEST(SpeedupInterval, NeedsThreeRepeatsOnEachSide) {
  EXPECT_FALSE(speedup_interval({10, 10}, {5, 5, 5}).has_value());
  EXPECT_FALSE(speedup_interval({10, 10, 10}, {5}).has_value());
  EXPECT_TRUE(speedup_interval({10, 10, 10}, {5, 5, 5}).has_value());
}

TEST(SpeedupInterval, SteadyRepeatsGiveThePointItself) {
  const auto interval = speedup_interval({10, 10, 10}, {4, 4, 4, 4});
  ASSERT_TRUE(interval);
  EXPECT_DOUBLE_EQ(interval->low, 2.5);
  EXPECT_DOUBLE_EQ(interval->high, 2.5);
}

TEST(SpeedupInterval, SpansTheMediansTheResamplesCanReach) {
  // Run repeats {4, 5, 5, 5, 6}: a resample's median is 4 when 3 or more of
  // its 5 draws are 4, P = Σ_{k>=3} C(5,k) 0.2^k 0.8^(5-k) = 5.8%, and 6 just
  // as often: both beyond 2.5%, so the interval runs from 10/6 to 10/4.
  const auto interval = speedup_interval({10, 10, 10, 10, 10}, {4, 5, 5, 5, 6});
  ASSERT_TRUE(interval);
  EXPECT_DOUBLE_EQ(interval->low, 10.0 / 6);
  EXPECT_DOUBLE_EQ(interval->high, 10.0 / 4);
  // A fixed seed: the same repeats give the same interval.
  const auto again = speedup_interval({10, 10, 10, 10, 10}, {4, 5, 5, 5, 6});
  EXPECT_EQ(again->low, interval->low);
  EXPECT_EQ(again->high, interval->high);
}

/// A one-op run of `flops` on device 0 with these makespans (us), one timeline per repeat.
RunSummary measured(std::shared_ptr<const Plan> plan, const std::vector<double>& makespans_us) {
  std::vector<Timeline> timelines;
  for (double us : makespans_us) timelines.push_back(Timeline{{compute_span(0, 0, 0, us)}});
  return summarize(*plan, run_result(std::move(timelines)));
}

TEST(SpeedupInterval, AnIntervalAcrossAThresholdMakesTheVerdictUncertain) {
  // Baseline 400 us steady; the split's repeats {360, 380, 400, 420, 440}:
  // median 400, speedup 1.0 (even), but a resample's median reaches 360 and
  // 440 (each with P 5.8%), so the interval [400/440, 400/360] = [0.91, 1.11]
  // holds wins and losses alike.
  const RunSummary baseline = measured(single_plan(400), {400, 400, 400, 400, 400});
  testing::HandPlan hand("horizontal", 2);
  hand.compute(0, 1, {hand.input(0)}, 400);
  hand.set_memory({1000, 1000});
  const RunSummary split = measured(hand.build(), {360, 380, 400, 420, 440});
  const Judgement j = judge(split, &baseline);
  ASSERT_TRUE(j.speedup_interval);
  EXPECT_DOUBLE_EQ(j.speedup_interval->low, 400.0 / 440);
  EXPECT_DOUBLE_EQ(j.speedup_interval->high, 400.0 / 360);
  EXPECT_DOUBLE_EQ(*j.speedup, 1.0);
  EXPECT_EQ(j.verdict, Verdict::kUncertain);
  EXPECT_EQ(j.decider, Decider::kUncertain);
  EXPECT_EQ(j.reason.rfind("the speedup's 95% interval, 0.91x to 1.11x over 5 and 5 repeats, straddles the 1.05x "
                           "win threshold",
                           0),
            0u)
      << j.reason;

  // Steady repeats at the same median: even, as before.
  const RunSummary steady = measured(hand.build(), {400, 400, 400, 400, 400});
  const Judgement k = judge(steady, &baseline);
  EXPECT_EQ(k.verdict, Verdict::kEven);
  EXPECT_DOUBLE_EQ(k.speedup_interval->low, 1.0);
}

TEST(NoiseWarning, NamesTheRunsWhoseRepeatsVariedOverTenPercent) {
  // {360, 380, 400, 420, 440}: mean 400, sample standard deviation
  // sqrt((1600 + 400 + 0 + 400 + 1600) / 4) = 31.6, 7.9%: stable.
  // {300, 400, 500}: mean 400, deviation 100, 25%: unstable.
  ComparisonBuilder builder(ReportContext{});
  std::vector<Timeline> steady;
  for (double us : {360, 380, 400, 420, 440}) steady.push_back(Timeline{{compute_span(0, 0, 0, us)}});
  builder.add(single_plan(400), run_result(steady));
  EXPECT_FALSE(noise_warning(std::move(builder).build()).has_value());

  ComparisonBuilder busy(ReportContext{});
  std::vector<Timeline> noisy;
  for (double us : {300, 400, 500}) noisy.push_back(Timeline{{compute_span(0, 0, 0, us)}});
  busy.add(single_plan(400), run_result(noisy));
  const auto warning = noise_warning(std::move(busy).build());
  ASSERT_TRUE(warning);
  EXPECT_EQ(warning->rfind("warning: the repeats of single (25%) varied by more than 10% of their mean", 0), 0u)
      << *warning;

  // Simulated runs are never noisy.
  ComparisonBuilder simulated(ReportContext{});
  simulated.add(single_plan(400), run_result(noisy, "sim", "machine"));
  EXPECT_FALSE(noise_warning(std::move(simulated).build()).has_value());
}

TEST(NoiseWarning, NamesAnyMeasuredRunsWorstFirst) {
  // validate's cases and collective's sizes: {300, 400, 500} deviates by 100/400 = 25%, {8, 10, 12} by 20%.
  const auto warning = noise_warning({{"4096 B", {10, 10, 10}}, {"8192 B", {8, 10, 12}}, {"1 B", {300, 400, 500}},
                                      {"2 B", {1, 9}}},
                                     "close other programs");
  ASSERT_TRUE(warning);
  EXPECT_EQ(*warning,
            "warning: the repeats of 1 B (25%), 8192 B (20%) varied by more than 10% of their mean (standard "
            "deviation), so this machine looks busy and close other programs");
  EXPECT_FALSE(noise_warning({{"4096 B", {10, 10, 10}}}, "close other programs").has_value());
}

}  // namespace
}  // namespace speedup_interval_test
}  // namespace splitscope
