#pragma once
/// \file
/// One device's part of a plan whose devices never exchange data (the
/// replicas of `data` and `ps`, forward; `ps` training): a plan of one
/// device holding that device's values and ops, renumbered, so that it can
/// be run on its own, at its own pace (a parameter-server worker,
/// exec/parameter_server.hpp).

#include <vector>

#include "plan/plan.hpp"

namespace splitscope {

struct DevicePart {
  Plan plan;
  std::vector<int> plan_op;  ///< for each op of the part, its id in the whole plan
};

/// Device `device`'s part of `plan` as a one-device plan (its device 0):
/// the values held there, the ops run there in the same order, its
/// schedule, inputs, parameters, outputs (a band of rows of the network
/// output) and memory. Throws std::logic_error if an op of the plan touches
/// `device` and another device (the part could not run alone).
DevicePart device_part(const Plan& plan, int device);

}  // namespace splitscope
