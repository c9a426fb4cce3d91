#include "cli/parameter_server_options.hpp"

#include "util/errors.hpp"

namespace splitscope::cli {

void add_parameter_server_options(CLI::App& command, ParameterServerCliOptions& options) {
  const auto note = [&options](const std::string& name) {
    return [&options, name](const auto&) {
      if (options.given.empty()) options.given = name;
    };
  };
  command.add_option("--ps", options.shards, "parameter-server shards holding the weights (--strategy ps)")
      ->capture_default_str()
      ->each(note("--ps"));
  auto* sync = command.add_flag("--sync", options.sync,
                                "ps: each update waits for every worker's gradient (the default)")
                   ->each(note("--sync"));
  auto* async = command.add_flag("--async", options.async, "ps: apply each worker's gradient as it arrives")
                    ->each(note("--async"));
  sync->excludes(async);
  command.add_option("--spare", options.spare,
                     "ps: spare replicas; each update takes the first N-R gradients of its step and drops the rest")
      ->each(note("--spare"));
  command.add_option("--sync-warmup", options.sync_warmup, "ps --async: run the first K steps synchronously")
      ->each(note("--sync-warmup"));
  command.add_option("--max-staleness", options.max_staleness,
                     "ps --async: drop gradients more than S updates stale")
      ->each(note("--max-staleness"));
  command.add_flag("--staleness-lr", options.staleness_lr,
                   "ps --async: apply each gradient with learning rate lr / (1 + staleness)")
      ->each(note("--staleness-lr"));
}

ParameterServerOptions parameter_server_options(const ParameterServerCliOptions& options, const std::string& strategy,
                                                int steps) {
  if (strategy != "ps") {
    if (!options.given.empty()) {
      throw InputError(options.given, "", "configures parameter servers; use it with --train --strategy ps");
    }
    return {};
  }
  ParameterServerOptions ps;
  ps.steps = steps;
  ps.mode = options.async ? PsMode::kAsync : PsMode::kSync;
  if (options.spare != 0) {
    if (options.async || options.sync) {
      // --sync is every gradient of a step; spare replicas drop some of them, a third mode.
      throw InputError("--spare", "",
                       options.async ? "drops the late gradients of a synchronous step; --async waits for none"
                                     : "is a mode of its own (each step takes the first N-R gradients); --sync waits "
                                       "for all of them: drop --sync");
    }
    ps.mode = PsMode::kSpare;
    ps.spare = options.spare;
  }
  ps.sync_warmup = options.sync_warmup;
  ps.max_staleness = options.max_staleness;
  ps.staleness_scaled_lr = options.staleness_lr;
  return ps;
}

}  // namespace splitscope::cli
