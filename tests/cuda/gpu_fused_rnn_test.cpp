// The fused cuDNN stack computes what the cell-by-cell plan computes (issue
// 8's GPU test). Skipped, with the reason, where there is no GPU.

#include <gtest/gtest.h>

#include "exec/cuda/device_set.hpp"
#include "exec/cuda/fused_rnn.hpp"
#include "exec/cuda_backend.hpp"
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

INSTANTIATE_TEST_SUITE_P(Cells, FusedRnn, ::testing::Values("lstm", "gru"));

}  // namespace
}  // namespace gpu_fused_rnn_test
}  // namespace splitscope::testing
