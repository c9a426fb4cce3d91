// Every small zoo network x every strategy x N in {1, 2, 3, 4} (pipeline also
// with 2 and 3 micro-batches) x both link modes: the compiled device program,
// interpreted on the host under three stream schedules, computes the same
// output as the naive whole-network reference, and as the cpu backend running
// the same plan. This is the CUDA backend's
// index arithmetic and stream ordering, checked without a GPU.

#include <gtest/gtest.h>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cuda/plan_compiler.hpp"
#include "exec/output_compare.hpp"
#include "partitioners/collective_plan.hpp"
#include "partitioners/partitioner.hpp"
#include "program_interpreter.hpp"
#include "reference_network.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace interpreted_plans_test {
namespace {

/// A network the zoo lacks: a whole [T, F] tensor cut into steps (step
/// slices), two recurrent layers back to back, and a stacked output.
constexpr const char* kSequenceMix = R"({"name": "sequence-mix", "batch": 3, "input": [5, 6], "layers": [
    {"type": "tanh"},
    {"type": "gru", "hidden": 8, "layers": 2},
    {"type": "lstm", "hidden": 4}]})";

std::shared_ptr<const Graph> network(const std::string& name) {
  return name == "sequence-mix" ? graph_from_text(kSequenceMix) : zoo_graph(name);
}

struct Case {
  std::string network;
  std::string strategy;
  int devices = 1;
  int microbatches = 1;
  LinkMode link = LinkMode::kDevice;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* network : {"mlp-small", "cnn-small", "lstm-small", "gru-small", "sequence-mix", "residual-small",
                              "towers-small", "resnet-small", "two-tower-small", "inception-small"}) {
    for (const auto& strategy : strategy_names()) {
      for (int devices : {1, 2, 3, 4}) {
        if (strategy == "single" && devices > 1) continue;
        for (int microbatches : make_partitioner(strategy)->traits().microbatched ? std::vector<int>{1, 2, 3} : std::vector<int>{1}) {
          for (LinkMode link : {LinkMode::kDevice, LinkMode::kHost}) {
            if (devices == 1 && link == LinkMode::kHost) continue;
            cases.push_back({network, strategy, devices, microbatches, link});
          }
        }
      }
    }
  }
  return cases;
}

void PrintTo(const Case& c, std::ostream* out) {
  *out << c.network << " " << c.strategy << " N=" << c.devices << " M=" << c.microbatches << " link "
       << to_string(c.link);
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.network + "_" + info.param.strategy + "_N" + std::to_string(info.param.devices) +
                     "_M" + std::to_string(info.param.microbatches) + "_" + to_string(info.param.link);
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

class InterpretedPlan : public ::testing::TestWithParam<Case> {};

TEST_P(InterpretedPlan, MatchesTheReferenceUnderEverySchedule) {
  const Case& c = GetParam();
  const auto graph = network(c.network);
  Plan plan;
  try {
    plan = make_plan(graph, c.strategy, c.devices, c.microbatches);
  } catch (const InputError& error) {
    GTEST_SKIP() << "the strategy refuses this split: " << error.what();
  }
  constexpr uint64_t kSeed = 11;
  const HostTensor reference = reference_output(*graph, kSeed);
  RunOptions cpu_options;
  cpu_options.warmup = 0;
  cpu_options.repeats = 1;
  cpu_options.seed = kSeed;
  const HostTensor cpu = CpuExecutor().run(plan, cpu_options).output;
  const gpu::DeviceProgram program = gpu::compile_plan(plan, gpu::CompileOptions{c.link});
  for (uint32_t schedule : {0u, 1u, 2u}) {
    const Interpretation run = interpret(plan, program, kSeed, schedule);
    ASSERT_EQ(run.output.shape, reference.shape);
    // float32 against a double-accumulating reference; tanh/exp differ by ulps.
    EXPECT_LT(relative_error(run.output, reference), 2e-5) << "schedule " << schedule;
    const OutputComparison against_cpu = compare_outputs(run.output, cpu);
    EXPECT_TRUE(against_cpu.within(2e-5)) << "against the cpu backend: " << against_cpu.describe();
  }
}

INSTANTIATE_TEST_SUITE_P(AllSmallNetworks, InterpretedPlan, ::testing::ValuesIn(all_cases()), case_name);

// nccl-tests' collectives as the cuda backend compiles them (copies, sums,
// staging), interpreted under random stream orders: every output holds what
// the collective promises, computed from the interpreted inputs.
TEST(InterpretedPlans, CollectivesGiveEveryParticipantWhatTheyPromise) {
  for (const CollectiveTest test : {CollectiveTest::kAllReduce, CollectiveTest::kReduceScatter,
                                    CollectiveTest::kBroadcast, CollectiveTest::kAllGather}) {
    for (const int devices : {2, 3, 4}) {
      const Plan plan = collective_plan(test, devices, 4 * 300'000);  // broadcast: three chunks
      const PlanOp& op = plan.ops.front();
      const gpu::DeviceProgram program = gpu::compile_plan(plan, gpu::CompileOptions{LinkMode::kDevice});
      for (const uint32_t schedule : {0u, 7u}) {
        const Interpretation run = interpret(plan, program, 3, schedule);
        const std::string what = std::string(to_string(test)) + " N=" + std::to_string(devices);
        const auto value = [&](int id) { return run.values.at(static_cast<size_t>(id)); };
        for (size_t i = 0; i < op.outputs.size(); ++i) {
          const Value& out = plan.value(op.outputs[i]);
          const std::vector<float> got = value(out.id);
          ASSERT_EQ(static_cast<int64_t>(got.size()) * 4, out.bytes) << what;
          for (size_t e = 0; e < got.size(); e += 997) {  // a sample across every chunk
            const int64_t at = out.channels.begin + static_cast<int64_t>(e);
            float expected = 0;
            if (test == CollectiveTest::kBroadcast) {
              expected = value(op.inputs[0])[static_cast<size_t>(at)];
            } else if (test == CollectiveTest::kAllGather) {
              const int64_t slice = plan.value(op.inputs[0]).channels.size();
              const int owner = static_cast<int>(at / slice);
              expected = value(op.inputs[static_cast<size_t>(owner)])[static_cast<size_t>(at - owner * slice)];
            } else {
              for (int input : op.inputs) expected += value(input)[static_cast<size_t>(at)];
            }
            ASSERT_NEAR(got[e], expected, 1e-5f * (1 + std::abs(expected))) << what << " output " << i << " at " << at;
          }
        }
      }
    }
  }
}

}  // namespace
}  // namespace interpreted_plans_test
}  // namespace splitscope::testing
