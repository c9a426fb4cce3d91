#pragma once
/// \file
/// `--plan FILE` (run, compare, validate, sweep) and `--stages` (plan, run):
/// a plan read back from a plan file (docs/plan.md "Plan files"), rebuilt by
/// the partitioners for the network at hand and held against the file.

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/execution_options.hpp"
#include "cli/training_options.hpp"
#include "ir/graph.hpp"
#include "plan_file/plan_file.hpp"

namespace splitscope::cli {

/// Registers `--plan FILE` on `command`.
CLI::Option* add_plan_file_option(CLI::App& command, std::string& path);

/// Registers `--stages 0,5,12` (the first layer of each stage of a layer split) on `command`.
CLI::Option* add_stages_option(CLI::App& command, std::vector<int>& stages);

/// InputError (exit 2) unless `--stages` is given only to a layer split.
void check_stages_option(const std::vector<int>& stages, const std::string& strategy);

/// InputError naming the first of `given` (option names of strategy
/// parameters found on the command line) when `--plan` gives the strategy.
void refuse_with_plan_file(const std::vector<std::string>& given);

/// `--precision` for a run of the plan file: the file's precision when not
/// given (so the simulated machine prices the products on the plan's math);
/// InputError (exit 2) when given and different from the file's.
void adopt_plan_file_precision(const PlanFile& file, const std::string& path, std::string& precision);

/// The batch a run of the plan file takes: `--batch` if given, else the file's.
int64_t plan_file_batch(const PlanFile& file, const std::optional<int64_t>& batch);

/// The file's plan for `graph` (the network with its batch and training, as
/// the command loaded it) on `devices` (0: the file's), priced as `target`
/// prices (partition_options()); InputError (exit 2) naming what differs.
std::shared_ptr<const Plan> plan_from_file(const PlanFile& file, const std::string& path,
                                           const std::shared_ptr<const Graph>& graph, int devices,
                                           const ExecutionOptions& execution, const RunTarget& target);

/// `plan` under the name `label` ("plan: pipeline x2, ..."), so that a
/// report tells it from the named strategy of the same partitioner.
std::shared_ptr<const Plan> labelled_plan(const Plan& plan, const std::string& label);

}  // namespace splitscope::cli
