#include "exec/run_limits.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "util/errors.hpp"

namespace splitscope {

void check_recorded_runs(const Plan& plan, int64_t runs, const std::string& option, int64_t per_op,
                         int64_t extra_per_run) {
  const int64_t per_run =
      std::max<int64_t>(1, static_cast<int64_t>(plan.ops.size()) * std::max<int64_t>(1, per_op) +
                               std::max<int64_t>(0, extra_per_run));
  if (runs <= kMaxRecordedSpans / per_run) return;
  const std::string unit = option == "--steps" ? "steps" : "runs";
  throw InputError(option, "",
                   fmt::format("{} {} of a plan of {} ops{}{} would record {:.3g} op spans, past the limit of {} "
                               "(docs/limits.md); give at most {}",
                               runs, unit, plan.ops.size(), per_op > 1 ? fmt::format(" on {} workers", per_op) : "",
                               extra_per_run > 0 ? fmt::format(" and {} input-stream spans a step", extra_per_run) : "",
                               static_cast<double>(runs) * static_cast<double>(per_run), kMaxRecordedSpans,
                               std::max<int64_t>(1, kMaxRecordedSpans / per_run)));
}

}  // namespace splitscope
