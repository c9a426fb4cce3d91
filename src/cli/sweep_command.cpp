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
#include <cctype>
#include <set>
#include <sstream>

#include "cli/command.hpp"
#include "cli/command_outputs.hpp"
#include "cli/did_you_mean.hpp"
#include "cli/run_cli.hpp"
#include "cli/sweep_folder.hpp"
#include "report/sweep_report.hpp"
#include "util/errors.hpp"
#include "util/output_batch.hpp"
#include "cli/network_loading.hpp"

namespace splitscope::cli {
namespace {

struct SweepOptions {
  std::vector<std::string> over;
  std::vector<std::string> variants;
  bool json = false;
  bool quiet = false;
  std::string report;
  std::string html;
};

struct SweptOption {
  std::string name;  ///< without the dashes
  std::vector<std::string> values;
};

/// The swept "option" of `--variant`: whole sets of run's options.
constexpr const char* kVariant = "variant";

/// `run`'s short spellings, so that `-n 2` in the swept command line counts as --devices.
const std::vector<std::pair<std::string, std::string>>& short_names() {
  static const std::vector<std::pair<std::string, std::string>> names{
      {"devices", "-n"}, {"strategy", "-s"}, {"microbatches", "-m"}};
  return names;
}

/// The most points one sweep runs: each is a whole run.
constexpr size_t kMaxPoints = 10000;

/// InputError unless `option` (as spelt: "--devices", "-n") is one of run's
/// options that a point may set: sweep writes each point's report itself,
/// runs the points in this process and drops their output.
void check_sweepable(const std::string& source, const std::string& text, const std::string& option) {
  static const std::set<std::string> kept{"--report", "--trace",  "--html", "--save-output",
                                          "--quiet",  "-q",       "--help", "-h",
                                          "--launcher"};
  if (kept.count(option) != 0) {
    throw InputError(source, text,
                     option + " is not something to sweep (sweep writes each point's report itself; give sweep's own "
                              "--report or --html before `run`)");
  }
  // The run command as main registers it, to ask for its options by name.
  CLI::App app;
  const Command run = add_run_command(app);
  if (run.app->get_option_no_throw(option) == nullptr) {
    std::vector<std::string> names;
    for (const CLI::Option* known : run.app->get_options()) {
      for (const std::string& name : known->get_lnames()) names.push_back("--" + name);
    }
    const std::optional<std::string> near = nearest_name(option, names);
    std::string list;
    for (const std::string& name : names) list += (list.empty() ? "" : ", ") + name;
    throw InputError(source, text,
                     option + " is not an option of run" + (near ? " (did you mean " + *near + "?)" : "") +
                         "; run's options are " + list);
  }
}

SweptOption parse_over(const std::string& text) {
  const size_t equals = text.find('=');
  const std::string name = text.substr(0, equals);
  if (equals == std::string::npos || name.empty() || equals + 1 >= text.size()) {
    throw InputError("--over", text, "give OPTION=V1,V2,... (an option of run without its dashes), e.g. devices=1,2,4");
  }
  if (name.front() == '-' || name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos) {
    throw InputError("--over", text, "name the option as run spells it, without dashes: devices, batch, strategy...");
  }
  check_sweepable("--over", text, "--" + name);
  SweptOption option{name, {}};
  // Split by hand: getline would drop a trailing empty value ("1,2,").
  const std::string values = text.substr(equals + 1);
  for (size_t start = 0;;) {
    const size_t comma = values.find(',', start);
    const std::string value = values.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    if (value.empty()) throw InputError("--over", text, "has an empty value; separate values by single commas");
    option.values.push_back(value);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return option;
}

void check_run_arguments(const std::vector<std::string>& arguments, const std::vector<SweptOption>& swept) {
  if (arguments.empty() || arguments.front() != "run") {
    throw InputError("sweep", "",
                     "give the run command line to sweep after sweep's own options, e.g. splitscope sweep --over "
                     "devices=1,2,4,8 run mlp --strategy data --train --backend sim --machine 2x8-h100-ib");
  }
  for (const std::string& word : arguments) {
    for (const char* own : {"--report", "--trace", "--html", "--save-output"}) {
      if (word == own || word.rfind(std::string(own) + "=", 0) == 0) {
        throw InputError(own, "",
                         "everything after `run` is the swept run's command line, and sweep gives each point its own "
                         "report; put sweep's --report or --html before `run`");
      }
    }
    if (word == "--launcher" || word.rfind("--launcher=", 0) == 0) {
      throw InputError("--launcher", "", "sweep runs its points in this process; run them one by one under mpirun");
    }
  }
  for (const SweptOption& option : swept) {
    for (const std::string& word : arguments) {
      const std::string long_name = "--" + option.name;
      bool given = word == long_name || word.rfind(long_name + "=", 0) == 0;
      for (const auto& [name, short_name] : short_names()) given = given || (name == option.name && word == short_name);
      if (given) {
        throw InputError("--over", option.name,
                         "the run command line gives " + word + " already; drop it there, sweep sets it per point");
      }
    }
  }
}

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

/// One point: `run ARGS --OPTION VALUE ... --report FILE --quiet`, run here,
/// its standard output dropped. Returns run's exit code.
int run_point(const std::vector<std::string>& arguments, const std::vector<std::pair<std::string, std::string>>& values,
              const std::string& report) {
  std::vector<std::string> words{"splitscope"};
  words.insert(words.end(), arguments.begin(), arguments.end());
  for (const auto& [option, value] : values) {
    if (option == kVariant) {
      // A variant is a set of run's options, words apart ("--spare 1").
      std::istringstream variant(value);
      for (std::string word; variant >> word;) words.push_back(word);
      continue;
    }
    words.push_back("--" + option);
    words.push_back(value);
  }
  words.insert(words.end(), {"--report", report, "--quiet"});
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
  if (options.over.empty() && options.variants.empty()) {
    throw InputError("--over", "", "give at least one OPTION=V1,V2,... (or --variant=OPTIONS) to sweep");
  }
  std::vector<SweptOption> swept;
  if (!options.variants.empty()) {
    for (const std::string& variant : options.variants) {
      if (variant.empty() || variant.front() != '-') {
        throw InputError("--variant", variant, "give options of run, e.g. --variant=--async or --variant='--spare 1'");
      }
      std::istringstream words(variant);
      for (std::string word; words >> word;) {
        if (word.front() == '-' && word.size() > 1 && !std::isdigit(static_cast<unsigned char>(word[1]))) {
          check_sweepable("--variant", variant, word.substr(0, word.find('=')));
        }
      }
    }
    swept.push_back({kVariant, options.variants});
  }
  for (const std::string& text : options.over) {
    swept.push_back(parse_over(text));
    for (size_t i = 0; i + 1 < swept.size(); ++i) {
      if (swept[i].name == swept.back().name) throw InputError("--over", text, "sweeps " + text + " twice");
    }
  }
  check_run_arguments(arguments, swept);
  check_command_outputs({{"--report", options.report}, {"--html", options.html}}, files_read(arguments, swept));

  OptionSweep sweep;
  sweep.run_arguments.assign(arguments.begin() + 1, arguments.end());
  for (const SweptOption& option : swept) sweep.over.push_back(option.name);
  size_t points = 1;
  for (const SweptOption& option : swept) {
    // Checked as it grows: 64 options of two values each would wrap the product to 0.
    if (option.values.size() > kMaxPoints / points) {
      throw InputError("--over", option.name,
                       fmt::format("the sweep would run more than {} points (each a whole run); sweep fewer values, "
                                   "or split the sweep",
                                   kMaxPoints));
    }
    points *= option.values.size();
  }

  const SweepFolder folder;

  for (size_t index = 0; index < points; ++index) {
    std::vector<std::pair<std::string, std::string>> values;
    size_t rest = index;
    for (const SweptOption& option : swept) {  // the first option varies fastest
      values.emplace_back(option.name, option.values[rest % option.values.size()]);
      rest /= option.values.size();
    }
    std::string label;
    for (const auto& [option, value] : values) label += fmt::format("{}{}={}", label.empty() ? "" : " ", option, value);
    if (!options.quiet) fmt::print(stderr, "sweep: {} ({} of {})\n", label, index + 1, points);
    const std::string report = (folder.path() / fmt::format("point-{}.json", index)).string();
    if (const int status = run_point(arguments, values, report); status != 0) {
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
  CLI::App* sub = app.add_subcommand(
      "sweep",
      "Run one `run` command line over a list of values of any of its options and show how throughput follows "
      "them\n(e.g. splitscope sweep --over devices=1,2,4,8,16 run mlp --strategy data --train --backend sim "
      "--machine 2x8-h100-ib)");
  // Everything from the first word sweep does not know (`run`) on is the swept command line.
  // (`run` must not be read as the top level's own command: no fallthrough.)
  sub->prefix_command();
  sub->formatter(std::make_shared<SweepUsage>());
  sub->fallthrough(false);
  sub->add_option("--over", options->over,
                  "OPTION=V1,V2,...: an option of run (no dashes) and its values; repeat to sweep the product "
                  "(the first varies along the x axis)")
      ->allow_extra_args(false);  // one value an occurrence: what follows is the run command line
  sub->add_option("--variant", options->variants,
                  "=OPTIONS: a set of run's options as one point (--variant=--async --variant='--spare 1'); "
                  "repeat for each; swept first (the x axis), before any --over")
      ->allow_extra_args(false);
  sub->add_flag("--json", options->json, "print the sweep as JSON (splitscope.sweep/1) instead of the table");
  sub->add_flag("--quiet,-q", options->quiet, "no progress line per point on stderr");
  sub->add_option("--report", options->report, "write the sweep as JSON (splitscope.sweep/1)");
  sub->add_option("--html", options->html, "write a self-contained HTML page with the throughput curve");
  return {sub, [options, sub](const std::vector<std::string>&) { return sweep_command(*options, sub->remaining()); }};
}

}  // namespace splitscope::cli
