// The simulator against closed forms: hand-built plans whose makespans can
// be worked out on paper (issue 5, "Tests (closed forms)").

#include <gtest/gtest.h>

#include <string>

#include "hand_plan.hpp"
#include "sim/engine/simulator.hpp"

namespace splitscope {
namespace closed_form_test {
namespace {

using testing::free_links;
using testing::HandPlan;
using testing::host_staged_topology;
using testing::multi_node_topology;
using testing::switch_topology;
using testing::test_machine;

// Times are compared in µs; sums of doubles agree to far better than this.
constexpr double kTolUs = 1e-6;

const char* const kDenseNet = R"({"batch": 4, "input": [16], "layers": [
    {"type": "dense", "units": 16, "name": "fc1"},
    {"type": "dense", "units": 16, "name": "fc2"},
    {"type": "dense", "units": 16, "name": "fc3"},
    {"type": "dense", "units": 16, "name": "fc4"}]})";

const Span& span_of(const Timeline& timeline, int op, int device = -1) {
  for (const Span& span : timeline.spans) {
    if (span.op == op && (device < 0 || span.device == device)) return span;
  }
  throw std::out_of_range("no span for op " + std::to_string(op));
}

/// Busy time of one device's compute lane.
double compute_us(const Timeline& timeline, int device) {
  double busy = 0;
  for (const Span& span : timeline.spans) {
    if (span.device == device && span.lane == Lane::kCompute) busy += span.duration_us();
  }
  return busy;
}

TEST(ClosedForm, OneTransferTakesLatencyPlusBytesOverBandwidth) {
  HandPlan hand(kDenseNet, 2);
  const int x = hand.input(hand.node("fc1"), 0, 1'000'000);
  hand.transfer(x, 1);
  const Timeline timeline = simulate(hand.plan(), test_machine(2, switch_topology(10, 5)));
  // 5 µs + 1e6 B / 10e9 B/s = 5 + 100 µs.
  const Span& span = span_of(timeline, 0);
  EXPECT_EQ(span.device, 1);
  EXPECT_EQ(span.lane, Lane::kCopyIn);
  EXPECT_EQ(span.kind, SpanKind::kTransfer);
  EXPECT_EQ(span.bytes, 1'000'000);
  EXPECT_NEAR(span.start_us, 0.0, kTolUs);
  EXPECT_NEAR(span.end_us, 105.0, kTolUs);
}

TEST(ClosedForm, TwoConcurrentTransfersOnOneSharedLinkTakeTwiceAsLong) {
  // Switch: 0 -> 2 and 1 -> 2 both come down device 2's port.
  HandPlan hand(kDenseNet, 3);
  hand.transfer(hand.input(hand.node("fc1"), 0, 1'000'000), 2);
  hand.transfer(hand.input(hand.node("fc1"), 1, 1'000'000), 2);
  const Timeline shared = simulate(hand.plan(), test_machine(3, switch_topology(10, 0)));
  // Each gets 5 GB/s: 1e6 / 5e9 = 200 µs, twice the 100 µs of one alone.
  EXPECT_NEAR(span_of(shared, 0).duration_us(), 200.0, kTolUs);
  EXPECT_NEAR(span_of(shared, 1).duration_us(), 200.0, kTolUs);

  // 0 -> 1 and 2 -> 3 cross four different ports: no sharing, 100 µs each.
  HandPlan apart(kDenseNet, 4);
  apart.transfer(apart.input(apart.node("fc1"), 0, 1'000'000), 1);
  apart.transfer(apart.input(apart.node("fc1"), 2, 1'000'000), 3);
  const Timeline separate = simulate(apart.plan(), test_machine(4, switch_topology(10, 0)));
  EXPECT_NEAR(span_of(separate, 0).duration_us(), 100.0, kTolUs);
  EXPECT_NEAR(span_of(separate, 1).duration_us(), 100.0, kTolUs);
}

