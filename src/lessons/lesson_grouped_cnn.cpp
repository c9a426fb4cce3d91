// Claim 3: a partially connected (grouped) CNN splits cleanly across
// devices: each device keeps its groups' channels and data crosses only
// where the groups meet. It flips at the link bandwidth below which the
// few crossings cost more than the split saves.

#include <fmt/format.h>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "lessons/margins.hpp"
#include "lessons/measured_check.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope {

LessonResult lesson_grouped_cnn(const LessonSettings& settings) {
  const std::string machine_name = settings.machine.empty() ? "h100-nvlink-8" : settings.machine;
  const Machine machine = load_machine(machine_name);
  constexpr int kDevices = 2;
  const auto graph = lesson_graph("cnn", false);
  const Trial single = simulate_trial(graph, "single", 1, machine);
  const Trial split = simulate_trial(graph, "vertical", kDevices, machine);
  const double speedup = single.makespan_us / split.makespan_us;

  LessonResult result;
  result.setup = fmt::format("cnn (AlexNet, conv2/4/5 in 2 groups), vertical over {} devices of {}, forward",
                             kDevices, machine_name);
  result.verdict = speedup >= kGainMargin ? LessonVerdict::kHolds
                   : speedup > 1 - kUncertainMargin ? LessonVerdict::kUncertain
                                                    : LessonVerdict::kDoesNotHold;
  result.why = fmt::format("the channel split moves {:.1f} MiB ({:.0f}% of its time) and runs at {:.2f}x",
                           static_cast<double>(split.summary.transfers.bytes) / (1 << 20),
                           split.summary.shares.transfer * 100, speedup);
  result.numbers = {{"single_ms", single.makespan_us / 1e3},
                    {"split_ms", split.makespan_us / 1e3},
                    {"speedup", speedup},
                    {"transfer_share", split.summary.shares.transfer},
                    {"bytes_moved", split.summary.transfers.bytes}};
  FlipSearch search;
  search.parameter = "link bandwidth";
  search.unit = "GB/s";
  search.low = 0.1;
  search.high = 100000;
  search.quantity = "vertical's speedup over single";
  search.threshold = kGainMargin;
  search.meaning = "below this link rate the grouped split no longer gains 5%";
  result.flip = find_flip_point(
      search, [&](double gbps) { return speedup_at_bandwidth(graph, "vertical", kDevices, machine, gbps); });
  result.figures.bars.push_back(
      {"one pass", "ms", {{"single", single.makespan_us / 1e3}, {"channel groups split", split.makespan_us / 1e3}}});
  result.figures.timelines.push_back(split.figure(fmt::format("vertical on {} devices", kDevices)));
  if (settings.measure) {
    result.measured = measured_lesson("cnn (AlexNet) at batch 2, forward", measured_graph("cnn", 0, 0, 2, false),
                                      "single", "vertical", 2, [](const MeasuredPair& pair) {
      return pair.speedup() >= kGainMargin           ? LessonVerdict::kHolds
             : pair.speedup() > 1 - kUncertainMargin ? LessonVerdict::kUncertain
                                                     : LessonVerdict::kDoesNotHold;
    });
  }
  return result;
}

}  // namespace splitscope
