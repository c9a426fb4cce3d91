// Training on a real GPU: three steps of every trainable small zoo network x
// strategy on 2 virtual devices against the cpu backend training the same
// plan (every step's loss and the last output within 1e-4). Skipped, with the reason, where
// there is no GPU.

#include <gtest/gtest.h>

#include <algorithm>

#include "../exec/training_support.hpp"
#include "exec/cpu/cpu_executor.hpp"
#include "exec/cuda/device_set.hpp"
#include "exec/cuda_backend.hpp"
#include "exec/training_run.hpp"
#include "ir/training.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_check.hpp"
#include "reference_network.hpp"
#include "training_cases.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace gpu_training_test {
namespace {

constexpr uint64_t kSeed = 3;
constexpr int kSteps = 3;

struct TrainCase {
  std::string network;
  std::string strategy;
  int devices = 2;
  PipelineSchedule schedule = PipelineSchedule::kGpipe;
  LinkMode link = LinkMode::kDevice;
  bool adam = false;
};

std::string case_name(const TrainCase& c) {
  std::string name = c.network + "_" + c.strategy + "_N" + std::to_string(c.devices) + "_" +
                     std::string(to_string(c.schedule)) + "_" + to_string(c.link) + (c.adam ? "_adam" : "");
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

void PrintTo(const TrainCase& c, std::ostream* out) { *out << case_name(c); }

std::vector<TrainCase> all_cases() {
  std::vector<TrainCase> cases;
  for (const char* network : {"mlp-small", "cnn-small", "residual-small", "resnet-small", "two-tower-small",
                              "inception-small", "lstm-small", "gru-small"}) {
    cases.push_back({network, "single", 1});
    for (const char* strategy : {"data", "horizontal", "vertical", "tensor", "branches"}) {
      cases.push_back({network, strategy});
    }
    cases.push_back({network, "pipeline", 2, PipelineSchedule::kGpipe});
    cases.push_back({network, "pipeline", 2, PipelineSchedule::kOneForwardOneBackward});
    cases.push_back({network, "pipeline", 2, PipelineSchedule::kGpipe, LinkMode::kHost});
  }
  cases.push_back({"mlp-small", "data", 2, PipelineSchedule::kGpipe, LinkMode::kDevice, true});
  cases.push_back({"cnn-small", "pipeline", 2, PipelineSchedule::kOneForwardOneBackward, LinkMode::kDevice, true});
  return cases;
}

Optimizer optimizer_of(const TrainCase& c) { return training_optimizer(c.adam); }

CudaOptions virtual_devices(int count, LinkMode link) {
  CudaOptions cuda;
  cuda.mode = DeviceMode::kVirtual;
  cuda.virtual_devices = count;
  cuda.link = link;
  return cuda;
}

class GpuTraining : public ::testing::TestWithParam<TrainCase> {};

TEST_P(GpuTraining, MatchesTheCpuBackendStepForStep) {
  SKIP_WITHOUT_GPU();
  const TrainCase& c = GetParam();
  const auto training = std::make_shared<const Graph>(training_graph(*zoo_graph(c.network), optimizer_of(c)));
  PartitionOptions options{c.devices, c.strategy == "pipeline" ? 3 : 1, nullptr};
  options.schedule = c.schedule;
  Plan plan;
  try {
    plan = make_partitioner(c.strategy)->partition(training, options);
  } catch (const InputError& error) {
    GTEST_SKIP() << "the strategy refuses to train this split: " << error.what();
  }
  check(plan);
  RunOptions run;
  run.seed = kSeed;
  CpuExecutor cpu;
  const RunResult on_cpu = run_training_steps(cpu, plan, run, kSteps);
  const RunResult on_gpu = run_training_steps(*make_cuda_executor(virtual_devices(2, c.link)), plan, run, kSteps);
  ASSERT_EQ(on_gpu.timelines.size(), static_cast<size_t>(kSteps));
  testing_support::expect_same_training({on_gpu.losses, on_gpu.output}, {on_cpu.losses, on_cpu.output},
                                        case_name(c));
  EXPECT_LT(on_gpu.losses.back(), on_gpu.losses.front()) << "three steps of SGD did not lower the loss";
}

INSTANTIATE_TEST_SUITE_P(SmallNetworks, GpuTraining, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<TrainCase>& info) { return case_name(info.param); });

}  // namespace
}  // namespace gpu_training_test
}  // namespace splitscope::testing
