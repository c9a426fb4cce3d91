// The simulator on plans from the real partitioners: the closed forms again,
// every zoo network under every strategy, and the machine's cost model
// steering a partitioner's balance.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "../common/gpt_block_network.hpp"
#include "hand_plan.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/op_signature.hpp"
#include "ir/training.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "sim/costs/machine_cost_function.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace partitioned_test {
namespace {

using testing::free_links;
using testing::switch_topology;
using testing::test_machine;

std::shared_ptr<const Graph> graph_of(const std::string& json) {
  return std::make_shared<const Graph>(lower(parse_model_text(json, "net.json")));
}

Plan partition(const std::shared_ptr<const Graph>& graph, const std::string& strategy, int devices,
               int microbatches = 1, std::shared_ptr<const CostFunction> cost = nullptr) {
  PartitionOptions options;
  options.devices = devices;
  options.microbatches = microbatches;
  options.cost = std::move(cost);
  Plan plan = make_partitioner(strategy)->partition(graph, options);
  check(plan);
  return plan;
}

/// A compute-bound device: 1 TFLOP/s, 1000 GB/s, no launch overhead, efficiency 1.
Machine compute_bound(int devices, const TopologySpec& topology) {
  return test_machine(devices, topology, 1.0, 0.0);
}

double compute_us(const Timeline& timeline, int device) {
  double busy = 0;
  for (const Span& span : timeline.spans) {
    if (span.device == device && span.lane == Lane::kCompute) busy += span.duration_us();
  }
  return busy;
}

// Dense 1024 -> 1024 over 64 rows: 2·64·1024·1024 = 134,217,728 FLOPs =
// 134.217728 µs at 1 TFLOP/s; its 4,722,688 bytes take 4.72 µs at 1000 GB/s,
// so it is compute-bound.
const char* const kTwoLayers = R"({"batch": 64, "input": [1024], "layers": [
    {"type": "dense", "units": 1024, "name": "fc1"},
    {"type": "dense", "units": 1024, "name": "fc2"}]})";

TEST(Partitioned, HorizontalSplitOfABalancedTwoLayerNet) {
  const Plan plan = partition(graph_of(kTwoLayers), "horizontal", 2);
  const Timeline timeline = simulate(plan, compute_bound(2, switch_topology(10, 3)));
  // t1 + (3 µs + 64·1024·4 B / 10 GB/s = 26.2144 µs) + t2
  EXPECT_NEAR(timeline.makespan_us(), 134.217728 + 3 + 26.2144 + 134.217728, 1e-6);
}

TEST(Partitioned, PipelineOfBalancedStagesWithFreeLinks) {
  // 4 dense layers on 4 devices, 8 micro-batches of 8 rows: a stage is
  // 2·8·1024·1024 = 16,777,216 FLOPs = 16.777216 µs (its 4,263,936 bytes: 4.26 µs).
  const auto graph = graph_of(R"({"batch": 64, "input": [1024], "layers": [
      {"type": "dense", "units": 1024}, {"type": "dense", "units": 1024},
      {"type": "dense", "units": 1024}, {"type": "dense", "units": 1024}]})");
  const int n = 4;
  const int m = 8;
  const Plan plan = partition(graph, "pipeline", n, m);
  const Timeline timeline = simulate(plan, compute_bound(n, free_links()));
  const double stage = 16.777216;
  EXPECT_NEAR(timeline.makespan_us(), (m + n - 1) * stage, 1e-6);  // 11 stages
  for (int d = 0; d < n; ++d) {
    EXPECT_NEAR(1.0 - compute_us(timeline, d) / timeline.makespan_us(), (n - 1.0) / (m + n - 1.0), 1e-9)
        << "device " << d;
  }
  EXPECT_NEAR(*ideal_bubble(plan), 3.0 / 11.0, 1e-12);
}

TEST(Partitioned, RnnHorizontalSplitRunsTheTimeStepWavefront) {
  // 4 stacked LSTM layers of 256 over 8 steps, input 256, batch 16: every cell
  // is 2·4·256·(256+256)·16 = 16,777,216 FLOPs = 16.777216 µs (compute-bound).
  const auto graph = graph_of(R"({"batch": 16, "input": [8, 256], "layers": [
      {"type": "lstm", "hidden": 256, "layers": 4, "return_sequences": false, "name": "lstm"}]})");
  const Plan plan = partition(graph, "horizontal", 4);
  const Timeline timeline = simulate(plan, compute_bound(4, free_links()));
  EXPECT_NEAR(timeline.makespan_us(), (8 + 4 - 1) * 16.777216, 1e-6);  // (T + L - 1) · t
}

