// Training plans compiled for the GPU (every small zoo network, recurrent
// ones included), interpreted on the host for three
// steps, against the cpu backend training the same plan: every step's loss
// and the last step's output within 1e-4 (training_support.hpp). The
// backward pass's device steps — transposed products, cuDNN's backward data
// and filter convolutions, pooling's gather, bias sums, gradient running
// sums, the optimizer with its state kept from step to step — and the waits
// between them are checked without a GPU, under a random stream schedule.

#include <gtest/gtest.h>

#include "../exec/training_support.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "exec/cuda/plan_compiler.hpp"
#include "exec/training_run.hpp"
#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "program_interpreter.hpp"
#include "reference_network.hpp"
#include "training_cases.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace interpreted_training_test {
namespace {

constexpr uint64_t kSeed = 5;
constexpr int kSteps = 3;

struct TrainCase {
  std::string network;
  std::string strategy;
  int devices = 1;
  int microbatches = 1;
  PipelineSchedule schedule = PipelineSchedule::kGpipe;
  LinkMode link = LinkMode::kDevice;
  bool adam = false;
  bool recompute = false;  ///< --recompute (partitioners/recompute.hpp)
};

Optimizer optimizer_of(const TrainCase& c) { return training_optimizer(c.adam); }

std::vector<TrainCase> all_cases() {
  std::vector<TrainCase> cases;
  for (const char* network : {"mlp-small", "cnn-small", "residual-small", "towers-small", "resnet-small",
                              "two-tower-small", "inception-small", "lstm-small", "gru-small"}) {
    cases.push_back({network, "single"});
    for (int devices : {2, 3}) {
      for (const char* strategy : {"data", "horizontal", "vertical", "tensor", "branches"}) {
        cases.push_back({network, strategy, devices});
      }
      for (PipelineSchedule schedule : {PipelineSchedule::kGpipe, PipelineSchedule::kOneForwardOneBackward}) {
        cases.push_back({network, "pipeline", devices, 3, schedule});
      }
    }
    cases.push_back({network, "pipeline", 2, 2, PipelineSchedule::kGpipe, LinkMode::kHost});
    cases.push_back({network, "pipeline", 2, 3, PipelineSchedule::kOneForwardOneBackward, LinkMode::kDevice, false,
                     true});
  }
  cases.push_back({"mlp-small", "tensor", 2, 1, PipelineSchedule::kGpipe, LinkMode::kDevice, false, true});
  cases.push_back({"resnet-small", "data", 2, 1, PipelineSchedule::kGpipe, LinkMode::kDevice, false, true});
  cases.push_back({"mlp-small", "single", 1, 1, PipelineSchedule::kGpipe, LinkMode::kDevice, true});
  cases.push_back({"mlp-small", "data", 2, 1, PipelineSchedule::kGpipe, LinkMode::kHost, true});
  cases.push_back({"cnn-small", "pipeline", 2, 2, PipelineSchedule::kOneForwardOneBackward, LinkMode::kDevice, true});
  cases.push_back({"gru-small", "data", 3, 1, PipelineSchedule::kGpipe, LinkMode::kDevice, true});
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<TrainCase>& info) {
  const TrainCase& c = info.param;
  std::string name = c.network + "_" + c.strategy + "_N" + std::to_string(c.devices) + "_M" +
                     std::to_string(c.microbatches) + "_" + std::string(to_string(c.schedule)) + "_" +
                     to_string(c.link) + (c.adam ? "_adam" : "") + (c.recompute ? "_recompute" : "");
  for (char& ch : name) {
    if (ch == '-' || ch == ' ') ch = '_';
  }
  return name;
}

void PrintTo(const TrainCase& c, std::ostream* out) { *out << case_name({c, 0}); }

class InterpretedTraining : public ::testing::TestWithParam<TrainCase> {};

TEST_P(InterpretedTraining, MatchesTheCpuBackendStepForStep) {
  const TrainCase& c = GetParam();
  const auto training = std::make_shared<const Graph>(training_graph(*zoo_graph(c.network), optimizer_of(c)));
  PartitionOptions options{c.devices, c.microbatches, nullptr};
  options.schedule = c.schedule;
  options.recompute = c.recompute;
  Plan plan;
  try {
    plan = make_plan(*make_partitioner(c.strategy), training, options);
  } catch (const InputError& error) {
    GTEST_SKIP() << "the strategy refuses to train this split: " << error.what();
  }
  check(plan);
  CpuExecutor cpu;
  RunOptions run;
  run.seed = kSeed;
  const RunResult on_cpu = run_training_steps(cpu, plan, run, kSteps);
  const testing_support::TrainedRun expected{on_cpu.losses, on_cpu.output};

  const gpu::DeviceProgram program = gpu::compile_plan(plan, gpu::CompileOptions{c.link});
  // A random order of ready streams: a missing wait reads a buffer not yet written.
  const std::vector<HostTensor> outputs = interpret_runs(plan, program, kSeed, kSteps, 7);
  testing_support::TrainedRun interpreted;
  for (const HostTensor& output : outputs) interpreted.losses.push_back(step_loss(*training, output.data, kSeed));
  interpreted.output = outputs.back();
  testing_support::expect_same_training(interpreted, expected, case_name({c, 0}));
  // Training moved the weights: the last step's loss is not the first's.
  EXPECT_NE(interpreted.losses.front(), interpreted.losses.back());
}

INSTANTIATE_TEST_SUITE_P(SmallNetworks, InterpretedTraining, ::testing::ValuesIn(all_cases()), case_name);

}  // namespace
}  // namespace interpreted_training_test
}  // namespace splitscope::testing
