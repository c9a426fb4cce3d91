#include "exec/cuda/library_versions.hpp"

#include <fmt/format.h>

#include "exec/cuda/cuda_check.hpp"

namespace splitscope::gpu {
namespace {

/// "13.0" from CUDA's 13000.
std::string cuda_version_text(int version) { return fmt::format("{}.{}", version / 1000, version % 1000 / 10); }

}  // namespace

std::string LibraryVersions::describe() const {
  return fmt::format("driver {}, runtime {}, cuBLAS {}, cuDNN {}", driver, runtime, cublas, cudnn);
}

LibraryVersions library_versions() {
  int driver = 0;
  int runtime = 0;
  SPLITSCOPE_CUDA_CHECK(cudaDriverGetVersion(&driver));
  SPLITSCOPE_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  int major = 0;
  int minor = 0;
  int patch = 0;
  SPLITSCOPE_CUBLAS_CHECK(cublasGetProperty(MAJOR_VERSION, &major));
  SPLITSCOPE_CUBLAS_CHECK(cublasGetProperty(MINOR_VERSION, &minor));
  SPLITSCOPE_CUBLAS_CHECK(cublasGetProperty(PATCH_LEVEL, &patch));
  const size_t cudnn = cudnnGetVersion();  // returns the version itself; it cannot fail
  LibraryVersions versions;
  versions.driver = cuda_version_text(driver);
  versions.runtime = cuda_version_text(runtime);
  versions.cublas = fmt::format("{}.{}.{}", major, minor, patch);
  versions.cudnn = fmt::format("{}.{}.{}", cudnn / 10000, cudnn % 10000 / 100, cudnn % 100);
  return versions;
}

}  // namespace splitscope::gpu
