#pragma once
/// \file
/// The few CUDA driver-API functions splitscope needs (green contexts, error
/// names), found at run time through cudaGetDriverEntryPointByVersion rather
/// than by linking libcuda: a binary linked with -lcuda does not even start on
/// a machine without the NVIDIA driver. A function the driver lacks stays
/// null, and green_contexts_unavailable() says why, so callers fall back.

#include <cudaTypedefs.h>

#include <string>

namespace splitscope::gpu {

class DriverApi {
 public:
  /// Looks every function up; never throws.
  DriverApi();

  /// Empty when green contexts can be used; otherwise the reason (a missing
  /// function, or no driver entry points at all).
  const std::string& green_contexts_unavailable() const { return green_missing_; }

  /// "CUDA_ERROR_INVALID_VALUE (invalid argument)" for a driver status.
  std::string describe(CUresult status) const;

  PFN_cuGetErrorName_v6000 get_error_name = nullptr;
  PFN_cuGetErrorString_v6000 get_error_string = nullptr;
  PFN_cuDeviceGet_v2000 device_get = nullptr;
  PFN_cuDeviceGetDevResource_v12040 device_get_dev_resource = nullptr;
  PFN_cuDevSmResourceSplitByCount_v12040 dev_sm_resource_split_by_count = nullptr;
  PFN_cuDevResourceGenerateDesc_v12040 dev_resource_generate_desc = nullptr;
  PFN_cuGreenCtxCreate_v12040 green_ctx_create = nullptr;
  PFN_cuGreenCtxDestroy_v12040 green_ctx_destroy = nullptr;
  PFN_cuGreenCtxStreamCreate_v12050 green_ctx_stream_create = nullptr;
  PFN_cuStreamDestroy_v4000 stream_destroy = nullptr;

 private:
  std::string green_missing_;
};

}  // namespace splitscope::gpu
