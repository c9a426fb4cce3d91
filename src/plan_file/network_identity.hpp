#pragma once
/// \file
/// What a plan file says of the network it was made for, so that a plan is
/// never run on another one: its name, batch, whether it trains, and a
/// fingerprint of the lowered graph (layers, ops, FLOPs, parameters).

#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.hpp"

namespace splitscope {

struct NetworkIdentity {
  std::string name;
  int64_t batch = 0;
  bool training = false;
  int64_t layers = 0;  ///< the model's layers
  int64_t ops = 0;     ///< the lowered graph's nodes (training: with the backward and update)
  int64_t flops = 0;   ///< the lowered graph's, at `batch`
  int64_t params = 0;

  bool operator==(const NetworkIdentity&) const = default;
};

NetworkIdentity identify(const Graph& graph);

/// One line per field in which `actual` (the network at hand) differs from
/// `expected` (the plan file's): "network: the plan is for mlp, not cnn".
std::vector<std::string> identity_differences(const NetworkIdentity& expected, const NetworkIdentity& actual);

}  // namespace splitscope
