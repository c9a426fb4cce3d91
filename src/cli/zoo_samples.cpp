// What the calibrators time by default (zoo_samples.hpp).

#include "cli/zoo_samples.hpp"

#include <set>

#include "cli/network_loading.hpp"
#include "ir/zoo.hpp"

namespace splitscope::cli {

std::vector<std::string> small_zoo_networks() {
  std::vector<std::string> names;
  for (const std::string& name : zoo_names(ZooShelf::kNetworks)) {
    if (name.size() > 6 && name.ends_with("-small") && load_network(name)->total_flops() <= kMiniatureFlops) {
      names.push_back(name);
    }
  }
  return names;
}

std::vector<OpSample> zoo_samples(const std::vector<std::string>& names) {
  std::vector<OpSample> samples;
  std::set<std::string> seen;
  for (const std::string& name : names) {
    for (OpSample& sample : op_samples_from_graph(load_network(name), {2, 4}, {2, 4, 8})) {
      if (seen.insert(sample.signature).second) samples.push_back(std::move(sample));
    }
  }
  return samples;
}

}  // namespace splitscope::cli
