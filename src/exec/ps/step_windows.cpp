#include "exec/ps/step_windows.hpp"

#include <algorithm>

namespace splitscope {

std::vector<Timeline> cut_into_windows(const std::vector<Span>& spans, const std::vector<double>& ends) {
  std::vector<Timeline> windows(ends.size());
  for (const Span& span : spans) {
    double begin = 0;
    for (size_t w = 0; w < ends.size(); ++w) {
      const double start = std::max(span.start_us, begin);
      const double end = std::min(span.end_us, ends[w]);
      // A piece of no length is kept only where the span itself has none.
      if (end > start || (span.start_us == span.end_us && span.start_us >= begin && span.start_us < ends[w])) {
        Span piece = span;
        piece.start_us = start - begin;
        piece.end_us = end - begin;
        // Work and bytes go with the share of the span in this window.
        if (span.end_us > span.start_us && (start > span.start_us || end < span.end_us)) {
          const double share = (end - start) / (span.end_us - span.start_us);
          piece.flops = static_cast<int64_t>(static_cast<double>(span.flops) * share);
          piece.bytes = static_cast<int64_t>(static_cast<double>(span.bytes) * share);
        }
        windows[w].spans.push_back(std::move(piece));
      }
      begin = ends[w];
      if (begin >= span.end_us) break;
    }
  }
  return windows;
}

}  // namespace splitscope
