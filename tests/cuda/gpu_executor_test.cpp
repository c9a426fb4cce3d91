// The CUDA executor on a real GPU: every small zoo network x strategy x {2, 4}
// virtual devices x both link modes computes the reference output; timelines
// keep the plan's order; transfer spans carry their bytes. Skipped, with the
// reason, where there is no GPU.

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cuda/device_set.hpp"
#include "exec/output_compare.hpp"
#include "exec/cuda_backend.hpp"
#include "partitioners/partitioner.hpp"
#include "reference_network.hpp"
#include "training_cases.hpp"
#include "util/errors.hpp"

namespace splitscope::testing {
namespace gpu_executor_test {
namespace {

struct Case {
  std::string network;
  std::string strategy;
  int devices = 2;
  LinkMode link = LinkMode::kDevice;
};

std::vector<Case> all_cases() {
  std::vector<Case> cases;
  for (const char* network : {"mlp-small", "cnn-small", "lstm-small", "gru-small", "two-tower-small", "resnet-small"}) {
    for (const auto& strategy : strategy_names()) {
      for (int devices : {2, 4}) {
        for (LinkMode link : {LinkMode::kDevice, LinkMode::kHost}) cases.push_back({network, strategy, devices, link});
      }
    }
  }
  return cases;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  std::string name = info.param.network + "_" + info.param.strategy + "_N" + std::to_string(info.param.devices) +
                     "_" + to_string(info.param.link);
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

RunResult run_on_gpu(const Plan& plan, const CudaOptions& cuda, uint64_t seed) {
  RunOptions options;
  options.warmup = 1;
  options.repeats = 2;
  options.seed = seed;
  return make_cuda_executor(cuda)->run(plan, options);
}

/// Spans by (op, device).
std::map<std::pair<int, int>, Span> spans_by_op(const Timeline& timeline) {
  std::map<std::pair<int, int>, Span> spans;
  for (const Span& span : timeline.spans) spans[{span.op, span.device}] = span;
  return spans;
}

class GpuExecutor : public ::testing::TestWithParam<Case> {};

TEST_P(GpuExecutor, ComputesTheReferenceInPlanOrderWithRightTransferBytes) {
  SKIP_WITHOUT_GPU();
  const Case& c = GetParam();
  const auto graph = zoo_graph(c.network);
  // The single baseline on one of the N partitions, like compare runs it.
  const std::string strategy = c.strategy;
  const int devices = strategy == "single" ? 1 : c.devices;
  Plan plan;
  try {
    plan = make_plan(graph, strategy, devices, strategy == "pipeline" ? 2 : 1);
  } catch (const InputError& error) {
    GTEST_SKIP() << "the strategy refuses this split: " << error.what();
  }
  CudaOptions cuda;
  cuda.mode = DeviceMode::kVirtual;
  cuda.virtual_devices = c.devices;
  cuda.link = c.link;
  constexpr uint64_t kSeed = 5;
  const RunResult result = run_on_gpu(plan, cuda, kSeed);

  EXPECT_LT(relative_error(result.output, reference_output(*graph, kSeed)), check_tolerance(Dtype::kFp32));
  RunOptions cpu_options;
  cpu_options.warmup = 0;
  cpu_options.repeats = 1;
  cpu_options.seed = kSeed;
  const OutputComparison against_cpu = compare_outputs(result.output, CpuExecutor().run(plan, cpu_options).output);
  EXPECT_TRUE(against_cpu.within(check_tolerance(Dtype::kFp32))) << "against the cpu backend: " << against_cpu.describe();
  EXPECT_EQ(result.info.backend, "cuda");
  EXPECT_NE(result.info.device_mode.find("virtual"), std::string::npos);
  ASSERT_EQ(result.timelines.size(), 2u);

  for (const Timeline& timeline : result.timelines) {
    const auto spans = spans_by_op(timeline);
    for (const PlanOp& op : plan.ops) {
      if (op.role == OpRole::kCollective) continue;  // its per-device spans wait on some inputs, not all
      const auto own = spans.find({op.id, op.device});
      ASSERT_NE(own, spans.end()) << "no span for " << op_label(plan, op);
      for (int input : op.inputs) {
        if (input < 0 || plan.value(input).producer < 0) continue;
        const Value& value = plan.value(input);
        const auto producer = spans.find({value.producer, value.device});
        ASSERT_NE(producer, spans.end());
        // Device timestamps (CUPTI) are exact; the event fallback resolves ~0.5 µs.
        EXPECT_GE(own->second.start_us + 1.0, producer->second.end_us)
            << op_label(plan, op) << " started before " << op_label(plan, plan.op(value.producer)) << " ended";
      }
      if (op.role == OpRole::kTransfer) {
        EXPECT_EQ(own->second.bytes, plan.value(op.inputs[0]).bytes);
        EXPECT_EQ(own->second.lane, Lane::kCopyIn);
        EXPECT_EQ(own->second.kind, SpanKind::kTransfer);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(SmallNetworks, GpuExecutor, ::testing::ValuesIn(all_cases()), case_name);

TEST(GpuExecutorModes, CudaGraphReplayComputesTheSameAndReportsBothMakespans) {
  SKIP_WITHOUT_GPU();
  const auto graph = zoo_graph("lstm-small");
  const Plan plan = make_plan(graph, "horizontal", 2);
  CudaOptions cuda;
  cuda.mode = DeviceMode::kVirtual;
  cuda.cuda_graph = true;
  const RunResult result = run_on_gpu(plan, cuda, 2);
  EXPECT_LT(relative_error(result.output, reference_output(*graph, 2)), 1e-4);
  ASSERT_EQ(result.timelines.size(), 2u);
  EXPECT_GT(result.timelines[0].makespan_us(), 0.0);
  bool eager = false;
  for (const auto& [key, value] : result.info.facts) eager = eager || key == "eager_makespan_ms";
  EXPECT_TRUE(eager);
}

TEST(GpuExecutorModes, PhysicalModeRunsOnGpuZeroAndRefusesMoreGpusThanThereAre) {
  SKIP_WITHOUT_GPU();
  const auto graph = zoo_graph("mlp-small");
  const RunResult single = run_on_gpu(make_plan(graph, "single", 1), CudaOptions{}, 4);
  EXPECT_LT(relative_error(single.output, reference_output(*graph, 4)), 1e-4);
  EXPECT_EQ(single.info.device_mode, "physical");
  const int gpus = gpu::gpu_count();
  if (gpus < 4) {
    EXPECT_THROW(run_on_gpu(make_plan(graph, "vertical", 4), CudaOptions{}, 4), InputError);
  }
}

TEST(GpuExecutorModes, Tf32StaysWithinItsTolerance) {
  SKIP_WITHOUT_GPU();
  const auto graph = zoo_graph("cnn-small");
  CudaOptions cuda;
  cuda.dtype = Dtype::kTf32;
  const RunResult result = run_on_gpu(make_plan(graph, "single", 1), cuda, 8);
  EXPECT_LT(relative_error(result.output, reference_output(*graph, 8)), check_tolerance(Dtype::kTf32));
}

}  // namespace
}  // namespace gpu_executor_test
}  // namespace splitscope::testing
