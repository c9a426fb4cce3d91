#pragma once
/// \file
/// A plan stored at a precision: every partitioner builds its plan in
/// float32 bytes, and make_plan() then restates them at the precision asked
/// (PartitionOptions::precision). Each value counts its elements at its
/// class's size (activation, weight copy, gradient: ir/precision.hpp); compute
/// ops read and write those (one size at every precision, so their bytes
/// scale as one); transfers and collectives move their values' bytes; the
/// optimizer update reads and writes the masters and state at theirs and,
/// under amp, casts the masters to the copy; DeviceMemory follows
/// (plan_memory.hpp). FLOPs do not change: the math of the products is the
/// simulator's business (Plan::precision names it).

#include "ir/precision.hpp"
#include "plan/plan.hpp"

namespace splitscope {

/// `plan` (built in float32 bytes, Plan::precision fp32) restated at `precision`.
Plan store_at_precision(Plan plan, Precision precision);

}  // namespace splitscope
