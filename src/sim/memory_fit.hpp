#pragma once
/// \file
/// Does a plan fit? Each device's peak memory (Plan::memory, from the
/// partitioner) against what the device has: the first reason people split a
/// model. A plan that does not fit gets no time, but the devices and bytes
/// that overflow.

#include <cstdint>
#include <string>
#include <vector>

#include "partitioners/plan.hpp"
#include "sim/machine.hpp"

namespace splitscope {

struct MemoryOverflow {
  int device = 0;
  int64_t needed_bytes = 0;     ///< the plan's peak on that device
  int64_t available_bytes = 0;  ///< the device's memory
};

struct MemoryFit {
  std::vector<MemoryOverflow> overflows;  ///< in device order; empty when it fits

  bool fits() const { return overflows.empty(); }
  /// "" when it fits; else e.g. "device 0 needs 95.20 GiB but has 80.00 GiB (and 1 more device)".
  std::string reason() const;
};

/// Checks plan.memory[d].peak against device_memory_bytes[d] for every device
/// of the plan; a device with no entry (or an empty vector) is not checked.
MemoryFit check_memory_fit(const Plan& plan, const std::vector<int64_t>& device_memory_bytes);

/// The same, against every device of `machine`.
MemoryFit check_memory_fit(const Plan& plan, const Machine& machine);

}  // namespace splitscope
