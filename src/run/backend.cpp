#include "run/backend.hpp"

#include <string>

#include "util/errors.hpp"

namespace splitscope {

std::string_view to_string(Backend backend) {
  switch (backend) {
    case Backend::kCpu: return "cpu";
    case Backend::kCuda: return "cuda";
    case Backend::kSim: return "sim";
  }
  return "cpu";
}

Backend parse_backend(std::string_view name) {
  for (const Backend backend : {Backend::kCpu, Backend::kCuda, Backend::kSim}) {
    if (name == to_string(backend)) return backend;
  }
  throw InputError("--backend", "", "unknown backend '" + std::string(name) + "'; use cpu, cuda or sim");
}

}  // namespace splitscope
