// Multi-tier networks (docs/machine-format.md, "network"): the routes of a
// fat tree and of a rail-optimised network, transfers through an
// oversubscribed leaf uplink against closed forms, a ring all-reduce that a
// non-blocking fat tree leaves as it was, the machine file's tier fields and
// their errors, and topology placement one tier up.

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "../cli/cli_test_support.hpp"
#include "hand_plan.hpp"
#include "plan/ring_steps.hpp"
#include "random_traffic.hpp"
#include "sim/machine/device_placement.hpp"
#include "plan/plan_traffic.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/network/node_crossing_bytes.hpp"
#include "sim/network/ring_step_group.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/machine/topology.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace network_tiers_test {
namespace {

using testing::HandPlan;
using testing::multi_node_topology;
using testing::test_machine;

constexpr double kTolUs = 1e-6;

const char* const kTierNet = R"({"batch": 4, "input": [16], "layers": [
    {"type": "dense", "units": 16, "name": "fc1"}]})";

std::vector<std::string> tier_route_names(const Topology& topology, int from, int to) {
  std::vector<std::string> names;
  const auto route = topology.route(from, to);  // held: links() views it
  for (int link : route.links()) names.push_back(topology.links()[static_cast<size_t>(link)].name);
  return names;
}

/// Nodes of `per_node` devices with one NIC each of `nic_gbps` (5 µs), ports
/// of 450 GB/s (1 µs), under a network of `kind`: `per_group` nodes per leaf
/// or rail group, oversubscription `x`, `hop_us` per switch.
TopologySpec tiered(int per_node, int nics, double nic_gbps, NetworkKind kind, int per_group, double x,
                    double hop_us) {
  TopologySpec spec = multi_node_topology(per_node, nics, 450, nic_gbps);
  spec.link.latency_us = 1;
  spec.nic.latency_us = 5;
  spec.network = NetworkSpec{kind, per_group, x, hop_us};
  return spec;
}

const Span& tier_span(const Timeline& timeline, int op, int device = -1) {
  for (const Span& span : timeline.spans) {
    if (span.op == op && (device < 0 || span.device == device)) return span;
  }
  throw std::out_of_range("no span for op " + std::to_string(op));
}

TEST(NetworkTiers, AFatTreeRoutesInsideANodeALeafAndAcrossTheSpine) {
  // 8 nodes of 2 devices, a NIC per device; 2 nodes per leaf: 4 leaves.
  const Topology topology(test_machine(16, tiered(2, 2, 50, NetworkKind::kFatTree, 2, 2, 0.5)));
  EXPECT_EQ(topology.links().size(), 2u * (16 + 16 + 4));  // ports, NICs, leaf uplinks
  EXPECT_EQ(topology.nodes_per_leaf(), 2);
  // Inside a node: the NVLink switch, its latency.
  EXPECT_EQ(tier_route_names(topology, 0, 1), (std::vector<std::string>{"port 0 up", "port 1 down"}));
  EXPECT_DOUBLE_EQ(topology.route(0, 1).latency_seconds, 1e-6);
  // Inside a leaf (nodes 0 and 1): the two NICs and one switch hop.
  EXPECT_EQ(tier_route_names(topology, 0, 3), (std::vector<std::string>{"node 0 nic 0 up", "node 1 nic 1 down"}));
  EXPECT_DOUBLE_EQ(topology.route(0, 3).latency_seconds, (5 + 0.5) * 1e-6);
  // Across leaves (node 0 under leaf 0, node 3 under leaf 1): leaf, spine, leaf.
  EXPECT_EQ(tier_route_names(topology, 1, 7), (std::vector<std::string>{"node 0 nic 1 up", "leaf 0 uplink up",
                                                                        "leaf 1 uplink down", "node 3 nic 1 down"}));
  EXPECT_DOUBLE_EQ(topology.route(1, 7).latency_seconds, (5 + 3 * 0.5) * 1e-6);
  // An uplink carries its leaf's 4 NICs' 50 GB/s over the oversubscription 2.
  const Route across = topology.route(1, 7);
  EXPECT_DOUBLE_EQ(topology.links()[static_cast<size_t>(across.link_ids[1])].bytes_per_second, 100e9);
}

