// The command line: the input is the arguments, one per line (the first is
// the command), given to run_cli as `splitscope` would get them. What it may
// reach is bounded so that every input runs in milliseconds and touches
// nothing outside a scratch folder (fuzz/README.md, "The command line"):
//   - run, compare, demo, collective, ensemble and sweep always simulate: any
//     --backend/-b is dropped and `--backend sim` appended (no cpu threads,
//     no GPU; for sweep it ends the swept run's command line), and a sweep
//     that names cpu or cuda anywhere (--over backend=cpu) is rejected;
//   - lessons only with --only and without --measure (all ten take 20 s);
//   - search within a budget of 1 s (--budget-s replaced);
//   - calibrate only with --from (measuring a GPU takes minutes); never
//     validate (it measures on the cpu backend by design);
//   - no argument may hold '/', so networks and machines come from the zoo or
//     from the scratch folder, and outputs land in it; it is the working
//     directory, emptied after every input;
//   - `demo rnn` without a step count simulates 8 steps, not its default 64
//     (with_few_rnn_steps);
//   - `prices` prices mlp-small and the zoo's other `-small` networks the
//     input names, never the whole zoo (its default, 78 s under ASan) nor a
//     full-size network (resnet50 alone 6 s) (prices_small_networks_only);
//   - numbers have at most 3 digits and no hex, octal, binary or exponent
//     form, and there are at most 24 arguments of at most 64 bytes: the sizes that hang or need
//     gigabytes are the limits' own tests (issue 19), not this fuzzer's.
// Inputs outside these bounds are rejected (-1: libFuzzer keeps none of them).
// Standard output goes to /dev/null; error messages stay on stderr.

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "cli/run_cli.hpp"
#include "fuzz/fuzz_support.hpp"
#include "ir/zoo.hpp"

namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxArguments = 24;
constexpr size_t kMaxArgumentLength = 64;
constexpr size_t kMaxDigits = 3;
constexpr const char* kRnnDemoFuzzSteps = "8";

fs::path scratch_folder;

void remove_scratch_folder() {
  std::error_code ignored;
  if (!scratch_folder.empty()) fs::remove_all(scratch_folder, ignored);
}

/// Once: stdout to /dev/null, and a scratch folder as the working directory.
void set_up_once() {
  if (!scratch_folder.empty()) return;
  const int null_fd = ::open("/dev/null", O_WRONLY);
  if (null_fd < 0 || ::dup2(null_fd, STDOUT_FILENO) < 0) std::abort();
  ::close(null_fd);
  std::string pattern = (fs::temp_directory_path() / "splitscope-fuzz-cli-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr) std::abort();
  scratch_folder = pattern;
  fs::current_path(scratch_folder);
  std::atexit(remove_scratch_folder);
}

void empty_scratch_folder() {
  std::error_code ignored;
  for (const auto& entry : fs::directory_iterator(scratch_folder, ignored)) fs::remove_all(entry.path(), ignored);
}

/// Numbers small enough to keep every command fast (see the top of the file).
bool small_numbers_only(const std::string& argument) {
  size_t run = 0;
  for (size_t i = 0; i < argument.size(); ++i) {
    const char c = argument[i];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      if (++run > kMaxDigits) return false;
      const char next = i + 1 < argument.size() ? argument[i + 1] : '\0';
      if (c == '0' && run == 1 && std::strchr("xXbBoO", next) != nullptr && next != '\0') return false;
      if (next == 'e' || next == 'E') return false;
    } else {
      run = 0;
    }
  }
  return true;
}

bool is_backend_option(const std::string& argument) {
  if (argument == "--backend" || argument.starts_with("--backend=")) return true;
  // Short options, alone or bundled (-qb, -bcpu): any that holds 'b' (no other short option has it).
  return argument.size() > 1 && argument[0] == '-' && argument[1] != '-' && argument.find('b') != std::string::npos;
}

/// `demo rnn` without a step count gets kRnnDemoFuzzSteps: its default on the
/// simulator (64 steps of 4 layers, each a cell op per micro-batch and device)
/// made a demo input cost as much as fifty others, and demos were most of
/// the target's time. The code run is the same on fewer steps. An input
/// that names steps anywhere (--steps, --sweep steps=...) keeps its own.
void with_few_rnn_steps(std::vector<std::string>& lines) {
  const auto rnn = std::find(lines.begin(), lines.end(), "rnn");
  if (rnn == lines.end()) return;
  for (const std::string& line : lines) {
    if (line.find("steps") != std::string::npos) return;
  }
  lines.insert(rnn + 1, {"--steps", kRnnDemoFuzzSteps});
}

