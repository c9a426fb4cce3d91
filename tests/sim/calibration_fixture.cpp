#include "calibration_fixture.hpp"

#include <tuple>

#include "calibration/calibration_fits.hpp"

namespace splitscope::testing {
namespace {

calibration::CopySeries series(const char* kind, double bytes_per_second, double latency_seconds, int dst = 0) {
  calibration::CopySeries copies;
  copies.kind = kind;
  copies.dst_device = dst;
  for (int64_t bytes : {int64_t{4096}, int64_t{1} << 20, int64_t{64} << 20}) {
    const double seconds = latency_seconds + static_cast<double>(bytes) / bytes_per_second;
    copies.points.push_back({bytes, seconds, static_cast<double>(bytes) / seconds});
  }
  copies.latency_seconds = latency_seconds;
  copies.bandwidth_bytes_per_second = bytes_per_second;
  return copies;
}

calibration::GemmRate gemm(int64_t size, const char* math, double flops_per_second) {
  const double flops = 2.0 * static_cast<double>(size * size * size);
  return {size, size, size, math, flops / flops_per_second, flops_per_second};
}

}  // namespace

calibration::CalibrationResult hand_calibration() {
  calibration::CalibrationResult result;
  result.date = "2026-01-02T03:04:05Z";
  result.host = "testhost";
  result.device = 0;
  result.device_name = "Test GPU";
  result.sm_count = 132;
  result.memory_bytes = int64_t{80} << 30;
  result.compute_capability = "9.0";
  result.driver = "13.0";
  result.runtime = "13.0";
  result.cublas = "13.0.0";
  result.cudnn = "9.10.0";
  result.dtype = "fp32";
  result.repeats = 20;
  result.gemm = {gemm(1024, "fp32", 40e12), gemm(4096, "fp32", 50e12), gemm(1024, "tf32", 300e12),
                 gemm(4096, "tf32", 400e12), gemm(4096, "bf16", 800e12)};
  result.copies = {series("device_to_device", 1.5e12, 5e-6), series("host_to_device", 50e9, 8e-6),
                   series("device_to_host", 50e9, 8e-6), series("host_staged", 25e9, 20e-6)};
  result.launch = {1000, 3e-6, 2e-6};
  result.op_times = {
      {"dense:b64:k8192:n8192", "mlp/fc1", 1'000'000'000, 3'000'000, 42e-6, 41e-6, 45e-6},
      {"dense:b64:k8192:n4096", "mlp/fc1", 500'000'000, 3'000'000, 22e-6, 21e-6, 23e-6},
      {"conv2d:b4:c64:h32:w32:f64:k3x3:s1x1:p1x1:g1", "cnn/conv2", 2'000'000'000, 3'000'000, 52e-6, 51e-6, 53e-6},
      {"relu:b64:n4096", "x/relu", 0, 6'000'000, 6e-6, 6e-6, 6e-6},
      {"softmax:b64:n1000", "mlp/probs", 0, 9'000'000, 5.75e-6, 5.5e-6, 6e-6},
      {"flatten:b4:n512", "cnn/flatten", 0, 0, 1e-6, 1e-6, 1e-6},
      {"tanh:b64:n10", "x/tanh", 0, 2560, 0, 0, 0},
  };
  result.conv = calibration::conv_rates(result.op_times);
  result.notes = {"peer copies not measured: this machine has one GPU"};
  return result;
}

calibration::CalibrationResult hand_calibration_with_peers() {
  calibration::CalibrationResult result = hand_calibration();
  result.notes.clear();
  for (auto [dst, rate, latency] :
       {std::tuple{1, 300e9, 3e-6}, std::tuple{2, 250e9, 4e-6}, std::tuple{3, 280e9, 3.5e-6}}) {
    calibration::CopySeries peer = series("peer", rate, latency, dst);
    peer.peer_access = true;
    result.copies.push_back(peer);
  }
  return result;
}

}  // namespace splitscope::testing
