// Claim 2: slicing every fully connected layer across devices (`vertical`)
// is cancelled by the communication it needs, the more so on slow links and
// across machines. It flips at the link bandwidth where the split pays.

#include <fmt/format.h>

#include "lessons/experiment.hpp"
#include "lessons/lesson_list.hpp"
#include "lessons/margins.hpp"
#include "lessons/measured_check.hpp"
#include "sim/machine/machine_file.hpp"

namespace splitscope {

LessonResult lesson_sliced_layers(const LessonSettings& settings) {
  // Slow links by default: PCIe through the host, where the claim is meant.
  const std::string machine_name = settings.machine.empty() ? "h100-pcie-4" : settings.machine;
  const Machine machine = load_machine(machine_name);
  constexpr int kDevices = 4;
  const auto graph = lesson_graph("mlp", false);
  const Trial single = simulate_trial(graph, "single", 1, machine);
  const Trial sliced = simulate_trial(graph, "vertical", kDevices, machine);
  const double speedup = single.makespan_us / sliced.makespan_us;
  // The same split on fast links (NVLink) and across two nodes (InfiniBand).
  const Machine nvlink = load_machine("h100-nvlink-8");
  const double nvlink_speedup =
      simulate_trial(graph, "single", 1, nvlink).makespan_us / simulate_trial(graph, "vertical", kDevices, nvlink).makespan_us;
  const Machine nodes = load_machine("2x8-h100-ib");
  const double across_speedup =
      simulate_trial(graph, "single", 1, nodes).makespan_us / simulate_trial(graph, "vertical", 16, nodes).makespan_us;

  LessonResult result;
  result.setup = fmt::format("mlp, vertical over {} devices of {}, forward; also h100-nvlink-8 (4) and 2x8-h100-ib (16)",
                             kDevices, machine_name);
  result.verdict = speedup < kGainMargin ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
  result.why = fmt::format(
      "moving {:.1f} MiB of activations takes {:.0f}% of the split's time, leaving {:.2f}x of the 4-way split of the work",
      static_cast<double>(sliced.summary.transfers.bytes) / (1 << 20), sliced.summary.shares.transfer * 100, speedup);
  result.numbers = {{"single_ms", single.makespan_us / 1e3},
                    {"vertical_ms", sliced.makespan_us / 1e3},
                    {"speedup", speedup},
                    {"transfer_share", sliced.summary.shares.transfer},
                    {"bytes_moved", sliced.summary.transfers.bytes},
                    {"speedup_on_nvlink", nvlink_speedup},
                    {"speedup_across_two_nodes_16_devices", across_speedup}};
  FlipSearch search;
  search.parameter = "link bandwidth";
  search.unit = "GB/s";
  search.low = 1;
  search.high = 100000;
  search.quantity = "vertical's speedup over single";
  search.threshold = kGainMargin;
  search.meaning = "at this link rate and above, the vertical split gains 5% or more";
  result.flip = find_flip_point(
      search, [&](double gbps) { return speedup_at_bandwidth(graph, "vertical", kDevices, machine, gbps); });
  result.figures.bars.push_back({"vertical's speedup over single", "x",
                                 {{machine_name + ", 4 devices", speedup},
                                  {"h100-nvlink-8, 4 devices", nvlink_speedup},
                                  {"2x8-h100-ib, 16 devices", across_speedup}}});
  result.figures.timelines.push_back(sliced.figure(fmt::format("vertical on {} devices of {}", kDevices, machine_name)));
  if (settings.measure) {
    result.measured = measured_lesson("mlp at width 1024, batch 64, forward", measured_graph("mlp", 8192, 1024, 64, false),
                                      "single", "vertical", 2, [](const MeasuredPair& pair) {
      return pair.speedup() < kGainMargin ? LessonVerdict::kHolds : LessonVerdict::kDoesNotHold;
    });
  }
  return result;
}

}  // namespace splitscope
