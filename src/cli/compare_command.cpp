// Placeholder until its issue lands: the subcommand exists, says so, and fails.

#include "cli/command.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {

Command add_compare_command(CLI::App& app) {
  CLI::App* sub = app.add_subcommand("compare", "Run every strategy and compare them (not built yet)");
  sub->allow_extras();
  return {sub, [] () -> int { throw RunError("'compare' is not implemented in this build yet"); }};
}

}  // namespace splitscope::cli