/// `prices` with no network prices every op slice of the whole zoo: 78 s of
/// CPU under ASan + UBSan for one input (7 December 2026), past the 10 s
/// timeout, so the corpus's own `prices --machine h100-pcie-4` stopped every
/// campaign at its start; one full-size network alone took 6 s (resnet50).
/// So mlp-small goes first (a positional, which no option can take as its
/// value), and an input naming a full-size zoo network is out of bounds. The
/// code run is the same on fewer samples.
bool prices_small_networks_only(std::vector<std::string>& lines) {
  static const std::vector<std::string> zoo = splitscope::zoo_names(splitscope::ZooShelf::kNetworks);
  for (const std::string& line : lines) {
    const std::string stem = line.ends_with(".json") ? line.substr(0, line.size() - 5) : line;
    const bool full_size = stem.find("small") == std::string::npos;
    if (full_size && std::find(zoo.begin(), zoo.end(), stem) != zoo.end()) return false;
  }
  lines.insert(lines.begin() + 1, "mlp-small");
  return true;
}

/// The arguments the input stands for, or none when it is out of bounds.
std::optional<std::vector<std::string>> arguments_from(std::string_view text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = std::min(text.find('\n', start), text.size());
    lines.emplace_back(text.substr(start, end - start));
    if (lines.size() > kMaxArguments) return std::nullopt;
    start = end + 1;
  }
  for (const std::string& line : lines) {
    if (line.find('\0') != std::string::npos || line.find('/') != std::string::npos) return std::nullopt;
    if (line.size() > kMaxArgumentLength || line == "--" || !small_numbers_only(line)) return std::nullopt;
  }
  const std::string command = lines.front();
  if (command == "calibrate" && std::find(lines.begin(), lines.end(), "--from") == lines.end()) return std::nullopt;
  if (command == "validate") return std::nullopt;
  if (command == "lessons") {
    // All ten lessons take 20 s; --measure runs on the cpu backend.
    const bool only =
        std::any_of(lines.begin(), lines.end(), [](const std::string& line) { return line.starts_with("--only"); });
    const bool measure = std::any_of(lines.begin(), lines.end(), [](const std::string& line) {
      return line.find("measure") != std::string::npos;
    });
    if (!only || measure) return std::nullopt;
  }
  if (command == "search") {
    // Its budget (60 s by default) bounds it: 1 s here, whatever the input says.
    std::vector<std::string> budgeted;
    for (size_t i = 0; i < lines.size(); ++i) {
      if (lines[i] == "--budget-s") {
        ++i;  // and its value
      } else if (!lines[i].starts_with("--budget-s=")) {
        budgeted.push_back(lines[i]);
      }
    }
    budgeted.insert(budgeted.end(), {"--budget-s", "1"});
    return budgeted;
  }
  if (command == "demo") with_few_rnn_steps(lines);
  if (command == "prices" && !prices_small_networks_only(lines)) return std::nullopt;
  if (command == "sweep") {
    // Its points are runs: simulated, as run's are; a swept or varied backend is refused.
    for (const std::string& line : lines) {
      if (line.find("cpu") != std::string::npos || line.find("cuda") != std::string::npos) return std::nullopt;
    }
  }
  if (command != "run" && command != "compare" && command != "demo" && command != "collective" &&
      command != "ensemble" && command != "sweep") {
    return lines;
  }

  std::vector<std::string> simulated;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!is_backend_option(lines[i])) {
      simulated.push_back(lines[i]);
    } else if (lines[i] == "--backend" || lines[i] == "-b") {
      ++i;  // and its value
    }
  }
  simulated.push_back("--backend");
  simulated.push_back("sim");
  return simulated;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto arguments = arguments_from(splitscope::fuzz::as_text(data, size));
  if (!arguments) return -1;
  set_up_once();
  std::vector<std::string> owned{"splitscope"};
  owned.insert(owned.end(), arguments->begin(), arguments->end());
  std::vector<char*> argv;
  for (std::string& argument : owned) argv.push_back(argument.data());
  argv.push_back(nullptr);
  const int status = splitscope::cli::run_cli(static_cast<int>(owned.size()), argv.data());
  empty_scratch_folder();
  if (status < 0 || status > 3) {
    std::fprintf(stderr, "fuzz: exit code %d is none of 0, 1, 2, 3\n", status);
    std::abort();
  }
  return 0;
}
