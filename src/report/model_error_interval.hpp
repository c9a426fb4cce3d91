#pragma once
/// \file
/// How sure a simulated speedup is, given the simulator's own error
/// (RunInfo::model_error: its ops are typically off by a relative e).
///
/// The two runs are priced by the same rules on the same GPU, so an error in
/// a family's rate moves both the same way; what it cannot move is the time
/// neither run spends computing (transfers, and the waiting they cause). So
/// every op time is taken off by one common factor 1 + ε, |ε| ≤ e = the
/// larger of the two runs' errors, and each makespan moves by ε times its
/// critical path's compute:
///
///   speedup(ε) = (T_baseline + ε · C_baseline) / (T_run + ε · C_run)
///
/// with T the median makespan and C the compute on the critical path. It is
/// monotonic in ε, so the interval is [speedup(±e)] in order. A split that
/// computes as much of its critical path as the baseline keeps its speedup
/// whatever e is; one that spends half of it moving data moves with e.
/// Transfer times carry no error of their own here (no measured link table
/// feeds the rules): the interval is the compute's share of the doubt.

#include <optional>

#include "report/run_summary.hpp"
#include "report/speedup_interval.hpp"

namespace splitscope {

/// e: the larger of the two runs' model errors; nullopt unless both runs
/// are timed simulations that carry one.
std::optional<double> shared_model_error(const RunSummary& run, const RunSummary& baseline);

/// [speedup(-e), speedup(+e)] in order; nullopt where shared_model_error() is.
std::optional<SpeedupInterval> model_error_interval(const RunSummary& run, const RunSummary& baseline);

}  // namespace splitscope
