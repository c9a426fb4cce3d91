// What NCCL's kernels take from the compute they overlap
// (sim/network/nccl_contention.hpp): NCCL's channel count, the SM and memory shares
// of a collective, and DDP-shaped steps whose makespans are worked out by
// hand below.
//
// The machine: 2 Volta-like GPUs (fp32 1 TFLOP/s, fp16 4: tensor cores
// make it Volta; 80 SMs; 1000 GB/s of memory, 900 GB/s achieved by
// streaming kernels) on NVLink switch ports of 150 GB/s per direction. As in
// nccl_protocol_test.cpp, NCCL counts 120 GB/s of them (busbw(Simple)); an
// all-reduce over 2 ranks has 2 steps, algbw = busbw · 2/2:
//
//   S = 1,000,000 B: Simple, 8.4 + 2 · 3.4 = 15.2 µs + 1e6 / 120e3 = 23.5333 µs
//     (LL128 17.8 + 9.058 = 26.86; LL 7.8 + 33.33 = 41.13; the tree's are slower)
//   S = 8,000,000 B: Simple, 15.2 + 66.6667 = 81.8667 µs (LL128 17.8 + 72.46 = 90.26)
//
// Channels at 120 GB/s (nccl_ring_channels): speed 40, floor(120 / 40) = 3,
// doubled (40 >= 25) to 6, doubled again by the post-set to 12: 12 of 80
// SMs, sm share 0.15. Memory: each GPU receives S · 2/2 = S bytes, 3.5 DRAM
// accesses each, over the collective's time: memory share = 3.5 · S / T /
// 1000 GB/s, so share · T = 3.5 · S / 1000 GB/s: 3.5 µs for 1 MB, 28 µs for 8 MB.

#include "sim/network/nccl_contention.hpp"

#include <gtest/gtest.h>

#include "hand_plan.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "plan/collective_schedule.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/machine/device_facts.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/machine/topology.hpp"

namespace splitscope {
namespace nccl_contention_test {
namespace {

using testing::HandPlan;
using testing::test_machine;

constexpr double kTolUs = 1e-6;

NcclRing ring_of(NcclGeneration generation, double gbps, int nodes = 1) {
  NcclRing ring;
  ring.ranks = 8;
  ring.nodes = nodes;
  ring.generation = generation;
  ring.bus_bytes_per_second = gbps * 1e9;
  return ring;
}

TEST(NcclChannels, NcclsSearchThenItsTwoDuplications) {
  // DGX A100: 12 NVLink 3 links at NCCL's 20 GB/s = 240: speed 40, 6 rings, 12, 24.
  EXPECT_EQ(nccl_ring_channels(ring_of(NcclGeneration::kAmpere, 240)), 24);
  // DGX H100: 18 links at 20.6 = 370.8: Hopper's speed 60, 6 rings, 12, 24.
  EXPECT_EQ(nccl_ring_channels(ring_of(NcclGeneration::kHopper, 370.8)), 24);
  // P100 over PCIe 3 (NCCL's 12 GB/s): speed 12, 1 ring, not doubled (under 25), then 2.
  EXPECT_EQ(nccl_ring_channels(ring_of(NcclGeneration::kPascal, 12)), 2);
  // The test machine's 120 GB/s: 3 rings of 40, 6, 12.
  EXPECT_EQ(nccl_ring_channels(ring_of(NcclGeneration::kVolta, 120)), 12);
  // A fast ring stops at the search's 16 and MAXCHANNELS' 32: 1000 GB/s is 25 rings of 40.
  EXPECT_EQ(nccl_ring_channels(ring_of(NcclGeneration::kAmpere, 1000)), 32);
  // Across nodes, the network's speeds: a 50 GB/s NIC (400 Gb/s) is one ring of 48, doubled (Hopper
  // under 50 GB/s, but not more than 4), 4; a 25 GB/s one (200 Gb/s) one of 24, not doubled, 2.
  EXPECT_EQ(nccl_ring_channels(ring_of(NcclGeneration::kHopper, 50, 2)), 4);
  EXPECT_EQ(nccl_ring_channels(ring_of(NcclGeneration::kHopper, 25, 2)), 2);
  // Below every speed: one ring of the slowest.
  EXPECT_EQ(nccl_ring_channels(ring_of(NcclGeneration::kVolta, 1)), 2);
}

TEST(NcclOverlap, TheOpRunsOnWhatIsLeftOfTheSmsAndOfTheMemory) {
  const NcclShare share{0.15, 0.4};
  // Compute-bound: only the SMs count, 1 / 0.85.
  EXPECT_DOUBLE_EQ(nccl_overlap_factor(share, 0.0), 1.0 / 0.85);
  // Streaming: the memory left, 1 / 0.6.
  EXPECT_DOUBLE_EQ(nccl_overlap_factor(share, 1.0), 1.0 / 0.6);
  // Half its time streaming: 0.5 / 0.6 = 0.833 < 1 / 0.85.
  EXPECT_DOUBLE_EQ(nccl_overlap_factor(share, 0.5), 1.0 / 0.85);
  DeviceFacts facts;
  facts.dram_bytes_per_second = 900e9;
  EXPECT_DOUBLE_EQ(memory_part(450e3, 1e-6, facts), 0.5);
  EXPECT_DOUBLE_EQ(memory_part(9e6, 1e-6, facts), 1.0);
}

Machine volta_pair() {
  TopologySpec topology;
  topology.kind = TopologyKind::kSwitch;
  topology.link = {150, 3, LinkProtocol::kNvlink};
  Machine machine = test_machine(2, topology, 1.0, 0.0);
  machine.device.peak_tflops["fp16"] = 4;
  machine.device.sm_count = 80;
  return machine;
}

const char* const kThreeLayers = R"({"batch": 4, "input": [16], "layers": [
    {"type": "dense", "units": 16, "name": "fc1"},
    {"type": "dense", "units": 16, "name": "fc2"},
    {"type": "dense", "units": 16, "name": "fc3"}]})";