TEST(ClosedForm, ATransferThatStartsLaterSharesOnlyWhileBothRun) {
  // 1 MB at 10 GB/s from t = 0 into device 2; a second 1 MB into device 2
  // becomes ready at t = 50 µs (after a 50 µs op on device 1).
  // 0..50 µs: the first alone moves 0.5 MB. From 50 µs both share 5 GB/s:
  // the first's last 0.5 MB takes 100 µs (ends at 150), while the second moves
  // 0.5 MB; then alone again, its last 0.5 MB takes 50 µs: it ends at 200 µs.
  HandPlan hand(kDenseNet, 3);
  hand.transfer(hand.input(hand.node("fc1"), 0, 1'000'000), 2);
  const int x = hand.input(hand.node("fc1"), 1, 64);
  const int y = hand.compute(hand.node("fc2"), 1, {x}, 50'000'000, 1'000'000);  // 50 µs at 1 TFLOP/s
  hand.transfer(y, 2);
  const Timeline timeline = simulate(hand.plan(), test_machine(3, switch_topology(10, 0)));
  EXPECT_NEAR(span_of(timeline, 0).end_us, 150.0, kTolUs);
  EXPECT_NEAR(span_of(timeline, 2).start_us, 50.0, kTolUs);
  EXPECT_NEAR(span_of(timeline, 2).end_us, 200.0, kTolUs);
}

