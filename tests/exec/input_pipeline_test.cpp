// The input pipeline's rules (exec/input_pipeline.hpp) against their closed
// forms, the per-step windows that become a run's Timelines, and the cpu
// backend's measured stream keeping those rules with real threads.

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <string>

#include "exec/cpu/cpu_executor.hpp"
#include "exec/input_pipeline.hpp"
#include "exec/input_stream.hpp"
#include "exec/output_compare.hpp"
#include "hand_plan.hpp"
#include "naive_reference.hpp"
#include "partitioners/partitioner.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace input_pipeline_test {
namespace {

using testing_support::single_plan;
using testing_support::zoo_graph;

std::vector<InputStepTimes> uniform(double prepare, double copy, double compute, int steps, int prefetch) {
  return schedule_input_pipeline(std::vector<InputStageTimes>(static_cast<size_t>(steps), {prepare, copy, compute}),
                                 prefetch);
}

/// The period between the ends of the last two steps.
double last_period(const std::vector<InputStepTimes>& schedule) {
  return schedule.back().compute_end - schedule[schedule.size() - 2].compute_end;
}

TEST(InputPipeline, WithoutPrefetchEveryStepTakesAllThreeStages) {
  const auto schedule = uniform(30, 5, 20, 6, 0);
  for (size_t s = 0; s < schedule.size(); ++s) {
    EXPECT_DOUBLE_EQ(schedule[s].prepare_start, 55.0 * static_cast<double>(s));
    EXPECT_DOUBLE_EQ(schedule[s].compute_end, 55.0 * static_cast<double>(s + 1));
  }
}

TEST(InputPipeline, PrefetchOneHidesPrepareAndCopyTogetherBehindTheCompute) {
  // Input slower than compute: prepare + copy per step (the next batch's
  // preparation waits until this step has taken its batch).
  auto schedule = uniform(30, 5, 20, 8, 1);
  EXPECT_DOUBLE_EQ(last_period(schedule), 35.0);
  EXPECT_DOUBLE_EQ(schedule.back().compute_end, 35.0 + 20.0 + 7 * 35.0);
  // Compute slower than input: the compute alone, input fully hidden.
  schedule = uniform(12, 5, 20, 8, 1);
  EXPECT_DOUBLE_EQ(last_period(schedule), 20.0);
  EXPECT_DOUBLE_EQ(schedule.back().compute_end, 12.0 + 5.0 + 8 * 20.0);
  for (size_t s = 1; s < schedule.size(); ++s) {
    EXPECT_DOUBLE_EQ(schedule[s].compute_start, schedule[s - 1].compute_end) << "step " << s << " stalled";
  }
}

TEST(InputPipeline, DeeperPrefetchOverlapsPreparationWithTheCopyToo) {
  EXPECT_DOUBLE_EQ(last_period(uniform(30, 5, 20, 10, 2)), 30.0);  // preparation bounds it
  EXPECT_DOUBLE_EQ(last_period(uniform(5, 30, 20, 10, 2)), 30.0);  // the copy bounds it
  EXPECT_DOUBLE_EQ(last_period(uniform(12, 5, 20, 10, 4)), 20.0);  // the compute bounds it
}

TEST(InputPipeline, PreparationRunsAtMostPrefetchBatchesAhead) {
  for (int prefetch : {1, 2, 3}) {
    const auto schedule = uniform(1, 1, 50, 12, prefetch);
    for (size_t s = static_cast<size_t>(prefetch); s < schedule.size(); ++s) {
      EXPECT_GE(schedule[s].prepare_start, schedule[s - static_cast<size_t>(prefetch)].compute_start)
          << "prefetch " << prefetch << ", batch " << s;
    }
  }
}

TEST(InputPipeline, AStepsWindowLastsItsPeriodAndHoldsWhatRanInIt) {
  // prefetch 1, input-bound: step s computes in [35 s + 35, 35 s + 55).
  const auto schedule = uniform(30, 5, 20, 4, 1);
  Timeline compute;
  compute.spans.push_back(Span{0, Lane::kCompute, SpanKind::kCompute, 0, "", 0, 20, 100, 0});
  const std::vector<std::vector<InputCopy>> copies(4, {InputCopy{1, 4096, 5}});
  const Timeline window = input_step_window(schedule, 2, compute, copies);
  EXPECT_DOUBLE_EQ(window.makespan_us(), 35.0);
  const auto compute_span = std::find_if(window.spans.begin(), window.spans.end(),
                                         [](const Span& s) { return s.lane == Lane::kCompute; });
  ASSERT_NE(compute_span, window.spans.end());
  EXPECT_DOUBLE_EQ(compute_span->start_us, 15.0);  // waited 15 µs for its batch
  EXPECT_DOUBLE_EQ(compute_span->end_us, 35.0);
  // Batch 3 is prepared from 105 (when step 2 took its batch), past the window's end.
  bool prepared_next = false;
  for (const Span& span : window.spans) {
    EXPECT_GE(span.start_us, 0.0);
    EXPECT_LE(span.end_us, 35.0);
    if (span.label == "prepare batch 3") {
      prepared_next = true;
      EXPECT_EQ(span.lane, Lane::kHost);
      EXPECT_DOUBLE_EQ(span.start_us, 15.0);
      EXPECT_DOUBLE_EQ(span.end_us, 35.0);  // clipped at the window's end
    }
    if (span.label.starts_with("copy batch")) {
      EXPECT_EQ(span.device, 1);
      EXPECT_EQ(span.bytes, 4096);
    }
  }
  EXPECT_TRUE(prepared_next);
}

TEST(InputPipeline, SummaryFindsTheStallAndWhatPrefetchBought) {
  InputPipelineOptions options;
  options.cost_us_per_sample = 7.5;
  options.prefetch = 1;
  const InputPipelineInfo bound = summarize_input_pipeline(uniform(30, 5, 20, 6, 1), 1, options);
  EXPECT_EQ(bound.steps, 5);
  EXPECT_DOUBLE_EQ(bound.step_us, 35.0);
  EXPECT_DOUBLE_EQ(bound.stall_us, 15.0);
  EXPECT_DOUBLE_EQ(bound.serial_step_us, 55.0);
  EXPECT_TRUE(bound.input_bound);
  const InputPipelineInfo hidden = summarize_input_pipeline(uniform(12, 5, 20, 6, 1), 1, options);
  EXPECT_DOUBLE_EQ(hidden.step_us, 20.0);
  EXPECT_DOUBLE_EQ(hidden.stall_us, 0.0);
  EXPECT_FALSE(hidden.input_bound);
}

TEST(InputPipeline, EachDeviceCopiesTheInputsItsPlanReads) {
  const auto graph = zoo_graph("mlp-small");
  const int64_t input_bytes = graph->batch() * element_count(graph->node(0).output_shapes.at(0)) * 4;
  const auto single = network_input_copies(single_plan(graph));
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0].bytes, input_bytes);
  // A neuron split reads the whole input on both devices.
  PartitionOptions options;
  options.devices = 2;
  const auto vertical = network_input_copies(make_partitioner("vertical")->partition(graph, options));
  ASSERT_EQ(vertical.size(), 2u);
  EXPECT_EQ(vertical[0].device, 0);
  EXPECT_EQ(vertical[1].device, 1);
  EXPECT_EQ(vertical[0].bytes + vertical[1].bytes, 2 * input_bytes);
}

