#pragma once
/// \file
/// A plan's traffic matrix: the bytes each ordered pair of its devices sends
/// the other over one run, counting every transfer and every send of each
/// collective's algorithm (collective_schedule.hpp: the sends the executors
/// run and the simulator routes, ring steps included). It is a fact of the
/// plan alone, like its memory; what a machine makes of it (which pairs
/// share a node: src/sim/machine/device_placement.hpp) is the simulator's business.

#include <cstdint>
#include <utility>
#include <vector>

#include "plan/plan.hpp"

namespace splitscope {

class DeviceTraffic {
 public:
  /// No traffic between `devices` devices.
  explicit DeviceTraffic(int devices);

  int devices() const { return devices_; }
  /// Bytes `from` sends `to` (0 on the diagonal: a copy inside one device crosses nothing).
  int64_t at(int from, int to) const;
  /// Adds `bytes` sent from `from` to `to`; ignored when they are one device.
  void add(int from, int to, int64_t bytes);
  /// The devices `from` sends to, each with its bytes, by device.
  const std::vector<std::pair<int, int64_t>>& sent_by(int from) const;

 private:
  void check(int from, int to) const;

  int devices_ = 0;
  /// Per sender, the pairs it sends to: a plan's devices each talk to a few
  /// others (ring neighbours, the next stage), so a dense devices × devices
  /// table was nearly all zeros (2 GiB at 16,384 devices).
  std::vector<std::vector<std::pair<int, int64_t>>> rows_;
};

/// The traffic of one run of `plan` between its `plan.devices` devices.
DeviceTraffic plan_traffic(const Plan& plan);

}  // namespace splitscope
