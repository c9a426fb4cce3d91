// Claim 4: a deep RNN split one group of layers per device forms a wavefront
// over time steps: device k starts step t once device k-1 has finished it,
// so all devices are busy once the wavefront fills. Ideal speedup over one
// device: N·T / (T + N - 1) for N devices and T steps.

#include <fmt/format.h>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "lessons/margins.hpp"
#include "sim/machine_file.hpp"

namespace splitscope {

LessonResult lesson_rnn_wavefront(const LessonSettings& settings) {
  const std::string machine_name = settings.machine.empty() ? "h100-nvlink-8" : settings.machine;
  const Machine machine = load_machine(machine_name);
  constexpr int kDevices = 4;
  constexpr int kSteps = 32;  // the zoo's lstm: 8 layers over 32 steps
  const auto graph = lesson_graph("lstm", false);
  const Trial single = simulate_trial(graph, "single", 1, machine);
  const Trial split = simulate_trial(graph, "horizontal", kDevices, machine);
  const double speedup = single.makespan_us / split.makespan_us;
  const double ideal = double(kDevices) * kSteps / (kSteps + kDevices - 1);

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
                    {"idle_share", split.summary.shares.idle}};
  return result;
}

}  // namespace splitscope
