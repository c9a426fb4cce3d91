#pragma once
/// \file
/// The fused single-device baseline of `demo rnn`: the whole LSTM or GRU
/// stack as one tight call, the way practitioners run it, which every other
/// way of running the stack is judged against. One implementation per
/// backend, behind one small interface:
///
/// - cuda: cuDNN's cudnnRNNForward over every stacked layer and step
///   (gpu::run_fused_rnn), on the whole GPU, or under `--virtual` on one
///   green-context partition of the size each split device gets;
/// - cpu: the fused loop of exec/cpu/fused_rnn_loop.hpp (one input product
///   over all steps per layer, then the recurrent steps), on the intra-op
///   threads a one-device plan gets;
/// - sim: a prediction from the machine's cost model
///   (sim/costs/fused_rnn_prediction.hpp).
///
/// In training (`demo rnn --train`) the cpu one runs the fused training loop
/// (exec/cpu/fused_rnn_training.hpp) and the sim one predicts it; the cuda
/// one has no training step yet (cuDNN's backward calls need a GPU to be
/// built against), so there the cell-by-cell single device is the baseline.
///
/// Each says what it ran and how its time was obtained, since the verdict
/// table must.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "exec/executor.hpp"
#include "ir/graph.hpp"
#include "sim/machine/machine.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

struct FusedTiming {
  /// One per timed repeat (one for a prediction): a single span on device 0
  /// from 0 to the call's time, labelled with `implementation`, so that
  /// report/makespan_stats.hpp gives its median, min and max.
  std::vector<Timeline> timelines;
  bool measured = true;
  std::string implementation;  ///< "cuDNN cudnnRNNForward", "fused cpu loop", "cost-model prediction"
  std::string method;          ///< one sentence: how the time was obtained
  std::string device_mode;     ///< "physical", "virtual (...)", "cpu threads (2 intra-op threads)", "simulated"
  HostTensor output;           ///< the stack's output, where it was computed (training: the last step's)
  std::vector<double> losses;  ///< training: each step's loss, where computed
  /// What of a pooled machine the fused run had: the cpu loop's threads, a
  /// pooled simulated machine's shares (all of them); 0 for whole devices.
  int threads = 0;
};

class FusedBaseline {
 public:
  virtual ~FusedBaseline() = default;
  /// "cpu", "cuda", "sim"
  virtual std::string_view name() const = 0;
  /// Whether run() takes a training graph (a timed training step a repeat).
  virtual bool trains() const { return false; }
  /// Runs (or predicts) layer 0 of `graph`, a stacked lstm or gru that is
  /// the whole demo network, with `options`' seed, warm-up and repeats; for
  /// a training graph (where trains()), `options.repeats` training steps.
  virtual FusedTiming run(const std::shared_ptr<const Graph>& graph, const RunOptions& options) = 0;
};

/// The fused cpu loop.
std::unique_ptr<FusedBaseline> make_cpu_fused_baseline();
/// cuDNN's fused stack in `dtype` (fp32 | tf32); `virtual_devices` > 1 runs it
/// on one green-context partition of 1/virtual_devices of the SMs.
/// UnavailableError (exit 3) from run() where there is no GPU.
std::unique_ptr<FusedBaseline> make_cuda_fused_baseline(std::string dtype, int virtual_devices);
/// The cost model's prediction on one device of `machine`.
std::unique_ptr<FusedBaseline> make_sim_fused_baseline(Machine machine);

/// Timelines of one span each, from per-repeat times in ms.
std::vector<Timeline> single_span_timelines(const std::vector<double>& times_ms, const std::string& label);

}  // namespace splitscope
