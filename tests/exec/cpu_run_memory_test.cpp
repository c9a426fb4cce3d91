// What a cpu run holds, counted before it allocates, and the check against
// the memory available now less a margin (issue 54, item 10).
#include "exec/cpu/cpu_run_memory.hpp"

#include <gtest/gtest.h>

#include "ir/training.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace cpu_run_memory_test {
namespace {

constexpr int64_t kGiB = int64_t{1} << 30;

// Weights: 6x7 + 7 = 49 and 7x4 + 4 = 32 floats, 81 in all (324 bytes).
const char* kDense = R"({"name": "dense", "batch": 5, "input": [6], "layers": [
    {"type": "dense", "units": 7, "activation": "tanh"},
    {"type": "dense", "units": 4}]})";

TEST(CpuRunMemory, TrainingCountsGradientsAndTheOptimizersStateBesideTheValues) {
  const auto forward = testing_support::graph_from_json(kDense);
  Optimizer adam;
  adam.kind = OptimizerKind::kAdam;
  adam.learning_rate = 0.01;
  adam.momentum = 0;
  const auto training = std::make_shared<const Graph>(training_graph(*forward, adam));
  const Plan plan = make_partitioner("single")->partition(training, {1, 1, nullptr});
  const CpuRunMemory memory = cpu_run_memory(plan, 3);
  EXPECT_EQ(memory.weights, 81 * 4);
  EXPECT_EQ(memory.gradients, 81 * 4);             // one gradient value per weight slice, as large
  EXPECT_EQ(memory.optimizer_state, 2 * 81 * 4);   // Adam's two moments
  EXPECT_EQ(memory.output, 5 * 4 * 4);             // batch 5 x 4 outputs
  EXPECT_EQ(memory.threads, 3 * kThreadBytes);
  int64_t activations = 0;
  for (const Value& value : plan.values) activations += value.role == ValueRole::kActivation ? value.bytes : 0;
  EXPECT_GE(activations, (5 * 6 + 5 * 7 + 5 * 4) * 4);  // the input, the hidden layer and the output at least
  EXPECT_EQ(memory.activations, activations);
  EXPECT_EQ(memory.total(), activations + 4 * 81 * 4 + 5 * 4 * 4 + memory.workspace + 3 * kThreadBytes);

  // Inference: no gradients, no optimizer state.
  const Plan inference = make_partitioner("single")->partition(forward, {1, 1, nullptr});
  const CpuRunMemory forward_only = cpu_run_memory(inference, 1);
  EXPECT_EQ(forward_only.gradients, 0);
  EXPECT_EQ(forward_only.optimizer_state, 0);
  EXPECT_EQ(forward_only.weights, 81 * 4);
}

TEST(CpuRunMemory, TheMarginIsASixteenthOfTheMachineAndAtLeastHalfAGibibyte) {
  EXPECT_EQ(memory_margin_bytes(4 * kGiB), int64_t{512} << 20);
  EXPECT_EQ(memory_margin_bytes(16 * kGiB), kGiB);
}

TEST(CpuRunMemory, ARunPastTheAvailableMemoryIsRefusedWithTheBatchThatFits) {
  CpuRunMemory memory;
  memory.activations = 6 * kGiB;  // grows with the batch
  memory.weights = kGiB;
  memory.gradients = kGiB;
  memory.optimizer_state = kGiB;
  // 9 GiB against 10 GiB available less the 1 GiB margin of a 16 GiB machine: fits, just.
  EXPECT_NO_THROW(check_memory_fits(memory, 10 * kGiB, 16 * kGiB, 1000));
  // Values alone (8 GiB) against the whole machine (16 GiB), the old check, let this through.
  try {
    check_memory_fits(memory, 9 * kGiB + kGiB / 2, 16 * kGiB, 1000);
    FAIL() << "expected InputError";
  } catch (const InputError& error) {
    EXPECT_EQ(error.source(), "--backend cpu");
    // (8.5 GiB free - 3 GiB fixed) / 6 GiB for 1000 rows = 916.7 rows.
    EXPECT_EQ(error.problem(),
              "the run needs 9.0 GiB (activations 6.0, weights 1.0, gradients 1.0, optimizer state 1.0, kernel "
              "workspace 0.0, output 0.0, threads 0.0) and 8.5 GiB is free for it (9.5 GiB available now, less a "
              "margin of 1.0 GiB: docs/limits.md); a --batch of at most 916 fits; use a smaller --batch or "
              "network, or predict it with --backend sim");
  }
  EXPECT_NO_THROW(check_memory_fits(memory, 0, 0, 1000));  // unknown: nothing to hold it to
}

TEST(CpuRunMemory, TwoRunsHeldAtOnceNeedTheirSum) {
  // compare and validate hold the baseline prepared beside each split: each fits alone, the two may not.
  CpuRunMemory baseline;
  baseline.activations = 3 * kGiB;
  baseline.weights = kGiB;
  baseline.threads = 4 * kThreadBytes;
  CpuRunMemory split = baseline;
  split.workspace = kGiB / 2;
  CpuRunMemory both = baseline;
  both += split;
  EXPECT_EQ(both.activations, 6 * kGiB);
  EXPECT_EQ(both.weights, 2 * kGiB);
  EXPECT_EQ(both.workspace, kGiB / 2);
  EXPECT_EQ(both.threads, 8 * kThreadBytes);
  EXPECT_EQ(both.total(), baseline.total() + split.total());
  // 8 GiB available on a 16 GiB machine, less its 1 GiB margin: 7 GiB for runs.
  EXPECT_NO_THROW(check_memory_fits(baseline, 8 * kGiB, 16 * kGiB, 1000));
  EXPECT_NO_THROW(check_memory_fits(split, 8 * kGiB, 16 * kGiB, 1000));
  EXPECT_THROW(check_memory_fits(both, 8 * kGiB, 16 * kGiB, 1000), InputError);
}

}  // namespace
}  // namespace cpu_run_memory_test
}  // namespace splitscope
