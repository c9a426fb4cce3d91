#pragma once
/// \file
/// What `compare` and `run` print on the terminal: plain text that reads the
/// same piped to a file (no colour, ASCII only).

#include <string>

#include "report/comparison.hpp"
#include "report/run_report.hpp"

namespace splitscope {

/// One table per group, best first: strategy, makespan (median ± spread),
/// speedup, compute / transfer / idle shares, bytes moved, peak memory per
/// device, verdict and reason. The primary group's table also shows, beside
/// each strategy, the prediction of every other group (the simulator on its
/// machine). Runs that do not fit say so in place of their times.
std::string compare_text(const Comparison& comparison);

/// `run`'s report of one run: makespan statistics, a per-device table,
/// data movement by kind (with algbw/busbw), the critical path, the pipeline
/// bubble, and the verdict with its reason.
std::string run_text(const RunReport& run);

}  // namespace splitscope