TEST(NetworkTiers, ARailNetworkMeetsOneRailAtItsSwitchAndCrossesRailsThroughTheSpine) {
  // 4 nodes of 2 devices, NIC i = rail i; rail groups of 2 nodes.
  const Topology topology(test_machine(8, tiered(2, 2, 50, NetworkKind::kRail, 2, 1, 0.25)));
  EXPECT_EQ(topology.links().size(), 2u * (8 + 8 + 2 * 2));  // ports, NICs, a rail switch per (group, rail)
  // Same rail, same group: one hop through the rail switch.
  EXPECT_EQ(tier_route_names(topology, 0, 2), (std::vector<std::string>{"node 0 nic 0 up", "node 1 nic 0 down"}));
  EXPECT_DOUBLE_EQ(topology.route(0, 2).latency_seconds, (5 + 0.25) * 1e-6);
  // Another rail in the same group: no PXN, so up to the spine and down the other rail.
  EXPECT_EQ(tier_route_names(topology, 0, 3),
            (std::vector<std::string>{"node 0 nic 0 up", "group 0 rail 0 uplink up", "group 0 rail 1 uplink down",
                                      "node 1 nic 1 down"}));
  EXPECT_DOUBLE_EQ(topology.route(0, 3).latency_seconds, (5 + 3 * 0.25) * 1e-6);
  // Same rail, another group: through the spine too.
  EXPECT_EQ(tier_route_names(topology, 1, 7),
            (std::vector<std::string>{"node 0 nic 1 up", "group 0 rail 1 uplink up", "group 1 rail 1 uplink down",
                                      "node 3 nic 1 down"}));
  // A rail switch's uplink: its 2 NICs of 50 GB/s, oversubscription 1.
  const Route across = topology.route(1, 7);
  EXPECT_DOUBLE_EQ(topology.links()[static_cast<size_t>(across.link_ids[1])].bytes_per_second, 100e9);
}

TEST(NetworkTiers, WithoutTiersTheNetworkIsOneNonBlockingSwitchAsBefore) {
  const Topology topology(test_machine(8, multi_node_topology(2, 2, 450, 50)));
  EXPECT_EQ(topology.nodes_per_leaf(), topology.nodes());
  EXPECT_EQ(tier_route_names(topology, 1, 7), (std::vector<std::string>{"node 0 nic 1 up", "node 3 nic 1 down"}));
}

class OversubscribedUplink : public ::testing::TestWithParam<double> {};

TEST_P(OversubscribedUplink, SharesItsBandwidthAmongTheFlowsThatCrossTheSpine) {
  // 4 nodes of 1 device, one 10 GB/s NIC each; 2 nodes per leaf, so the
  // leaf uplink carries 2 × 10 / X GB/s. Nodes 0 and 1 (leaf 0) each send
  // 1 MB to nodes 2 and 3 (leaf 1) at once: each flow gets
  // min(10, (10 × 2 / X) / 2) GB/s.
  const double x = GetParam();
  HandPlan hand(kTierNet, 4);
  hand.transfer(hand.input(hand.node("fc1"), 0, 1'000'000), 2);
  hand.transfer(hand.input(hand.node("fc1"), 1, 1'000'000), 3);
  TopologySpec spec = multi_node_topology(1, 1, 100, 10);
  spec.network = NetworkSpec{NetworkKind::kFatTree, 2, x, 0};
  const Timeline timeline = simulate(hand.plan(), test_machine(4, spec));
  const double each_gbps = std::min(10.0, 10.0 * 2 / x / 2);
  for (int op = 0; op < 2; ++op) {
    EXPECT_NEAR(tier_span(timeline, op).duration_us(), 1e6 / (each_gbps * 1e9) * 1e6, kTolUs) << "X = " << x;
  }
  // Inside the leaf, the same two flows only cross their NICs: 100 µs whatever X.
  HandPlan local(kTierNet, 4);
  local.transfer(local.input(local.node("fc1"), 0, 1'000'000), 1);
  local.transfer(local.input(local.node("fc1"), 2, 1'000'000), 3);
  const Timeline inside = simulate(local.plan(), test_machine(4, spec));
  EXPECT_NEAR(tier_span(inside, 0).duration_us(), 100.0, kTolUs);
  EXPECT_NEAR(tier_span(inside, 1).duration_us(), 100.0, kTolUs);
}

