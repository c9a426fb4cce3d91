#include "exec/cuda/activity_mapping.hpp"

#include <algorithm>
#include <limits>
#include <unordered_map>

namespace splitscope::gpu {

uint64_t external_id(int run, int span) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(run)) << 32) | static_cast<uint64_t>(span + 1);
}

bool decode_external_id(uint64_t id, int* run, int* span) {
  const uint64_t low = id & 0xffffffffULL;
  if (low == 0 || low > static_cast<uint64_t>(std::numeric_limits<int>::max())) return false;
  *run = static_cast<int>(id >> 32);
  *span = static_cast<int>(low) - 1;
  return true;
}

PairedRecords pair_records(const std::vector<ActivityRecord>& activity,
                           const std::vector<ExternalCorrelation>& correlations) {
  std::unordered_map<uint32_t, uint64_t> external_of;
  external_of.reserve(correlations.size());
  for (const ExternalCorrelation& pairing : correlations) external_of[pairing.correlation_id] = pairing.external_id;
  PairedRecords paired;
  for (const ActivityRecord& record : activity) {
    const auto found = external_of.find(record.correlation_id);
    int run = 0;
    int span = -1;
    if (found == external_of.end() || !decode_external_id(found->second, &run, &span)) {
      ++paired.unattributed;
      continue;
    }
    if (record.start_ns == 0 || record.end_ns < record.start_ns) {
      // A forced flush hands over records the GPU has not finished stamping
      // (seen with other partitions busy): zero, not a time.
      ++paired.unstamped;
      continue;
    }
    paired.records.push_back(TimedRecord{run, span, record.start_ns, record.end_ns});
  }
  return paired;
}

SpansFromRecords spans_from_records(const DeviceProgram& program, const std::vector<TimedRecord>& records, int run) {
  constexpr uint64_t kNone = std::numeric_limits<uint64_t>::max();
  std::vector<uint64_t> first(program.spans.size(), kNone);
  std::vector<uint64_t> last(program.spans.size(), 0);
  uint64_t origin = kNone;
  for (const TimedRecord& record : records) {
    if (record.run != run || record.span < 0 || record.span >= static_cast<int>(program.spans.size())) continue;
    const auto s = static_cast<size_t>(record.span);
    first[s] = std::min(first[s], record.start_ns);
    last[s] = std::max(last[s], record.end_ns);
    origin = std::min(origin, record.start_ns);
  }
  SpansFromRecords result;
  for (size_t s = 0; s < program.spans.size(); ++s) {
    if (first[s] == kNone) {
      result.spans_without_records.push_back(static_cast<int>(s));
      continue;
    }
    const SpanSpec& spec = program.spans[s];
    Span span;
    span.device = spec.device;
    span.lane = spec.lane;
    span.kind = spec.kind;
    span.op = spec.op;
    span.start_us = static_cast<double>(first[s] - origin) / 1000.0;
    span.end_us = static_cast<double>(std::max(last[s], first[s]) - origin) / 1000.0;
    span.flops = spec.flops;
    span.bytes = spec.bytes;
    result.timeline.spans.push_back(span);
  }
  std::sort(result.timeline.spans.begin(), result.timeline.spans.end(), [](const Span& a, const Span& b) {
    return a.start_us != b.start_us ? a.start_us < b.start_us : a.op < b.op;
  });
  return result;
}

}  // namespace splitscope::gpu
