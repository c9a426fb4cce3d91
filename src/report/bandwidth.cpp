#include "report/bandwidth.hpp"

namespace splitscope {

double all_reduce_bus_factor(int ranks) {
  return ranks > 0 ? 2.0 * (ranks - 1) / ranks : 0.0;
}

double all_gather_bus_factor(int ranks) {
  return ranks > 0 ? static_cast<double>(ranks - 1) / ranks : 0.0;
}

double concat_bus_factor(int ranks) { return all_gather_bus_factor(ranks); }

double bus_factor(CollectiveKind kind, int ranks) {
  switch (kind) {
    case CollectiveKind::kAllReduce: return all_reduce_bus_factor(ranks);
    case CollectiveKind::kAllGather: return all_gather_bus_factor(ranks);
    case CollectiveKind::kConcat: return concat_bus_factor(ranks);
    // nccl-tests doc/PERFORMANCE.md: reduce-scatter as all-gather, broadcast 1.
    case CollectiveKind::kReduceScatter: return all_gather_bus_factor(ranks);
    case CollectiveKind::kBroadcast: return 1.0;
  }
  return 1.0;
}

double gigabytes_per_second(int64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

}  // namespace splitscope
