// The merge of a multi-process run's span times (exec/mpi/rank_timeline.hpp):
// a span seen by two ranks runs from the earliest start to the latest end.

#include "exec/mpi/rank_timeline.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

namespace splitscope {
namespace rank_timeline_test {
namespace {

// Span 0: rank 0's compute op. Span 1: a transfer 0 -> 1, sent by rank 0 and
// received by rank 1. Span 2: rank 1's compute op.
std::vector<SpanSlot> three_slots() {
  std::vector<SpanSlot> slots(3);
  slots[0] = {0, 0, Lane::kCompute, SpanKind::kCompute, 100, 0};
  slots[1] = {1, 1, Lane::kCopyIn, SpanKind::kTransfer, 0, 64};
  slots[2] = {2, 1, Lane::kCompute, SpanKind::kCompute, 50, 0};
  return slots;
}

TEST(RankTimeline, ASpanSeenByTwoRanksRunsFromTheSendToTheReceive) {
  // Rank 0: compute [0, 10], send started at 10 (ends at once, it is non-blocking).
  const std::vector<double> rank0 =
      rank_span_times(3, {{0, -1, -1}, {-1, 1, -1}}, {{0, 10}, {10, 10.5}}, 0.0);
  // Rank 1, whose clock started 2 us after rank 0's: it waited on the receive
  // from its 0 (2 on the common clock) to 12 (14), then computed 12..20 (14..22).
  const std::vector<double> rank1 =
      rank_span_times(3, {{-1, -1, 1}, {2, -1, -1}}, {{0, 12}, {12, 20}}, 2.0);
  std::vector<double> all = rank0;
  all.insert(all.end(), rank1.begin(), rank1.end());

  const Timeline timeline = merge_rank_span_times(three_slots(), all);
  ASSERT_EQ(timeline.spans.size(), 3u);
  EXPECT_DOUBLE_EQ(timeline.spans[0].start_us, 0);
  EXPECT_DOUBLE_EQ(timeline.spans[0].end_us, 10);
  // The transfer: its start is the send's (not the receiver's wait from 2), its end the receive's.
  EXPECT_DOUBLE_EQ(timeline.spans[1].start_us, 10);
  EXPECT_DOUBLE_EQ(timeline.spans[1].end_us, 14);
  EXPECT_EQ(timeline.spans[1].bytes, 64);
  EXPECT_EQ(timeline.spans[1].device, 1);
  EXPECT_DOUBLE_EQ(timeline.spans[2].start_us, 14);
  EXPECT_DOUBLE_EQ(timeline.spans[2].end_us, 22);
  EXPECT_DOUBLE_EQ(timeline.makespan_us(), 22);
}

TEST(RankTimeline, RankTimesLeaveWhatTheRankDidNotSeeUnset) {
  const std::vector<double> times = rank_span_times(2, {{-1, 0, -1}}, {{5, 6}}, 1.0);
  ASSERT_EQ(times.size(), 4u);
  EXPECT_DOUBLE_EQ(times[0], 6);  // a send: its start only
  EXPECT_TRUE(std::isnan(times[1]));
  EXPECT_TRUE(std::isnan(times[2]));
  EXPECT_TRUE(std::isnan(times[3]));
}

TEST(RankTimeline, ASpanNoRankEndedIsABug) {
  // Only the send of the transfer was seen: no rank received it.
  const std::vector<double> rank0 = rank_span_times(3, {{0, -1, -1}, {-1, 1, -1}}, {{0, 10}, {10, 11}}, 0.0);
  const std::vector<double> rank1 = rank_span_times(3, {{2, -1, -1}}, {{12, 20}}, 0.0);
  std::vector<double> all = rank0;
  all.insert(all.end(), rank1.begin(), rank1.end());
  EXPECT_THROW(merge_rank_span_times(three_slots(), all), std::logic_error);
}

}  // namespace
}  // namespace rank_timeline_test
}  // namespace splitscope
