#include "report/sweep_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "report/html_page.hpp"
#include "report/svg_charts.hpp"
#include "report/svg_line_chart.hpp"
#include "report/text_table.hpp"
#include "report/units.hpp"

namespace splitscope {
namespace {

std::string series_name(const OptionSweep& sweep, const OptionSweepPoint& point) {
  std::string name;
  for (size_t i = 1; i < point.values.size(); ++i) {
    name += fmt::format("{}{}={}", name.empty() ? "" : " ", point.values[i].first, point.values[i].second);
  }
  return name.empty() ? sweep.over.front() : name;
}

/// Parameter-server points: the loss against wall time, one line each.
std::string loss_curves_html(const OptionSweep& sweep) {
  std::vector<LineSeries> series;
  for (const OptionSweepPoint& point : sweep.points) {
    if (point.loss_curve.empty()) continue;
    std::string name;
    for (const auto& [option, value] : point.values) {
      name += fmt::format("{}{}", name.empty() ? "" : " ", option == "variant" ? value : option + "=" + value);
    }
    LineSeries line{name, {{0.0, point.loss_curve.front().second}}};
    line.points.insert(line.points.end(), point.loss_curve.begin(), point.loss_curve.end());
    series.push_back(std::move(line));
  }
  if (series.empty()) return {};
  return "<h2>Loss against wall time</h2>\n<p>Each step window's end and the mean loss of the worker steps that "
         "ended in it (the first point: the first step's loss, at 0).</p>\n" +
         svg_line_chart(series, "wall time (ms)", "loss");
}

std::string joined(const std::vector<std::string>& words, const std::string& between) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : between) + word;
  return text;
}

}  // namespace

std::vector<std::vector<size_t>> option_sweep_series(const OptionSweep& sweep) {
  std::vector<std::vector<size_t>> series;
  std::map<std::vector<std::string>, size_t> index;
  for (size_t p = 0; p < sweep.points.size(); ++p) {
    std::vector<std::string> key;
    for (size_t i = 1; i < sweep.points[p].values.size(); ++i) key.push_back(sweep.points[p].values[i].second);
    const auto [at, added] = index.emplace(key, series.size());
    if (added) series.emplace_back();
    series[at->second].push_back(p);
  }
  return series;
}

std::vector<std::optional<double>> option_sweep_scaling(const OptionSweep& sweep) {
  std::vector<std::optional<double>> scaling(sweep.points.size());
  for (const auto& series : option_sweep_series(sweep)) {
    const auto first = std::find_if(series.begin(), series.end(), [&](size_t p) {
      return sweep.points[p].fits && sweep.points[p].samples_per_s > 0;
    });
    if (first == series.end()) continue;
    for (size_t p : series) {
      const OptionSweepPoint& point = sweep.points[p];
      if (point.fits) scaling[p] = point.samples_per_s / sweep.points[*first].samples_per_s;
    }
  }
  return scaling;
}

std::vector<std::string> option_sweep_findings(const OptionSweep& sweep) {
  std::vector<std::string> findings;
  const auto scaling = option_sweep_scaling(sweep);
  for (const auto& series : option_sweep_series(sweep)) {
    std::optional<size_t> peak;
    for (size_t p : series) {
      if (sweep.points[p].fits && (!peak || sweep.points[p].samples_per_s > sweep.points[*peak].samples_per_s)) peak = p;
    }
    const std::string& option = sweep.over.front();
    const std::string prefix =
        sweep.over.size() > 1 ? series_name(sweep, sweep.points[series.front()]) + ": " : std::string();
    if (!peak) {
      findings.push_back(prefix + "no point fits its devices' memory");
      continue;
    }
    const OptionSweepPoint& best = sweep.points[*peak];
    std::string text = fmt::format("{}throughput peaks at {}={} ({} samples/s{})", prefix, option,
                                   best.values.front().second, si_count(best.samples_per_s),
                                   scaling[*peak] ? fmt::format(", {:.2f}x the first that fits", *scaling[*peak]) : "");
    std::vector<std::string> slower;
    std::vector<std::string> unfit;
    bool after = false;
    for (size_t p : series) {
      if (p == *peak) {
        after = true;
        continue;
      }
      if (!after) continue;
      if (!sweep.points[p].fits) {
        unfit.push_back(option + "=" + sweep.points[p].values.front().second);
      } else {
        slower.push_back(option + "=" + sweep.points[p].values.front().second);
      }
    }
    if (*peak == series.back()) {
      text += "; it still rises at the last value";
    } else if (!slower.empty()) {
      text += fmt::format("; beyond it, {} {} slower", joined(slower, ", "), slower.size() == 1 ? "is" : "are");
    }
    if (!unfit.empty()) text += fmt::format("; {} {} not fit", joined(unfit, ", "), unfit.size() == 1 ? "does" : "do");
    findings.push_back(text);
  }
  return findings;
}