TEST(InputPipeline, RefusesANegativeCostOrPrefetch) {
  InputPipelineOptions options;
  options.prefetch = -1;
  EXPECT_THROW(check_input_pipeline_options(options), InputError);
  options.prefetch = 0;
  options.cost_us_per_sample = -2;
  EXPECT_THROW(check_input_pipeline_options(options), InputError);
}

TEST(CpuInputStream, KeepsThePipelinesRulesOnRealThreadsAndComputesTheSameOutput) {
  const auto graph = zoo_graph("mlp-small");
  const Plan plan = single_plan(graph);
  RunOptions options;
  options.warmup = 1;
  options.repeats = 4;
  options.seed = 5;
  for (int prefetch : {0, 2}) {
    SCOPED_TRACE(prefetch);
    InputPipelineOptions input;
    input.enabled = true;
    input.cost_us_per_sample = 50;  // 200 µs of host work per batch of 4
    input.prefetch = prefetch;
    CpuExecutor executor;
    const RunResult result = executor.run_input_stream(plan, options, input);
    ASSERT_EQ(result.timelines.size(), 4u);
    ASSERT_TRUE(result.info.input_pipeline.has_value());
    const InputPipelineInfo& info = *result.info.input_pipeline;
    EXPECT_EQ(info.steps, 4);
    EXPECT_EQ(info.prefetch, prefetch);
    // The host really spent the cost: a batch's preparation spins at least that long.
    EXPECT_GE(info.prepare_us, 200.0);
    EXPECT_GE(info.step_us, info.compute_us);
    if (prefetch == 0) {
      // Nothing overlaps: every step waits for its batch's whole preparation.
      EXPECT_GE(info.stall_us, 200.0);
      EXPECT_TRUE(info.input_bound);
    }
    for (const Timeline& window : result.timelines) {
      const auto ops = std::count_if(window.spans.begin(), window.spans.end(),
                                     [](const Span& s) { return s.lane == Lane::kCompute && s.op >= 0; });
      EXPECT_EQ(ops, static_cast<long>(plan.schedule[0].size()));
      for (const Span& span : window.spans) {
        EXPECT_GE(span.start_us, 0.0);
        EXPECT_LE(span.end_us, window.makespan_us());
      }
    }
    const HostTensor plain = executor.run(plan, options).output;
    EXPECT_EQ(compare_outputs(result.output, plain).max_relative_error, 0.0);
  }
}

