// Verdicts and reasons: each rule of judgement.hpp on a hand-made timeline,
// with the numbers in the sentence worked out by hand.

#include <gtest/gtest.h>

#include "report/judgement.hpp"
#include "report/run_report.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace judgement_test {
namespace {

using testing::compute_span;
using testing::copy_span;
using testing::HandPlan;
using testing::run_result;
using testing::single_plan;
using testing::single_result;

RunSummary baseline_of(double makespan_us) { return summarize(*single_plan(400), single_result(makespan_us)); }

TEST(Verdict, Thresholds) {
  EXPECT_EQ(verdict_for(1.05), Verdict::kWins);
  EXPECT_EQ(verdict_for(1.0499), Verdict::kEven);
  EXPECT_EQ(verdict_for(1.0), Verdict::kEven);
  EXPECT_EQ(verdict_for(0.9501), Verdict::kEven);
  EXPECT_EQ(verdict_for(0.95), Verdict::kLoses);
  EXPECT_EQ(verdict_for(0.5), Verdict::kLoses);
}

TEST(Judgement, ImbalancedLayerSplitLosesToTheHeavyDevice) {
  // d0: [0, 100) + [100, 300) with 300 of the 400 FLOPs; transfer [300, 350);
  // d1: [350, 450). Baseline 400 us: speedup 400 / 450 = 0.889, loses.
  // Losses of 900 us device time: inflation (400 - 400) / 900 = 0,
  // exposed transfer 50 / 900, idle 450 / 900: idle decides, and d0 holds
  // 75% >= 1.25 x 50% of the FLOPs.
  HandPlan hand("horizontal", 2);
  const int fc1 = hand.compute(0, 1, {hand.input(0)}, 100);
  const int fc2 = hand.compute(0, 2, {hand.output(fc1)}, 200);
  const int move = hand.transfer(hand.output(fc2), 1, 1024);
  const int fc3 = hand.compute(1, 3, {hand.output(move)}, 100);
  const Timeline timeline{{compute_span(0, fc1, 0, 100), compute_span(0, fc2, 100, 300),
                           copy_span(1, move, SpanKind::kTransfer, 300, 350), compute_span(1, fc3, 350, 450)}};
  const RunSummary baseline = baseline_of(400);
  const Judgement j = judge(summarize(hand.plan(), run_result({timeline})), &baseline);
  EXPECT_DOUBLE_EQ(*j.speedup, 400.0 / 450);
  EXPECT_DOUBLE_EQ(*j.baseline_makespan_ms, 0.4);
  EXPECT_EQ(j.verdict, Verdict::kLoses);
  EXPECT_EQ(j.decider, Decider::kImbalance);
  EXPECT_DOUBLE_EQ(j.losses->compute_inflation, 0);
  EXPECT_DOUBLE_EQ(j.losses->exposed_transfer, 50.0 / 900);
  EXPECT_DOUBLE_EQ(j.losses->idle, 450.0 / 900);
  EXPECT_EQ(j.reason, "device 0 holds 75% of the FLOPs and the others wait for it (devices idle 50%)");
}

TEST(Judgement, BalancedLayerSplitWaitsOnEachOther) {
  // d0 [0, 200), transfer [200, 210), d1 [210, 410), FLOPs 200 and 200.
  // Baseline 400: speedup 400 / 410 = 0.976: even. Idle (210 + 200) / 820 = 50%.
  HandPlan hand("horizontal", 2);
  const int a = hand.compute(0, 1, {hand.input(0)}, 200);
  const int move = hand.transfer(hand.output(a), 1, 2048);
  const int b = hand.compute(1, 2, {hand.output(move)}, 200);
  const Timeline timeline{{compute_span(0, a, 0, 200), copy_span(1, move, SpanKind::kTransfer, 200, 210),
                           compute_span(1, b, 210, 410)}};
  const RunSummary run = summarize(hand.plan(), run_result({timeline}));
  const RunSummary even_baseline = baseline_of(400);
  const Judgement even = judge(run, &even_baseline);
  EXPECT_EQ(even.verdict, Verdict::kEven);
  EXPECT_EQ(even.decider, Decider::kWaiting);
  EXPECT_EQ(even.reason,
            "spreading the work over 2 devices only breaks even: devices idle 50% of the run waiting on each "
            "other's results");
  // Against a 380 us baseline the same run loses (380 / 410 = 0.927), for the same reason.
  const RunSummary fast_baseline = baseline_of(380);
  const Judgement loses = judge(run, &fast_baseline);
  EXPECT_EQ(loses.verdict, Verdict::kLoses);
  EXPECT_EQ(loses.reason, "devices idle 50% of the run waiting on each other's results");
}

TEST(Judgement, NeuronSplitDrownsInTransfers) {
  // Each device computes half [0, 100), all-gathers [100, 400), computes [400, 500).
  // Baseline 400: speedup 0.8, loses. Device time 1000: exposed transfer 600,
  // idle 0, inflation (400 - 400) / 1000 = 0. The critical path: compute 100,
  // all-gather 300, compute 100: transfers are 60% of it.
  HandPlan hand("vertical", 2);
  const int p0 = hand.compute(0, 1, {hand.input(0)}, 100);
  const int p1 = hand.compute(1, 1, {hand.input(1)}, 100);
  const int gather =
      hand.collective(CollectiveKind::kAllGather, {hand.output(p0), hand.output(p1)}, {0, 1}, 2048, 2048);
  const int q0 = hand.compute(0, 2, {hand.output(gather, 0)}, 100);
  const int q1 = hand.compute(1, 2, {hand.output(gather, 1)}, 100);
  const Timeline timeline{{compute_span(0, p0, 0, 100), compute_span(1, p1, 0, 100),
                           copy_span(0, gather, SpanKind::kCollective, 100, 400),
                           copy_span(1, gather, SpanKind::kCollective, 100, 400), compute_span(0, q0, 400, 500),
                           compute_span(1, q1, 400, 500)}};
  const RunSummary baseline = baseline_of(400);
  const Judgement j = judge(summarize(hand.plan(), run_result({timeline})), &baseline);
  EXPECT_DOUBLE_EQ(*j.speedup, 0.8);
  EXPECT_EQ(j.verdict, Verdict::kLoses);
  EXPECT_EQ(j.decider, Decider::kTransfers);
  EXPECT_EQ(j.reason, "transfers are 60% of the critical path (2.00 KiB in 1 all-gather)");
}

TEST(Judgement, PipelineBubbleBreaksEven) {
  // 2 stages x 2 micro-batches, 100 us each, no transfer time: makespan 300,
  // idle 200 / 600 = 33% (ideal 1/3). Baseline 300: speedup 1, even.
  // Inflation: (400 - 300) / 600 = 17% < idle 33%, so the bubble decides.
  HandPlan hand("pipeline", 2, 2);
  const int a0 = hand.compute(0, 1, {hand.input(0)}, 10, 0);
  const int a1 = hand.compute(0, 1, {hand.input(0)}, 10, 1);
  const int b0 = hand.compute(1, 2, {hand.output(a0)}, 10, 0);
  const int b1 = hand.compute(1, 2, {hand.output(a1)}, 10, 1);
  const Timeline timeline{{compute_span(0, a0, 0, 100), compute_span(0, a1, 100, 200),
                           compute_span(1, b0, 100, 200), compute_span(1, b1, 200, 300)}};
  const RunSummary baseline = baseline_of(300);
  const Judgement j = judge(summarize(hand.plan(), run_result({timeline})), &baseline);
  EXPECT_EQ(j.verdict, Verdict::kEven);
  EXPECT_EQ(j.decider, Decider::kPipelineBubble);
  EXPECT_EQ(j.reason,
            "spreading the work over 2 devices only breaks even: devices idle 33% in the pipeline bubble (ideal "
            "33% for 2 stages and 2 micro-batches)");
}

TEST(Judgement, SlicedOpsThatComputeSlowerInTotal) {
  // Both devices compute [0, 400): 800 us of compute where one device needed
  // 400. Speedup 1, even; inflation (800 - 400) / 800 = 50% beats idle and transfer (0).
  HandPlan hand("vertical", 2);
  const int a = hand.compute(0, 1, {hand.input(0)}, 200);
  const int b = hand.compute(1, 1, {hand.input(1)}, 200);
  const Timeline timeline{{compute_span(0, a, 0, 400), compute_span(1, b, 0, 400)}};
  const RunSummary baseline = baseline_of(400);
  const Judgement j = judge(summarize(hand.plan(), run_result({timeline})), &baseline);
  EXPECT_EQ(j.verdict, Verdict::kEven);
  EXPECT_EQ(j.decider, Decider::kComputeInflation);
  EXPECT_DOUBLE_EQ(j.losses->compute_inflation, 0.5);
  EXPECT_EQ(j.reason,
            "spreading the work over 2 devices only breaks even: the split ops take 2.00x the single device's "
            "compute time (800.0 us against 400.0 us)");
}

TEST(Judgement, AWinNamesHowTheWorkSpread) {
  // Halves [0, 200) on each device, all-gather [200, 210): makespan 210,
  // baseline 400, speedup 1.905. Critical path: compute 200 + gather 10, 5% transfer.
  HandPlan hand("vertical", 2);
  const int p0 = hand.compute(0, 1, {hand.input(0)}, 200);
  const int p1 = hand.compute(1, 1, {hand.input(1)}, 200);
  const int gather =
      hand.collective(CollectiveKind::kAllGather, {hand.output(p0), hand.output(p1)}, {0, 1}, 2048, 2048);
  const Timeline timeline{{compute_span(0, p0, 0, 200), compute_span(1, p1, 0, 200),
                           copy_span(0, gather, SpanKind::kCollective, 200, 210),
                           copy_span(1, gather, SpanKind::kCollective, 200, 210)}};
  const RunSummary baseline = baseline_of(400);
  const Judgement j = judge(summarize(hand.plan(), run_result({timeline})), &baseline);
  EXPECT_DOUBLE_EQ(*j.speedup, 400.0 / 210);
  EXPECT_EQ(j.verdict, Verdict::kWins);
  EXPECT_EQ(j.decider, Decider::kSpread);
  EXPECT_EQ(j.reason,
            "the work spreads over 2 devices (the busiest holds 50% of the FLOPs) and transfers are only 5% of the "
            "critical path");

  // The same split on a link 30 times slower: all-gather [200, 500), makespan
  // 500, speedup 0.8. Without a baseline this fast it still "wins" against a
  // 1000 us baseline (2x), but transfers are then 300 / 500 = 60% of the path.
  Timeline slow_link = timeline;
  for (size_t i = 2; i < 4; ++i) slow_link.spans[i].end_us = 500;
  const RunSummary slow_baseline = baseline_of(1000);
  const Judgement still = judge(summarize(hand.plan(), run_result({slow_link})), &slow_baseline);
  EXPECT_EQ(still.verdict, Verdict::kWins);
  EXPECT_EQ(still.reason,
            "the work spreads over 2 devices (the busiest holds 50% of the FLOPs); transfers still take 60% of the "
            "critical path");
}

TEST(Judgement, AWinWithoutSpreadingSaysTheOpsRanFaster) {
  // d0 [0, 200) with 300 of 400 FLOPs, transfer [200, 210), d1 [210, 260):
  // makespan 260 against a 400 us baseline, speedup 1.54: a win, yet device 0
  // holds 75% >= 1.25 x 50% of the FLOPs. The split computed 250 us in all
  // against the single device's 400 us: 0.625x.
  HandPlan hand("horizontal", 2);
  const int a = hand.compute(0, 3, {hand.input(0)}, 300);
  const int move = hand.transfer(hand.output(a), 1, 1024);
  const int b = hand.compute(1, 1, {hand.output(move)}, 100);
  const Timeline timeline{{compute_span(0, a, 0, 200), copy_span(1, move, SpanKind::kTransfer, 200, 210),
                           compute_span(1, b, 210, 260)}};
  const RunSummary baseline = baseline_of(400);
  const Judgement j = judge(summarize(hand.plan(), run_result({timeline})), &baseline);
  EXPECT_EQ(j.verdict, Verdict::kWins);
  EXPECT_EQ(j.decider, Decider::kFasterOps);
  EXPECT_EQ(j.reason,
            "its ops compute faster than on the single device (0.62x the compute time: 250.0 us against 400.0 us), "
            "though device 0 holds 75% of the FLOPs");
}

TEST(Judgement, MemoryDecidesBeforeTime) {
  HandPlan hand("horizontal", 2);
  hand.compute(0, 1, {hand.input(0)}, 1);
  hand.set_memory({10 * 1024, 10 * 1024});
  RunResult too_small = run_result({});
  too_small.info.device_memory_bytes = {8 * 1024, 8 * 1024};
  const RunSummary run = summarize(hand.plan(), too_small);
  const RunSummary baseline = baseline_of(400);
  const Judgement j = judge(run, &baseline);
  EXPECT_EQ(j.verdict, Verdict::kLoses);
  EXPECT_EQ(j.decider, Decider::kDoesNotFit);
  EXPECT_FALSE(j.speedup.has_value());
  EXPECT_EQ(j.reason,
            "does not fit: device 0 needs 10.00 KiB (10240 bytes) but has 8.00 KiB (8192 bytes), and 1 more device "
            "does not fit either");

  // The other way round: one device cannot hold the model, two can.
  RunResult single = single_result(400);
  single.info.device_memory_bytes = {500};  // single_plan() needs 1000 bytes
  const RunSummary big_baseline = summarize(*single_plan(400), single);
  HandPlan split("horizontal", 2);
  const int a = split.compute(0, 1, {split.input(0)}, 1);
  split.set_memory({400, 400});
  RunResult fits = run_result({Timeline{{compute_span(0, a, 0, 300)}}});
  fits.info.device_memory_bytes = {500, 500};
  const Judgement rescue = judge(summarize(split.plan(), fits), &big_baseline);
  EXPECT_EQ(rescue.verdict, Verdict::kWins);
  EXPECT_EQ(rescue.decider, Decider::kBaselineDoesNotFit);
  EXPECT_EQ(rescue.reason,
            "the model does not fit on one device (device 0 needs 1000 B (1000 bytes) but has 500 B (500 bytes)); "
            "split over 2 devices it does");
}

TEST(Judgement, BaselineAndNoBaseline) {
  const RunSummary single = baseline_of(400);
  const Judgement self = judge(single, &single);
  EXPECT_EQ(self.verdict, Verdict::kEven);
  EXPECT_DOUBLE_EQ(*self.speedup, 1.0);
  EXPECT_EQ(self.reason, "the single-device baseline");

  const Judgement none = judge(single, nullptr);
  EXPECT_FALSE(none.verdict.has_value());
  EXPECT_FALSE(none.speedup.has_value());
  EXPECT_EQ(none.decider, Decider::kNoBaseline);

  // make_run_report judges a `single` run without a baseline against itself.
  const RunReport report = make_run_report(single_plan(400), single_result(400), nullptr);
  EXPECT_EQ(report.judgement.verdict, Verdict::kEven);
  EXPECT_EQ(report.timeline.spans.size(), 1u);
}

// Rule 7: the model's own error. The layer split of BalancedLayerSplitWaitsOnEachOther: makespan 410 us,
// 400 us of it compute on the critical path and 10 us transfer; the baseline all compute.
RunSummary simulated_split(double error) {
  HandPlan hand("horizontal", 2);
  const int a = hand.compute(0, 1, {hand.input(0)}, 200);
  const int move = hand.transfer(hand.output(a), 1, 2048);
  const int b = hand.compute(1, 2, {hand.output(move)}, 200);
  const Timeline timeline{{compute_span(0, a, 0, 200), copy_span(1, move, SpanKind::kTransfer, 200, 210),
                           compute_span(1, b, 210, 410)}};
  RunSummary run = summarize(hand.plan(), run_result({timeline}, "sim"));
  run.info.measured = false;
  run.info.model_error = ModelErrorInfo{error, 1.0};
  return run;
}

RunSummary simulated_baseline(double makespan_us, double error) {
  RunSummary baseline = baseline_of(makespan_us);
  baseline.info.measured = false;
  baseline.info.model_error = ModelErrorInfo{error, 1.0};
  return baseline;
}

TEST(Judgement, ASimulatedSpeedupWithinTheModelsErrorOfAThresholdIsUncertain) {
  // Baseline 430 us: speedup 430 / 410 = 1.0488, even. With every op 20% off in both runs alike (the larger
  // of the two errors), (430 ± 86) / (410 ± 80): 344 / 330 = 1.04242 to 516 / 490 = 1.05306, across 1.05.
  const RunSummary baseline = simulated_baseline(430, 0.1);
  const Judgement j = judge(simulated_split(0.2), &baseline);
  ASSERT_TRUE(j.model_error_interval);
  EXPECT_NEAR(j.model_error_interval->low, 344.0 / 330, 1e-12);
  EXPECT_NEAR(j.model_error_interval->high, 516.0 / 490, 1e-12);
  EXPECT_EQ(j.verdict, Verdict::kUncertain);
  EXPECT_EQ(j.decider, Decider::kModelError);
  EXPECT_EQ(j.reason,
            "within the model's error (its ops typically 20% off, alike in both runs) the speedup could be 1.04x "
            "to 1.05x, across the 1.05x win threshold; spreading the work over 2 devices only breaks even: devices "
            "idle 50% of the run waiting on each other's results");
  // 2% off: (430 ± 8.6) / (410 ± 8): 421.4 / 402 = 1.04826 to 438.6 / 418 = 1.04928, still even.
  const RunSummary sure_baseline = simulated_baseline(430, 0.02);
  const Judgement sure = judge(simulated_split(0.02), &sure_baseline);
  EXPECT_NEAR(sure.model_error_interval->low, 421.4 / 402, 1e-12);
  EXPECT_NEAR(sure.model_error_interval->high, 438.6 / 418, 1e-12);
  EXPECT_EQ(sure.verdict, Verdict::kEven);
  EXPECT_EQ(sure.decider, Decider::kWaiting);
}

TEST(Judgement, AnErrorBothRunsComputeAlikeCannotMoveTheirSpeedup) {
  // Both runs all compute on the critical path: (T_b (1 + e)) / (T_r (1 + e)) is the speedup for every e.
  HandPlan hand("data", 2);
  const int a = hand.compute(0, 1, {hand.input(0)}, 200);
  const int b = hand.compute(1, 2, {hand.input(0)}, 200);
  RunSummary run = summarize(hand.plan(), run_result({Timeline{{compute_span(0, a, 0, 200),
                                                                 compute_span(1, b, 0, 200)}}}, "sim"));
  run.info.model_error = ModelErrorInfo{0.3, 1.0};
  const RunSummary baseline = simulated_baseline(209, 0.3);
  const Judgement j = judge(run, &baseline);
  EXPECT_NEAR(j.model_error_interval->low, 209.0 / 200, 1e-12);
  EXPECT_NEAR(j.model_error_interval->high, 209.0 / 200, 1e-12);
  EXPECT_EQ(j.verdict, Verdict::kEven);
  // A measured run carries no model error, and gets no such interval.
  const RunSummary measured = baseline_of(209);
  EXPECT_FALSE(judge(run, &measured).model_error_interval);
}

}  // namespace
}  // namespace judgement_test
}  // namespace splitscope