std::string option_sweep_text(const OptionSweep& sweep) {
  std::vector<std::string> headers = sweep.over;
  std::vector<TextTable::Align> aligns(headers.size(), TextTable::Align::kRight);
  for (const char* header : {"makespan", "samples/s", "scaling", "speedup", "verdict"}) headers.emplace_back(header);
  aligns.insert(aligns.end(), {TextTable::Align::kRight, TextTable::Align::kRight, TextTable::Align::kRight,
                               TextTable::Align::kRight, TextTable::Align::kLeft});
  TextTable table(headers, aligns);
  const auto scaling = option_sweep_scaling(sweep);
  for (size_t p = 0; p < sweep.points.size(); ++p) {
    const OptionSweepPoint& point = sweep.points[p];
    std::vector<std::string> cells;
    for (const auto& [option, value] : point.values) cells.push_back(value);
    if (!point.fits) {
      cells.insert(cells.end(), {"-", "-", "-", "-", "does not fit"});
    } else {
      cells.push_back(format_ms(point.makespan_ms));
      cells.push_back(si_count(point.samples_per_s));
      cells.push_back(scaling[p] ? fmt::format("{:.2f}x", *scaling[p]) : "-");
      cells.push_back(point.speedup ? fmt::format("{:.2f}x", *point.speedup) : "-");
      cells.push_back(point.verdict);
    }
    table.add_row(std::move(cells));
  }
  std::string text = fmt::format("sweep of `run {}` over {}\n\n", joined(sweep.run_arguments, " "),
                                 joined(sweep.over, " x "));
  text += table.render();
  text += "\n";
  for (const std::string& finding : option_sweep_findings(sweep)) text += finding + "\n";
  text += fmt::format(
      "\nsamples/s: the batch over the median makespan (a training step's, with --train). scaling: samples/s over "
      "the first {} value's that fits. speedup and verdict: each run's own, against single on one device.\n",
      sweep.over.front());
  return text;
}

nlohmann::ordered_json option_sweep_json(const OptionSweep& sweep) {
  nlohmann::ordered_json document;
  document["schema"] = "splitscope.sweep/1";
  document["run_arguments"] = sweep.run_arguments;
  document["over"] = sweep.over;
  const auto scaling = option_sweep_scaling(sweep);
  document["points"] = nlohmann::ordered_json::array();
  for (size_t p = 0; p < sweep.points.size(); ++p) {
    const OptionSweepPoint& point = sweep.points[p];
    nlohmann::ordered_json values = nlohmann::ordered_json::object();
    for (const auto& [option, value] : point.values) values[option] = value;
    nlohmann::ordered_json entry;
    entry["values"] = values;
    entry["fits"] = point.fits;
    entry["makespan_ms"] = point.fits ? nlohmann::ordered_json(point.makespan_ms) : nlohmann::ordered_json();
    entry["samples_per_s"] = point.fits ? nlohmann::ordered_json(point.samples_per_s) : nlohmann::ordered_json();
    entry["scaling"] = scaling[p] ? nlohmann::ordered_json(*scaling[p]) : nlohmann::ordered_json();
    entry["speedup"] = point.fits && point.speedup ? nlohmann::ordered_json(*point.speedup) : nlohmann::ordered_json();
    entry["verdict"] = point.verdict;
    if (!point.loss_curve.empty()) {  // parameter-server points only: the page's loss curves
      entry["loss_curve"] = nlohmann::ordered_json::array();
      for (const auto& [time_ms, loss] : point.loss_curve) entry["loss_curve"].push_back({{"time_ms", time_ms}, {"loss", loss}});
    }
    document["points"].push_back(entry);
  }
  document["findings"] = option_sweep_findings(sweep);
  return document;
}

