#include "exec/cuda/library_handles.hpp"

#include <fmt/format.h>

#include "exec/cuda/cuda_check.hpp"
#include "util/errors.hpp"

namespace splitscope::gpu {

CublasHandle CublasHandle::create(cudaStream_t stream, void* workspace, size_t workspace_bytes) {
  CublasHandle handle;
  SPLITSCOPE_CUBLAS_CHECK(cublasCreate(&handle.handle_));
  SPLITSCOPE_CUBLAS_CHECK(cublasSetStream(handle.handle_, stream));
  SPLITSCOPE_CUBLAS_CHECK(cublasSetWorkspace(handle.handle_, workspace, workspace_bytes));
  return handle;
}

CublasHandle::~CublasHandle() {
  if (handle_ != nullptr) SPLITSCOPE_CUBLAS_WARN(cublasDestroy(handle_));
}

CudnnHandle CudnnHandle::create(cudaStream_t stream) {
  CudnnHandle handle;
  SPLITSCOPE_CUDNN_CHECK(cudnnCreate(&handle.handle_));
  SPLITSCOPE_CUDNN_CHECK(cudnnSetStream(handle.handle_, stream));
  return handle;
}

CudnnHandle::~CudnnHandle() {
  if (handle_ != nullptr) SPLITSCOPE_CUDNN_WARN(cudnnDestroy(handle_));
}

namespace detail {

void throw_descriptor_error(cudnnStatus_t status) {
  throw RunError(fmt::format("creating a cuDNN descriptor failed: {}", cudnnGetErrorString(status)));
}

}  // namespace detail
}  // namespace splitscope::gpu