TEST(ClosedForm, AFlowThatArrivesFirstSharesWithATransferLaunchedAfterIt) {
  // 10 GB/s links, 20 µs of latency; everything goes into device 2.
  // C: 0.1 MB from device 0 at t = 0 arrives at 20 µs and is done at 30.
  // B: 1 MB from device 1 is ready at 25 µs (a 25 µs op), while C still
  //    crosses device 2's link; it arrives at 45.
  // A: 1 MB from device 3 is ready at 35 µs, when nothing crosses the link
  //    (C is done, B has not arrived); it arrives at 55, after B.
  // 45..55: B alone moves 0.1 MB. From 55 they share 5 GB/s: B's last 0.9 MB
  // takes 180 µs (ends at 235), while A moves 0.9 MB; A's last 0.1 MB alone
  // takes 10 µs: it ends at 245.
  HandPlan hand(kDenseNet, 4);
  hand.transfer(hand.input(hand.node("fc1"), 0, 100'000), 2);  // op 0
  const int b = hand.compute(hand.node("fc2"), 1, {hand.input(hand.node("fc1"), 1, 64)}, 25'000'000, 1'000'000);
  hand.transfer(b, 2);  // op 2
  const int a = hand.compute(hand.node("fc2"), 3, {hand.input(hand.node("fc1"), 3, 64)}, 35'000'000, 1'000'000);
  hand.transfer(a, 2);  // op 4
  const Timeline timeline = simulate(hand.plan(), test_machine(4, switch_topology(10, 20)));
  EXPECT_NEAR(span_of(timeline, 0).end_us, 30.0, kTolUs);
  EXPECT_NEAR(span_of(timeline, 2).start_us, 25.0, kTolUs);
  EXPECT_NEAR(span_of(timeline, 2).end_us, 235.0, kTolUs);
  EXPECT_NEAR(span_of(timeline, 4).start_us, 35.0, kTolUs);
  EXPECT_NEAR(span_of(timeline, 4).end_us, 245.0, kTolUs);
}

class BusSaturation : public ::testing::TestWithParam<int> {};

TEST_P(BusSaturation, KDevicesBehindOneBusMakeEachTransferKTimesSlower) {
  const int k = GetParam();
  const Machine machine = test_machine(k, host_staged_topology(k, 10, 0));
  // Alone, 1 MB goes up the 10 GB/s bus and down it again in 100 µs.
  HandPlan alone(kDenseNet, k);
  alone.transfer(alone.input(alone.node("fc1"), 0, 1'000'000), 1);
  const double one = span_of(simulate(alone.plan(), machine), 0).duration_us();
  EXPECT_NEAR(one, 100.0, kTolUs);
  // All k devices behind the bus send 1 MB to the next at once: k flows
  // share the bus up and the bus down, 10/k GB/s each, 100·k µs.
  HandPlan hand(kDenseNet, k);
  for (int d = 0; d < k; ++d) hand.transfer(hand.input(hand.node("fc1"), d, 1'000'000), (d + 1) % k);
  const Timeline timeline = simulate(hand.plan(), machine);
  for (int op = 0; op < k; ++op) {
    EXPECT_NEAR(span_of(timeline, op).duration_us(), k * one, kTolUs * k) << "op " << op;
  }
}

INSTANTIATE_TEST_SUITE_P(Sim, BusSaturation, ::testing::Values(2, 4, 8));

TEST(ClosedForm, SeparateBusesDoNotShare) {
  // 4 devices, 2 per bus: 0 -> 1 uses bus 0 only, 2 -> 3 bus 1 only.
  HandPlan hand(kDenseNet, 4);
  hand.transfer(hand.input(hand.node("fc1"), 0, 1'000'000), 1);
  hand.transfer(hand.input(hand.node("fc1"), 2, 1'000'000), 3);
  const Timeline timeline = simulate(hand.plan(), test_machine(4, host_staged_topology(2, 10, 0)));
  EXPECT_NEAR(span_of(timeline, 0).duration_us(), 100.0, kTolUs);
  EXPECT_NEAR(span_of(timeline, 1).duration_us(), 100.0, kTolUs);
}

TEST(ClosedForm, ANodesSharedNicSaturatesPerDeviceNicsDoNot) {
  // 2 nodes of 4 devices; device i of node 0 sends 1 MB to device i of node 1.
  for (const int nics : {1, 4}) {
    HandPlan hand(kDenseNet, 8);
    for (int i = 0; i < 4; ++i) hand.transfer(hand.input(hand.node("fc1"), i, 1'000'000), 4 + i);
    const Timeline timeline =
        simulate(hand.plan(), test_machine(8, multi_node_topology(4, nics, 100, 10)));
    // One NIC of 10 GB/s for 4 flows: 2.5 GB/s each, 400 µs; one NIC each: 100 µs.
    const double expected = nics == 1 ? 400.0 : 100.0;
    for (int op = 0; op < 4; ++op) {
      EXPECT_NEAR(span_of(timeline, op).duration_us(), expected, kTolUs) << nics << " NICs";
    }
  }
}

TEST(ClosedForm, InsideANodeTransfersUseTheSwitchNotTheNic) {
  HandPlan hand(kDenseNet, 8);
  hand.transfer(hand.input(hand.node("fc1"), 0, 1'000'000), 1);
  const Timeline timeline = simulate(hand.plan(), test_machine(8, multi_node_topology(4, 1, 100, 10)));
  EXPECT_NEAR(span_of(timeline, 0).duration_us(), 10.0, kTolUs);  // 1e6 / 100e9
}

class RingAllReduce : public ::testing::TestWithParam<int> {};

TEST_P(RingAllReduce, TakesTwoNMinusOneStepsOfAChunk) {
  const int n = GetParam();
  const int64_t bytes = 8'400'000;  // divisible by 2, 4, 8 (and 3, 5, 6, 7)
  const double bandwidth = 10e9;
  const double latency_us = 2;
  HandPlan hand(kDenseNet, n);
  std::vector<int> inputs;
  for (int d = 0; d < n; ++d) inputs.push_back(hand.input(hand.node("fc1"), d, bytes));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  const Timeline timeline = simulate(hand.plan(), test_machine(n, switch_topology(10, latency_us)));
  // 2(N-1)/N · B / W + 2(N-1) · L
  const double expected = 2.0 * (n - 1) / n * bytes / bandwidth * 1e6 + 2.0 * (n - 1) * latency_us;
  ASSERT_EQ(timeline.spans.size(), static_cast<size_t>(n));
  for (int d = 0; d < n; ++d) {
    const Span& span = span_of(timeline, 0, d);
    EXPECT_EQ(span.kind, SpanKind::kCollective);
    EXPECT_EQ(span.lane, Lane::kCopyIn);
    EXPECT_NEAR(span.start_us, 0.0, kTolUs);
    EXPECT_NEAR(span.end_us, expected, kTolUs) << "device " << d;
    EXPECT_EQ(span.bytes, 2 * (n - 1) * bytes / n);  // what each participant receives
  }
  EXPECT_NEAR(timeline.makespan_us(), expected, kTolUs);
}

INSTANTIATE_TEST_SUITE_P(Sim, RingAllReduce, ::testing::Values(2, 3, 4, 8));

TEST(ClosedForm, RingAllReduceOverFourThousandDevicesRunsInStepGroups) {
  // The same closed form at N = 4096, past the 2^22 sends an unrolled ring
  // may take (2(N-1)N = 33.5 million): each step one group of flows
  // (ring_step_group.hpp), so it runs in test time. 16 MiB: 1,024 floats a chunk.
  const int n = 4096;
  const int64_t bytes = int64_t{16} << 20;
  const double bandwidth = 10e9;
  const double latency_us = 2;
  HandPlan hand(kDenseNet, n);
  std::vector<int> inputs;
  for (int d = 0; d < n; ++d) inputs.push_back(hand.input(hand.node("fc1"), d, bytes));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  const Timeline timeline = simulate(hand.plan(), test_machine(n, switch_topology(10, latency_us)));
  const double expected = 2.0 * (n - 1) / n * bytes / bandwidth * 1e6 + 2.0 * (n - 1) * latency_us;
  ASSERT_EQ(timeline.spans.size(), static_cast<size_t>(n));
  for (const Span& span : timeline.spans) {
    EXPECT_NEAR(span.start_us, 0.0, kTolUs);
    EXPECT_NEAR(span.end_us, expected, kTolUs) << "device " << span.device;
    EXPECT_EQ(span.bytes, 2 * (n - 1) * bytes / n);
  }
}

TEST(ClosedForm, AnUnevenRingEndsAlongItsLargestChunks) {
  // 1,003 floats over 20 devices (step groups): 3 chunks of 51 floats, 17 of
  // 50. Each chunk travels one participant a step, so the last delivery
  // comes after 2(N-1) steps of the largest chunk: 38 · (2 µs + 204 B / 10 GB/s).
  const int n = 20;
  HandPlan hand(kDenseNet, n);
  std::vector<int> inputs;
  for (int d = 0; d < n; ++d) inputs.push_back(hand.input(hand.node("fc1"), d, 4 * 1003));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  const Timeline timeline = simulate(hand.plan(), test_machine(n, switch_topology(10, 2)));
  EXPECT_NEAR(timeline.makespan_us(), 38 * (2 + 204 / 10e9 * 1e6), kTolUs);
  // Each receives every chunk but its own, then every chunk but the next one's.
  EXPECT_EQ(span_of(timeline, 0, 0).bytes, 4 * (2 * 1003 - 51 - 51));
  EXPECT_EQ(span_of(timeline, 0, n - 1).bytes, 4 * (2 * 1003 - 50 - 51));
}

TEST(ClosedForm, ARingWhoseInputsComeApartStartsEachSendWhenItsInputsAreThere) {
  // 16 devices, device 1's partial sum ready at 1 ms, the others' at 0: the
  // ring runs its sends one by one (no step group waits for the last), so
  // device 5's first send starts at 0; every path of 2(N-1) steps reaches
  // each delivery from device 1's, so all end at 1000 + 30 · (2 + 10) µs
  // (chunks of 100 kB at 10 GB/s).
  const int n = 16;
  HandPlan hand(kDenseNet, n);
  std::vector<int> inputs;
  for (int d = 0; d < n; ++d) {
    if (d != 1) {
      inputs.push_back(hand.input(hand.node("fc1"), d, 1'600'000));
      continue;
    }
    const int x = hand.input(hand.node("fc1"), d, 64);
    inputs.push_back(hand.compute(hand.node("fc1"), d, {x}, 1'000'000'000, 1'600'000));
  }
  hand.collective(CollectiveKind::kAllReduce, inputs);
  const int collective = hand.last_op();
  const Timeline timeline = simulate(hand.plan(), test_machine(n, switch_topology(10, 2)));
  EXPECT_NEAR(timeline.makespan_us(), 1000.0 + 30 * 12.0, kTolUs);
  EXPECT_NEAR(span_of(timeline, collective, 5).start_us, 0.0, kTolUs);
  EXPECT_NEAR(span_of(timeline, collective, 5).end_us, 1360.0, kTolUs);
}

TEST(ClosedForm, RingAllGatherTakesNMinusOneSteps) {
  // 4 slices of 1 MB: 3 steps of 2 µs + 1e6 / 10e9 s = 3 · 102 µs.
  HandPlan hand(kDenseNet, 4);
  std::vector<int> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back(hand.input(hand.node("fc1"), d, 1'000'000));
  hand.collective(CollectiveKind::kAllGather, inputs);
  const Timeline timeline = simulate(hand.plan(), test_machine(4, switch_topology(10, 2)));
  for (int d = 0; d < 4; ++d) {
    EXPECT_NEAR(span_of(timeline, 0, d).end_us, 306.0, kTolUs);
    EXPECT_EQ(span_of(timeline, 0, d).bytes, 3'000'000);
  }
}

TEST(ClosedForm, ConcatSendsEverySliceToTheRootThroughItsPort) {
  // 3 slices of 1 MB come down the root's 10 GB/s port at once: 2 µs + 3e6 / 10e9 s.
  HandPlan hand(kDenseNet, 4);
  std::vector<int> inputs;
  for (int d = 0; d < 4; ++d) inputs.push_back(hand.input(hand.node("fc1"), d, 1'000'000));
  hand.collective(CollectiveKind::kConcat, inputs, 0);
  const Timeline timeline = simulate(hand.plan(), test_machine(4, switch_topology(10, 2)));
  ASSERT_EQ(timeline.spans.size(), 1u);
  EXPECT_EQ(timeline.spans[0].device, 0);
  EXPECT_EQ(timeline.spans[0].bytes, 3'000'000);
  EXPECT_NEAR(timeline.spans[0].end_us, 302.0, kTolUs);
}

TEST(ClosedForm, ACollectiveWaitsForItsLastInput) {
  // Device 1's partial sum is ready at 1 ms; the all-reduce of 2 × 1 MB then
  // takes 2 steps of 0.5 MB at 10 GB/s = 100 µs.
  HandPlan hand(kDenseNet, 2);
  const int a = hand.input(hand.node("fc1"), 0, 1'000'000);
  const int x = hand.input(hand.node("fc1"), 1, 64);
  const int b = hand.compute(hand.node("fc1"), 1, {x}, 1'000'000'000, 1'000'000);
  hand.collective(CollectiveKind::kAllReduce, {a, b});
  const Timeline timeline = simulate(hand.plan(), test_machine(2, switch_topology(10, 0)));
  EXPECT_NEAR(timeline.makespan_us(), 1000.0 + 100.0, kTolUs);
}

TEST(ClosedForm, ABucketIsOneRingOverItsGradientsThatStartsWhenTheLastIsReady) {
  // Two gradients of 600 kB and 400 kB on each of 2 devices, device 1's
  // second ready at 1 ms: the ring runs over 1 MB, 2 steps of 500 kB at
  // 10 GB/s and 2 µs each, once the last segment exists: 1000 + 2·(2 + 50).
  HandPlan bucketed(kDenseNet, 2);
  const NodeId fc1 = bucketed.node("fc1");
  const int x = bucketed.input(fc1, 1, 64);
  const int late = bucketed.compute(fc1, 1, {x}, 1'000'000'000, 400'000);
  bucketed.collective(CollectiveKind::kAllReduce, {bucketed.input(fc1, 0, 600'000), bucketed.input(fc1, 0, 400'000),
                                                   bucketed.input(fc1, 1, 600'000), late});
  const Timeline one = simulate(bucketed.plan(), test_machine(2, switch_topology(10, 2)));
  EXPECT_NEAR(one.makespan_us(), 1000.0 + 2 * (2.0 + 50.0), kTolUs);
  for (int d = 0; d < 2; ++d) EXPECT_EQ(span_of(one, 1, d).bytes, 1'000'000) << "2(N-1)/N of the bucket into each";

  // The same gradients as two all-reduces: the first is done at 2·(2 + 30)
  // µs, the second at 1000 + 2·(2 + 20): a bucket pays one latency per step
  // instead of two, and waits for its last gradient.
  HandPlan apart(kDenseNet, 2);
  const int x2 = apart.input(fc1, 1, 64);
  const int late2 = apart.compute(fc1, 1, {x2}, 1'000'000'000, 400'000);
  apart.collective(CollectiveKind::kAllReduce, {apart.input(fc1, 0, 600'000), apart.input(fc1, 1, 600'000)});
  apart.collective(CollectiveKind::kAllReduce, {apart.input(fc1, 0, 400'000), late2});
  const Timeline two = simulate(apart.plan(), test_machine(2, switch_topology(10, 2)));
  EXPECT_NEAR(span_of(two, 1, 0).end_us, 2 * (2.0 + 30.0), kTolUs);
  EXPECT_NEAR(two.makespan_us(), 1000.0 + 2 * (2.0 + 20.0), kTolUs);
}

TEST(ClosedForm, EqualBucketsOverlapTheBackwardAndOnlyTheLastIsExposed) {
  // Backward writes three 200 kB gradients on each of 2 devices, one per ms.
  // Three buckets (one gradient each): each ring takes 2·(2 + 10) = 24 µs
  // and overlaps the next gradient's compute, so only the last is exposed:
  // 3000 + 24. One bucket of all three starts at 3000 and takes 2·(2 + 30).
  for (const bool one_bucket : {false, true}) {
    HandPlan hand(kDenseNet, 2);
    const NodeId fc1 = hand.node("fc1");
    std::vector<std::vector<int>> gradients(3);  // [gradient][device]
    for (int d = 0; d < 2; ++d) {
      const int x = hand.input(fc1, d, 64);
      for (int g = 0; g < 3; ++g) gradients[static_cast<size_t>(g)].push_back(hand.compute(fc1, d, {x}, 1'000'000'000, 200'000));
    }
    if (one_bucket) {
      hand.collective(CollectiveKind::kAllReduce, {gradients[0][0], gradients[1][0], gradients[2][0], gradients[0][1],
                                                   gradients[1][1], gradients[2][1]});
    } else {
      for (const std::vector<int>& gradient : gradients) hand.collective(CollectiveKind::kAllReduce, gradient);
    }
    const Timeline timeline = simulate(hand.plan(), test_machine(2, switch_topology(10, 2)));
    EXPECT_NEAR(timeline.makespan_us(), one_bucket ? 3000.0 + 2 * (2.0 + 30.0) : 3000.0 + 2 * (2.0 + 10.0), kTolUs)
        << (one_bucket ? "one bucket" : "three buckets");
  }
}

TEST(ClosedForm, HorizontalSplitOfTwoBalancedLayers) {
  // fc1 on device 0, its output (256 KB) to device 1, fc2 there:
  // t1 + (L + bytes / W) + t2 = 1000 + (3 + 256000 / 10e9 s = 25.6 µs) + 1000 µs.
  HandPlan hand(kDenseNet, 2, "horizontal");
  const int x = hand.input(hand.node("input"), 0, 256);
  const int h = hand.compute(hand.node("fc1"), 0, {x}, 1'000'000'000, 256'000);
  const int h1 = hand.transfer(h, 1);
  hand.compute(hand.node("fc2"), 1, {h1}, 1'000'000'000, 256);
  const Timeline timeline = simulate(hand.plan(), test_machine(2, switch_topology(10, 3)));
  EXPECT_NEAR(timeline.makespan_us(), 1000.0 + 3.0 + 25.6 + 1000.0, kTolUs);
  EXPECT_NEAR(span_of(timeline, 2).start_us, 1028.6, kTolUs);
}

TEST(ClosedForm, PipelineOfNBalancedStagesAndMMicroBatches) {
  // 4 stages (fc1..fc4 on devices 0..3), 8 micro-batches, each stage 1 ms.
  const int n = 4;
  const int m = 8;
  HandPlan hand(kDenseNet, n, "pipeline");
  const char* const stages[] = {"fc1", "fc2", "fc3", "fc4"};
  for (int mb = 0; mb < m; ++mb) {
    int value = hand.input(hand.node("input"), 0, 64);
    for (int s = 0; s < n; ++s) {
      if (s > 0) value = hand.transfer(value, s);
      value = hand.compute(hand.node(stages[s]), s, {value}, 1'000'000'000, 1024, mb);
    }
  }
  const Timeline timeline = simulate(hand.plan(), test_machine(n, free_links()));
  // (M + N - 1) · t_stage
  const double makespan = (m + n - 1) * 1000.0;
  EXPECT_NEAR(timeline.makespan_us(), makespan, 1e-3);
  for (int d = 0; d < n; ++d) {
    // Each device computes M · t and idles the rest: (N-1)/(M+N-1) = 3/11.
    EXPECT_NEAR(compute_us(timeline, d), m * 1000.0, 1e-6);
    EXPECT_NEAR(1.0 - compute_us(timeline, d) / timeline.makespan_us(), 3.0 / 11.0, 1e-9);
  }
}

TEST(ClosedForm, RnnHorizontalSplitIsATimeStepWavefront) {
  // lstm-small's 4 stacked layers on 4 devices over 6 steps, every cell
  // t = 0.5 ms, free links: (T + L - 1) · t = 9 · 0.5 ms.
  const char* const lstm = R"({"batch": 4, "input": [6, 8], "layers": [
      {"type": "lstm", "hidden": 16, "layers": 4, "name": "lstm"}]})";
  const int layers = 4;
  const int steps = 6;
  HandPlan hand(lstm, layers, "horizontal");
  std::vector<int> below(steps);
  for (int t = 0; t < steps; ++t) below[static_cast<size_t>(t)] = hand.input(hand.node("input/t" + std::to_string(t)), 0, 128);
  for (int l = 0; l < layers; ++l) {
    int h = -1;
    int c = -1;
    for (int t = 0; t < steps; ++t) {
      int x = below[static_cast<size_t>(t)];
      if (l > 0) x = hand.transfer(x, l);
      const int out = hand.compute(hand.node("lstm/l" + std::to_string(l) + "/t" + std::to_string(t)), l,
                                   {x, h, c}, 500'000'000, 256);
      h = out;
      c = out + 1;  // the cell's second output, c_t
      below[static_cast<size_t>(t)] = h;
    }
  }
  const Timeline timeline = simulate(hand.plan(), test_machine(layers, free_links()));
  EXPECT_NEAR(timeline.makespan_us(), (steps + layers - 1) * 500.0, 1e-3);
  // Cell (l, t) starts at (l + t) · t_cell: the wavefront.
  for (const Span& span : timeline.spans) {
    if (span.lane != Lane::kCompute) continue;
    const OpNode& node = hand.graph().node(hand.plan().op(span.op).node);
    EXPECT_NEAR(span.start_us, (node.sublayer + node.step) * 500.0, 1e-3) << node.name;
  }
}

TEST(ClosedForm, ADeviceRunsItsScheduleInOrderEvenIfALaterOpIsReady) {
  // Device 1's schedule is [b, c]: b waits 1 ms for a's output from device 0,
  // c reads a network input and could start at once, but runs after b.
  HandPlan hand(kDenseNet, 2);
  const int x = hand.input(hand.node("input"), 0, 64);
  const int a = hand.compute(hand.node("fc1"), 0, {x}, 1'000'000'000, 64);
  const int a1 = hand.transfer(a, 1);
  hand.compute(hand.node("fc2"), 1, {a1}, 1'000'000'000, 64);
  const int y = hand.input(hand.node("input"), 1, 64);
  hand.compute(hand.node("fc3"), 1, {y}, 1'000'000'000, 64);
  const Timeline timeline = simulate(hand.plan(), test_machine(2, free_links()));
  EXPECT_NEAR(span_of(timeline, 3).start_us, 2000.0, 1e-3);
  EXPECT_NEAR(timeline.makespan_us(), 3000.0, 1e-3);
}

// --- devices that share a pool slow each other (engine.cpp, SharedRun) ---

/// `devices` devices whose every op takes `contention` times its time alone
/// with all of them busy (DeviceSpec::contention).
Machine pooled_machine(int devices, double contention) {
  Machine machine = test_machine(devices, free_links());
  machine.pooled = true;
  machine.device.contention = {{std::string(kDefaultEfficiency), contention}};
  return machine;
}

TEST(ClosedForm, ALoneDeviceOfAContendedPoolRunsAtItsTimeAlone) {
  // The layer split: one device works at a time, so each layer takes its 1000 µs alone, not 2000.
  HandPlan hand(kDenseNet, 2, "horizontal");
  const int x = hand.input(hand.node("input"), 0, 64);
  const int h = hand.compute(hand.node("fc1"), 0, {x}, 1'000'000'000, 64);
  hand.compute(hand.node("fc2"), 1, {hand.transfer(h, 1)}, 1'000'000'000, 64);
  EXPECT_NEAR(simulate(hand.plan(), pooled_machine(2, 2.0)).makespan_us(), 2000.0, 1e-3);
}

TEST(ClosedForm, TwoDevicesOfAContendedPoolShareItWhileBothRun) {
  // Device 0: 1000 µs alone, 2000 busy; device 1: 500 alone, 1000 busy. Both
  // run from 0 at the busy pace; device 1 ends at 1000 µs, when device 0 has
  // done 1000 / 2000 of its work; the other half alone takes 500 µs.
  HandPlan hand(kDenseNet, 2);
  hand.compute(hand.node("fc1"), 0, {hand.input(hand.node("input"), 0, 64)}, 1'000'000'000, 64);
  hand.compute(hand.node("fc3"), 1, {hand.input(hand.node("input"), 1, 64)}, 500'000'000, 64);
  const Timeline timeline = simulate(hand.plan(), pooled_machine(2, 2.0));
  EXPECT_NEAR(span_of(timeline, 1).end_us, 1000.0, 1e-3);
  EXPECT_NEAR(span_of(timeline, 0).start_us, 0.0, 1e-3);
  EXPECT_NEAR(span_of(timeline, 0).end_us, 1500.0, 1e-3);
}

TEST(ClosedForm, AContendedPoolOfThreeSlowsEachOpByTheDevicesBusyBesideIt) {
  // Contention 3 with all three busy, so 2 with two (linear between 1 alone and 3).
  // Two ops of 1000 µs alone and one of 1000 / 3: all three at the pace of
  // three (3000 µs a whole op) until the short one ends at 1000 µs; the
  // others have 2/3 left, at the pace of two (2000 µs a whole op): 1333.3 µs more.
  HandPlan hand(kDenseNet, 3);
  hand.compute(hand.node("fc1"), 0, {hand.input(hand.node("input"), 0, 64)}, 1'000'000'000, 64);
  hand.compute(hand.node("fc2"), 1, {hand.input(hand.node("input"), 1, 64)}, 1'000'000'000, 64);
  hand.compute(hand.node("fc3"), 2, {hand.input(hand.node("input"), 2, 64)}, 1'000'000'000 / 3, 64);
  const Timeline timeline = simulate(hand.plan(), pooled_machine(3, 3.0));
  EXPECT_NEAR(span_of(timeline, 2).end_us, 1000.0, 1e-2);
  EXPECT_NEAR(span_of(timeline, 0).end_us, 1000.0 + 2000.0 * 2.0 / 3.0, 1e-2);
  EXPECT_NEAR(timeline.makespan_us(), 1000.0 + 2000.0 * 2.0 / 3.0, 1e-2);
}

TEST(ClosedForm, AnOpStartingBesideARunningOneSlowsItFromThenOn) {
  // Device 0 runs 1000 µs alone from 0; device 1's op waits 400 µs for an
  // input from device 0's first op (fc1, 400 µs alone), so device 0's
  // second op (fc2, 1000 µs alone) runs beside it. Contention 2: fc2 from 400
  // at the busy pace; device 1's fc3 (300 alone, 600 busy) ends at 1000 µs,
  // fc2 having done 600 / 2000; its 0.7 left alone: 700 µs, ending at 1700.
  HandPlan hand(kDenseNet, 2);
  const int a = hand.compute(hand.node("fc1"), 0, {hand.input(hand.node("input"), 0, 64)}, 400'000'000, 64);
  hand.compute(hand.node("fc2"), 0, {a}, 1'000'000'000, 64);
  hand.compute(hand.node("fc3"), 1, {hand.transfer(a, 1)}, 300'000'000, 64);
  const Timeline timeline = simulate(hand.plan(), pooled_machine(2, 2.0));
  EXPECT_NEAR(span_of(timeline, 0).end_us, 400.0, 1e-3);
  EXPECT_NEAR(span_of(timeline, 3).start_us, 400.0, 1e-3);
  EXPECT_NEAR(span_of(timeline, 3).end_us, 1000.0, 1e-3);
  EXPECT_NEAR(span_of(timeline, 1).end_us, 1700.0, 1e-3);
}

TEST(ClosedForm, ADeviceOfMoreSharesRunsItsOneThreadKindsNoFaster) {
  // A pooled machine of 2 one-share devices; a plan on one device gives it
  // both shares. Its dense layer splits over the threads (speedup 2): 1000
  // µs at one share, 500 here; its relu runs on one thread (speedup 1): 1 GB
  // read and written at 1000 GB/s, 1000 µs whatever the shares.
  const char* const network = R"({"batch": 4, "input": [16], "layers": [
      {"type": "dense", "units": 16, "name": "fc1"}, {"type": "relu", "name": "act"}]})";
  HandPlan hand(network, 1, "single");
  const int h = hand.compute(hand.node("fc1"), 0, {hand.input(hand.node("input"), 0, 64)}, 1'000'000'000, 64);
  hand.compute(hand.node("act"), 0, {h}, 0, 64, 0, 1'000'000'000);
  Machine machine = test_machine(2, free_links());
  machine.pooled = true;
  machine.device.speedup = {{"default|shares=2", 2.0}, {"relu|shares=2", 1.0}};
  const Timeline timeline = simulate(hand.plan(), machine);
  EXPECT_NEAR(span_of(timeline, 0).duration_us(), 500.0, 1e-3);
  EXPECT_NEAR(span_of(timeline, 1).duration_us(), 1000.0, 1e-3);
  // Without speedups, the device is twice one share: both ops at twice the rate.
  machine.device.speedup.clear();
  const Timeline doubled = simulate(hand.plan(), machine);
  EXPECT_NEAR(span_of(doubled, 0).duration_us(), 500.0, 1e-3);
  EXPECT_NEAR(span_of(doubled, 1).duration_us(), 500.0, 1e-3);
}

}  // namespace
}  // namespace closed_form_test
}  // namespace splitscope
