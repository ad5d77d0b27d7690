// An ns-3 (3.37) network of XPUs running the library: N nodes on CSMA links through one
// learning bridge. Each node's application queues 64-byte writes to random peers, packs them
// per destination with the packer, frames each PDU (RH, commands, R-CRC) in the chosen
// encapsulation, and runs go-back-N per peer over links whose receivers lose packets through
// an ns-3 error model. Every device writes a pcap that `scaleup dump` and the Wireshark
// plugin dissect.
//
//   example_ns3 [--nodes=N] [--encap=udp4|udp6|afh1|afh1-vlan|afh1-shim|afh1-vlan-shim]
//               [--commands=K] [--loss=P] [--limit=BYTES] [--seed=S] [--pcap=PREFIX]
//
// What ns-3 decides and the library does not: CSMA builds the Ethernet header itself, so a
// node hands the device what follows the library's Ethernet header, with the destination
// address and Ethertype read back from the frame the library wrote; CSMA pads short frames,
// so the receiver finds the PDU's end from the carrier (IPv4/IPv6 length, the AFH Gen 1 shim's
// length) or, for bare AFH Gen 1, from the R-CRC as every receiver of that encapsulation must
// (docs/wire-format.md). The receiver reads frames back with the library's dissection engine.
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
#include <ns3/queue.h>
#include <ns3/rng-seed-manager.h>
#include <ns3/simulator.h>
#include <ns3/string.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "scaleup/dissect/engine.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/packer.hpp"
#include "scaleup/transport/go_back_n.hpp"
#include "scaleup/wire/frame.hpp"

namespace {

namespace sw = scaleup::wire;
namespace sp = scaleup::pack;
namespace st = scaleup::transport;

constexpr std::size_t max_nodes = 64;
constexpr std::size_t data_bytes = 64;
constexpr std::size_t pool = 1024;  // commands a node's packer holds

struct settings {
  std::uint32_t nodes = 8;
  sw::encap kind = sw::encap::udp4;
  std::uint32_t commands = 500;  // per node
  double loss = 0.01;
  std::uint32_t limit = 1024;  // payload bytes per PDU
  std::uint32_t seed = 1;
  st::gbn_config gbn{
      .window = 64, .rto = 100'000, .max_retries = 64, .ack_every = 8, .ack_delay = 4'000};
};

// The carried address is the command's identity: source, then a per-destination sequence
// number, so the receiver can tell a duplicate or a reordering from a new command.
constexpr std::uint64_t command_address(std::uint32_t src, std::uint64_t seq) {
  return (std::uint64_t{src} << 48) | seq;
}

struct totals {
  std::uint64_t offered = 0, delivered = 0, duplicates = 0, out_of_order = 0;
  std::uint64_t pdus = 0, frames = 0, acks_alone = 0, retransmissions = 0, nacks = 0;
  std::uint64_t timeouts = 0, dropped_by_model = 0, dropped_by_link = 0, bad_rcrc = 0;
  std::uint64_t refused = 0, last_delivery = 0;  // ns
};

void count_drop(totals* t, ns3::Ptr<const ns3::Packet>) { ++t->dropped_by_link; }

class xpu {
 public:
  xpu(std::uint32_t id, const settings& s, ns3::Ptr<ns3::CsmaNetDevice> dev, totals& t)
      : id_(id), s_(s), dev_(dev), t_(t), conns_(s.nodes), sent_seq_(s.nodes), next_in_(s.nodes) {
    dev_->SetAddress(station_address());
    dev_->GetNode()->RegisterProtocolHandler(ns3::MakeCallback(&xpu::receive, this), 0, dev_);
    dev_->TraceConnectWithoutContext("PhyTxEnd", ns3::MakeCallback(&xpu::tx_end, this));
    dev_->TraceConnectWithoutContext("PhyRxDrop", ns3::MakeCallback(&xpu::rx_drop, this));
  }

  // The Ethernet source address the library writes for this XPU in this encapsulation.
  ns3::Mac48Address station_address() const {
    std::array<std::uint8_t, 128> f{};
    (void)sw::emit_frame(params(id_), {}, f);
    ns3::Mac48Address a;
    a.CopyFrom(f.data() + 6);
    return a;
  }

