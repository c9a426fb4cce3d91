#pragma once
/// \file
/// What the simulator charges an input pipeline's copy of one batch: each
/// device's share of the network inputs (exec/input_pipeline.hpp) crosses
/// the machine's host link (Machine::host_link: one per device, so the
/// devices' copies run side by side), or, on a host-staged machine without
/// one, its shared bus (the devices behind one bus share it: their bytes
/// queue on it). A host-to-device copy is the device's copy engine reading
/// host memory: read completions on PCIe (link_efficiency.hpp).

#include <vector>

#include "exec/input_pipeline.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope {

/// `copies` (network_input_copies()) with InputCopy::us set: the time from
/// the copy stage's start to the end of each device's copy. `device_map`:
/// the machine device each plan device was placed on (--placement; empty:
/// plan device i on machine device i), which decides the bus a copy queues
/// on. InputError naming the machine when it has neither a host link nor a
/// host-staged bus.
std::vector<InputCopy> price_input_copies(const Machine& machine, std::vector<InputCopy> copies,
                                          const std::vector<int>& device_map = {});

}  // namespace splitscope
