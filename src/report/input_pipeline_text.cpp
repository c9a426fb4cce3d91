#include "report/input_pipeline_text.hpp"

#include <fmt/format.h>

#include "report/units.hpp"
#include "util/strings.hpp"

namespace splitscope {

std::optional<double> prefetch_speedup(const InputPipelineInfo& info) {
  if (info.step_us <= 0) return std::nullopt;
  return info.serial_step_us / info.step_us;
}

std::string describe_input_pipeline(const InputPipelineInfo& info) {
  const auto ms = [](double us) { return format_ms(us / 1000.0); };
  const std::string parts = fmt::format("a batch is prepared in {} and copied in {}; a step computes in {}",
                                        ms(info.prepare_us), ms(info.copy_us), ms(info.compute_us));
  const std::string overlap =
      info.prefetch == 0
          ? fmt::format("no prefetch: a step takes all three, {}", ms(info.step_us))
          : fmt::format("prefetch {}: a step takes {} against {} with nothing overlapped ({})", info.prefetch,
                        ms(info.step_us), ms(info.serial_step_us),
                        format_speedup(prefetch_speedup(info).value_or(1.0)));
  if (info.input_bound) {
    return fmt::format("input-bound: the compute waits {} a step for its batch ({}; {})", ms(info.stall_us), parts,
                       overlap);
  }
  return fmt::format("not input-bound ({}; {})", parts, overlap);
}

std::string input_pipeline_lines(const RunInfo& info) {
  if (!info.input_pipeline) return {};
  const InputPipelineInfo& pipeline = *info.input_pipeline;
  return fmt::format("input pipeline: {} us a sample, prefetch {}, {} timed after the first\n  {}\n",
                     pipeline.cost_us_per_sample, pipeline.prefetch, counted(pipeline.steps, "step"), describe_input_pipeline(pipeline));
}

std::string input_pipeline_table(const RunGroup& group) {
  std::string text;
  for (const RunReport& run : group.runs) {
    const RunInfo& info = run.summary.info;
    if (!info.input_pipeline) continue;
    if (text.empty()) {
      text = fmt::format("input pipeline: {} us a sample, prefetch {}\n", info.input_pipeline->cost_us_per_sample,
                         info.input_pipeline->prefetch);
    }
    text += fmt::format("  {}: {}\n", run.summary.strategy, describe_input_pipeline(*info.input_pipeline));
  }
  return text;
}

}  // namespace splitscope
