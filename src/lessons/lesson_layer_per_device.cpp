// Claim 1: a fully connected network gains nothing from placing each layer
// on a different device: each layer waits on the one before it. It flips
// once the batch is cut into micro-batches that fill the pipeline.

#include <fmt/format.h>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "lessons/margins.hpp"
#include "lessons/measured_check.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope {

LessonResult lesson_layer_per_device(const LessonSettings& settings) {
  const std::string machine_name = settings.machine.empty() ? "h100-nvlink-8" : settings.machine;
  const Machine machine = load_machine(machine_name);
  constexpr int kDevices = 4;
  const auto graph = lesson_graph("mlp", false);
  const Trial single = simulate_trial(graph, "single", 1, machine);
  const Trial layers = simulate_trial(graph, "horizontal", kDevices, machine);
  const double speedup = single.makespan_us / layers.makespan_us;

  LessonResult result;
  result.setup = fmt::format("mlp (8 dense layers of 8192), {} devices of {}, forward", kDevices, machine_name);
  result.verdict = speedup < kGainMargin ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
  result.why = fmt::format(
      "each device idles {:.0f}% of the run waiting on the layers before its own, so the split runs at {:.2f}x",
      layers.summary.shares.idle * 100, speedup);
  result.numbers = {{"single_ms", single.makespan_us / 1e3},
                    {"layer_split_ms", layers.makespan_us / 1e3},
                    {"speedup", speedup},
                    {"idle_share", layers.summary.shares.idle}};
  const auto pipeline_speedup = [&](double microbatches) {
    return single.makespan_us /
           simulate_trial(graph, "pipeline", kDevices, machine, static_cast<int>(microbatches)).makespan_us;
  };
  FlipSearch search;
  search.parameter = "micro-batches";
  search.low = 1;
  search.high = 64;
  search.integer = true;
  search.quantity = "pipeline's speedup over single";
  search.threshold = kGainMargin;
  search.meaning = fmt::format("the layer split, pipelined over this many micro-batches, gains {:.0f}% or more",
                               (kGainMargin - 1) * 100);
  result.flip = find_flip_point(search, pipeline_speedup);
  result.figures.bars.push_back({"one pass", "ms", {{"single", single.makespan_us / 1e3},
                                                    {"a layer per device", layers.makespan_us / 1e3}}});
  result.figures.timelines.push_back(layers.figure(fmt::format("a layer per device, {} devices", kDevices)));
  if (settings.measure) {
    result.measured = measured_lesson("mlp at width 1024, batch 64, forward", measured_graph("mlp", 8192, 1024, 64, false),
                                      "single", "horizontal", 2, [](const MeasuredPair& pair) {
      return pair.speedup() < kGainMargin ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
    });
  }
  return result;
}

}  // namespace splitscope
