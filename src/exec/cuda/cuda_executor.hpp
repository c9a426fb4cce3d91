#pragma once
/// \file
/// The CUDA backend's Executor. For each prepare() (run() prepares once) it sets up the devices
/// (device_set.hpp), compiles the plan (plan_compiler.hpp), prepares and fills
/// every buffer (program_runner.hpp), runs `warmup` untimed issues, then
/// `repeats` timed ones: spans from CUPTI activity records where CUPTI works,
/// else from CUDA events, which RunInfo's facts say. With CudaOptions::cuda_graph
/// the plan is captured once into a CUDA Graph and the timed runs replay it
/// (spans from event nodes in the graph); the eager makespan is reported
/// alongside as a fact.

#include <string_view>

#include "exec/cuda/driver_api.hpp"
#include "exec/cuda_backend.hpp"
#include "exec/mode_runtimes.hpp"

namespace splitscope::gpu {

class CudaExecutor : public Executor, public InputStreamRuntime {
 public:
  /// Use make_cuda_executor(), which first checks that a GPU exists.
  explicit CudaExecutor(const CudaOptions& options);

  std::string_view name() const override { return "cuda"; }
  std::string unsupported(const Plan& plan, const PlanOp& op) const override;
  RunResult run(const Plan& plan, const RunOptions& options) override;
  /// Devices, program, buffers and weights set up once; its runs share them
  /// (a training plan's runs are successive steps, its weights kept on the GPU).
  std::unique_ptr<PreparedRun> prepare(const Plan& plan, const RunOptions& options) override;
  /// Measured as on the cpu backend (exec/input_stream.hpp), the batches
  /// staged in pinned memory and copied on a stream of their own
  /// (pinned_input_staging.hpp).
  RunResult run_input_stream(const Plan& plan, const RunOptions& options, const InputPipelineOptions& input) override;

 private:
  CudaOptions options_;
  DriverApi driver_;
};

}  // namespace splitscope::gpu
