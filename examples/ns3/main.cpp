// An ns-3 (3.37) network of XPUs running the library's fabric harness inside ns-3: N nodes on
// CSMA links through one learning bridge. The fabric (sim/fabric.hpp) is each XPU's SUE
// endpoint: it packs 64-byte writes per destination, frames each PDU (RH, commands, R-CRC) in
// the chosen encapsulation and runs go-back-N per peer; ns-3 owns the wire and the clock:
//
//   - the wire: a link model takes every frame the fabric sends and hands it to the XPU's CSMA
//     device; a frame a device receives goes back to the fabric (fabric::receive_frame), which
//     reads it like any receiver. The PDU's tag (which commands it carries, for the fabric's
//     exactly-once check) travels as an ns-3 packet tag. The receivers lose packets through an
//     ns-3 error model;
//   - the clock: an ns-3 event wakes the fabric at fabric::next_event_time() and runs it to the
//     present (fabric::advance).
//
//   example_ns3 [--nodes=N] [--encap=udp4|udp6|afh1|afh1-vlan|afh1-shim|afh1-vlan-shim]
//               [--commands=K] [--loss=P] [--limit=BYTES] [--seed=S] [--pcap=PREFIX]
//
// What ns-3 decides and the library does not: CSMA builds the Ethernet header itself, so the
// link model hands the device what follows the library's Ethernet header, with the destination
// address and Ethertype read back from the frame the library wrote; CSMA pads short frames, so
// the receiver finds the PDU's end from the carrier (IPv4/IPv6 length, the AFH Gen 1 shim's
// length) or, for bare AFH Gen 1, from the R-CRC (docs/wire-format.md). Every device writes a
// pcap that `scaleup dump` and the Wireshark plugin dissect.
//
// Exit status: 0 when every command was delivered exactly once and in order per source.
#include <ns3/boolean.h>
#include <ns3/bridge-helper.h>
#include <ns3/command-line.h>
#include <ns3/csma-helper.h>
#include <ns3/csma-net-device.h>
#include <ns3/error-model.h>
#include <ns3/global-value.h>
#include <ns3/mac48-address.h>
#include <ns3/node-container.h>
#include <ns3/packet.h>
#include <ns3/rng-seed-manager.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/tag.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "scaleup/pack/default_profile.hpp"
#include "scaleup/sim/fabric.hpp"
#include "scaleup/wire/frame.hpp"

namespace {

namespace sw = scaleup::wire;
namespace sp = scaleup::pack;
namespace sm = scaleup::sim;

constexpr std::size_t max_nodes = 64;
constexpr std::size_t data_bytes = 64;

struct settings {
  std::uint32_t nodes = 8;
  sw::encap kind = sw::encap::udp4;
  std::uint32_t commands = 500;  // per node
  double loss = 0.01;
  std::uint32_t limit = 1024;  // payload bytes per PDU
  std::uint32_t seed = 1;
};

struct counters {
  std::uint64_t dropped_by_model = 0, dropped_by_link = 0, foreign = 0;
};

void count_drop(std::uint64_t* n, ns3::Ptr<const ns3::Packet>) { ++*n; }

std::uint64_t now() { return static_cast<std::uint64_t>(ns3::Simulator::Now().GetNanoSeconds()); }

// The fabric's tag for a PDU, carried through ns-3 as a packet tag.
class pdu_tag_ns3 final : public ns3::Tag {
 public:
  sm::pdu_tag tag{};

  static ns3::TypeId GetTypeId() {
    static ns3::TypeId tid =
        ns3::TypeId("scaleup::pdu_tag_ns3").SetParent<ns3::Tag>().AddConstructor<pdu_tag_ns3>();
    return tid;
  }
  ns3::TypeId GetInstanceTypeId() const override { return GetTypeId(); }
  std::uint32_t GetSerializedSize() const override { return 16; }
  void Serialize(ns3::TagBuffer b) const override {
    b.WriteU32(tag.stream);
    b.WriteU32(tag.count);
    b.WriteU64(tag.first_seq);
  }
  void Deserialize(ns3::TagBuffer b) override {
    tag.stream = b.ReadU32();
    tag.count = b.ReadU32();
    tag.first_seq = b.ReadU64();
  }
  void Print(std::ostream&) const override {}
};

// The wire is ns-3's: every frame the fabric sends goes to the sending XPU's CSMA device.
class csma_wire final : public sm::link_model {
 public:
  std::vector<ns3::Ptr<ns3::CsmaNetDevice>> devices;

