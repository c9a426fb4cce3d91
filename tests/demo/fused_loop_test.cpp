// The fused cpu loop (exec/cpu/fused_rnn_loop.hpp), the cpu backend's fused
// single-device baseline, computes what the cell-by-cell plan computes.

#include <gtest/gtest.h>

#include "demo_test_support.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "exec/cpu/fused_rnn_loop.hpp"
#include "exec/output_compare.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "partitioners/partitioner.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace fused_loop_test {
namespace {

/// The demo's bound: relative error (max |a - b| / max |b|) of the fused loop against the cell-by-cell run.
constexpr double kTolerance = 1e-5;

HostTensor cell_by_cell(const std::shared_ptr<const Graph>& graph, uint64_t seed) {
  PartitionOptions single;
  auto plan = make_partitioner("single")->partition(graph, single);
  RunOptions options;
  options.seed = seed;
  options.warmup = 0;
  options.repeats = 1;
  return CpuExecutor().run(plan, options).output;
}

class FusedLoop : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedLoop, EqualsTheCellByCellRunOfTheDemoStack) {
  const auto graph = demo_plan(demo_shape(GetParam(), 3, 32, 7, 5), "single", 1)->graph;
  RunOptions options;
  options.seed = 11;
  options.warmup = 1;
  options.repeats = 3;
  const FusedRnnLoopResult fused = run_fused_rnn_loop(*graph, 0, options);
  const HostTensor reference = cell_by_cell(graph, 11);
  ASSERT_EQ(fused.output.shape, (std::vector<int64_t>{5, 32}));  // the top layer's h at the last step
  ASSERT_EQ(reference.shape, fused.output.shape);
  const OutputComparison comparison = compare_outputs(fused.output, reference);
  EXPECT_TRUE(comparison.within(kTolerance)) << comparison.describe();
  EXPECT_GT(comparison.max_abs_reference, 0.01);  // a real signal, not zeros against zeros
  EXPECT_EQ(fused.times_ms.size(), 3u);
  for (double ms : fused.times_ms) EXPECT_GT(ms, 0.0);
  EXPECT_GE(fused.threads, 1);
}

TEST_P(FusedLoop, EqualsTheCellByCellRunWithOtherInputsAndEveryStep) {
  // Input features 12 != hidden 20, so the first layer's Wx differs from the
  // others'; every step returned: [B, T, H]. One thread, so the products are
  // not split either.
  const std::string text = R"({"name": "seq", "batch": 3, "input": [6, 12], "layers": [{"type": ")" + GetParam() +
                           R"(", "hidden": 20, "layers": 2, "return_sequences": true}]})";
  const auto graph = std::make_shared<const Graph>(lower(parse_model_text(text, "seq.json")));
  RunOptions options;
  options.seed = 3;
  options.warmup = 0;
  options.repeats = 1;
  options.intra_op_threads = 1;
  const FusedRnnLoopResult fused = run_fused_rnn_loop(*graph, 0, options);
  EXPECT_EQ(fused.threads, 1);
  const HostTensor reference = cell_by_cell(graph, 3);
  ASSERT_EQ(fused.output.shape, (std::vector<int64_t>{3, 6, 20}));
  const OutputComparison comparison = compare_outputs(fused.output, reference);
  EXPECT_TRUE(comparison.within(kTolerance)) << comparison.describe();
  // A different seed is a different function: the comparison can fail.
  EXPECT_FALSE(compare_outputs(fused.output, cell_by_cell(graph, 4)).within(kTolerance));
}

INSTANTIATE_TEST_SUITE_P(Cells, FusedLoop, ::testing::Values("lstm", "gru"));

TEST(FusedLoop, RefusesWhatIsNotARecurrentFirstLayer) {
  const auto dense = std::make_shared<const Graph>(lower(parse_model_text(
      R"({"batch": 2, "input": [4], "layers": [{"type": "dense", "units": 3}]})", "dense.json")));
  RunOptions options;
  EXPECT_THROW(run_fused_rnn_loop(*dense, 0, options), InputError);
  EXPECT_THROW(run_fused_rnn_loop(*dense, 5, options), InputError);
  const auto graph = demo_plan(demo_shape("lstm", 2, 8, 3, 2), "single", 1)->graph;
  options.repeats = 0;
  EXPECT_THROW(run_fused_rnn_loop(*graph, 0, options), InputError);
}

}  // namespace
}  // namespace fused_loop_test
}  // namespace splitscope::testing
