#pragma once
/// \file
/// The options of parameter-server training (`run --train --strategy ps`,
/// docs/parameter-servers.md): `--ps K`, `--sync` / `--async`, `--spare R`,
/// and async's mitigations `--sync-warmup K`, `--max-staleness S`,
/// `--staleness-lr`.

#include <CLI/CLI.hpp>
#include <optional>
#include <string>

#include "exec/parameter_server.hpp"

namespace splitscope::cli {

struct ParameterServerCliOptions {
  int shards = 1;
  bool async = false;
  bool sync = false;
  int spare = 0;
  int sync_warmup = 0;
  std::optional<int> max_staleness;  ///< none: no bound
  bool staleness_lr = false;
  std::string given;  ///< the first of these options given, for refusals
};

/// Registers them on `command`.
void add_parameter_server_options(CLI::App& command, ParameterServerCliOptions& options);

/// The protocol they ask for, `steps` from --steps. InputError (exit 2)
/// where one is given with a strategy other than ps (naming it), or the
/// combination is impossible (--spare with --async, a mitigation without --async).
ParameterServerOptions parameter_server_options(const ParameterServerCliOptions& options, const std::string& strategy,
                                                int steps);

}  // namespace splitscope::cli
