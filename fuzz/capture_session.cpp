// A whole capture through what `scaleup stats` and `scaleup check` run over it: the capture
// reader (pcap or pcapng, from memory), the dissection of every frame with the flow table of UDP
// flows found SUE and IP reassembly, the go-back-N analysis, the conformance rules, and Tofu
// slices gathered and reassembled as `scaleup dump` does. The input is a capture file, so a
// finding reproduces with the tools themselves (`scaleup stats FILE`, `scaleup check FILE`).
//
// The pcap header's two fields that readers ignore (thiszone and sigfigs, bytes 8 to 15) pick
// options: byte 8 bit 0 no heuristics, bit 1 no command profile, bit 2 UDP port 61793 named as
// SUE's, bit 3 IP and UDP checksums checked, bit 4 the analysis keeps every frame's result,
// bit 5 conformance checked for two ports, bit 6 each frame also dissected as `stats` does
// (summary only) and its facts compared; byte 9: the analysis window (1 << its low four bits,
// 256 for 0) and the VCs configured (1 + its high bits mod 4).
//
// Invariants, besides no crash: IP reassembly within its limits after every frame; the analysis'
// counts agree with the frames it was given (data PDUs, ACKs and NACKs, per connection
// retransmissions within PDUs, duplicates within retransmissions, RTTs within ACKs), every
// frame's result names a connection that exists; the conformance tallies add up, keep at most
// their first violations in frame order, and name frames that were read; the summary-only
// dissection gives the full one's facts; and every hash table kept to its probe bound.
//
// The custom mutator (sue_mutator.hpp) keeps the capture's frames SUE frames with good R-CRCs,
// so that the analysis and the rules see PDUs, not dropped frames.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "common.hpp"
#include "scaleup/dissect/analysis.hpp"
#include "scaleup/dissect/conformance.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/flow_table.hpp"
#include "scaleup/dissect/ip_reassembly.hpp"
#include "scaleup/dissect/tofu.hpp"
#include "scaleup/fuzz/sue_mutator.hpp"
#include "scaleup/pcap/reader.hpp"
#include "scaleup/tofu/slicer.hpp"
#include "scaleup/wire/ip_reassembly.hpp"

namespace cap = scaleup::pcap;  // not `pcap`: libpcap has a struct of that name
namespace fuzz = scaleup::fuzz;
namespace dissect = scaleup::dissect;
namespace wire = scaleup::wire;