  sm::link_verdict on_frame(const sm::link_frame& f) override {
    sm::link_verdict v;
    v.what = sm::link_verdict::fate::take;
    if (f.direction != sm::hop::up || f.xpu >= devices.size() || f.frame.size() < 14) return v;
    // CSMA writes the Ethernet header: hand it the rest, addressed as the library did.
    ns3::Mac48Address to;
    to.CopyFrom(f.frame.data());
    auto pkt = ns3::Create<ns3::Packet>(f.frame.data() + 14,
                                        static_cast<std::uint32_t>(f.frame.size() - 14));
    pdu_tag_ns3 t;
    t.tag = f.tag;
    pkt->AddPacketTag(t);
    devices[f.xpu]->Send(pkt, to, sw::load_be16(f.frame.data() + 12));
    return v;
  }
};

// Runs the fabric on ns-3's clock: one pending ns-3 event, at the fabric's next event.
class fabric_clock {
 public:
  explicit fabric_clock(sm::fabric& f) : f_(f) {}

  // Runs everything due now, then sleeps until the next thing to do.
  void wake() {
    f_.advance(now());
    const std::uint64_t t = f_.next_event_time();
    if (t == sm::fabric::never || (pending_.IsRunning() && at_ <= t)) return;
    pending_.Cancel();
    at_ = t;
    pending_ = ns3::Simulator::Schedule(ns3::NanoSeconds(t > now() ? t - now() : 0),
                                        &fabric_clock::wake, this);
  }

 private:
  sm::fabric& f_;
  ns3::EventId pending_;
  std::uint64_t at_ = 0;
};

// A device's frames go back to the fabric, rebuilt as they were on the wire (less the FCS).
class receiver {
 public:
  receiver(std::uint32_t id, sm::fabric& f, fabric_clock& c, counters& n)
      : id_(id), f_(f), c_(c), n_(n) {}

  void receive(ns3::Ptr<ns3::NetDevice>, ns3::Ptr<const ns3::Packet> pkt, std::uint16_t type,
               const ns3::Address& from, const ns3::Address& to, ns3::NetDevice::PacketType) {
    pdu_tag_ns3 t;
    if (!pkt->PeekPacketTag(t)) {
      ++n_.foreign;  // not the fabric's
      return;
    }
    std::vector<std::uint8_t> frame(14 + pkt->GetSize());
    ns3::Mac48Address::ConvertFrom(to).CopyTo(frame.data());
    ns3::Mac48Address::ConvertFrom(from).CopyTo(frame.data() + 6);
    sw::store_be16(frame.data() + 12, type);
    pkt->CopyData(frame.data() + 14, pkt->GetSize());
    f_.receive_frame(static_cast<std::uint16_t>(id_), 0, frame, t.tag, now());
    c_.wake();
  }

