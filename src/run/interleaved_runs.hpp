#pragma once
/// \file
/// How several plans are timed together (`compare`, `validate`): the baseline's repeats interleaved with
/// each split's (ABAB..., not AAA then BBB), so that a machine whose load
/// changes during the comparison slows the baseline and the split alike and
/// the speedup stays honest (pyperf and hyperfine interleave for the same
/// reason). The baseline runs beside every split, so it gets `repeats`
/// timed runs per split; each split gets `repeats`. Backends that cannot keep
/// a plan set up between runs (Executor::prepare() gives null) run each plan
/// whole, one after the other, as before.

#include <chrono>
#include <memory>
#include <vector>

#include "exec/executor.hpp"
#include "plan/plan.hpp"
#include "report/progress.hpp"

namespace splitscope {

/// How many timed runs each split gets beside the baseline. Adaptive: at
/// least `options.repeats`, then one more pair at a time while the speedup's
/// interval (speedup_interval.hpp) straddles a verdict threshold, until
/// `most` pairs or `budget` of running that split (hyperfine and pyperf
/// likewise run until the estimate is stable or a time budget is spent).
struct RepeatPolicy {
  bool adaptive = false;
  int most = 15;
  std::chrono::milliseconds budget{5000};
};

/// Refuses (InputError) `plans` (the baseline first) whose runs would not fit
/// as run_interleaved() holds them, the baseline beside each split in turn;
/// run_interleaved() calls it before its first run, and a command that times
/// many groups calls it on every group before it times the first.
void check_interleaved_fit(const Executor& executor, const std::vector<std::shared_ptr<const Plan>>& plans);

/// The results of `plans` (the baseline first) on `executor`, in `plans` order.
std::vector<RunResult> run_interleaved(Executor& executor, const std::vector<std::shared_ptr<const Plan>>& plans,
                                       const RunOptions& options, Progress& progress, RepeatPolicy policy = {});

}  // namespace splitscope
