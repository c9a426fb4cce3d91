// ComparisonBuilder: grouping by backend and machine, baselines per group,
// best-first order, runs kept only as baselines.

#include <gtest/gtest.h>

#include "report/comparison.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace comparison_test {
namespace {

using testing::sample_comparison;

TEST(Comparison, GroupsRunsAndOrdersThemBestFirst) {
  const Comparison comparison = sample_comparison();
  ASSERT_EQ(comparison.groups.size(), 2u);
  const RunGroup& cpu = comparison.primary();
  EXPECT_EQ(cpu.backend, "cpu");
  EXPECT_TRUE(cpu.measured);
  ASSERT_EQ(cpu.runs.size(), 3u);
  // single 400 us (median of 390, 400, 420) < horizontal 450 us; the pipeline does not fit: last.
  EXPECT_EQ(cpu.runs[0].summary.strategy, "single");
  EXPECT_EQ(cpu.runs[1].summary.strategy, "horizontal");
  EXPECT_EQ(cpu.runs[2].summary.strategy, "pipeline");
  EXPECT_EQ(cpu.best, "single");
  // Each run is judged against its own group's single run.
  EXPECT_DOUBLE_EQ(*cpu.runs[1].judgement.speedup, 400.0 / 450);
  EXPECT_EQ(cpu.runs[2].judgement.verdict, Verdict::kLoses);
  EXPECT_EQ(cpu.runs[2].judgement.decider, Decider::kDoesNotFit);

  const RunGroup& sim = comparison.groups[1];
  EXPECT_EQ(sim.backend, "sim");
  EXPECT_EQ(sim.machine, "sim-machine");
  EXPECT_FALSE(sim.measured);
  ASSERT_EQ(sim.runs.size(), 2u);
  // 22.5 us beats 40 us here: a speedup of 40 / 22.5 against the simulated single run.
  EXPECT_EQ(sim.best, "horizontal");
  EXPECT_DOUBLE_EQ(*sim.runs[0].judgement.speedup, 40.0 / 22.5);
  EXPECT_EQ(comparison.all_runs().size(), 5u);
}

TEST(Comparison, ABaselineOnlyRunJudgesButIsNotShown) {
  ComparisonBuilder builder(ReportContext{});
  builder.add(testing::two_stage_plan(), testing::run_result({testing::two_stage_timeline()}));
  builder.add(testing::single_plan(400), testing::single_result(400), /*shown=*/false);
  const Comparison comparison = std::move(builder).build();
  ASSERT_EQ(comparison.primary().runs.size(), 1u);
  EXPECT_EQ(comparison.primary().runs[0].summary.strategy, "horizontal");
  EXPECT_EQ(comparison.primary().runs[0].judgement.verdict, Verdict::kLoses);
  ASSERT_TRUE(comparison.primary().baseline.has_value());
  EXPECT_DOUBLE_EQ(comparison.primary().baseline->makespan->median_ms, 0.4);
}

TEST(Comparison, NoSingleRunMeansNoVerdict) {
  ComparisonBuilder builder(ReportContext{});
  builder.add(testing::two_stage_plan(), testing::run_result({testing::two_stage_timeline()}));
  const Comparison comparison = std::move(builder).build();
  EXPECT_FALSE(comparison.primary().runs[0].judgement.verdict.has_value());
  EXPECT_EQ(comparison.primary().best, "horizontal");
}

}  // namespace
}  // namespace comparison_test
}  // namespace splitscope
