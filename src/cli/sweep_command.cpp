// `splitscope sweep --over OPTION=V1,V2,... [--over ...] run MODEL ARGS...`:
// the same `run` over a list of values of any of its options (the cartesian
// product where several are swept), and how throughput follows them. Each
// point is a whole `run` command, parsed and run in this process exactly as
// it would be on its own, so every option of `run` can be swept without
// this file knowing it.

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/run_cli.hpp"
#include "cli/sweep_folder.hpp"
#include "cli/sweep_points.hpp"
#include "report/sweep_report.hpp"
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

/// One point's command line (SweepPoints::command_line), run here, its
/// standard output dropped. Returns run's exit code.
int run_point(std::vector<std::string> words) {
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::ostringstream dropped;
  std::streambuf* const saved = std::cout.rdbuf(dropped.rdbuf());
  int status = 0;
  try {
    status = run_cli(static_cast<int>(words.size()), argv.data());
  } catch (...) {
    std::cout.rdbuf(saved);
    throw;
  }
  std::cout.rdbuf(saved);
  return status;
}

OptionSweepPoint read_point(const std::string& report, std::vector<std::pair<std::string, std::string>> values) {
  std::ifstream in(report);
  const nlohmann::json run = nlohmann::json::parse(in);
  OptionSweepPoint point;
  point.values = std::move(values);
  point.fits = run.value("fits", true);
  point.verdict = run.value("verdict", "");
  if (!point.fits || !run["makespan_ms"].is_object()) {
    point.fits = false;
    return point;
  }
  point.makespan_ms = run["makespan_ms"]["median"].get<double>();
  if (run["speedup"].is_number() && run.value("baseline_makespan_ms", nlohmann::json()).is_number()) {
    point.speedup = run["speedup"].get<double>();
  }
  const auto train = run.find("train");
  if (train != run.end() && train->is_object() && train->contains("parameter_server")) {
    for (const auto& sample : (*train)["parameter_server"]["loss_curve"]) {
      point.loss_curve.emplace_back(sample["time_ms"].get<double>(), sample["loss"].get<double>());
    }
  }
  if (train != run.end() && train->is_object() && (*train)["samples_per_s"].is_number()) {
    point.samples_per_s = (*train)["samples_per_s"].get<double>();
  } else if (point.makespan_ms > 0) {
    point.samples_per_s = run["batch"].get<double>() / (point.makespan_ms / 1000.0);
  }
  return point;
}

int sweep_command(const SweepOptions& options, const std::vector<std::string>& arguments) {
  const SweepPoints points(options, arguments);
  check_command_outputs({{"--report", options.report}, {"--html", options.html}}, files_read(arguments, points.swept()));

  OptionSweep sweep;
  sweep.run_arguments.assign(arguments.begin() + 1, arguments.end());
  for (const SweptOption& option : points.swept()) sweep.over.push_back(option.name);

  const SweepFolder folder;

  for (size_t index = 0; index < points.size(); ++index) {
    std::vector<std::pair<std::string, std::string>> values = points.values(index);
    std::string label;
    for (const auto& [option, value] : values) label += fmt::format("{}{}={}", label.empty() ? "" : " ", option, value);
    if (!options.quiet) fmt::print(stderr, "sweep: {} ({} of {})\n", label, index + 1, points.size());
    const std::string report = (folder.path() / fmt::format("point-{}.json", index)).string();
    if (const int status = run_point(points.command_line(index, report)); status != 0) {
      fmt::print(stderr, "sweep: the run at {} failed (exit {}; its error is above)\n", label, status);
      return status;
    }
    sweep.points.push_back(read_point(report, values));
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
