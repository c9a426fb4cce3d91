#pragma once
/// \file
/// What `sweep` makes of its command line before it runs anything: its own
/// options, the swept values (--variant, --over) checked against run's
/// options and the run command line, and each point's whole `run` command
/// line. sweep_command.cpp runs the points; the sweep fuzz target
/// (fuzz/sweep_fuzzer.cpp) expands them without running.

#include <CLI/CLI.hpp>
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

namespace splitscope::cli {

struct SweepOptions {
  std::vector<std::string> over;
  std::vector<std::string> variants;
  bool json = false;
  bool quiet = false;
  std::string report;
  std::string html;
};

/// Registers `sweep` and its options (filled into `options` when parsed) on `app`.
CLI::App* add_sweep_options(CLI::App& app, SweepOptions& options);

struct SweptOption {
  std::string name;  ///< without the dashes; "variant" for --variant
  std::vector<std::string> values;
};

/// The most points one sweep runs: each is a whole run.
inline constexpr size_t kMaxSweepPoints = 10000;

/// The points of one sweep: the cartesian product of the swept values, the
/// first swept option varying fastest.
class SweepPoints {
 public:
  /// Checks the swept values and the run command line (`run MODEL ...`);
  /// InputError (exit 2) naming the option for anything run would not take,
  /// anything sweep sets itself, or more than kMaxSweepPoints points.
  SweepPoints(const SweepOptions& options, std::vector<std::string> run_arguments);

  size_t size() const { return size_; }
  const std::vector<SweptOption>& swept() const { return swept_; }
  const std::vector<std::string>& run_arguments() const { return run_arguments_; }
  /// Point `index`'s value of each swept option, in swept() order.
  std::vector<std::pair<std::string, std::string>> values(size_t index) const;
  /// Point `index` as `run` parses it: `splitscope run ... --OPTION VALUE ...
  /// --quiet` (a variant's words as they are).
  std::vector<std::string> command_line(size_t index) const;

 private:
  std::vector<SweptOption> swept_;
  std::vector<std::string> run_arguments_;
  size_t size_ = 1;
};

}  // namespace splitscope::cli
