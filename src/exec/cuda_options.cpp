#include "exec/cuda_backend.hpp"
#include "util/errors.hpp"

namespace splitscope {

LinkMode parse_link_mode(const std::string& text) {
  if (text == "device") return LinkMode::kDevice;
  if (text == "host") return LinkMode::kHost;
  throw InputError("--link", "", "unknown link mode '" + text + "'; use device or host");
}

}  // namespace splitscope
