#pragma once
/// \file
/// The JSON reports of docs/reports.md: a run report (`run --report`, and each
/// entry of `compare`'s runs) and the compare report. Every field docs/reports.md
/// lists is present (null where a run that does not fit has no number), plus
/// extras: p95 and spread, overlap, shares, bubble, per-kind data movement
/// with nccl-tests' algbw/busbw, the critical path's gap, the memory check,
/// the deciding factor, and a Google-Benchmark-style `context` block.
/// src/report/schema/{report,compare}.schema.json describe both.

#include <nlohmann/json.hpp>
#include <string>

#include "report/comparison.hpp"
#include "report/report_context.hpp"
#include "report/run_report.hpp"

namespace splitscope {

inline constexpr const char* kReportSchema = "splitscope.report/1";
inline constexpr const char* kCompareSchema = "splitscope.compare/1";

/// A run report; `context` adds the `context` block (a compare report has one
/// for all its runs instead).
nlohmann::ordered_json run_report_json(const RunReport& report, const ReportContext* context);

/// `{"schema": "splitscope.compare/1", "runs": [...], "best": ...}`: the
/// primary group's runs, best first, and its best strategy (null when no run
/// fits); `predicted` holds the other groups (e.g. the simulator's
/// predictions beside measured runs) in the same shape.
nlohmann::ordered_json compare_json(const Comparison& comparison);

/// The context block alone.
nlohmann::ordered_json context_json(const ReportContext& context);

}  // namespace splitscope
