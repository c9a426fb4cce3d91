// `tensor` on a transformer (partitioners/head_split.hpp): Megatron's split
// of one block by heads, its FLOPs and its all-reduces counted by hand, and
// the head counts it refuses.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "../common/gpt_block_network.hpp"
#include "plan_test_support.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace tensor_heads_test {
namespace {

// One GPT block whose residual stream is the output: B 2, T 8, H 16, 4 heads, MLP 64.
const std::string kOneBlock = test_networks::gpt_block_network("one-block", 2, 8, 10, false);

constexpr int64_t kB = 2, kT = 8, kH = 16;

/// Each device's FLOPs on each forward node.
std::map<std::string, std::vector<int64_t>> flops_by_node(const Plan& plan) {
  std::map<std::string, std::vector<int64_t>> flops;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCompute) continue;
    auto& row = flops[plan.graph->node(op.node).name];
    row.resize(static_cast<size_t>(plan.devices), -1);
    row[static_cast<size_t>(op.device)] = std::max<int64_t>(row[static_cast<size_t>(op.device)], 0) + op.flops;
  }
  return flops;
}

TEST(TensorHeads, EachDeviceDoesOneTthOfEverySplitProduct) {
  const std::map<std::string, int64_t> whole{
      {"qkv", 2 * kB * kT * kH * 3 * kH},      // 24576
      {"attn", 4 * kB * kT * kT * kH},         // 8192: Q·Kᵀ and P·V
      {"proj", 2 * kB * kT * kH * kH},         // 8192
      {"fc", 2 * kB * kT * kH * 4 * kH},       // 32768
      {"mlp_proj", 2 * kB * kT * 4 * kH * kH}  // 32768
  };
  for (int t : {2, 4}) {
    const Plan plan = make_plan(graph_from_text(kOneBlock.c_str()), "tensor", t);
    check(plan);
    const auto flops = flops_by_node(plan);
    for (const auto& [name, total] : whole) {
      for (int device = 0; device < t; ++device) {
        EXPECT_EQ(flops.at(name).at(static_cast<size_t>(device)), total / t) << name << " t=" << t << " device " << device;
      }
    }
    // What feeds the split runs whole on every device: the same work everywhere.
    for (const char* name : {"wte", "ln_1", "attn_add", "ln_2"}) {
      for (int device = 0; device < t; ++device) {
        EXPECT_EQ(flops.at(name).at(static_cast<size_t>(device)), flops.at(name).at(0)) << name;
      }
    }
    // The last add feeds no split op (it is the output): device 0 alone.
    for (int device = 1; device < t; ++device) EXPECT_EQ(flops.at("mlp_add").at(static_cast<size_t>(device)), -1);
    EXPECT_EQ(whole.at("qkv") / t + whole.at("attn") / t + whole.at("proj") / t + whole.at("fc") / t +
                  whole.at("mlp_proj") / t,
              106496 / t);
  }
}

TEST(TensorHeads, OneAllReducePerHalfBlockForwardAndBackward) {
  const int64_t activation_bytes = kB * kT * kH * 4;  // 1 KiB: the residual stream, float32
  for (int t : {2, 4}) {
    const Plan forward = make_plan(graph_from_text(kOneBlock.c_str()), "tensor", t);
    EXPECT_EQ(count_collectives(forward, CollectiveKind::kAllReduce), 2) << t;
    EXPECT_EQ(count_ops(forward, OpRole::kTransfer), 0) << t;
    for (const PlanOp& op : forward.ops) {
      if (op.role != OpRole::kCollective) continue;
      EXPECT_EQ(op.payload_bytes, activation_bytes);
      EXPECT_EQ(op.bytes_moved, 2 * (t - 1) * activation_bytes);  // the ring's 2(t-1)/t per device
      EXPECT_EQ(static_cast<int>(op.participants.size()), t);
    }
    // Training: the matching all-reduce of the input gradient before the QKV
    // projection and before the MLP (Megatron's f); the loss runs on device 0,
    // which sends its gradient of the output to each other device.
    const auto training = std::make_shared<const Graph>(training_graph(*graph_from_text(kOneBlock.c_str()), Optimizer{}));
    const Plan train = make_plan(training, "tensor", t);
    check(train);
    EXPECT_EQ(count_collectives(train, CollectiveKind::kAllReduce), 4) << t;
    EXPECT_EQ(count_collectives(train, CollectiveKind::kAllGather), 0) << t;
    EXPECT_EQ(count_collectives(train, CollectiveKind::kConcat), 0) << t;
    EXPECT_EQ(count_ops(train, OpRole::kTransfer), t - 1) << t;
    std::vector<std::string> reduced;
    for (const PlanOp& op : train.ops) {
      if (op.role == OpRole::kTransfer) {
        EXPECT_EQ(op.bytes_moved, activation_bytes);
      }
      if (op.role != OpRole::kCollective) continue;
      reduced.push_back(train.graph->node(op.node).name);
      EXPECT_EQ(op.payload_bytes, activation_bytes);
      EXPECT_EQ(op.bytes_moved, 2 * (t - 1) * activation_bytes);
    }
    EXPECT_EQ(reduced, (std::vector<std::string>{"proj", "mlp_proj", "fc/grad_input", "qkv/grad_input"}));
  }
}