namespace {

struct session_options {
  bool heuristics = true;
  bool profile = true;
  bool named_port = false;
  bool checksums = false;
  bool keep_results = false;
  bool two_ports = false;
  bool summary_too = false;
  std::uint32_t window = 256;
  std::uint8_t vcs = 4;
};

session_options options_of(std::span<const std::uint8_t> in) {
  session_options s;
  // Only a pcap file has the ignored fields; a pcapng file runs with the defaults.
  if (in.size() < 24 || !cap::pcap_file::recognise(in.data())) return s;
  const std::uint8_t a = in[8], b = in[9];
  s.heuristics = !(a & 0x01);
  s.profile = !(a & 0x02);
  s.named_port = a & 0x04;
  s.checksums = a & 0x08;
  s.keep_results = a & 0x10;
  s.two_ports = a & 0x20;
  s.summary_too = a & 0x40;
  if (b & 0x0F) s.window = 1u << (b & 0x0F);
  s.vcs = static_cast<std::uint8_t>(1 + ((b >> 4) % 4));
  return s;
}

// The probe bound of a table of keys from the packets: on average at most four slots per lookup
// (a keyed hash at most half full gives 1.5 for a key present and 2.5 for one absent), with room
// for the chance of small tables. Keys that all collide cost n(n + 1) / 2 slots for n inserts,
// over the bound from 29 keys on. Active once the tables count their probes (probe_stats()).
template <class Table>
void check_probes(const Table& t, const char* what) {
  if constexpr (requires { t.probe_stats().inserts.probes; }) {
    const auto s = t.probe_stats();
    for (const auto& c : {s.inserts, s.finds}) {
      fuzz::check(c.probes <= 4 * c.lookups + 256, what);
      fuzz::check(c.longest <= c.probes, what);
    }
  }
}

void check_analysis(const dissect::analysis& an, std::uint64_t data_pdus, std::uint64_t acks,
                    std::uint64_t nacks) {
  std::uint64_t pdus = 0, acked = 0, nacked = 0;
  for (const auto& c : an.connections()) {
    pdus += c.pdus;
    acked += c.acks;
    nacked += c.nacks;
    fuzz::check(c.retransmissions <= c.pdus, "analysis: more retransmissions than PDUs");
    fuzz::check(c.duplicates <= c.retransmissions, "analysis: a duplicate not retransmitted");
    fuzz::check(c.out_of_order + c.gaps <= c.pdus, "analysis: more misordered than PDUs");
    fuzz::check(c.window_full <= c.pdus, "analysis: window full more often than PDUs");
    fuzz::check(c.ack_rtt().count() <= c.acks, "analysis: more RTTs than ACKs");
    fuzz::check(c.frames >= 1, "analysis: a connection without a frame");
  }
  fuzz::check(pdus == data_pdus, "analysis: data PDUs lost or counted twice");
  fuzz::check(acked == acks && nacked == nacks, "analysis: ACKs or NACKs lost or counted twice");
  check_probes(an, "analysis: probe bound");
}

void check_conformance(const dissect::conformance& c, std::uint64_t frames, std::uint64_t rhs,
                       std::uint64_t lites) {
  std::uint64_t violations = 0;
  for (const auto& r : dissect::rules) {
    const auto& t = c.tally(r.which);
    violations += t.violations;
    fuzz::check(t.first.size() <= std::min<std::uint64_t>(t.violations, c.config().keep),
                "conformance: more violations kept than found or asked for");
    for (std::size_t i = 0; i < t.first.size(); ++i) {
      fuzz::check(t.first[i].frame >= 1 && t.first[i].frame <= frames,
                  "conformance: a violation in a frame never read");
      fuzz::check(i == 0 || t.first[i - 1].frame <= t.first[i].frame,
                  "conformance: violations out of frame order");
    }
  }
  fuzz::check(violations == c.violations(), "conformance: tallies do not add up");
  fuzz::check(c.pdus() == rhs, "conformance: PDUs not those with an RH");
  fuzz::check(c.lite_frames() == lites, "conformance: SUE Lite frames miscounted");
  check_probes(c, "conformance: probe bound");
}

bool same_facts(const dissect::frame_facts& a, const dissect::frame_facts& b) {
  return a.frame == b.frame && a.time_ns == b.time_ns && a.key == b.key && a.xpuid == b.xpuid &&
         a.op == b.op && a.npsn == b.npsn && a.apsn == b.apsn && a.data == b.data &&
         a.length == b.length;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  std::string err;
  auto reader = cap::reader::open(std::make_unique<cap::memory_source>(input), "input", err);
  if (!reader) return 0;
  const session_options s = options_of(input);

  dissect::flow_table flows;
  dissect::options o;
  o.flows = &flows;
  o.heuristics = s.heuristics;
  o.check_checksums = s.checksums;
  if (!s.profile) o.profile = nullptr;
  if (s.named_port) (void)o.add_udp_port(wire::emit_udp_port);
  dissect::options summary = o;
  summary.nodes = false;  // what `stats` asks for

  dissect::analysis_config acfg;
  acfg.window = s.window;
  acfg.keep_results = s.keep_results;
  acfg.record_events = s.keep_results;
  dissect::analysis an(acfg);
  dissect::check_config ccfg;
  ccfg.vcs = s.vcs;
  ccfg.ports = s.two_ports ? 2 : 1;
  ccfg.profile = o.profile != nullptr;
  dissect::conformance conf(ccfg);

  // Large: kept across inputs and reset, as the tools keep theirs.
  static dissect::large_tree tree, again, tofu_tree;
  static wire::ip_reassembler<> fragments;
  static wire::ip_reassembler<> fragments_again;
  static scaleup::tofu::record_collector lanes;
  static scaleup::tofu::frame_buffer tofu_frame{};
  fragments.reset();
  fragments_again.reset();
  lanes = scaleup::tofu::record_collector{};

  std::uint64_t frames = 0, data_pdus = 0, acks = 0, nacks = 0, rhs = 0, lites = 0;
  cap::packet pkt{};
  while (reader->next(pkt) == cap::reader::status::packet) {
    ++frames;
    const auto ns = static_cast<std::int64_t>(
        std::min<std::uint64_t>(pkt.ts_ns, static_cast<std::uint64_t>(INT64_MAX)));
    dissect::dissect_frame(tree, pkt.data, pkt.link, o, fragments, pkt.number, ns, pkt.len);
    fuzz::check(fragments.bytes_held() <= fragments.limits().bytes,
                "reassembly: bytes held over the limit");
    fuzz::check(fragments.pending() <= fragments.limits().datagrams,
                "reassembly: datagrams over the limit");
    dissect::frame_facts facts;
    const bool has_facts = dissect::set_facts(tree, pkt.number, ns, facts);
    if (has_facts) {
      const dissect::frame_result& r = an.add(facts);
      fuzz::check(r.analysed, "analysis: a frame's result not marked analysed");
      for (const auto v :
           {dissect::result_value::connection, dissect::result_value::acked_connection})
        if (const auto i = r.get(v))
          fuzz::check(*i < an.connections().size(), "analysis: a result names no connection");
      data_pdus += facts.data;
      acks += facts.op == static_cast<std::uint8_t>(wire::rh_op::ack);
      nacks += facts.op == static_cast<std::uint8_t>(wire::rh_op::nack);
    }
    if (s.summary_too) {
      // The flow table is asked again (it has learnt from this frame already) and the
      // fragments go through a reassembler of their own, in the same order.
      dissect::dissect_frame(again, pkt.data, pkt.link, summary, fragments_again, pkt.number, ns,
                             pkt.len);
      dissect::frame_facts light;
      fuzz::check(dissect::set_facts(again, pkt.number, ns, light) == has_facts &&
                      (!has_facts || same_facts(facts, light)),
                  "summary: the facts differ from the full dissection's");
    }
    rhs += tree.find_layer("sue.rh") != nullptr;
    lites += tree.find_layer("sue_lite") != nullptr;
    conf.add(tree, pkt.data, pkt.number, ns);
    if (pkt.link == scaleup::tofu::link_tofu) {
      const auto got = lanes.push(pkt.data);
      if (got.err) fuzz::check(!got.complete, "tofu: complete despite an error");
      if (got.complete) {
        const auto frame = lanes.reassemble(tofu_frame);
        tofu_tree.clear();
        if (frame) {
          fuzz::check(frame->size <= tofu_frame.size(), "tofu: frame larger than its buffer");
          dissect::dissect_tofu_frame(tofu_tree, wire::bytes(tofu_frame.data(), frame->size));
        }
      }
    }
  }
  conf.finish();
  fuzz::check(flows.size() <= frames, "flows: more flows than frames");
  check_probes(flows, "flows: probe bound");
  check_analysis(an, data_pdus, acks, nacks);
  check_conformance(conf, frames, rhs, lites);
  return 0;
}

// Captures whose frames stay SUE frames after each mutation (sue_mutator.hpp).
namespace {
fuzz::sue_mutator mutator;
}

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned seed) {
  const std::size_t n = mutator.mutate_capture(data, size, max_size, seed);
  // Now and then the options in the header's ignored fields.
  if (n >= 24 && seed % 16 == 0)
    data[8 + (seed >> 4) % 2] ^= static_cast<std::uint8_t>(1u << ((seed >> 5) % 8));
  return n;
}

extern "C" std::size_t LLVMFuzzerCustomCrossOver(const std::uint8_t* a, std::size_t a_size,
                                                 const std::uint8_t* b, std::size_t b_size,
                                                 std::uint8_t* out, std::size_t max_out,
                                                 unsigned seed) {
  return mutator.cross_over_capture({a, a_size}, {b, b_size}, out, max_out, seed);
}
