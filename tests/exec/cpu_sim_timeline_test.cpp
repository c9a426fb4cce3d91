// The cpu executor and the simulator run a plan by the same rules
// (plan/plan_walk.hpp, collective_schedule.hpp): for every small zoo
// network split by every strategy, the measured and the predicted timelines
// hold the same spans (op, device, lane, kind, FLOPs, bytes) in the same
// order, and both follow the plan's data flow and each device's schedule.

#include <gtest/gtest.h>

#include "exec/cpu/cpu_executor.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"
#include "timeline_checks.hpp"

namespace splitscope {
namespace cpu_sim_timeline_test {
namespace {

struct Case {
  std::string network;
  std::string strategy;
  int devices = 2;
  int microbatches = 1;
};

std::vector<Case> cases() {
  std::vector<Case> all;
  for (const char* network : {"mlp-small", "cnn-small", "lstm-small", "gru-small", "residual-small", "towers-small"}) {
    for (int devices : {2, 3}) {
      for (const std::string& strategy : strategy_names()) {
        const StrategyTraits traits = make_partitioner(strategy)->traits();
        if (traits.baseline) continue;
        all.push_back({network, strategy, devices, traits.microbatched ? 2 : 1});
      }
    }
  }
  return all;
}

std::string case_name(const testing::TestParamInfo<Case>& info) {
  std::string name = info.param.network + "_" + info.param.strategy + "_" + std::to_string(info.param.devices);
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

class CpuSimTimeline : public testing::TestWithParam<Case> {};

TEST_P(CpuSimTimeline, SameSpansAndDependencies) {
  const Case& param = GetParam();
  const auto graph = testing_support::zoo_graph(param.network);
  const auto partitioner = make_partitioner(param.strategy);
  if (param.devices > partitioner->max_devices(*graph)) GTEST_SKIP() << "the strategy refuses this many devices";
  const Plan plan = partitioner->partition(graph, {param.devices, param.microbatches, nullptr});

  RunOptions options;
  options.warmup = 0;
  options.repeats = 1;
  const Timeline measured = CpuExecutor().run(plan, options).timelines.at(0);
  const Timeline predicted = simulate(plan, load_machine("h100-nvlink-8"));

  ASSERT_EQ(measured.spans.size(), predicted.spans.size());
  for (size_t i = 0; i < measured.spans.size(); ++i) {
    const Span& m = measured.spans[i];
    const Span& p = predicted.spans[i];
    SCOPED_TRACE(op_label(plan, plan.op(m.op)));
    EXPECT_EQ(m.op, p.op);
    EXPECT_EQ(m.device, p.device);
    EXPECT_EQ(m.lane, p.lane);
    EXPECT_EQ(m.kind, p.kind);
    EXPECT_EQ(m.flops, p.flops);
    EXPECT_EQ(m.bytes, p.bytes);
  }
  testing_support::expect_timeline_follows_plan(plan, measured);
  testing_support::expect_timeline_follows_plan(plan, predicted);
}

INSTANTIATE_TEST_SUITE_P(Zoo, CpuSimTimeline, testing::ValuesIn(cases()), case_name);

}  // namespace
}  // namespace cpu_sim_timeline_test
}  // namespace splitscope
