#pragma once
/// \file
/// The CUDA backend's face to the rest of splitscope: options and a factory,
/// in plain C++, so that the CLI builds whether or not nvcc was found. Where
/// the CUDA sources were not built, make_cuda_executor() throws
/// UnavailableError (exit 3) saying to use `--backend cpu` or `sim`.

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

struct CudaOptions {
  DeviceMode mode = DeviceMode::kPhysical;
  LinkMode link = LinkMode::kDevice;
  std::string dtype = "fp32";  ///< "fp32", "tf32", "bf16"
  bool cuda_graph = false;     ///< capture the plan once, replay it for the timed runs
};

/// Parses `--link device|host`; InputError otherwise.
LinkMode parse_link_mode(const std::string& text);

/// The CUDA executor, or UnavailableError when this build or machine has none.
std::unique_ptr<Executor> make_cuda_executor(const CudaOptions& options);

}  // namespace splitscope