 private:
  std::uint32_t id_;
  sm::fabric& f_;
  fabric_clock& c_;
  counters& n_;
};

// The Ethernet source address the library writes for XPU `id` in this encapsulation.
ns3::Mac48Address station_address(sw::encap kind, std::uint32_t id) {
  std::array<std::uint8_t, 128> f{};
  sw::frame_params p;
  p.kind = kind;
  p.src_xpu = id;
  (void)sw::emit_frame(p, {}, f);
  ns3::Mac48Address a;
  a.CopyFrom(f.data() + 6);
  return a;
}

// A non-posted full write of 64 bytes whose address names its source and a sequence number
// per destination, so that a capture shows who sent it.
std::vector<std::uint8_t> write_command(std::uint32_t src, std::uint64_t seq) {
  std::vector<std::uint8_t> c(12 + data_bytes);
  (void)sw::encode(sp::cmd_write{.type = sp::code::write_full,
                                 .dlen = static_cast<std::uint8_t>(data_bytes - 1),
                                 .tag = static_cast<std::uint16_t>(seq),
                                 .addr = (std::uint64_t{src} << 48) | seq},
                   sw::mutable_bytes(c.data(), 12));
  for (std::size_t i = 12; i < c.size(); ++i) c[i] = static_cast<std::uint8_t>(seq + i);
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  settings s;
  std::string encap = "udp4", pcap;
  ns3::CommandLine cmd;
  cmd.AddValue("nodes", "XPUs on the bridge (2-64)", s.nodes);
  cmd.AddValue("encap", "udp4, udp6, afh1, afh1-vlan, afh1-shim or afh1-vlan-shim", encap);
  cmd.AddValue("commands", "64-byte writes each XPU sends, to random peers", s.commands);
  cmd.AddValue("loss", "packet loss rate of every XPU's receiver (ns-3 RateErrorModel)", s.loss);
  cmd.AddValue("limit", "payload bytes per PDU (the packing limit, 76-4096)", s.limit);
  cmd.AddValue("seed", "seed of the traffic and of ns-3's random streams", s.seed);
  cmd.AddValue("pcap", "write a pcap per XPU device: PREFIX-<node>-<device>.pcap", pcap);
  cmd.Parse(argc, argv);

  const auto kind = sw::encap_from_string(encap);
  if (!kind || *kind == sw::encap::afh2 || *kind == sw::encap::afh2c || *kind == sw::encap::lite) {
    std::fprintf(stderr, "--encap: %s is not an Ethernet encapsulation CSMA can carry\n",
                 encap.c_str());
    return 2;
  }
  if (s.nodes < 2 || s.nodes > max_nodes || s.limit < 76 || s.limit > sp::sue_pack_limit ||
      s.loss < 0 || s.loss >= 1) {
    std::fprintf(stderr, "--nodes 2-64, --limit 76-4096, --loss in [0, 1)\n");
    return 2;
  }
  s.kind = *kind;
  ns3::RngSeedManager::SetSeed(s.seed);
  // CSMA frames carry an FCS in the pcaps; with checksums on it is a real CRC-32 (else zeros),
  // so readers of the capture can tell it from the PDU's last bytes.
  ns3::GlobalValue::Bind("ChecksumEnabled", ns3::BooleanValue(true));

  // The fabric: one port per XPU. Its rate paces what the XPU hands its device: 3 Gb/s, below
  // what a half-duplex 10 Gb/s CSMA link carries each way when both ends talk, so the device's
  // queue does not overflow and commands wait in the fabric, where they are packed. Go-back-N
  // is tuned for CSMA's backoff, which can hold a frame for microseconds.
  sm::fabric_config fc;
  fc.xpus = static_cast<std::uint16_t>(s.nodes);
  fc.ports = 1;
  fc.vcs = 1;
  fc.instance_gbps = 3;
  fc.encap = s.kind;
  fc.pack_limit = s.limit;
  fc.gbn = {.window = 64, .rto = 100'000, .max_retries = 64, .ack_every = 8, .ack_delay = 4'000};
  csma_wire wire;
  sm::fabric fab(fc, &wire);
  fabric_clock clk(fab);
  counters n;

  // N XPUs, each on its own CSMA link to a bridge node.
  ns3::NodeContainer xpus, bridge;
  xpus.Create(s.nodes);
  bridge.Create(1);
  ns3::CsmaHelper csma;
  csma.SetChannelAttribute("DataRate", ns3::StringValue("10Gbps"));
  csma.SetChannelAttribute("Delay", ns3::TimeValue(ns3::NanoSeconds(100)));
  ns3::NetDeviceContainer xpu_devs, bridge_ports;
  for (std::uint32_t i = 0; i < s.nodes; ++i) {
    const auto link = csma.Install(ns3::NodeContainer(xpus.Get(i), bridge.Get(0)));
    // CSMA is half duplex: an XPU and its bridge port share the link and back off when it is
    // busy. ns-3's default slot (1 us, up to 1000 slots) suits 10 Mb/s Ethernet; here a slot
    // is about a short frame's time and at most 16 of them. The last two arguments are the
    // retry limit and the exponent's ceiling, named in that order in the header and assigned
    // in the other in ns-3.37's source: both get 1000, so either reading keeps ns-3's limit.
    for (std::uint32_t d = 0; d < 2; ++d) {
      auto dev = ns3::DynamicCast<ns3::CsmaNetDevice>(link.Get(d));
      dev->SetBackoffParams(ns3::NanoSeconds(50), 1, 16, 1000, 1000);
      // Frames the links themselves drop (a queue overflow, a backoff given up) are losses
      // the transport must recover from too: count them.
      dev->TraceConnectWithoutContext("MacTxDrop",
                                      ns3::MakeBoundCallback(&count_drop, &n.dropped_by_link));
      dev->TraceConnectWithoutContext("PhyTxDrop",
                                      ns3::MakeBoundCallback(&count_drop, &n.dropped_by_link));
    }
    xpu_devs.Add(link.Get(0));
    bridge_ports.Add(link.Get(1));
  }
  ns3::BridgeHelper().Install(bridge.Get(0), bridge_ports);

  std::vector<std::unique_ptr<receiver>> receivers;
  for (std::uint32_t i = 0; i < s.nodes; ++i) {
    auto dev = ns3::DynamicCast<ns3::CsmaNetDevice>(xpu_devs.Get(i));
    dev->SetAddress(station_address(s.kind, i));
    if (s.loss > 0) {
      auto em = ns3::CreateObject<ns3::RateErrorModel>();
      em->SetUnit(ns3::RateErrorModel::ERROR_UNIT_PACKET);
      em->SetRate(s.loss);
      em->AssignStreams(i);
      dev->SetReceiveErrorModel(em);
    }
    dev->TraceConnectWithoutContext("PhyRxDrop",
                                    ns3::MakeBoundCallback(&count_drop, &n.dropped_by_model));
    receivers.push_back(std::make_unique<receiver>(i, fab, clk, n));
    dev->GetNode()->RegisterProtocolHandler(
        ns3::MakeCallback(&receiver::receive, receivers.back().get()), 0, dev);
    wire.devices.push_back(dev);
  }
  if (!pcap.empty()) csma.EnablePcap(pcap, xpu_devs);

  // Each XPU offers its writes at random times to random peers (uniform traffic), the
  // command bytes its own; the fabric queues them until their time.
  std::mt19937_64 rng(s.seed);
  std::vector<std::uint64_t> seq(std::size_t{s.nodes} * s.nodes);
  for (std::uint32_t i = 0; i < s.nodes; ++i) {
    double at = 0;
    std::exponential_distribution<double> gap(1.0 / 200.0);  // ns: about 3 Gb/s of writes
    for (std::uint32_t k = 0; k < s.commands; ++k) {
      at += gap(rng);
      auto d = static_cast<std::uint32_t>(
          std::uniform_int_distribution<std::uint32_t>(0, s.nodes - 2)(rng));
      if (d >= i) ++d;
      const auto c = write_command(i, seq[i * s.nodes + d]++);
      if (const auto e = fab.add({.at = static_cast<std::uint64_t>(at),
                                  .src = static_cast<std::uint16_t>(i),
                                  .dst = static_cast<std::uint16_t>(d),
                                  .command = c})) {
        std::fprintf(stderr, "xpu %u: offer refused: %.*s\n", i, int(e.what.size()), e.what.data());
        return 1;
      }
    }
  }
  clk.wake();
  ns3::Simulator::Stop(ns3::Seconds(1));
  ns3::Simulator::Run();
  ns3::Simulator::Destroy();

  const sm::fabric_stats& st = fab.stats();
  std::printf(
      "%u XPUs, %s, loss %.3f: %llu offered, %llu delivered, %llu duplicates, "
      "%llu out of order\n",
      s.nodes, encap.c_str(), s.loss, (unsigned long long)st.offered,
      (unsigned long long)st.delivered, (unsigned long long)st.duplicates,
      (unsigned long long)st.out_of_order);
  std::printf(
      "%llu PDUs (%.1f commands each), %llu frames, %llu stand-alone ACK/NACKs, %llu NACKs, "
      "%llu PDUs resent; the error model dropped %llu frames, the links %llu; last delivery "
      "at %.1f us\n",
      (unsigned long long)st.pdus,
      st.pdus ? static_cast<double>(st.offered) / static_cast<double>(st.pdus) : 0.0,
      (unsigned long long)st.frames,
      (unsigned long long)(st.frames - st.pdus - st.retransmissions - st.moved),
      (unsigned long long)st.nacks, (unsigned long long)st.retransmissions,
      (unsigned long long)n.dropped_by_model, (unsigned long long)n.dropped_by_link,
      static_cast<double>(st.last_delivery) / 1e3);
  const bool ok = st.delivered == st.offered && st.offered == std::uint64_t{s.nodes} * s.commands &&
                  st.duplicates == 0 && st.out_of_order == 0 && st.mismatched == 0 &&
                  n.foreign == 0;
  if (!ok) std::printf("FAILED: not every command was delivered once, in order\n");
  return ok ? 0 : 1;
}
