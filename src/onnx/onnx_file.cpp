#include "onnx/onnx_file.hpp"

#include <fcntl.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl.h>
#include <unistd.h>

#include <filesystem>
#include <set>

#include "util/errors.hpp"

namespace splitscope {
namespace {

constexpr const char* kReexport =
    "export it again with torch.onnx.export (or onnx.save) and pass the .onnx file it writes";

/// Parses straight from the file descriptor: a 230 MB ResNet-152 is then held
/// once (in the ModelProto), not twice (a string of the file and the proto).
::onnx::ModelProto parse_onnx_proto(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    throw InputError(path, "", "no such file (an .onnx MODEL is read from a path)");
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw InputError(path, "", "cannot be opened for reading");
  ::onnx::ModelProto model;
  bool parsed = false;
  {
    google::protobuf::io::FileInputStream file(fd);
    google::protobuf::io::CodedInputStream coded(&file);
    coded.SetTotalBytesLimit(std::numeric_limits<int>::max());
    parsed = model.ParseFromCodedStream(&coded) && coded.ConsumedEntireMessage();
  }
  ::close(fd);
  if (!parsed) {
    throw InputError(path, "", std::string("is not an ONNX model (protobuf cannot parse it: a truncated or "
                                           "damaged file, or another format); ") + kReexport);
  }
  if (!model.has_graph() || model.graph().output_size() == 0 || model.opset_import_size() == 0) {
    throw InputError(path, "", std::string("is not an ONNX model (it has no graph, graph output or opset); ") +
                                   kReexport);
  }
  return model;
}

void check_opset(const std::string& path, const ::onnx::ModelProto& model) {
  const int64_t opset = onnx_default_opset(model);
  if (opset < kOldestOnnxOpset || opset > kNewestOnnxOpset) {
    throw InputError(path, "opset_import",
                     "the model uses ONNX opset " + std::to_string(opset) + "; splitscope reads opsets " +
                         std::to_string(kOldestOnnxOpset) + " to " + std::to_string(kNewestOnnxOpset) +
                         ": export with torch.onnx.export(..., opset_version=" + std::to_string(kNewestOnnxOpset) +
                         ") or convert it with onnx.version_converter.convert_version(model, " +
                         std::to_string(kNewestOnnxOpset) + ")");
  }
}

/// Each initializer stored outside the file names its data file (relative to
/// the model's folder); the importer needs only shapes, but a model whose
/// weights are gone is not the model the user meant, so it is refused here.
void check_external_data(const std::string& path, const ::onnx::ModelProto& model) {
  const std::filesystem::path folder = std::filesystem::path(path).parent_path();
  std::set<std::string> checked;
  for (const auto& tensor : model.graph().initializer()) {
    if (tensor.data_location() != ::onnx::TensorProto::EXTERNAL) continue;
    std::string location;
    for (const auto& entry : tensor.external_data()) {
      if (entry.key() == "location") location = entry.value();
    }
    const std::string field = "initializer '" + tensor.name() + "'";
    if (location.empty()) {
      throw InputError(path, field, "its weights are marked external but name no file; " + std::string(kReexport));
    }
    if (!checked.insert(location).second) continue;
    std::error_code error;
    if (!std::filesystem::is_regular_file(folder / location, error)) {
      throw InputError(path, field,
                       "its weights are in the external file '" + location + "', which is not in " +
                           (folder.empty() ? std::string(".") : folder.string()) +
                           ": put that file beside the .onnx file, or save the model with its weights inside "
                           "(onnx.save(onnx.load(path), path, save_as_external_data=False), below 2 GB)");
    }
  }
}

}  // namespace

int64_t onnx_default_opset(const ::onnx::ModelProto& model) {
  for (const auto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") return opset.version();
  }
  return 0;
}

::onnx::ModelProto read_onnx_file(const std::string& path) {
  ::onnx::ModelProto model = parse_onnx_proto(path);
  check_opset(path, model);
  check_external_data(path, model);
  return model;
}

}  // namespace splitscope
