#pragma once
/// \file
/// How reports print times, shares and ratios (ASCII only, so a table reads
/// the same on a terminal, in a file and in a browser).

#include <string>

namespace splitscope {

/// 0.0123 -> "12.3 us", 12.3456 -> "12.346 ms", 12345 -> "12.345 s".
std::string format_ms(double ms);
/// 0.643 -> "64%"; 0.003 -> "<1%" (not "0%", which reads as none).
std::string format_share(double share);
/// 1.5 -> "1.50x"; 0.0023 -> "0.0023x" (two significant digits below 0.1x).
std::string format_speedup(double speedup);
/// 23.456 -> "23.46 GB/s"; 0.02048 -> "0.0205 GB/s" (three significant digits below 1).
std::string format_gbps(double gbps);

}  // namespace splitscope
