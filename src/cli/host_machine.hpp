#pragma once
/// \file
/// `host` as a machine name (`--machine host`, `--predict-on host`): this
/// host as the cpu backend runs plans, from `calibrate --backend cpu` over the
/// zoo's small networks, measured on first use (about a second on two cores)
/// and cached, so that a newcomer's prediction of a cpu run describes the
/// machine at hand rather than the one a preset was measured on. The cache
/// file is keyed by CPU model, hardware threads and splitscope's revision
/// (op signatures may change between builds):
/// `$SPLITSCOPE_CACHE_DIR`, else `$XDG_CACHE_HOME/splitscope`, else
/// `$HOME/.cache/splitscope`, then `host-<cpu>-<N>t-<revision>.json`.

#include <string>

namespace splitscope::cli {

inline constexpr const char* kHostMachine = "host";

/// Where this host's cached machine is (or will be). InputError when no
/// cache folder can be named (none of the three variables is set).
std::string host_machine_path();

/// `name` as given, or for `host` the cached machine's path, calibrating
/// this host first when there is none (a line on stderr says so).
std::string resolve_machine(const std::string& name);

}  // namespace splitscope::cli
