#include "report/reporter.hpp"

#include <filesystem>
#include <ostream>

#include "report/chrome_trace.hpp"
#include "report/compare_table.hpp"
#include "report/html_report.hpp"
#include "report/report_json.hpp"
#include "util/check.hpp"
#include "util/errors.hpp"
#include "util/json_dump.hpp"

namespace splitscope {

void CompareTableReporter::report(const Comparison& comparison) { out_ << compare_text(comparison) << std::flush; }

void RunTextReporter::report(const Comparison& comparison) {
  const auto& runs = comparison.primary().runs;
  for (size_t i = 0; i < runs.size(); ++i) {
    if (i > 0) out_ << "\n";
    out_ << run_text(runs[i]);
  }
  out_ << std::flush;
}

void RunJsonReporter::report(const Comparison& comparison) {
  const auto& runs = comparison.primary().runs;
  SPLITSCOPE_CHECK(!runs.empty(), "a run report needs a shown run");
  files_.add("--report", path_, dump_json(run_report_json(runs.front(), &comparison.context), 2) + "\n");
}

void CompareJsonReporter::report(const Comparison& comparison) {
  files_.add("--report", path_, dump_json(compare_json(comparison), 2) + "\n");
}

void ChromeTraceReporter::report(const Comparison& comparison) {
  std::vector<const RunReport*> timed;
  for (const RunReport* run : comparison.all_runs()) {
    if (run->summary.timed()) timed.push_back(run);
  }
  files_.add("--trace", path_, [&timed](const std::function<void(std::string_view)>& put) {
    write_chrome_trace(timed, put);
    put("\n");
  });
}

void HtmlReporter::report(const Comparison& comparison) { files_.add("--html", path_, html_report(comparison)); }

std::vector<std::unique_ptr<Reporter>> make_reporters(ReportKind kind, std::ostream& out,
                                                      const ReportOutputs& outputs, OutputBatch& files) {
  std::vector<std::unique_ptr<Reporter>> reporters;
  if (kind == ReportKind::kRun) {
    reporters.push_back(std::make_unique<RunTextReporter>(out));
  } else {
    reporters.push_back(std::make_unique<CompareTableReporter>(out));
  }
  if (!outputs.report.empty()) {
    if (kind == ReportKind::kRun) {
      reporters.push_back(std::make_unique<RunJsonReporter>(outputs.report, files));
    } else {
      reporters.push_back(std::make_unique<CompareJsonReporter>(outputs.report, files));
    }
  }
  if (!outputs.trace.empty()) {
    reporters.push_back(std::make_unique<ChromeTraceReporter>(outputs.trace, files));
  }
  if (!outputs.html.empty()) {
    reporters.push_back(std::make_unique<HtmlReporter>(outputs.html, files));
  }
  return reporters;
}

}  // namespace splitscope
