// A validation as text, JSON and HTML (validation_report.hpp).

#include "report/validation_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "report/extrapolation_warning.hpp"
#include "report/html_page.hpp"
#include "report/report_json.hpp"
#include "report/svg_charts.hpp"
#include "util/strings.hpp"

namespace splitscope {
namespace {

std::string percent(double fraction) { return fmt::format("{:+.1f}%", 100 * fraction); }

std::string joined(const std::vector<std::string>& names) {
  std::string text;
  for (const std::string& name : names) text += (text.empty() ? "" : " < ") + name;
  return text;
}

std::vector<std::string> tie_texts(const std::vector<std::pair<std::string, std::string>>& ties, const char* sign) {
  std::vector<std::string> texts;
  for (const auto& [a, b] : ties) texts.push_back(a + sign + b);
  return texts;
}

/// "; right but for horizontal = pipeline, predicted equal", where only predicted ties kept the orders apart;
/// "; wrong only where the measurement cannot tell: single ~ vertical", where only measured ties made it wrong.
std::string ties_note(const ValidationGroup& g) {
  if (g.same_ranking) return "";
  if (g.ranking_right) {
    if (g.predicted_ties.empty()) return "";
    return "; right but for " + join(tie_texts(g.predicted_ties, " = "), ", ") + ", predicted equal";
  }
  if (!g.ranking_right_beyond_noise) return "";
  return "; wrong only among pairs measured within their noise (" + join(tie_texts(g.measured_ties, " ~ "), ", ") +
         ")";
}

/// The runs predicted mostly outside the machine's measured op times
/// (report/extrapolation_warning.hpp), or nothing.
std::string extrapolated_line(const ValidationSummary& s) {
  std::vector<std::string> runs;
  for (const ValidationCase& c : s.cases) {
    if (mostly_extrapolated(c.calibrated_share)) {
      runs.push_back(fmt::format("{} {} on {} ({:.0f}%)", c.network, c.strategy, c.devices, *c.calibrated_share * 100));
    }
  }
  if (runs.empty()) return "";
  return fmt::format("extrapolated: {} of {} runs took under half their predicted compute time from the machine's "
                     "measured op times: {}\n",
                     runs.size(), s.cases.size(), join(runs, ", "));
}

/// "host speed ...: 0.93x before the runs, 0.91x after ...", or nothing where the host was not probed.
std::string host_speed_line(const ValidationSetup& setup) {
  if (!setup.host_speed_before || !setup.host_speed_after) return "";
  return fmt::format("host speed against the machine's calibration (one-thread sgemm at 3 shapes of its grid): "
                     "{:.2f}x before the runs, {:.2f}x after; below 1 the host runs slower than when calibrated, "
                     "and predictions come out fast by about as much\n",
                     *setup.host_speed_before, *setup.host_speed_after);
}

std::string summary_line(const ValidationSummary& s) {
  return fmt::format(
      "{} runs: median |error| {:.1f}%, max {:.1f}%; {} within 10%, {} within 25%; ranking of strategies right in {} "
      "of {} groups ({} with strategies predicted equal taken in either order, {} also with those measured within "
      "their noise)",
      s.cases.size(), 100 * s.median_abs_error, 100 * s.max_abs_error, s.within_10_percent, s.within_25_percent,
      s.groups_same_ranking, s.groups.size(), s.groups_ranking_right, s.groups_ranking_right_beyond_noise);
}

/// The scatter: log-log, predicted (y) against measured (x), the diagonal
/// and the ±25% band, one dot per case coloured by its group's device count.
std::string scatter_svg(const ValidationSummary& s) {
  constexpr double kSize = 520;
  constexpr double kMargin = 56;
  double low = 1e300;
  double high = 0;
  for (const ValidationCase& c : s.cases) {
    low = std::min({low, c.measured_ms, c.predicted_ms});
    high = std::max({high, c.measured_ms, c.predicted_ms});
  }
  if (s.cases.empty()) return "";
  const double lo = std::floor(std::log10(low));
  const double hi = std::max(lo + 1, std::ceil(std::log10(high)));
  const double plot = kSize - 2 * kMargin;
  auto at = [&](double ms) { return (std::log10(ms) - lo) / (hi - lo) * plot; };
  auto x = [&](double ms) { return kMargin + at(ms); };
  auto y = [&](double ms) { return kSize - kMargin - at(ms); };
  std::string svg = fmt::format(
      "<svg xmlns='http://www.w3.org/2000/svg' width='{0}' height='{0}' viewBox='0 0 {0} {0}' "
      "font-family='sans-serif' font-size='11'>\n",
      kSize);
  const double a = std::pow(10.0, lo);
  const double b = std::pow(10.0, hi);
  // The band between predicted = 1.25 x measured and 0.75 x measured (b >= 10 a).
  svg += fmt::format("<polygon points='{},{} {},{} {},{} {},{} {},{} {},{}' fill='#eef3ee'/>\n", x(a), y(1.25 * a),
                     x(b / 1.25), y(b), x(b), y(b), x(b), y(0.75 * b), x(a / 0.75), y(a), x(a), y(a));
  svg += fmt::format("<line x1='{}' y1='{}' x2='{}' y2='{}' stroke='#777'/>\n", x(a), y(a), x(b), y(b));
  for (double decade = lo; decade <= hi; decade += 1) {
    const double v = std::pow(10.0, decade);
    svg += fmt::format("<text x='{}' y='{}' text-anchor='middle'>{:g} ms</text>\n", x(v), kSize - kMargin + 16, v);
    svg += fmt::format("<text x='{}' y='{}' text-anchor='end'>{:g} ms</text>\n", kMargin - 4, y(v) + 4, v);
  }
  svg += fmt::format("<text x='{}' y='{}' text-anchor='middle'>measured</text>\n", kSize / 2, kSize - 12);
  svg += fmt::format("<text x='14' y='{}' text-anchor='middle' transform='rotate(-90 14 {})'>predicted</text>\n",
                     kSize / 2, kSize / 2);
  for (const ValidationCase& c : s.cases) {
    svg += fmt::format(
        "<circle cx='{:.1f}' cy='{:.1f}' r='4' fill='{}' fill-opacity='0.75'><title>{}</title></circle>\n",
        x(c.measured_ms), y(c.predicted_ms), c.devices <= 2 ? "#2f6fb0" : "#c0602a",
        escape_html(fmt::format("{} {} on {}: measured {:.4g} ms, predicted {:.4g} ms ({})", c.network, c.strategy,
                                c.devices, c.measured_ms, c.predicted_ms, percent(c.error()))));
  }
  return svg + "</svg>\n";
}

nlohmann::ordered_json ties_json(const std::vector<std::pair<std::string, std::string>>& pairs) {
  nlohmann::ordered_json ties = nlohmann::ordered_json::array();
  for (const auto& [a, b] : pairs) ties.push_back({a, b});
  return ties;
}

}  // namespace

std::string validation_text(const ValidationSummary& s, const ValidationSetup& setup) {
  std::string text = fmt::format("validate: {} measured{}{}, predicted on {}\n\n", setup.backend,
                                 setup.cuda_graph ? " (CUDA graph replays)" : "",
                                 setup.precision == "fp32" ? "" : ", precision " + setup.precision,
                                 setup.machine_name);
  text += fmt::format("{:<18} {:>7}  {:<11} {:>12} {:>12} {:>8}\n", "network", "devices", "strategy", "measured",
                      "predicted", "error");
  for (const ValidationCase& c : s.cases) {
    text += fmt::format("{:<18} {:>7}  {:<11} {:>9.3f} ms {:>9.3f} ms {:>8}\n", c.network, c.devices, c.strategy,
                        c.measured_ms, c.predicted_ms, percent(c.error()));
  }
  text += extrapolated_line(s);
  text += "\n";
  for (const ValidationGroup& g : s.groups) {
    text += fmt::format("{} on {}: measured {}; predicted {}; tau {:.2f}{}\n", g.network, g.devices,
                        joined(g.measured_order), g.same_ranking ? "the same" : joined(g.predicted_order),
                        g.kendall_tau, ties_note(g));
  }
  return text + "\n" + summary_line(s) + "\n" + host_speed_line(setup);
}

nlohmann::ordered_json validation_json(const ValidationSummary& s, const ValidationSetup& setup,
                                       const ReportContext& context) {
  nlohmann::ordered_json cases = nlohmann::ordered_json::array();
  for (const ValidationCase& c : s.cases) {
    cases.push_back({{"network", c.network},
                     {"devices", c.devices},
                     {"strategy", c.strategy},
                     {"measured_ms", c.measured_ms},
                     {"measured_repeats_ms", c.repeat_ms},
                     {"predicted_ms", c.predicted_ms},
                     {"error", c.error()}});
    if (c.calibrated_share) cases.back()["calibrated_share"] = *c.calibrated_share;
  }
  nlohmann::ordered_json groups = nlohmann::ordered_json::array();
  for (const ValidationGroup& g : s.groups) {
    groups.push_back({{"network", g.network},
                      {"devices", g.devices},
                      {"measured_order", g.measured_order},
                      {"predicted_order", g.predicted_order},
                      {"kendall_tau", g.kendall_tau},
                      {"same_ranking", g.same_ranking},
                      {"predicted_ties", ties_json(g.predicted_ties)},
                      {"ranking_right", g.ranking_right},
                      {"measured_ties", ties_json(g.measured_ties)},
                      {"ranking_right_beyond_noise", g.ranking_right_beyond_noise}});
  }
  nlohmann::ordered_json report = {{"schema", kValidateSchema},
          {"context", context_json(context)},
          {"backend", setup.backend},
          {"device_mode", setup.device_mode},
          {"cuda_graph", setup.cuda_graph},
          {"precision", setup.precision},
          {"machine", setup.machine_name},
          {"cases", cases},
          {"groups", groups},
          {"summary",
           {{"cases", s.cases.size()},
            {"median_abs_error", s.median_abs_error},
            {"max_abs_error", s.max_abs_error},
            {"within_10_percent", s.within_10_percent},
            {"within_25_percent", s.within_25_percent},
            {"groups", s.groups.size()},
            {"groups_same_ranking", s.groups_same_ranking},
            {"groups_ranking_right", s.groups_ranking_right},
            {"groups_ranking_right_beyond_noise", s.groups_ranking_right_beyond_noise}}}};
  if (setup.host_speed_before && setup.host_speed_after) {
    report["host_speed"] = {{"before", *setup.host_speed_before}, {"after", *setup.host_speed_after}};
  }
  return report;
}

std::string validation_html(const ValidationSummary& s, const ValidationSetup& setup) {
  std::string html = html_page_start(
      "splitscope validate",
      "body{font-family:sans-serif;margin:24px}table{border-collapse:collapse}"
      "td,th{padding:2px 10px;text-align:right}td.l,th.l{text-align:left}.miss{color:#b03030}");
  html += fmt::format("<h1>Predicted against measured</h1>\n<p>{} measured{} ({}), predicted on {}.</p>\n",
                      escape_html(setup.backend), setup.cuda_graph ? " from CUDA graph replays" : "",
                      escape_html(setup.device_mode), escape_html(setup.machine_name));
  html += "<p>" + escape_html(summary_line(s)) + ". The shaded band is ±25%.</p>\n";
  if (const std::string speed = host_speed_line(setup); !speed.empty()) html += "<p>" + escape_html(speed) + "</p>\n";
  html += scatter_svg(s);
  html += "<table><tr><th class='l'>network</th><th>devices</th><th class='l'>strategy</th><th>measured ms</th>"
          "<th>predicted ms</th><th>error</th></tr>\n";
  for (const ValidationCase& c : s.cases) {
    html += fmt::format(
        "<tr><td class='l'>{}</td><td>{}</td><td class='l'>{}</td><td>{:.4g}</td><td>{:.4g}</td>"
        "<td{}>{}</td></tr>\n",
        escape_html(c.network), c.devices, escape_html(c.strategy), c.measured_ms, c.predicted_ms,
        std::abs(c.error()) > 0.25 ? " class='miss'" : "", percent(c.error()));
  }
  html += "</table>\n<h2>Rankings</h2>\n<table><tr><th class='l'>network</th><th>devices</th>"
          "<th class='l'>measured, fastest first</th><th class='l'>predicted</th><th>tau</th></tr>\n";
  for (const ValidationGroup& g : s.groups) {
    html += fmt::format("<tr><td class='l'>{}</td><td>{}</td><td class='l'>{}</td><td class='l{}'>{}</td>"
                        "<td>{:.2f}</td></tr>\n",
                        escape_html(g.network), g.devices, escape_html(joined(g.measured_order)),
                        g.ranking_right ? "" : " miss", escape_html(joined(g.predicted_order) + ties_note(g)),
                        g.kendall_tau);
  }
  return html + "</table>\n</body></html>\n";
}

}  // namespace splitscope
