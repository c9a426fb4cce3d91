#include "plan/plan_traffic.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "plan/collective_schedule.hpp"

namespace splitscope {

DeviceTraffic::DeviceTraffic(int devices) : devices_(devices) {
  if (devices < 0) throw std::logic_error("a traffic matrix needs a device count of at least 0");
  rows_.resize(static_cast<size_t>(devices));
}

void DeviceTraffic::check(int from, int to) const {
  if (from < 0 || from >= devices_ || to < 0 || to >= devices_) {
    throw std::logic_error(fmt::format("no traffic from device {} to device {} of {}", from, to, devices_));
  }
}

namespace {

bool traffic_to_below(const std::pair<int, int64_t>& entry, int to) { return entry.first < to; }

}  // namespace

int64_t DeviceTraffic::at(int from, int to) const {
  check(from, to);
  const auto& row = rows_[static_cast<size_t>(from)];
  const auto it = std::lower_bound(row.begin(), row.end(), to, traffic_to_below);
  return it != row.end() && it->first == to ? it->second : 0;
}

void DeviceTraffic::add(int from, int to, int64_t bytes) {
  if (from == to) return;
  check(from, to);
  if (bytes == 0) return;  // at() gives 0 either way
  auto& row = rows_[static_cast<size_t>(from)];
  auto it = std::lower_bound(row.begin(), row.end(), to, traffic_to_below);
  if (it == row.end() || it->first != to) it = row.insert(it, {to, 0});
  it->second += bytes;
}

const std::vector<std::pair<int, int64_t>>& DeviceTraffic::sent_by(int from) const {
  check(from, from);
  return rows_[static_cast<size_t>(from)];
}

DeviceTraffic plan_traffic(const Plan& plan) {
  DeviceTraffic traffic(plan.devices);
  for (const PlanOp& op : plan.ops) {
    if (op.role == OpRole::kTransfer) {
      traffic.add(op.src_device, op.device, op.bytes_moved);
    } else if (op.role == OpRole::kCollective) {
      // The schedule, not bytes_moved: which pair each step's bytes cross is the point.
      for (const CollectiveSend& send : collective_schedule(plan, op).sends) {
        traffic.add(send.from_device, send.to_device, send.bytes);
      }
    }
  }
  return traffic;
}

}  // namespace splitscope
