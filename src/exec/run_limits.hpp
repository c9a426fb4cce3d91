#pragma once
/// \file
/// How much a run may keep: every timed repeat, training step or parameter
/// server's worker step records a span per op of its plan (timeline.hpp,
/// about 100 bytes each). A command whose runs would record more than
/// kMaxRecordedSpans is refused before the first one starts (InputError,
/// exit 2, naming the option and the most it may ask for), rather than
/// growing until the machine runs out of memory. docs/limits.md lists every
/// limit.

#include <cstdint>
#include <string>

#include "plan/plan.hpp"

namespace splitscope {

/// 2^22 spans: about 1.5 GB of timelines at the 350-360 bytes a recorded
/// span takes with its label and the run's bookkeeping (measured: 100,000
/// jittered repeats of a 12-op plan, 427 MB peak), 4 times what the zoo's
/// largest plan (resnet50 over 8 devices, training) records in 100 steps.
/// (It was 2^24 on an estimate of 100 bytes a span: 6 GB, issue 54.)
inline constexpr int64_t kMaxRecordedSpans = int64_t{1} << 22;

/// InputError naming `option` ("--steps", "--repeat") when `runs` runs of
/// `plan`, each recording `per_op` spans per plan op (a parameter server's
/// workers: one per worker) and `extra_per_run` more (an input stream's
/// preparation, copies and step marker), would record more than
/// kMaxRecordedSpans.
void check_recorded_runs(const Plan& plan, int64_t runs, const std::string& option, int64_t per_op = 1,
                         int64_t extra_per_run = 0);

}  // namespace splitscope
