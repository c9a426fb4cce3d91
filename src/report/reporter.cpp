#include "report/reporter.hpp"

#include <ostream>

#include "report/chrome_trace.hpp"
#include "report/compare_table.hpp"
#include "report/html_report.hpp"
#include "report/report_json.hpp"
#include "util/atomic_file.hpp"
#include "util/check.hpp"

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
  write_file_atomically(path_, run_report_json(runs.front(), &comparison.context).dump(2) + "\n");
}

void CompareJsonReporter::report(const Comparison& comparison) {
  write_file_atomically(path_, compare_json(comparison).dump(2) + "\n");
}

void ChromeTraceReporter::report(const Comparison& comparison) {
  std::vector<const RunReport*> timed;
  for (const RunReport* run : comparison.all_runs()) {
    if (run->summary.timed()) timed.push_back(run);
  }
  write_file_atomically(path_, chrome_trace_json(timed).dump() + "\n");
}

void HtmlReporter::report(const Comparison& comparison) { write_file_atomically(path_, html_report(comparison)); }

}  // namespace splitscope
