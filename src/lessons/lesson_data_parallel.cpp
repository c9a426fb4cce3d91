// Claim 6: data parallelism with mirrored weights and an all-reduce of the
// gradients is efficient on one machine. Efficient here: a training step on
// N devices at least kEfficientScaling·N times as fast as on one (the same
// global batch, each device a 1/N share). It flips at the batch below which
// the all-reduce, whose size the batch does not shrink, dominates.

#include <fmt/format.h>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "lessons/margins.hpp"
#include "lessons/measured_check.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope {
namespace {

double scaling_efficiency(const Machine& machine, int devices, int64_t batch) {
  const auto graph = lesson_graph("cnn", true, batch);
  const double one = simulate_trial(graph, "single", 1, machine).makespan_us;
  const double many = simulate_trial(graph, "data", devices, machine).makespan_us;
  return one / many / devices;
}

}  // namespace

LessonResult lesson_data_parallel(const LessonSettings& settings) {
  const std::string machine_name = settings.machine.empty() ? "h100-nvlink-8" : settings.machine;
  const Machine machine = load_machine(machine_name);
  constexpr int kDevices = 8;
  constexpr int64_t kBatch = 512;  // 64 a device, AlexNet's own batch per GPU
  const auto graph = lesson_graph("cnn", true, kBatch);
  const Trial single = simulate_trial(graph, "single", 1, machine);
  const Trial data = simulate_trial(graph, "data", kDevices, machine);
  const double speedup = single.makespan_us / data.makespan_us;
  const double efficiency = speedup / kDevices;

  LessonResult result;
  result.setup = fmt::format("cnn (AlexNet) training step, batch {}, data-parallel over {} devices of {}", kBatch,
                             kDevices, machine_name);
  result.verdict = efficiency >= kEfficientScaling ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
  result.why = fmt::format(
      "{:.2f}x on {} devices ({:.0f}% of linear): the gradients' all-reduces move {:.1f} MiB, exposed for {:.0f}% "
      "of the devices' time; their compute adds up to {:.1f} ms against one device's {:.1f} ms",
      speedup, kDevices, efficiency * 100, static_cast<double>(data.summary.transfers.bytes) / (1 << 20),
      data.summary.shares.transfer * 100, data.summary.total_compute_ms(), single.summary.total_compute_ms());
  result.numbers = {{"single_step_ms", single.makespan_us / 1e3},
                    {"data_parallel_step_ms", data.makespan_us / 1e3},
                    {"speedup", speedup},
                    {"efficiency", efficiency},
                    {"transfer_share", data.summary.shares.transfer},
                    {"single_compute_ms", single.summary.total_compute_ms()},
                    {"data_parallel_compute_ms", data.summary.total_compute_ms()}};
  FlipSearch search;
  search.parameter = "batch";
  search.unit = "samples";
  search.low = kDevices;
  search.high = 8192;
  search.integer = true;
  search.quantity = "share of linear speedup";
  search.threshold = kEfficientScaling;
  search.meaning =
      fmt::format("from this global batch up, data parallelism reaches {:.0f}% of linear", kEfficientScaling * 100);
  result.flip = find_flip_point(
      search, [&](double batch) { return scaling_efficiency(machine, kDevices, static_cast<int64_t>(batch)); });
  result.figures.bars.push_back({"training step", "ms", {{"single", single.makespan_us / 1e3},
                                                         {fmt::format("data, {} devices", kDevices),
                                                          data.makespan_us / 1e3}}});
  result.figures.timelines.push_back(data.figure(fmt::format("data-parallel step on {} devices", kDevices)));
  if (settings.measure) {
    result.measured = measured_lesson("cnn (AlexNet) training step at batch 4", measured_graph("cnn", 0, 0, 4, true),
                                      "single", "data", 2, [](const MeasuredPair& pair) {
      return pair.speedup() / 2 >= kEfficientScaling ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
    });
  }
  return result;
}

}  // namespace splitscope
