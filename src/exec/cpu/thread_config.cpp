#include "exec/cpu/thread_config.hpp"

#include <algorithm>
#include <fmt/format.h>

#include "util/errors.hpp"

namespace splitscope {

ThreadConfig resolve_threads(const RunOptions& options, int devices, int hardware_threads) {
  if (options.inter_op_threads < 0) {
    throw InputError("--inter-op-threads", "",
                     fmt::format("{} is negative; give a count of threads, or 0 for one per device",
                                 options.inter_op_threads));
  }
  if (options.intra_op_threads < 0) {
    throw InputError("--intra-op-threads", "",
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
  // Far past the cores, a run measures the OS scheduler rather than the plan, and
  // tens of thousands of threads exhaust the machine's process limit.
  const int64_t most = std::max<int64_t>(256, int64_t{16} * config.hardware_threads);
  const int64_t threads = int64_t{config.inter_op} * config.intra_op;
  if (threads > most) {
    throw InputError(options.intra_op_threads > 0 ? "--intra-op-threads" : "--devices", "",
                     fmt::format("{} inter-op workers × {} intra-op threads = {} threads, more than this machine's "
                                 "{} hardware threads can run sensibly (at most {}); give fewer",
                                 config.inter_op, config.intra_op, threads, config.hardware_threads, most));
  }
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
