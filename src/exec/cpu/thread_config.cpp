#include "exec/cpu/thread_config.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "util/errors.hpp"

namespace splitscope {

ThreadConfig resolve_threads(const RunOptions& options, int devices, int hardware_threads) {
  if (options.inter_op_threads < 0) {
    throw InputError("option", "--inter-op-threads",
                     fmt::format("{} is negative; give a count of threads, or 0 for one per device",
                                 options.inter_op_threads));
  }
  if (options.intra_op_threads < 0) {
    throw InputError("option", "--intra-op-threads",
                     fmt::format("{} is negative; give a count of threads, or 0 for hardware threads / inter-op threads",
                                 options.intra_op_threads));
  }
  ThreadConfig config;
  config.hardware_threads = std::max(1, hardware_threads);
  devices = std::max(1, devices);
  config.inter_op = options.inter_op_threads == 0 ? devices : std::min(options.inter_op_threads, devices);
  config.inter_op_capped = options.inter_op_threads > devices;
  config.intra_op = options.intra_op_threads > 0 ? options.intra_op_threads
                                                 : std::max(1, config.hardware_threads / config.inter_op);
  return config;
}

std::string describe_inter_op(const ThreadConfig& config, const RunOptions& options) {
  if (options.inter_op_threads == 0) return fmt::format("{} (one per device)", config.inter_op);
  if (config.inter_op_capped) {
    return fmt::format("{} (capped: {} asked for, but a device runs one op at a time)", config.inter_op,
                       options.inter_op_threads);
  }
  return std::to_string(config.inter_op);
}

}  // namespace splitscope
