#pragma once
/// \file
/// Chrome trace-event JSON (the format chrome://tracing and Perfetto open as
/// it is): `{"traceEvents": [...]}` of complete events (`"ph": "X"`, `ts` and
/// `dur` in microseconds), one process per device and one thread per lane,
/// named by metadata events ("device 0"; "compute", "copy-in", "copy-out",
/// "host"). Event names are the ops' labels (op_label()); args carry the op
/// id, role, micro-batch, FLOPs, bytes and whether the span is on the
/// critical path.
///
/// A trace of several runs (compare) keeps them apart on one time axis:
/// run k's device d is process k·kTracePidStride + d, named
/// "<strategy> (<backend>): device d".

#include <functional>
#include <nlohmann/json.hpp>
#include <string_view>
#include <vector>

#include "report/run_report.hpp"

namespace splitscope {

inline constexpr int kTracePidStride = 1000;

/// The trace of one run's representative repeat; pid = device.
nlohmann::ordered_json chrome_trace_json(const RunReport& run);

/// One trace for several runs (pid = run index · kTracePidStride + device;
/// for a single run, pid = device).
nlohmann::ordered_json chrome_trace_json(const std::vector<const RunReport*>& runs);

/// The same trace as dump_json(chrome_trace_json(runs)) writes it, byte for
/// byte, passed to `put` a piece at a time: one event is in memory at once,
/// not the document (a 100,000-layer run's trace needed about 17 times its
/// size in memory as a document; issue 54 item 17).
void write_chrome_trace(const std::vector<const RunReport*>& runs, const std::function<void(std::string_view)>& put);

}  // namespace splitscope
