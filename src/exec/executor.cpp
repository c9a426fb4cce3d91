#include "exec/executor.hpp"

#include <fmt/format.h>

#include "exec/run_limits.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"

namespace splitscope {

RunResult run_prepared(Executor& executor, const Plan& plan, const RunOptions& options) {
  check_recorded_runs(plan, options.repeats, "--repeat");  // a timeline each
  const std::unique_ptr<PreparedRun> prepared = executor.prepare(plan, options);
  SPLITSCOPE_CHECK(prepared != nullptr, std::string(executor.name()) + " prepares every run");
  return run_prepared(*prepared, options);
}

RunResult run_prepared(PreparedRun& prepared, const RunOptions& options) {
  RunResult result;
  prepared.run(options.warmup, options.repeats, result);
  if (options.want_output) result.output = prepared.output();
  return result;
}

}  // namespace splitscope
