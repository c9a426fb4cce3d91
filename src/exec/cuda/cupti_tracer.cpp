#include "exec/cuda/cupti_tracer.hpp"

#include <cupti.h>
#include <fmt/format.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "exec/cuda/cuda_check.hpp"

namespace splitscope::gpu {
namespace {

constexpr size_t kBufferBytes = size_t{8} << 20;
constexpr size_t kRecordAlignment = 8;  // ACTIVITY_RECORD_ALIGNMENT
constexpr CUpti_ExternalCorrelationKind kCorrelationKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM0;

/// Without these the spans cannot be built: CUPTI is not used at all.
constexpr CUpti_ActivityKind kRequiredKinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_RUNTIME,
    CUPTI_ACTIVITY_KIND_DRIVER,  // API records: external-correlation records are emitted for them
    CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION,
};
/// Peer-to-peer copies and memsets. Where these cannot be enabled, a span
/// made only of them finds no record, and its repeat is timed with events.
constexpr CUpti_ActivityKind kOptionalKinds[] = {CUPTI_ACTIVITY_KIND_MEMCPY2, CUPTI_ACTIVITY_KIND_MEMSET};

/// Where CUPTI's completion callback leaves what it parsed (see the header:
/// CUPTI's C callbacks take no user pointer).
struct Sink {
  std::mutex mutex;
  bool registered = false;  ///< the buffer callbacks are registered once per process
  bool active = false;
  std::vector<ActivityRecord> activity;
  std::vector<ExternalCorrelation> correlations;
  uint64_t dropped = 0;
};

Sink& sink() {
  static Sink instance;
  return instance;
}

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(kRecordAlignment, kBufferBytes));
  *size = *buffer != nullptr ? kBufferBytes : 0;
  *max_records = 0;
}

ActivityRecord make_record(ActivityKind kind, uint32_t correlation, uint64_t start, uint64_t end, uint32_t device,
                           uint32_t stream, uint64_t bytes) {
  return ActivityRecord{kind, correlation, start, end, device, stream, bytes};
}

void CUPTIAPI buffer_completed(CUcontext context, uint32_t stream_id, uint8_t* buffer, size_t, size_t valid) {
  std::vector<ActivityRecord> activity;
  std::vector<ExternalCorrelation> correlations;
  CUpti_Activity* record = nullptr;
  while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &record) == CUPTI_SUCCESS) {
    switch (record->kind) {
      case CUPTI_ACTIVITY_KIND_KERNEL:
      case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const auto* kernel = reinterpret_cast<const CUpti_ActivityKernel10*>(record);
        activity.push_back(make_record(ActivityKind::kKernel, kernel->correlationId, kernel->start, kernel->end,
                                       kernel->deviceId, kernel->streamId, 0));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpy6*>(record);
        activity.push_back(make_record(ActivityKind::kMemcpy, copy->correlationId, copy->start, copy->end,
                                       copy->deviceId, copy->streamId, copy->bytes));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMCPY2: {
        const auto* copy = reinterpret_cast<const CUpti_ActivityMemcpyPtoP4*>(record);
        activity.push_back(make_record(ActivityKind::kMemcpy, copy->correlationId, copy->start, copy->end,
                                       copy->deviceId, copy->streamId, copy->bytes));
        break;
      }
      case CUPTI_ACTIVITY_KIND_MEMSET: {
        const auto* set = reinterpret_cast<const CUpti_ActivityMemset4*>(record);
        activity.push_back(make_record(ActivityKind::kMemset, set->correlationId, set->start, set->end, set->deviceId,
                                       set->streamId, set->bytes));
        break;
      }
      case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
        const auto* pairing = reinterpret_cast<const CUpti_ActivityExternalCorrelation*>(record);
        if (pairing->externalKind == kCorrelationKind) {
          correlations.push_back(ExternalCorrelation{pairing->correlationId, pairing->externalId});
        }
        break;
      }
      default:
        break;  // runtime/driver API records: enabled only so that pairings are emitted
    }
  }
  size_t dropped = 0;
  SPLITSCOPE_CUPTI_WARN(cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped));
  std::free(buffer);
  Sink& target = sink();
  std::lock_guard lock(target.mutex);
  if (!target.active) return;
  target.activity.insert(target.activity.end(), activity.begin(), activity.end());
  target.correlations.insert(target.correlations.end(), correlations.begin(), correlations.end());
  target.dropped += dropped;
}

