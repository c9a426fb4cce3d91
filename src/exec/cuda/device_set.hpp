#pragma once
/// \file
/// The devices a plan runs on, each with its three streams:
/// - physical: GPUs 0..N-1, peer access enabled between every pair whose
///   topology allows it;
/// - virtual: N devices carved out of one GPU with green contexts, each owning
///   a disjoint, equal share of the SMs (and sharing the GPU's memory and its
///   bandwidth), or — where green contexts are unavailable — plain streams
///   sharing every SM, which the mode string says plainly.

#include <cuda.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "exec/cuda/cuda_resources.hpp"
#include "exec/cuda/device_program.hpp"

namespace splitscope::gpu {

class DriverApi;

/// One device as a plan sees it.
struct LogicalDevice {
  int ordinal = 0;   ///< the CUDA device it runs on
  int sm_count = 0;  ///< SMs its kernels may use
  Stream compute;
  Stream copy_in;
  Stream copy_out;

  cudaStream_t stream(StreamLane lane) const;
};

/// A green context, destroyed through the driver.
class GreenContext {
 public:
  GreenContext(CUgreenCtx context, const DriverApi* driver) : context_(context), driver_(driver) {}
  ~GreenContext();
  GreenContext(GreenContext&& other) noexcept
      : context_(std::exchange(other.context_, nullptr)), driver_(other.driver_) {}
  GreenContext& operator=(GreenContext&&) = delete;
  GreenContext(const GreenContext&) = delete;
  GreenContext& operator=(const GreenContext&) = delete;
  CUgreenCtx get() const { return context_; }

 private:
  CUgreenCtx context_ = nullptr;
  const DriverApi* driver_ = nullptr;
};

class DeviceSet {
 public:
  /// GPUs first..first+count-1. InputError if the machine has fewer.
  static DeviceSet physical(int count, int first = 0);
  /// One device: all of GPU `gpu`, plain streams.
  static DeviceSet single(int gpu);
  /// `count` devices out of `partitions` equal green-context partitions of
  /// GPU `gpu`, from partition `first` on (each partition's SMs are the same
  /// in every set carved with the same `partitions`, so sets made apart, as
  /// an ensemble's members are, do not share SMs). InputError if the GPU
  /// cannot be split that finely. `driver` must outlive the set.
  static DeviceSet virtual_devices(int gpu, int partitions, int count, const DriverApi& driver, int first = 0);

  int size() const { return static_cast<int>(devices_.size()); }
  const LogicalDevice& device(int index) const { return devices_.at(static_cast<size_t>(index)); }
  /// Whether a copy from `a` to `b` crosses GPUs.
  bool crosses_gpus(int a, int b) const { return device(a).ordinal != device(b).ordinal; }

  /// For RunInfo::device_mode: "physical", "virtual (green contexts, 32 SMs each)", ...
  const std::string& mode() const { return mode_; }
  /// Facts for the report: p2p, SMs per device, memory sharing, fallbacks.
  const std::vector<std::pair<std::string, std::string>>& facts() const { return facts_; }
  bool is_virtual() const { return virtual_; }

 private:
  DeviceSet() = default;
  // Declared before the devices so that it is destroyed after their streams.
  std::vector<GreenContext> green_contexts_;
  std::vector<LogicalDevice> devices_;
  std::string mode_;
  std::vector<std::pair<std::string, std::string>> facts_;
  bool virtual_ = false;
};

/// Number of CUDA GPUs here; 0 when there is no driver or no GPU (never throws).
int gpu_count();

}  // namespace splitscope::gpu
