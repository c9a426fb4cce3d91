#pragma once
/// \file
/// The versions of the driver and libraries a run used, for reports and
/// calibration files ("13.0", "13.1.0", "9.19.0").

#include <string>

namespace splitscope::gpu {

struct LibraryVersions {
  std::string driver;   ///< the CUDA version the driver supports
  std::string runtime;  ///< the CUDA runtime linked
  std::string cublas;
  std::string cudnn;

  /// "driver 13.0, runtime 13.0, cuBLAS 13.1.0, cuDNN 9.19.0"
  std::string describe() const;
};

/// Asks the driver and each library (every call checked).
LibraryVersions library_versions();

}  // namespace splitscope::gpu