INSTANTIATE_TEST_SUITE_P(Sim, OversubscribedUplink, ::testing::Values(1.0, 2.0, 4.0));

TEST(NetworkTiers, KNodesCrossingTheSpineAtOnceEachGetTheirShareOfTheUplink) {
  // 8 nodes of 1 device and one 10 GB/s NIC; 4 nodes per leaf, oversubscription 2:
  // a leaf's uplink has 4 × 10 / 2 = 20 GB/s. The 4 nodes of leaf 0 send 1 MB
  // each to the 4 of leaf 1: 5 GB/s each, 200 µs.
  HandPlan hand(kTierNet, 8);
  for (int i = 0; i < 4; ++i) hand.transfer(hand.input(hand.node("fc1"), i, 1'000'000), 4 + i);
  TopologySpec spec = multi_node_topology(1, 1, 100, 10);
  spec.network = NetworkSpec{NetworkKind::kFatTree, 4, 2, 0};
  const Timeline timeline = simulate(hand.plan(), test_machine(8, spec));
  for (int op = 0; op < 4; ++op) EXPECT_NEAR(tier_span(timeline, op).duration_us(), 200.0, kTolUs);
}

TEST(NetworkTiers, ARingAllReduceOnANonBlockingFatTreeTakesWhatItTakesWithoutTiers) {
  // 4 nodes of 2 devices, 2 NICs each (achieved links: the plain ring's
  // closed form), 2 nodes per leaf at oversubscription 1 and no hop latency:
  // the uplinks carry all their NICs can send, so nothing changes.
  const int n = 8;
  const int64_t bytes = 8'400'000;
  HandPlan hand(kTierNet, n);
  std::vector<int> inputs;
  for (int d = 0; d < n; ++d) inputs.push_back(hand.input(hand.node("fc1"), d, bytes));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  const TopologySpec flat = multi_node_topology(2, 2, 100, 10);
  TopologySpec tree = flat;
  tree.network = NetworkSpec{NetworkKind::kFatTree, 2, 1, 0};
  const Timeline plain = simulate(hand.plan(), test_machine(n, flat));
  const Timeline tiered_ring = simulate(hand.plan(), test_machine(n, tree));
  // The slowest step is a NIC hop at 10 GB/s: 2(N-1)/N · B / W.
  EXPECT_NEAR(plain.makespan_us(), 2.0 * (n - 1) / n * bytes / 10e9 * 1e6, kTolUs);
  EXPECT_NEAR(tiered_ring.makespan_us(), plain.makespan_us(), kTolUs);
  // At oversubscription 8 the two ring hops that cross the spine (node 1 -> 2
  // and node 3 -> 0) each have an uplink of 4 NICs × 10 / 8 = 5 GB/s to
  // themselves: half the NIC rate, so the ring takes twice as long.
  tree.network.oversubscription = 8;
  const Timeline tapered = simulate(hand.plan(), test_machine(n, tree));
  EXPECT_NEAR(tapered.makespan_us(), 2 * plain.makespan_us(), kTolUs);
}

TEST(NetworkTiers, ARingPastTheSendsLimitRunsInMixedStepGroupsPacedByItsSlowestHop) {
  // 2,048 devices in 256 nodes of 8 (ports 100 GB/s, 1 µs; a NIC per device,
  // 10 GB/s, 5 µs), 4 nodes per leaf, 0.5 µs a hop: 2(N-1)N = 8.4 million
  // sends, past the 2^22 an unrolled ring may take, so every step is one group
  // of its NVLink, NIC and uplink hops. Each step takes its slowest hop's
  // chunk time plus the longest route latency (through the spine: 5 + 3 · 0.5).
  const int n = 2048;
  const int64_t bytes = int64_t{16} << 20;  // 2,048 floats a chunk
  HandPlan hand(kTierNet, n);
  std::vector<int> inputs;
  for (int d = 0; d < n; ++d) inputs.push_back(hand.input(hand.node("fc1"), d, bytes));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  TopologySpec spec = multi_node_topology(8, 8, 100, 10);
  spec.link.latency_us = 1;
  spec.nic.latency_us = 5;
  // X = 1: a leaf's uplink carries its 32 NICs' 320 GB/s; the NICs pace the ring.
  // X = 64: 5 GB/s, and the two hops of each leaf boundary pace it.
  for (const double x : {1.0, 64.0}) {
    spec.network = NetworkSpec{NetworkKind::kFatTree, 4, x, 0.5};
    const Timeline timeline = simulate(hand.plan(), test_machine(n, spec));
    const double slowest = std::min(10e9, 320e9 / x);
    const double expected = 2.0 * (n - 1) * (static_cast<double>(bytes) / n / slowest * 1e6 + 6.5);
    ASSERT_EQ(timeline.spans.size(), static_cast<size_t>(n));
    for (const Span& span : timeline.spans) {
      EXPECT_NEAR(span.end_us, expected, 1e-6 * expected) << "X = " << x << ", device " << span.device;
      EXPECT_EQ(span.bytes, 2 * (n - 1) * bytes / n);
    }
  }
}

