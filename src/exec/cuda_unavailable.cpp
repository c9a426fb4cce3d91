// Built only when nvcc (or cuBLAS/cuDNN/CUPTI next to it) was not found: every
// entry point of the CUDA backend is a clear refusal (UnavailableError, exit 3).

#include "exec/cuda/calibration.hpp"
#include "exec/cuda/fused_rnn.hpp"
#include "exec/cuda_backend.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

[[noreturn]] void refuse(const char* what) {
  throw UnavailableError(std::string("this splitscope was built without CUDA (nvcc or the CUDA libraries were not "
                                     "found when it was configured), so it cannot ") +
                         what +
                         "; use --backend cpu or --backend sim, or rebuild where nvcc is on PATH");
}

}  // namespace

int cuda_gpu_count() { return 0; }

std::unique_ptr<Executor> make_cuda_executor(const CudaOptions&) { refuse("run on a GPU"); }

namespace gpu {

CalibrationResult calibrate_device(const CalibrationOptions&) { refuse("calibrate a GPU"); }

FusedRnnResult run_fused_rnn(const FusedRnnRequest& request) {
  check_fused_rnn_request(request);  // bad input is bad input (exit 2), GPU or not
  refuse("run the fused cuDNN RNN");
}

}  // namespace gpu
}  // namespace splitscope
