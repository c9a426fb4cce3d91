#include "exec/cuda/device_set.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "exec/cuda/cuda_check.hpp"
#include "exec/cuda/driver_api.hpp"
#include "util/errors.hpp"
#include "util/strings.hpp"

namespace splitscope::gpu {

cudaStream_t LogicalDevice::stream(StreamLane lane) const {
  switch (lane) {
    case StreamLane::kCompute: return compute.get();
    case StreamLane::kCopyIn: return copy_in.get();
    case StreamLane::kCopyOut: return copy_out.get();
  }
  return compute.get();
}

GreenContext::~GreenContext() {
  if (context_ != nullptr && driver_ != nullptr && driver_->green_ctx_destroy != nullptr) {
    SPLITSCOPE_CU_WARN(*driver_, driver_->green_ctx_destroy(context_));
  }
}

int gpu_count() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky-free error so later calls start clean
    return 0;
  }
  return count;
}

namespace {

int multiprocessors(int ordinal) {
  int count = 0;
  SPLITSCOPE_CUDA_CHECK(cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, ordinal));
  return count;
}

LogicalDevice plain_device(int ordinal, int sm_count) {
  DeviceGuard guard(ordinal);
  LogicalDevice device;
  device.ordinal = ordinal;
  device.sm_count = sm_count;
  device.compute = Stream::create();
  device.copy_in = Stream::create();
  device.copy_out = Stream::create();
  return device;
}

/// Enables peer access from every GPU to every other that allows it; returns
/// "yes" (all pairs), "no" (none) or "partial (i->j, ...)".
std::string enable_peer_access(int first, int count) {
  if (count < 2) return "not needed (one GPU)";
  std::vector<std::string> enabled;
  int pairs = 0;
  for (int from = first; from < first + count; ++from) {
    for (int to = first; to < first + count; ++to) {
      if (from == to) continue;
      ++pairs;
      int can = 0;
      SPLITSCOPE_CUDA_CHECK(cudaDeviceCanAccessPeer(&can, from, to));
      if (can == 0) continue;
      DeviceGuard guard(from);
      const cudaError_t status = cudaDeviceEnablePeerAccess(to, 0);
      if (status == cudaErrorPeerAccessAlreadyEnabled) {
        cudaGetLastError();
      } else {
        SPLITSCOPE_CUDA_CHECK(status);
      }
      enabled.push_back(fmt::format("{}->{}", from, to));
    }
  }
  if (static_cast<int>(enabled.size()) == pairs) return "yes";
  if (enabled.empty()) return "no (copies are staged by the driver)";
  return "partial (" + join(enabled, ", ") + ")";
}

}  // namespace

DeviceSet DeviceSet::physical(int count, int first) {
  const int available = gpu_count();
  if (first + count > available) {
    throw InputError("--devices", "",
                     fmt::format("asked for {} GPUs (from GPU {}), this machine has {}; use --virtual to carve {} "
                                 "devices out of one GPU, or --backend sim to predict",
                                 count, first, available, first + count));
  }
  DeviceSet set;
  for (int ordinal = first; ordinal < first + count; ++ordinal) {
    set.devices_.push_back(plain_device(ordinal, multiprocessors(ordinal)));
  }
  const std::string p2p = enable_peer_access(first, count);
  set.mode_ = "physical";
  set.facts_.emplace_back("p2p", p2p);
  return set;
}

DeviceSet DeviceSet::single(int gpu) {
  if (gpu < 0 || gpu >= gpu_count()) {
    throw InputError("--device", "", fmt::format("there is no GPU {} here ({} found)", gpu, gpu_count()));
  }
  DeviceSet set;
  set.devices_.push_back(plain_device(gpu, multiprocessors(gpu)));
  set.mode_ = "physical";
  return set;
}