TEST(NetworkTiers, ARingWhoseEveryHopCrossesTheSpineAlikeRunsInStepGroupsAtItsSendsClosedForm) {
  // 32 nodes of one device and one 10 GB/s NIC (5 µs), 2 nodes per leaf,
  // oversubscription 1 (uplinks of 20 GB/s), 0.5 µs a hop; the ring visits
  // the even devices, then the odd ones (a data-parallel ring of one GPU per
  // node, as a (t, p, d) plan's), so every hop crosses the spine: NIC, uplink,
  // uplink, NIC. Each uplink is crossed by two sends of a step (10 GB/s each,
  // the NIC's rate): the links differ, the sends do not, so the ring is one
  // group of 4N links a step, 2(N-1) step events, not 2(N-1)N sends, and ends
  // at the closed form 2(N-1) · (5 + 3 · 0.5 µs + B/N / 10 GB/s).
  const int n = 32;
  const int64_t bytes = int64_t{32} << 20;
  HandPlan hand(kTierNet, n);
  std::vector<int> inputs;
  for (int d = 0; d < n; d += 2) inputs.push_back(hand.input(hand.node("fc1"), d, bytes));
  for (int d = 1; d < n; d += 2) inputs.push_back(hand.input(hand.node("fc1"), d, bytes));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  TopologySpec spec = multi_node_topology(1, 1, 100, 10);
  spec.nic.latency_us = 5;
  spec.network = NetworkSpec{NetworkKind::kFatTree, 2, 1, 0.5};
  const Machine machine = test_machine(n, spec);
  const Topology topology(machine);
  const PlanOp& ring = hand.plan().ops.back();
  const std::optional<RingSteps> steps = ring_steps(hand.plan(), ring);
  ASSERT_TRUE(steps.has_value());
  EXPECT_EQ(steps->steps, 2 * (n - 1));
  const auto group = ring_step_group(hand.plan(), ring, *steps, topology, NcclGeneration::kHopper);
  ASSERT_TRUE(group.has_value());
  EXPECT_EQ(group->links.size(), static_cast<size_t>(4 * n));
  EXPECT_DOUBLE_EQ(group->latency_seconds, 6.5e-6);
  const Timeline timeline = simulate(hand.plan(), machine);
  const double expected = 2.0 * (n - 1) * (6.5 + static_cast<double>(bytes) / n / 10e9 * 1e6);
  ASSERT_EQ(timeline.spans.size(), static_cast<size_t>(n));
  for (const Span& span : timeline.spans) EXPECT_NEAR(span.end_us, expected, 1e-9 * expected) << span.device;
  // Two nodes per leaf at oversubscription 2 (10 GB/s uplinks crossed twice a
  // step: 5 GB/s a send): the uplinks pace every send alike, still one group.
  spec.network.oversubscription = 2;
  const Machine tapered = test_machine(n, spec);
  ASSERT_TRUE(ring_step_group(hand.plan(), ring, *steps, Topology(tapered), NcclGeneration::kHopper).has_value());
  const double tapered_expected = 2.0 * (n - 1) * (6.5 + static_cast<double>(bytes) / n / 5e9 * 1e6);
  EXPECT_NEAR(simulate(hand.plan(), tapered).makespan_us(), tapered_expected, 1e-9 * tapered_expected);
}

