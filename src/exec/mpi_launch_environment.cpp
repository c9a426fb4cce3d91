#include <charconv>
#include <cstdlib>
#include <string_view>

#include "exec/mpi_launch.hpp"

namespace splitscope {

int mpi_launch_size_from_environment() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_SIZE", "PMI_SIZE"}) {
    const char* text = std::getenv(name);
    if (text == nullptr) continue;
    const std::string_view value(text);
    int size = 0;
    const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), size);
    if (error == std::errc() && end == value.data() + value.size() && size > 0) return size;
  }
  return 0;
}

}  // namespace splitscope
