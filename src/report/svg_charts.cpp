#include "report/svg_charts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <set>
#include <vector>

#include "report/chart_ticks.hpp"
#include "report/text_table.hpp"
#include "report/units.hpp"
#include "util/strings.hpp"

namespace splitscope {
namespace {

constexpr double kLabelWidth = 120;  // lane names on the left
constexpr double kRightMargin = 40;  // room for the last tick's label
constexpr double kAxisHeight = 22;
constexpr double kLaneHeight = 14;
constexpr double kLaneGap = 3;
constexpr double kDeviceGap = 10;
constexpr double kBarHeight = 16;

constexpr std::array<Lane, 4> kLanes{Lane::kCompute, Lane::kCopyIn, Lane::kCopyOut, Lane::kHost};

const char* kind_class(SpanKind kind) {
  switch (kind) {
    case SpanKind::kCompute: return "compute";
    case SpanKind::kTransfer: return "transfer";
    case SpanKind::kCollective: return "collective";
  }
  return "compute";
}

std::string span_name(const RunReport& run, const Span& span) {
  if (span.op >= 0 && run.plan != nullptr && static_cast<size_t>(span.op) < run.plan->ops.size()) {
    return op_label(*run.plan, run.plan->op(span.op));
  }
  return span.label.empty() ? std::string(to_string(span.kind)) : span.label;
}

std::string axis(double makespan_ms, double x0, double plot_width, double y, double height) {
  std::string svg;
  if (makespan_ms <= 0) return svg;
  const double step = nice_tick_step(makespan_ms, 8);
  for (double t = 0; t <= makespan_ms * (1 + 1e-9); t += step) {
    const double x = x0 + t / makespan_ms * plot_width;
    svg += fmt::format(R"(<line class="grid" x1="{0:.1f}" y1="{1:.1f}" x2="{0:.1f}" y2="{2:.1f}"/>)", x, y,
                       y + height);
    svg += fmt::format(R"(<text class="tick" x="{:.1f}" y="{:.1f}">{}</text>)", x, y - 6, format_ms(t));
  }
  return svg;
}

/// One drawn mark: a span, or several tiny consecutive spans of one kind.
struct Mark {
  double start_us = 0;
  double end_us = 0;
  SpanKind kind = SpanKind::kCompute;
  int count = 0;
  int first = -1;  // span index, for the title of a single span
  bool critical = false;
};

}  // namespace

std::string escape_html(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string svg_timeline(const RunReport& run, double width) {
  const Timeline& timeline = run.timeline;
  const double makespan_us = timeline.makespan_us();
  const int devices = std::max(run.summary.devices, timeline.device_count());
  std::set<std::pair<int, Lane>> used;
  for (const Span& span : timeline.spans) used.insert({span.device, span.lane});
  const std::set<int> critical(run.summary.critical_path.spans.begin(), run.summary.critical_path.spans.end());

  const double plot_width = width - kLabelWidth - kRightMargin;
  const double us_per_px = makespan_us > 0 ? makespan_us / plot_width : 1.0;
  auto x_of = [&](double us) { return kLabelWidth + us / us_per_px; };

  std::string body;
  double y = kAxisHeight;
  for (int d = 0; d < devices; ++d) {
    for (Lane lane : kLanes) {
      if (lane != Lane::kCompute && !used.contains({d, lane})) continue;
      body += fmt::format(R"(<text class="lane" x="{:.1f}" y="{:.1f}">device {} {}</text>)", kLabelWidth - 6,
                          y + kLaneHeight - 3, d, to_string(lane));
      body += fmt::format(R"(<rect class="lane-bg" x="{:.1f}" y="{:.1f}" width="{:.1f}" height="{:.1f}"/>)",
                          kLabelWidth, y, plot_width, kLaneHeight);

      std::vector<int> spans;
      for (size_t i = 0; i < timeline.spans.size(); ++i) {
        if (timeline.spans[i].device == d && timeline.spans[i].lane == lane) spans.push_back(static_cast<int>(i));
      }
      std::sort(spans.begin(), spans.end(), [&](int a, int b) {
        return timeline.spans[static_cast<size_t>(a)].start_us < timeline.spans[static_cast<size_t>(b)].start_us;
      });
      std::vector<Mark> marks;
      for (int index : spans) {
        const Span& span = timeline.spans[static_cast<size_t>(index)];
        const bool on_path = critical.contains(index);
        const bool tiny = span.duration_us() < 0.5 * us_per_px;
        if (!marks.empty()) {
          Mark& last = marks.back();
          const bool last_tiny = (last.end_us - last.start_us) < us_per_px;
          if (tiny && last_tiny && last.kind == span.kind && on_path == last.critical &&
              span.start_us - last.end_us < 0.5 * us_per_px) {
            last.end_us = std::max(last.end_us, span.end_us);
            last.count += 1;
            continue;
          }
        }
        marks.push_back({span.start_us, span.end_us, span.kind, 1, index, on_path});
      }
      for (const Mark& mark : marks) {
        std::string title;
        if (mark.count == 1) {
          const Span& span = timeline.spans[static_cast<size_t>(mark.first)];
          title = fmt::format("{} ({}): {} from {} to {}", span_name(run, span), to_string(span.kind),
                              format_ms(span.duration_us() / 1000.0), format_ms(span.start_us / 1000.0),
                              format_ms(span.end_us / 1000.0));
          if (span.flops > 0) title += fmt::format(", {}FLOP", si_count(double(span.flops)));
          if (span.bytes > 0) title += fmt::format(", {}", binary_bytes(double(span.bytes)));
          if (mark.critical) title += ", on the critical path";
        } else {
          title = fmt::format("{} {} spans from {} to {}", mark.count, to_string(mark.kind),
                              format_ms(mark.start_us / 1000.0), format_ms(mark.end_us / 1000.0));
          if (mark.critical) title += ", on the critical path";
        }
        const double x = x_of(mark.start_us);
        const double w = std::max(0.5, (mark.end_us - mark.start_us) / us_per_px);
        body += fmt::format(R"(<rect class="{}{}" x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{:.1f}"><title>{}</title></rect>)",
                            kind_class(mark.kind), mark.critical ? " critical" : "", x, y + 1, w, kLaneHeight - 2,
                            escape_html(title));
      }
      y += kLaneHeight + kLaneGap;
    }
    y += kDeviceGap;
  }
  const double height = y + 4;
  std::string svg = fmt::format(
      R"(<svg class="timeline" role="img" viewBox="0 0 {0:.0f} {1:.0f}" width="{0:.0f}" height="{1:.0f}">)", width,
      height);
  svg += fmt::format("<title>{}</title>", escape_html(fmt::format("timeline of {} on {}, makespan {}",
                                                                  run.summary.strategy, counted(devices, "device"),
                                                                  format_ms(makespan_us / 1000.0))));
  svg += axis(makespan_us / 1000.0, kLabelWidth, plot_width, kAxisHeight, height - kAxisHeight - 4);
  svg += body;
  svg += "</svg>";
  return svg;
}

std::string svg_device_bars(const RunReport& run, double scale_ms, double width) {
  const RunSummary& s = run.summary;
  const double plot_width = width - kLabelWidth - 260;
  const double px_per_ms = scale_ms > 0 ? plot_width / scale_ms : 0;
  std::string body;
  double y = 4;
  for (const DeviceSummary& d : s.per_device) {
    const double makespan = d.compute_ms + d.exposed_transfer_ms() + d.idle_ms;
    body += fmt::format(R"(<text class="lane" x="{:.1f}" y="{:.1f}">device {}</text>)", kLabelWidth - 6,
                        y + kBarHeight - 4, d.id);
    double x = kLabelWidth;
    const std::array<std::pair<const char*, double>, 3> parts{
        {{"compute", d.compute_ms}, {"transfer", d.exposed_transfer_ms()}, {"idle", d.idle_ms}}};
    for (const auto& [name, ms] : parts) {
      const double w = ms * px_per_ms;
      if (w > 0) {
        body += fmt::format(R"(<rect class="{}" x="{:.2f}" y="{:.1f}" width="{:.2f}" height="{:.1f}"><title>device {} {}: {} ({} of the makespan)</title></rect>)",
                            name, x, y, w, kBarHeight, d.id, name, format_ms(ms),
                            format_share(makespan > 0 ? ms / makespan : 0));
      }
      x += w;
    }
    body += fmt::format(R"(<text class="bar-note" x="{:.1f}" y="{:.1f}">compute {} / transfer {} / idle {}</text>)",
                        kLabelWidth + plot_width + 8, y + kBarHeight - 4,
                        format_share(makespan > 0 ? d.compute_ms / makespan : 0),
                        format_share(makespan > 0 ? d.exposed_transfer_ms() / makespan : 0),
                        format_share(makespan > 0 ? d.idle_ms / makespan : 0));
    y += kBarHeight + 4;
  }
  const double height = y + 2;
  std::string svg = fmt::format(
      R"(<svg class="bars" role="img" viewBox="0 0 {0:.0f} {1:.0f}" width="{0:.0f}" height="{1:.0f}">)", width, height);
  svg += fmt::format("<title>compute, transfer and idle time per device for {}</title>",
                     escape_html(run.summary.strategy));
  svg += body + "</svg>";
  return svg;
}

}  // namespace splitscope