TEST(TensorHeads, OutputLayerSplitsByVocabulary) {
  // lm_head: 2·B·T·H·V FLOPs, V/t of the vocabulary's columns on each device.
  for (const auto& [vocab, t, shards] : std::vector<std::tuple<int64_t, int, std::vector<int64_t>>>{
           {12, 2, {6, 6}}, {12, 4, {3, 3, 3, 3}}, {10, 4, {3, 3, 2, 2}}}) {
    const Plan plan = make_plan(graph_from_text(test_networks::gpt_block_network("one-block", 2, 8, vocab, true).c_str()), "tensor", t);
    check(plan);
    const auto flops = flops_by_node(plan);
    int64_t sum = 0;
    for (int device = 0; device < t; ++device) {
      const int64_t expected = 2 * kB * kT * kH * shards.at(static_cast<size_t>(device));
      EXPECT_EQ(flops.at("lm_head").at(static_cast<size_t>(device)), expected) << "V=" << vocab << " t=" << t;
      sum += flops.at("lm_head").at(static_cast<size_t>(device));
      // The final layer norm runs on every device, so each has lm_head's input.
      EXPECT_EQ(flops.at("ln_f").at(static_cast<size_t>(device)), flops.at("ln_f").at(0));
    }
    EXPECT_EQ(sum, 2 * kB * kT * kH * vocab);
    if (vocab % t == 0) {
      EXPECT_EQ(flops.at("lm_head").at(0), 2 * kB * kT * kH * vocab / t);
    }
    // The output stays as the shards, one a device: nothing gathers the logits.
    EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllReduce), 2);
    EXPECT_EQ(count_collectives(plan, CollectiveKind::kAllGather), 0);
    EXPECT_EQ(count_collectives(plan, CollectiveKind::kConcat), 0);
    EXPECT_EQ(count_ops(plan, OpRole::kTransfer), 0);
    EXPECT_EQ(static_cast<int>(plan.outputs.size()), t);
  }
}

TEST(TensorHeads, LossDifferentiatesEachShardWhereItLies) {
  // Mean squared error on the logits (a network ending in lm_head): each
  // device's gradient of its shard needs its shard alone, so the loss adds no
  // collective; lm_head's input gradient sums over the shards: one more
  // all-reduce of B·T·H floats, beside the block's four. No transfers: the
  // loss no longer runs on device 0 alone.
  const int64_t activation_bytes = kB * kT * kH * 4;
  for (int t : {2, 4}) {
    const auto training =
        std::make_shared<const Graph>(training_graph(*graph_from_text(test_networks::gpt_block_network("one-block", 2, 8, 12, true).c_str()), Optimizer{}));
    const Plan train = make_plan(training, "tensor", t);
    check(train);
    EXPECT_EQ(count_collectives(train, CollectiveKind::kAllReduce), 5) << t;
    EXPECT_EQ(count_collectives(train, CollectiveKind::kAllGather), 0) << t;
    EXPECT_EQ(count_ops(train, OpRole::kTransfer), 0) << t;
    std::vector<std::string> reduced;
    for (const PlanOp& op : train.ops) {
      if (op.role != OpRole::kCollective) continue;
      reduced.push_back(train.graph->node(op.node).name);
      EXPECT_EQ(op.payload_bytes, activation_bytes);
      EXPECT_EQ(op.bytes_moved, 2 * (t - 1) * activation_bytes);
    }
    EXPECT_EQ(reduced, (std::vector<std::string>{"proj", "mlp_proj", "lm_head/grad_input", "fc/grad_input",
                                                 "qkv/grad_input"}));
    // Each device's loss slice writes its own B·T·V/t gradients of the logits.
    int loss_slices = 0;
    for (const PlanOp& op : train.ops) {
      if (op.role != OpRole::kCompute || train.graph->node(op.node).kind != OpKind::kLoss) continue;
      ++loss_slices;
      EXPECT_EQ(op.bytes_written, kB * kT * 12 / t * 4) << t;
    }
    EXPECT_EQ(loss_slices, t);
  }
}

TEST(TensorHeads, RefusesHeadCountsTheDevicesDoNotDivide) {
  // gpt-small's blocks have 2 heads.
  const auto graph = zoo_graph("gpt-small");
  PartitionOptions options;
  options.devices = 4;
  try {
    (void)make_partitioner("tensor")->partition(graph, options);
    FAIL() << "4 devices split 2 heads";
  } catch (const InputError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("layer h0_attn has 2 heads"), std::string::npos) << message;
    EXPECT_NE(message.find("use --devices 1, 2"), std::string::npos) << message;
  }
  EXPECT_FALSE(make_partitioner("tensor")->applies(*graph, 4));
  EXPECT_TRUE(make_partitioner("tensor")->applies(*graph, 2));
  EXPECT_FALSE(make_partitioner("tensor")->applies(*zoo_graph("bert-small"), 3));
}

}  // namespace
}  // namespace tensor_heads_test
}  // namespace splitscope::testing
