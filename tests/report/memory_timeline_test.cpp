// Memory per device over a run's timeline (report/memory_timeline.hpp),
// on real training plans timed by the ideal schedule: one device running its
// ops in turn peaks exactly at the plan's walk-ordered peak; a 1F1B
// pipeline's first stage peaks below GPipe's; thinning keeps the peak.

#include <gtest/gtest.h>

#include <algorithm>

#include "ideal_schedule.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/training.hpp"
#include "ir/zoo.hpp"
#include "partitioners/partitioner.hpp"
#include "plan/plan_memory.hpp"
#include "report/memory_timeline.hpp"

namespace splitscope {
namespace memory_timeline_test {
namespace {

using testing::ideal_schedule;

std::shared_ptr<const Graph> training_mlp() {
  const Graph forward = lower(load_model_file(resolve_zoo_file(ZooShelf::kNetworks, "mlp-small")));
  return std::make_shared<const Graph>(training_graph(forward, Optimizer{}));
}

int64_t peak(const std::vector<MemoryPoint>& points) {
  int64_t top = 0;
  for (const MemoryPoint& point : points) top = std::max(top, point.bytes);
  return top;
}

Plan plan_of(const std::string& strategy, int devices, int microbatches, PipelineSchedule schedule) {
  PartitionOptions options{devices, microbatches, nullptr};
  options.schedule = schedule;
  return make_partitioner(strategy)->partition(training_mlp(), options);
}

const testing::IdealCosts kCosts{1e-3, 1e-3, 2.0};

TEST(MemoryTimeline, OneDevicePeaksWhereThePlansAccountingDoes) {
  const Plan plan = plan_of("single", 1, 1, PipelineSchedule::kGpipe);
  const Timeline timeline = ideal_schedule(plan, kCosts);
  const auto series = memory_over_time(plan, timeline);
  ASSERT_EQ(series.size(), 1u);
  const DeviceMemory memory = compute_memory(plan).front();
  EXPECT_EQ(peak(series.front()), memory.peak);
  EXPECT_EQ(series.front().front().time_us, 0.0);
  EXPECT_DOUBLE_EQ(series.front().back().time_us, timeline.makespan_us());
  // Never below what stays resident: weights, gradient buffers, optimizer state.
  for (const MemoryPoint& point : series.front()) {
    EXPECT_GE(point.bytes, memory.params + memory.gradients + memory.optimizer_state);
  }
}

TEST(MemoryTimeline, OneForwardOneBackwardHoldsLessOnTheFirstStage) {
  const Plan gpipe = plan_of("pipeline", 2, 8, PipelineSchedule::kGpipe);
  const Plan one_f_one_b = plan_of("pipeline", 2, 8, PipelineSchedule::kOneForwardOneBackward);
  const int64_t gpipe_peak = peak(memory_over_time(gpipe, ideal_schedule(gpipe, kCosts)).front());
  const int64_t ofob_peak = peak(memory_over_time(one_f_one_b, ideal_schedule(one_f_one_b, kCosts)).front());
  EXPECT_LT(ofob_peak, gpipe_peak);
}

TEST(MemoryTimeline, ThinningKeepsThePeak) {
  const Plan plan = plan_of("pipeline", 2, 8, PipelineSchedule::kGpipe);
  const Timeline timeline = ideal_schedule(plan, kCosts);
  const auto full = memory_over_time(plan, timeline, 1 << 20);
  const auto thin = memory_over_time(plan, timeline, 10);
  for (size_t d = 0; d < full.size(); ++d) {
    EXPECT_GT(full[d].size(), 10u);
    EXPECT_LE(thin[d].size(), 10u);
    EXPECT_EQ(peak(thin[d]), peak(full[d]));
  }
}

}  // namespace
}  // namespace memory_timeline_test
}  // namespace splitscope
