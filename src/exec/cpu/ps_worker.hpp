#pragma once
/// \file
/// A parameter-server worker of the cpu backend: its part of the `ps` plan
/// (plan/plan_part.hpp) on a scheduler of its own, with its own
/// copy of the weights to pull into and its gradients to push. The same
/// worker runs as a thread of one process (ps_training.hpp) and as an MPI
/// rank (exec/mpi/mpi_ps_run.hpp).

#include <chrono>
#include <optional>
#include <vector>

#include "exec/cpu/kernels/parallel_for.hpp"
#include "exec/cpu/plan_tasks.hpp"
#include "exec/cpu/scheduler.hpp"
#include "exec/cpu/thread_config.hpp"
#include "exec/cpu/value_buffers.hpp"
#include "exec/cpu/weight_slices.hpp"
#include "exec/executor.hpp"
#include "plan/plan_part.hpp"

namespace splitscope {

class PsWorker {
 public:
  /// Worker `index` of `plan`; `setup` generates its weights (the seed's, as every replica's).
  PsWorker(const Plan& plan, int index, const RunOptions& options, const ThreadConfig& threads, ParallelFor& setup);

  int index() const { return index_; }
  Range rows() const { return rows_; }
  /// The weights of weight set `set` (an index into the part's parameters), to pull into.
  WeightSlice& weights(int set) { return *weights_.get_mutable(part_.plan.value(part_.plan.parameters.at(set))); }
  /// Its gradient of weight set `set`, flat.
  ConstChannelBlock gradient(int set) const { return buffers_.block(gradients_.at(static_cast<size_t>(set))); }
  /// Runs the forward and backward pass; returns its op spans (the whole
  /// plan's op ids, its own device) on the clock that starts at `start`.
  std::vector<Span> step(std::chrono::steady_clock::time_point start,
                         const std::optional<std::chrono::microseconds>& deadline);
  /// Its rows of the network output, [rows][output].
  ConstChannelBlock output() const { return buffers_.block(part_.plan.outputs[0]); }
  /// The loss of its rows of the last step's output.
  double loss(const Graph& graph, uint64_t seed) const;

 private:
  int index_;
  DevicePart part_;
  ValueBuffers buffers_;
  WeightStore weights_;
  PlanTasks tasks_;
  Scheduler scheduler_;
  Range rows_;
  std::vector<int> gradients_;  ///< the gradient value of each weight set
};

/// Appends `slice`'s tensors, end to end, to `flat` (a pull's message).
void append_flat(const WeightSlice& slice, std::vector<float>& flat);
/// Copies `slice`'s tensors from `flat`, end to end; returns where they end.
const float* read_flat(const float* flat, WeightSlice& slice);

}  // namespace splitscope
