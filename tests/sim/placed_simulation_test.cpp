// `--placement topology` end to end on the 2x8-h100-ib preset: a plan whose
// heavy pairs straddle the two nodes under the default mapping runs them
// over NVLink instead of InfiniBand, and the simulator says so in its
// RunInfo, with the default mapping's bytes and makespan beside it.

#include <gtest/gtest.h>

#include <vector>

#include "hand_plan.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace placed_simulation_test {
namespace {

using testing::HandPlan;

const char* const kNet = R"({"batch": 4, "input": [16], "layers": [{"type": "dense", "units": 16, "name": "fc"}]})";
constexpr int64_t kBytes = 64 << 20;

/// Device i sends kBytes to device i + 8, for i in 0..7: under the default
/// mapping every transfer leaves its node.
Plan straddling_transfers() {
  HandPlan hand(kNet, 16);
  for (int d = 0; d < 8; ++d) hand.transfer(hand.input(hand.node("fc"), d, kBytes), d + 8);
  return hand.plan();
}

/// One ring all-reduce of kBytes over participants 0, 8, 1, 9, ..., 7, 15:
/// every step of the ring crosses nodes under the default mapping.
Plan interleaved_ring() {
  HandPlan hand(kNet, 16);
  std::vector<int> inputs;
  for (int i = 0; i < 8; ++i) {
    inputs.push_back(hand.input(hand.node("fc"), i, kBytes));
    inputs.push_back(hand.input(hand.node("fc"), i + 8, kBytes));
  }
  hand.collective(CollectiveKind::kAllReduce, inputs);
  return hand.plan();
}

RunResult run_with(PlacementMode mode, const Plan& plan) {
  Simulator simulator(load_machine("2x8-h100-ib"), mode);
  return simulator.run(plan, RunOptions{});
}

TEST(PlacedSimulation, TopologyPutsEachTransfersPairInOneNodeAndRunsItOverNvlink) {
  const Machine machine = load_machine("2x8-h100-ib");
  const Plan plan = straddling_transfers();
  const double nic = machine.topology.nic.payload_bytes_per_second(LinkTraffic::kWrites);
  const double nvlink = machine.topology.link.payload_bytes_per_second(LinkTraffic::kWrites);
  // Closed forms: the eight transfers run at once, each over links of its own.
  const double default_us = machine.topology.nic.latency_us + kBytes / nic * 1e6;  // 5 µs + 64 MiB at 49.7 GB/s
  const double topology_us = machine.topology.link.latency_us + kBytes / nvlink * 1e6;

  const RunResult by_default = run_with(PlacementMode::kDefault, plan);
  EXPECT_EQ(by_default.info.placement.mode, "default");
  EXPECT_EQ(by_default.info.placement.device_map, default_device_map(16));
  EXPECT_EQ(by_default.info.placement.cross_node_bytes, 8 * kBytes);
  EXPECT_FALSE(by_default.info.placement.default_makespan_us);
  EXPECT_NEAR(by_default.timelines.front().makespan_us(), default_us, 1e-6);

  const RunResult placed = run_with(PlacementMode::kTopology, plan);
  const PlacementInfo& placement = placed.info.placement;
  EXPECT_EQ(placement.mode, "topology");
  EXPECT_EQ(placement.cross_node_bytes, 0);
  EXPECT_EQ(placement.default_cross_node_bytes, 8 * kBytes);
  ASSERT_TRUE(placement.default_makespan_us);
  EXPECT_NEAR(*placement.default_makespan_us, default_us, 1e-6);
  EXPECT_NEAR(placed.timelines.front().makespan_us(), topology_us, 1e-6);
  EXPECT_LT(topology_us, default_us / 5);
  for (int d = 0; d < 8; ++d) {
    EXPECT_EQ(placement.device_map[d] / 8, placement.device_map[d + 8] / 8) << "pair " << d;
  }
  // The timeline keeps the plan's device numbers: the copy lands on plan device 8.
  EXPECT_EQ(placed.timelines.front().spans.front().device, 8);
}

TEST(PlacedSimulation, AnInterleavedRingIsCutTwiceInsteadOfSixteenTimes) {
  const Plan plan = interleaved_ring();
  // A ring all-reduce sends each of its 16 edges 2 · 15 chunks of kBytes / 16.
  const int64_t per_edge = 2 * 15 * (kBytes / 16);
  const RunResult placed = run_with(PlacementMode::kTopology, plan);
  const PlacementInfo& placement = placed.info.placement;
  EXPECT_EQ(placement.default_cross_node_bytes, 16 * per_edge);
  EXPECT_EQ(placement.cross_node_bytes, 2 * per_edge);
  ASSERT_TRUE(placement.default_makespan_us);
  EXPECT_LT(placed.timelines.front().makespan_us(), *placement.default_makespan_us);
  // The default run predicts what the topology run reports as the default.
  EXPECT_DOUBLE_EQ(run_with(PlacementMode::kDefault, plan).timelines.front().makespan_us(),
                   *placement.default_makespan_us);
}

TEST(PlacedSimulation, APartitionersGroupedCnnSplitGainsFromTopology) {
  // AlexNet's channel split over 12 devices moves most of its bytes within
  // devices 0-4 and within devices 5-11 (5 gathers the slices of 6-11); the
  // default mapping puts 5-7 in node 0 and 8-11 in node 1, so the second
  // cluster's bytes cross nodes.
  PartitionOptions options;
  options.devices = 12;
  const auto cnn =
      std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, "cnn"))));
  const Plan plan = make_partitioner("vertical")->partition(cnn, options);
  const RunResult placed = run_with(PlacementMode::kTopology, plan);
  const PlacementInfo& placement = placed.info.placement;
  EXPECT_EQ(placement.cross_node_bytes, cross_node_bytes(plan_traffic(plan), placement.device_map, {2, 8}));
  EXPECT_LT(placement.cross_node_bytes * 3, *placement.default_cross_node_bytes);
  EXPECT_LT(placed.timelines.front().makespan_us() * 2, *placement.default_makespan_us);
}

