#pragma once
/// \file
/// Move-only owners of CUDA runtime objects: streams, events, device memory,
/// pinned host memory, and a guard that makes a device current for a scope.
/// Each is created on the device current at construction; destructors never
/// throw (a failure while tearing down is reported as a warning: the run has
/// already reported whatever went wrong first).

#include <cuda_runtime.h>

#include <cstddef>
#include <utility>

namespace splitscope::gpu {

class DriverApi;

/// Makes `device` current until the end of the scope, then restores the previous one.
class DeviceGuard {
 public:
  explicit DeviceGuard(int device);
  ~DeviceGuard();
  DeviceGuard(const DeviceGuard&) = delete;
  DeviceGuard& operator=(const DeviceGuard&) = delete;

 private:
  int previous_ = -1;
};

/// A stream. Created non-blocking by the runtime, or adopted from a green
/// context (then destroyed through the driver, as cuGreenCtxStreamCreate's
/// streams must be, before their green context).
class Stream {
 public:
  Stream() = default;
  /// A new non-blocking stream on the current device.
  static Stream create();
  /// Takes ownership of a stream made by cuGreenCtxStreamCreate.
  static Stream adopt_green(cudaStream_t stream, const DriverApi* driver);
  ~Stream();
  Stream(Stream&& other) noexcept { swap(other); }
  Stream& operator=(Stream&& other) noexcept {
    Stream(std::move(other)).swap(*this);
    return *this;
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  cudaStream_t get() const { return stream_; }

 private:
  void swap(Stream& other) noexcept {
    std::swap(stream_, other.stream_);
    std::swap(driver_, other.driver_);
  }
  cudaStream_t stream_ = nullptr;
  const DriverApi* driver_ = nullptr;
};

/// An event on the current device; timing events unless `timing` is false.
class Event {
 public:
  Event() = default;
  static Event create(bool timing);
  ~Event();
  Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}
  Event& operator=(Event&& other) noexcept {
    std::swap(event_, other.event_);
    return *this;
  }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  cudaEvent_t get() const { return event_; }

 private:
  cudaEvent_t event_ = nullptr;
};

/// Memory from one CUDA allocator, owned: Memory supplies
/// `static void* allocate(size_t)` (throws on failure) and
/// `static void release(void*) noexcept` (warns on failure).
template <typename Memory>
class OwnedBuffer {
 public:
  OwnedBuffer() = default;
  explicit OwnedBuffer(size_t bytes) : data_(bytes > 0 ? Memory::allocate(bytes) : nullptr), bytes_(bytes) {}
  ~OwnedBuffer() {
    if (data_ != nullptr) Memory::release(data_);
  }
  OwnedBuffer(OwnedBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  OwnedBuffer& operator=(OwnedBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(bytes_, other.bytes_);
    return *this;
  }
  OwnedBuffer(const OwnedBuffer&) = delete;
  OwnedBuffer& operator=(const OwnedBuffer&) = delete;

  void* get() const { return data_; }
  float* floats() const { return static_cast<float*>(data_); }
  size_t bytes() const { return bytes_; }

 private:
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

/// cudaMalloc on the current device.
struct DeviceMemory {
  static void* allocate(size_t bytes);
  static void release(void* data) noexcept;
};

/// Page-locked host memory, usable by every device (cudaHostAllocPortable).
struct PinnedHostMemory {
  static void* allocate(size_t bytes);
  static void release(void* data) noexcept;
};

using DeviceBuffer = OwnedBuffer<DeviceMemory>;
using PinnedBuffer = OwnedBuffer<PinnedHostMemory>;

}  // namespace splitscope::gpu