TEST(NcclShare, ACollectivesSharesFollowItsChannelsAndItsReceivedBytes) {
  const Machine machine = volta_pair();
  HandPlan hand(kThreeLayers, 2);
  const int a = hand.input(hand.node("fc1"), 0, 1'000'000);
  const int b = hand.input(hand.node("fc1"), 1, 1'000'000);
  hand.collective(CollectiveKind::kAllReduce, {a, b});
  const PlanOp& op = hand.plan().ops.back();
  NcclRingSends sends;
  ASSERT_TRUE(nccl_ring_sends(hand.plan(), op, collective_schedule(hand.plan(), op), Topology(machine),
                              nccl_generation(machine.device), &sends));
  const NcclShare share = nccl_share(sends, device_facts(machine.device));
  EXPECT_DOUBLE_EQ(share.sm, 12.0 / 80);
  EXPECT_NEAR(share.memory, 3.5 * 1e6 / 23.5333333e-6 / 1e12, 1e-7);
}

/// A DDP step's backward on each of 2 GPUs, by hand: b3 writes the last
/// layer's gradient g3 (the first bucket), then b2 runs while g3 is
/// all-reduced, then b1 writes g1 (the second bucket), all-reduced after.
/// `b2_flops` and `b2_bytes` make b2 compute- or memory-bound.
struct DdpStep {
  HandPlan hand{kThreeLayers, 2};
  int b2[2] = {-1, -1};
};

DdpStep ddp_step(int64_t first_bucket, int64_t second_bucket, int64_t b2_flops, int64_t b2_bytes) {
  DdpStep step;
  HandPlan& hand = step.hand;
  int g3[2];
  int g1[2];
  for (int d = 0; d < 2; ++d) {
    const int x = hand.input(hand.node("fc1"), d, 1000);
    g3[d] = hand.compute(hand.node("fc3"), d, {x}, 10'000'000, first_bucket, 0, 1000);  // 10 µs
    hand.compute(hand.node("fc2"), d, {x}, b2_flops, 1000, 0, b2_bytes);
    step.b2[d] = hand.last_op();
    g1[d] = hand.compute(hand.node("fc1"), d, {x}, 10'000'000, second_bucket, 0, 1000);  // 10 µs
  }
  hand.collective(CollectiveKind::kAllReduce, {g3[0], g3[1]});
  hand.collective(CollectiveKind::kAllReduce, {g1[0], g1[1]});
  return step;
}

double end_us(const Timeline& timeline, int op) {
  for (const Span& span : timeline.spans) {
    if (span.op == op) return span.end_us;
  }
  throw std::out_of_range("no span");
}

