// The critical path on hand-made timelines: a known longest chain, lane
// predecessors, collectives, waiting gaps.

#include <gtest/gtest.h>

#include "report/critical_path.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace critical_path_test {
namespace {

using testing::compute_span;
using testing::copy_span;
using testing::HandPlan;

TEST(CriticalPath, FollowsTheLongestChainNotTheShortBranch) {
  // d0: A [0, 100); A -> d1 (T1) [100, 120); d1: B(A) [120, 300).
  // d0: C(A) [100, 150); C -> d1 (T2) [150, 170).
  // d1: D(B, C) [310, 400): starts 10 us after B ends (launch latency).
  // Longest chain: A, T1, B, D = compute 100 + 180 + 90, transfer 20, gap 10.
  HandPlan hand("horizontal", 2);
  const int a = hand.compute(0, 1, {hand.input(0)}, 100);
  const int t1 = hand.transfer(hand.output(a), 1, 32);
  const int b = hand.compute(1, 2, {hand.output(t1)}, 100);
  const int c = hand.compute(0, 2, {hand.output(a)}, 100);
  const int t2 = hand.transfer(hand.output(c), 1, 32);
  const int d = hand.compute(1, 3, {hand.output(b), hand.output(t2)}, 100);
  const Timeline timeline{{compute_span(0, a, 0, 100), copy_span(1, t1, SpanKind::kTransfer, 100, 120),
                           compute_span(1, b, 120, 300), compute_span(0, c, 100, 150),
                           copy_span(1, t2, SpanKind::kTransfer, 150, 170), compute_span(1, d, 310, 400)}};
  const CriticalPath path = find_critical_path(hand.plan(), timeline);
  EXPECT_EQ(path.spans, (std::vector<int>{0, 1, 2, 5}));
  EXPECT_DOUBLE_EQ(path.compute_ms, 0.370);
  EXPECT_DOUBLE_EQ(path.transfer_ms, 0.020);
  EXPECT_DOUBLE_EQ(path.gap_ms, 0.010);
  EXPECT_DOUBLE_EQ(path.length_ms(), 0.400);  // the makespan
  EXPECT_DOUBLE_EQ(path.transfer_share(), 0.05);
}

TEST(CriticalPath, ALaneHoldsUpIndependentOps) {
  // Two independent ops on one lane: Y waited for X only because the lane was busy.
  HandPlan hand("single", 1);
  const int x = hand.compute(0, 1, {hand.input(0)}, 1);
  const int y = hand.compute(0, 2, {hand.input(0)}, 1);
  const Timeline timeline{{compute_span(0, y, 100, 250), compute_span(0, x, 20, 100)}};
  const CriticalPath path = find_critical_path(hand.plan(), timeline);
  EXPECT_EQ(path.spans, (std::vector<int>{1, 0}));
  EXPECT_DOUBLE_EQ(path.compute_ms, 0.230);
  EXPECT_DOUBLE_EQ(path.gap_ms, 0.020);  // the run's first 20 us, before X started
}

TEST(CriticalPath, ACollectiveIsFollowedOnTheDeviceThatWaitsForIt) {
  // d0 computes [0, 100), d1 [0, 80); all-gather spans d0 [100, 130), d1 [100, 160);
  // d1 then computes [160, 200). The path goes through d1's all-gather span
  // (its own device), then back to d0's compute, which ended last.
  HandPlan hand("vertical", 2);
  const int p0 = hand.compute(0, 1, {hand.input(0)}, 1);
  const int p1 = hand.compute(1, 1, {hand.input(1)}, 1);
  const int gather = hand.collective(CollectiveKind::kAllGather, {hand.output(p0), hand.output(p1)}, {0, 1}, 4000,
                                     4000);
  const int next = hand.compute(1, 2, {hand.output(gather, 1)}, 1);
  const Timeline timeline{{compute_span(0, p0, 0, 100), compute_span(1, p1, 0, 80),
                           copy_span(0, gather, SpanKind::kCollective, 100, 130),
                           copy_span(1, gather, SpanKind::kCollective, 100, 160), compute_span(1, next, 160, 200)}};
  const CriticalPath path = find_critical_path(hand.plan(), timeline);
  EXPECT_EQ(path.spans, (std::vector<int>{0, 3, 4}));
  EXPECT_DOUBLE_EQ(path.compute_ms, 0.140);
  EXPECT_DOUBLE_EQ(path.transfer_ms, 0.060);
  EXPECT_DOUBLE_EQ(path.gap_ms, 0);
}

TEST(CriticalPath, OverlappingNoiseIsNotCountedTwice) {
  // A measured predecessor that "ends" 5 us after its successor starts (clock
  // skew between streams): the path still adds up to the makespan.
  HandPlan hand("horizontal", 2);
  const int a = hand.compute(0, 1, {hand.input(0)}, 1);
  const int t = hand.transfer(hand.output(a), 1, 32);
  const Timeline timeline{{compute_span(0, a, 0, 105), copy_span(1, t, SpanKind::kTransfer, 100, 150)}};
  const CriticalPath path = find_critical_path(hand.plan(), timeline);
  EXPECT_DOUBLE_EQ(path.transfer_ms, 0.050);
  EXPECT_DOUBLE_EQ(path.compute_ms, 0.100);  // [0, 100): the part before the transfer started
  EXPECT_DOUBLE_EQ(path.length_ms(), 0.150);
}

TEST(CriticalPath, EmptyTimelineHasAnEmptyPath) {
  HandPlan hand("single", 1);
  const CriticalPath path = find_critical_path(hand.plan(), Timeline{});
  EXPECT_TRUE(path.spans.empty());
  EXPECT_DOUBLE_EQ(path.length_ms(), 0);
  EXPECT_DOUBLE_EQ(path.transfer_share(), 0);
}

}  // namespace
}  // namespace critical_path_test
}  // namespace splitscope
