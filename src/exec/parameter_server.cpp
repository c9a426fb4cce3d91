#include "exec/parameter_server.hpp"

#include <string>

#include <fmt/format.h>

#include "exec/executor.hpp"

#include "util/errors.hpp"

namespace splitscope {

std::string_view to_string(PsMode mode) {
  switch (mode) {
    case PsMode::kSync: return "sync";
    case PsMode::kAsync: return "async";
    case PsMode::kSpare: return "spare";
  }
  return "?";
}

void check_parameter_server_options(const ParameterServerOptions& options, int workers) {
  if (options.steps < 1) throw InputError("--steps", "", "must be at least 1, got " + std::to_string(options.steps));
  if (options.mode == PsMode::kSpare && (options.spare < 1 || options.spare >= workers)) {
    throw InputError("--spare", "",
                     workers < 2 ? fmt::format("leaves out R of the workers' gradients each step and keeps at least "
                                               "one, so it needs 2 or more workers (--devices), got {}",
                                               workers)
                                 : fmt::format("leaves out R of the {} workers' gradients each step, so R must be "
                                               "from 1 to {}; got {}",
                                               workers, workers - 1, options.spare));
  }
  const bool mitigated = options.sync_warmup != 0 || options.max_staleness || options.staleness_scaled_lr;
  if (mitigated && options.mode != PsMode::kAsync) {
    throw InputError(options.sync_warmup != 0      ? "--sync-warmup"
                     : options.max_staleness ? "--max-staleness"
                                             : "--staleness-lr",
                     "", "mitigates stale gradients, which only --async has; add --async");
  }
  if (options.sync_warmup < 0) {
    throw InputError("--sync-warmup", "", "must be 0 or more steps, got " + std::to_string(options.sync_warmup));
  }
  if (options.max_staleness && *options.max_staleness < 0) {
    throw InputError("--max-staleness", "", "must be 0 or more updates, got " + std::to_string(*options.max_staleness));
  }
}

void check_ps_straggler(const RunOptions& options, int workers) {
  if (options.straggler && options.straggler->device != StragglerDelay::kEveryDevice &&
      (options.straggler->device < 0 || options.straggler->device >= workers)) {
    throw InputError("--straggler", "",
                     fmt::format("names device {}; the workers are devices 0-{} (the shards after them)",
                                 options.straggler->device, workers - 1));
  }
}

}  // namespace splitscope