TEST(NcclOverlap, AComputeBoundOpLosesTheChannelsSmsWhileTheBucketRuns) {
  // b2: 30 µs of products. The 1 MB bucket runs from 10 to 33.5333 µs, in
  // which b2 does 23.5333 · 0.85 µs of its work: it ends at 10 + 30 +
  // 23.5333 · 0.15 = 43.53 µs, not 40. b1 then runs to 53.53, and the 8 MB
  // bucket after it takes 81.8667: the step is 135.4 µs (131.8667 without NCCL's share).
  const DdpStep step = ddp_step(1'000'000, 8'000'000, 30'000'000, 1000);
  const Timeline timeline = simulate(step.hand.plan(), volta_pair());
  const double bucket_us = 15.2 + 1e6 / 120e3;
  for (int d = 0; d < 2; ++d) EXPECT_NEAR(end_us(timeline, step.b2[d]), 40 + bucket_us * 0.15, kTolUs);
  EXPECT_NEAR(timeline.makespan_us(), 50 + bucket_us * 0.15 + 15.2 + 8e6 / 120e3, kTolUs);
  EXPECT_NEAR(timeline.makespan_us(), 135.39, 0.01);
}

TEST(NcclOverlap, AMemoryBoundOpLosesTheBandwidthTheRingsTrafficTakes) {
  // b2 streams 100 MB: 100 µs at 1000 GB/s (the roofline), all of it DRAM
  // time at the achieved 900 GB/s (memory part 1). The 8 MB bucket runs from
  // 10 to 91.8667 µs and takes 3.5 · 8e6 / 81.8667 µs = 342.0 GB/s, 34.2%
  // of the memory: b2 loses 3.5 · 8e6 / 1000 GB/s = 28 µs and ends at 138 µs
  // (1 / (1 - 0.342) beats the SMs' 1 / 0.85). b1 runs to 148, the 1 MB bucket to 171.5333.
  const DdpStep step = ddp_step(8'000'000, 1'000'000, 0, 100'000'000);
  const Timeline timeline = simulate(step.hand.plan(), volta_pair());
  for (int d = 0; d < 2; ++d) EXPECT_NEAR(end_us(timeline, step.b2[d]), 138.0, 1e-6);
  EXPECT_NEAR(timeline.makespan_us(), 148 + 15.2 + 1e6 / 120e3, kTolUs);
}

TEST(NcclOverlap, OverAchievedLinksNoNcclModelAppliesAndNothingSlows) {
  Machine machine = volta_pair();
  machine.topology.link.protocol = LinkProtocol::kAchieved;
  const DdpStep step = ddp_step(1'000'000, 8'000'000, 30'000'000, 1000);
  const Timeline timeline = simulate(step.hand.plan(), machine);
  for (int d = 0; d < 2; ++d) EXPECT_NEAR(end_us(timeline, step.b2[d]), 40.0, kTolUs);
}

TEST(NcclProtocolOfABucket, NcclSeesTheWholeBucketNotItsFirstGradient) {
  // fc2's 40,040 bytes of gradient are ready first; fc1's 4,004,000 join
  // them in DDP's first bucket (which closes past 1 MiB): one message of
  // 4,044,040 bytes, which NCCL runs as Simple (15.2 + 33.70 = 48.90 µs),
  // not as the LL that 40,040 bytes alone would take.
  auto base = lower(parse_model_text(R"({"batch": 4, "input": [1000], "layers": [
      {"type": "dense", "units": 1000, "name": "fc1"},
      {"type": "dense", "units": 10, "name": "fc2"}]})",
                                     "net.json"));
  const auto graph = std::make_shared<const Graph>(training_graph(base, Optimizer{}));
  PartitionOptions options;
  options.devices = 2;
  const Plan plan = make_partitioner("data")->partition(graph, options);
  const Machine machine = volta_pair();
  int buckets = 0;
  for (const PlanOp& op : plan.ops) {
    if (op.role != OpRole::kCollective) continue;
    ++buckets;
    EXPECT_EQ(op.payload_bytes, 4'044'040);
    const auto choice = nccl_choice_on(plan, op, machine);
    ASSERT_TRUE(choice.has_value());
    EXPECT_EQ(choice->protocol, NcclProtocol::kSimple);
    EXPECT_NEAR(choice->seconds * 1e6, 15.2 + 4'044'040 / 120e3, 1e-6);
  }
  EXPECT_EQ(buckets, 1);
}

}  // namespace
}  // namespace nccl_contention_test
}  // namespace splitscope
