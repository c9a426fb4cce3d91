#pragma once
/// \file
/// Binds a DeviceProgram to a DeviceSet and issues it. Construction does
/// everything that must not be timed: it allocates every buffer once, fills
/// weights and network inputs, creates the library handles (one cuBLAS and one
/// cuDNN handle per device, on its compute stream, each with its own
/// workspace), chooses the convolution algorithms, and creates the events that
/// order the streams. issue() then enqueues each step on its stream, after
/// cudaStreamWaitEvent on the steps it waits for — events only, no
/// device-wide synchronisation. capture() records the same issue into a CUDA
/// Graph that replay() launches.

#include <cuda_runtime.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/cuda/cuda_resources.hpp"
#include "exec/cuda/device_program.hpp"
#include "exec/cuda/device_set.hpp"
#include "exec/cuda/library_handles.hpp"
#include "exec/cuda/step_observer.hpp"
#include "exec/cuda_backend.hpp"
#include "exec/executor.hpp"
#include "plan/plan.hpp"

namespace splitscope::gpu {

class EventTimer;
class ConvPlan;
class PoolPlan;

struct RunnerOptions {
  Dtype dtype = Dtype::kFp32;
  uint64_t seed = 0;
};

class ProgramRunner {
 public:
  /// `devices` must outlive the runner and have at least program.devices devices.
  ProgramRunner(const Plan& plan, DeviceProgram program, const DeviceSet& devices, const RunnerOptions& options);
  ~ProgramRunner();
  ProgramRunner(const ProgramRunner&) = delete;
  ProgramRunner& operator=(const ProgramRunner&) = delete;

  /// Enqueues every step, as run `run`; `observer` (may be null) sees each step.
  void issue(StepObserver* observer, int run);
  /// Records issue() into a CUDA Graph; the timer's events become graph nodes.
  void capture(EventTimer* timer, int run);
  /// Launches the captured graph.
  void replay();
  /// Blocks until every stream is idle. With a deadline, a run still going
  /// after `timeout_ms` (from `started`) is a RunError naming the busy streams.
  void wait(std::optional<double> timeout_ms, double started_ms);

  /// The network output, assembled from the plan's output values (after wait()).
  HostTensor read_output() const;

  const DeviceProgram& program() const { return program_; }
  std::vector<int> step_ordinals() const;
  std::vector<int> step_spans() const;
  /// One more than the highest CUDA device used.
  int ordinals() const { return ordinals_; }
  /// What was chosen while preparing (convolution algorithms, ...), for reports.
  const std::vector<std::pair<std::string, std::string>>& facts() const { return facts_; }

 private:
  struct DeviceContext;

  void allocate();
  void fill(const RunnerOptions& options);
  void prepare_libraries();
  void launch(int index, cudaStream_t stream);
  float* address(const Ref& ref) const;
  int ordinal_of_buffer(int buffer) const;
  void make_current(int ordinal);

  const Plan& plan_;
  DeviceProgram program_;
  const DeviceSet& devices_;
  Dtype dtype_;
  int ordinals_ = 0;
  int current_ordinal_ = -1;

  std::vector<DeviceBuffer> device_buffers_;  ///< per buffer; empty for host staging
  PinnedBuffer host_arena_;                   ///< every staging buffer, in one pinned allocation
  std::vector<int64_t> host_offsets_;         ///< per buffer: its place in the arena (staging only)
  std::vector<std::unique_ptr<DeviceContext>> contexts_;  ///< per logical device
  std::vector<std::unique_ptr<ConvPlan>> conv_plans_;     ///< per step (null unless a convolution)
  std::vector<std::unique_ptr<PoolPlan>> pool_plans_;     ///< per step (null unless pooling)
  std::vector<Event> done_;                   ///< per step; created only for steps others wait on
  std::vector<Event> fork_join_;              ///< capture: one per stream
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
  std::vector<std::pair<std::string, std::string>> facts_;
};

}  // namespace splitscope::gpu
