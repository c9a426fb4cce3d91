#pragma once
/// \file
/// A validation (validation.hpp) as `splitscope validate` writes it: a text
/// table, the JSON report (schema `splitscope.validate/1`, docs/validate.md)
/// and a self-contained HTML page with a log-log scatter of predicted
/// against measured makespans.

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "report/report_context.hpp"
#include "report/validation.hpp"

namespace splitscope {

inline constexpr const char* kValidateSchema = "splitscope.validate/1";

/// What was validated: the backend that measured and the machine that predicted.
struct ValidationSetup {
  std::string backend;       ///< cpu | cuda
  std::string device_mode;   ///< e.g. "virtual (green contexts, 66 SMs each)", from the first measured run
  std::string machine_name;  ///< the machine option as given (`{devices}` left in)
  bool cuda_graph = false;   ///< measured runs replayed from a CUDA graph
  std::string precision = "fp32";  ///< `--precision` of the measured and predicted plans (fp32, or tf32 on cuda)
  /// The host's one-thread sgemm speed against the predicting machine's
  /// calibration (cli/host_speed.hpp) before and after the measured runs;
  /// unset where not probed (cuda, a machine with no cpu grid).
  std::optional<double> host_speed_before = std::nullopt;
  std::optional<double> host_speed_after = std::nullopt;
};

std::string validation_text(const ValidationSummary& summary, const ValidationSetup& setup);
nlohmann::ordered_json validation_json(const ValidationSummary& summary, const ValidationSetup& setup,
                                       const ReportContext& context);
std::string validation_html(const ValidationSummary& summary, const ValidationSetup& setup);

}  // namespace splitscope
