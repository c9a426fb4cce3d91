#pragma once
/// \file
/// The current time as ISO 8601 in UTC ("2026-11-24T21:14:21Z"), for the
/// dates calibrations record.

#include <string>

namespace splitscope {

std::string utc_now_iso8601();

}  // namespace splitscope
