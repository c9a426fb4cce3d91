#include "plan/parameter_shards.hpp"

#include <algorithm>
#include <numeric>

namespace splitscope {

std::vector<int64_t> greedy_shards(const std::vector<int64_t>& bytes, int shards, std::vector<int>& shard_of) {
  std::vector<int64_t> load(static_cast<size_t>(std::max(shards, 1)), 0);
  std::vector<size_t> order(bytes.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Largest first; ties in plan order, so the placement is the same on every run.
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return bytes[a] > bytes[b]; });
  shard_of.assign(bytes.size(), 0);
  for (size_t index : order) {
    const auto lightest = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    shard_of[index] = static_cast<int>(lightest);
    load[lightest] += bytes[index];
  }
  return load;
}

std::vector<int> parameter_shards(const Plan& plan, int worker) {
  std::vector<int64_t> bytes;
  for (int id : plan.parameters) {
    if (plan.value(id).device == worker) bytes.push_back(plan.value(id).bytes);
  }
  std::vector<int> shard_of;
  greedy_shards(bytes, plan.parameter_servers, shard_of);
  return shard_of;
}

}  // namespace splitscope
