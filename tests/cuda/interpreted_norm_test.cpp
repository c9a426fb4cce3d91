// batch_norm, layer_norm and dropout compiled for the GPU and interpreted on
// the host (program_interpreter.hpp runs a NormStep and a DropoutStep with the
// cpu kernels): the plan compiler's buffers, strides, waits and running sums
// against the cpu backend training the same plan step for step; the forward
// against the float reference; and the simulator's call counts against the
// compiled steps. The kernels' own math runs only where a GPU is lent.

#include <gtest/gtest.h>

#include <map>
#include <tuple>
#include <vector>

#include "../exec/training_support.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "exec/cuda/plan_compiler.hpp"
#include "exec/training_run.hpp"
#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "program_interpreter.hpp"
#include "reference_network.hpp"
#include "sim/costs/host_issue.hpp"
#include "training_cases.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace interpreted_norm_test {
namespace {

constexpr uint64_t kSeed = 9;

const char* kNetworks[] = {
    R"({"name": "conv-bn", "batch": 4, "input": [3, 6, 6], "layers": [
        {"type": "conv2d", "filters": 4, "kernel": 3, "padding": 1, "bias": false},
        {"type": "batch_norm"}, {"type": "relu"}, {"type": "flatten"}, {"type": "dense", "units": 3},
        {"type": "softmax"}]})",
    R"({"name": "dense-ln-dropout", "batch": 4, "input": [6], "layers": [
        {"type": "dense", "units": 8}, {"type": "layer_norm"}, {"type": "dropout", "rate": 0.25},
        {"type": "dense", "units": 8}, {"type": "batch_norm"}, {"type": "dense", "units": 3}]})",
    R"({"name": "seq-ln", "batch": 3, "input": [4, 5], "layers": [
        {"type": "gru", "hidden": 6}, {"type": "layer_norm"}, {"type": "flatten"}, {"type": "dense", "units": 2}]})",
};

TEST(InterpretedNorm, TrainingMatchesTheCpuBackendStepForStep) {
  for (const char* text : kNetworks) {
    const auto training = std::make_shared<const Graph>(training_graph(*graph_from_text(text), training_optimizer(false)));
    for (const auto& [strategy, devices, microbatches] :
         std::vector<std::tuple<std::string, int, int>>{{"single", 1, 1}, {"vertical", 2, 1}, {"data", 2, 1},
                                                        {"pipeline", 2, 2}}) {
      const std::string what = std::string(text).substr(0, 30) + " " + strategy;
      Plan plan;
      try {
        plan = splitscope::make_plan(*make_partitioner(strategy), training, {devices, microbatches, nullptr});
      } catch (const InputError&) {
        continue;  // a split the strategy refuses
      }
      check(plan);
      CpuExecutor cpu;
      RunOptions run;
      run.seed = kSeed;
      const RunResult on_cpu = run_training_steps(cpu, plan, run, 3);
      const gpu::DeviceProgram program = gpu::compile_plan(plan, gpu::CompileOptions{LinkMode::kDevice});
      const std::vector<HostTensor> outputs = interpret_runs(plan, program, kSeed, 3, 7);
      testing_support::TrainedRun interpreted;
      for (const HostTensor& output : outputs) interpreted.losses.push_back(step_loss(*training, output.data, kSeed));
      interpreted.output = outputs.back();
      testing_support::expect_same_training(interpreted, {on_cpu.losses, on_cpu.output}, what);
      // The simulator counts the calls the compiled program makes.
      std::map<int, int> compiled;
      for (const gpu::Step& step : program.steps) compiled[program.spans[static_cast<size_t>(step.span)].op] += 1;
      for (const PlanOp& op : plan.ops) {
        EXPECT_EQ(device_calls(plan, op), compiled[op.id])
            << what << ": op " << op.id << " (" << to_string(op.role) << " " << plan.graph->node(op.node).name << ", inputs " << op.inputs.size() << " of " << plan.graph->node(op.node).input_shapes.size() << ")";
      }
    }
  }
}

TEST(InterpretedNorm, InferenceMatchesTheReference) {
  for (const char* text : kNetworks) {
    const auto graph = graph_from_text(text);
    const Plan plan = splitscope::make_plan(*make_partitioner("single"), graph, {1, 1, nullptr});
    const gpu::DeviceProgram program = gpu::compile_plan(plan, gpu::CompileOptions{LinkMode::kDevice});
    const HostTensor output = interpret_runs(plan, program, kSeed, 1).back();
    EXPECT_LE(relative_error(output, reference_output(*graph, kSeed)), 1e-5) << text;
  }
}

}  // namespace
}  // namespace interpreted_norm_test
}  // namespace splitscope::testing
