// NCCL's tuning model (sim/network/nccl_protocol.hpp): the protocol it picks by
// message size, each protocol's latency and bus bandwidth, and ring
// collectives simulated by it, each worked out by hand below.
//
// The machine: 4 V100-like GPUs (fp32 15.7, fp16 125 TFLOP/s: Volta) on
// NVLink switch ports of 150 GB/s per direction (6 NVLink 2 links of 25).
// Payload rate 150 · 128/144 = 133.33 GB/s; NCCL counts 20 of every 25 GB/s
// (topo.h SM70_NVLINK_BW), 120 GB/s, which is lower, so busbw(Simple) = 120.
// An all-reduce over 4 ranks has 6 steps; algbw = busbw · 4/6.
//
//   protocol  busbw                    algbw   latency
//   LL        min(120/4, 39) = 30      20      6.6 + 6 · 0.6 = 10.2 µs
//   LL128     120 · 0.92 = 110.4       73.6    14.0 + 6 · 1.9 = 25.4 µs
//   Simple    120                      80      8.4 + 6 · 3.4 = 28.8 µs
//
// Crossovers (S in bytes, times in µs, GB/s = 1e3 bytes/µs):
//   LL = LL128:     10.2 + S/20e3 = 25.4 + S/73.6e3 -> S = 15.2e3 / (1/20 - 1/73.6) = 417,432 B
//   LL128 = Simple: 25.4 + S/73.6e3 = 28.8 + S/80e3 -> S = 3.4e3 / (6.4 / 5888) = 3,128,000 B

#include "sim/network/nccl_protocol.hpp"

#include <gtest/gtest.h>

#include "hand_plan.hpp"
#include "plan/collective_schedule.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/machine/topology.hpp"

