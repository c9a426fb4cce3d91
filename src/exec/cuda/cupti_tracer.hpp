#pragma once
/// \file
/// Exact device timestamps from CUPTI's activity API: kernel, memcpy (also
/// peer-to-peer) and memset records, with an external correlation id pushed
/// around every step so each record maps back to its span (activity_mapping.hpp).
///
/// CUPTI is process-wide and its buffer callbacks carry no user pointer, so
/// completed buffers land in one process-wide sink inside cupti_tracer.cpp —
/// the one piece of mutable global state in splitscope, forced by CUPTI's C
/// API. At most one CuptiTracer exists at a time; start() refuses a second.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "exec/cuda/activity_mapping.hpp"
#include "exec/cuda/step_observer.hpp"

namespace splitscope::gpu {

class CuptiTracer : public StepObserver {
 public:
  /// Enables the activity kinds. Returns null, with the reason in `why_not`,
  /// when CUPTI refuses (insufficient privileges, another profiler attached,
  /// a tracer already running).
  static std::unique_ptr<CuptiTracer> start(std::string* why_not);
  ~CuptiTracer() override;
  CuptiTracer(const CuptiTracer&) = delete;
  CuptiTracer& operator=(const CuptiTracer&) = delete;

  void begin_run(int run, const cudaStream_t* origin_streams, int ordinals) override;
  void before_step(int step, int span, cudaStream_t stream, int ordinal) override;
  void after_step(int step, int span, cudaStream_t stream, int ordinal) override;

  /// Flushes CUPTI and returns every record delivered since the last call,
  /// paired to spans. Call once the run has finished on the device.
  PairedRecords collect();
  /// Records CUPTI dropped so far (buffers full); non-zero means spans may be incomplete.
  uint64_t dropped() const;

 private:
  CuptiTracer() = default;
  int run_ = 0;
  std::vector<ExternalCorrelation> correlations_;
};

}  // namespace splitscope::gpu
