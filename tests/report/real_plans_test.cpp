// Reports of plans from the real partitioners, run through an idealised
// schedule (ideal_schedule.hpp) until the executors land: the invariants every
// report must keep, the pipeline bubble in closed form, and verdicts that
// follow the cost of moving data.

#include <gtest/gtest.h>

#include <set>

#include "ideal_schedule.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "report/chrome_trace.hpp"
#include "report/comparison.hpp"
#include "report/reporter.hpp"
#include "report_test_support.hpp"

namespace splitscope {
namespace real_plans_test {
namespace {

using testing::IdealCosts;
using testing::ideal_schedule;

std::shared_ptr<const Graph> zoo_graph(const std::string& name) {
  return std::make_shared<const Graph>(lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, name))));
}

std::shared_ptr<const Plan> partition(const std::shared_ptr<const Graph>& graph, const std::string& strategy,
                                      int devices, int microbatches = 1) {
  PartitionOptions options;
  options.devices = strategy == "single" ? 1 : devices;
  options.microbatches = strategy == "pipeline" ? microbatches : 1;
  auto plan = std::make_shared<const Plan>(make_partitioner(strategy)->partition(graph, options));
  check(*plan);
  return plan;
}

RunResult ideal_run(const Plan& plan, const IdealCosts& costs, const std::string& backend = "sim") {
  return testing::run_result({ideal_schedule(plan, costs)}, backend, "ideal");
}

TEST(RealPlans, EveryStrategyKeepsTheReportInvariants) {
  // A net that forks, so that every strategy (branches included) has something to split.
  const auto graph = zoo_graph("two-tower-small");
  const IdealCosts costs{1e-3, 1e-3, 2.0};
  ComparisonBuilder builder(ReportContext{});
  for (const std::string& strategy : strategy_names()) {
    SCOPED_TRACE(strategy);
    const auto plan = partition(graph, strategy, 2, 4);
    const RunResult result = ideal_run(*plan, costs);
    builder.add(plan, result);
    const Timeline& timeline = result.timelines.front();
    // Every op ran: one span per compute op and transfer, one per output device of a collective.
    std::set<int> ran;
    for (const Span& span : timeline.spans) ran.insert(span.op);
    ASSERT_EQ(ran.size(), plan->ops.size());

    const RunSummary s = summarize(*plan, result);
    const double makespan_ms = timeline.makespan_us() / 1000.0;
    EXPECT_NEAR(s.critical_path.length_ms(), makespan_ms, 1e-9);
    EXPECT_NEAR(s.shares.compute + s.shares.transfer + s.shares.idle, 1.0, 1e-9);
    int64_t flops = 0;
    for (const DeviceSummary& d : s.per_device) {
      flops += d.flops;
      EXPECT_NEAR(d.compute_ms + d.transfer_ms - d.overlap_ms + d.idle_ms, makespan_ms, 1e-9) << "device " << d.id;
    }
    EXPECT_EQ(flops, graph->total_flops());
    const PlanTotals totals = plan_totals(*plan);
    EXPECT_EQ(s.transfers.count, totals.transfer_count + totals.collective_count);
    EXPECT_EQ(s.transfers.bytes, totals.transfer_bytes + totals.collective_bytes);
  }
  const Comparison comparison = std::move(builder).build();
  ASSERT_EQ(comparison.primary().runs.size(), strategy_names().size());

  // Their trace: every event inside its run's makespan.
  const RunReport& vertical = *std::find_if(comparison.primary().runs.begin(), comparison.primary().runs.end(),
                                            [](const RunReport& r) { return r.summary.strategy == "vertical"; });
  const auto trace = chrome_trace_json(vertical);
  for (const auto& event : trace["traceEvents"]) {
    if (event["ph"] != "X") continue;
    EXPECT_GE(event["ts"].get<double>(), 0.0);
    EXPECT_LE(event["ts"].get<double>() + event["dur"].get<double>(), vertical.timeline.makespan_us() + 1e-9);
  }

  // And their compare report validates against the schema.
  const std::string dir = testing::fresh_dir("real-plans");
  OutputBatch files;
  CompareJsonReporter(dir + "/compare.json", files).report(comparison);
  files.publish();
  std::string output;
  const int status = testing::run_command(
      "/usr/bin/python3 " + testing::source_root() + "/scripts/validate-report " + dir + "/compare.json", &output);
  if (status == 77) GTEST_SKIP() << "python3-jsonschema is missing (scripts/setup installs it): " << output;
  EXPECT_EQ(status, 0) << output;
}

