// The checker catches each kind of broken plan.

#include <gtest/gtest.h>

#include <algorithm>

#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"

namespace splitscope::testing {
namespace plan_check_test {
namespace {

Plan sound_plan() { return make_plan(zoo_graph("mlp-small"), "horizontal", 2); }

bool mentions(const std::vector<std::string>& problems, const std::string& words) {
  for (const auto& problem : problems) {
    if (problem.find(words) != std::string::npos) return true;
  }
  return false;
}

int first_compute_on(const Plan& plan, int device, bool with_remote_input) {
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute || op.device != device) continue;
    if (!with_remote_input) return op.id;
    const int producer = plan.value(op.inputs[0]).producer;
    if (producer >= 0 && plan.op(producer).role == OpRole::kTransfer) return op.id;
  }
  return -1;
}

TEST(PlanCheck, SoundPlanHasNoProblems) { EXPECT_TRUE(plan_problems(sound_plan()).empty()); }

TEST(PlanCheck, AVeryWideLayersSlicesAreTiledWithoutOverflow) {
  // The softmax over 10^10 units is rows x 10^10 outputs x 10^10 reductions:
  // 10^20, past int64_t (signed overflow, which UBSan reports; found by the
  // plans fuzzer). Within the model limits: each tensor holds under 2^40.
  const auto graph = graph_from_text(R"({"batch": 1, "input": [8], "layers": [
      {"type": "dense", "units": 10000000000}, {"type": "softmax"}]})");
  EXPECT_TRUE(plan_problems(make_plan(graph, "single", 1)).empty());
  EXPECT_TRUE(plan_problems(make_plan(graph, "vertical", 2)).empty());
}

TEST(PlanCheck, CrossDeviceEdgeWithoutTransfer) {
  Plan plan = sound_plan();
  const int op = first_compute_on(plan, 1, true);
  ASSERT_GE(op, 0);
  // Read the transfer's source (on device 0) directly, skipping the copy.
  const int copy = plan.ops[static_cast<size_t>(op)].inputs[0];
  plan.ops[static_cast<size_t>(op)].inputs[0] = plan.op(plan.value(copy).producer).inputs[0];
  EXPECT_TRUE(mentions(plan_problems(plan), "a cross-device edge without a transfer"));
  EXPECT_THROW(check(plan), std::logic_error);
}

TEST(PlanCheck, MissingSlice) {
  Plan plan = sound_plan();
  const int op = first_compute_on(plan, 0, false);
  plan.ops[static_cast<size_t>(op)].slice.out.end -= 1;
  const auto problems = plan_problems(plan);
  EXPECT_TRUE(mentions(problems, "cover")) << ::testing::PrintToString(problems);
}

TEST(PlanCheck, OverlappingSlices) {
  Plan plan = make_plan(zoo_graph("mlp-small"), "vertical", 2);
  for (PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCompute && plan.graph->node(op.node).name == "fc2" && op.device == 1) {
      op.slice.out.begin -= 1;  // now overlaps device 0's slice
      break;
    }
  }
  EXPECT_TRUE(mentions(plan_problems(plan), "two slices of fc2 overlap"));
}

TEST(PlanCheck, WrongTransferBytes) {
  Plan plan = sound_plan();
  for (PlanOp& op : plan.ops) {
    if (op.role == OpRole::kTransfer) {
      op.bytes_moved += 4;
      break;
    }
  }
  EXPECT_TRUE(mentions(plan_problems(plan), "moves"));
}

TEST(PlanCheck, ReadBeforeWrite) {
  Plan plan = sound_plan();
  // Swap the first two ops (the second reads what the first writes) and keep ids and value
  // ownership consistent, so that the only thing wrong is the order.
  ASSERT_TRUE(std::ranges::find(plan.ops[1].inputs, plan.ops[0].outputs.at(0)) != plan.ops[1].inputs.end());
  std::swap(plan.ops[0], plan.ops[1]);
  for (int id : {0, 1}) {
    plan.ops[static_cast<size_t>(id)].id = id;
    for (int output : plan.ops[static_cast<size_t>(id)].outputs) plan.values[static_cast<size_t>(output)].producer = id;
  }
  const auto problems = plan_problems(plan);
  EXPECT_TRUE(mentions(problems, "before op 1 writes it")) << ::testing::PrintToString(problems);
  EXPECT_FALSE(mentions(problems, "owned by op")) << ::testing::PrintToString(problems);
}

TEST(PlanCheck, WrongFlops) {
  Plan plan = sound_plan();
  plan.ops[0].flops += 1;
  EXPECT_TRUE(mentions(plan_problems(plan), "FLOPs"));
}

}  // namespace
}  // namespace plan_check_test
}  // namespace splitscope::testing