std::string option_sweep_html(const OptionSweep& sweep) {
  constexpr double kWidth = 900, kHeight = 420, kLeft = 90, kRight = 200, kTop = 20, kBottom = 60;
  const auto series = option_sweep_series(sweep);
  size_t columns = 0;
  double top = 0;
  for (const auto& members : series) columns = std::max(columns, members.size());
  for (const OptionSweepPoint& point : sweep.points) {
    if (point.fits) top = std::max(top, point.samples_per_s);
  }
  if (top <= 0) top = 1;
  const double plot_width = kWidth - kLeft - kRight;
  const double plot_height = kHeight - kTop - kBottom;
  const auto x_of = [&](size_t column) {
    return kLeft + (columns <= 1 ? plot_width / 2 : plot_width * static_cast<double>(column) / (columns - 1));
  };
  const auto y_of = [&](double value) { return kTop + plot_height * (1 - value / top); };
  static constexpr const char* kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"};

  std::string svg = fmt::format(
      "<svg class=\"sweep\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\">\n",
      kWidth, kHeight);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{0}\" y2=\"{2}\" stroke=\"#444\"/>\n", kLeft, kTop,
                     kTop + plot_height);
  svg += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#444\"/>\n", kLeft, kTop + plot_height,
                     kLeft + plot_width);
  for (int tick = 0; tick <= 4; ++tick) {
    const double value = top * tick / 4;
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"end\" font-size=\"12\">{}</text>\n", kLeft - 6,
                       y_of(value) + 4, escape_html(si_count(value)));
  }
  if (!series.empty()) {
    for (size_t column = 0; column < series.front().size(); ++column) {
      svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"12\">{}</text>\n", x_of(column),
                         kTop + plot_height + 18,
                         escape_html(sweep.points[series.front()[column]].values.front().second));
    }
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\" font-size=\"13\">{}</text>\n",
                     kLeft + plot_width / 2, kHeight - 12, escape_html(sweep.over.front()));
  svg += fmt::format("<text x=\"14\" y=\"{}\" font-size=\"13\" transform=\"rotate(-90 14 {})\">samples/s</text>\n",
                     kTop + plot_height / 2, kTop + plot_height / 2);
  for (size_t s = 0; s < series.size(); ++s) {
    const char* colour = kColours[s % std::size(kColours)];
    std::string path;
    for (size_t column = 0; column < series[s].size(); ++column) {
      const OptionSweepPoint& point = sweep.points[series[s][column]];
      if (!point.fits) continue;
      const double x = x_of(column);
      const double y = y_of(point.samples_per_s);
      path += fmt::format("{}{:.1f},{:.1f}", path.empty() ? "" : " ", x, y);
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}={}: {} samples/s, {}</title>"
                         "</circle>\n",
                         x, y, colour, escape_html(sweep.over.front()), escape_html(point.values.front().second),
                         escape_html(si_count(point.samples_per_s)), escape_html(point.verdict));
    }
    svg += fmt::format("<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"/>\n", path, colour);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"12\" fill=\"{}\">{}</text>\n", kLeft + plot_width + 12,
                       kTop + 16 + 18 * static_cast<double>(s), colour,
                       escape_html(series_name(sweep, sweep.points[series[s].front()])));
  }
  svg += "</svg>\n";

  std::string html = html_page_start(
      "splitscope sweep", "body{font-family:sans-serif;margin:2em} h1{font-size:1.3em} pre{background:#f6f6f6;padding:1em}");
  html += fmt::format("<h1>sweep of <code>run {}</code> over {}</h1>\n", escape_html(joined(sweep.run_arguments, " ")),
                      escape_html(joined(sweep.over, " x ")));
  html += svg;
  html += loss_curves_html(sweep);
  html += "<ul>\n";
  for (const std::string& finding : option_sweep_findings(sweep)) html += "<li>" + escape_html(finding) + "</li>\n";
  html += "</ul>\n<pre>" + escape_html(option_sweep_text(sweep)) + "</pre>\n</body></html>\n";
  return html;
}

}  // namespace splitscope