TEST(RealPlans, PipelineBubbleOfEqualStagesIsTheIdeal) {
  // Four equal dense layers over 4 stages, 8 micro-batches, free transfers:
  // each stage takes t per micro-batch, the run (M + N - 1) t = 11 t, each
  // device computes 8 t and idles 3 t: bubble 3/11, the ideal (N-1)/(M+N-1).
  const auto graph = std::make_shared<const Graph>(lower(parse_model_text(
      R"({"name": "four", "batch": 16, "input": [64], "layers": [
          {"type": "dense", "units": 64}, {"type": "dense", "units": 64},
          {"type": "dense", "units": 64}, {"type": "dense", "units": 64}]})",
      "four.json")));
  const auto plan = partition(graph, "pipeline", 4, 8);
  const RunSummary s = summarize(*plan, ideal_run(*plan, IdealCosts{1e-3, 0.0, 0.0}));
  // t = 2 * 64 * 64 * 2 rows FLOPs x 1e-3 us = 16.384 us.
  EXPECT_NEAR(s.makespan->median_ms, 11 * 16.384e-3, 1e-12);
  ASSERT_TRUE(s.bubble_measured && s.bubble_ideal);
  EXPECT_NEAR(*s.bubble_ideal, 3.0 / 11, 1e-12);
  EXPECT_NEAR(*s.bubble_measured, 3.0 / 11, 1e-12);
  EXPECT_NEAR(s.critical_path.compute_ms, 11 * 16.384e-3, 1e-12);
}

TEST(RealPlans, ALayerSplitOfAnMlpIsNotAWin) {
  // The lesson: a fully connected stack split by layers runs its layers one
  // device after another, so it cannot beat one device; with free transfers
  // it breaks even at best, and with any cost it loses, with devices waiting.
  const auto graph = zoo_graph("mlp-small");
  const auto single = partition(graph, "single", 1);
  const auto horizontal = partition(graph, "horizontal", 2);
  for (double us_per_byte : {0.0, 1e-3}) {
    SCOPED_TRACE(us_per_byte);
    const IdealCosts costs{1e-3, us_per_byte, 1.0};
    const RunSummary baseline = summarize(*single, ideal_run(*single, costs));
    const Judgement j = judge(summarize(*horizontal, ideal_run(*horizontal, costs)), &baseline);
    EXPECT_NE(j.verdict, Verdict::kWins);
    EXPECT_LE(*j.speedup, 1.0 + 1e-12);
    EXPECT_TRUE(j.decider == Decider::kWaiting || j.decider == Decider::kImbalance) << j.reason;
  }
}

TEST(RealPlans, ANeuronSplitLosesMoreOnSlowerLinks) {
  // vertical on mlp-small all-gathers every layer's activations: the slower
  // the link, the lower its speedup, and on a slow one transfers decide.
  const auto graph = zoo_graph("mlp-small");
  const auto single = partition(graph, "single", 1);
  const auto vertical = partition(graph, "vertical", 4);
  auto speedup = [&](double us_per_byte) {
    const IdealCosts costs{1e-3, us_per_byte, 1.0};
    const RunSummary baseline = summarize(*single, ideal_run(*single, costs));
    return judge(summarize(*vertical, ideal_run(*vertical, costs)), &baseline);
  };
  const Judgement fast = speedup(1e-5);
  const Judgement slow = speedup(1e-1);
  EXPECT_GT(*fast.speedup, *slow.speedup);
  EXPECT_EQ(slow.verdict, Verdict::kLoses);
  EXPECT_EQ(slow.decider, Decider::kTransfers) << slow.reason;
  EXPECT_EQ(slow.reason.rfind("transfers are ", 0), 0u) << slow.reason;
  EXPECT_EQ(fast.verdict, Verdict::kWins) << fast.reason;
}

}  // namespace
}  // namespace real_plans_test
}  // namespace splitscope
