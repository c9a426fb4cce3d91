// Precision as data (ir/precision.hpp, plan_precision.hpp): a plan stores
// each tensor class at its precision's size, and its memory, transfers and
// gradient all-reduces count those bytes, each worked out by hand.

#include <gtest/gtest.h>

#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "plan/plan_traffic.hpp"
#include "plan_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace precision_test {
namespace {

// batch 2: input [2, 10], dense 6, dense 4. Weights: fc1 10·6 + 6 = 66,
// fc2 6·4 + 4 = 28: 94 in all.
const char* const kTwoDense = R"({"batch": 2, "input": [10], "layers": [
    {"type": "dense", "units": 6, "name": "fc1"}, {"type": "dense", "units": 4, "name": "fc2"}]})";
constexpr int64_t kWeights = 94;

Plan plan_at(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices, Precision precision,
             int64_t bucket_bytes = PartitionOptions{}.bucket_bytes) {
  PartitionOptions options;
  options.devices = devices;
  options.precision = precision;
  options.bucket_bytes = bucket_bytes;
  Plan plan = make_plan(*make_partitioner(strategy), graph, options);
  check(plan);
  return plan;
}

std::shared_ptr<const Graph> sgd_momentum_step() {
  return std::make_shared<const Graph>(training_graph(*testing::graph_from_text(kTwoDense), Optimizer{}));
}

/// Payload and moved bytes of the plan's gradient all-reduces.
std::pair<int64_t, int64_t> gradient_all_reduce_bytes(const Plan& plan) {
  int64_t payload = 0;
  int64_t moved = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCollective || op.collective != CollectiveKind::kAllReduce) continue;
    if (plan.value(op.inputs.front()).role != ValueRole::kGradient) continue;
    payload += op.payload_bytes;
    moved += op.bytes_moved;
  }
  return {payload, moved};
}

TEST(Precision, StorageBytesPerTensorClass) {
  const StorageBytes fp32 = storage_bytes(Precision::kFp32);
  EXPECT_EQ(fp32.activation, 4);
  EXPECT_EQ(fp32.master, 0);
  EXPECT_EQ(storage_bytes(Precision::kTf32).weight, 4);
  const StorageBytes bf16 = storage_bytes(Precision::kBf16);
  EXPECT_EQ(bf16.activation + bf16.weight + bf16.gradient + bf16.optimizer_state, 8);
  EXPECT_EQ(bf16.master, 0);
  const StorageBytes amp = storage_bytes(Precision::kAmp);
  EXPECT_EQ(amp.activation, 2);
  EXPECT_EQ(amp.weight, 2);
  EXPECT_EQ(amp.gradient, 2);
  EXPECT_EQ(amp.master, 4);
  EXPECT_EQ(amp.optimizer_state, 4);
  EXPECT_EQ(matrix_math_of(Precision::kAmp), "bf16");
  EXPECT_EQ(parse_precision("fp16"), Precision::kFp16);
  EXPECT_THROW(parse_precision("fp64"), InputError);
}

TEST(Precision, ForwardActivationsAndWeightsAtTheirSize) {
  const auto graph = testing::graph_from_text(kTwoDense);
  // fp32 (memory_test's hand count): weights 94·4; input 2·10·4 = 80 B and
  // fc1's 2·6·4 = 48 B live together: 128 B.
  const Plan fp32 = plan_at(graph, "single", 1, Precision::kFp32);
  EXPECT_EQ(fp32.memory[0].params, kWeights * 4);
  EXPECT_EQ(fp32.memory[0].activations_peak, 128);
  // bf16: 94·2; 40 + 24 = 64 B. An inference plan keeps no fp32 masters,
  // so amp stores what bf16 does.
  for (Precision half : {Precision::kBf16, Precision::kFp16, Precision::kAmp}) {
    const Plan plan = plan_at(graph, "single", 1, half);
    EXPECT_EQ(plan.precision, half);
    EXPECT_EQ(plan.memory[0].params, kWeights * 2) << to_string(half);
    EXPECT_EQ(plan.memory[0].activations_peak, 64) << to_string(half);
  }
  // tf32 stores float32: the same bytes as fp32.
  EXPECT_EQ(plan_at(graph, "single", 1, Precision::kTf32).memory[0].peak, fp32.memory[0].peak);
}

TEST(Precision, ComputeOpsReadAndWriteHalfTheBytes) {
  const auto graph = testing::graph_from_text(kTwoDense);
  const Plan fp32 = plan_at(graph, "single", 1, Precision::kFp32);
  const Plan bf16 = plan_at(graph, "single", 1, Precision::kBf16);
  ASSERT_EQ(fp32.ops.size(), bf16.ops.size());
  // fc1 reads x (2·10) and its weights (66), writes 2·6: 86 and 12 values.
  const PlanOp& fc1 = bf16.ops.front();
  EXPECT_EQ(fc1.bytes_read, 86 * 2);
  EXPECT_EQ(fc1.bytes_written, 12 * 2);
  EXPECT_EQ(fp32.ops.front().bytes_read, 86 * 4);
  EXPECT_EQ(fc1.flops, fp32.ops.front().flops) << "precision changes bytes, not FLOPs";
}

TEST(Precision, HorizontalTransferMovesHalfTheBytes) {
  const auto graph = testing::graph_from_text(kTwoDense);
  // fc1's output [2, 6] crosses from device 0 to 1: 48 B in float32, 24 in bf16.
  const PlanTotals fp32 = plan_totals(plan_at(graph, "horizontal", 2, Precision::kFp32));
  const Plan bf16_plan = plan_at(graph, "horizontal", 2, Precision::kBf16);
  const PlanTotals bf16 = plan_totals(bf16_plan);
  EXPECT_EQ(fp32.transfer_bytes, 48);
  EXPECT_EQ(bf16.transfer_bytes, 24);
  EXPECT_EQ(plan_traffic(bf16_plan).at(0, 1), 24);
  EXPECT_EQ(bf16_plan.memory[1].transfer_buffers, 24);
}

