// The CUDA backend is a module loaded on first use (src/exec/cuda_module_abi.hpp):
// a copy of splitscope in a fresh folder looks beside itself first, so what it
// finds there decides what `--backend cuda` answers. Run only where the build
// has the module (nvcc and the CUDA libraries were found), GPU or not.

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <exception>
#include <filesystem>
#include <fstream>
#include <string>

#include "cli_test_support.hpp"
#include "exec/cuda_backend.hpp"

namespace splitscope::testing {
namespace cuda_module_test {
namespace {

namespace fs = std::filesystem;

constexpr const char* kModule = "libsplitscope_cuda.so";
constexpr const char* kCudaRun = "run mlp-small --strategy vertical --devices 2 --backend cuda";

fs::path built_module() { return fs::path(splitscope_path()).parent_path() / kModule; }

/// A copy of the built splitscope alone in a fresh folder.
std::string lone_copy(const std::string& name) {
  const fs::path folder = fresh_temp_dir(name);
  const fs::path copy = folder / "splitscope";
  fs::copy_file(splitscope_path(), copy);
  return copy.string();
}

TEST(CudaModule, AFileThatIsNoLibraryIsExitThreeNamingItAndWhatToDo) {
  if (!fs::exists(built_module())) GTEST_SKIP() << "this build has no CUDA module (built without CUDA)";
  const std::string copy = lone_copy("module-garbage");
  std::ofstream(fs::path(copy).parent_path() / kModule) << "not a shared library\n";
  const CommandResult result = run_executable(copy, kCudaRun);
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("cannot load the CUDA backend"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find((fs::path(copy).parent_path() / kModule).string()), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("LD_LIBRARY_PATH"), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("--backend cpu"), std::string::npos) << result.err;
}

TEST(CudaModule, ALibraryThatIsNotTheBackendIsRefused) {
  if (!fs::exists(built_module())) GTEST_SKIP() << "this build has no CUDA module (built without CUDA)";
  // libstdc++, found through a symbol of it: loaded already, so opening it
  // again under the module's name runs nothing new.
  Dl_info info{};
  ASSERT_NE(dladdr(reinterpret_cast<void*>(&std::terminate), &info), 0);
  ASSERT_NE(info.dli_fname, nullptr);
  const std::string copy = lone_copy("module-foreign");
  fs::create_symlink(fs::canonical(info.dli_fname), fs::path(copy).parent_path() / kModule);
  const CommandResult result = run_executable(copy, kCudaRun);
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("is not a splitscope CUDA backend"), std::string::npos) << result.err;
}

TEST(CudaModule, WithNoneBesideItTheBuildFoldersModuleAnswers) {
  if (!fs::exists(built_module())) GTEST_SKIP() << "this build has no CUDA module (built without CUDA)";
  if (cuda_gpu_available()) GTEST_SKIP() << "a GPU is present: the module would run, not refuse";
  const CommandResult result = run_executable(lone_copy("module-fallback"), kCudaRun);
  // The module itself answered: it looked for a GPU through the CUDA runtime.
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("no CUDA GPU found here"), std::string::npos) << result.err;
}

TEST(CudaModule, CommandsThatNeedNoGpuNeverLoadIt) {
  if (!fs::exists(built_module())) GTEST_SKIP() << "this build has no CUDA module (built without CUDA)";
  // A broken module beside the copy would fail any command that loaded it.
  const std::string copy = lone_copy("module-unneeded");
  std::ofstream(fs::path(copy).parent_path() / kModule) << "not a shared library\n";
  for (const char* args : {"plan mlp-small --strategy tensor --devices 2", "run mlp-small --strategy single --devices 1 --backend cpu --repeat 1",
                           "compare mlp-small --devices 2 --backend sim --machine h100-nvlink-8"}) {
    const CommandResult result = run_executable(copy, args);
    EXPECT_EQ(result.exit_code, 0) << args << ": " << result.err;
  }
}

}  // namespace
}  // namespace cuda_module_test
}  // namespace splitscope::testing
