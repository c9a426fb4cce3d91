#include "sim/network/link_efficiency.hpp"

namespace splitscope {
namespace {

// PCIe 3.0+: 4-DW memory-write header (64-bit address) 16 B, framing token with
// the sequence number 4 B, LCRC 4 B; 256-byte Max_Payload_Size.
constexpr PacketFormat kPcieWrite{256, 16 + 4 + 4};
// A read completion split at the 64-byte Read Completion Boundary: 3-DW
// completion header 12 B, framing and sequence number 4 B, LCRC 4 B.
constexpr PacketFormat kPcieReadCompletion{64, 12 + 4 + 4};
// NVLink: one 16-byte header flit per packet of eight 16-byte data flits (one 128-byte line).
constexpr PacketFormat kNvlink{128, 16};
// InfiniBand: 4096-byte MTU; LRH 8, BTH 12, ICRC 4, VCRC 2.
constexpr PacketFormat kInfiniband{4096, 8 + 12 + 4 + 2};

}  // namespace

std::string_view to_string(LinkProtocol protocol) {
  switch (protocol) {
    case LinkProtocol::kAchieved: return "achieved";
    case LinkProtocol::kPcie: return "pcie";
    case LinkProtocol::kNvlink: return "nvlink";
    case LinkProtocol::kInfiniband: return "infiniband";
  }
  return "?";
}

bool parse_link_protocol(std::string_view name, LinkProtocol* protocol) {
  for (LinkProtocol p : {LinkProtocol::kAchieved, LinkProtocol::kPcie, LinkProtocol::kNvlink,
                         LinkProtocol::kInfiniband}) {
    if (to_string(p) == name) {
      *protocol = p;
      return true;
    }
  }
  return false;
}

PacketFormat packet_format(LinkProtocol protocol, LinkTraffic traffic) {
  switch (protocol) {
    case LinkProtocol::kAchieved: return {1, 0};
    case LinkProtocol::kPcie: return traffic == LinkTraffic::kWrites ? kPcieWrite : kPcieReadCompletion;
    case LinkProtocol::kNvlink: return kNvlink;
    case LinkProtocol::kInfiniband: return kInfiniband;
  }
  return {1, 0};
}

double link_efficiency(LinkProtocol protocol, LinkTraffic traffic) {
  return packet_format(protocol, traffic).efficiency();
}

}  // namespace splitscope