TEST(NetworkTiers, ATransferBetweenFarDevicesOfAHugeMachineKeepsOnlyItsOwnRoute) {
  // 65,536 devices (8,192 nodes of 8): the simulator keeps the routes of the
  // device pairs a plan's transfers cross, not a table indexed by every pair
  // (65,536² of them: 137 GB, which no test machine could allocate).
  const int n = 65536;
  HandPlan hand(kTierNet, n);
  hand.transfer(hand.input(hand.node("fc1"), n - 1, 1'000'000), 0);
  TopologySpec spec = multi_node_topology(8, 8, 100, 10);
  spec.nic.latency_us = 5;
  spec.network = NetworkSpec{NetworkKind::kFatTree, 4, 1, 0.5};
  const Timeline timeline = simulate(hand.plan(), test_machine(n, spec));
  // Across the spine: 5 µs + 3 hops of 0.5 µs, then 1 MB at the NIC's 10 GB/s.
  EXPECT_NEAR(tier_span(timeline, 0).duration_us(), 6.5 + 100.0, kTolUs);
}

TEST(NetworkTiers, NcclPricedRingsOnTheSuperPodRouteEveryStepAndCountNodesAsBefore) {
  // The SuperPOD preset: 16 GPUs of 2 nodes of one rail group; a ring all-reduce
  // in plan order crosses nodes at 7 -> 8 (rail 7 to rail 0: through the spine)
  // and 15 -> 0; every send has a route and the nodes are counted as without tiers.
  const Machine pod = load_machine("h100-superpod-2048");
  const Topology topology(pod);
  EXPECT_EQ(topology.nodes(), 256);
  EXPECT_EQ(topology.nodes_per_leaf(), 32);
  EXPECT_EQ(topology.node_of(15), 1);
  EXPECT_EQ(tier_route_names(topology, 7, 8),
            (std::vector<std::string>{"node 0 nic 7 up", "group 0 rail 7 uplink up", "group 0 rail 0 uplink down",
                                      "node 1 nic 0 down"}));
  EXPECT_EQ(tier_route_names(topology, 0, 8), (std::vector<std::string>{"node 0 nic 0 up", "node 1 nic 0 down"}));
  // Rail group 1 starts at node 32 (device 256).
  EXPECT_EQ(tier_route_names(topology, 0, 256).size(), 4u);
  Machine flat = pod;
  flat.topology.network = NetworkSpec{};
  HandPlan hand(kTierNet, 16);
  std::vector<int> inputs;
  for (int d = 0; d < 16; ++d) inputs.push_back(hand.input(hand.node("fc1"), d, 64 << 20));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  const double tiered_us = simulate(hand.plan(), pod).makespan_us();
  const double flat_us = simulate(hand.plan(), flat).makespan_us();
  // NCCL's pricing (docs/cost-model.md) replaces the routes' latency by its own;
  // oversubscription 1 leaves every rate: the same time.
  EXPECT_GT(tiered_us, 0);
  EXPECT_NEAR(tiered_us, flat_us, 1e-6 * flat_us);
}

// The machine file's `network`.

nlohmann::json tiered_machine_json() {
  nlohmann::json doc = nlohmann::json::parse(machine_to_json(test_machine(16, multi_node_topology(2, 2, 450, 50))));
  doc["topology"]["network"] = {{"kind", "fat-tree"}, {"nodes_per_leaf", 4}, {"oversubscription", 2},
                                {"hop_latency_us", 0.5}, {"comment", "leaves of 4 nodes"}};
  return doc;
}

std::string tier_error(const nlohmann::json& doc) {
  try {
    parse_machine_text(doc.dump(), "m.json");
  } catch (const InputError& error) {
    return error.what();
  }
  return "no error";
}

TEST(NetworkTiersFile, ANetworkParsesAndRoundTrips) {
  const Machine machine = parse_machine_text(tiered_machine_json().dump(), "m.json");
  EXPECT_EQ(machine.topology.network, (NetworkSpec{NetworkKind::kFatTree, 4, 2, 0.5}));
  const std::string written = machine_to_json(machine);
  const Machine again = parse_machine_text(written, "again.json");
  EXPECT_EQ(again.topology.network, machine.topology.network);
  EXPECT_EQ(machine_to_json(again), written);
  nlohmann::json rail = tiered_machine_json();
  rail["topology"]["network"] = {{"kind", "rail"}, {"nodes_per_rail_group", 8}};
  const Machine rails = parse_machine_text(rail.dump(), "m.json");
  EXPECT_EQ(rails.topology.network, (NetworkSpec{NetworkKind::kRail, 8, 1, 0}));  // the defaults: 1 and 0
  EXPECT_EQ(parse_machine_text(machine_to_json(rails), "again.json").topology.network, rails.topology.network);
  // A machine without one writes none.
  EXPECT_EQ(machine_to_json(test_machine(4, multi_node_topology(2, 1, 450, 50))).find("network"), std::string::npos);
}

