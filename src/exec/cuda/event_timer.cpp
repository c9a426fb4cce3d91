#include "exec/cuda/event_timer.hpp"

#include <cmath>

#include "exec/cuda/cuda_check.hpp"

namespace splitscope::gpu {
namespace {

/// Added to every event time so that a step recorded just before its GPU's
/// origin (possible on another stream) still gives a positive timestamp.
constexpr double kOffsetNs = 1e12;

}  // namespace

EventTimer::EventTimer(const std::vector<int>& step_ordinals, int ordinals) : step_ordinals_(step_ordinals) {
  for (int ordinal = 0; ordinal < ordinals; ++ordinal) {
    DeviceGuard guard(ordinal);
    origins_.push_back(Event::create(true));
  }
  origin_used_.assign(static_cast<size_t>(ordinals), false);
  for (int ordinal : step_ordinals_) {
    DeviceGuard guard(ordinal);
    starts_.push_back(Event::create(true));
    ends_.push_back(Event::create(true));
  }
  issued_.assign(step_ordinals_.size(), false);
}

void EventTimer::record(cudaEvent_t event, cudaStream_t stream) const {
  if (capturing_) {
    SPLITSCOPE_CUDA_CHECK(cudaEventRecordWithFlags(event, stream, cudaEventRecordExternal));
  } else {
    SPLITSCOPE_CUDA_CHECK(cudaEventRecord(event, stream));
  }
}

void EventTimer::begin_run(int, const cudaStream_t* origin_streams, int ordinals) {
  issued_.assign(issued_.size(), false);
  for (int ordinal = 0; ordinal < ordinals && ordinal < static_cast<int>(origins_.size()); ++ordinal) {
    const auto o = static_cast<size_t>(ordinal);
    origin_used_[o] = origin_streams[o] != nullptr;
    if (origin_used_[o]) record(origins_[o].get(), origin_streams[o]);
  }
}

void EventTimer::before_step(int step, int, cudaStream_t stream, int) {
  record(starts_[static_cast<size_t>(step)].get(), stream);
}

void EventTimer::after_step(int step, int, cudaStream_t stream, int) {
  record(ends_[static_cast<size_t>(step)].get(), stream);
  issued_[static_cast<size_t>(step)] = true;
}

std::vector<TimedRecord> EventTimer::records(const std::vector<int>& step_spans, int run) const {
  std::vector<TimedRecord> records;
  for (size_t step = 0; step < step_ordinals_.size(); ++step) {
    if (!issued_[step]) continue;
    const auto ordinal = static_cast<size_t>(step_ordinals_[step]);
    float start_ms = 0;
    float end_ms = 0;
    SPLITSCOPE_CUDA_CHECK(cudaEventElapsedTime(&start_ms, origins_[ordinal].get(), starts_[step].get()));
    SPLITSCOPE_CUDA_CHECK(cudaEventElapsedTime(&end_ms, origins_[ordinal].get(), ends_[step].get()));
    TimedRecord record;
    record.run = run;
    record.span = step_spans[step];
    record.start_ns = static_cast<uint64_t>(std::llround(kOffsetNs + static_cast<double>(start_ms) * 1e6));
    record.end_ns = static_cast<uint64_t>(std::llround(kOffsetNs + static_cast<double>(end_ms) * 1e6));
    records.push_back(record);
  }
  return records;
}

}  // namespace splitscope::gpu
