#pragma once
/// \file
/// Which backend runs a command's plans: the cpu backend (threads, measured),
/// cuda (GPU streams, measured) or the simulator (predicted on a machine
/// file). A command parses the name once (`--backend`, or its default) and
/// passes the enum down; nothing below compares names.

#include <string_view>

namespace splitscope {

enum class Backend { kCpu, kCuda, kSim };

/// "cpu", "cuda" or "sim": the name reports and messages print.
std::string_view to_string(Backend backend);

/// The backend `name` names; InputError (exit 2, naming --backend) for any other.
Backend parse_backend(std::string_view name);

/// Whether the backend computes the network's outputs (cpu, cuda), rather
/// than predicting its times only (the simulator).
inline bool computes(Backend backend) { return backend != Backend::kSim; }

}  // namespace splitscope