TEST(NetworkTiersFile, BadTierFieldsNameTheFieldAndTheFix) {
  struct Case {
    const char* field;
    nlohmann::json value;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"kind", "dragonfly", "topology.network.kind: unknown network 'dragonfly'; use fat-tree or rail"},
      {"nodes_per_leaf", 3, "topology.network.nodes_per_leaf: 3 does not divide the machine's 8 nodes"},
      {"nodes_per_leaf", 0, "topology.network.nodes_per_leaf"},
      {"oversubscription", 0.5, "topology.network.oversubscription: 0.5 is below 1; give a leaf's NIC bandwidth"},
      {"oversubscription", -1, "topology.network.oversubscription"},
      {"hop_latency_us", -2, "topology.network.hop_latency_us"},
      {"nodes_per_rail_group", 2, "topology.network.nodes_per_rail_group: unknown field"},
  };
  for (const Case& c : cases) {
    nlohmann::json doc = tiered_machine_json();
    doc["topology"]["network"][c.field] = c.value;
    const std::string message = tier_error(doc);
    EXPECT_NE(message.find(c.message), std::string::npos) << c.field << ": " << message;
  }
  nlohmann::json missing = tiered_machine_json();
  missing["topology"]["network"].erase("nodes_per_leaf");
  EXPECT_NE(tier_error(missing).find("topology.network.nodes_per_leaf"), std::string::npos) << tier_error(missing);
  // Only a multi-node machine has a network above its NICs.
  nlohmann::json on_switch = nlohmann::json::parse(machine_to_json(test_machine(4, testing::switch_topology(450, 1))));
  on_switch["topology"]["network"] = {{"kind", "fat-tree"}, {"nodes_per_leaf", 1}};
  EXPECT_NE(tier_error(on_switch).find("topology.network"), std::string::npos) << tier_error(on_switch);
}

TEST(NetworkTiersFile, TheCommandRefusesABadTierWithExitTwoAndNoOutputFile) {
  const std::string folder = testing::fresh_temp_dir("network-tiers");
  nlohmann::json doc = tiered_machine_json();
  doc["topology"]["network"]["oversubscription"] = 0.5;
  {
    std::ofstream(folder + "/m.json") << doc.dump();
  }
  const testing::CommandResult result = testing::run_splitscope(
      "run mlp --strategy data --devices 4 --backend sim --machine " + folder + "/m.json --report " + folder + "/r.json");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("topology.network.oversubscription: 0.5 is below 1; give a leaf's NIC bandwidth over its "
                            "uplink's (1 = non-blocking, 2 = half as much up as down)"),
            std::string::npos)
      << result.err;
  EXPECT_EQ(testing::read_text_file(folder + "/r.json"), "");
  // The same file with the field fixed runs.
  doc["topology"]["network"]["oversubscription"] = 2;
  {
    std::ofstream(folder + "/m.json") << doc.dump();
  }
  EXPECT_EQ(testing::run_splitscope("run mlp --strategy data --devices 4 --backend sim --machine " + folder + "/m.json")
                .exit_code,
            0);
}

