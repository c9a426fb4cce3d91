// The fused cuDNN stack computes what the cell-by-cell plan computes (issue
// 8's GPU test). Skipped, with the reason, where there is no GPU.

#include <gtest/gtest.h>

#include "exec/cpu/fused_rnn_training.hpp"
#include "exec/cuda/device_set.hpp"
#include "exec/cuda/fused_rnn.hpp"
#include "exec/cuda_backend.hpp"
#include "ir/training.hpp"
#include "reference_network.hpp"

namespace splitscope::testing {
namespace gpu_fused_rnn_test {
namespace {

class FusedRnn : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedRnn, EqualsTheCellByCellOutput) {
  if (gpu::gpu_count() == 0) GTEST_SKIP() << "no CUDA GPU here: the fused cuDNN baseline needs one";
  // 3 stacked layers, every step returned: the network output is the top layer's h at each step.
  const auto graph = graph_from_text(R"({"batch": 4, "input": [5, 16], "layers": [
      {"type": ")" + GetParam() + R"(", "hidden": 32, "layers": 3, "return_sequences": true}]})");
  constexpr uint64_t kSeed = 17;
  gpu::FusedRnnRequest request;
  request.graph = graph;
  request.layer = 0;
  request.seed = kSeed;
  request.repeats = 3;
  const gpu::FusedRnnResult fused = gpu::run_fused_rnn(request);
  ASSERT_EQ(fused.output.shape, (std::vector<int64_t>{4, 5, 32}));
  EXPECT_EQ(fused.times_ms.size(), 3u);
  EXPECT_GT(fused.median_ms, 0.0);

  RunOptions options;
  options.seed = kSeed;
  const RunResult cells = make_cuda_executor(CudaOptions{})->run(make_plan(graph, "single", 1), options);
  HostTensor fused_as_network = fused.output;
  fused_as_network.shape = cells.output.shape;  // [B, T, H] either way
  ASSERT_EQ(cells.output.data.size(), fused.output.data.size());
  EXPECT_LT(relative_error(fused_as_network, cells.output), 1e-4);
  EXPECT_LT(relative_error(fused_as_network, reference_output(*graph, kSeed)), 1e-4);

  // On a quarter of the SMs, as the baseline of a 4-way virtual split.
  request.virtual_devices = 4;
  const gpu::FusedRnnResult quarter = gpu::run_fused_rnn(request);
  // cuDNN may pick another algorithm for fewer SMs, so the sums may be ordered differently.
  HostTensor quarter_as_network = quarter.output;
  quarter_as_network.shape = cells.output.shape;
  EXPECT_LT(relative_error(quarter_as_network, fused_as_network), 1e-5);
  EXPECT_NE(quarter.device_mode.find("virtual"), std::string::npos);
}

TEST_P(FusedRnn, TrainsStepForStepWithTheCpuFusedTrainingLoop) {
  if (gpu::gpu_count() == 0) GTEST_SKIP() << "no CUDA GPU here: the fused cuDNN training step needs one";
  // The demo's network: one stack, the last step's h, mean squared error; a
  // large momentum step, so that a wrong gradient shows in the later losses.
  const auto forward = graph_from_text(R"({"batch": 4, "input": [5, 16], "layers": [
      {"type": ")" + GetParam() + R"(", "hidden": 32, "layers": 2, "return_sequences": false}]})");
  Optimizer optimizer;
  optimizer.learning_rate = 0.5;
  optimizer.momentum = 0.9;
  const auto training = std::make_shared<const Graph>(training_graph(*forward, optimizer));
  constexpr uint64_t kSeed = 19;
  constexpr int kSteps = 4;
  gpu::FusedRnnRequest request;
  request.graph = training;
  request.seed = kSeed;
  request.repeats = kSteps;
  request.training = optimizer;
  const gpu::FusedRnnResult fused = gpu::run_fused_rnn(request);
  RunOptions options;
  options.seed = kSeed;
  options.repeats = kSteps;
  const FusedRnnTrainingResult cpu = run_fused_rnn_training(*training, options);
  ASSERT_EQ(fused.losses.size(), static_cast<size_t>(kSteps));
  ASSERT_EQ(fused.times_ms.size(), static_cast<size_t>(kSteps));
  EXPECT_NE(cpu.losses.front(), cpu.losses.back());
  for (int step = 0; step < kSteps; ++step) {
    EXPECT_NEAR(fused.losses[step], cpu.losses[step], 1e-3 * std::abs(cpu.losses[step])) << "step " << step;
  }
  ASSERT_EQ(fused.output.shape, cpu.output.shape);
  EXPECT_LT(relative_error(fused.output, cpu.output), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Cells, FusedRnn, ::testing::Values("lstm", "gru"));

}  // namespace
}  // namespace gpu_fused_rnn_test
}  // namespace splitscope::testing