TEST(Precision, TrainingMemoryPerDeviceUnderDataParallelism) {
  const auto graph = sgd_momentum_step();  // SGD with momentum: one state value per weight
  const Plan fp32 = plan_at(graph, "data", 2, Precision::kFp32);
  const Plan bf16 = plan_at(graph, "data", 2, Precision::kBf16);
  const Plan amp = plan_at(graph, "data", 2, Precision::kAmp);
  for (int d = 0; d < 2; ++d) {
    const auto i = static_cast<size_t>(d);
    // fp32: weights, gradients and momentum 94·4 each.
    EXPECT_EQ(fp32.memory[i].params, kWeights * 4);
    EXPECT_EQ(fp32.memory[i].gradients, kWeights * 4);
    EXPECT_EQ(fp32.memory[i].optimizer_state, kWeights * 4);
    // Pure bf16: 94·2 each.
    EXPECT_EQ(bf16.memory[i].params, kWeights * 2);
    EXPECT_EQ(bf16.memory[i].gradients, kWeights * 2);
    EXPECT_EQ(bf16.memory[i].optimizer_state, kWeights * 2);
    // amp: a bf16 copy and an fp32 master per weight (6 B), bf16 gradients,
    // fp32 momentum.
    EXPECT_EQ(amp.memory[i].params, kWeights * (2 + 4));
    EXPECT_EQ(amp.memory[i].gradients, kWeights * 2);
    EXPECT_EQ(amp.memory[i].optimizer_state, kWeights * 4);
    // Each replica's activations (one row of the batch) are half of fp32's under both.
    EXPECT_EQ(2 * bf16.memory[i].activations_peak, fp32.memory[i].activations_peak);
    EXPECT_EQ(amp.memory[i].activations_peak, bf16.memory[i].activations_peak);
    EXPECT_EQ(amp.memory[i].peak, amp.memory[i].params + amp.memory[i].gradients + amp.memory[i].optimizer_state +
                                      amp.memory[i].activations_peak);
  }
}

TEST(Precision, GradientAllReduceMovesTheGradientsStoredBytes) {
  const auto graph = sgd_momentum_step();
  // 94 gradients over 2 replicas: a ring all-reduce moves 2·(N-1)·B in all.
  for (int64_t bucket : {int64_t{0}, int64_t{25} << 20}) {
    EXPECT_EQ(gradient_all_reduce_bytes(plan_at(graph, "data", 2, Precision::kFp32, bucket)),
              std::make_pair(kWeights * 4, 2 * kWeights * 4));
    EXPECT_EQ(gradient_all_reduce_bytes(plan_at(graph, "data", 2, Precision::kBf16, bucket)),
              std::make_pair(kWeights * 2, 2 * kWeights * 2));
    EXPECT_EQ(gradient_all_reduce_bytes(plan_at(graph, "data", 2, Precision::kAmp, bucket)),
              std::make_pair(kWeights * 2, 2 * kWeights * 2));
  }
  // The ring's sends carry the same bytes (what the simulator routes).
  EXPECT_EQ(plan_traffic(plan_at(graph, "data", 2, Precision::kAmp)).at(0, 1), kWeights * 2);
}

TEST(Precision, AmpUpdateReadsMastersAndStateAndCastsTheCopy) {
  const auto graph = sgd_momentum_step();
  const Plan amp = plan_at(graph, "single", 1, Precision::kAmp);
  const Plan fp32 = plan_at(graph, "single", 1, Precision::kFp32);
  int updates = 0;
  for (size_t k = 0; k < amp.ops.size(); ++k) {
    const PlanOp& op = amp.ops[k];
    if (op.role != OpRole::kUpdate) continue;
    ++updates;
    const int64_t n = graph->node(op.node).param_count;
    EXPECT_TRUE(n == 66 || n == 28) << n;
    // fp32 SGD with momentum: reads w, g, v (12n), writes w, v (8n).
    EXPECT_EQ(fp32.ops[k].bytes_read, 12 * n);
    EXPECT_EQ(fp32.ops[k].bytes_written, 8 * n);
    // amp: reads the bf16 gradient (2n), the master (4n) and v (4n), and the
    // master again for the cast (4n); writes the master and v (8n) and the bf16 copy (2n).
    EXPECT_EQ(op.bytes_read, 14 * n);
    EXPECT_EQ(op.bytes_written, 10 * n);
  }
  EXPECT_EQ(updates, 2);
}

TEST(Precision, HalfBucketsHoldTwiceTheWeights) {
  // A 100-byte cap: a bucket closes once it holds the cap. In float32
  // fc2's 28 gradients (112 B, ready first) close one and fc1's 66 (264 B)
  // another; in bf16 fc2's 56 B do not, so fc2 and fc1 (56 + 132 B) share
  // one, as DDP fills its buckets by the bytes it moves.
  const auto graph = sgd_momentum_step();
  const auto all_reduces = [](const Plan& plan) {
    int count = 0;
    for (const PlanOp& op : plan.ops) {
      count += op.role == OpRole::kCollective && op.collective == CollectiveKind::kAllReduce ? 1 : 0;
    }
    return count;
  };
  EXPECT_EQ(all_reduces(plan_at(graph, "data", 2, Precision::kFp32, 100)), 2);
  EXPECT_EQ(all_reduces(plan_at(graph, "data", 2, Precision::kBf16, 100)), 1);
}

}  // namespace
}  // namespace precision_test
}  // namespace splitscope
