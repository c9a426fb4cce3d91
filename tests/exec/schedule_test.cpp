// Plan::schedule is authoritative (plan/plan_walk.hpp): a plan whose
// last stage runs its micro-batches in reverse computes the same output on
// the cpu backend, and the cpu executor and the simulator both run each
// device's ops in the order the schedule gives, not the order of Plan::ops.
// A schedule that runs an op before its inputs can exist is refused.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <stdexcept>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/output_compare.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "plan/plan_walk.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"
#include "timeline_checks.hpp"

namespace splitscope {
namespace schedule_test {
namespace {

RunOptions one_run() {
  RunOptions options;
  options.warmup = 0;
  options.repeats = 1;
  options.seed = 5;
  return options;
}

Plan pipeline_plan() {
  return make_partitioner("pipeline")->partition(testing_support::zoo_graph("mlp-small"), {2, 3, nullptr});
}

/// Device `device`'s schedule with its micro-batches in reverse (each
/// micro-batch's ops keep their order).
void reverse_microbatches(Plan& plan, int device) {
  auto& schedule = plan.schedule.at(static_cast<size_t>(device));
  std::stable_sort(schedule.begin(), schedule.end(),
                   [&](int a, int b) { return plan.op(a).microbatch > plan.op(b).microbatch; });
}

/// Op ids of `device`'s compute spans, in the order they started.
std::vector<int> compute_order(const Timeline& timeline, int device) {
  std::vector<const Span*> spans;
  for (const Span& span : timeline.spans) {
    if (span.device == device && span.lane == Lane::kCompute) spans.push_back(&span);
  }
  std::stable_sort(spans.begin(), spans.end(), [](const Span* a, const Span* b) { return a->start_us < b->start_us; });
  std::vector<int> order;
  for (const Span* span : spans) order.push_back(span->op);
  return order;
}

TEST(Schedule, ARunFollowsTheScheduleNotTheOpOrder) {
  const Plan original = pipeline_plan();
  Plan reordered = original;
  reverse_microbatches(reordered, 1);
  ASSERT_NE(reordered.schedule[1], original.schedule[1]);
  EXPECT_EQ(reordered.op(reordered.schedule[1].front()).microbatch, 2);
  ASSERT_NO_THROW(check(reordered));

  const RunResult before = CpuExecutor().run(original, one_run());
  const RunResult after = CpuExecutor().run(reordered, one_run());
  const OutputComparison comparison = compare_outputs(after.output, before.output);
  EXPECT_EQ(comparison.max_relative_error, 0.0) << comparison.describe();

  const Timeline predicted = simulate(reordered, load_machine("h100-nvlink-8"));
  for (const Timeline* timeline : {&after.timelines.at(0), &predicted}) {
    testing_support::expect_timeline_follows_plan(reordered, *timeline);
    EXPECT_EQ(compute_order(*timeline, 1), reordered.schedule[1]);
    EXPECT_EQ(compute_order(*timeline, 0), reordered.schedule[0]);
  }
}

TEST(Schedule, AnOrderAgainstTheDataFlowIsRefusedNamingTheOp) {
  Plan plan = pipeline_plan();
  auto& schedule = plan.schedule[0];
  std::reverse(schedule.begin(), schedule.end());  // the last layer of the last micro-batch first
  const auto problems = plan_problems(plan);
  ASSERT_EQ(problems.size(), 1u);
  EXPECT_NE(problems[0].find("the schedule of device 0 runs op"), std::string::npos) << problems[0];
  EXPECT_NE(problems[0].find("before the data it needs can exist"), std::string::npos) << problems[0];
  EXPECT_THROW(CpuExecutor().run(plan, one_run()), std::logic_error);
  EXPECT_THROW(simulate(plan, load_machine("h100-nvlink-8")), std::logic_error);
}

TEST(Schedule, EveryComputeOpOnceOnItsOwnDevice) {
  Plan missing = pipeline_plan();
  missing.schedule[1].pop_back();
  EXPECT_THROW(schedule_predecessors(missing), std::logic_error);
  Plan twice = pipeline_plan();
  twice.schedule[1].push_back(twice.schedule[1].front());
  EXPECT_THROW(schedule_predecessors(twice), std::logic_error);
  Plan elsewhere = pipeline_plan();
  elsewhere.schedule[0].push_back(elsewhere.schedule[1].back());
  elsewhere.schedule[1].pop_back();
  EXPECT_THROW(schedule_predecessors(elsewhere), std::logic_error);
}

}  // namespace
}  // namespace schedule_test
}  // namespace splitscope
