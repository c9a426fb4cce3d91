#include "partitioners/plan_traffic.hpp"

#include <fmt/format.h>

#include <stdexcept>

#include "partitioners/collective_schedule.hpp"

namespace splitscope {

DeviceTraffic::DeviceTraffic(int devices)
    : devices_(devices), bytes_(static_cast<size_t>(devices) * static_cast<size_t>(devices), 0) {
  if (devices < 0) throw std::logic_error("a traffic matrix needs a device count of at least 0");
}

size_t DeviceTraffic::index(int from, int to) const {
  if (from < 0 || from >= devices_ || to < 0 || to >= devices_) {
    throw std::logic_error(fmt::format("no traffic from device {} to device {} of {}", from, to, devices_));
  }
  return static_cast<size_t>(from) * static_cast<size_t>(devices_) + static_cast<size_t>(to);
}

void DeviceTraffic::add(int from, int to, int64_t bytes) {
  if (from == to) return;
  bytes_[index(from, to)] += bytes;
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
