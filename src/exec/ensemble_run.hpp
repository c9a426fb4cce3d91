#pragma once
/// \file
/// An ensemble: several networks answer one request, each on its own device,
/// and an aggregator averages their outputs. With a deadline the aggregator
/// answers with the members that finished in time and drops the rest (the
/// chapter's dequeue with a timeout); a member that fails is dropped the same
/// way instead of failing the ensemble.
///
/// Each member is a Plan of its own (its network on one device) run by an
/// Executor of the chosen backend, so members are measured or simulated like
/// any plan. A device runs its members one after another, every device at
/// once (one thread each), so measured members contend for the host as real
/// ones would. Latencies are read off the members' Timelines: on each device
/// the clock starts at the request, a straggler's start is held back by its
/// delay (slept for real on measured backends), and a member's latency is
/// when its run ends.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "exec/executor.hpp"

namespace splitscope {

struct EnsembleMember {
  std::string network;
  Plan plan;            ///< the network alone on one device
  int device = 0;       ///< the ensemble device that runs it
  double delay_ms = 0;  ///< held back this long before it starts (a straggler)
};

struct MemberOutcome {
  std::string network;
  int device = 0;
  double latency_ms = 0;  ///< from the request to its output (to its failure, for a failed one)
  double alone_ms = 0;    ///< its run alone, no delay: the median of the timed repeats
  bool used = false;      ///< its output is in the ensemble's answer
  std::string dropped;    ///< why not: the deadline it missed, or its error
};

struct EnsembleResult {
  std::vector<MemberOutcome> members;
  /// When the aggregator answered: the last used member's latency when all
  /// members are used, else the deadline it waited until (or the last
  /// finished member's latency without one).
  double ensemble_latency_ms = 0;
  double sequential_ms = 0;  ///< the members' alone times summed: one device running them in turn
  HostTensor output;         ///< the mean of the used members' outputs; empty when none was used, or simulated
  bool measured = true;

  /// The members in turn on one device against the ensemble: sequential_ms / ensemble_latency_ms (0 before any answer).
  double speedup() const { return ensemble_latency_ms > 0 ? sequential_ms / ensemble_latency_ms : 0.0; }
};

/// Makes the executor that runs device `device`'s members (a fresh one per device).
using ExecutorFactory = std::function<std::unique_ptr<Executor>(int device)>;

/// Runs every member alone first (options.warmup untimed, options.repeats
/// timed, one after another: the sequential baseline and each member's
/// output), then one request through the whole ensemble over `devices`.
/// Each member is set up once (Executor::prepare), before its alone runs;
/// the request runs that set-up.
/// Members must share one output shape (the caller checks, naming them).
EnsembleResult run_ensemble(const std::vector<EnsembleMember>& members, int devices,
                            const ExecutorFactory& make_executor, const RunOptions& options,
                            std::optional<double> deadline_ms);

}  // namespace splitscope
