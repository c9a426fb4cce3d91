#pragma once
/// \file
/// A Plan as Chakra execution traces: one trace per device, the workload
/// format ASTRA-sim replays (docs/chakra.md). Each device's trace holds a
/// compute node per compute, epilogue and update op it runs (its FLOPs, the
/// bytes it touches and its predicted duration), a send or receive node per
/// transfer that leaves or reaches it, and a collective node per collective it
/// takes part in, each depending on the nodes of the same device that the
/// plan's data flow and the device's schedule put before it.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "chakra/et_def.pb.h"
#include "plan/plan.hpp"
#include "timeline/timeline.hpp"

namespace splitscope {

/// The traces of one plan: `devices[d]` is device d's nodes in an order that
/// respects their dependencies; `groups` names each set of devices a
/// collective runs over that is not every device of the plan (the nodes'
/// `pg_name`, ASTRA-sim's communicator-group file).
struct ChakraTraces {
  std::vector<std::vector<ChakraProtoMsg::Node>> devices;
  std::map<std::string, std::vector<int>> groups;
};

/// Converts `plan`; `predicted` (the simulator's timeline of the same plan)
/// gives each compute node its duration, rounded to whole microseconds as
/// the format holds them (the exact nanoseconds go in attribute
/// `splitscope_duration_ns`).
ChakraTraces chakra_traces(const Plan& plan, const Timeline& predicted);

/// Writes `traces` as `<dir>/<prefix>.<d>.et` (Chakra's length-delimited
/// files: a GlobalMetadata message, then the nodes) and, where it has
/// groups, `<dir>/<prefix>.comm_groups.json`. Creates `dir` if it is
/// missing. Each file is written atomically (util/atomic_file.hpp). Returns
/// the paths written.
std::vector<std::string> write_chakra_traces(const ChakraTraces& traces, const std::string& dir,
                                             const std::string& prefix);

/// Reads one trace file back (tests, and a user checking a file): its nodes.
/// InputError naming the file when it is not a Chakra trace.
std::vector<ChakraProtoMsg::Node> read_chakra_trace(const std::string& path);

}  // namespace splitscope
