#include "exec/cuda/cuda_check.hpp"

#include <fmt/format.h>

#include "exec/cuda/driver_api.hpp"
#include "util/errors.hpp"

namespace splitscope::gpu::detail {
namespace {

/// "device 2", read without throwing (the error being reported may have broken the context).
std::string current_device() {
  int device = -1;
  if (cudaGetDevice(&device) != cudaSuccess) return "an unknown device";
  return fmt::format("device {}", device);
}

[[noreturn]] void fail(const char* call, const char* file, int line, const std::string& what) {
  throw RunError(fmt::format("{} failed at {}:{} on {}: {}", call, file, line, current_device(), what));
}

}  // namespace

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  fail(call, file, line, fmt::format("{} ({})", cudaGetErrorName(status), cudaGetErrorString(status)));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  fail(call, file, line, fmt::format("{} ({})", cublasGetStatusName(status), cublasGetStatusString(status)));
}

void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) {
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  fail(call, file, line,
       fmt::format("{}{}{}", cudnnGetErrorString(status), detail[0] != 0 ? ": " : "", static_cast<const char*>(detail)));
}

void throw_cupti_error(CUptiResult status, const char* call, const char* file, int line) {
  const char* name = nullptr;
  const char* message = nullptr;
  cuptiGetResultString(status, &name);
  cuptiGetErrorMessage(status, &message);
  fail(call, file, line,
       fmt::format("{} ({})", name != nullptr ? name : "CUPTI error", message != nullptr ? message : "no description"));
}

void throw_driver_error(const DriverApi& api, CUresult status, const char* call, const char* file, int line) {
  fail(call, file, line, api.describe(status));
}

}  // namespace splitscope::gpu::detail
