// `splitscope sweep --over OPTION=V1,V2,... [--over ...] run MODEL ARGS...`:
// the same `run` over a list of values of any of its options (the cartesian
// product where several are swept), and how throughput follows them. Each
// point is a whole `run` command line, parsed as `run` parses it and run in
// this process by the same code (run_command.hpp, and below it the run
// layer), so every option of `run` can be swept without this file knowing it.

#include <fmt/format.h>

#include <cmath>
#include <iostream>
#include <memory>
#include <optional>
#include <sstream>

#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/run_cli.hpp"
#include "cli/run_command.hpp"
#include "cli/sweep_points.hpp"
#include "report/sweep_report.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"
#include "util/output_batch.hpp"
#include "cli/network_loading.hpp"

namespace splitscope::cli {
namespace {

/// Every file the swept runs may read: each word of the run command line
/// and each swept value that names one (the network, a machine file, an
/// --option=FILE), the zoo's files of those named by name included. Words
/// that name no file are ignored, so sweep needs no list of run's options.
std::vector<std::string> files_read(const std::vector<std::string>& arguments, const std::vector<SweptOption>& swept) {
  std::vector<std::string> texts(arguments.begin(), arguments.end());
  for (const SweptOption& option : swept) texts.insert(texts.end(), option.values.begin(), option.values.end());
  std::vector<std::string> words;
  for (const std::string& text : texts) {  // a --variant value is several words
    std::istringstream split(text);
    for (std::string word; split >> word;) words.push_back(word);
  }
  std::vector<std::string> files;
  for (const std::string& word : words) {
    const size_t equals = word.find('=');
    for (const std::string& name : {word, equals == std::string::npos ? std::string() : word.substr(equals + 1)}) {
      files.push_back(input_file(ZooShelf::kNetworks, name));
      files.push_back(input_file(ZooShelf::kMachines, name));
    }
  }
  return files;
}

/// One point's command line (SweepPoints::command_line), parsed as `run`'s
/// and run here with its table dropped; its error, where it fails, said on
/// stderr as the command would say it. Returns run's exit code, and sets
/// `ran` to what it ran.
int run_point(std::vector<std::string> words, std::optional<Comparison>& ran) {
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  CLI::App app;
  app.require_subcommand(1);
  app.fallthrough();
  const auto options = std::make_shared<RunCommandOptions>();
  add_run_subcommand(app, options);
  try {
    if (const std::optional<int> exit_code = parse_command_line(app, static_cast<int>(words.size()), argv.data())) {
      return *exit_code;
    }
    std::ostream dropped(nullptr);  // the point's table: the sweep shows its own
    return run_command(*options, words, dropped, ran);
  } catch (const std::exception&) {
    const CommandFailure failure = current_command_failure();
    fmt::print(stderr, "error: {}\n", failure.message);
    return failure.exit_code;
  }
}

/// The point a run's report (its JSON report's fields, docs/reports.md) makes.
OptionSweepPoint read_point(const RunReport& run, std::vector<std::pair<std::string, std::string>> values) {
  const RunSummary& summary = run.summary;
  const Judgement& judgement = run.judgement;
  OptionSweepPoint point;
  point.values = std::move(values);
  point.fits = summary.fits();
  point.verdict = judgement.verdict ? std::string(to_string(*judgement.verdict)) : std::string();
  if (!point.fits || !summary.makespan) {
    point.fits = false;
    return point;
  }
  point.makespan_ms = summary.makespan->median_ms;
  // As the report's JSON holds them: a number that is not finite is null there, and so not taken.
  const auto number = [](const std::optional<double>& value) { return value && std::isfinite(*value); };
  if (number(judgement.speedup) && number(judgement.baseline_makespan_ms)) point.speedup = *judgement.speedup;
  const auto& ps = summary.info.parameter_server;
  if (summary.training && ps) {
    for (const auto& [time_us, loss] : ps->loss_curve) point.loss_curve.emplace_back(time_us / 1000.0, loss);
  }
  if (summary.training && number(summary.training->samples_per_s)) {
    point.samples_per_s = *summary.training->samples_per_s;
  } else if (point.makespan_ms > 0) {
    point.samples_per_s = static_cast<double>(summary.batch) / (point.makespan_ms / 1000.0);
  }
  return point;
}

int sweep_command(const SweepOptions& options, const std::vector<std::string>& arguments) {
  const SweepPoints points(options, arguments);
  check_command_outputs({{"--report", options.report}, {"--html", options.html}}, files_read(arguments, points.swept()));

  OptionSweep sweep;
  sweep.run_arguments.assign(arguments.begin() + 1, arguments.end());
  for (const SweptOption& option : points.swept()) sweep.over.push_back(option.name);

  for (size_t index = 0; index < points.size(); ++index) {
    std::vector<std::pair<std::string, std::string>> values = points.values(index);
    std::string label;
    for (const auto& [option, value] : values) label += fmt::format("{}{}={}", label.empty() ? "" : " ", option, value);
    if (!options.quiet) fmt::print(stderr, "sweep: {} ({} of {})\n", label, index + 1, points.size());
    std::optional<Comparison> ran;
    if (const int status = run_point(points.command_line(index), ran); status != 0) {
      fmt::print(stderr, "sweep: the run at {} failed (exit {}; its error is above)\n", label, status);
      return status;
    }
    // A run report is its comparison's first shown run (RunJsonReporter).
    SPLITSCOPE_CHECK(ran && !ran->primary().runs.empty(), "a swept run reports a run");
    sweep.points.push_back(read_point(ran->primary().runs.front(), values));
  }

  OutputBatch files;
  files.add("--report", options.report, option_sweep_json(sweep).dump(2) + "\n");
  files.add("--html", options.html, option_sweep_html(sweep));
  std::cout << (options.json ? option_sweep_json(sweep).dump(2) + "\n" : option_sweep_text(sweep));
  publish_outputs(files, options.quiet);
  return 0;
}

/// `sweep --help`'s usage line names the run command line it needs after its own options.
class SweepUsage final : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::string usage = CLI::Formatter::make_usage(app, std::move(name));
    const size_t end = usage.find_last_not_of('\n');
    return usage.substr(0, end + 1) + " run MODEL RUN-OPTIONS...\n";
  }
};

}  // namespace

Command add_sweep_command(CLI::App& app) {
  auto options = std::make_shared<SweepOptions>();
  CLI::App* sub = add_sweep_options(app, *options);
  sub->formatter(std::make_shared<SweepUsage>());
  return {sub, [options, sub](const std::vector<std::string>&) { return sweep_command(*options, sub->remaining()); }};
}

}  // namespace splitscope::cli
