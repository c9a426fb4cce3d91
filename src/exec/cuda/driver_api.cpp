#include "exec/cuda/driver_api.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>

namespace splitscope::gpu {
namespace {

/// Finds `symbol` with the ABI of the CUDA version this binary was built
/// against; returns an empty string on success, else why not.
template <typename Function>
std::string load(const char* symbol, Function& function) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t status =
      cudaGetDriverEntryPointByVersion(symbol, &address, CUDART_VERSION, cudaEnableDefault, &found);
  if (status != cudaSuccess) {
    return fmt::format("cudaGetDriverEntryPointByVersion({}) failed: {}", symbol, cudaGetErrorString(status));
  }
  if (found != cudaDriverEntryPointSuccess || address == nullptr) {
    return fmt::format("the driver has no {} (needs a CUDA {}.{} driver)", symbol, CUDART_VERSION / 1000,
                       CUDART_VERSION % 1000 / 10);
  }
  function = reinterpret_cast<Function>(address);
  return {};
}

}  // namespace

DriverApi::DriverApi() {
  load("cuGetErrorName", get_error_name);
  load("cuGetErrorString", get_error_string);
  load("cuDeviceGet", device_get);
  load("cuStreamDestroy", stream_destroy);
  const std::string problems[] = {
      load("cuDeviceGetDevResource", device_get_dev_resource),
      load("cuDevSmResourceSplitByCount", dev_sm_resource_split_by_count),
      load("cuDevResourceGenerateDesc", dev_resource_generate_desc),
      load("cuGreenCtxCreate", green_ctx_create),
      load("cuGreenCtxDestroy", green_ctx_destroy),
      load("cuGreenCtxStreamCreate", green_ctx_stream_create),
  };
  for (const std::string& problem : problems) {
    if (!problem.empty() && green_missing_.empty()) green_missing_ = problem;
  }
  if (green_missing_.empty() && (device_get == nullptr || stream_destroy == nullptr)) {
    green_missing_ = "the driver has no cuDeviceGet/cuStreamDestroy";
  }
}

std::string DriverApi::describe(CUresult status) const {
  const char* name = nullptr;
  const char* text = nullptr;
  if (get_error_name != nullptr) get_error_name(status, &name);
  if (get_error_string != nullptr) get_error_string(status, &text);
  return fmt::format("{} ({})", name != nullptr ? name : fmt::format("CUresult {}", static_cast<int>(status)),
                     text != nullptr ? text : "no description");
}

}  // namespace splitscope::gpu