  // A new command for `dst`: queued now, packed when the link can take it.
  void offer(std::uint32_t dst) {
    ++t_.offered;
    backlog_.push_back({dst, sent_seq_[dst]++});
    feed();
    pump();
  }

 private:
  struct conn {
    st::gbn_sender<16> tx;
    st::gbn_receiver<16> rx;
    std::map<std::uint16_t, std::vector<std::uint8_t>> kept;  // PSN -> payload, until ACKed
    bool ack_queued = false;
  };
  struct pending {
    std::uint32_t dst;
    std::uint64_t seq;
  };

  sw::frame_params params(std::uint32_t dst) const {
    sw::frame_params p;
    p.kind = s_.kind;
    p.src_xpu = id_;
    p.dst_xpu = dst;
    p.pad = false;  // CSMA pads
    return p;
  }

  // Moves offered commands into the packer while it has room; the packer keeps views, so
  // each command's control bytes live in a slot until the command is packed.
  void feed() {
    while (!backlog_.empty() && packer_.queued() < pool) {
      const pending c = backlog_.front();
      const std::uint64_t cookie = cookie_++;
      const auto ctrl = sw::to_bytes(sp::cmd_write{.tag = static_cast<std::uint16_t>(cookie),
                                                   .addr = command_address(id_, c.seq)});
      auto& slot = controls_[cookie % pool];
      std::copy(ctrl.value.begin(), ctrl.value.end(), slot.begin());
      const sw::error e = packer_.push({.destination = static_cast<std::uint16_t>(c.dst),
                                        .vc = 0,
                                        .control = slot,
                                        .data = sp::borrow(data_),
                                        .cookie = cookie});
      if (e) {
        std::fprintf(stderr, "xpu %u: push refused: %.*s\n", id_, int(e.what.size()),
                     e.what.data());
        ++t_.refused;
      }
      backlog_.pop_front();
    }
  }

  // Keeps the device's queue short, so that commands wait in the packer and share PDUs:
  // acknowledgements first, then PDUs to resend, then new PDUs.
  void pump() {
    while (dev_->GetQueue()->GetNPackets() < 2) {
      if (!acks_.empty()) {
        const std::uint32_t peer = acks_.front();
        acks_.pop_front();
        conns_[peer].ack_queued = false;
        if (st::pending_ack(conns_[peer].rx).first != sw::rh_op::none) {
          ++t_.acks_alone;
          send(peer, conns_[peer].tx.next.value, {});
        }
        continue;
      }
      if (!resend_.empty()) {
        const auto [peer, psn] = resend_.front();
        resend_.pop_front();
        const auto it = conns_[peer].kept.find(psn);
        if (it == conns_[peer].kept.end()) continue;  // acknowledged meanwhile
        ++t_.retransmissions;
        send(peer, psn, it->second);
        continue;
      }
      std::array<std::uint8_t, sp::sue_pack_limit> payload;
      std::array<std::uint64_t, pool> cookies;
      const auto eligible = [this](std::uint16_t d, std::uint8_t) {
        const auto& tx = conns_[d].tx;
        return !tx.unreachable && tx.in_flight() < s_.gbn.window;
      };
      const auto r = packer_.next(payload, eligible, cookies);
      if (!r || r->commands == 0) break;
      feed();
      conn& c = conns_[r->destination];
      const auto [tx, a] =
          st::step(c.tx, st::sender_event<16>{st::sender_input::send, {}}, now(), s_.gbn);
      c.tx = tx;
      auto& kept = c.kept[a.psn_assigned.value];
      kept.assign(payload.begin(), payload.begin() + static_cast<std::ptrdiff_t>(r->bytes));
      ++t_.pdus;
      send(r->destination, a.psn_assigned.value, kept);
    }
    arm();
  }

