#pragma once
/// \file
/// Move-only owners of cuBLAS and cuDNN handles and cuDNN descriptors.

#include <cublas_v2.h>
#include <cudnn.h>

#include <utility>

namespace splitscope::gpu {

/// A cuBLAS handle on the current device, bound to one stream, with its own
/// workspace (so graph capture never allocates, and two handles on two
/// streams never share scratch memory).
class CublasHandle {
 public:
  CublasHandle() = default;
  static CublasHandle create(cudaStream_t stream, void* workspace, size_t workspace_bytes);
  ~CublasHandle();
  CublasHandle(CublasHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  CublasHandle& operator=(CublasHandle&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

/// A cuDNN handle on the current device, bound to one stream.
class CudnnHandle {
 public:
  CudnnHandle() = default;
  static CudnnHandle create(cudaStream_t stream);
  ~CudnnHandle();
  CudnnHandle(CudnnHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  CudnnHandle& operator=(CudnnHandle&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  CudnnHandle(const CudnnHandle&) = delete;
  CudnnHandle& operator=(const CudnnHandle&) = delete;
  cudnnHandle_t get() const { return handle_; }

 private:
  cudnnHandle_t handle_ = nullptr;
};

namespace detail {
[[noreturn]] void throw_descriptor_error(cudnnStatus_t status);
}  // namespace detail

/// Any cuDNN descriptor, created on construction and destroyed with it.
template <typename Handle, cudnnStatus_t (*Create)(Handle*), cudnnStatus_t (*Destroy)(Handle)>
class CudnnDescriptor {
 public:
  CudnnDescriptor() {
    const cudnnStatus_t status = Create(&handle_);
    if (status != CUDNN_STATUS_SUCCESS) detail::throw_descriptor_error(status);
  }
  ~CudnnDescriptor() {
    if (handle_ != nullptr) Destroy(handle_);
  }
  CudnnDescriptor(CudnnDescriptor&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  CudnnDescriptor& operator=(CudnnDescriptor&& other) noexcept {
    std::swap(handle_, other.handle_);
    return *this;
  }
  CudnnDescriptor(const CudnnDescriptor&) = delete;
  CudnnDescriptor& operator=(const CudnnDescriptor&) = delete;
  Handle get() const { return handle_; }

 private:
  Handle handle_ = nullptr;
};

using TensorDescriptor =
    CudnnDescriptor<cudnnTensorDescriptor_t, cudnnCreateTensorDescriptor, cudnnDestroyTensorDescriptor>;
using FilterDescriptor =
    CudnnDescriptor<cudnnFilterDescriptor_t, cudnnCreateFilterDescriptor, cudnnDestroyFilterDescriptor>;
using ConvolutionDescriptor = CudnnDescriptor<cudnnConvolutionDescriptor_t, cudnnCreateConvolutionDescriptor,
                                              cudnnDestroyConvolutionDescriptor>;
using PoolingDescriptor =
    CudnnDescriptor<cudnnPoolingDescriptor_t, cudnnCreatePoolingDescriptor, cudnnDestroyPoolingDescriptor>;
using DropoutDescriptor =
    CudnnDescriptor<cudnnDropoutDescriptor_t, cudnnCreateDropoutDescriptor, cudnnDestroyDropoutDescriptor>;
using RnnDescriptor = CudnnDescriptor<cudnnRNNDescriptor_t, cudnnCreateRNNDescriptor, cudnnDestroyRNNDescriptor>;
using RnnDataDescriptor =
    CudnnDescriptor<cudnnRNNDataDescriptor_t, cudnnCreateRNNDataDescriptor, cudnnDestroyRNNDataDescriptor>;

}  // namespace splitscope::gpu
