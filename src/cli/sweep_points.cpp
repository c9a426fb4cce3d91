#include "cli/sweep_points.hpp"

#include <fmt/format.h>

#include <cctype>
#include <optional>
#include <set>
#include <sstream>

#include "cli/command.hpp"
#include "cli/did_you_mean.hpp"
#include "util/errors.hpp"

namespace splitscope::cli {
namespace {

/// The swept "option" of `--variant`: whole sets of run's options.
constexpr const char* kSweepVariantName = "variant";

/// `run`'s short spellings, so that `-n 2` in the swept command line counts as --devices.
const std::vector<std::pair<std::string, std::string>>& sweep_run_short_names() {
  static const std::vector<std::pair<std::string, std::string>> names{
      {"devices", "-n"}, {"strategy", "-s"}, {"microbatches", "-m"}};
  return names;
}

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
    if (word == "--help" || word == "-h" || word == "--version") {
      throw InputError(word, "", "asks for text, not a run to sweep; see splitscope run --help");
    }
  }
  for (const SweptOption& option : swept) {
    for (const std::string& word : arguments) {
      const std::string long_name = "--" + option.name;
      bool given = word == long_name || word.rfind(long_name + "=", 0) == 0;
      for (const auto& [name, short_name] : sweep_run_short_names()) {
        given = given || (name == option.name && word == short_name);
      }
      if (given) {
        throw InputError("--over", option.name,
                         "the run command line gives " + word + " already; drop it there, sweep sets it per point");
      }
    }
  }
}

}  // namespace

CLI::App* add_sweep_options(CLI::App& app, SweepOptions& options) {
  CLI::App* sub = app.add_subcommand(
      "sweep",
      "Run one `run` command line over a list of values of any of its options and show how throughput follows "
      "them\n(e.g. splitscope sweep --over devices=1,2,4,8,16 run mlp --strategy data --train --backend sim "
      "--machine 2x8-h100-ib)");
  // Everything from the first word sweep does not know (`run`) on is the swept command line.
  // (`run` must not be read as the top level's own command: no fallthrough.)
  sub->prefix_command();
  sub->fallthrough(false);
  sub->add_option("--over", options.over,
                  "OPTION=V1,V2,...: an option of run (no dashes) and its values; repeat to sweep the product "
                  "(the first varies along the x axis)")
      ->allow_extra_args(false);  // one value an occurrence: what follows is the run command line
  sub->add_option("--variant", options.variants,
                  "=OPTIONS: a set of run's options as one point (--variant=--async --variant='--spare 1'); "
                  "repeat for each; swept first (the x axis), before any --over")
      ->allow_extra_args(false);
  sub->add_flag("--json", options.json, "print the sweep as JSON (splitscope.sweep/1) instead of the table");
  sub->add_flag("--quiet,-q", options.quiet, "no progress line per point on stderr");
  sub->add_option("--report", options.report, "write the sweep as JSON (splitscope.sweep/1)");
  sub->add_option("--html", options.html, "write a self-contained HTML page with the throughput curve");
  return sub;
}

SweepPoints::SweepPoints(const SweepOptions& options, std::vector<std::string> run_arguments)
    : run_arguments_(std::move(run_arguments)) {
  if (options.over.empty() && options.variants.empty()) {
    throw InputError("--over", "", "give at least one OPTION=V1,V2,... (or --variant=OPTIONS) to sweep");
  }
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
    swept_.push_back({kSweepVariantName, options.variants});
  }
  for (const std::string& text : options.over) {
    swept_.push_back(parse_over(text));
    for (size_t i = 0; i + 1 < swept_.size(); ++i) {
      if (swept_[i].name == swept_.back().name) throw InputError("--over", text, "sweeps " + text + " twice");
    }
  }
  check_run_arguments(run_arguments_, swept_);
  for (const SweptOption& option : swept_) {
    // Checked as it grows: 64 options of two values each would wrap the product to 0.
    if (option.values.size() > kMaxSweepPoints / size_) {
      throw InputError("--over", option.name,
                       fmt::format("the sweep would run more than {} points (each a whole run); sweep fewer values, "
                                   "or split the sweep",
                                   kMaxSweepPoints));
    }
    size_ *= option.values.size();
  }
}

std::vector<std::pair<std::string, std::string>> SweepPoints::values(size_t index) const {
  std::vector<std::pair<std::string, std::string>> values;
  size_t rest = index;
  for (const SweptOption& option : swept_) {  // the first option varies fastest
    values.emplace_back(option.name, option.values[rest % option.values.size()]);
    rest /= option.values.size();
  }
  return values;
}

std::vector<std::string> SweepPoints::command_line(size_t index) const {
  std::vector<std::string> words{"splitscope"};
  words.insert(words.end(), run_arguments_.begin(), run_arguments_.end());
  for (const auto& [option, value] : values(index)) {
    if (option == kSweepVariantName) {
      // A variant is a set of run's options, words apart ("--spare 1").
      std::istringstream variant(value);
      for (std::string word; variant >> word;) words.push_back(word);
      continue;
    }
    words.push_back("--" + option);
    words.push_back(value);
  }
  words.push_back("--quiet");
  return words;
}

}  // namespace splitscope::cli
