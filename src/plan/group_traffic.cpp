#include "plan/group_traffic.hpp"

#include <stdexcept>

namespace splitscope {

GroupTraffic group_traffic(const DeviceTraffic& traffic, const ParallelDegrees& degrees) {
  const int group = degrees.tensor;
  const int replica = degrees.tensor * degrees.pipeline;
  if (replica * degrees.data != traffic.devices()) {
    throw std::logic_error("degrees whose product is not the traffic's device count");
  }
  GroupTraffic split;
  for (int from = 0; from < traffic.devices(); ++from) {
    for (const auto& [to, bytes] : traffic.sent_by(from)) {
      if (bytes == 0) continue;
      if (from / replica != to / replica) {
        split.data += bytes;
      } else if (from / group != to / group) {
        split.pipeline += bytes;
      } else {
        split.tensor += bytes;
      }
    }
  }
  return split;
}

}  // namespace splitscope
