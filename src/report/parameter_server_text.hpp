#pragma once
/// \file
/// What `run` prints of a parameter-server training run (RunInfo::parameter_server):
/// the protocol, what became of the gradients, their staleness, throughput.

#include <string>

#include "timeline/run_result.hpp"

namespace splitscope {

/// The lines; empty for other runs.
std::string parameter_server_lines(const RunInfo& info);

}  // namespace splitscope
