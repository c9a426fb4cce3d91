#pragma once
/// \file
/// What a link carries of its line rate. A machine file gives each link's
/// datasheet line rate (GB/s per direction) and, optionally, its `protocol`;
/// every byte of payload then travels with the packet headers, CRCs and
/// framing of that protocol, so a transfer or a collective's ring step moves
/// payload at
///
///   achieved = line rate × payload / (payload + per-packet overhead)
///
/// with the packet sizes below (docs/cost-model.md, "Links", works them out):
///
/// - pcie (PCI Express 3.0 and later, 128b/130b encoding already in the line
///   rate): a memory-write TLP carries up to Max_Payload_Size = 256 bytes
///   (what GPUs and server root ports negotiate) behind 24 bytes of
///   overhead: a 4-DW header with a 64-bit address (16 B), the sequence
///   number and framing token (4 B) and the LCRC (4 B) — PCI Express Base
///   Specification 3.0, sections 2.2 and 4.2.2. So writes (device -> host on a
///   host-staged bus, and GPU peer-to-peer writes through a PCIe switch) carry
///   256/280 = 91.4%. A device's DMA *reads* of host memory (host -> device)
///   come back as completions that root complexes split at the 64-byte Read
///   Completion Boundary (spec section 2.3.1.1; NCCL's src/graph/topo.h notes
///   that Intel CPUs turn GPU traffic into 64-byte TLPs), each behind a 3-DW
///   completion header (12 B) + 4 B + 4 B: 64/84 = 76.2%.
/// - nvlink (NVLink 1-4): data moves in 16-byte flits, one header flit per
///   packet; a GPU's copy and NCCL kernels store 128-byte L2 lines, so a
///   packet is 1 header + 8 data flits: 128/144 = 88.9% (Foley & Danskin,
///   "Ultra-Performance Pascal GPU and NVLink Interconnect", IEEE Micro 37(2),
///   2017, on the flit and packet format).
/// - infiniband (EDR/HDR/NDR; the 64b/66b encoding is already in the data
///   rate): 4096-byte MTU payload behind LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26
///   bytes (InfiniBand Architecture Specification vol. 1, chapter 5):
///   4096/4122 = 99.4%.
/// - achieved: the number is already a measured or achieved rate (calibrated
///   machines, the cpu preset's memcpy rate): carried as is.
///
/// A machine file's link without `protocol` is a line rate of the technology
/// its place implies: `pcie` for a host-staged bus, `nvlink` for a switch
/// port (and a multi-node machine's in-node port), `infiniband` for a NIC
/// (sim/machine/machine_file.cpp). A LinkSpec built in code is `achieved` unless it
/// says otherwise.

#include <string_view>

namespace splitscope {

enum class LinkProtocol { kAchieved, kPcie, kNvlink, kInfiniband };

/// "achieved", "pcie", "nvlink", "infiniband"
std::string_view to_string(LinkProtocol protocol);
/// The protocol named `name`; false when there is none.
bool parse_link_protocol(std::string_view name, LinkProtocol* protocol);

/// How a transfer's data crosses a link: as posted writes (a device's copy
/// engine writing to host memory, or to a peer through a switch), or as the
/// completions that answer a device's DMA reads (a copy engine reading host
/// memory: the down half of a host-staged copy). Only PCIe tells them apart.
enum class LinkTraffic { kWrites, kReadCompletions };

/// Bytes of payload and of overhead of one packet.
struct PacketFormat {
  double payload_bytes = 1;
  double overhead_bytes = 0;
  double efficiency() const { return payload_bytes / (payload_bytes + overhead_bytes); }
};

/// The packet that carries a transfer's data over a `protocol` link in as `traffic`.
PacketFormat packet_format(LinkProtocol protocol, LinkTraffic traffic);

/// The fraction of the line rate that is payload: packet_format(...).efficiency().
double link_efficiency(LinkProtocol protocol, LinkTraffic traffic);

}  // namespace splitscope