  // One frame: an RH carrying `psn` and whatever acknowledgement is due, the payload, R-CRC.
  void send(std::uint32_t peer, std::uint16_t psn, std::span<const std::uint8_t> payload) {
    conn& c = conns_[peer];
    sw::reliability_header rh{};
    rh.xpuid = static_cast<std::uint16_t>(id_);
    rh.npsn = psn;
    const auto [op, apsn] = st::pending_ack(c.rx);
    rh.op = static_cast<std::uint8_t>(op);
    rh.apsn = apsn.value;
    if (op != sw::rh_op::none) {
      if (op == sw::rh_op::nack) ++t_.nacks;
      c.rx = st::step(c.rx, st::receiver_event<16>{st::receiver_input::ack_sent, {}, true}, now(),
                      s_.gbn)
                 .first;
    }
    std::array<std::uint8_t, 14 + 40 + 8 + 16 + sw::pdu_size(sp::sue_pack_limit)> f;
    const auto n = sw::emit_sue_frame(params(peer), rh, payload, f);
    if (!n) {
      std::fprintf(stderr, "xpu %u: frame refused: %.*s\n", id_, int(n.err.what.size()),
                   n.err.what.data());
      return;
    }
    // The device writes the Ethernet header: hand it the rest, addressed as the library did.
    ns3::Mac48Address to;
    to.CopyFrom(f.data());
    const std::uint16_t type = sw::load_be16(f.data() + 12);
    dev_->Send(ns3::Create<ns3::Packet>(f.data() + 14, static_cast<std::uint32_t>(n.value - 14)),
               to, type);
    ++t_.frames;
  }

  void receive(ns3::Ptr<ns3::NetDevice>, ns3::Ptr<const ns3::Packet> pkt, std::uint16_t type,
               const ns3::Address& from, const ns3::Address& to, ns3::NetDevice::PacketType) {
    // The frame as it was on the wire (less the FCS), for the library's engine.
    std::vector<std::uint8_t> f(14 + pkt->GetSize());
    ns3::Mac48Address::ConvertFrom(to).CopyTo(f.data());
    ns3::Mac48Address::ConvertFrom(from).CopyTo(f.data() + 6);
    sw::store_be16(f.data() + 12, type);
    pkt->CopyData(f.data() + 14, pkt->GetSize());

    scaleup::dissect::options o;
    o.profile = nullptr;  // the commands are unpacked below, once delivered
    scaleup::dissect::dissect_frame(*tree_, f, scaleup::dissect::link_ethernet, o);
    const auto* status = tree_->find("sue.rcrc.status");
    const auto* rh_layer = tree_->find_layer("sue.rh");
    if (!status || !rh_layer || status->value != 0) {
      ++t_.bad_rcrc;
      return;
    }
    const auto rh = sw::decode<sw::reliability_header>(std::span(f).subspan(rh_layer->offset));
    const auto* len = tree_->find("sue.payload.len");
    if (!rh || rh->xpuid >= s_.nodes) return;
    const std::uint32_t peer = rh->xpuid;
    conn& c = conns_[peer];
    if (rh->op == 0 || rh->op == 1) {
      const auto in = rh->op == 0 ? st::sender_input::ack : st::sender_input::nack;
      const auto [tx, a] =
          st::step(c.tx, st::sender_event<16>{in, st::psn<16>(rh->apsn)}, now(), s_.gbn);
      c.tx = tx;
      sender_actions(peer, a);
    }
    const std::size_t payload_len = len ? len->value : 0;
    if (payload_len > 0) {
      const auto [rx, ra] = st::step(
          c.rx, st::receiver_event<16>{st::receiver_input::pdu, st::psn<16>(rh->npsn), true}, now(),
          s_.gbn);
      c.rx = rx;
      if (ra.deliver) deliver(peer, std::span(f).subspan(rh_layer->offset + 8, payload_len));
      if (ra.ack_now) queue_ack(peer);
    }
    pump();
  }

  void deliver(std::uint32_t peer, std::span<const std::uint8_t> commands) {
    sp::unpacker u(sp::default_profile, commands);
    for (sp::command_view cv; u.next(cv);) {
      const auto w = sw::decode<sp::cmd_write>(cv.control);
      if (!w || (w->addr >> 48) != peer) continue;
      const std::uint64_t seq = w->addr & 0xFFFFFFFFFFFFull;
      if (seq < next_in_[peer])
        ++t_.duplicates;
      else if (seq > next_in_[peer])
        ++t_.out_of_order;
      else
        ++t_.delivered;
      t_.last_delivery = now();
      next_in_[peer] = std::max(next_in_[peer], seq + 1);
    }
  }

