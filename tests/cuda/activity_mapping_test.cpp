// CUPTI-like records -> spans, with fake records: several kernels per op,
// copies, records out of order, pairings before and after their records,
// activity that is not ours, an op with no records, records of another run.

#include <gtest/gtest.h>

#include "exec/cuda/activity_mapping.hpp"

namespace splitscope::testing {
namespace activity_mapping_test {
namespace {

using namespace gpu;

DeviceProgram three_spans() {
  DeviceProgram program;
  program.devices = 2;
  program.spans.push_back(SpanSpec{4, 0, Lane::kCompute, SpanKind::kCompute, 1000, 0, {0, 1}});
  program.spans.push_back(SpanSpec{5, 1, Lane::kCopyIn, SpanKind::kTransfer, 0, 4096, {2}});
  program.spans.push_back(SpanSpec{6, 1, Lane::kCompute, SpanKind::kCompute, 50, 0, {3}});
  return program;
}

TEST(ExternalIds, EncodeRunAndSpanAndNeverZero) {
  EXPECT_EQ(external_id(0, 0), 1u);
  EXPECT_EQ(external_id(3, 41), (uint64_t{3} << 32) | 42u);
  int run = -1;
  int span = -1;
  ASSERT_TRUE(decode_external_id(external_id(7, 123), &run, &span));
  EXPECT_EQ(run, 7);
  EXPECT_EQ(span, 123);
  EXPECT_FALSE(decode_external_id(0, &run, &span));
  EXPECT_FALSE(decode_external_id(uint64_t{5} << 32, &run, &span));
}

TEST(PairRecords, JoinsActivityToPushedIdsInAnyOrder) {
  const std::vector<ActivityRecord> activity{
      {ActivityKind::kKernel, 12, 2500, 4000, 0, 7, 0},   // second kernel of span 0 (cuBLAS's epilogue, say)
      {ActivityKind::kMemcpy, 20, 3000, 5000, 1, 9, 4096},
      {ActivityKind::kKernel, 11, 1000, 2000, 0, 7, 0},   // first kernel of span 0, delivered late
      {ActivityKind::kMemset, 99, 10, 20, 0, 3, 64},      // not ours: no pairing
  };
  const std::vector<ExternalCorrelation> pairings{
      {20, external_id(0, 1)},
      {11, external_id(0, 0)},
      {12, external_id(0, 0)},
  };
  const PairedRecords paired = pair_records(activity, pairings);
  EXPECT_EQ(paired.unattributed, 1);
  ASSERT_EQ(paired.records.size(), 3u);
  EXPECT_EQ(paired.records[0].span, 0);
  EXPECT_EQ(paired.records[0].start_ns, 2500u);
  EXPECT_EQ(paired.records[1].span, 1);
  EXPECT_EQ(paired.records[1].end_ns, 5000u);
  EXPECT_EQ(paired.records[2].span, 0);
  EXPECT_EQ(paired.records[2].run, 0);
}

TEST(PairRecords, DropsRecordsTheGpuHasNotStamped) {
  // A forced flush with other partitions busy handed over a record of ours
  // with start 0: taken as a time it made a run last 1.8e12 ms.
  const std::vector<ActivityRecord> activity{
      {ActivityKind::kKernel, 11, 1000, 2000, 0, 7, 0},
      {ActivityKind::kKernel, 12, 0, 4000, 0, 7, 0},
      {ActivityKind::kMemcpy, 20, 3000, 0, 1, 9, 4096},
  };
  const std::vector<ExternalCorrelation> pairings{
      {11, external_id(0, 0)},
      {12, external_id(0, 2)},
      {20, external_id(0, 1)},
  };
  const PairedRecords paired = pair_records(activity, pairings);
  EXPECT_EQ(paired.unstamped, 2);
  EXPECT_EQ(paired.unattributed, 0);
  ASSERT_EQ(paired.records.size(), 1u);
  EXPECT_EQ(paired.records[0].span, 0);
  // So spans 1 and 2 have no record, and the run falls back to events.
  const SpansFromRecords mapped = spans_from_records(three_spans(), paired.records, 0);
  EXPECT_EQ(mapped.spans_without_records, (std::vector<int>{1, 2}));
}

TEST(SpansFromRecords, FirstStartToLastEndInMicrosecondsSinceTheRunsFirstRecord) {
  const DeviceProgram program = three_spans();
  const std::vector<TimedRecord> records{
      {0, 0, 2500, 4000},  // span 0's kernels, out of order
      {0, 1, 3000, 5000},  // the transfer
      {0, 0, 1000, 2000},
      {1, 2, 0, 999999},   // another run: ignored
  };
  const SpansFromRecords mapped = spans_from_records(program, records, 0);
  ASSERT_EQ(mapped.spans_without_records, (std::vector<int>{2}));
  ASSERT_EQ(mapped.timeline.spans.size(), 2u);
  const Span& compute = mapped.timeline.spans[0];
  // Origin = 1000 ns: span 0 runs [1000, 4000] ns = [0, 3] µs.
  EXPECT_EQ(compute.op, 4);
  EXPECT_EQ(compute.device, 0);
  EXPECT_EQ(compute.lane, Lane::kCompute);
  EXPECT_EQ(compute.kind, SpanKind::kCompute);
  EXPECT_DOUBLE_EQ(compute.start_us, 0.0);
  EXPECT_DOUBLE_EQ(compute.end_us, 3.0);
  EXPECT_EQ(compute.flops, 1000);
  const Span& transfer = mapped.timeline.spans[1];
  EXPECT_EQ(transfer.op, 5);
  EXPECT_EQ(transfer.device, 1);
  EXPECT_EQ(transfer.lane, Lane::kCopyIn);
  EXPECT_EQ(transfer.kind, SpanKind::kTransfer);
  EXPECT_DOUBLE_EQ(transfer.start_us, 2.0);
  EXPECT_DOUBLE_EQ(transfer.end_us, 4.0);
  EXPECT_EQ(transfer.bytes, 4096);
  EXPECT_DOUBLE_EQ(mapped.timeline.makespan_us(), 4.0);
}

TEST(SpansFromRecords, ARunWithoutRecordsListsEverySpan) {
  const SpansFromRecords mapped = spans_from_records(three_spans(), {}, 0);
  EXPECT_EQ(mapped.spans_without_records, (std::vector<int>{0, 1, 2}));
  EXPECT_TRUE(mapped.timeline.spans.empty());
}

TEST(SpansFromRecords, PairedCuptiRecordsOfTwoRunsMapSeparately) {
  const DeviceProgram program = three_spans();
  std::vector<ActivityRecord> activity;
  std::vector<ExternalCorrelation> pairings;
  uint32_t correlation = 1;
  for (int run = 0; run < 2; ++run) {
    for (int span = 0; span < 3; ++span) {
      const uint64_t start = 1'000'000 * uint64_t(run + 1) + 100 * uint64_t(span);
      activity.push_back({ActivityKind::kKernel, correlation, start, start + 50, 0, 1, 0});
      pairings.push_back({correlation, external_id(run, span)});
      ++correlation;
    }
  }
  const PairedRecords paired = pair_records(activity, pairings);
  for (int run = 0; run < 2; ++run) {
    const SpansFromRecords mapped = spans_from_records(program, paired.records, run);
    EXPECT_TRUE(mapped.spans_without_records.empty());
    ASSERT_EQ(mapped.timeline.spans.size(), 3u);
    // Spans start 0, 0.1 and 0.2 µs after the run's first record and last 0.05 µs.
    for (int span = 0; span < 3; ++span) {
      EXPECT_NEAR(mapped.timeline.spans[static_cast<size_t>(span)].start_us, 0.1 * span, 1e-9);
      EXPECT_NEAR(mapped.timeline.spans[static_cast<size_t>(span)].duration_us(), 0.05, 1e-9);
    }
  }
}

}  // namespace
}  // namespace activity_mapping_test
}  // namespace splitscope::testing
