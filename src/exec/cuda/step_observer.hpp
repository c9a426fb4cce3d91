#pragma once
/// \file
/// Hooks around every step the runner issues, through which runs are timed:
/// CUPTI pushes an external correlation id (cupti_tracer.hpp), the fallback
/// records a CUDA event on each side (event_timer.hpp).

#include <cuda_runtime.h>

namespace splitscope::gpu {

class StepObserver {
 public:
  virtual ~StepObserver() = default;
  /// Called once before the first step of run `run` is issued. `origin_streams`
  /// has one stream per CUDA device used (index = device ordinal, null where unused).
  virtual void begin_run(int run, const cudaStream_t* origin_streams, int ordinals) = 0;
  /// Called just before / after the calls of step `step` (of span `span`) are issued on `stream` of CUDA device `ordinal`.
  virtual void before_step(int step, int span, cudaStream_t stream, int ordinal) = 0;
  virtual void after_step(int step, int span, cudaStream_t stream, int ordinal) = 0;
};

}  // namespace splitscope::gpu