  void sender_actions(std::uint32_t peer, const st::sender_actions<16>& a) {
    conn& c = conns_[peer];
    for (std::uint32_t i = 0; i < a.released; ++i) c.kept.erase((a.released_from + i).value);
    for (std::uint32_t i = 0; i < a.resend; ++i)
      resend_.push_back({peer, (a.resend_from + i).value});
    if (a.unreachable) std::fprintf(stderr, "xpu %u: peer %u unreachable\n", id_, peer);
  }

  void queue_ack(std::uint32_t peer) {
    if (conns_[peer].ack_queued) return;
    conns_[peer].ack_queued = true;
    acks_.push_back(peer);
  }

  // Time is an input to the machines: wake up at the earliest deadline any of them has.
  void arm() {
    std::uint64_t t = 0;
    for (const conn& c : conns_) {
      const std::uint64_t d = st::next_deadline(c.tx, c.rx);
      if (d != 0 && (t == 0 || d < t)) t = d;
    }
    if (t == 0 || (timer_.IsRunning() && timer_at_ <= t)) return;
    timer_.Cancel();
    timer_at_ = t;
    timer_ =
        ns3::Simulator::Schedule(ns3::NanoSeconds(t > now() ? t - now() : 0), &xpu::tick, this);
  }

  void tick() {
    for (std::uint32_t p = 0; p < conns_.size(); ++p) {
      conn& c = conns_[p];
      const std::uint32_t before = c.tx.timeouts;
      const auto [tx, a] =
          st::step(c.tx, st::sender_event<16>{st::sender_input::tick, {}}, now(), s_.gbn);
      c.tx = tx;
      t_.timeouts += c.tx.timeouts - before;
      sender_actions(p, a);
      const auto [rx, ra] =
          st::step(c.rx, st::receiver_event<16>{st::receiver_input::tick, {}, true}, now(), s_.gbn);
      c.rx = rx;
      if (ra.ack_now) queue_ack(p);
    }
    pump();
  }

  void tx_end(ns3::Ptr<const ns3::Packet>) { pump(); }
  void rx_drop(ns3::Ptr<const ns3::Packet>) { ++t_.dropped_by_model; }

  static std::uint64_t now() {
    return static_cast<std::uint64_t>(ns3::Simulator::Now().GetNanoSeconds());
  }

  std::uint32_t id_;
  const settings& s_;
  ns3::Ptr<ns3::CsmaNetDevice> dev_;
  totals& t_;
  std::vector<conn> conns_;
  std::vector<std::uint64_t> sent_seq_, next_in_;
  std::deque<pending> backlog_;
  std::deque<std::uint32_t> acks_;
  std::deque<std::pair<std::uint32_t, std::uint16_t>> resend_;
  sp::packer<max_nodes, 1, pool> packer_{sp::default_profile, {.limit = s_.limit}};
  std::array<std::array<std::uint8_t, 12>, pool> controls_{};
  std::array<std::uint8_t, data_bytes> data_{};
  std::uint64_t cookie_ = 0;
  ns3::EventId timer_;
  std::uint64_t timer_at_ = 0;
  std::unique_ptr<scaleup::dissect::tree> tree_ = std::make_unique<scaleup::dissect::tree>();
};

}  // namespace

