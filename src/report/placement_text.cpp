#include "report/placement_text.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/text_table.hpp"
#include "report/units.hpp"

namespace splitscope {
namespace {

bool by_topology(const RunSummary& summary) { return summary.info.placement.mode == "topology"; }

std::string makespan_or_dash(const std::optional<double>& us) { return us ? format_ms(*us / 1000.0) : "-"; }

std::string placed_makespan(const RunSummary& summary) {
  if (!summary.fits()) return "does not fit";
  return summary.timed() ? format_ms(summary.makespan->median_ms) : "-";
}

}  // namespace

std::string device_map_text(const std::vector<int>& device_map) {
  bool identity = true;
  for (size_t d = 0; d < device_map.size(); ++d) identity = identity && device_map[d] == static_cast<int>(d);
  if (identity) return "default";
  std::string text;
  for (size_t first = 0; first < device_map.size();) {
    size_t last = first;
    while (last + 1 < device_map.size() && device_map[last + 1] == device_map[last] + 1) ++last;
    text += text.empty() ? "" : ",";
    text += last == first ? fmt::format("{}", device_map[first])
                          : fmt::format("{}-{}", device_map[first], device_map[last]);
    first = last + 1;
  }
  return text;
}

std::string placement_lines(const RunSummary& summary) {
  if (!by_topology(summary)) return {};
  const PlacementInfo& placement = summary.info.placement;
  std::string text = fmt::format("placement: topology, machine device of each plan device: {}\n",
                                 device_map_text(placement.device_map));
  text += fmt::format("  across nodes: {} (default mapping {}); makespan {} (default mapping {})\n",
                      binary_bytes(double(placement.cross_node_bytes)),
                      binary_bytes(double(placement.default_cross_node_bytes.value_or(0))),
                      placed_makespan(summary), makespan_or_dash(placement.default_makespan_us));
  if (!placement.note.empty()) text += fmt::format("  {}\n", placement.note);
  return text;
}

std::string placement_table(const RunGroup& group) {
  if (std::none_of(group.runs.begin(), group.runs.end(),
                   [](const RunReport& run) { return by_topology(run.summary); })) {
    return {};
  }
  using Align = TextTable::Align;
  TextTable table({"strategy", "across nodes", "default mapping", "makespan", "default mapping", "device map"},
                  {Align::kLeft, Align::kRight, Align::kRight, Align::kRight, Align::kRight, Align::kLeft});
  for (const RunReport& run : group.runs) {
    const PlacementInfo& placement = run.summary.info.placement;
    table.add_row({run.summary.strategy, binary_bytes(double(placement.cross_node_bytes)),
                   binary_bytes(double(placement.default_cross_node_bytes.value_or(placement.cross_node_bytes))),
                   placed_makespan(run.summary), makespan_or_dash(placement.default_makespan_us),
                   device_map_text(placement.device_map)});
  }
  return fmt::format("\nplacement topology on {}: bytes across nodes and makespan, against plan device i on "
                     "machine device i\n\n{}",
                     group.machine, table.render());
}

}  // namespace splitscope
