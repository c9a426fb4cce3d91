#pragma once
/// \file
/// One parameter-server shard of the cpu backend, without its threads or
/// messages: the master copy of its weight sets, their optimizer state, the
/// update being aggregated, its ledger (exec/ps/shard_ledger.hpp) and what
/// it recorded. A shard thread of one process (ps_training.hpp) and a shard
/// rank of an MPI job (exec/mpi/mpi_ps_run.hpp) each drive one.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "exec/cpu/weight_slices.hpp"
#include "exec/ps/shard_ledger.hpp"
#include "exec/ps/shard_tally.hpp"
#include "ir/training_spec.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

class ParameterShard {
 public:
  /// Shard `index` of a run of `workers` workers, plan device `device`;
  /// `batch`: the whole batch, over which each worker's gradient is a sum / B.
  ParameterShard(const ParameterServerOptions& options, int workers, int index, int device, const Optimizer& optimizer,
                 int64_t batch);

  /// Takes weight set `set` (an index into a worker part's parameters), starting from `initial`.
  void hold(int set, const WeightSlice& initial);
  /// Its weight sets, in the order of its messages.
  const std::vector<int>& weight_sets() const { return weight_sets_; }
  /// The master copy of its i-th weight set.
  const WeightSlice& master(size_t i) const { return master_.at(i); }
  /// Floats of a gradient message: its weight sets' gradients end to end.
  int64_t gradient_floats() const { return gradient_floats_; }
  const ShardLedger& ledger() const { return ledger_; }

  /// A worker's gradient over `rows` rows, computed on the weights of
  /// version `pulled`, flat over weight_sets(): the ledger takes it into the
  /// next update (summed in; the update applied, timed on `now_us`, when it
  /// completes) or drops it.
  GradientVerdict offer(int pulled, int64_t rows, std::span<const float> gradient,
                        const std::function<double()>& now_us);

  /// What it saw, with the bytes of weights it holds.
  ShardTally tally() const;
  /// Its updates, on its device's compute lane.
  const std::vector<Span>& spans() const { return spans_; }

 private:
  /// Applies the rows-weighted mean of the gradients taken (each worker's is
  /// a sum over its rows / B) to the master copy.
  void apply(const std::function<double()>& now_us);

  int index_;
  int device_;
  Optimizer optimizer_;
  int64_t batch_;
  ShardLedger ledger_;
  std::vector<int> weight_sets_;
  std::vector<WeightSlice> master_;
  std::vector<std::vector<float>> state_;  ///< optimizer state, per weight set
  std::vector<std::vector<float>> sum_;    ///< the update being aggregated
  int64_t gradient_floats_ = 0;
  int64_t sum_rows_ = 0;
  double lr_scale_ = 1.0;
  std::vector<Span> spans_;
  ShardTally tally_;
};

}  // namespace splitscope