int main(int argc, char** argv) {
  settings s;
  std::string encap = "udp4", pcap;
  ns3::CommandLine cmd;
  cmd.AddValue("nodes", "XPUs on the bridge (2-64)", s.nodes);
  cmd.AddValue("encap", "udp4, udp6, afh1, afh1-vlan, afh1-shim or afh1-vlan-shim", encap);
  cmd.AddValue("commands", "64-byte writes each XPU sends, to random peers", s.commands);
  cmd.AddValue("loss", "packet loss rate of every XPU's receiver (ns-3 RateErrorModel)", s.loss);
  cmd.AddValue("limit", "payload bytes per PDU (the packer's limit, 76-4096)", s.limit);
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

  // N XPUs, each on its own CSMA link to a bridge node.
  ns3::NodeContainer xpus, bridge;
  xpus.Create(s.nodes);
  bridge.Create(1);
  ns3::CsmaHelper csma;
  csma.SetChannelAttribute("DataRate", ns3::StringValue("10Gbps"));
  csma.SetChannelAttribute("Delay", ns3::TimeValue(ns3::NanoSeconds(100)));
  totals t;
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
      dev->TraceConnectWithoutContext("MacTxDrop", ns3::MakeBoundCallback(&count_drop, &t));
      dev->TraceConnectWithoutContext("PhyTxDrop", ns3::MakeBoundCallback(&count_drop, &t));
    }
    xpu_devs.Add(link.Get(0));
    bridge_ports.Add(link.Get(1));
  }
  ns3::BridgeHelper().Install(bridge.Get(0), bridge_ports);

  std::vector<std::unique_ptr<xpu>> apps;
  for (std::uint32_t i = 0; i < s.nodes; ++i) {
    auto dev = ns3::DynamicCast<ns3::CsmaNetDevice>(xpu_devs.Get(i));
    if (s.loss > 0) {
      auto em = ns3::CreateObject<ns3::RateErrorModel>();
      em->SetUnit(ns3::RateErrorModel::ERROR_UNIT_PACKET);
      em->SetRate(s.loss);
      em->AssignStreams(i);
      dev->SetReceiveErrorModel(em);
    }
    apps.push_back(std::make_unique<xpu>(i, s, dev, t));
  }
  if (!pcap.empty()) csma.EnablePcap(pcap, xpu_devs);

  // Each XPU offers its writes at random times to random peers (uniform traffic).
  std::mt19937_64 rng(s.seed);
  for (std::uint32_t i = 0; i < s.nodes; ++i) {
    double at = 0;
    std::exponential_distribution<double> gap(1.0 / 200.0);  // ns: about 3 Gb/s of writes
    for (std::uint32_t k = 0; k < s.commands; ++k) {
      at += gap(rng);
      auto d = static_cast<std::uint32_t>(
          std::uniform_int_distribution<std::uint32_t>(0, s.nodes - 2)(rng));
      if (d >= i) ++d;
      ns3::Simulator::Schedule(ns3::NanoSeconds(static_cast<std::uint64_t>(at)), &xpu::offer,
                               apps[i].get(), d);
    }
  }
  ns3::Simulator::Stop(ns3::Seconds(1));
  ns3::Simulator::Run();
  ns3::Simulator::Destroy();

  std::printf(
      "%u XPUs, %s, loss %.3f: %llu offered, %llu delivered, %llu duplicates, "
      "%llu out of order\n",
      s.nodes, encap.c_str(), s.loss, (unsigned long long)t.offered,
      (unsigned long long)t.delivered, (unsigned long long)t.duplicates,
      (unsigned long long)t.out_of_order);
  std::printf(
      "%llu PDUs (%.1f commands each), %llu frames, %llu stand-alone ACK/NACKs, "
      "%llu NACKs, %llu timeouts, %llu PDUs resent; the error model dropped %llu "
      "frames, the links %llu; last delivery at %.1f us\n",
      (unsigned long long)t.pdus,
      t.pdus ? static_cast<double>(t.offered) / static_cast<double>(t.pdus) : 0.0,
      (unsigned long long)t.frames, (unsigned long long)t.acks_alone, (unsigned long long)t.nacks,
      (unsigned long long)t.timeouts, (unsigned long long)t.retransmissions,
      (unsigned long long)t.dropped_by_model, (unsigned long long)t.dropped_by_link,
      static_cast<double>(t.last_delivery) / 1e3);
  const bool ok =
      t.delivered == t.offered && t.duplicates == 0 && t.out_of_order == 0 && t.refused == 0;
  if (!ok) std::printf("FAILED: not every command was delivered once, in order\n");
  return ok ? 0 : 1;
}
