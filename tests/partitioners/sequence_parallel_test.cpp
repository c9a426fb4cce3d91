// `tensor --sequence-parallel` (partitioners/head_split.hpp, step 5):
// Megatron-LM's sequence parallelism on one GPT block, its collectives
// counted by hand (each all-reduce of the head-wise split becomes an
// all-gather and a reduce-scatter of the same B·T·H floats, the same bytes
// in a ring), the layer norms' saved inputs cut to 1/t of the sequence, and
// what it refuses.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "../common/gpt_block_network.hpp"
#include "ir/training.hpp"
#include "plan/plan_check.hpp"
#include "plan_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace sequence_parallel_test {
namespace {

// One GPT block with the final layer norm and an LM head: B 2, T 8, H 16, 4 heads, V 12.
constexpr int64_t kB = 2, kT = 8, kH = 16;
constexpr int64_t kActivationBytes = kB * kT * kH * 4;  // 1 KiB: the residual stream, float32
constexpr int64_t kLayerNormGradientBytes = 2 * kH * 4;  // dgamma and dbeta

std::shared_ptr<const Graph> block(bool train) {
  const auto forward = graph_from_text(test_networks::gpt_block_network("one-block", kB, kT, 12, true));
  if (!train) return forward;
  return std::make_shared<const Graph>(training_graph(*forward, Optimizer{}));
}

Plan sequence_parallel_plan(const std::shared_ptr<const Graph>& graph, int t) {
  PartitionOptions options;
  options.devices = t;
  options.sequence_parallel = true;
  Plan plan = splitscope::make_plan(*make_partitioner("tensor"), graph, options);
  check(plan);
  return plan;
}

/// (collective, tensor) of every collective, in plan order.
std::vector<std::pair<CollectiveKind, std::string>> collectives(const Plan& plan) {
  std::vector<std::pair<CollectiveKind, std::string>> list;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCollective) list.emplace_back(op.collective, plan.graph->node(op.node).name);
  }
  return list;
}

int64_t collective_bytes(const Plan& plan) {
  int64_t bytes = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kCollective) bytes += op.bytes_moved;
  }
  return bytes;
}

constexpr CollectiveKind kAG = CollectiveKind::kAllGather;
constexpr CollectiveKind kRS = CollectiveKind::kReduceScatter;
constexpr CollectiveKind kAR = CollectiveKind::kAllReduce;

TEST(SequenceParallel, ForwardAllGathersBeforeEachColumnSplitAndReduceScattersAfterEachRowSplit) {
  for (int t : {2, 4}) {
    const Plan plan = sequence_parallel_plan(block(false), t);
    // Per block 2 all-gathers and 2 reduce-scatters where tensor has 2
    // all-reduces, and the LM head's input all-gathered (its column split
    // by vocabulary needs every position).
    EXPECT_EQ(collectives(plan), (std::vector<std::pair<CollectiveKind, std::string>>{
                                     {kAG, "ln_1"}, {kRS, "proj"}, {kAG, "ln_2"}, {kRS, "mlp_proj"}, {kAG, "ln_f"}}))
        << t;
    EXPECT_EQ(count_ops(plan, OpRole::kTransfer), 0);
    for (const PlanOp& op : plan.ops) {
      if (op.role != OpRole::kCollective) continue;
      EXPECT_EQ(op.payload_bytes, kActivationBytes);
      // Ring: each of t devices receives (t-1)/t of the tensor.
      EXPECT_EQ(op.bytes_moved, (t - 1) * kActivationBytes);
      EXPECT_EQ(static_cast<int>(op.participants.size()), t);
      if (op.collective != kRS) continue;
      for (size_t i = 0; i < op.outputs.size(); ++i) {
        const Value& chunk = plan.value(op.outputs[i]);
        EXPECT_EQ(chunk.channels, (Range{static_cast<int64_t>(i) * kT / t, static_cast<int64_t>(i + 1) * kT / t}));
        EXPECT_EQ(chunk.batch, (Range{0, kB}));
        EXPECT_EQ(chunk.device, static_cast<int>(i));
      }
    }
    // The head-wise split of the same block: 2 all-reduces of 2(t-1)/t each
    // per device; the 2 all-gathers and 2 reduce-scatters move as much.
    const Plan tensor = make_plan(block(false), "tensor", t);
    EXPECT_EQ(count_collectives(tensor, kAR), 2);
    EXPECT_EQ(collective_bytes(tensor), 2 * 2 * (t - 1) * kActivationBytes);
    EXPECT_EQ(collective_bytes(plan) - (t - 1) * kActivationBytes, collective_bytes(tensor));
  }
}

