#include "chakra/chakra_trace.hpp"

#include <fmt/format.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/util/delimited_message_util.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "plan/plan_walk.hpp"
#include "util/atomic_file.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace {

using ChakraProtoMsg::CollectiveCommType;
using ChakraProtoMsg::Node;
using ChakraProtoMsg::NodeType;

/// The schema version written in each file's metadata: the Chakra release
/// whose et_def.proto our subset follows.
constexpr const char* kChakraSchemaVersion = "0.0.4";

void add_bool(Node& node, const char* name, bool value) {
  auto* attr = node.add_attr();
  attr->set_name(name);
  attr->set_bool_val(value);
}
void add_int64(Node& node, const char* name, int64_t value) {
  auto* attr = node.add_attr();
  attr->set_name(name);
  attr->set_int64_val(value);
}
void add_uint64(Node& node, const char* name, uint64_t value) {
  auto* attr = node.add_attr();
  attr->set_name(name);
  attr->set_uint64_val(value);
}
void add_int32(Node& node, const char* name, int32_t value) {
  auto* attr = node.add_attr();
  attr->set_name(name);
  attr->set_int32_val(value);
}
void add_string(Node& node, const char* name, const std::string& value) {
  auto* attr = node.add_attr();
  attr->set_name(name);
  attr->set_string_val(value);
}

/// What an op is on one device's trace.
enum class Presence {
  kNone,        ///< it does not touch the device
  kPassing,     ///< a transfer from the device to itself: no node, its readers wait on its producers
  kCompute,
  kSend,        ///< a transfer's source, or a concat participant sending to its root
  kReceive,     ///< a transfer's destination
  kGather,      ///< a concat's root: a receive from each other participant
  kCollective,  ///< a participant of any other collective
};

/// A concat runs as its `direct` algorithm, every participant sending to the
/// root, so it is written as point-to-point sends that any replayer can run;
/// the other collectives are collective nodes.
Presence presence(const PlanOp& op, int device) {
  switch (op.role) {
    case OpRole::kCompute:
    case OpRole::kEpilogue:
    case OpRole::kUpdate:
      return op.device == device ? Presence::kCompute : Presence::kNone;
    case OpRole::kTransfer:
      if (op.src_device == op.device) return op.device == device ? Presence::kPassing : Presence::kNone;
      if (op.src_device == device) return Presence::kSend;
      return op.device == device ? Presence::kReceive : Presence::kNone;
    case OpRole::kCollective: {
      const bool participant =
          std::find(op.participants.begin(), op.participants.end(), device) != op.participants.end();
      if (op.collective == CollectiveKind::kConcat) {
        if (op.device == device) return Presence::kGather;
        return participant ? Presence::kSend : Presence::kNone;
      }
      return participant ? Presence::kCollective : Presence::kNone;
    }
  }
  return Presence::kNone;
}

CollectiveCommType comm_type(CollectiveKind kind) {
  switch (kind) {
    case CollectiveKind::kAllGather: return ChakraProtoMsg::ALL_GATHER;
    case CollectiveKind::kAllReduce: return ChakraProtoMsg::ALL_REDUCE;
    case CollectiveKind::kReduceScatter: return ChakraProtoMsg::REDUCE_SCATTER;
    case CollectiveKind::kBroadcast: return ChakraProtoMsg::BROADCAST;
    case CollectiveKind::kConcat: return ChakraProtoMsg::GATHER;
  }
  return ChakraProtoMsg::ALL_REDUCE;
}

/// The bytes one participant of a concat sends the root: its input value.
int64_t concat_share(const Plan& plan, const PlanOp& op, int device) {
  for (size_t i = 0; i < op.participants.size(); ++i) {
    if (op.participants[i] == device) return plan.value(op.inputs[i]).bytes;
  }
  return 0;
}


}  // namespace

