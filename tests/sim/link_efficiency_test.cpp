// Links (sim/network/link_efficiency.hpp): the payload each protocol carries of its
// line rate, worked out from packet sizes; the topology's links at those
// rates; a ring all-reduce at the derived bandwidth; and the protocol a
// machine file's link gets when it names none.

#include "sim/network/link_efficiency.hpp"

#include <gtest/gtest.h>

#include "hand_plan.hpp"
#include "sim/machine/machine_file.hpp"
#include "sim/engine/simulator.hpp"
#include "sim/machine/topology.hpp"
#include "util/errors.hpp"

namespace splitscope {
namespace link_efficiency_test {
namespace {

using testing::HandPlan;
using testing::host_staged_topology;
using testing::switch_topology;
using testing::test_machine;

TEST(LinkEfficiency, PayloadOverPayloadPlusHeaders) {
  // PCIe write TLP: 256 B behind 16 + 4 + 4 B; read completion: 64 B behind 12 + 4 + 4 B.
  EXPECT_DOUBLE_EQ(link_efficiency(LinkProtocol::kPcie, LinkTraffic::kWrites), 256.0 / 280);
  EXPECT_DOUBLE_EQ(link_efficiency(LinkProtocol::kPcie, LinkTraffic::kReadCompletions), 64.0 / 84);
  // NVLink: 8 data flits behind one header flit of 16 B.
  EXPECT_DOUBLE_EQ(link_efficiency(LinkProtocol::kNvlink, LinkTraffic::kWrites), 128.0 / 144);
  // InfiniBand: 4096-byte MTU behind LRH 8 + BTH 12 + ICRC 4 + VCRC 2.
  EXPECT_DOUBLE_EQ(link_efficiency(LinkProtocol::kInfiniband, LinkTraffic::kWrites), 4096.0 / 4122);
  EXPECT_DOUBLE_EQ(link_efficiency(LinkProtocol::kAchieved, LinkTraffic::kReadCompletions), 1.0);
  for (LinkProtocol p : {LinkProtocol::kAchieved, LinkProtocol::kPcie, LinkProtocol::kNvlink,
                         LinkProtocol::kInfiniband}) {
    LinkProtocol parsed = LinkProtocol::kAchieved;
    ASSERT_TRUE(parse_link_protocol(to_string(p), &parsed));
    EXPECT_EQ(parsed, p);
  }
  LinkProtocol unused = LinkProtocol::kAchieved;
  EXPECT_FALSE(parse_link_protocol("ethernet", &unused));
}

TEST(LinkEfficiency, AHostStagedPcieBusCarriesWritesUpAndReadCompletionsDown) {
  // 15.75 GB/s PCIe 3.0 x16: 14.4 GB/s of device-to-host writes, 12.0 GB/s of host-to-device reads.
  TopologySpec topology = host_staged_topology(4, 15.75, 10);
  topology.bus.protocol = LinkProtocol::kPcie;
  const Topology links(test_machine(8, topology));
  ASSERT_EQ(links.links().size(), 4u);
  EXPECT_DOUBLE_EQ(links.links()[0].bytes_per_second, 15.75e9 * 256 / 280);  // bus 0 up
  EXPECT_DOUBLE_EQ(links.links()[1].bytes_per_second, 15.75e9 * 64 / 84);    // bus 0 down
  EXPECT_NEAR(links.links()[1].bytes_per_second, 12.0e9, 0.001e9);
}

TEST(LinkEfficiency, ARingAllReduceRunsAtTheDerivedBusBandwidth) {
  // 4 GPUs on 300 GB/s NVLink ports: 266.67 GB/s of payload each way. An
  // all-reduce of B = 64 MiB moves 2·3/4·B through every port in 6 ring
  // steps: 2·3/4 · 67,108,864 / 266.67e9 = 377.49 µs. The test device (an
  // fp32 peak alone) is Pascal to NCCL's model (nccl_protocol.hpp), whose
  // 18-of-20 NVLink share (270 GB/s) is above the payload rate, so the
  // payload rate stands; NCCL runs this size as Simple, whose latency is
  // 8.4 + 6 · 3.4 = 28.8 µs (not the file's 3 µs a step): 406.29 µs.
  // nccl-tests' bus bandwidth, algbw · 2(n-1)/n = B/t · 3/2 = 247.8 GB/s,
  // approaches the payload rate as B grows.
  const int n = 4;
  const int64_t bytes = 64LL << 20;
  TopologySpec topology = switch_topology(300, 3);
  topology.link.protocol = LinkProtocol::kNvlink;
  HandPlan hand(R"({"batch": 4, "input": [16], "layers": [{"type": "dense", "units": 16, "name": "fc"}]})", n);
  std::vector<int> inputs;
  for (int d = 0; d < n; ++d) inputs.push_back(hand.input(hand.node("fc"), d, bytes));
  hand.collective(CollectiveKind::kAllReduce, inputs);
  const Timeline timeline = simulate(hand.plan(), test_machine(n, topology));
  const double payload = 300e9 * 128 / 144;
  const double expected_us = 2.0 * (n - 1) / n * static_cast<double>(bytes) / payload * 1e6 + 8.4 + 2 * (n - 1) * 3.4;
  EXPECT_NEAR(timeline.makespan_us(), expected_us, 1e-6);
  EXPECT_NEAR(expected_us, 406.29, 0.01);
}

TEST(LinkEfficiency, AMachineFileLinkIsTheLineRateOfWhatItsPlaceImplies) {
  auto parse = [](const std::string& topology) {
    return parse_machine_text(R"({"name": "m", "devices": 4, "device": {"name": "g", "peak_tflops": {"fp32": 1},
        "memory_bandwidth_GBps": 100, "memory_GiB": 1}, "topology": )" + topology + "}",
                              "m.json");
  };
  EXPECT_EQ(parse(R"({"kind": "switch", "link": {"bandwidth_GBps": 300}})").topology.link.protocol,
            LinkProtocol::kNvlink);
  EXPECT_EQ(parse(R"({"kind": "host-staged", "bus": {"bandwidth_GBps": 16}})").topology.bus.protocol,
            LinkProtocol::kPcie);
  const Machine nodes = parse(R"({"kind": "multi-node", "devices_per_node": 2, "nics_per_node": 1,
      "link": {"bandwidth_GBps": 300}, "nic": {"bandwidth_GBps": 50}})");
  EXPECT_EQ(nodes.topology.link.protocol, LinkProtocol::kNvlink);
  EXPECT_EQ(nodes.topology.nic.protocol, LinkProtocol::kInfiniband);
  // A rate already achieved (measured) is carried as is; a PCIe switch says so.
  EXPECT_EQ(parse(R"({"kind": "switch", "link": {"bandwidth_GBps": 8, "protocol": "achieved"}})")
                .topology.link.protocol,
            LinkProtocol::kAchieved);
  EXPECT_EQ(parse(R"({"kind": "switch", "link": {"bandwidth_GBps": 16, "protocol": "pcie"}})")
                .topology.link.protocol,
            LinkProtocol::kPcie);
  try {
    parse(R"({"kind": "switch", "link": {"bandwidth_GBps": 8, "protocol": "token-ring"}})");
    FAIL() << "an unknown protocol was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("topology.link.protocol"), std::string::npos) << e.what();
  }
  // Written out, the protocol is explicit, and reads back the same.
  const Machine machine = parse(R"({"kind": "host-staged", "bus": {"bandwidth_GBps": 16}})");
  const Machine again = parse_machine_text(machine_to_json(machine), "again.json");
  EXPECT_EQ(again.topology.bus, machine.topology.bus);
  EXPECT_NE(machine_to_json(machine).find("\"protocol\": \"pcie\""), std::string::npos);
}

}  // namespace
}  // namespace link_efficiency_test
}  // namespace splitscope
