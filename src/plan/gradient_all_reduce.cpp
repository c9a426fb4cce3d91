#include "plan/gradient_all_reduce.hpp"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>

#include "plan/collective_schedule.hpp"
#include "util/check.hpp"

namespace splitscope {
namespace {

/// The op after which the gradient is complete on every replica.
int last_writer(const Plan& plan, const std::vector<int>& partials) {
  int last = -1;
  for (int id : partials) last = std::max(last, plan.value(id).producer);
  return last;
}

/// The all-reduce of one bucket: `slices` (each one weight slice's partial
/// gradients) as segments, participant-major. Returns each slice's sums in
/// its own partials' order.
std::vector<std::vector<int>> all_reduce_bucket(Plan& plan, const std::vector<const std::vector<int>*>& slices,
                                                int replicas = 1) {
  const std::vector<int>& lead = *slices.front();
  PlanOp op;
  op.role = OpRole::kCollective;
  op.collective = CollectiveKind::kAllReduce;
  op.algorithm = default_algorithm(op.collective);
  op.node = plan.value(lead.front()).node;
  op.device = -1;
  op.id = static_cast<int>(plan.ops.size());
  for (int id : lead) {
    const int device = plan.value(id).device;
    SPLITSCOPE_CHECK(std::find(op.participants.begin(), op.participants.end(), device) == op.participants.end(),
                     "two gradients of one weight slice on one device");
    op.participants.push_back(device);
  }
  const size_t n = op.participants.size();
  // partial[k][p]: slice k's gradient on participant p.
  std::vector<std::vector<int>> partial(slices.size(), std::vector<int>(n, -1));
  std::vector<Range> rows(slices.size());
  for (size_t k = 0; k < slices.size(); ++k) {
    const std::vector<int>& partials = *slices[k];
    const Value& first = plan.value(partials.front());
    SPLITSCOPE_CHECK(partials.size() == n, "the slices of a gradient bucket are on different devices");
    rows[k] = first.batch;
    for (int id : partials) {
      const Value& part = plan.value(id);
      SPLITSCOPE_CHECK(part.node == first.node && part.channels == first.channels && part.reduce == first.reduce,
                       "gradient all-reduce over different weight slices");
      const auto at = std::find(op.participants.begin(), op.participants.end(), part.device);
      SPLITSCOPE_CHECK(at != op.participants.end() && partial[k][static_cast<size_t>(at - op.participants.begin())] < 0,
                       "the slices of a gradient bucket are on different devices");
      partial[k][static_cast<size_t>(at - op.participants.begin())] = id;
      rows[k] = Range{std::min(rows[k].begin, part.batch.begin), std::max(rows[k].end, part.batch.end)};
    }
    if (replicas > 1) {
      rows[k] = Range{0, plan.graph->batch()};  // every replica's rows, replica 0's being held
    }
    SPLITSCOPE_CHECK(rows[k].size() == plan.graph->batch(),
                     "replicas' gradients of " + plan.graph->node(first.node).name + " do not cover the batch");
  }
  std::vector<std::vector<int>> sums(slices.size(), std::vector<int>(n, -1));
  for (size_t p = 0; p < n; ++p) {
    for (size_t k = 0; k < slices.size(); ++k) {
      op.inputs.push_back(partial[k][p]);
      Value value = plan.value(partial[k][p]);
      value.id = static_cast<int>(plan.values.size());
      value.batch = rows[k];
      value.partial = PartialSum::kNone;
      value.producer = op.id;
      plan.values.push_back(value);
      op.outputs.push_back(value.id);
      sums[k][p] = value.id;
    }
  }
  for (size_t k = 0; k < slices.size(); ++k) op.payload_bytes += plan.value(partial[k][0]).bytes;
  // 2(N-1)/N·B per device, N devices (every replica's, for one spanning them)
  const int64_t devices = static_cast<int64_t>(n) * replicas;
  op.bytes_moved = 2 * (devices - 1) * op.payload_bytes;
  op.spans_replicas = replicas > 1;
  plan.ops.push_back(std::move(op));
  // Back into each slice's own partials order.
  std::vector<std::vector<int>> ordered(slices.size());
  for (size_t k = 0; k < slices.size(); ++k) {
    for (int id : *slices[k]) {
      const auto at = std::find(partial[k].begin(), partial[k].end(), id);
      ordered[k].push_back(sums[k][static_cast<size_t>(at - partial[k].begin())]);
    }
  }
  return ordered;
}

}  // namespace

std::vector<int> add_gradient_all_reduce(Plan& plan, const std::vector<int>& partials) {
  return all_reduce_bucket(plan, {&partials}).front();
}

std::vector<std::vector<int>> add_gradient_all_reduces(Plan& plan, const std::vector<std::vector<int>>& slices,
                                                       int64_t bucket_bytes, int replicas) {
  SPLITSCOPE_CHECK(bucket_bytes >= 0, "a negative gradient bucket size");
  std::vector<size_t> order(slices.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::vector<int> ready(slices.size());
  for (size_t k = 0; k < slices.size(); ++k) ready[k] = last_writer(plan, slices[k]);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return ready[a] < ready[b]; });

  // Buckets form per group of replicas (the slices over one set of devices),
  // as a hybrid's data-parallel groups each have their own.
  std::map<std::vector<int>, std::vector<size_t>> by_group;
  std::vector<std::vector<int>> groups;  // in the order their first slice is ready
  for (size_t k : order) {
    std::vector<int> devices;
    for (int id : slices[k]) devices.push_back(plan.value(id).device);
    std::sort(devices.begin(), devices.end());
    auto [it, fresh] = by_group.try_emplace(devices);
    if (fresh) groups.push_back(devices);
    it->second.push_back(k);
  }
  std::vector<std::vector<int>> sums(slices.size());
  for (const std::vector<int>& group : groups) {
    std::vector<const std::vector<int>*> bucket;
    std::vector<size_t> members;
    int64_t held = 0;
    int64_t cap = std::min(bucket_bytes, kFirstBucketBytes);
    const auto close = [&] {
      const std::vector<std::vector<int>> reduced = all_reduce_bucket(plan, bucket, replicas);
      for (size_t m = 0; m < members.size(); ++m) sums[members[m]] = reduced[m];
      bucket.clear();
      members.clear();
      held = 0;
      cap = bucket_bytes;
    };
    for (size_t k : by_group.at(group)) {
      bucket.push_back(&slices[k]);
      members.push_back(k);
      held += plan.value(slices[k].front()).bytes;
      if (held >= cap) close();
    }
    if (!bucket.empty()) close();
  }
  return sums;
}

}  // namespace splitscope
