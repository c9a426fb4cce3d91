#pragma once
/// \file
/// `splitscope run`: its options and the command as a function, so that
/// `sweep` runs each of its points here, through the same code and the run
/// layer (src/run/), without re-entering the command line's dispatch.

#include <CLI/CLI.hpp>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/command_outputs.hpp"
#include "cli/execution_options.hpp"
#include "cli/parameter_server_options.hpp"
#include "cli/training_options.hpp"
#include "exec/input_pipeline.hpp"
#include "report/comparison.hpp"
#include "report/reporter.hpp"

namespace splitscope::cli {

struct RunCommandOptions {
  std::string model;
  std::string strategy;
  int devices = 0;
  bool devices_given = false;
  int microbatches = 1;
  int replicas = 1;
  ExecutionOptions execution;
  TrainingOptions training;
  ParameterServerCliOptions parameter_server;
  InputPipelineOptions input;
  bool check = false;
  std::string save_output;
  ReportOutputs outputs;
  std::string launcher;
  std::vector<int> stages;  ///< --stages: a layer split's cut points
  bool sequence_parallel = false;  ///< --sequence-parallel
  std::string degrees;      ///< --degrees: hybrid's T,P,D
  std::string plan_file;    ///< --plan: the strategy and its parameters from a plan file
  /// The strategy options found on the command line, which --plan refuses.
  std::vector<std::string> strategy_options_given;
};

/// Registers `run` and its options (parsed into `options`) on `app`.
CLI::App* add_run_subcommand(CLI::App& app, const std::shared_ptr<RunCommandOptions>& options);

/// Runs `run` as `options` ask: the plan and its single-device baseline,
/// through the run layer; its text report goes to `out`, its files are
/// written as `run` writes them, and `ran` gets the comparison the reports
/// were drawn from (left empty on an MPI rank that ends on an error rank 0
/// reports). `command_line` is recorded in the reports' context. Returns the
/// exit code; throws what the command's errors are (util/errors.hpp).
int run_command(const RunCommandOptions& options, const std::vector<std::string>& command_line, std::ostream& out,
                std::optional<Comparison>& ran);

}  // namespace splitscope::cli
