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

std::string sentence(const char* call, const char* file, int line, const std::string& what) {
  return fmt::format("{} failed at {}:{} on {}: {}", call, file, line, current_device(), what);
}

[[noreturn]] void fail(const char* call, const char* file, int line, const std::string& what) {
  throw RunError(sentence(call, file, line, what));
}

void warn(const char* call, const char* file, int line, const std::string& what) noexcept {
  try {
    fmt::print(stderr, "warning: {}\n", sentence(call, file, line, what));
  } catch (...) {
    // Nothing more can be done about a failure to report a failure.
  }
}

std::string cuda_text(cudaError_t status) {
  return fmt::format("{} ({})", cudaGetErrorName(status), cudaGetErrorString(status));
}

std::string cublas_text(cublasStatus_t status) {
  return fmt::format("{} ({})", cublasGetStatusName(status), cublasGetStatusString(status));
}

std::string cudnn_text(cudnnStatus_t status) {
  char detail[512] = {0};
  cudnnGetLastErrorString(detail, sizeof(detail));
  return fmt::format("{}{}{}", cudnnGetErrorString(status), detail[0] != 0 ? ": " : "",
                     static_cast<const char*>(detail));
}

std::string cupti_text(CUptiResult status) {
  const char* name = nullptr;
  const char* message = nullptr;
  // Describing an error: if these fail too, the fallbacks below say so.
  if (cuptiGetResultString(status, &name) != CUPTI_SUCCESS) name = nullptr;
  if (cuptiGetErrorMessage(status, &message) != CUPTI_SUCCESS) message = nullptr;
  return fmt::format("{} ({})", name != nullptr ? name : "CUPTI error", message != nullptr ? message : "no description");
}

}  // namespace

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  fail(call, file, line, cuda_text(status));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  fail(call, file, line, cublas_text(status));
}

void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) {
  fail(call, file, line, cudnn_text(status));
}

void throw_cupti_error(CUptiResult status, const char* call, const char* file, int line) {
  fail(call, file, line, cupti_text(status));
}

void throw_driver_error(const DriverApi& api, CUresult status, const char* call, const char* file, int line) {
  fail(call, file, line, api.describe(status));
}

void warn_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept {
  warn(call, file, line, cuda_text(status));
}

void warn_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) noexcept {
  warn(call, file, line, cublas_text(status));
}

void warn_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) noexcept {
  warn(call, file, line, cudnn_text(status));
}

void warn_cupti_error(CUptiResult status, const char* call, const char* file, int line) noexcept {
  warn(call, file, line, cupti_text(status));
}

void warn_driver_error(const DriverApi& api, CUresult status, const char* call, const char* file, int line) noexcept {
  try {
    warn(call, file, line, api.describe(status));
  } catch (...) {
    // describe() allocates; a failure to report a failure ends here.
  }
}

}  // namespace splitscope::gpu::detail
