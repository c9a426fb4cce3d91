#pragma once
/// \file
/// What the cpu kernels' passes other than their products cost on one host,
/// as `calibrate --backend cpu` times them with the kernels' own code
/// (exec/cpu/cpu_calibration.cpp, measure_kernel_passes): a bias written into
/// output rows, each activation in place, a convolution's im2col and a
/// pooling window. None of them runs
/// at the memory rate a memcpy reaches. On the build VM (2026-12-01), one
/// thread wrote a bias at 0.13-0.17 ns a value and a ReLU at 0.07-0.09 ns,
/// both from the caches, where 8 bytes a value at the memory rate said 0.25;
/// im2col, a gather with a bounds test per value, took 0.33-0.49 ns a value
/// over AlexNet's and ResNet-50's geometries, and on two threads each call
/// paid 15-40 µs more than half of that (the split's hand-offs and the
/// threads' uneven ends). Pooling, priced before by a roofline over its
/// bytes at an efficiency fitted on small pools, costs its windows: 0.36-0.48
/// ns an element of a 3x3 or 7x7 window over AlexNet's, ResNet-50's and
/// Inception's pools, strided or not, where their bytes per output differ
/// four-fold. Read by cpu_kernel_cost.hpp.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace splitscope {

/// im2col on a pool of `threads`: a call costs `us_per_call` plus `ns_per_value` per value of the patch matrix.
struct Im2colRate {
  int threads = 1;
  double ns_per_value = 0;
  double us_per_call = 0;
  bool operator==(const Im2colRate&) const = default;
};

/// A product whose weights are not in the caches streams them from memory:
/// on a pool device of `threads`, with `running` devices doing the same (1:
/// alone), a product of `rows` rows took B's bytes over `gbps`. Few rows wait
/// for their weights; more rows compute longer on each byte as it arrives
/// (the calibration times several row counts, weight_stream_curve.hpp). On
/// the build VM one thread streamed B at 10.8-11.2 GB/s from (8, 3072, 1024)
/// to (8, 8192, 8192), alone or beside another, where the grid's products,
/// timed on one B over and over, ran from the caches (exec/cpu/
/// cpu_calibration.cpp, measure_weight_stream).
struct WeightStreamRate {
  int threads = 1;
  int running = 1;
  double gbps = 0;
  int64_t rows = 8;
  bool operator==(const WeightStreamRate&) const = default;
};

/// The activations and pooling kinds whose passes the cpu calibration times, by the names the files key them by.
inline bool timed_activation(std::string_view name) { return name == "relu" || name == "tanh" || name == "sigmoid"; }
inline bool timed_pool(std::string_view kind) { return kind == "maxpool" || kind == "avgpool"; }

struct CpuPassRates {
  double fill_ns_per_value = 0;        ///< a bias copied into an output row, one thread
  /// By activation ("relu", "tanh", "sigmoid"): in place, one thread.
  std::map<std::string, double> activation_ns_per_value;
  std::vector<Im2colRate> im2col;      ///< by thread count, one thread's among them
  /// By pooling kind ("maxpool", "avgpool"): one thread, per output value
  /// and element of its kh x kw window; empty where not timed (older files).
  std::map<std::string, double> pool_ns_per_window_value;

  /// Whether the three were timed (a machine file gives all or none).
  bool measured() const { return !im2col.empty(); }
  /// The im2col rate timed on `threads`, or null.
  const Im2colRate* im2col_on(int threads) const {
    for (const Im2colRate& rate : im2col) {
      if (rate.threads == threads) return &rate;
    }
    return nullptr;
  }
  bool operator==(const CpuPassRates&) const = default;
};

}  // namespace splitscope
