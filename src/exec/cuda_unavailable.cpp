// Built only when nvcc was not found: the CUDA backend is a clear refusal.

#include "exec/cuda_backend.hpp"
#include "util/errors.hpp"

namespace splitscope {

std::unique_ptr<Executor> make_cuda_executor(const CudaOptions&) {
  throw UnavailableError(
      "this splitscope was built without CUDA (nvcc was not found when it was configured); "
      "use --backend cpu or --backend sim, or rebuild where nvcc is on PATH");
}

}  // namespace splitscope
