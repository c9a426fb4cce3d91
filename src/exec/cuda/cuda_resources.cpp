#include "exec/cuda/cuda_resources.hpp"

#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/driver_api.hpp"

namespace splitscope::gpu {

DeviceGuard::DeviceGuard(int device) {
  SPLITSCOPE_CUDA_CHECK(cudaGetDevice(&previous_));
  if (previous_ != device) SPLITSCOPE_CUDA_CHECK(cudaSetDevice(device));
}

DeviceGuard::~DeviceGuard() {
  int current = -1;
  SPLITSCOPE_CUDA_WARN(cudaGetDevice(&current));
  if (current != previous_) SPLITSCOPE_CUDA_WARN(cudaSetDevice(previous_));
}

Stream Stream::create() {
  Stream stream;
  SPLITSCOPE_CUDA_CHECK(cudaStreamCreateWithFlags(&stream.stream_, cudaStreamNonBlocking));
  return stream;
}

Stream Stream::adopt_green(cudaStream_t stream, const DriverApi* driver) {
  Stream owned;
  owned.stream_ = stream;
  owned.driver_ = driver;
  return owned;
}

Stream::~Stream() {
  if (stream_ == nullptr) return;
  if (driver_ != nullptr && driver_->stream_destroy != nullptr) {
    SPLITSCOPE_CU_WARN(*driver_, driver_->stream_destroy(reinterpret_cast<CUstream>(stream_)));
  } else {
    SPLITSCOPE_CUDA_WARN(cudaStreamDestroy(stream_));
  }
}

Event Event::create(bool timing) {
  Event event;
  SPLITSCOPE_CUDA_CHECK(cudaEventCreateWithFlags(&event.event_, timing ? cudaEventDefault : cudaEventDisableTiming));
  return event;
}

Event::~Event() {
  if (event_ != nullptr) SPLITSCOPE_CUDA_WARN(cudaEventDestroy(event_));
}

void* DeviceMemory::allocate(size_t bytes) {
  void* data = nullptr;
  SPLITSCOPE_CUDA_CHECK(cudaMalloc(&data, bytes));
  return data;
}

void DeviceMemory::release(void* data) noexcept { SPLITSCOPE_CUDA_WARN(cudaFree(data)); }

void* PinnedHostMemory::allocate(size_t bytes) {
  void* data = nullptr;
  SPLITSCOPE_CUDA_CHECK(cudaHostAlloc(&data, bytes, cudaHostAllocPortable));
  return data;
}

void PinnedHostMemory::release(void* data) noexcept { SPLITSCOPE_CUDA_WARN(cudaFreeHost(data)); }

}  // namespace splitscope::gpu
