#pragma once
/// \file
/// MODEL arguments: a path or a zoo name -> a lowered Graph.

#include <memory>
#include <optional>
#include <string>

#include "ir/graph.hpp"
#include "ir/zoo.hpp"

namespace splitscope::cli {

/// True for a path ending in .onnx (any case): an ONNX model (docs/onnx.md).
bool is_onnx_path(const std::string& path);

/// An ONNX file as a network; `batch` fills a dynamic batch and overrides the
/// file's. UnavailableError (exit 3) in a build without libonnx.
Model load_onnx_network(const std::string& path, std::optional<int64_t> batch);

/// Resolves, parses, validates and lowers a network (a network file, a zoo
/// name or an .onnx file); `batch` overrides the file's.
std::shared_ptr<const Graph> load_network(const std::string& name_or_path,
                                          std::optional<int64_t> batch = std::nullopt);

/// The file a MODEL or MACHINE argument reads (a zoo name resolved to its
/// file), for check_output_files: `--report models/networks/mlp-small.json`
/// must be refused when the network was named `mlp-small`. "" when there is
/// no such file: loading it fails later with the zoo's own message.
std::string input_file(ZooShelf shelf, const std::string& name_or_path);

}  // namespace splitscope::cli
