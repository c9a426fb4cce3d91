// Hybrid parallelism (`--replicas R`, partitioners/replicas.hpp) trains on
// the cpu backend step for step as `single` does: R copies of a model split,
// each over its share of the batch, gradients all-reduced across them.
#include <gtest/gtest.h>

#include <cmath>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/training_run.hpp"
#include "ir/training.hpp"
#include "naive_reference.hpp"
#include "training_support.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace replicas_training_test {
namespace {

using testing_support::graph_from_json;

constexpr uint64_t kSeed = 5;

const char* kDense = R"({"name": "dense", "batch": 7, "input": [6], "layers": [
    {"type": "dense", "units": 8, "activation": "tanh"},
    {"type": "dense", "units": 6, "activation": "relu"},
    {"type": "dense", "units": 4}, {"type": "softmax"}]})";
const char* kLstm = R"({"name": "lstm", "batch": 6, "input": [4, 5], "layers": [
    {"name": "l", "type": "lstm", "hidden": 4, "layers": 2, "return_sequences": false},
    {"type": "dense", "units": 3}, {"type": "softmax"}]})";

using Trained = testing_support::TrainedRun;
using testing_support::expect_same_training;

Trained train(const char* json, const std::string& strategy, int replicas, int devices, int microbatches) {
  const auto forward = graph_from_json(json);
  Optimizer optimizer;
  optimizer.learning_rate = 0.05;
  optimizer.momentum = 0.9;
  const auto training = std::make_shared<const Graph>(training_graph(*forward, optimizer));
  PartitionOptions options{devices, microbatches, nullptr};
  const Plan plan = make_partitioner(strategy, replicas)->partition(training, options);
  check(plan);
  CpuExecutor executor;
  RunOptions run;
  run.seed = kSeed;
  const RunResult result = run_training_steps(executor, plan, run, 3);
  return {result.losses, result.output};
}


TEST(Replicas, HybridPlansTrainStepForStepAsSingle) {
  for (const char* json : {kDense, kLstm}) {
    const Trained single = train(json, "single", 1, 1, 1);
    for (const char* strategy : {"horizontal", "vertical", "tensor"}) {
      // A slice of a cell has no gradient yet (training refuses it): split the LSTM by layers only.
      if (json == kLstm && std::string(strategy) != "horizontal") continue;
      expect_same_training(train(json, strategy, 2, 4, 1), single, std::string(strategy) + " x2 on 4");
    }
    expect_same_training(train(json, "pipeline", 2, 4, 2), single, "pipeline x2 on 4, 2 micro-batches");
    // Three replicas of 7 or 6 rows: unequal shares where 7 does not divide.
    expect_same_training(train(json, "horizontal", 3, 6, 1), single, "horizontal x3 on 6");
    expect_same_training(train(json, "single", 2, 2, 1), single, "single x2 (data parallelism)");
  }
}

TEST(Replicas, EachReplicaKeepsItsGroupOfDevicesAndOnlyGradientsCrossGroups) {
  const auto forward = graph_from_json(kDense);
  const auto training = std::make_shared<const Graph>(training_graph(*forward, Optimizer{}));
  for (const int64_t bucket_bytes : {PartitionOptions{}.bucket_bytes, int64_t{0}}) {
    PartitionOptions options{4, 1, nullptr};
    options.bucket_bytes = bucket_bytes;
    const Plan plan = make_partitioner("tensor", 2)->partition(training, options);
    check(plan);
    EXPECT_EQ(plan.strategy, "tensor x2");
    int gradient_all_reduces = 0;
    int gradient_slices = 0;
    for (const PlanOp& op : plan.ops) {
      if (op.role == OpRole::kCompute) {
        // Replica 0: rows [0, 4) on devices 0-1; replica 1: rows [4, 7) on devices 2-3.
        EXPECT_EQ(op.device < 2, op.slice.batch.begin < 4) << op_label(plan, op);
      }
      if (op.role != OpRole::kCollective || op.participants.size() != 2) continue;
      const bool across = (op.participants[0] < 2) != (op.participants[1] < 2);
      if (!across) continue;
      // Only a gradient crosses groups, from device d to d + 2, all-reduced by the ring: 2(R-1) x its bytes.
      EXPECT_EQ(plan.value(op.inputs[0]).role, ValueRole::kGradient) << op_label(plan, op);
      EXPECT_EQ(op.participants[1], op.participants[0] + 2);
      EXPECT_EQ(op.bytes_moved, 2 * op.payload_bytes);
      ++gradient_all_reduces;
      gradient_slices += static_cast<int>(op.inputs.size() / op.participants.size());
    }
    // Three dense layers, each split over two devices: six weight slices, in
    // one 25 MiB bucket per pair of replicas' devices ({0, 2} and {1, 3}), or
    // one all-reduce each without buckets.
    EXPECT_EQ(gradient_slices, 6);
    EXPECT_EQ(gradient_all_reduces, bucket_bytes == 0 ? 6 : 2);
  }
}

TEST(Replicas, RefusesDevicesThatDoNotDivideAndStrategiesThatReplicateAlready) {
  const auto forward = graph_from_json(kDense);
  const auto training = std::make_shared<const Graph>(training_graph(*forward, Optimizer{}));
  EXPECT_THROW(make_partitioner("tensor", 2)->partition(training, PartitionOptions{3, 1, nullptr}), InputError);
  EXPECT_THROW(make_partitioner("data", 2), InputError);
  EXPECT_THROW(make_partitioner("ps", 2), InputError);
  EXPECT_THROW(make_partitioner("tensor", 0), InputError);
}

}  // namespace
}  // namespace replicas_training_test
}  // namespace splitscope
