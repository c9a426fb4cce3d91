#include "util/utc_time.hpp"

#include <ctime>

namespace splitscope {

std::string utc_now_iso8601() {
  const std::time_t now = std::time(nullptr);
  std::tm parts{};
  gmtime_r(&now, &parts);
  char text[32];
  std::strftime(text, sizeof(text), "%Y-%m-%dT%H:%M:%SZ", &parts);
  return text;
}

}  // namespace splitscope
