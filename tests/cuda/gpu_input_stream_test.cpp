// The input pipeline on the cuda backend: batches prepared on the host,
// copied from pinned buffers on a stream of their own, the plan's steps
// computing the same output as without the pipeline. Skipped, with the
// reason, where there is no GPU.

#include <gtest/gtest.h>

#include "exec/cuda_backend.hpp"
#include "exec/mode_runtimes.hpp"
#include "exec/output_compare.hpp"
#include "reference_network.hpp"
#include "training_cases.hpp"

namespace splitscope::testing {
namespace gpu_input_stream_test {
namespace {

TEST(GpuInputStream, PrefetchedBatchesAreCopiedAndTheStepsComputeThePlainOutput) {
  SKIP_WITHOUT_GPU();
  const Plan plan = make_plan(zoo_graph("cnn-small"), "tensor", 2, 1);
  CudaOptions cuda;
  cuda.mode = DeviceMode::kVirtual;
  cuda.virtual_devices = 2;
  RunOptions options;
  options.warmup = 1;
  options.repeats = 4;
  options.seed = 7;
  const RunResult plain = make_cuda_executor(cuda)->run(plan, options);
  for (int prefetch : {0, 2}) {
    SCOPED_TRACE("prefetch " + std::to_string(prefetch));
    InputPipelineOptions input;
    input.enabled = true;
    input.cost_us_per_sample = 50;
    input.prefetch = prefetch;
    const std::unique_ptr<Executor> executor = make_cuda_executor(cuda);
    InputStreamRuntime* stream = runtime_of<InputStreamRuntime>(*executor);
    ASSERT_NE(stream, nullptr) << "the cuda backend runs input streams";
    const RunResult streamed = stream->run_input_stream(plan, options, input);
    ASSERT_EQ(streamed.timelines.size(), 4u);
    ASSERT_TRUE(streamed.info.input_pipeline.has_value());
    const InputPipelineInfo& info = *streamed.info.input_pipeline;
    EXPECT_EQ(info.steps, 4);
    EXPECT_GT(info.copy_us, 0.0) << "the batch went to the GPU";
    // 50 us a sample is host work the preparer really does.
    EXPECT_GE(info.prepare_us, 0.9 * 50.0 * static_cast<double>(plan.graph->batch()));
    const OutputComparison same = compare_outputs(streamed.output, plain.output);
    EXPECT_TRUE(same.within(check_tolerance(Dtype::kFp32))) << same.describe();
  }
}

}  // namespace
}  // namespace gpu_input_stream_test
}  // namespace splitscope::testing
