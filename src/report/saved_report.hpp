#pragma once
/// \file
/// A saved JSON report read back, to draw the page its command's `--html`
/// writes (`splitscope report FILE.json --html OUT.html`). Each kind is read
/// back into the structures its page is drawn from, and drawn by the same
/// function as the command's own page, so the two cannot drift apart:
///
/// - `splitscope.validate/1` and `splitscope.sweep/1`: the same page, byte for byte.
/// - `splitscope.report/1` and `splitscope.compare/1`: the same page, except
///   that a JSON report keeps no spans, so each run's timeline and (training)
///   its memory-over-the-step chart are replaced by one line saying so; the
///   tables, the per-device bars and the loss curves are the same.
///
/// Reports of an earlier build of the same schema version lack members
/// added since (reports/ keeps such): those read as absent (no training
/// block, no measured repeats or ties; a group's looser ranking verdicts
/// are its strict one), as the pages of that time drew them.
///
/// The page's time scale is the representative repeat's makespan, which a
/// report does not store: per device, compute + exposed transfer + idle
/// adds up to it (run_summary.hpp), so it is read back from there.

#include <nlohmann/json.hpp>
#include <string>

#include "report/comparison.hpp"
#include "report/sweep_report.hpp"
#include "report/validation_report.hpp"

namespace splitscope {

/// The kinds `report` draws, by their `schema` field.
enum class SavedReportKind { kRun, kCompare, kValidate, kSweep };

/// The kind of a parsed report; InputError naming `source`, the `schema`
/// field and the kinds it draws when it is none of them.
SavedReportKind saved_report_kind(const nlohmann::ordered_json& report, const std::string& source);

/// A run report (`run --report`) as a Comparison of one group holding its run.
Comparison comparison_from_run_json(const nlohmann::ordered_json& report);
/// A compare report (`compare --report`): its runs, then each `predicted` group.
Comparison comparison_from_compare_json(const nlohmann::ordered_json& report);
OptionSweep option_sweep_from_json(const nlohmann::ordered_json& report);
struct SavedValidation {
  ValidationSummary summary;
  ValidationSetup setup;
};
SavedValidation validation_from_json(const nlohmann::ordered_json& report);

/// The page of the report in `text` (read from `source`). InputError
/// naming `source` when it is not JSON, not a kind `report` draws, or lacks
/// or mistypes a field the page needs.
std::string saved_report_html(const std::string& text, const std::string& source);

}  // namespace splitscope
