#include "timeline/timeline.hpp"

#include <algorithm>

namespace splitscope {

std::string_view to_string(Lane lane) {
  switch (lane) {
    case Lane::kCompute: return "compute";
    case Lane::kCopyIn: return "copy-in";
    case Lane::kCopyOut: return "copy-out";
    case Lane::kHost: return "host";
  }
  return "?";
}

std::string_view to_string(SpanKind kind) {
  switch (kind) {
    case SpanKind::kCompute: return "compute";
    case SpanKind::kTransfer: return "transfer";
    case SpanKind::kCollective: return "collective";
  }
  return "?";
}

bool is_host_work(const Span& span) {
  return span.lane == Lane::kHost && span.op < 0 && span.kind == SpanKind::kCompute;
}

std::string_view to_string(OffPlanMove move) {
  switch (move) {
    case OffPlanMove::kNone: return "";
    case OffPlanMove::kPull: return "pull";
    case OffPlanMove::kPush: return "push";
  }
  return "?";
}

double Timeline::makespan_us() const {
  double end = 0;
  for (const Span& span : spans) end = std::max(end, span.end_us);
  return end;
}

int Timeline::device_count() const {
  int count = 0;
  for (const Span& span : spans) count = std::max(count, span.device + 1);
  if (replicas > 1) return replicas * std::max(count, replica_devices);
  return count;
}

}  // namespace splitscope
