// The module's one export (src/exec/cuda_module_abi.hpp): the table of the
// CUDA backend's entry points, each the in-process implementation of
// cuda_executor.cpp, calibration_measure.cpp and fused_rnn.cpp.

#include "exec/cuda_module_abi.hpp"
#include "git_revision.h"

extern "C" __attribute__((visibility("default"))) const splitscope::CudaModuleEntryPoints*
splitscope_cuda_module_entry_points() {
  static constexpr splitscope::CudaModuleEntryPoints kEntryPoints{
      .abi_version = splitscope::kCudaModuleAbiVersion,
      .layout = splitscope::kCudaModuleLayout,
      .build_revision = SPLITSCOPE_GIT_REVISION,
      .gpu_count = &splitscope::cuda_gpu_count,
      .make_executor = &splitscope::make_cuda_executor,
      .calibrate_device = &splitscope::gpu::calibrate_device,
      .run_fused_rnn = &splitscope::gpu::run_fused_rnn,
  };
  return &kEntryPoints;
}
