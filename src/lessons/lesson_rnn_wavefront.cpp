// Claim 4: a deep RNN split one group of layers per device forms a wavefront
// over time steps: device k starts step t once device k-1 has finished it,
// so all devices are busy once the wavefront fills. Ideal speedup over one
// device: N·T / (T + N - 1) for N devices and T steps. It flips at the
// sequence length from which the wavefront fills: with fewer steps than
// devices, at most T devices ever work at once (closed form: T = N).

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "demo/wavefront.hpp"
#include "ir/lower.hpp"
#include "ir/model_parser.hpp"
#include "ir/zoo.hpp"
#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "lessons/margins.hpp"
#include "lessons/measured_check.hpp"
#include "sim/machine/machine_file.hpp"
#include "util/json_text.hpp"

namespace splitscope {
namespace {

constexpr int kWavefrontDevices = 4;

/// The zoo's lstm over `steps` time steps (its own: 32).
std::shared_ptr<const Graph> lstm_over_steps(int steps) {
  nlohmann::json doc = nlohmann::json::parse(read_input_file(resolve_zoo_file(ZooShelf::kNetworks, "lstm")));
  doc["input"][0] = steps;
  return std::make_shared<const Graph>(lower(parse_model_text(doc.dump(), "lesson 4")));
}

/// The most devices computing cells at once in the wavefront over `steps`.
int wavefront_peak_busy(const Machine& machine, int steps) {
  const Trial split = simulate_trial(lstm_over_steps(steps), "horizontal", kWavefrontDevices, machine);
  return analyse_wavefront(*split.plan, split.timeline).peak_busy;
}

}  // namespace

LessonResult lesson_rnn_wavefront(const LessonSettings& settings) {
  const std::string machine_name = settings.machine.empty() ? "h100-nvlink-8" : settings.machine;
  const Machine machine = load_machine(machine_name);
  constexpr int kDevices = kWavefrontDevices;
  constexpr int kSteps = 32;  // the zoo's lstm: 8 layers over 32 steps
  const auto graph = lesson_graph("lstm", false);
  const Trial single = simulate_trial(graph, "single", 1, machine);
  const Trial split = simulate_trial(graph, "horizontal", kDevices, machine);
  const double speedup = single.makespan_us / split.makespan_us;
  const double ideal = double(kDevices) * kSteps / (kSteps + kDevices - 1);
  const Wavefront wavefront = analyse_wavefront(*split.plan, split.timeline);

  LessonResult result;
  result.setup = fmt::format("lstm (8 layers of 1024, 32 steps), 2 layers per device on {} devices of {}, forward",
                             kDevices, machine_name);
  result.verdict = speedup >= kGainMargin ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
  result.why = fmt::format(
      "the wavefront runs at {:.2f}x against the ideal {}·{}/({}+{}-1) = {:.2f}x; devices idle {:.0f}% (the fill and "
      "drain, and the hand-offs)",
      speedup, kDevices, kSteps, kSteps, kDevices, ideal, split.summary.shares.idle * 100);
  result.numbers = {{"single_ms", single.makespan_us / 1e3},
                    {"wavefront_ms", split.makespan_us / 1e3},
                    {"speedup", speedup},
                    {"ideal_speedup", ideal},
                    {"idle_share", split.summary.shares.idle},
                    {"peak_busy_devices", wavefront.peak_busy},
                    {"steady_occupancy", wavefront.steady_occupancy}};
  FlipSearch search;
  search.parameter = "time steps";
  search.low = 1;
  search.high = 64;
  search.integer = true;
  search.quantity = "devices busy at once (the most)";
  search.threshold = kDevices;
  search.meaning = fmt::format("from this sequence length up, the wavefront fills: all {} devices compute at once",
                               kDevices);
  search.samples = 7;
  result.flip = find_flip_point(search, [&](double steps) {
    return double(wavefront_peak_busy(machine, static_cast<int>(steps)));
  });
  result.figures.bars.push_back({"one pass", "ms", {{"single", single.makespan_us / 1e3},
                                                    {"the wavefront", split.makespan_us / 1e3}}});
  result.figures.timelines.push_back(split.figure(fmt::format("the wavefront on {} devices", kDevices)));
  if (settings.measure) {
    result.measured = measured_lesson("lstm at hidden 256 (8 layers, 32 steps), batch 16, forward",
                                      measured_graph("lstm", 1024, 256, 16, false), "single", "horizontal", 2, [](const MeasuredPair& pair) {
      return pair.speedup() >= kGainMargin ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
    });
  }
  return result;
}

}  // namespace splitscope
