// The host lane of an eager GPU run (sim/costs/host_issue.hpp): the calls each op
// makes, and makespans worked out by hand where the host, or the device,
// sets the pace.

#include <gtest/gtest.h>

#include "hand_plan.hpp"
#include "plan/collective_schedule.hpp"
#include "sim/costs/host_issue.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace host_issue_test {
namespace {

using testing::HandPlan;
using testing::switch_topology;
using testing::test_machine;

const char* const kChain = R"({"batch": 4, "input": [16], "layers": [
    {"type": "relu", "name": "a"}, {"type": "relu", "name": "b"}, {"type": "relu", "name": "c"}]})";

/// Three element-wise ops in a row on one device, each streaming `bytes`
/// (1000 GB/s: 1 µs per MB), at `issue_us` a call.
Timeline chain(int64_t bytes, double issue_us) {
  HandPlan hand(kChain, 1);
  int value = hand.input(hand.node("input"), 0, 64);
  for (const char* name : {"a", "b", "c"}) value = hand.compute(hand.node(name), 0, {value}, 0, 64, 0, bytes);
  Machine machine = test_machine(1, switch_topology(10, 0));
  machine.device.host_issue_us = issue_us;
  return simulate(hand.plan(), machine);
}

TEST(HostIssue, SmallOpsRunAtTheHostsPace) {
  // Issued at 100, 200, 300 µs, each 1 µs on the device: the last ends at 301 µs.
  EXPECT_NEAR(chain(1'000'000, 100).makespan_us(), 301.0, 1e-9);
  // Without a host lane: 3 µs.
  EXPECT_NEAR(chain(1'000'000, 0).makespan_us(), 3.0, 1e-9);
}

TEST(HostIssue, LargeOpsHideTheHostBehindTheDevice) {
  // 1000 µs each: only the first call's issue shows, 100 + 3 × 1000.
  EXPECT_NEAR(chain(1'000'000'000, 100).makespan_us(), 3100.0, 1e-6);
}

TEST(HostIssue, ATransferWaitsForItsTurnOnTheHost) {
  const char* const net = R"({"batch": 4, "input": [16], "layers": [
      {"type": "relu", "name": "a"}, {"type": "relu", "name": "b"}]})";
  HandPlan hand(net, 2);
  const int x = hand.input(hand.node("input"), 0, 64);
  const int a = hand.compute(hand.node("a"), 0, {x}, 0, 1'000, 0, 1'000'000);
  hand.compute(hand.node("b"), 1, {hand.transfer(a, 1)}, 0, 64, 0, 1'000'000);
  Machine machine = test_machine(2, switch_topology(1000, 0));
  machine.device.host_issue_us = 50;
  const Timeline timeline = simulate(hand.plan(), machine);
  // a: issued at 50, runs 50–51; the transfer: issued at 100, 1000 B at 1000 GB/s = 1 ns;
  // b: issued at 150, runs 150–151.
  ASSERT_EQ(timeline.spans.size(), 3u);
  EXPECT_NEAR(timeline.spans[1].start_us, 100.0, 1e-6);
  EXPECT_NEAR(timeline.spans[2].start_us, 150.0, 1e-6);
  EXPECT_NEAR(timeline.makespan_us(), 151.0, 1e-6);
}

TEST(HostIssue, ACollectivesSendsWaitForTheirCopiesToBeIssued) {
  // A ring all-gather of 4 slices of 1 MB that exist at time 0 (10 GB/s links,
  // 2 µs latency: 102 µs a send). The host issues its 16 calls 100 µs apart:
  // the 4 local copies, then the 12 sends in order. The last send is issued
  // at 100 · (1 + 4 + 11) = 1600 µs, when what it forwards arrived long ago,
  // and ends 102 µs later. Without the lane the ring takes 3 · 102 µs.
  const char* const net = R"({"batch": 4, "input": [16], "layers": [{"type": "relu", "name": "a"}]})";
  HandPlan hand(net, 4);
  std::vector<int> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back(hand.input(hand.node("a"), d, 1'000'000));
  hand.collective(CollectiveKind::kAllGather, inputs);
  EXPECT_EQ(device_calls(hand.plan(), hand.plan().op(0)), 16);
  const std::vector<int> before = calls_before_sends(collective_schedule(hand.plan(), hand.plan().op(0)));
  ASSERT_EQ(before.size(), 12u);
  for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i], 4 + static_cast<int>(i));
  Machine machine = test_machine(4, switch_topology(10, 2));
  EXPECT_NEAR(simulate(hand.plan(), machine).makespan_us(), 306.0, 1e-6);
  machine.device.host_issue_us = 100;
  EXPECT_NEAR(simulate(hand.plan(), machine).makespan_us(), 1702.0, 1e-6);
}

TEST(HostIssue, ADenseLayerIsItsProductAndItsBiasKernel) {
  const char* const net = R"({"batch": 4, "input": [16], "layers": [
      {"type": "dense", "units": 8, "activation": "relu", "name": "fc"},
      {"type": "dense", "units": 8, "bias": false, "name": "plain"}]})";
  HandPlan hand(net, 1);
  const int x = hand.input(hand.node("input"), 0, 64);
  const int h = hand.compute(hand.node("fc"), 0, {x}, 1000, 128);
  hand.compute(hand.node("plain"), 0, {h}, 1000, 128);
  EXPECT_EQ(device_calls(hand.plan(), hand.plan().op(0)), 2);  // GEMM, then bias and relu
  EXPECT_EQ(device_calls(hand.plan(), hand.plan().op(1)), 1);  // GEMM alone
  const std::vector<HostRelease> releases = host_releases(hand.plan(), 1e-5);
  EXPECT_NEAR(releases[0].first, 1e-5, 1e-12);
  EXPECT_NEAR(releases[0].last, 2e-5, 1e-12);
  EXPECT_NEAR(releases[1].first, 3e-5, 1e-12);
  EXPECT_NEAR(releases[1].last, 3e-5, 1e-12);
}

TEST(HostIssue, TheMachineFileCarriesIt) {
  Machine machine = test_machine(1, switch_topology(10, 0));
  machine.device.host_issue_us = 12.5;
  EXPECT_DOUBLE_EQ(parse_machine_text(machine_to_json(machine), "test").device.host_issue_us, 12.5);
}

}  // namespace
}  // namespace host_issue_test
}  // namespace splitscope
