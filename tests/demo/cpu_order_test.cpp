// From a real cpu run of the layer split (issue 8): no cell (l, t) starts
// before (l-1, t) and (l, t-1) have finished, in every timed repeat, with one
// layer per device, several layers per device, and micro-batches.

#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "demo_test_support.hpp"
#include "exec/cpu/cpu_executor.hpp"

namespace splitscope::testing {
namespace cpu_order_test {
namespace {

using CellKey = std::tuple<int, int, int>;  // micro-batch, layer, step

std::map<CellKey, Span> cell_spans(const Plan& plan, const Timeline& timeline) {
  std::map<CellKey, Span> cells;
  for (const Span& span : timeline.spans) {
    if (span.kind != SpanKind::kCompute || span.op < 0) continue;
    const PlanOp& op = plan.op(span.op);
    const OpNode& node = plan.graph->node(op.node);
    if (!is_cell(node.kind)) continue;
    const bool fresh = cells.emplace(CellKey{op.microbatch, node.sublayer, node.step}, span).second;
    EXPECT_TRUE(fresh) << "two spans for " << node.name;
  }
  return cells;
}

void expect_dependency_order(const RnnDemoShape& shape, const std::string& strategy, int devices, int microbatches) {
  const auto plan = demo_plan(shape, strategy, devices, microbatches);
  RunOptions options;
  options.warmup = 0;
  options.repeats = 2;
  options.want_output = false;
  const RunResult result = CpuExecutor().run(*plan, options);
  ASSERT_EQ(result.timelines.size(), 2u);
  for (const Timeline& timeline : result.timelines) {
    const auto cells = cell_spans(*plan, timeline);
    ASSERT_EQ(cells.size(), static_cast<size_t>(microbatches * shape.layers * shape.steps));
    for (const auto& [key, span] : cells) {
      const auto [mb, l, t] = key;
      EXPECT_LE(span.start_us, span.end_us);
      if (l > 0) {
        const Span& below = cells.at({mb, l - 1, t});
        EXPECT_GE(span.start_us, below.end_us) << "cell (" << l << ", " << t << ") of micro-batch " << mb
                                               << " started before (" << l - 1 << ", " << t << ") finished";
      }
      if (t > 0) {
        const Span& before = cells.at({mb, l, t - 1});
        EXPECT_GE(span.start_us, before.end_us) << "cell (" << l << ", " << t << ") of micro-batch " << mb
                                                << " started before (" << l << ", " << t - 1 << ") finished";
      }
    }
  }
}

TEST(CpuWavefront, NoCellStartsBeforeTheCellsItReads) {
  expect_dependency_order(demo_shape("lstm", 3, 32, 8, 4), "horizontal", 3, 1);
  expect_dependency_order(demo_shape("gru", 3, 32, 8, 4), "horizontal", 3, 1);
}

TEST(CpuWavefront, MicroBatchedAndSharedDevicesKeepTheOrder) {
  expect_dependency_order(demo_shape("lstm", 4, 16, 6, 4), "pipeline", 4, 2);
  expect_dependency_order(demo_shape("lstm", 4, 16, 6, 4), "horizontal", 2, 1);  // two layers per device
}

}  // namespace
}  // namespace cpu_order_test
}  // namespace splitscope::testing