ChakraTraces chakra_traces(const Plan& plan, const Timeline& predicted) {
  std::vector<double> compute_us(plan.ops.size(), 0.0);
  for (const Span& span : predicted.spans) {
    if (span.op >= 0 && span.lane == Lane::kCompute && static_cast<size_t>(span.op) < plan.ops.size()) {
      compute_us[static_cast<size_t>(span.op)] += span.duration_us();
    }
  }
  const auto predecessors = op_predecessors(plan);
  const PlanWalk walk = walk_plan(plan);

  ChakraTraces traces;
  // Communicator groups are numbered "1", "2", ... in order of first use (the
  // keys of ASTRA-sim's group file); the same members are the same group on
  // every device's trace.
  std::map<std::vector<int>, std::string> group_names;
  traces.devices.resize(static_cast<size_t>(plan.devices));
  for (int device = 0; device < plan.devices; ++device) {
    auto& nodes = traces.devices[static_cast<size_t>(device)];
    // The node ids an op stands for on this device: its own node, or for an
    // op that passes through, the nodes it waits on.
    std::vector<std::vector<uint64_t>> stands_for(plan.ops.size());
    for (int id : walk.order) {
      const PlanOp& op = plan.op(id);
      const Presence here = presence(op, device);
      if (here == Presence::kNone) continue;
      std::set<uint64_t> deps;
      for (int before : predecessors[static_cast<size_t>(id)]) {
        const auto& ids = stands_for[static_cast<size_t>(before)];
        deps.insert(ids.begin(), ids.end());
      }
      const int previous = walk.schedule_previous[static_cast<size_t>(id)];
      if (previous >= 0) {
        const auto& ids = stands_for[static_cast<size_t>(previous)];
        deps.insert(ids.begin(), ids.end());
      }
      if (here == Presence::kPassing) {
        stands_for[static_cast<size_t>(id)].assign(deps.begin(), deps.end());
        continue;
      }
      auto add_node = [&](NodeType type) -> Node& {
        Node& node = nodes.emplace_back();
        node.set_id(nodes.size() - 1);
        node.set_name(op_label(plan, op));
        node.set_type(type);
        for (uint64_t dep : deps) node.add_data_deps(dep);
        add_bool(node, "is_cpu_op", false);
        add_int64(node, "splitscope_op", id);
        return node;
      };
      auto add_message = [&](NodeType type, int src, int dst, int64_t bytes) -> Node& {
        Node& node = add_node(type);
        add_int32(node, "comm_src", src);
        add_int32(node, "comm_dst", dst);
        add_int64(node, "comm_size", bytes);
        add_int32(node, "comm_tag", id);
        return node;
      };
      auto& mine = stands_for[static_cast<size_t>(id)];
      switch (here) {
        case Presence::kCompute: {
          Node& node = add_node(ChakraProtoMsg::COMP_NODE);
          const double us = compute_us[static_cast<size_t>(id)];
          node.set_duration_micros(static_cast<uint64_t>(std::llround(us)));
          add_int64(node, "num_ops", op.flops);
          add_uint64(node, "tensor_size", static_cast<uint64_t>(op.bytes_read + op.bytes_written));
          add_uint64(node, "splitscope_duration_ns", static_cast<uint64_t>(std::llround(us * 1000.0)));
          mine = {node.id()};
          break;
        }
        case Presence::kSend:
          mine = {add_message(ChakraProtoMsg::COMM_SEND_NODE, device, op.device,
                              op.role == OpRole::kTransfer ? op.bytes_moved : concat_share(plan, op, device))
                      .id()};
          break;
        case Presence::kReceive:
          mine = {add_message(ChakraProtoMsg::COMM_RECV_NODE, op.src_device, device, op.bytes_moved).id()};
          break;
        case Presence::kGather:
          // The root's own slice (when it is a participant) is local: its
          // readers wait on what produced it, and on a receive per sender.
          mine.assign(deps.begin(), deps.end());
          for (int sender : op.participants) {
            if (sender == device) continue;
            mine.push_back(
                add_message(ChakraProtoMsg::COMM_RECV_NODE, sender, device, concat_share(plan, op, sender)).id());
          }
          break;
        case Presence::kCollective: {
          Node& node = add_node(ChakraProtoMsg::COMM_COLL_NODE);
          add_int64(node, "comm_type", comm_type(op.collective));
          add_int64(node, "comm_size", op.payload_bytes);
          if (static_cast<int>(op.participants.size()) < plan.devices) {
            std::vector<int> members = op.participants;
            std::sort(members.begin(), members.end());
            auto [it, added] = group_names.emplace(members, std::to_string(group_names.size() + 1));
            if (added) traces.groups.emplace(it->second, members);
            add_string(node, "pg_name", it->second);
          }
          mine = {node.id()};
          break;
        }
        case Presence::kNone:
        case Presence::kPassing:
          break;
      }
    }
  }
  return traces;
}

std::vector<std::string> write_chakra_traces(const ChakraTraces& traces, const std::string& dir,
                                             const std::string& prefix) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) throw InputError(dir, "", fmt::format("cannot create the trace folder: {}", error.message()));
  std::vector<std::string> written;
  for (size_t device = 0; device < traces.devices.size(); ++device) {
    std::string bytes;
    {
      google::protobuf::io::StringOutputStream stream(&bytes);
      ChakraProtoMsg::GlobalMetadata metadata;
      metadata.set_version(kChakraSchemaVersion);
      google::protobuf::util::SerializeDelimitedToZeroCopyStream(metadata, &stream);
      for (const Node& node : traces.devices[device]) {
        google::protobuf::util::SerializeDelimitedToZeroCopyStream(node, &stream);
      }
    }
    const std::string path = (std::filesystem::path(dir) / fmt::format("{}.{}.et", prefix, device)).string();
    write_file_atomically(path, bytes);
    written.push_back(path);
  }
  if (!traces.groups.empty()) {
    nlohmann::json groups = nlohmann::json::object();
    for (const auto& [key, members] : traces.groups) groups[key] = members;
    const std::string path = (std::filesystem::path(dir) / (prefix + ".comm_groups.json")).string();
    write_file_atomically(path, groups.dump(2) + "\n");
    written.push_back(path);
  }
  return written;
}

std::vector<Node> read_chakra_trace(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw InputError(path, "", "cannot open the trace file");
  const std::string bytes{std::istreambuf_iterator<char>(file), std::istreambuf_iterator<char>()};
  google::protobuf::io::ArrayInputStream stream(bytes.data(), static_cast<int>(bytes.size()));
  ChakraProtoMsg::GlobalMetadata metadata;
  bool clean_eof = false;
  if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&metadata, &stream, &clean_eof) ||
      metadata.version().empty()) {
    throw InputError(path, "", "not a Chakra execution trace (no GlobalMetadata message first)");
  }
  std::vector<Node> nodes;
  while (true) {
    Node node;
    if (!google::protobuf::util::ParseDelimitedFromZeroCopyStream(&node, &stream, &clean_eof)) {
      if (clean_eof) break;
      throw InputError(path, fmt::format("node {}", nodes.size()), "is not a valid Chakra node (a truncated file?)");
    }
    nodes.push_back(std::move(node));
  }
  return nodes;
}

}  // namespace splitscope