TEST(NetworkTiersFile, ThePresetsHaveTheirShapes) {
  const Machine pod = load_machine("h100-superpod-2048");
  EXPECT_EQ(pod.devices, 2048);
  EXPECT_EQ(pod.topology.devices_per_node, 8);
  EXPECT_EQ(pod.topology.nics_per_node, 8);
  EXPECT_EQ(pod.topology.network, (NetworkSpec{NetworkKind::kRail, 32, 1, 0.5}));
  const Machine tree = load_machine("h100-fat-tree-16384");
  EXPECT_EQ(tree.devices, 16384);
  EXPECT_EQ(tree.topology.network, (NetworkSpec{NetworkKind::kFatTree, 4, 2, 0.5}));
  // A leaf: 4 nodes' 32 NICs of 50 GB/s down, 800 GB/s up (payload: the infiniband share).
  const Topology tree_links(tree);
  const Route across = tree_links.route(0, 32);  // node 0 (leaf 0) to node 4 (leaf 1)
  ASSERT_EQ(across.link_count, 4);
  EXPECT_DOUBLE_EQ(tree_links.links()[static_cast<size_t>(across.link_ids[1])].line_bytes_per_second, 800e9);
  const Machine rack = load_machine("gb200-nvl72");
  EXPECT_EQ(rack.devices, 72);
  EXPECT_EQ(rack.topology.kind, TopologyKind::kSwitch);
  EXPECT_DOUBLE_EQ(rack.topology.link.bandwidth_gbps, 900);  // NVLink 5: 1.8 TB/s both ways
  const Machine racks = load_machine("gb200-nvl72-x4-ib");
  EXPECT_EQ(racks.devices, 288);
  EXPECT_EQ(racks.topology.devices_per_node, 72);
  EXPECT_EQ(racks.topology.nics_per_node, 72);
  EXPECT_EQ(Topology(racks).node_of(71), 0);
  EXPECT_EQ(Topology(racks).node_of(72), 1);
}

// Topology placement one tier up.

void tier_exchange(DeviceTraffic& traffic, int a, int b, int64_t bytes) {
  traffic.add(a, b, bytes);
  traffic.add(b, a, bytes);
}

TEST(NetworkTiersPlacement, BusyNodeGroupsShareALeaf) {
  // 8 devices on 4 nodes of 2 under 2 leaves of 2 nodes. Pairs (0,1), (2,3),
  // (4,5), (6,7) are each one node's worth (1000 bytes each way); between
  // them, (0,1) talks to (4,5) and (2,3) to (6,7) with 100 bytes each way.
  DeviceTraffic traffic(8);
  for (int d = 0; d < 8; d += 2) tier_exchange(traffic, d, d + 1, 1000);
  tier_exchange(traffic, 1, 4, 100);
  tier_exchange(traffic, 3, 6, 100);
  const NodeShape shape{4, 2, 2};
  ASSERT_TRUE(shape.has_spine());
  // Default: nodes {0,1} {2,3} | {4,5} {6,7}: both 100-byte exchanges cross the spine.
  EXPECT_EQ(cross_node_bytes(traffic, default_device_map(8), shape), 400);
  EXPECT_EQ(cross_leaf_bytes(traffic, default_device_map(8), shape), 400);
  const std::vector<int> placed = topology_device_map(traffic, shape);
  // Leaf 0 takes the node groups {0,1} and {4,5}; leaf 1 {2,3} and {6,7}.
  EXPECT_EQ(placed, (std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7}));
  EXPECT_EQ(cross_node_bytes(traffic, placed, shape), 400);
  EXPECT_EQ(cross_leaf_bytes(traffic, placed, shape), 0);
  // Without a spine the same traffic keeps the default: nothing crosses fewer nodes.
  EXPECT_EQ(topology_device_map(traffic, NodeShape{4, 2}), default_device_map(8));
}

TEST(NetworkTiersPlacement, TheSimulatorPlacesAcrossTiersAndSaysWhatCrossesTheSpine) {
  // The traffic of BusyNodeGroupsShareALeaf as a plan's transfers, in MiB, on
  // 4 nodes of 2 under 2 leaves of a fat tree.
  HandPlan hand(kTierNet, 8);
  const auto send = [&](int from, int to, int64_t mib) {
    hand.transfer(hand.input(hand.node("fc1"), from, mib << 20), to);
    hand.transfer(hand.input(hand.node("fc1"), to, mib << 20), from);
  };
  for (int d = 0; d < 8; d += 2) send(d, d + 1, 10);
  send(1, 4, 1);
  send(3, 6, 1);
  TopologySpec spec = multi_node_topology(2, 2, 450, 50);
  spec.network = NetworkSpec{NetworkKind::kFatTree, 2, 2, 0.5};
  const Simulator simulator(test_machine(8, spec), PlacementMode::kTopology);
  const PlacementInfo placement = simulator.place(hand.plan());
  EXPECT_EQ(placement.device_map, (std::vector<int>{0, 1, 4, 5, 2, 3, 6, 7}));
  EXPECT_EQ(placement.cross_node_bytes, int64_t{4} << 20);
  EXPECT_EQ(placement.default_cross_node_bytes, int64_t{4} << 20);
  EXPECT_EQ(placement.note, "across the spine: 0.0 MiB (default mapping 4.0 MiB)");
  // The default placement counts the same bytes across nodes, and has no note.
  const PlacementInfo by_default = Simulator(test_machine(8, spec), PlacementMode::kDefault).place(hand.plan());
  EXPECT_EQ(by_default.cross_node_bytes, int64_t{4} << 20);
  EXPECT_EQ(by_default.note, "");
}