TEST(SequenceParallel, LayerNormsAndResidualAddsRunOnAShareOfTheSequence) {
  for (int t : {2, 4}) {
    const Plan plan = sequence_parallel_plan(block(false), t);
    std::map<std::string, std::vector<Range>> positions;
    for (const PlanOp& op : plan.ops) {
      if (op.role != OpRole::kCompute) continue;
      positions[plan.graph->node(op.node).name].push_back(op.slice.out);
    }
    std::vector<Range> shares;
    for (int d = 0; d < t; ++d) shares.push_back({d * kT / t, (d + 1) * kT / t});
    for (const char* name : {"ln_1", "attn_add", "ln_2", "mlp_add", "ln_f"}) EXPECT_EQ(positions.at(name), shares) << name;
    // The embedding runs whole on every device; the products on every position.
    EXPECT_EQ(positions.at("wte"), std::vector<Range>(static_cast<size_t>(t), Range{0, kT}));
    EXPECT_EQ(positions.at("qkv"), std::vector<Range>(static_cast<size_t>(t), Range{0, kT}));
  }
}

TEST(SequenceParallel, BackwardReversesEachCollectiveAndAllReducesTheLayerNormGradients) {
  for (int t : {2, 4}) {
    const Plan plan = sequence_parallel_plan(block(true), t);
    // Forward as above; backward: the input gradient of each column split
    // reduce-scattered (lm_head, fc, qkv), the output gradient of each row
    // split all-gathered (the gradient of mlp_add's output is ln_f's input
    // gradient; attn_add's the sum of two), and the embedding's output
    // gradient all-gathered for its whole-table gradient. Each layer norm's
    // dgamma, dbeta (a sum over its share of the positions) all-reduced.
    auto list = collectives(plan);
    std::map<std::pair<CollectiveKind, std::string>, int> counted;
    for (const auto& entry : list) ++counted[entry];
    EXPECT_EQ(counted, (std::map<std::pair<CollectiveKind, std::string>, int>{
                           {{kAG, "ln_1"}, 1},
                           {{kRS, "proj"}, 1},
                           {{kAG, "ln_2"}, 1},
                           {{kRS, "mlp_proj"}, 1},
                           {{kAG, "ln_f"}, 1},
                           {{kRS, "lm_head/grad_input"}, 1},
                           {{kAG, "ln_f/grad_input"}, 1},
                           {{kRS, "fc/grad_input"}, 1},
                           {{kAG, "attn_add/grad_sum0"}, 1},
                           {{kRS, "qkv/grad_input"}, 1},
                           {{kAG, "wte/grad_sum0"}, 1},
                           {{kAR, "ln_1"}, 1},
                           {{kAR, "ln_2"}, 1},
                           {{kAR, "ln_f"}, 1},
                       }))
        << t;
    EXPECT_EQ(count_ops(plan, OpRole::kTransfer), 0);
    int64_t gradient_reduces = 0;
    for (const PlanOp& op : plan.ops) {
      if (op.role != OpRole::kCollective) continue;
      if (op.collective == kAR) {
        EXPECT_EQ(op.payload_bytes, kLayerNormGradientBytes);
        EXPECT_EQ(op.bytes_moved, 2 * (t - 1) * kLayerNormGradientBytes);
        ++gradient_reduces;
        continue;
      }
      EXPECT_EQ(op.payload_bytes, kActivationBytes);
      EXPECT_EQ(op.bytes_moved, (t - 1) * kActivationBytes);
    }
    EXPECT_EQ(gradient_reduces, 3);
    // Against tensor's 5 all-reduces of B·T·H floats: the same bytes, plus
    // the embedding's all-gather and the layer norms' gradients.
    const Plan tensor = make_plan(block(true), "tensor", t);
    EXPECT_EQ(count_collectives(tensor, kAR), 5);
    EXPECT_EQ(collective_bytes(plan),
              collective_bytes(tensor) + (t - 1) * kActivationBytes + 3 * 2 * (t - 1) * kLayerNormGradientBytes);
  }
}

