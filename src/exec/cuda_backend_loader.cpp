// The CUDA backend's entry points as the executable sees them: each loads
// libsplitscope_cuda.so (cuda_module_abi.hpp says why it is a module) and
// calls its table. Built everywhere; in a build without CUDA there is no
// module, and every entry point is a refusal saying what to use instead.
//
// The module is looked for next to the running executable (build/, or a
// carried bundle such as build-gpu/), then in the build folder it was built
// in (the test programs live below it), then where `meson install` puts it.
// It is never unloaded: executors it made may outlive any one call.

#include <dlfcn.h>
#include <sys/stat.h>

#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "exec/cuda_module_abi.hpp"
#include "git_revision.h"
#include "util/errors.hpp"

#ifndef SPLITSCOPE_CUDA_MODULE_NAME
#error "the build must define SPLITSCOPE_CUDA_MODULE_NAME (empty: built without CUDA)"
#endif

namespace splitscope {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModuleName = SPLITSCOPE_CUDA_MODULE_NAME;
constexpr const char* kBuildDir = SPLITSCOPE_CUDA_MODULE_BUILD_DIR;
constexpr const char* kInstallDir = SPLITSCOPE_CUDA_MODULE_INSTALL_DIR;

bool built_with_cuda() { return kModuleName[0] != '\0'; }

[[noreturn]] void refuse_without_cuda(const char* what) {
  throw UnavailableError(std::string("this splitscope was built without CUDA (nvcc or the CUDA libraries were not "
                                     "found when it was configured), so it cannot ") +
                         what +
                         "; use --backend cpu or --backend sim, or rebuild where nvcc is on PATH");
}

std::vector<fs::path> module_candidates() {
  std::vector<fs::path> candidates;
  std::error_code error;
  const fs::path self = fs::read_symlink("/proc/self/exe", error);
  if (!error) candidates.push_back(self.parent_path() / kModuleName);
  candidates.push_back(fs::path(kBuildDir) / kModuleName);
  candidates.push_back(fs::path(kInstallDir) / kModuleName);
  return candidates;
}

/// The module's table; UnavailableError naming the file and dlerror() when it
/// is missing, cannot load (a CUDA library not found) or is from another build.
const CudaModuleEntryPoints& load_module() {
  std::string tried;
  for (const fs::path& candidate : module_candidates()) {
    std::error_code error;
    if (!fs::is_regular_file(candidate, error)) {
      tried += (tried.empty() ? "" : ", ") + candidate.string();
      continue;
    }
    // RTLD_LOCAL: the module's copies of splitscope's own code stay its own.
    // A second dlopen of the same file returns the same handle.
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      const char* why = dlerror();
      throw UnavailableError(fmt::format(
          "cannot load the CUDA backend {}: {}; put the folder holding the CUDA libraries (cudart, cuBLAS, cuDNN, "
          "CUPTI) on LD_LIBRARY_PATH, or use --backend cpu or --backend sim",
          candidate.string(), why != nullptr ? why : "unknown reason"));
    }
    dlerror();
    const auto entry = reinterpret_cast<CudaModuleEntryFunction>(dlsym(handle, kCudaModuleEntrySymbol));
    const CudaModuleEntryPoints* table = entry != nullptr ? entry() : nullptr;
    if (table == nullptr) {
      throw UnavailableError(fmt::format("{} is not a splitscope CUDA backend (no {}); rebuild with scripts/build",
                                         candidate.string(), kCudaModuleEntrySymbol));
    }
    if (table->abi_version != kCudaModuleAbiVersion || table->layout != kCudaModuleLayout) {
      throw UnavailableError(fmt::format(
          "the CUDA backend {} is from another build (revision {}, this splitscope {}); rebuild both with "
          "scripts/build",
          candidate.string(), table->build_revision != nullptr ? table->build_revision : "unknown",
          SPLITSCOPE_GIT_REVISION));
    }
    return *table;
  }
  throw UnavailableError(fmt::format(
      "this splitscope was built with CUDA but its CUDA backend {} is missing (looked in: {}); run scripts/build, "
      "or use --backend cpu or --backend sim",
      kModuleName, tried));
}

/// Whether an NVIDIA driver is present at all: without one no GPU can answer,
/// and loading the CUDA libraries only to hear so would cost every command on
/// a machine without a GPU the start-up the module exists to spare.
bool nvidia_driver_present() {
  struct stat info {};
  for (const char* path : {"/dev/nvidiactl", "/dev/nvidia0", "/proc/driver/nvidia/version", "/dev/dxg"}) {
    if (stat(path, &info) == 0) return true;
  }
  return false;
}

}  // namespace

int cuda_gpu_count() {
  if (!built_with_cuda() || !nvidia_driver_present()) return 0;
  try {
    return load_module().gpu_count();
  } catch (const UnavailableError&) {
    return 0;  // a module that cannot load uses no GPU; `--backend cuda` says why
  }
}

std::unique_ptr<Executor> make_cuda_executor(const CudaOptions& options) {
  if (!built_with_cuda()) refuse_without_cuda("run on a GPU");
  return load_module().make_executor(options);
}

namespace gpu {

CalibrationResult calibrate_device(const CalibrationOptions& options) {
  if (!built_with_cuda()) refuse_without_cuda("calibrate a GPU");
  return load_module().calibrate_device(options);
}

FusedRnnResult run_fused_rnn(const FusedRnnRequest& request) {
  check_fused_rnn_request(request);  // bad input is bad input (exit 2), GPU or not
  if (!built_with_cuda()) refuse_without_cuda("run the fused cuDNN RNN");
  return load_module().run_fused_rnn(request);
}

}  // namespace gpu
}  // namespace splitscope
