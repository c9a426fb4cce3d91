#pragma once
/// \file
/// From device activity to a Timeline, in plain C++ so that it is tested
/// without a GPU.
///
/// While it issues a run, the runner pushes an external correlation id around
/// each step's library calls (external_id(run, span)). CUPTI then delivers
/// kernel, memcpy and memset records, each with the correlation id of the API
/// call that launched it, and external-correlation records pairing those API
/// correlation ids with our ids. pair_records() joins the two; spans_from_records()
/// turns the timed records into spans: [first record start, last record end]
/// per span, in µs since the run's first record. The CUDA-event fallback
/// produces TimedRecords directly (one per step, from its two events).

#include <cstdint>
#include <vector>

#include "exec/cuda/device_program.hpp"
#include "timeline/timeline.hpp"

namespace splitscope::gpu {

enum class ActivityKind { kKernel, kMemcpy, kMemset };

/// One kernel, memcpy or memset as CUPTI reports it (timestamps in ns).
struct ActivityRecord {
  ActivityKind kind = ActivityKind::kKernel;
  uint32_t correlation_id = 0;  ///< of the runtime/driver call that launched it
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
  uint32_t device_id = 0;
  uint32_t stream_id = 0;
  uint64_t bytes = 0;  ///< memcpy/memset
};

/// CUPTI's pairing of an API call's correlation id with the external id pushed around it.
struct ExternalCorrelation {
  uint32_t correlation_id = 0;
  uint64_t external_id = 0;
};

/// A stretch of device time attributed to one span of one run.
struct TimedRecord {
  int run = 0;
  int span = -1;
  uint64_t start_ns = 0;
  uint64_t end_ns = 0;
};

/// The external id pushed around the steps of `span` in run `run`: the run in
/// the high 32 bits, span + 1 in the low ones (0 is never used, so a
/// zero-initialised id cannot be mistaken for span 0).
uint64_t external_id(int run, int span);
/// The inverse; false for an id that external_id() cannot have produced.
bool decode_external_id(uint64_t id, int* run, int* span);

struct PairedRecords {
  std::vector<TimedRecord> records;
  int64_t unattributed = 0;  ///< activity outside any pushed id (not ours, or lost pairings)
  int64_t unstamped = 0;     ///< ours, but without timestamps: their spans count as unrecorded
};

/// Attributes each activity record to the span whose external id was pushed
/// around the call that launched it. Records may arrive in any order, and
/// pairings before or after their records.
PairedRecords pair_records(const std::vector<ActivityRecord>& activity,
                           const std::vector<ExternalCorrelation>& correlations);

struct SpansFromRecords {
  Timeline timeline;
  std::vector<int> spans_without_records;  ///< spans of the program no record covers
};

/// The Timeline of run `run`: one span per SpanSpec that has records, in µs
/// since the run's earliest record. Records of other runs are ignored.
SpansFromRecords spans_from_records(const DeviceProgram& program, const std::vector<TimedRecord>& records, int run);

}  // namespace splitscope::gpu
