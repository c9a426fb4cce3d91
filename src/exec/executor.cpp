#include "exec/executor.hpp"

#include <fmt/format.h>

#include "util/errors.hpp"

namespace splitscope {

RunResult Executor::run_input_stream(const Plan& plan, const RunOptions& options, const InputPipelineOptions& input) {
  (void)plan;
  (void)options;
  (void)input;
  throw UnavailableError(fmt::format(
      "--prefetch and --input-cost-us-per-sample: the {} backend has no input pipeline yet; use --backend cpu "
      "(measured) or --backend sim (predicted)",
      name()));
}

}  // namespace splitscope
