#pragma once
/// \file
/// The Executor: runs a Plan and returns what happened (a Timeline per timed
/// repeat) and what it computed. The cpu and cuda backends measure; the
/// simulator predicts through the same interface, so `run` and `compare` treat
/// all three alike. The modes that need more of a backend (an input stream,
/// parameter-server training) are optional interfaces of their own
/// (mode_runtimes.hpp), which the drivers (run/run_driver.hpp) ask for.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "plan/plan.hpp"
#include "timeline/run_result.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

/// A slow device (`--straggler D:MS`): device `device`'s work of every run
/// starts `ms` milliseconds late, as on a machine that is busy elsewhere.
/// Device kEveryDevice holds every device back alike (equal-speed workers
/// whose pace a delay sets, not the cores they share: the parameter-server
/// tests use it).
struct StragglerDelay {
  static constexpr int kEveryDevice = -1;
  int device = 0;
  double ms = 0;

  bool holds_back(int d) const { return device == kEveryDevice || device == d; }
};

struct RunOptions {
  int warmup = 1;    ///< untimed runs first (caches, allocators, clocks)
  int repeats = 3;   ///< timed runs; reports give median, min and max
  uint64_t seed = 0; ///< fixes weights and inputs (params.hpp)
  std::optional<double> timeout_ms;  ///< a run longer than this fails, naming the op that was running
  int inter_op_threads = 0;  ///< cpu: workers running ops concurrently; 0 = one per device
  int intra_op_threads = 0;  ///< cpu: threads inside one op's kernel; 0 = cores / devices
  bool want_output = true;   ///< gather the network output into RunResult::output
  /// sim: per-op lognormal noise on compute times (sim/costs/op_jitter.hpp), 0 for
  /// none; with it, each of `repeats` runs draws its own (`--jitter`).
  double jitter_sigma = 0;
  /// cpu: one device held back at the start of every run (`--straggler`).
  std::optional<StragglerDelay> straggler;
  /// Called before each run (warm-up runs have index < 0); for progress output.
  std::function<void(int index, int repeats)> on_repeat;
};

/// A plan set up once (buffers, weights, compiled program) that can be run
/// again and again, so that the repeats of several plans can be interleaved
/// (ABAB..., not AAA then BBB: a machine whose load changes during a
/// comparison then slows every plan alike).
class PreparedRun {
 public:
  virtual ~PreparedRun() = default;
  /// Runs `warmup` untimed runs, then `repeats` timed ones, appending their
  /// timelines to `into.timelines` (and setting `into.info`).
  virtual void run(int warmup, int repeats, RunResult& into) = 0;
  /// The network output of the last run (RunOptions::want_output).
  virtual HostTensor output() = 0;
};

class Executor {
 public:
  virtual ~Executor() = default;
  /// "cpu", "cuda", "sim"
  virtual std::string_view name() const = 0;
  /// Why this backend cannot run `op` of `plan` (e.g. it has no kernel for
  /// the op's kind); empty when it can. Consulted for every op before a run
  /// (require_supported), so that a plan is refused before it starts.
  virtual std::string unsupported(const Plan& plan, const PlanOp& op) const {
    (void)plan;
    (void)op;
    return {};
  }
  /// Refuses (InputError, naming what to change) `plans` that this backend
  /// could not hold prepared at once in the memory free now, so that a
  /// command running many plans in turn says so before its first run rather
  /// than minutes in; backends that check nothing up front accept them.
  virtual void check_fit_together(std::span<const Plan* const> plans) const { (void)plans; }
  /// Whether run() takes `plan` as it is when it holds its replicas once
  /// (Plan::replicas), its timelines then replica 0's (timeline.hpp).
  /// Backends that run every op say no (the default): callers give them
  /// expand_replicas()'s plan (src/plan/plan_replicas.hpp).
  virtual bool runs_replicas_once(const Plan& plan, const RunOptions& options) const {
    (void)plan;
    (void)options;
    return false;
  }
  /// Runs the plan `options.warmup` times untimed, then `options.repeats` times timed.
  virtual RunResult run(const Plan& plan, const RunOptions& options) = 0;
  /// Sets the plan up to be run many times (`plan` must outlive the result);
  /// null where this backend has no setup worth keeping between runs, or
  /// cannot keep it (callers then call run()).
  virtual std::unique_ptr<PreparedRun> prepare(const Plan& plan, const RunOptions& options) {
    (void)plan;
    (void)options;
    return nullptr;
  }
};

/// Executor::run() of a backend whose every run goes through prepare():
/// prepares `plan`, runs the warm-up and timed runs, and gathers the output
/// where `options.want_output` asks for it.
RunResult run_prepared(Executor& executor, const Plan& plan, const RunOptions& options);
/// The same on a plan already prepared: its warm-up and timed runs, and the
/// output where `options.want_output` asks for it.
RunResult run_prepared(PreparedRun& prepared, const RunOptions& options);

/// Refuses (UnavailableError, exit 3) a plan with an op `executor` cannot
/// run, naming the op and what to use instead.
void require_supported(const Executor& executor, const Plan& plan);

}  // namespace splitscope
