// nccl-tests' collectives (partitioners/collective_plan.hpp) run by the cpu
// backend's tasks as their schedules' sends: every output holds what the
// collective promises, computed here directly from the inputs.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "exec/cpu/kernels/parallel_for.hpp"
#include "exec/cpu/plan_tasks.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "partitioners/collective_plan.hpp"
#include "plan/collective_schedule.hpp"
#include "plan/plan_check.hpp"

namespace splitscope {
namespace collective_numerics_test {
namespace {

/// plan_check's complaints about the plan's collective (a collective plan is
/// no network's plan: the network-level rules, outputs and tiling, do not apply).
std::vector<std::string> collective_problems(const Plan& plan) {
  std::vector<std::string> problems;
  const std::string kind(to_string(plan.ops.front().collective));
  for (const std::string& problem : plan_problems(plan)) {
    if (problem.find(kind) != std::string::npos) problems.push_back(problem);
  }
  return problems;
}

/// The plan of `test`, run once in task order on this thread after each
/// participant's input is given values of its own: element e of device d's
/// input is d + 1 + e / 1024 (so that a chunk landing in the wrong place, or
/// summed twice, shows).
struct CollectiveRun {
  CollectiveRun(CollectiveTest test, int devices, int64_t bytes)
      : plan(collective_plan(test, devices, bytes)), buffers(plan), weights(*plan.graph, 1, serial) {
    EXPECT_EQ(collective_problems(plan), std::vector<std::string>{});
    for (int id : plan.inputs) {
      const ChannelBlock block = buffers.block(id);
      const Value& value = plan.value(id);
      for (int64_t e = 0; e < block.floats(); ++e) {
        block.data[e] = static_cast<float>(value.device + 1) + static_cast<float>(value.channels.begin + e) / 1024.0f;
      }
    }
    PlanTasks tasks = build_plan_tasks(plan, buffers, weights);
    TaskContext context{serial};
    for (int t = 0; t < tasks.graph.size(); ++t) tasks.graph.task(t).work(context);
    staging = std::move(tasks.staging);
  }

  std::vector<float> values(int id) const {
    const ConstChannelBlock block = buffers.block(id);
    return {block.data, block.data + block.floats()};
  }
  const PlanOp& op() const { return plan.ops.front(); }

  Plan plan;
  SerialFor serial;
  ValueBuffers buffers;
  WeightStore weights;
  std::vector<std::vector<float>> staging;
};

/// Σ over devices d < n of (d + 1 + e / 1024).
float summed(int n, int64_t e) {
  return static_cast<float>(n * (n + 1) / 2) + static_cast<float>(n) * static_cast<float>(e) / 1024.0f;
}

TEST(CollectiveNumerics, AllReduceGivesEveryDeviceTheSum) {
  for (const int n : {2, 3, 4}) {
    const CollectiveRun run(CollectiveTest::kAllReduce, n, 4 * 1001);
    for (int out : run.op().outputs) {
      const std::vector<float> got = run.values(out);
      ASSERT_EQ(got.size(), 1001u);
      for (size_t e = 0; e < got.size(); ++e) ASSERT_FLOAT_EQ(got[e], summed(n, static_cast<int64_t>(e))) << n << " " << e;
    }
  }
}

TEST(CollectiveNumerics, ReduceScatterGivesDeviceIItsChunkOfTheSum) {
  for (const int n : {2, 3, 4}) {
    const CollectiveRun run(CollectiveTest::kReduceScatter, n, 4 * 1200);  // 1,200 floats: 1200 / n each
    ASSERT_EQ(run.op().outputs.size(), static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) {
      const Value& out = run.plan.value(run.op().outputs[static_cast<size_t>(i)]);
      EXPECT_EQ(out.device, i);
      const std::vector<float> got = run.values(out.id);
      ASSERT_EQ(static_cast<int64_t>(got.size()), 1200 / n);
      for (size_t e = 0; e < got.size(); ++e) {
        ASSERT_FLOAT_EQ(got[e], summed(n, out.channels.begin + static_cast<int64_t>(e))) << n << " devices, device " << i;
      }
    }
    EXPECT_EQ(run.staging.size(), static_cast<size_t>(n)) << "a staging copy per participant";
  }
}

TEST(CollectiveNumerics, BroadcastCopiesTheRootsTensorThroughEveryChunk) {
  // 300,000 floats: three chunks of 512 KiB at most, pipelined down the ring.
  for (const int n : {2, 3, 4}) {
    const CollectiveRun run(CollectiveTest::kBroadcast, n, 4 * 300'000);
    const std::vector<float> root = run.values(run.op().inputs.front());
    for (int out : run.op().outputs) EXPECT_EQ(run.values(out), root) << n << " devices";
    EXPECT_EQ(root.front(), 1.0f) << "device 0's values";
  }
}

TEST(CollectiveNumerics, ThePlanCheckRefusesMisplacedChunksAndABroadcastFromAnotherRoot) {
  Plan scatter = collective_plan(CollectiveTest::kReduceScatter, 3, 4 * 1200);
  std::swap(scatter.ops[0].outputs[0], scatter.ops[0].outputs[1]);
  EXPECT_FALSE(collective_problems(scatter).empty());
  Plan broadcast = collective_plan(CollectiveTest::kBroadcast, 3, 4 * 1200);
  broadcast.ops[0].device = 1;
  EXPECT_FALSE(collective_problems(broadcast).empty());
  EXPECT_THROW(collective_schedule(broadcast, broadcast.ops[0]), std::logic_error);
}

TEST(CollectiveNumerics, AllGatherAssemblesEverySlice) {
  for (const int n : {2, 3}) {
    const CollectiveRun run(CollectiveTest::kAllGather, n, 4 * 600);
    for (int out : run.op().outputs) {
      const std::vector<float> got = run.values(out);
      ASSERT_EQ(got.size(), 600u);
      for (size_t e = 0; e < got.size(); ++e) {
        const int owner = static_cast<int>(e / (600 / static_cast<size_t>(n)));
        ASSERT_FLOAT_EQ(got[e], static_cast<float>(owner + 1) + static_cast<float>(e) / 1024.0f);
      }
    }
  }
}

}  // namespace
}  // namespace collective_numerics_test
}  // namespace splitscope