/// Bytes of the values each device's layer norms read as their input and
/// keep for their backward (slot 0 of every layer_norm_grad_input).
std::vector<int64_t> layer_norm_saved_inputs(const Plan& plan) {
  std::vector<int64_t> bytes(static_cast<size_t>(plan.devices), 0);
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute || plan.graph->node(op.node).kind != OpKind::kLayerNormGradInput) continue;
    bytes[static_cast<size_t>(op.device)] += plan.value(op.inputs.at(0)).bytes;
  }
  return bytes;
}

TEST(SequenceParallel, LayerNormsKeepAShareOfTheirInputsForBackward) {
  for (int t : {2, 4}) {
    // tensor: the 3 layer norms keep the whole residual stream on every device.
    const Plan tensor = make_plan(block(true), "tensor", t);
    EXPECT_EQ(layer_norm_saved_inputs(tensor), std::vector<int64_t>(static_cast<size_t>(t), 3 * kActivationBytes));
    // Sequence parallel: ln_2 and ln_f keep their 1/t of the positions;
    // ln_1 reads the embedding's output, which runs whole on every device.
    const Plan plan = sequence_parallel_plan(block(true), t);
    EXPECT_EQ(layer_norm_saved_inputs(plan),
              std::vector<int64_t>(static_cast<size_t>(t), kActivationBytes + 2 * kActivationBytes / t));
    for (int d = 0; d < t; ++d) {
      EXPECT_LT(plan.memory[static_cast<size_t>(d)].activations_peak,
                tensor.memory[static_cast<size_t>(d)].activations_peak)
          << "t=" << t << " device " << d;
    }
  }
}

TEST(SequenceParallel, RefusesWhatItDoesNotApplyTo) {
  const auto refusal = [](const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices) {
    PartitionOptions options;
    options.devices = devices;
    options.sequence_parallel = true;
    if (strategy == "hybrid") options.degrees = ParallelDegrees{devices, 1, 1};
    try {
      (void)splitscope::make_plan(*make_partitioner(strategy), graph, options);
    } catch (const InputError& error) {
      return std::string(error.what());
    }
    return std::string("no error");
  };
  // Not a tensor split.
  EXPECT_NE(refusal(block(false), "data", 2).find("--sequence-parallel"), std::string::npos);
  EXPECT_NE(refusal(block(false), "pipeline", 2).find("use --strategy tensor or hybrid"), std::string::npos);
  // No transformer blocks.
  EXPECT_NE(refusal(zoo_graph("mlp-small"), "tensor", 2).find("has no attention blocks"), std::string::npos);
  EXPECT_NE(refusal(zoo_graph("mlp-small"), "hybrid", 2).find("has no attention blocks"), std::string::npos);
  // 6 positions over 4 devices (gpt-4heads' 4 heads allow t = 4).
  const auto six = graph_from_text(test_networks::gpt_block_network("six", 2, 6, 12, true));
  const std::string uneven = refusal(six, "tensor", 4);
  EXPECT_NE(uneven.find("--sequence-parallel"), std::string::npos) << uneven;
  EXPECT_NE(uneven.find("6 positions"), std::string::npos) << uneven;
  EXPECT_EQ(refusal(six, "tensor", 2), "no error");
}

}  // namespace
}  // namespace sequence_parallel_test
}  // namespace splitscope::testing
