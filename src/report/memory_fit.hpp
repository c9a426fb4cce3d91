#pragma once
/// \file
/// Whether a plan fits in the devices' memory: the simulator's main use is to
/// say "this split needs 95 GiB on device 0; an 80 GiB H100 cannot run it".

#include <cstdint>
#include <string>
#include <vector>

#include "plan/plan.hpp"

namespace splitscope {

struct MemoryFit {
  bool fits = true;
  bool checked = false;  ///< false when the backend does not know its devices' memory
  /// When it does not fit: one sentence naming the device and the bytes needed
  /// against the bytes available, e.g. "device 0 needs 95.31 GiB but has 80.00 GiB".
  std::string problem;
  int device = -1;        ///< the device named in `problem`
  int64_t needed_bytes = 0;
  int64_t available_bytes = 0;
};

/// Checks Plan::memory[d].peak against `device_memory_bytes[d]` (RunInfo's;
/// devices without an entry are not checked). Of several devices that do not
/// fit, names the one short by the most bytes and counts the others.
MemoryFit check_memory_fit(const Plan& plan, const std::vector<int64_t>& device_memory_bytes);

}  // namespace splitscope