void disable_all() {
  for (CUpti_ActivityKind kind : kRequiredKinds) SPLITSCOPE_CUPTI_WARN(cuptiActivityDisable(kind));
  // Optional kinds may never have been enabled; disabling them can fail harmlessly.
  for (CUpti_ActivityKind kind : kOptionalKinds) {
    if (cuptiActivityDisable(kind) != CUPTI_SUCCESS) continue;
  }
}

std::string describe(CUptiResult status) {
  const char* text = nullptr;
  if (cuptiGetResultString(status, &text) != CUPTI_SUCCESS) text = nullptr;
  return text != nullptr ? text : fmt::format("CUPTI error {}", static_cast<int>(status));
}

}  // namespace

std::unique_ptr<CuptiTracer> CuptiTracer::start(std::string* why_not) {
  Sink& target = sink();
  {
    // Claimed here, under the lock: threads starting at once (an ensemble's
    // members) must not both enable, collect and disable the one activity
    // stream.
    std::lock_guard lock(target.mutex);
    if (target.active) {
      *why_not = "another CUPTI trace is running in this process";
      return nullptr;
    }
    target.active = true;
    target.activity.clear();
    target.correlations.clear();
    target.dropped = 0;
  }
  const auto release = [&target] {
    std::lock_guard lock(target.mutex);
    target.active = false;
  };
  CUptiResult status = CUPTI_SUCCESS;
  if (!target.registered) {
    status = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
    if (status != CUPTI_SUCCESS) {
      *why_not = "cuptiActivityRegisterCallbacks: " + describe(status);
      release();
      return nullptr;
    }
    std::lock_guard lock(target.mutex);
    target.registered = true;
  }
  for (CUpti_ActivityKind kind : kRequiredKinds) {
    status = cuptiActivityEnable(kind);
    if (status != CUPTI_SUCCESS) {
      disable_all();
      *why_not = fmt::format("cuptiActivityEnable(kind {}): {}", static_cast<int>(kind), describe(status));
      release();
      return nullptr;
    }
  }
  // Optional kinds (runtime and driver API records) only add pairings; where
  // one is unsupported, spans map without it, or fall back to events.
  for (CUpti_ActivityKind kind : kOptionalKinds) {
    if (cuptiActivityEnable(kind) != CUPTI_SUCCESS) continue;
  }
  return std::unique_ptr<CuptiTracer>(new CuptiTracer());
}

CuptiTracer::~CuptiTracer() {
  SPLITSCOPE_CUPTI_WARN(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  disable_all();
  Sink& target = sink();
  std::lock_guard lock(target.mutex);
  target.active = false;
  target.activity.clear();
  target.correlations.clear();
}

void CuptiTracer::begin_run(int run, const cudaStream_t*, int) { run_ = run; }

void CuptiTracer::before_step(int, int span, cudaStream_t, int) {
  SPLITSCOPE_CUPTI_CHECK(cuptiActivityPushExternalCorrelationId(kCorrelationKind, external_id(run_, span)));
}

void CuptiTracer::after_step(int, int, cudaStream_t, int) {
  uint64_t last = 0;
  SPLITSCOPE_CUPTI_CHECK(cuptiActivityPopExternalCorrelationId(kCorrelationKind, &last));
}

PairedRecords CuptiTracer::collect() {
  SPLITSCOPE_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::vector<ActivityRecord> activity;
  {
    Sink& target = sink();
    std::lock_guard lock(target.mutex);
    activity.swap(target.activity);
    // Pairings are kept for the tracer's life: one may be delivered in an
    // earlier buffer than the kernel record it explains.
    correlations_.insert(correlations_.end(), target.correlations.begin(), target.correlations.end());
    target.correlations.clear();
  }
  return pair_records(activity, correlations_);
}

uint64_t CuptiTracer::dropped() const {
  Sink& target = sink();
  std::lock_guard lock(target.mutex);
  return target.dropped;
}

}  // namespace splitscope::gpu
