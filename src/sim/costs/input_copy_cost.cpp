#include "sim/costs/input_copy_cost.hpp"

#include <fmt/format.h>

#include <map>

#include "util/errors.hpp"

namespace splitscope {

std::vector<InputCopy> price_input_copies(const Machine& machine, std::vector<InputCopy> copies,
                                          const std::vector<int>& device_map) {
  const auto seconds = [](const LinkSpec& link, int64_t bytes) {
    return link.latency_seconds() +
           static_cast<double>(bytes) / link.payload_bytes_per_second(LinkTraffic::kReadCompletions);
  };
  if (machine.host_link) {
    for (InputCopy& copy : copies) copy.us = seconds(*machine.host_link, copy.bytes) * 1e6;
    return copies;
  }
  if (machine.topology.kind == TopologyKind::kHostStaged) {
    // Copies behind one bus queue on it, in device order.
    std::map<int, int64_t> queued;
    for (InputCopy& copy : copies) {
      const int placed = device_map.empty() ? copy.device : device_map.at(static_cast<size_t>(copy.device));
      int64_t& bytes = queued[placed / machine.topology.devices_per_bus];
      bytes += copy.bytes;
      copy.us = seconds(machine.topology.bus, bytes) * 1e6;
    }
    return copies;
  }
  throw InputError(machine.source.empty() ? "machine " + machine.name : machine.source, "host_link",
                   fmt::format("an input pipeline (--prefetch, --input-cost-us-per-sample) copies each batch from "
                               "host memory to the devices, and machine '{}' does not say how fast: add "
                               "\"host_link\": {{\"bandwidth_GBps\": ..., \"latency_us\": ...}} (docs/machine-format.md)",
                               machine.name));
}

}  // namespace splitscope