namespace {

/// Green-context partitions of one GPU: `partitions` equal SM groups, of which
/// `count` from group `first` on get a context and three streams.
void carve(int gpu, int partitions, int first, int count, const DriverApi& driver,
           std::vector<GreenContext>& contexts, std::vector<LogicalDevice>& devices) {
  DeviceGuard guard(gpu);
  SPLITSCOPE_CUDA_CHECK(cudaFree(nullptr));  // the primary context first, as cuGreenCtxCreate advises
  CUdevice device = 0;
  SPLITSCOPE_CU_CHECK(driver, driver.device_get(&device, gpu));
  CUdevResource all{};
  SPLITSCOPE_CU_CHECK(driver, driver.device_get_dev_resource(device, &all, CU_DEV_RESOURCE_TYPE_SM));
  const unsigned total = all.sm.smCount;
  const unsigned alignment = std::max(1u, all.sm.smCoscheduledAlignment);
  const unsigned minimum = std::max(1u, all.sm.minSmPartitionSize);
  const unsigned share = total / static_cast<unsigned>(partitions) / alignment * alignment;
  if (share < minimum) {
    throw InputError("--devices", "",
                     fmt::format("cannot carve {} virtual devices out of GPU {}'s {} SMs (partitions need at least {} "
                                 "SMs, in multiples of {}); use at most {}",
                                 partitions, gpu, total, minimum, alignment, total / std::max(minimum, alignment)));
  }
  std::vector<CUdevResource> groups(static_cast<size_t>(partitions));
  unsigned made = static_cast<unsigned>(partitions);
  CUdevResource remaining{};
  SPLITSCOPE_CU_CHECK(driver,
                      driver.dev_sm_resource_split_by_count(groups.data(), &made, &all, &remaining, 0, share));
  if (made < static_cast<unsigned>(partitions)) {
    throw InputError("--devices", "",
                     fmt::format("GPU {} split into only {} partitions of {} SMs, not {}; use at most {} devices", gpu,
                                 made, share, partitions, made));
  }
  for (int i = first; i < first + count; ++i) {
    CUdevResourceDesc description = nullptr;
    SPLITSCOPE_CU_CHECK(driver, driver.dev_resource_generate_desc(&description, &groups[static_cast<size_t>(i)], 1));
    CUgreenCtx context = nullptr;
    SPLITSCOPE_CU_CHECK(driver, driver.green_ctx_create(&context, description, device, CU_GREEN_CTX_DEFAULT_STREAM));
    contexts.emplace_back(context, &driver);
    LogicalDevice logical;
    logical.ordinal = gpu;
    logical.sm_count = static_cast<int>(groups[static_cast<size_t>(i)].sm.smCount);
    Stream* lanes[] = {&logical.compute, &logical.copy_in, &logical.copy_out};
    for (Stream* lane : lanes) {
      CUstream stream = nullptr;
      SPLITSCOPE_CU_CHECK(driver, driver.green_ctx_stream_create(&stream, context, CU_STREAM_NON_BLOCKING, 0));
      *lane = Stream::adopt_green(reinterpret_cast<cudaStream_t>(stream), &driver);
    }
    devices.push_back(std::move(logical));
  }
}

}  // namespace

DeviceSet DeviceSet::virtual_devices(int gpu, int partitions, int count, const DriverApi& driver, int first) {
  if (gpu < 0 || gpu >= gpu_count()) {
    throw InputError("--gpu", "", fmt::format("there is no GPU {} here ({} found)", gpu, gpu_count()));
  }
  if (first < 0 || first + count > partitions) {
    throw InputError("--devices", "", fmt::format("devices {} to {} of {} virtual devices: there are not so many",
                                                  first, first + count - 1, partitions));
  }
  DeviceSet set;
  set.virtual_ = true;
  const int total = multiprocessors(gpu);
  set.facts_.emplace_back("memory", "one GPU's memory and memory bandwidth, shared by all virtual devices");
  set.facts_.emplace_back("p2p", "not applicable (one GPU)");
  if (partitions == 1) {
    // One partition is the whole GPU: no green context needed (and none
    // would be as large, partitions being aligned down).
    set.devices_.push_back(plain_device(gpu, total));
    set.mode_ = fmt::format("virtual (one device: all {} SMs of GPU {})", total, gpu);
    set.facts_.emplace_back("sms_per_device", std::to_string(total));
    return set;
  }
  std::string fallback = driver.green_contexts_unavailable();
  if (fallback.empty()) {
    try {
      carve(gpu, partitions, first, count, driver, set.green_contexts_, set.devices_);
    } catch (const RunError& error) {
      // Streams first, then their contexts, as the driver requires.
      set.devices_.clear();
      set.green_contexts_.clear();
      fallback = error.what();
    }
  }
  if (fallback.empty()) {
    const int sms = set.devices_.front().sm_count;
    set.mode_ = fmt::format("virtual (green contexts, {} SMs each)", sms);
    set.facts_.emplace_back("sms_per_device", std::to_string(sms));
    set.facts_.emplace_back("green_contexts", fmt::format("yes: {} partitions of GPU {}'s {} SMs", partitions, gpu, total));
    return set;
  }
  for (int i = 0; i < count; ++i) set.devices_.push_back(plain_device(gpu, total));
  set.mode_ = fmt::format("virtual (plain streams sharing all {} SMs; green contexts unavailable)", total);
  set.facts_.emplace_back("sms_per_device", fmt::format("{} (shared)", total));
  set.facts_.emplace_back("green_contexts", "unavailable: " + fallback);
  return set;
}

}  // namespace splitscope::gpu
