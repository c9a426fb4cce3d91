// RunSummary arithmetic on hand-made Plans and Timelines: per-device compute,
// transfer, overlap and idle; shares; transfers and bandwidths; the pipeline
// bubble; the memory check.

#include <gtest/gtest.h>

#include "report/bandwidth.hpp"
#include "report/run_summary.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace summary_test {
namespace {

using testing::compute_span;
using testing::copy_span;
using testing::HandPlan;
using testing::run_result;

/// d0: fc1 [0, 100), fc2 [100, 300); fc2 -> d1 [300, 350) (copy-in of d1); d1: fc3 [350, 450).
struct TwoStage {
  HandPlan hand{"horizontal", 2};
  Timeline timeline;
  TwoStage() {
    const int fc1 = hand.compute(0, 1, {hand.input(0)}, 100);
    const int fc2 = hand.compute(0, 2, {hand.output(fc1)}, 200);
    const int move = hand.transfer(hand.output(fc2), 1, 1024);
    const int fc3 = hand.compute(1, 3, {hand.output(move)}, 100);
    hand.set_memory({4096, 2048});
    timeline.spans = {compute_span(0, fc1, 0, 100), compute_span(0, fc2, 100, 300),
                      copy_span(1, move, SpanKind::kTransfer, 300, 350, 1024), compute_span(1, fc3, 350, 450)};
  }
};

TEST(Summary, PerDeviceTimesOfALayerSplit) {
  TwoStage run;
  const RunSummary s = summarize(run.hand.plan(), run_result({run.timeline}));
  ASSERT_TRUE(s.timed());
  EXPECT_DOUBLE_EQ(s.makespan->median_ms, 0.450);
  ASSERT_EQ(s.per_device.size(), 2u);
  // d0: computes 300 us, idles 450 - 300 = 150.
  EXPECT_DOUBLE_EQ(s.per_device[0].compute_ms, 0.300);
  EXPECT_DOUBLE_EQ(s.per_device[0].transfer_ms, 0);
  EXPECT_DOUBLE_EQ(s.per_device[0].idle_ms, 0.150);
  // d1: receives 50 us, computes 100 us, idles 450 - 150 = 300.
  EXPECT_DOUBLE_EQ(s.per_device[1].compute_ms, 0.100);
  EXPECT_DOUBLE_EQ(s.per_device[1].transfer_ms, 0.050);
  EXPECT_DOUBLE_EQ(s.per_device[1].idle_ms, 0.300);
  // FLOPs and memory come from the plan.
  EXPECT_EQ(s.per_device[0].flops, 300);
  EXPECT_EQ(s.per_device[1].flops, 100);
  EXPECT_EQ(s.per_device[0].ops, 2);
  EXPECT_EQ(s.per_device[0].memory_peak_bytes, 4096);
  EXPECT_EQ(s.per_device[1].param_bytes, 1024);
  EXPECT_EQ(s.max_memory_peak_bytes(), 4096);
  // Device time 2 x 450 = 900 us: compute 400, exposed transfer 50, idle 450.
  EXPECT_DOUBLE_EQ(s.shares.compute, 400.0 / 900);
  EXPECT_DOUBLE_EQ(s.shares.transfer, 50.0 / 900);
  EXPECT_DOUBLE_EQ(s.shares.idle, 450.0 / 900);
  // The critical path is the whole chain.
  EXPECT_DOUBLE_EQ(s.critical_path.compute_ms, 0.400);
  EXPECT_DOUBLE_EQ(s.critical_path.transfer_ms, 0.050);
  // Busiest device by FLOPs: d0 with 300 of 400.
  EXPECT_EQ(s.busiest_device(), 0);
  EXPECT_DOUBLE_EQ(s.busiest_flop_share(), 0.75);
  EXPECT_FALSE(s.bubble_ideal.has_value());
}

TEST(Summary, TransfersCountBytesTimeAndBandwidth) {
  TwoStage run;
  const RunSummary s = summarize(run.hand.plan(), run_result({run.timeline}));
  EXPECT_EQ(s.transfers.count, 1);
  EXPECT_EQ(s.transfers.bytes, 1024);
  EXPECT_DOUBLE_EQ(s.transfers.time_ms, 0.050);
  ASSERT_EQ(s.movement.size(), 1u);
  EXPECT_EQ(s.movement[0].kind, "transfer");
  // 1024 B in 50 us = 20.48 MB/s = 0.02048 GB/s; a point-to-point copy's busbw is its algbw.
  EXPECT_NEAR(s.movement[0].algbw_gbps, 0.02048, 1e-12);
  EXPECT_NEAR(s.movement[0].busbw_gbps, 0.02048, 1e-12);
}

TEST(Summary, OverlapOfCopiesWithCompute) {
  // d0 computes [0, 100); copies in [50, 150) and out [120, 160); d1 computes [0, 200).
  HandPlan hand("vertical", 2);
  const int a = hand.compute(0, 1, {hand.input(0)}, 1);
  const int b = hand.compute(1, 1, {hand.input(1)}, 1);
  const int in = hand.transfer(hand.output(b), 0, 64);
  const int out = hand.transfer(hand.output(a), 1, 64);
  const Timeline timeline{{compute_span(0, a, 0, 100), compute_span(1, b, 0, 200),
                           copy_span(0, in, SpanKind::kTransfer, 50, 150),
                           copy_span(0, out, SpanKind::kTransfer, 120, 160, 0, Lane::kCopyOut)}};
  const RunSummary s = summarize(hand.plan(), run_result({timeline}));
  const DeviceSummary& d0 = s.per_device[0];
  EXPECT_DOUBLE_EQ(d0.compute_ms, 0.100);
  EXPECT_DOUBLE_EQ(d0.transfer_ms, 0.110);   // [50, 160): the two copy lanes' union
  EXPECT_DOUBLE_EQ(d0.overlap_ms, 0.050);    // [50, 100)
  EXPECT_DOUBLE_EQ(d0.idle_ms, 0.040);       // makespan 200 - busy [0, 160)
  EXPECT_DOUBLE_EQ(d0.exposed_transfer_ms(), 0.060);
  // compute + transfer - overlap + idle = makespan, on every device.
  for (const DeviceSummary& d : s.per_device) {
    EXPECT_DOUBLE_EQ(d.compute_ms + d.transfer_ms - d.overlap_ms + d.idle_ms, 0.200) << "device " << d.id;
  }
  EXPECT_NEAR(s.shares.compute + s.shares.transfer + s.shares.idle, 1.0, 1e-12);
}

TEST(Summary, ExposedCommunicationIsWhatItsDevicesSpentOutsideTheirCompute) {
  // A gradient all-reduce over 2 devices, [80, 170) on both, and a second
  // one [90, 140) beside it. d0 computes [0, 100) and [150, 200): of the
  // all-reduces' union [80, 170), [100, 150) is exposed there, 50 us. d1
  // computes [0, 200): none. Mean over the devices: 25 us. A transfer into
  // d1, [200, 260), after d1's compute: 60 us, its one device.
  HandPlan hand("data", 2);
  const int c0 = hand.compute(0, 1, {hand.input(0)}, 1);
  const int c0b = hand.compute(0, 2, {hand.output(c0)}, 1);
  const int c1 = hand.compute(1, 1, {hand.input(1)}, 1);
  const int reduce =
      hand.collective(CollectiveKind::kAllReduce, {hand.output(c0), hand.output(c1)}, {0, 1}, 4000, 4000);
  const int second =
      hand.collective(CollectiveKind::kAllReduce, {hand.output(c0b), hand.output(c1)}, {0, 1}, 4000, 4000);
  const int copy = hand.transfer(hand.output(c0b), 1, 64);
  const Timeline timeline{{compute_span(0, c0, 0, 100), compute_span(0, c0b, 150, 200), compute_span(1, c1, 0, 200),
                           copy_span(0, reduce, SpanKind::kCollective, 80, 170),
                           copy_span(1, reduce, SpanKind::kCollective, 80, 170),
                           copy_span(0, second, SpanKind::kCollective, 90, 140),
                           copy_span(1, second, SpanKind::kCollective, 90, 140),
                           copy_span(1, copy, SpanKind::kTransfer, 200, 260)}};
  const RunSummary s = summarize(hand.plan(), run_result({timeline}));
  ASSERT_EQ(s.movement.size(), 2u);
  EXPECT_EQ(s.movement[0].kind, "transfer");
  EXPECT_DOUBLE_EQ(s.movement[0].exposed_ms, 0.060);
  EXPECT_EQ(s.movement[1].kind, "all-reduce");
  EXPECT_DOUBLE_EQ(s.movement[1].time_ms, 0.090 + 0.050);  // each op's time, summed
  EXPECT_DOUBLE_EQ(s.movement[1].exposed_ms, 0.025);
  // Device 0's exposed transfer time is the same 50 us.
  EXPECT_DOUBLE_EQ(s.per_device[0].exposed_transfer_ms(), 0.050);
}

TEST(Summary, CollectiveBandwidthsFollowNcclTests) {
  // One all-gather of a 4000-byte tensor over 2 devices, taking 60 us (first
  // span start 100, last span end 160); one all-reduce of 8000 bytes over 4
  // devices taking 100 us.
  HandPlan hand("tensor", 4);
  std::vector<int> parts;
  for (int d = 0; d < 4; ++d) parts.push_back(hand.output(hand.compute(d, 1, {hand.input(d)}, 1)));
  const int gather = hand.collective(CollectiveKind::kAllGather, {parts[0], parts[1]}, {0, 1}, 4000, 4000);
  const int reduce = hand.collective(CollectiveKind::kAllReduce, parts, {0, 1, 2, 3}, 8000, 24000);
  Timeline timeline;
  for (int d = 0; d < 4; ++d) timeline.spans.push_back(compute_span(d, d, 0, 100));
  timeline.spans.push_back(copy_span(0, gather, SpanKind::kCollective, 100, 130));
  timeline.spans.push_back(copy_span(1, gather, SpanKind::kCollective, 100, 160));
  for (int d = 0; d < 4; ++d) timeline.spans.push_back(copy_span(d, reduce, SpanKind::kCollective, 200, 300));
  const RunSummary s = summarize(hand.plan(), run_result({timeline}));
  ASSERT_EQ(s.movement.size(), 2u);
  const MovementSummary& ag = s.movement[0];
  EXPECT_EQ(ag.kind, "all-gather");
  EXPECT_DOUBLE_EQ(ag.time_ms, 0.060);
  EXPECT_NEAR(ag.algbw_gbps, 4000 / 60e-6 / 1e9, 1e-12);        // 0.0667 GB/s
  EXPECT_NEAR(ag.busbw_gbps, 4000 / 60e-6 / 1e9 * 0.5, 1e-12);  // x (n-1)/n, n = 2
  const MovementSummary& ar = s.movement[1];
  EXPECT_EQ(ar.kind, "all-reduce");
  EXPECT_NEAR(ar.algbw_gbps, 8000 / 100e-6 / 1e9, 1e-12);        // 0.08 GB/s
  EXPECT_NEAR(ar.busbw_gbps, 8000 / 100e-6 / 1e9 * 1.5, 1e-12);  // x 2(n-1)/n, n = 4
  // Totals: 2 ops, 4000 + 24000 bytes moved, 60 + 100 us.
  EXPECT_EQ(s.transfers.count, 2);
  EXPECT_EQ(s.transfers.bytes, 28000);
  EXPECT_DOUBLE_EQ(s.transfers.time_ms, 0.160);
}

TEST(Summary, BusFactorsPerCollective) {
  EXPECT_DOUBLE_EQ(all_reduce_bus_factor(8), 1.75);  // 2 * 7 / 8
  EXPECT_DOUBLE_EQ(all_gather_bus_factor(8), 0.875);  // 7 / 8
  EXPECT_DOUBLE_EQ(bus_factor(CollectiveKind::kConcat, 4), 0.75);
  EXPECT_DOUBLE_EQ(all_reduce_bus_factor(1), 0);  // one rank moves nothing
  EXPECT_DOUBLE_EQ(gigabytes_per_second(2'000'000'000, 2.0), 1.0);
}

TEST(Summary, PipelineBubbleMeasuredNextToIdeal) {
  // 2 stages, 2 micro-batches, no transfer time: d0 [0, 100) [100, 200);
  // d1 [100, 200) [200, 300). Each device idles 100 of 300 us: 1/3, which is
  // the ideal (N-1)/(M+N-1) = 1/3.
  HandPlan hand("pipeline", 2, 2);
  const int a0 = hand.compute(0, 1, {hand.input(0)}, 10, 0);
  const int a1 = hand.compute(0, 1, {hand.input(0)}, 10, 1);
  const int b0 = hand.compute(1, 2, {hand.output(a0)}, 10, 0);
  const int b1 = hand.compute(1, 2, {hand.output(a1)}, 10, 1);
  const Timeline timeline{{compute_span(0, a0, 0, 100), compute_span(0, a1, 100, 200),
                           compute_span(1, b0, 100, 200), compute_span(1, b1, 200, 300)}};
  const RunSummary s = summarize(hand.plan(), run_result({timeline}));
  ASSERT_TRUE(s.bubble_ideal && s.bubble_measured);
  EXPECT_DOUBLE_EQ(*s.bubble_ideal, 1.0 / 3);
  EXPECT_DOUBLE_EQ(*s.bubble_measured, 200.0 / 600);
  // Critical path: b1 <- a1 (data; b0 on the lane ends at the same time) <- a0 (lane).
  EXPECT_DOUBLE_EQ(s.critical_path.compute_ms, 0.300);
}

TEST(Summary, PerDeviceNumbersComeFromTheRepresentativeRepeat) {
  TwoStage run;
  Timeline slow = run.timeline;
  for (Span& span : slow.spans) {
    span.start_us *= 2;
    span.end_us *= 2;
  }
  Timeline fast = run.timeline;
  for (Span& span : fast.spans) {
    span.start_us /= 2;
    span.end_us /= 2;
  }
  // Makespans 900, 450, 225 us: the median repeat is the middle one (index 1).
  const RunSummary s = summarize(run.hand.plan(), run_result({slow, run.timeline, fast}));
  EXPECT_EQ(s.makespan->representative, 1);
  EXPECT_DOUBLE_EQ(s.makespan->min_ms, 0.225);
  EXPECT_DOUBLE_EQ(s.makespan->max_ms, 0.900);
  EXPECT_DOUBLE_EQ(s.per_device[0].compute_ms, 0.300);
}

TEST(Summary, APlanThatDoesNotFitHasNoTimes) {
  TwoStage run;
  run.hand.set_memory({100, 300});
  RunResult result = run_result({});
  result.info.device_memory_bytes = {200, 200};
  const RunSummary s = summarize(run.hand.plan(), result);
  EXPECT_FALSE(s.fits());
  EXPECT_FALSE(s.timed());
  EXPECT_EQ(s.memory.device, 1);
  EXPECT_EQ(s.memory.needed_bytes, 300);
  EXPECT_EQ(s.memory.available_bytes, 200);
  EXPECT_EQ(s.memory.problem, "device 1 needs 300 B (300 bytes) but has 200 B (200 bytes)");
  // Counts from the plan stay: they say what would have moved.
  EXPECT_EQ(s.transfers.count, 1);
  EXPECT_EQ(s.transfers.bytes, 1024);
  EXPECT_EQ(s.per_device[1].memory_available_bytes, 200);
}

TEST(Summary, MemoryCheckNamesTheWorstDeviceAndCountsTheOthers) {
  HandPlan hand("horizontal", 3);
  hand.set_memory({3 * 1024, 5 * 1024, 1024});
  const MemoryFit fit = check_memory_fit(hand.plan(), {2048, 2048, 2048});
  EXPECT_FALSE(fit.fits);
  EXPECT_TRUE(fit.checked);
  EXPECT_EQ(fit.device, 1);  // short by 3 KiB; device 0 by 1 KiB
  EXPECT_EQ(fit.problem,
            "device 1 needs 5.00 KiB (5120 bytes) but has 2.00 KiB (2048 bytes), and 1 more device does not fit "
            "either");
  const MemoryFit unknown = check_memory_fit(hand.plan(), {});
  EXPECT_TRUE(unknown.fits);
  EXPECT_FALSE(unknown.checked);
}

}  // namespace
}  // namespace summary_test
}  // namespace splitscope
