// Without a GPU (CI, this machine) every CUDA entry point refuses with
// UnavailableError — exit 3 through the CLI — and a sentence saying what to
// use instead. Skipped where a GPU is present.

#include <gtest/gtest.h>

#include <filesystem>

#include "../cli/cli_test_support.hpp"
#include "exec/cuda/calibration.hpp"
#include "exec/cuda/fused_rnn.hpp"
#include "exec/cuda_backend.hpp"
#include "reference_network.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace unavailable_test {
namespace {

/// True where a CUDA GPU answers (then the refusals are not expected).
bool gpu_here() {
  try {
    make_cuda_executor(CudaOptions{});
    return true;
  } catch (const UnavailableError&) {
    return false;
  }
}

TEST(NoGpu, ExecutorRefusalNamesTheAlternatives) {
  if (gpu_here()) GTEST_SKIP() << "a GPU is present: the refusal is not expected here";
  try {
    make_cuda_executor(CudaOptions{});
    FAIL() << "no refusal";
  } catch (const UnavailableError& error) {
    const std::string message = error.what();
    EXPECT_NE(message.find("--backend cpu"), std::string::npos) << message;
    EXPECT_NE(message.find("sim"), std::string::npos) << message;
  }
}

TEST(NoGpu, CalibrationAndFusedRnnRefuse) {
  if (gpu_here()) GTEST_SKIP() << "a GPU is present: the refusal is not expected here";
  EXPECT_THROW(gpu::calibrate_device(gpu::CalibrationOptions{}), UnavailableError);
  gpu::FusedRnnRequest request;
  request.graph = zoo_graph("lstm-small");
  EXPECT_THROW(gpu::run_fused_rnn(request), UnavailableError);
}

TEST(NoGpu, FusedRnnChecksItsInputBeforeLookingForAGpu) {
  gpu::FusedRnnRequest request;
  request.graph = zoo_graph("lstm-small");
  request.layer = 1;  // the dense classifier
  EXPECT_THROW(gpu::run_fused_rnn(request), InputError);
  request.layer = 0;
  request.input.shape = {4, 6, 9};  // the layer reads 8 features, not 9
  request.input.data.assign(4 * 6 * 9, 0.0f);
  EXPECT_THROW(gpu::run_fused_rnn(request), InputError);
}

TEST(NoGpu, CalibrateCommandExitsThreeAndWritesNothing) {
  if (gpu_here()) GTEST_SKIP() << "a GPU is present: the refusal is not expected here";
  const std::string folder = fresh_temp_dir("calibrate_no_gpu");
  const std::string out = folder + "/machine.json";
  const CommandResult result = run_splitscope("calibrate --quick --out " + out);
  EXPECT_EQ(result.exit_code, 3) << result.err;
  EXPECT_NE(result.err.find("error: "), std::string::npos) << result.err;
  EXPECT_NE(result.err.find("sim"), std::string::npos) << result.err;
  EXPECT_FALSE(std::filesystem::exists(out));
}

TEST(NoGpu, CalibrateCommandRejectsABadDtypeAsBadInput) {
  const CommandResult result = run_splitscope("calibrate --dtype fp16 --out /tmp/never.json");
  EXPECT_EQ(result.exit_code, 2) << result.err;
  EXPECT_NE(result.err.find("--dtype"), std::string::npos) << result.err;
}

}  // namespace
}  // namespace unavailable_test
}  // namespace splitscope::testing
