#include "cli/input_pipeline_options.hpp"

#include "util/errors.hpp"

namespace splitscope::cli {

void add_input_pipeline_options(CLI::App& command, InputPipelineOptions& options) {
  const auto enable = [&options](const auto&) { options.enabled = true; };
  command
      .add_option("--input-cost-us-per-sample", options.cost_us_per_sample,
                  "stream the batches through an input pipeline whose host preparation costs this many "
                  "microseconds a sample (docs/input-pipeline.md)")
      ->each(enable);
  command
      .add_option("--prefetch", options.prefetch,
                  "input pipeline: batches prepared and copied ahead while a step computes (0: none)")
      ->each(enable);
}

void check_input_pipeline_options(const InputPipelineOptions& options, const TrainingOptions& training) {
  if (!options.enabled) return;
  check_input_pipeline_options(options);
  if (training.train) {
    throw InputError("--prefetch", "",
                     "an input pipeline feeds forward runs only; training steps read the plan's own seeded inputs "
                     "(drop --train, or --prefetch and --input-cost-us-per-sample)");
  }
}

}  // namespace splitscope::cli
