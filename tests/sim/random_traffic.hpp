#pragma once
// Random traffic matrices for the placement tests' many trials: sparse and
// skewed, as a plan's is (most pairs send nothing, a few a lot).

#include <cmath>
#include <cstdint>
#include <random>

#include "plan/plan_traffic.hpp"

namespace splitscope::testing {

/// `devices` x `devices` traffic: a density drawn first, then each ordered
/// pair (itself included) sends with that probability 1 B to 1 MB, log-uniform.
inline DeviceTraffic random_skewed_traffic(int devices, std::mt19937_64& random) {
  DeviceTraffic traffic(devices);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  const double density = unit(random);
  for (int from = 0; from < devices; ++from) {
    for (int to = 0; to < devices; ++to) {
      if (unit(random) < density) traffic.add(from, to, static_cast<int64_t>(std::pow(10.0, 6 * unit(random))));
    }
  }
  return traffic;
}

}  // namespace splitscope::testing
