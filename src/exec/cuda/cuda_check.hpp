#pragma once
/// \file
/// One checking macro per library. A failed call throws RunError (exit 1)
/// naming the call as written, file:line, the library's error name and
/// description, and the current CUDA device, e.g.
///   cublasGemmEx(...) failed at src/exec/cuda/step_launcher.cpp:80 on device 1:
///   CUBLAS_STATUS_INVALID_VALUE (an invalid value was used as an argument)
///
/// The _WARN variants are for where throwing is not possible or would hide
/// the error being handled (destructors, clean-up after a failure): a failed
/// call prints the same sentence to stderr as a warning, never silently.

#include <cublas_v2.h>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudnn.h>
#include <cupti.h>

namespace splitscope::gpu {

class DriverApi;

namespace detail {

[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line);
[[noreturn]] void throw_cupti_error(CUptiResult status, const char* call, const char* file, int line);
[[noreturn]] void throw_driver_error(const DriverApi& api, CUresult status, const char* call, const char* file,
                                     int line);
void warn_cuda_error(cudaError_t status, const char* call, const char* file, int line) noexcept;
void warn_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) noexcept;
void warn_cudnn_error(cudnnStatus_t status, const char* call, const char* file, int line) noexcept;
void warn_cupti_error(CUptiResult status, const char* call, const char* file, int line) noexcept;
void warn_driver_error(const DriverApi& api, CUresult status, const char* call, const char* file, int line) noexcept;

}  // namespace detail
}  // namespace splitscope::gpu

/// CUDA runtime API.
#define SPLITSCOPE_CUDA_CHECK(call)                                                        \
  do {                                                                                     \
    const cudaError_t splitscope_status_ = (call);                                         \
    if (splitscope_status_ != cudaSuccess) {                                               \
      ::splitscope::gpu::detail::throw_cuda_error(splitscope_status_, #call, __FILE__, __LINE__); \
    }                                                                                      \
  } while (false)

/// cuBLAS.
#define SPLITSCOPE_CUBLAS_CHECK(call)                                                        \
  do {                                                                                       \
    const cublasStatus_t splitscope_status_ = (call);                                        \
    if (splitscope_status_ != CUBLAS_STATUS_SUCCESS) {                                       \
      ::splitscope::gpu::detail::throw_cublas_error(splitscope_status_, #call, __FILE__, __LINE__); \
    }                                                                                        \
  } while (false)

/// cuDNN.
#define SPLITSCOPE_CUDNN_CHECK(call)                                                        \
  do {                                                                                      \
    const cudnnStatus_t splitscope_status_ = (call);                                        \
    if (splitscope_status_ != CUDNN_STATUS_SUCCESS) {                                       \
      ::splitscope::gpu::detail::throw_cudnn_error(splitscope_status_, #call, __FILE__, __LINE__); \
    }                                                                                       \
  } while (false)

/// CUPTI.
#define SPLITSCOPE_CUPTI_CHECK(call)                                                        \
  do {                                                                                      \
    const CUptiResult splitscope_status_ = (call);                                          \
    if (splitscope_status_ != CUPTI_SUCCESS) {                                              \
      ::splitscope::gpu::detail::throw_cupti_error(splitscope_status_, #call, __FILE__, __LINE__); \
    }                                                                                       \
  } while (false)

/// CUDA driver API, called through the function pointers of a DriverApi
/// (driver_api.hpp), whose cuGetErrorName/String name the error.
#define SPLITSCOPE_CU_CHECK(api, call)                                                             \
  do {                                                                                             \
    const CUresult splitscope_status_ = (call);                                                    \
    if (splitscope_status_ != CUDA_SUCCESS) {                                                      \
      ::splitscope::gpu::detail::throw_driver_error((api), splitscope_status_, #call, __FILE__, __LINE__); \
    }                                                                                              \
  } while (false)

/// Non-throwing checks (see the file comment).
#define SPLITSCOPE_CUDA_WARN(call)                                                                 \
  do {                                                                                             \
    const cudaError_t splitscope_status_ = (call);                                                 \
    if (splitscope_status_ != cudaSuccess) {                                                       \
      ::splitscope::gpu::detail::warn_cuda_error(splitscope_status_, #call, __FILE__, __LINE__);   \
    }                                                                                              \
  } while (false)

#define SPLITSCOPE_CUBLAS_WARN(call)                                                               \
  do {                                                                                             \
    const cublasStatus_t splitscope_status_ = (call);                                              \
    if (splitscope_status_ != CUBLAS_STATUS_SUCCESS) {                                             \
      ::splitscope::gpu::detail::warn_cublas_error(splitscope_status_, #call, __FILE__, __LINE__); \
    }                                                                                              \
  } while (false)

#define SPLITSCOPE_CUDNN_WARN(call)                                                                \
  do {                                                                                             \
    const cudnnStatus_t splitscope_status_ = (call);                                               \
    if (splitscope_status_ != CUDNN_STATUS_SUCCESS) {                                              \
      ::splitscope::gpu::detail::warn_cudnn_error(splitscope_status_, #call, __FILE__, __LINE__);  \
    }                                                                                              \
  } while (false)

#define SPLITSCOPE_CUPTI_WARN(call)                                                                \
  do {                                                                                             \
    const CUptiResult splitscope_status_ = (call);                                                 \
    if (splitscope_status_ != CUPTI_SUCCESS) {                                                     \
      ::splitscope::gpu::detail::warn_cupti_error(splitscope_status_, #call, __FILE__, __LINE__);  \
    }                                                                                              \
  } while (false)

#define SPLITSCOPE_CU_WARN(api, call)                                                                     \
  do {                                                                                                    \
    const CUresult splitscope_status_ = (call);                                                           \
    if (splitscope_status_ != CUDA_SUCCESS) {                                                             \
      ::splitscope::gpu::detail::warn_driver_error((api), splitscope_status_, #call, __FILE__, __LINE__); \
    }                                                                                                     \
  } while (false)
