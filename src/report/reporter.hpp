#pragma once
/// \file
/// Reporters: the sinks of a finished `run` or `compare`, in the manner of
/// Google Benchmark's BenchmarkReporter. The command builds the list from
/// its options (a table on stdout; --report, --trace, --html files) and hands
/// every reporter the same Comparison; no output is a flag threaded through
/// the code that runs. File reporters add their file to the command's
/// OutputBatch (util/output_batch.hpp), which publishes every output file or
/// none: a failure never leaves a partial report, nor a report without its trace.
///
/// Typical use (compare):
///   OutputBatch files;
///   auto reporters = make_reporters(ReportKind::kCompare, std::cout, outputs, files);
///   ComparisonBuilder builder(make_report_context(args));
///   for (...) builder.add(plan, executor.run(*plan, options));
///   const Comparison comparison = std::move(builder).build();
///   for (auto& reporter : reporters) reporter->report(comparison);
///   files.publish();

#include <iosfwd>
#include <memory>
#include <string>
#include <vector>

#include "report/comparison.hpp"
#include "util/output_batch.hpp"

namespace splitscope {

class Reporter {
 public:
  virtual ~Reporter() = default;
  /// Writes this reporter's view of the finished runs.
  virtual void report(const Comparison& comparison) = 0;
};

/// `compare`'s tables (compare_text) on a stream.
class CompareTableReporter : public Reporter {
 public:
  explicit CompareTableReporter(std::ostream& out) : out_(out) {}
  void report(const Comparison& comparison) override;

 private:
  std::ostream& out_;
};

/// `run`'s text (run_text) of every shown run of the primary group.
class RunTextReporter : public Reporter {
 public:
  explicit RunTextReporter(std::ostream& out) : out_(out) {}
  void report(const Comparison& comparison) override;

 private:
  std::ostream& out_;
};

/// `run --report FILE`: the run report of the primary group's (first) run.
class RunJsonReporter : public Reporter {
 public:
  RunJsonReporter(std::string path, OutputBatch& files) : path_(std::move(path)), files_(files) {}
  void report(const Comparison& comparison) override;

 private:
  std::string path_;
  OutputBatch& files_;
};

/// `compare --report FILE`: the compare report.
class CompareJsonReporter : public Reporter {
 public:
  CompareJsonReporter(std::string path, OutputBatch& files) : path_(std::move(path)), files_(files) {}
  void report(const Comparison& comparison) override;

 private:
  std::string path_;
  OutputBatch& files_;
};

/// `--trace FILE`: a Chrome trace of every shown, timed run (one run: pid = device).
class ChromeTraceReporter : public Reporter {
 public:
  ChromeTraceReporter(std::string path, OutputBatch& files) : path_(std::move(path)), files_(files) {}
  void report(const Comparison& comparison) override;

 private:
  std::string path_;
  OutputBatch& files_;
};

/// `--html FILE`: the self-contained HTML page.
class HtmlReporter : public Reporter {
 public:
  HtmlReporter(std::string path, OutputBatch& files) : path_(std::move(path)), files_(files) {}
  void report(const Comparison& comparison) override;

 private:
  std::string path_;
  OutputBatch& files_;
};

/// The files a command was asked to write (empty: not asked).
struct ReportOutputs {
  std::string report;  ///< --report FILE.json
  std::string trace;   ///< --trace FILE.json
  std::string html;    ///< --html FILE.html
};

enum class ReportKind {
  kRun,      ///< `run`: run_text on the stream, a run report, a trace, a page
  kCompare,  ///< `compare`: compare_text on the stream, a compare report, a trace, a page
};

/// The reporters for a command: its text on `out`, then one per file asked
/// for. The command has checked the paths already, with its inputs
/// (cli/command_outputs.hpp). The file reporters add to `files`; the caller
/// publishes it.
std::vector<std::unique_ptr<Reporter>> make_reporters(ReportKind kind, std::ostream& out,
                                                      const ReportOutputs& outputs, OutputBatch& files);

}  // namespace splitscope
