#pragma once
// A GPU calibration made by hand, with round numbers, so that the machine
// derived from it can be checked against arithmetic done in the comments.

#include "calibration/calibration_result.hpp"

namespace splitscope::testing {

/// One GPU ("Test GPU", 80 GiB), op times in fp32:
/// - GEMM: fp32 at 40 and 50 TFLOP/s, tf32 at 300 and 400, bf16 at 800;
/// - copies: device_to_device 1.5e12 B/s after 5 µs, host_staged 25e9 B/s
///   after 20 µs (host_to_device, device_to_host too, unused by the machine);
/// - launch: 2 µs of GPU time per empty kernel (3 µs of host time);
/// - op times (µs):  op                                  FLOPs   bytes  measured
///     dense:b64:k8192:n8192  (roofline 20 µs)           1e9     3e6    42
///     dense:b64:k8192:n4096  (roofline 10 µs)           5e8     3e6    22
///     conv2d:b4:...:g1       (roofline 40 µs)           2e9     3e6    52
///     relu:b64:n4096         (roofline 2 µs)            0       6e6     6
///     softmax:b64:n1000      (roofline 3 µs)            0       9e6     5.75
///     flatten:b4:n512        (moves nothing)            0       0       1
///     tanh:b64:n10           (timed at 0: not kept)     0       2560    0
///   (rooflines at 50 TFLOP/s and 3e12 B/s of memory: twice the copy rate).
calibration::CalibrationResult hand_calibration();

/// hand_calibration() with peer series to GPUs 1, 2 and 3 (peer access on
/// all: 300e9 B/s after 3 µs, 250e9 after 4 µs, 280e9 after 3.5 µs).
calibration::CalibrationResult hand_calibration_with_peers();

}  // namespace splitscope::testing
