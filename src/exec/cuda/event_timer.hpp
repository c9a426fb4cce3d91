#pragma once
/// \file
/// The fallback timing: a CUDA event before and after every step, read back
/// as TimedRecords after the run. Each GPU's times are measured from an origin
/// event recorded on that GPU first thing in the run (events of different
/// GPUs cannot be compared directly), so across physical GPUs the spans are
/// aligned to within the few microseconds between those origin records.
/// Inside CUDA Graph capture the events are recorded as external event nodes
/// (cudaEventRecordExternal), which is what makes them timeable on replay.

#include <vector>

#include "exec/cuda/activity_mapping.hpp"
#include "exec/cuda/cuda_resources.hpp"
#include "exec/cuda/step_observer.hpp"

namespace splitscope::gpu {

class EventTimer : public StepObserver {
 public:
  /// Events for every step of a program of `steps` steps; `step_ordinals`
  /// gives each step's CUDA device, `ordinals` the number of CUDA devices.
  EventTimer(const std::vector<int>& step_ordinals, int ordinals);

  /// Record timing events as graph nodes (call while capturing).
  void set_capturing(bool capturing) { capturing_ = capturing; }

  void begin_run(int run, const cudaStream_t* origin_streams, int ordinals) override;
  void before_step(int step, int span, cudaStream_t stream, int ordinal) override;
  void after_step(int step, int span, cudaStream_t stream, int ordinal) override;

  /// The records of the last run or graph replay (call after it has
  /// finished), labelled `run`; `step_spans` maps each step to its span.
  std::vector<TimedRecord> records(const std::vector<int>& step_spans, int run) const;

 private:
  void record(cudaEvent_t event, cudaStream_t stream) const;

  std::vector<int> step_ordinals_;
  std::vector<Event> origins_;  ///< per CUDA device
  std::vector<bool> origin_used_;
  std::vector<Event> starts_;
  std::vector<Event> ends_;
  std::vector<bool> issued_;
  bool capturing_ = false;
};

}  // namespace splitscope::gpu