TEST(Partitioned, EveryZooNetworkUnderEveryStrategySimulates) {
  const Machine machine = load_machine("h100-nvlink-8");
  Simulator simulator(machine);
  for (const auto& name : zoo_names(ZooShelf::kNetworks)) {
    const auto graph =
        std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name))));
    for (const auto& strategy : strategy_names()) {
      const int devices = std::min(4, make_partitioner(strategy)->max_devices(*graph));
      const int microbatches = strategy == "pipeline" ? 2 : 1;
      SCOPED_TRACE(name + " " + strategy + " on " + std::to_string(devices));
      const Plan plan = partition(graph, strategy, devices, microbatches);
      const RunResult result = simulator.run(plan, {});
      const Timeline& timeline = result.timelines.at(0);
      EXPECT_GT(timeline.makespan_us(), 0.0);
      // Every compute op ran once on its device, and the FLOPs add up to the network's
      // (each micro-batch computes its rows).
      int64_t flops = 0;
      size_t compute_spans = 0;
      for (const Span& span : timeline.spans) {
        if (span.lane != Lane::kCompute) continue;
        EXPECT_EQ(span.device, plan.op(span.op).device);
        flops += span.flops;
        ++compute_spans;
        EXPECT_GE(span.end_us, span.start_us);
      }
      EXPECT_EQ(flops, graph->total_flops());
      // The bytes the spans moved are what the plan says each transfer and
      // collective moves (for an all-reduce 2(N-1)/N·B per participant).
      std::vector<int64_t> moved(plan.ops.size(), 0);
      for (const Span& span : timeline.spans) {
        if (span.lane == Lane::kCopyIn) moved[static_cast<size_t>(span.op)] += span.bytes;
      }
      for (const PlanOp& op : plan.ops) {
        if (op.role == OpRole::kTransfer || op.role == OpRole::kCollective) {
          EXPECT_EQ(moved[static_cast<size_t>(op.id)], op.bytes_moved) << op_label(plan, op);
        }
      }
      EXPECT_EQ(compute_spans, static_cast<size_t>(std::count_if(plan.ops.begin(), plan.ops.end(), [](const PlanOp& op) {
                  return op.role == OpRole::kCompute || op.role == OpRole::kEpilogue;
                })));
    }
  }
}

// tensor's vocabulary-parallel output layer (partitioners/head_split.hpp), as
// simulated: one GPT block, B 2, T 8, H 16, then ln_f and lm_head to a
// vocabulary of 10, trained over t devices.
TEST(Partitioned, TensorSplitsTheOutputLayerByVocabularyInTheSimulation) {
  const std::string net = test_networks::gpt_block_network("one-block-head", 2, 8, 10, true);
  constexpr int64_t kB = 2, kT = 8, kH = 16;
  const auto training = std::make_shared<const Graph>(training_graph(*graph_of(net), Optimizer{}));
  // 10 tokens over 2: 5 and 5; over 4: 3, 3, 2 and 2 (the first 10 mod 4 one more).
  for (const auto& [t, shards] : std::vector<std::pair<int, std::vector<int64_t>>>{{2, {5, 5}}, {4, {3, 3, 2, 2}}}) {
    const Plan plan = partition(training, "tensor", t);
    const Timeline timeline = simulate(plan, compute_bound(t, free_links()));
    std::vector<int64_t> head_flops(static_cast<size_t>(t), 0);
    std::set<int> collectives;
    for (const Span& span : timeline.spans) {
      if (span.op < 0) continue;
      const PlanOp& op = plan.ops.at(static_cast<size_t>(span.op));
      // The forward product alone (not the optimizer's update of its weights).
      if (op.role == OpRole::kCompute && plan.graph->node(op.node).name == "lm_head") {
        head_flops.at(static_cast<size_t>(span.device)) += span.flops;
      }
      if (span.kind == SpanKind::kCollective) collectives.insert(span.op);
    }
    for (int device = 0; device < t; ++device) {
      // 2·B·T·H·(its shard of V): 1/t of lm_head's 2·B·T·H·V where t divides V.
      EXPECT_EQ(head_flops.at(static_cast<size_t>(device)), 2 * kB * kT * kH * shards.at(static_cast<size_t>(device)))
          << "t=" << t << " device " << device;
    }
    // The block's 4 all-reduces and lm_head's input gradient's, each of
    // B·T·H floats; the loss (mean squared error on the logits, on each
    // device's shard) adds none.
    std::vector<std::string> reduced;
    for (int id : collectives) {
      const PlanOp& op = plan.ops.at(static_cast<size_t>(id));
      EXPECT_EQ(op.collective, CollectiveKind::kAllReduce);
      EXPECT_EQ(op.payload_bytes, kB * kT * kH * 4);
      EXPECT_EQ(op.bytes_moved, 2 * (t - 1) * kB * kT * kH * 4);
      reduced.push_back(plan.graph->node(op.node).name);
    }
    std::sort(reduced.begin(), reduced.end());
    EXPECT_EQ(reduced, (std::vector<std::string>{"fc/grad_input", "lm_head/grad_input", "mlp_proj", "proj",
                                                 "qkv/grad_input"}))
        << "t=" << t;
  }
}

