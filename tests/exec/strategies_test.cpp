// Every strategy computes the same function: each small zoo network, split by
// every partitioner over 2, 3 and 4 devices (pipelines with 2 and 3
// micro-batches), gives the single-device output to within 1e-5 relative.

#include <gtest/gtest.h>

#include <algorithm>

#include <map>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/output_compare.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "partitioners/transformer_blocks.hpp"
#include "timeline_checks.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace strategies_test {
namespace {

struct StrategyCase {
  std::string network;
  std::string strategy;
  int devices = 1;
  int microbatches = 1;
};

void PrintTo(const StrategyCase& c, std::ostream* out) {
  *out << c.network << " " << c.strategy << " on " << c.devices << " devices, " << c.microbatches << " micro-batches";
}

std::string case_name(const testing::TestParamInfo<StrategyCase>& info) {
  std::string name = info.param.network + "_" + info.param.strategy + "_" + std::to_string(info.param.devices);
  if (info.param.microbatches > 1) name += "_m" + std::to_string(info.param.microbatches);
  for (char& c : name) c = c == '-' ? '_' : c;
  return name;
}

std::vector<StrategyCase> all_cases() {
  std::vector<StrategyCase> cases;
  for (const char* network : {"mlp-small", "cnn-small", "lstm-small", "gru-small", "residual-small", "towers-small",
                              "resnet-small", "two-tower-small", "inception-small", "gpt-small", "bert-small"}) {
    for (int devices : {2, 3, 4}) {
      for (const std::string& strategy : strategy_names()) {
        const StrategyTraits traits = make_partitioner(strategy)->traits();
        if (traits.baseline) continue;
        for (int microbatches : traits.microbatched ? std::vector<int>{2, 3} : std::vector<int>{1}) {
          cases.push_back({network, strategy, devices, microbatches});
        }
      }
    }
  }
  return cases;
}

RunOptions one_run() {
  RunOptions options;
  options.warmup = 0;
  options.repeats = 1;
  options.seed = 11;
  return options;
}

class StrategyTest : public testing::TestWithParam<StrategyCase> {
 protected:
  /// The single-device output of each network, computed once.
  static const HostTensor& single_output(const std::string& network, const std::shared_ptr<const Graph>& graph) {
    static std::map<std::string, HostTensor> cache;  // test-local memo, not program state
    auto found = cache.find(network);
    if (found == cache.end()) {
      const Plan plan = make_partitioner("single")->partition(graph, {1, 1, nullptr});
      found = cache.emplace(network, CpuExecutor().run(plan, one_run()).output).first;
    }
    return found->second;
  }
};

TEST_P(StrategyTest, OutputEqualsTheSingleDeviceOutput) {
  const StrategyCase& param = GetParam();
  const auto graph = testing_support::zoo_graph(param.network);
  const auto partitioner = make_partitioner(param.strategy);
  const std::vector<int> heads = head_degrees(*graph);
  const bool divides_heads = std::find(heads.begin(), heads.end(), param.devices) != heads.end();
  if (param.devices > partitioner->max_devices(*graph) || (param.strategy == "tensor" && !heads.empty() && !divides_heads)) {
    // The partitioner refuses (naming its limit, or the heads it cannot split); nothing to run.
    EXPECT_THROW(partitioner->partition(graph, {param.devices, param.microbatches, nullptr}), InputError);
    GTEST_SKIP() << param.strategy << " uses at most " << partitioner->max_devices(*graph) << " devices on "
                 << param.network;
  }
  const Plan plan = partitioner->partition(graph, {param.devices, param.microbatches, nullptr});
  ASSERT_NO_THROW(check(plan));
  const RunResult result = CpuExecutor().run(plan, one_run());
  const OutputComparison comparison = compare_outputs(result.output, single_output(param.network, graph));
  EXPECT_LE(comparison.max_relative_error, 1e-5) << comparison.describe();
  EXPECT_GT(comparison.max_abs_reference, 0.0);
  ASSERT_EQ(result.timelines.size(), 1u);
  testing_support::expect_timeline_follows_plan(plan, result.timelines[0]);
}

INSTANTIATE_TEST_SUITE_P(Zoo, StrategyTest, testing::ValuesIn(all_cases()), case_name);

TEST(SingleStrategy, MatchesTheNaiveReference) {
  for (const char* network : {"mlp-small", "cnn-small", "lstm-small", "gru-small", "residual-small", "towers-small",
                              "resnet-small", "two-tower-small", "inception-small", "gpt-small", "bert-small"}) {
    SCOPED_TRACE(network);
    const auto graph = testing_support::zoo_graph(network);
    const Plan plan = make_partitioner("single")->partition(graph, {1, 1, nullptr});
    const OutputComparison comparison =
        compare_outputs(CpuExecutor().run(plan, one_run()).output, testing_support::naive_forward(*graph, 11));
    EXPECT_LE(comparison.max_relative_error, 1e-5) << comparison.describe();
  }
}

}  // namespace
}  // namespace strategies_test
}  // namespace splitscope
