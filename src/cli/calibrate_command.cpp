// Placeholder until its issue lands: the subcommand exists, says so, and fails.

#include "cli/command.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {

Command add_calibrate_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("calibrate", "Measure a GPU and write a machine file (not built yet)");
  sub->allow_extras();
  return {sub, [] () -> int { throw RunError("'calibrate' is not implemented in this build yet"); }};
}

}  // namespace splitscope::cli