namespace splitscope {
namespace nccl_protocol_test {
namespace {

using testing::HandPlan;
using testing::multi_node_topology;
using testing::test_machine;

constexpr int kRanks = 4;

DeviceSpec v100() {
  DeviceSpec device;
  device.peak_tflops = {{"fp32", 15.7}, {"fp16", 125}};
  return device;
}

NcclRing volta_ring(CollectiveKind kind = CollectiveKind::kAllReduce) {
  NcclRing ring;
  ring.kind = kind;
  ring.ranks = kRanks;
  ring.intra = NcclHardware::kNvlink;
  ring.generation = NcclGeneration::kVolta;
  ring.bus_bytes_per_second = 120e9;
  return ring;
}

Machine volta_machine(int devices, LinkProtocol protocol, double gbps) {
  TopologySpec topology;
  topology.kind = TopologyKind::kSwitch;
  topology.link = {gbps, 3, protocol};
  Machine machine = test_machine(devices, topology);
  machine.device.peak_tflops = v100().peak_tflops;
  return machine;
}

/// One all-reduce of `bytes` per participant over every device of `machine`.
HandPlan all_reduce_plan(const Machine& machine, int64_t bytes) {
  HandPlan hand(R"({"batch": 4, "input": [16], "layers": [{"type": "dense", "units": 16, "name": "fc"}]})",
                machine.devices);
  std::vector<int> inputs;
  for (int d = 0; d < machine.devices; ++d) inputs.push_back(hand.input(hand.node("fc"), d, bytes));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  return hand;
}

/// The makespan of that all-reduce, simulated.
double all_reduce_us(const Machine& machine, int64_t bytes) {
  return simulate(all_reduce_plan(machine, bytes).plan(), machine).makespan_us();
}

TEST(NcclProtocol, TheGenerationComesFromTheDatasheetPrecisions) {
  EXPECT_EQ(nccl_generation(v100()), NcclGeneration::kVolta);
  DeviceSpec p100;
  p100.peak_tflops = {{"fp32", 9.3}, {"fp16", 18.7}};  // fp16 on the CUDA cores: 2x
  EXPECT_EQ(nccl_generation(p100), NcclGeneration::kPascal);
  DeviceSpec a100;
  a100.peak_tflops = {{"fp32", 19.5}, {"tf32", 156}, {"bf16", 312}};
  EXPECT_EQ(nccl_generation(a100), NcclGeneration::kAmpere);
  DeviceSpec h100;
  h100.peak_tflops = {{"fp32", 67}, {"tf32", 494.5}, {"fp8", 1979}};
  EXPECT_EQ(nccl_generation(h100), NcclGeneration::kHopper);
}

TEST(NcclProtocol, LinkSharesAreTopoHsFigures) {
  EXPECT_DOUBLE_EQ(nccl_link_share(NcclHardware::kNvlink, NcclGeneration::kPascal), 18.0 / 20);
  EXPECT_DOUBLE_EQ(nccl_link_share(NcclHardware::kNvlink, NcclGeneration::kVolta), 0.8);
  EXPECT_DOUBLE_EQ(nccl_link_share(NcclHardware::kNvlink, NcclGeneration::kHopper), 20.6 / 25);
  // 12 GB/s of 15.754 (PCIe 3.0 x16), the same 76.2% as our read completions.
  EXPECT_NEAR(nccl_link_share(NcclHardware::kPci, NcclGeneration::kVolta), 0.7617, 1e-4);
  EXPECT_DOUBLE_EQ(nccl_link_share(NcclHardware::kNet, NcclGeneration::kVolta), 1.0);
}

TEST(NcclProtocol, LatencyAndBandwidthOfEachProtocol) {
  const NcclRing ring = volta_ring();
  EXPECT_EQ(ring.steps(), 6);
  EXPECT_NEAR(nccl_latency_seconds(ring, NcclProtocol::kLl) * 1e6, 10.2, 1e-9);
  EXPECT_NEAR(nccl_latency_seconds(ring, NcclProtocol::kLl128) * 1e6, 25.4, 1e-9);
  EXPECT_NEAR(nccl_latency_seconds(ring, NcclProtocol::kSimple) * 1e6, 28.8, 1e-9);
  EXPECT_DOUBLE_EQ(nccl_protocol_rate(ring, NcclProtocol::kLl, 120e9), 30e9);
  EXPECT_DOUBLE_EQ(nccl_protocol_rate(ring, NcclProtocol::kLl128, 120e9), 110.4e9);
  EXPECT_DOUBLE_EQ(nccl_protocol_rate(ring, NcclProtocol::kSimple, 120e9), 120e9);
  // LL is capped at llMaxBw per GPU: 39 GB/s on Volta, 87.7 on Hopper.
  EXPECT_DOUBLE_EQ(nccl_protocol_rate(ring, NcclProtocol::kLl, 400e9), 39e9);
  NcclRing hopper = ring;
  hopper.generation = NcclGeneration::kHopper;
  EXPECT_DOUBLE_EQ(nccl_protocol_rate(hopper, NcclProtocol::kLl, 400e9), 87.7e9);
  // An all-gather in one node: LL at 1/3 (120/3 = 40, then the 39 cap).
  EXPECT_DOUBLE_EQ(nccl_protocol_rate(volta_ring(CollectiveKind::kAllGather), NcclProtocol::kLl, 90e9), 30e9);
  // 64 KiB by LL: 10.2 + 65,536 / 20e3 = 13.4768 µs.
  EXPECT_NEAR(nccl_seconds(ring, NcclProtocol::kLl, 65536) * 1e6, 13.4768, 1e-9);
}

TEST(NcclProtocol, SmallMessagesTakeLlLargeOnesSimpleWithLl128Between) {
  const NcclRing ring = volta_ring();
  EXPECT_EQ(nccl_protocol(ring, 65536), NcclProtocol::kLl);
  EXPECT_EQ(nccl_protocol(ring, 417000), NcclProtocol::kLl);     // below 417,432
  EXPECT_EQ(nccl_protocol(ring, 418000), NcclProtocol::kLl128);  // above it
  EXPECT_EQ(nccl_protocol(ring, 3120000), NcclProtocol::kLl128);  // below 3,128,000
  EXPECT_EQ(nccl_protocol(ring, 3136000), NcclProtocol::kSimple);
  EXPECT_EQ(nccl_protocol(ring, 64 << 20), NcclProtocol::kSimple);
  // Without LL128 (PCIe, or Pascal) LL runs until Simple is faster:
  // 10.2 + S/20e3 = 28.8 + S/80e3 -> S = 18.6e3 / (1/20 - 1/80) = 496,000 B.
  NcclRing pascal = ring;
  pascal.generation = NcclGeneration::kPascal;
  EXPECT_FALSE(nccl_enabled(pascal, NcclProtocol::kLl128));
  EXPECT_EQ(nccl_protocol(pascal, 495000), NcclProtocol::kLl);
  EXPECT_EQ(nccl_protocol(pascal, 497000), NcclProtocol::kSimple);
}

TEST(NcclProtocol, ASmallAllReduceRunsAsLl) {
  // 64 KiB: 4 chunks of 16 KiB. Each of the 6 steps pays 10.2/6 = 1.7 µs and
  // moves 16,384 B at LL's 30 GB/s, 0.546 µs: 6 · 2.2461 = 13.4768 µs, NCCL's estimate.
  const double us = all_reduce_us(volta_machine(kRanks, LinkProtocol::kNvlink, 150), 65536);
  EXPECT_NEAR(us, 10.2 + 65536 / 20e3, 1e-6);
}

TEST(NcclProtocol, ALargeAllReduceRunsAsSimpleAtNcclsLinkRate) {
  // 64 MiB: Simple; 6 steps of 16 MiB at 120 GB/s = 139.81 µs, + 4.8 µs each:
  // 28.8 + 67,108,864 / 80e3 = 867.66 µs. At the payload rate (133.33 GB/s)
  // and the file's 3 µs a step it would have been 773.0 µs.
  const double us = all_reduce_us(volta_machine(kRanks, LinkProtocol::kNvlink, 150), 64 << 20);
  EXPECT_NEAR(us, 28.8 + 67108864 / 80e3, 1e-6);
  EXPECT_NEAR(us, 867.66, 0.01);
}

TEST(NcclProtocol, AMidSizedAllReduceRunsAsLl128) {
  // 1 MiB: 25.4 + 1,048,576 / 73.6e3 = 39.647 µs.
  const double us = all_reduce_us(volta_machine(kRanks, LinkProtocol::kNvlink, 150), 1 << 20);
  EXPECT_NEAR(us, 25.4 + 1048576 / 73.6e3, 1e-6);
}

TEST(NcclProtocol, AnAchievedLinkIsNoNcclLink) {
  // A measured rate: the ring's plain sends, 6 steps of 16 MiB at 150 GB/s + 3 µs.
  const double us = all_reduce_us(volta_machine(kRanks, LinkProtocol::kAchieved, 150), 64 << 20);
  EXPECT_NEAR(us, 6 * (16777216 / 150e3 + 3), 1e-6);
}

TEST(NcclProtocol, AHostStagedPcieRingHasNoLl128) {
  // 4 GPUs, one per PCIe 3.0 x16 bus (15.75 GB/s): a send goes up at 14.4
  // and down at 12.0 GB/s (64/84 · 15.75); NCCL's PCI_BW share, 12 of
  // 15.754, is 11.997 GB/s of 15.75, so busbw(Simple) = 11.997 GB/s. 64 MiB
  // by Simple: 8.4 + 6 · 5.7 = 42.6 µs + 67,108,864 / (11.997e3 · 4/6) µs =
  // 8433.3 µs (LL would be 4× slower, and LL128 is off on PCIe).
  TopologySpec topology;
  topology.kind = TopologyKind::kHostStaged;
  topology.devices_per_bus = 1;
  topology.bus = {15.75, 10, LinkProtocol::kPcie};
  Machine machine = test_machine(kRanks, topology);
  machine.device.peak_tflops = v100().peak_tflops;
  const double bus = 15.75e9 * 12 / (8.0 * 16 * 128 / 130 / 8);
  const double us = all_reduce_us(machine, 64 << 20);
  EXPECT_NEAR(us, 42.6 + 67108864.0 / (bus * 4 / 6) * 1e6, 1e-6);
  EXPECT_NEAR(us, 8433.3, 0.1);
}

TEST(NcclProtocol, AcrossNodesTheInterStepsPayTheNetworksLatency) {
  // 2 nodes of 2 Hopper GPUs (NVLink 450 GB/s ports, one 50 GB/s NIC a GPU).
  // An all-reduce ring of 4 has 6 steps, 2·nodes = 4 of them across the
  // network; in-node steps pay max(hwLat, the network post overhead: 1 µs,
  // 3 µs for Simple):
  //   Simple: 8.4 + 2 · max(3.4, 3) + 4 · 14.0 = 71.2 µs
  //   LL:     6.6 + 2 · max(0.6, 1) + 4 · 2.7  = 19.4 µs
  //   LL128: 14.0 + 2 · max(1.9, 1) + 4 · 4.0  = 33.8 µs
  TopologySpec topology = multi_node_topology(2, 2, 450, 50);
  topology.link.protocol = LinkProtocol::kNvlink;
  topology.nic.protocol = LinkProtocol::kInfiniband;
  Machine machine = test_machine(4, topology);
  machine.device.peak_tflops = {{"fp32", 67}, {"tf32", 494.5}, {"fp8", 1979}};
  HandPlan hand(R"({"batch": 4, "input": [16], "layers": [{"type": "dense", "units": 16, "name": "fc"}]})", 4);
  std::vector<int> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back(hand.input(hand.node("fc"), d, 64 << 20));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  const PlanOp& op = hand.plan().ops.at(static_cast<size_t>(hand.last_op()));
  const Topology links(machine);
  NcclRingSends sends;
  ASSERT_TRUE(nccl_ring_sends(hand.plan(), op, collective_schedule(hand.plan(), op), links,
                              NcclGeneration::kHopper, &sends));
  EXPECT_EQ(sends.ring.nodes, 2);
  EXPECT_EQ(sends.ring.intra, NcclHardware::kNvlink);
  EXPECT_NEAR(nccl_latency_seconds(sends.ring, NcclProtocol::kSimple) * 1e6, 71.2, 1e-9);
  EXPECT_NEAR(nccl_latency_seconds(sends.ring, NcclProtocol::kLl) * 1e6, 19.4, 1e-9);
  EXPECT_NEAR(nccl_latency_seconds(sends.ring, NcclProtocol::kLl128) * 1e6, 33.8, 1e-9);
  // The slowest link is a NIC: 50 GB/s at InfiniBand's 4096/4122 payload
  // (NCCL takes a NIC's full speed). 64 MiB runs as Simple, each send paying 71.2/6 µs.
  EXPECT_DOUBLE_EQ(sends.ring.bus_bytes_per_second, 50e9 * 4096 / 4122);
  EXPECT_EQ(sends.protocol, NcclProtocol::kSimple);
  EXPECT_NEAR(sends.send_latency_seconds * 1e6, 71.2 / 6, 1e-9);
  // LL across 2 nodes is capped at 39 GB/s (llMaxBws, Intel column).
  EXPECT_DOUBLE_EQ(nccl_protocol_rate(sends.ring, NcclProtocol::kLl, 400e9), 39e9);
}

/// 4 nodes of 2 Hopper GPUs (NVLink 450 GB/s ports, one 50 GB/s NIC a GPU).
Machine hopper_nodes(int nodes) {
  TopologySpec topology = multi_node_topology(2, 2, 450, 50);
  topology.link.protocol = LinkProtocol::kNvlink;
  topology.nic.protocol = LinkProtocol::kInfiniband;
  Machine machine = test_machine(2 * nodes, topology);
  machine.device.peak_tflops = {{"fp32", 67}, {"tf32", 494.5}, {"fp8", 1979}};
  return machine;
}

/// NCCL's pricing of an all-reduce of `bytes` per rank over every device of `machine`, and its simulated makespan.
struct PricedAllReduce {
  NcclRingSends sends;
  double simulated_us = 0;
};

PricedAllReduce priced_all_reduce(const Machine& machine, int64_t bytes) {
  const HandPlan hand = all_reduce_plan(machine, bytes);
  const PlanOp& op = hand.plan().ops.at(static_cast<size_t>(hand.last_op()));
  PricedAllReduce priced;
  const Topology links(machine);
  EXPECT_TRUE(nccl_ring_sends(hand.plan(), op, collective_schedule(hand.plan(), op), links, NcclGeneration::kHopper,
                              &priced.sends));
  priced.simulated_us = simulate(hand.plan(), machine).makespan_us();
  return priced;
}

TEST(NcclTree, LatencyAndBandwidthOfEachProtocolAcrossNodes) {
  // 8 ranks on 4 nodes: 2 a node, log2(4) = 2 levels of tree.
  //   LL:     6.8  + 2 · ((2 - 1) · 0.6  + 2 · 5.0) = 28.0 µs
  //   LL128: 14.0  + 2 · ((2 - 1) · 1.25 + 2 · 8.5) = 50.5 µs
  //   Simple: 0    + 2 · ((2 - 1) · 28   + 2 · 28)  = 168 µs
  const PricedAllReduce priced = priced_all_reduce(hopper_nodes(4), 4096);
  const NcclRing& ring = priced.sends.ring;
  ASSERT_EQ(ring.nodes, 4);
  EXPECT_NEAR(nccl_tree_latency_seconds(ring, NcclProtocol::kLl) * 1e6, 28.0, 1e-9);
  EXPECT_NEAR(nccl_tree_latency_seconds(ring, NcclProtocol::kLl128) * 1e6, 50.5, 1e-9);
  EXPECT_NEAR(nccl_tree_latency_seconds(ring, NcclProtocol::kSimple) * 1e6, 168.0, 1e-9);
  // The tree's bw is the ring's bottleneck, the NIC (50 GB/s at
  // InfiniBand's 4096/4122), 0.92 of it; LL 1/3.8 of that (under the 20.4
  // cap); LL128 120/128 across nodes.
  const double nic = 50e9 * 4096 / 4122;
  EXPECT_DOUBLE_EQ(ring.bus_bytes_per_second, nic);
  EXPECT_DOUBLE_EQ(nccl_tree_bus_rate(ring, NcclProtocol::kSimple), 0.92 * nic);
  EXPECT_DOUBLE_EQ(nccl_tree_bus_rate(ring, NcclProtocol::kLl), 0.92 * nic / 3.8);
  EXPECT_DOUBLE_EQ(nccl_tree_bus_rate(ring, NcclProtocol::kLl128), 0.92 * nic * 120 / 128);
  // treeCorrectionFactor: 4096 B is log2(4096/64) = 6: LL 0.7, Simple 0.9; 1 GiB is past the table.
  EXPECT_DOUBLE_EQ(nccl_tree_correction(NcclProtocol::kLl, 4096), 0.7);
  EXPECT_DOUBLE_EQ(nccl_tree_correction(NcclProtocol::kSimple, 4096), 0.9);
  EXPECT_DOUBLE_EQ(nccl_tree_correction(NcclProtocol::kSimple, 1 << 30), 1.0);
  // 4096 B by the tree's LL: 28.0 + 4096 / (0.92 · nic / 3.8 · 0.5 · 0.7).
  EXPECT_NEAR(nccl_tree_seconds(ring, NcclProtocol::kLl, 4096) * 1e6,
              28.0 + 4096 / (0.92 * nic / 3.8 * 0.5 * 0.7) * 1e6, 1e-9);
}

TEST(NcclTree, ASmallAllReduceAcrossNodesRunsAsTheTreeInTheTreesTime) {
  // 4096 B over 8 ranks on 4 nodes. The ring's LL: 14 steps, 8 across the
  // network: 6.6 + 6 · max(0.6, 1) + 8 · 2.7 = 34.2 µs of latency alone,
  // against the tree's 28.0 + 1.0: NCCL runs the tree, and the simulated
  // collective takes the tree's estimate.
  const PricedAllReduce priced = priced_all_reduce(hopper_nodes(4), 4096);
  EXPECT_NEAR(nccl_latency_seconds(priced.sends.ring, NcclProtocol::kLl) * 1e6, 34.2, 1e-9);
  EXPECT_EQ(priced.sends.algorithm, NcclAlgorithm::kTree);
  EXPECT_EQ(priced.sends.protocol, NcclProtocol::kLl);
  const double tree_us = nccl_tree_seconds(priced.sends.ring, NcclProtocol::kLl, 4096) * 1e6;
  EXPECT_NEAR(priced.simulated_us, tree_us, 1e-6);
  EXPECT_LT(tree_us, nccl_seconds(priced.sends.ring, NcclProtocol::kLl, 4096) * 1e6);
}

TEST(NcclTree, LargeAllReducesRunAsTheRingAndOtherCollectivesNeverAsATree) {
  const PricedAllReduce large = priced_all_reduce(hopper_nodes(4), 1 << 30);
  EXPECT_EQ(large.sends.algorithm, NcclAlgorithm::kRing);
  EXPECT_EQ(large.sends.protocol, NcclProtocol::kSimple);
  NcclRing gather = large.sends.ring;
  gather.kind = CollectiveKind::kAllGather;
  EXPECT_EQ(nccl_choice(gather, 4096).algorithm, NcclAlgorithm::kRing);
  // In one node the ring wins at every size (the tree's chain pays as many
  // hops with a higher latency per hop and half the bandwidth).
  const NcclRing one_node = volta_ring();
  for (double bytes : {1e3, 65536.0, 1e6, 64e6}) {
    EXPECT_EQ(nccl_choice(one_node, bytes).algorithm, NcclAlgorithm::kRing) << bytes;
  }
}

}  // namespace
}  // namespace nccl_protocol_test
}  // namespace splitscope
