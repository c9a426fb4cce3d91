#pragma once
/// \file
/// The CUDA backend's face to the rest of splitscope: options and a factory,
/// in plain C++, so that the CLI builds whether or not nvcc was found. Where
/// the CUDA sources were not built, or the machine has no GPU,
/// make_cuda_executor() throws UnavailableError (exit 3) saying to use
/// `--backend cpu` or `sim`.
///
/// What the executor does (src/exec/cuda/cuda_executor.hpp): every device has
/// a compute stream and copy-in / copy-out streams; streams are ordered by
/// events only; tensors are allocated and weights filled once before the
/// timed runs; warm-up runs are not timed; spans come from CUPTI activity
/// records (CUDA events where CUPTI is unavailable).

#include <memory>
#include <string>

#include "exec/executor.hpp"

namespace splitscope {

/// How `--devices N` maps onto hardware.
enum class DeviceMode {
  kPhysical,  ///< GPUs 0..N-1, peer-to-peer copies where the topology allows
  kVirtual,   ///< N devices carved out of one GPU with green contexts
};

/// How data crosses between (virtual) devices.
enum class LinkMode {
  kDevice,  ///< device-to-device copies
  kHost,    ///< staged through pinned host memory (real PCIe traffic)
};

/// The math of matrix products and convolutions; storage is float32 always.
enum class Dtype {
  kFp32,  ///< plain float32: cuBLAS default math, cuDNN FMA math, no tensor cores
  kTf32,  ///< float32 storage, TF32 tensor cores in cuBLAS and cuDNN
  kBf16,  ///< float32 storage, bf16 tensor cores in cuBLAS products; convolutions in TF32
};

struct CudaOptions {
  DeviceMode mode = DeviceMode::kPhysical;
  LinkMode link = LinkMode::kDevice;
  Dtype dtype = Dtype::kFp32;
  bool cuda_graph = false;     ///< capture the plan once, replay it for the timed runs
  /// Virtual mode: how many equal partitions to carve the GPU into. 0 means
  /// plan.devices. `compare` sets it to N for every run, so that the `single`
  /// baseline runs on one partition of the same size as each of the N.
  int virtual_devices = 0;
  int gpu = 0;                 ///< virtual mode: the GPU to carve
  /// Plan device i runs on device first_device + i: that GPU (physical), or
  /// that partition of the carved GPU (virtual). An ensemble's member on
  /// device d is a one-device plan run with first_device d.
  int first_device = 0;
};

/// Parses `--link device|host`; InputError otherwise.
LinkMode parse_link_mode(const std::string& text);
/// Parses `--dtype fp32|tf32|bf16`; InputError otherwise.
Dtype parse_dtype(const std::string& text);
std::string to_string(Dtype dtype);
std::string to_string(LinkMode link);

/// Largest relative error (output_compare's measure: max |a-b| / max |ref|)
/// expected against the cpu backend's float32 output for this dtype.
double check_tolerance(Dtype dtype);

/// How many GPUs this build's CUDA backend can use here (0 without CUDA or a GPU).
int cuda_gpu_count();

/// True when this build has the CUDA backend and the machine has a GPU it can use.
inline bool cuda_gpu_available() { return cuda_gpu_count() > 0; }

/// The CUDA executor, or UnavailableError when this build or machine has none.
std::unique_ptr<Executor> make_cuda_executor(const CudaOptions& options);

}  // namespace splitscope
