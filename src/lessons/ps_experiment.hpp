#pragma once
/// \file
/// Lessons 7 and 8's experiment: a small network trained for real with
/// parameter servers on the cpu backend (docs/parameter-servers.md), each
/// worker and shard a thread, or predicted on the simulator; what the run's
/// report says of its staleness, losses and time.

#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "exec/executor.hpp"
#include "exec/parameter_server.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope {

/// One parameter-server training run of `network` at `batch` on `workers`
/// workers and one shard, SGD with momentum at `learning_rate`, seed 1.
struct PsSetup {
  std::string network = "mlp-small";
  int64_t batch = 32;
  int workers = 4;
  double learning_rate = 0.01;
  ParameterServerOptions ps;
  std::optional<StragglerDelay> straggler;  ///< cpu only: the simulator draws its noise instead
  double jitter_sigma = 0;                  ///< sim only: each worker step's compute × a lognormal factor
};

struct PsTrial {
  bool diverged = false;  ///< the loss went infinite or NaN (the run stopped)
  double staleness_mean = 0;
  std::vector<int64_t> staleness_histogram;
  /// The mean loss of the last kPsFinalWindows step windows (smooths one
  /// window's noise); infinity when it diverged.
  double final_loss = std::numeric_limits<double>::infinity();
  double wall_ms = 0;  ///< from the start to the last update
  int updates = 0;
  int64_t gradients_dropped = 0;
  /// (wall ms, loss) at each step window's end: the mean loss of the worker
  /// steps that ended in it (empty on the simulator, and when it diverged).
  std::vector<std::pair<double, double>> loss_curve;

  double ms_per_update() const { return updates > 0 ? wall_ms / updates : 0.0; }
};

inline constexpr int kPsFinalWindows = 5;

/// Trains `setup` on the cpu backend (threads on this machine: its times and
/// async staleness vary from run to run).
PsTrial train_ps_on_cpu(const PsSetup& setup);

/// Predicts `setup` on `machine` (its first workers + 1 devices); no losses.
PsTrial simulate_ps(const PsSetup& setup, const Machine& machine);

}  // namespace splitscope