TEST(Partitioned, AVerticalSplitBehindOneBusWaitsLongerThanOnASwitch) {
  // The same plan, the same link speed: on a switch every device has its own
  // port, behind one host bus the all-gathers' sends share it.
  const auto graph = std::make_shared<const Graph>(
      lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, "mlp-small"))));
  const Plan plan = partition(graph, "vertical", 4);
  const double on_switch = simulate(plan, compute_bound(4, switch_topology(1, 0))).makespan_us();
  const double on_bus = simulate(plan, compute_bound(4, testing::host_staged_topology(4, 1, 0))).makespan_us();
  EXPECT_GT(on_bus, on_switch * 1.5);
}

TEST(Partitioned, TheMachinesCostModelSteersTheLayerBalance) {
  // fc1 (512 -> 1024) and three dense 1024 -> 1024 on 2 devices. By the
  // default roofline (60 TFLOP/s, 3 TB/s, 5 µs) they cost about 6.1, 7.2,
  // 7.2, 7.2 µs: fc1 + fc2 | fc3 + fc4. If the machine's calibration says
  // fc1 takes 1000 µs (the others 134.2 µs on it), the balance is fc1 alone,
  // then fc2..fc4. (Signatures are by shape: fc1 is the only 512 -> 1024.)
  const auto graph = graph_of(R"({"batch": 64, "input": [512], "layers": [
      {"type": "dense", "units": 1024, "name": "fc1"}, {"type": "dense", "units": 1024, "name": "fc2"},
      {"type": "dense", "units": 1024, "name": "fc3"}, {"type": "dense", "units": 1024, "name": "fc4"}]})");
  Machine machine = compute_bound(2, switch_topology(10, 3));
  const NodeId fc1 = 1;
  const NodeId fc2 = 2;
  ASSERT_EQ(graph->node(fc1).name, "fc1");
  machine.calibration.op_times_us[op_signature(*graph, fc1, full_slice(graph->node(fc1), {0, 64}))] = 1000;

  auto device_of = [](const Plan& plan, NodeId node) {
    for (const PlanOp& op : plan.ops) {
      if (op.role == OpRole::kCompute && op.node == node) return op.device;
    }
    return -1;
  };
  const Plan by_roofline = partition(graph, "horizontal", 2);
  const Plan by_machine = partition(graph, "horizontal", 2, 1, std::make_shared<MachineCostFunction>(machine));
  EXPECT_EQ(device_of(by_roofline, fc2), 0);
  EXPECT_EQ(device_of(by_machine, fc2), 1);
  // Simulated, both take all four layers plus one transfer of 64·1024·4 bytes
  // (3 + 26.2144 µs): the devices of a layer split take turns, so the balance
  // cannot help without micro-batches (the lesson of `horizontal`).
  const double expected = 1000 + 3 * 134.217728 + 29.2144;
  EXPECT_NEAR(simulate(by_machine, machine).makespan_us(), expected, 1e-6);
  EXPECT_NEAR(simulate(by_roofline, machine).makespan_us(), expected, 1e-6);
}

}  // namespace
}  // namespace partitioned_test
}  // namespace splitscope
