#pragma once
// What the cpu executor benchmarks share (mlp_forward_bench, mlp_train_bench):
// the mlp at a given width, and a plan made ready to run so that only
// Scheduler::run is timed.

#include <memory>
#include <thread>

#include "exec/cpu/intra_op_pool.hpp"
#include "exec/cpu/plan_tasks.hpp"
#include "exec/cpu/scheduler.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "ir/graph.hpp"
#include "partitioners/partitioner.hpp"

namespace splitscope::bench {

/// The zoo's mlp (8 × dense 8192, batch 64) at width 8192; narrower widths
/// the same network built here, for a quick run.
Graph mlp_of_width(int64_t width);

/// `graph` as `single`, with its weights, buffers and tasks made once: each
/// scheduler.run(tasks.graph) is then one run (a forward, or a training step).
struct PreparedRun {
  IntraOpPool setup_threads{static_cast<int>(std::thread::hardware_concurrency())};
  Plan plan;
  ValueBuffers buffers;
  WeightStore weights;
  PlanTasks tasks;
  Scheduler scheduler;

  PreparedRun(std::shared_ptr<const Graph> graph, const ThreadConfig& threads);
};

}  // namespace splitscope::bench
