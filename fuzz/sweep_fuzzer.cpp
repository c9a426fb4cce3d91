// `sweep`'s command line (docs/commands.md, sweep): the input is the words
// after `splitscope sweep`, one per line: sweep's own options (--over,
// --variant, --json, --report...) and then the run command line. They are
// parsed by sweep's own options (add_sweep_options) as main parses them,
// checked and expanded into points (SweepPoints), without running any: a
// point is a whole `run`, which the cli target reaches. What it checks
// beyond "no crash":
//   - sweep refuses a command line only with an InputError or a
//     CLI11 parse error (both exit 2);
//   - the number of points is the product of the swept values' counts, and
//     at most kMaxSweepPoints;
//   - every point's values differ from every other point's (the first
//     kSweepFuzzPointsCompared points), and its command line is run's
//     command line followed by each swept option once, then --quiet;
//   - the first and last points' command lines parse as `run`'s (or are
//     refused with a parse error, a value run does not take).
// Inputs of more than 32 words are rejected (-1).

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "cli/command.hpp"
#include "cli/command_line_words.hpp"
#include "cli/sweep_points.hpp"
#include "fuzz/fuzz_support.hpp"

namespace {

constexpr size_t kSweepFuzzMaxWords = 32;
constexpr size_t kSweepFuzzPointsCompared = 64;

[[noreturn]] void sweep_fuzz_bug(const std::string& what) {
  std::fprintf(stderr, "fuzz: %s\n", what.c_str());
  std::abort();
}

std::vector<std::string> sweep_fuzz_words(std::string_view text) {
  std::vector<std::string> words;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    words.emplace_back(text.substr(start, end - start));
    start = end + 1;
  }
  return words;
}

std::vector<char*> sweep_fuzz_argv(std::vector<std::string>& words) {
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  return argv;
}

/// A point's command line parsed as main parses `run`'s; a parse error is a value run refuses.
void parse_as_run(std::vector<std::string> words) {
  using namespace splitscope::cli;
  CLI::App app;
  app.require_subcommand(1);
  app.fallthrough();
  add_run_command(app);
  std::vector<char*> argv = sweep_fuzz_argv(words);
  if (empty_list_item_problem(app, static_cast<int>(words.size()), argv.data())) return;
  try {
    app.parse(static_cast<int>(words.size()), argv.data());
  } catch (const CLI::ParseError&) {
  }
}

/// The points' invariants (the top of the file).
void check_points(const splitscope::cli::SweepPoints& points) {
  size_t product = 1;
  for (const auto& option : points.swept()) product *= option.values.size();
  if (points.size() != product || points.size() == 0 || points.size() > splitscope::cli::kMaxSweepPoints) {
    sweep_fuzz_bug("sweep has " + std::to_string(points.size()) + " points, the values' product is " +
                   std::to_string(product));
  }
  std::set<std::vector<std::pair<std::string, std::string>>> seen;
  const size_t compared = std::min(points.size(), kSweepFuzzPointsCompared);
  for (size_t index = 0; index < compared; ++index) {
    if (!seen.insert(points.values(index)).second) {
      // Two equal values of one option (devices=2,2) make equal points: that is the user's list.
      bool repeated_value = false;
      for (const auto& option : points.swept()) {
        std::set<std::string> distinct(option.values.begin(), option.values.end());
        repeated_value = repeated_value || distinct.size() != option.values.size();
      }
      if (!repeated_value) sweep_fuzz_bug("two points of the sweep have the same values");
    }
  }
  const std::vector<std::string> line = points.command_line(0);
  const auto& run = points.run_arguments();
  if (line.size() < run.size() + 2 || !std::equal(run.begin(), run.end(), line.begin() + 1) ||
      line.back() != "--quiet") {
    sweep_fuzz_bug("a point's command line is not run's followed by the swept options and --quiet");
  }
  parse_as_run(line);
  if (points.size() > 1) parse_as_run(points.command_line(points.size() - 1));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace splitscope;
  std::vector<std::string> words = sweep_fuzz_words(fuzz::as_text(data, size));
  if (words.size() > kSweepFuzzMaxWords) return -1;
  for (const std::string& word : words) {
    if (word.find('\0') != std::string::npos) return -1;
  }
  words.insert(words.begin(), {"splitscope", "sweep"});
  std::vector<char*> argv = sweep_fuzz_argv(words);
  const int argc = static_cast<int>(words.size());
  fuzz::refusals_are_input_errors([&] {
    CLI::App app;
    app.require_subcommand(1);
    app.fallthrough();
    cli::SweepOptions options;
    CLI::App* sweep = cli::add_sweep_options(app, options);
    if (cli::empty_list_item_problem(app, argc, argv.data())) return;
    try {
      app.parse(argc, argv.data());
    } catch (const CLI::ParseError&) {
      return;  // main's exit 2 (help and --version included)
    }
    check_points(cli::SweepPoints(options, sweep->remaining()));
  });
  return 0;
}
