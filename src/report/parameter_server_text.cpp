#include "report/parameter_server_text.hpp"

#include <fmt/format.h>

#include "report/text_table.hpp"

namespace splitscope {

std::string parameter_server_lines(const RunInfo& info) {
  if (!info.parameter_server) return {};
  const ParameterServerInfo& ps = *info.parameter_server;
  std::string shards;
  for (int64_t bytes : ps.shard_bytes) shards += (shards.empty() ? "" : ", ") + binary_bytes(static_cast<double>(bytes));
  std::string text = fmt::format(
      "  parameter servers: {}{}, {} workers, {} shard{} ({}); {} updates\n", ps.mode,
      ps.mode == "spare" ? fmt::format(" {}", ps.spare) : "", ps.workers, ps.shards, ps.shards == 1 ? "" : "s", shards,
      ps.updates);
  text += fmt::format("  gradients (per shard, summed): {} pushed x {} shard(s), {} applied, {} dropped\n",
                      ps.gradients_pushed, ps.shards, ps.gradients_applied, ps.gradients_dropped);
  std::string histogram;
  for (size_t s = 0; s < ps.staleness_histogram.size(); ++s) {
    if (ps.staleness_histogram[s] > 0) histogram += fmt::format(" {}:{}", s, ps.staleness_histogram[s]);
  }
  text += fmt::format("  staleness: mean {:.3g}, max {}; histogram (staleness:count){}\n", ps.staleness_mean,
                      ps.staleness_max, histogram);
  text += fmt::format("  {:.4g} applied samples/s over {:.4g} s; async mitigations: {}\n", ps.applied_samples_per_s,
                      ps.wall_us * 1e-6, ps.mitigations);
  return text;
}

}  // namespace splitscope