/// Records what a stream asked of its staging; stages on the host.
struct StagingSpy {
  std::vector<InputCopy> targets;
  int64_t batch_bytes = 0;
  size_t slots = 0;
  int64_t copies = 0;
};

TEST(CpuInputStream, TheHostPreparesEveryNetworkInputAndEachDeviceCopiesItsOwn) {
  // Two towers on two devices: the host prepares both images of the batch;
  // each device copies the one its tower reads.
  const auto graph = zoo_graph("two-tower-small");
  const Plan plan = make_partitioner("branches")->partition(graph, {2, 1, nullptr});
  RunOptions options;
  options.warmup = 0;
  options.repeats = 2;
  options.intra_op_threads = 1;
  InputPipelineOptions input;
  input.enabled = true;
  input.prefetch = 1;
  StagingSpy spy;
  const auto make_spy = [&spy](const std::vector<InputCopy>& targets, size_t slots, int64_t batch_bytes) {
    spy.targets = targets;
    spy.slots = slots;
    spy.batch_bytes = batch_bytes;
    class Counting final : public InputStaging {
     public:
      Counting(std::unique_ptr<InputStaging> host, int64_t& copies) : host_(std::move(host)), copies_(copies) {}
      float* host_batch(size_t slot) override { return host_->host_batch(slot); }
      void copy(size_t slot, size_t target, int64_t bytes) override {
        ++copies_;
        host_->copy(slot, target, bytes);
      }

     private:
      std::unique_ptr<InputStaging> host_;
      int64_t& copies_;
    };
    return std::make_unique<Counting>(host_input_staging(targets, slots, batch_bytes), spy.copies);
  };
  CpuExecutor executor;
  run_measured_input_stream(executor, plan, options, input, make_spy);
  const int64_t image = graph->batch() * 3 * 12 * 12 * 4;
  EXPECT_EQ(spy.batch_bytes, 2 * image) << "both images of the batch";
  ASSERT_EQ(spy.targets.size(), 2u);
  EXPECT_EQ(spy.targets[0].bytes, image);
  EXPECT_EQ(spy.targets[1].bytes, image);
  EXPECT_EQ(spy.slots, 2u) << "prefetch 1: the batch computing and the one ahead";
  EXPECT_EQ(spy.copies, 2 * 3) << "a copy per device, for the fill step and the 2 timed ones";
}

}  // namespace
}  // namespace input_pipeline_test
}  // namespace splitscope