TEST(PlacedSimulation, PlansTheDefaultAlreadyPlacesWellKeepItAndSaySo) {
  // A ring in plan order crosses nodes twice, as any split of it must.
  HandPlan hand(kNet, 16);
  std::vector<int> inputs;
  for (int d = 0; d < 16; ++d) inputs.push_back(hand.input(hand.node("fc"), d, kBytes));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  const RunResult placed = run_with(PlacementMode::kTopology, hand.plan());
  EXPECT_EQ(placed.info.placement.device_map, default_device_map(16));
  EXPECT_EQ(placed.info.placement.cross_node_bytes, placed.info.placement.default_cross_node_bytes);
  EXPECT_DOUBLE_EQ(placed.timelines.front().makespan_us(), *placed.info.placement.default_makespan_us);
  EXPECT_NE(placed.info.placement.note.find("kept"), std::string::npos) << placed.info.placement.note;
}

TEST(PlacedSimulation, OnOneNodeTopologyChangesNothingAndSaysWhy) {
  HandPlan hand(kNet, 4);
  hand.transfer(hand.input(hand.node("fc"), 0, kBytes), 3);
  Simulator simulator(load_machine("h100-nvlink-8"), PlacementMode::kTopology);
  const RunResult placed = simulator.run(hand.plan(), RunOptions{});
  EXPECT_EQ(placed.info.placement.device_map, default_device_map(4));
  EXPECT_EQ(placed.info.placement.cross_node_bytes, 0);
  EXPECT_NE(placed.info.placement.note.find("one node"), std::string::npos) << placed.info.placement.note;
  EXPECT_DOUBLE_EQ(placed.timelines.front().makespan_us(),
                   simulate(hand.plan(), load_machine("h100-nvlink-8")).makespan_us());
}

}  // namespace
}  // namespace placed_simulation_test
}  // namespace splitscope
