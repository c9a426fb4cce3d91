// Claim 9: past some number of devices, adding one more slows training: the
// all-reduce's bandwidth saturates while each device's share of the work
// shrinks. The flip is the device count where throughput peaks.

#include <fmt/format.h>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope {

LessonResult lesson_saturation(const LessonSettings& settings) {
  // Several nodes by default: the all-reduce crosses InfiniBand past 8 devices.
  const std::string machine_name = settings.machine.empty() ? "8x8-h100-ib" : settings.machine;
  const Machine machine = load_machine(machine_name);
  constexpr int64_t kBatch = 256;
  const auto graph = lesson_graph("cnn", true, kBatch);
  nlohmann::ordered_json curve = nlohmann::ordered_json::array();
  int best_devices = 1;
  double best_rate = 0;
  int last = 1;
  for (int devices = 1; devices <= machine.devices; devices *= 2) {
    const double us = simulate_trial(graph, devices == 1 ? "single" : "data", devices, machine).makespan_us;
    const double rate = kBatch / (us * 1e-6);
    curve.push_back({{"devices", devices}, {"step_ms", us / 1e3}, {"samples_per_s", rate}});
    if (rate > best_rate) {
      best_rate = rate;
      best_devices = devices;
    }
    last = devices;
  }

  LessonResult result;
  result.setup = fmt::format("cnn (AlexNet) training, global batch {}, data-parallel over 1-{} devices of {}", kBatch,
                             last, machine_name);
  result.verdict = best_devices < last ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
  result.why = best_devices < last
                   ? fmt::format("throughput peaks at {} devices ({:.0f} samples/s); past it the all-reduce of "
                                 "AlexNet's 61 M weights costs more, across more nodes, while each device's share of "
                                 "the batch shrinks",
                                 best_devices, best_rate)
                   : fmt::format("throughput still grows at {} devices, the most this machine has", last);
  result.numbers = {{"curve", curve}, {"peak_devices", best_devices}, {"peak_samples_per_s", best_rate}};
  FlipPoint flip;
  flip.parameter = "devices";
  flip.low = 1;
  flip.high = double(last);
  if (best_devices < last) flip.value = best_devices;
  flip.meaning = "the device count of the highest throughput; one more doubling slows training";
  flip.quantity = "samples/s";
  for (const auto& point : curve) {
    flip.curve.emplace_back(point["devices"].get<double>(), point["samples_per_s"].get<double>());
  }
  result.flip = flip;
  return result;
}

}  // namespace splitscope
