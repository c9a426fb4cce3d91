// An ensemble on the cuda backend: each device's members on their own
// executor (CudaOptions::first_device), on partitions of one GPU carved with
// green contexts; the answer is the mean of the members' outputs, as on the
// cpu backend, and a member held back past the deadline is dropped. Skipped,
// with the reason, where there is no GPU.

#include <gtest/gtest.h>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/cuda_backend.hpp"
#include "exec/ensemble_run.hpp"
#include "exec/output_compare.hpp"
#include "partitioners/partitioner.hpp"
#include "reference_network.hpp"
#include "training_cases.hpp"

namespace splitscope::testing {
namespace gpu_ensemble_test {
namespace {

EnsembleMember member(const std::string& network, int device, double delay_ms = 0) {
  EnsembleMember m;
  m.network = network;
  m.plan = make_plan(zoo_graph(network), "single", 1, 1);
  m.device = device;
  m.delay_ms = delay_ms;
  return m;
}

RunOptions quick() {
  RunOptions options;
  options.warmup = 1;
  options.repeats = 2;
  options.seed = 11;
  return options;
}

TEST(GpuEnsemble, MembersOnPartitionsOfOneGpuAverageAsOnTheCpu) {
  SKIP_WITHOUT_GPU();
  const std::vector<EnsembleMember> members{member("mlp-small", 0), member("mlp-small", 1, 400.0)};
  const auto on_partition = [](int device) {
    CudaOptions cuda;
    cuda.mode = DeviceMode::kVirtual;
    cuda.virtual_devices = 2;
    cuda.first_device = device;
    return make_cuda_executor(cuda);
  };
  // Without a deadline both answer; the mean of two copies of one network is its output.
  const EnsembleResult all = run_ensemble(members, 2, on_partition, quick(), std::nullopt);
  ASSERT_EQ(all.members.size(), 2u);
  EXPECT_TRUE(all.measured);
  EXPECT_TRUE(all.members[0].used) << all.members[0].dropped;
  EXPECT_TRUE(all.members[1].used) << all.members[1].dropped;
  EXPECT_GE(all.members[1].latency_ms, 400.0) << "member 1 started after its delay";
  const HostTensor alone = CpuExecutor().run(members[0].plan, quick()).output;
  const OutputComparison mean = compare_outputs(all.output, alone);
  EXPECT_TRUE(mean.within(check_tolerance(Dtype::kFp32))) << mean.describe();

  // With a 200 ms deadline the held-back member misses it and the answer is member 0's alone.
  const EnsembleResult late = run_ensemble(members, 2, on_partition, quick(), 200.0);
  EXPECT_TRUE(late.members[0].used);
  EXPECT_FALSE(late.members[1].used);
  EXPECT_NE(late.members[1].dropped.find("missed the 200 ms deadline"), std::string::npos) << late.members[1].dropped;
  EXPECT_DOUBLE_EQ(late.ensemble_latency_ms, 200.0);
  EXPECT_TRUE(compare_outputs(late.output, alone).within(check_tolerance(Dtype::kFp32)));
}

}  // namespace
}  // namespace gpu_ensemble_test
}  // namespace splitscope::testing
