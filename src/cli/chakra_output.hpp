#pragma once
/// \file
/// `--chakra DIR` (plan, search): a plan written as one Chakra execution
/// trace per device (docs/chakra.md), each compute node timed by the
/// simulator on the machine given.

#include <string>

#include "plan/plan.hpp"
#include "sim/machine/machine.hpp"

namespace splitscope::cli {

/// Simulates `plan` on `machine` and writes DIR/splitscope.<device>.et;
/// says on stderr how many files it wrote. UnavailableError (exit 3) where
/// the build has no Protocol Buffers.
void write_plan_chakra(const Plan& plan, const Machine& machine, const std::string& dir);

}  // namespace splitscope::cli