TEST(NetworkTiersPlacement, NeverMovesMoreBytesAcrossTheSpineOrNodesThanTheDefault) {
  std::mt19937_64 random(20261207);
  int improved = 0;
  for (int trial = 0; trial < 1000; ++trial) {
    const int per_node = std::uniform_int_distribution<int>(1, 4)(random);
    const int per_leaf = std::uniform_int_distribution<int>(1, 3)(random);
    const int devices = std::uniform_int_distribution<int>(2, 24)(random);
    const int needed_nodes = (devices + per_node - 1) / per_node;
    const int leaves = (needed_nodes + per_leaf - 1) / per_leaf + std::uniform_int_distribution<int>(0, 1)(random);
    const NodeShape shape{leaves * per_leaf, per_node, per_leaf};
    const DeviceTraffic traffic = testing::random_skewed_traffic(devices, random);
    const std::vector<int> placed = topology_device_map(traffic, shape);
    ASSERT_EQ(placed.size(), static_cast<size_t>(devices));
    std::set<int> seen(placed.begin(), placed.end());
    ASSERT_EQ(seen.size(), placed.size()) << "trial " << trial;
    ASSERT_LT(*seen.rbegin(), shape.nodes * shape.devices_per_node);
    const std::vector<int> fallback = default_device_map(devices);
    ASSERT_LE(cross_leaf_bytes(traffic, placed, shape), cross_leaf_bytes(traffic, fallback, shape)) << trial;
    ASSERT_LE(cross_node_bytes(traffic, placed, shape), cross_node_bytes(traffic, fallback, shape)) << trial;
    if (placed != fallback) ++improved;
  }
  EXPECT_GT(improved, 300);
}

TEST(NetworkTiersPlacement, TheDefaultMappingsBytesAcrossNodesNeedNoTrafficMatrix) {
  // Rings (even and uneven chunks, in and out of order), a transfer and a
  // concat over 8 devices: op by op equals the matrix's count, on every node size.
  HandPlan hand(kTierNet, 8);
  hand.transfer(hand.input(hand.node("fc1"), 1, 1000), 6);
  std::vector<int> even;
  std::vector<int> uneven;
  std::vector<int> shuffled;
  for (int d = 0; d < 8; ++d) {
    even.push_back(hand.input(hand.node("fc1"), d, 8 * 4 * 100));
    uneven.push_back(hand.input(hand.node("fc1"), d, 4 * 1001));  // 1001 floats over 8 chunks
  }
  for (int d : {3, 0, 6, 1, 7, 2}) shuffled.push_back(hand.input(hand.node("fc1"), d, 4 * 999));
  hand.collective(CollectiveKind::kAllReduce, even);
  hand.collective(CollectiveKind::kAllReduce, uneven);
  hand.collective(CollectiveKind::kAllGather, shuffled);
  hand.collective(CollectiveKind::kConcat, shuffled, 2);
  const DeviceTraffic traffic = plan_traffic(hand.plan());
  for (const int per_node : {1, 2, 4, 8}) {
    const NodeShape shape{8 / per_node, per_node};
    const int64_t expected = cross_node_bytes(traffic, default_device_map(8), shape);
    EXPECT_EQ(default_cross_node_bytes(hand.plan(), shape), expected) << per_node << " per node";
    if (per_node < 8) {
      EXPECT_GT(expected, 0);
    }
  }
}

}  // namespace
}  // namespace network_tiers_test
}  // namespace splitscope
