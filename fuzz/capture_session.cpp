// A whole capture through the session that `scaleup stats` and `scaleup check` run
// (app/session.hpp): the capture from memory (pcap, pcapng, either gzip-compressed), every frame
// dissected with the flow table of UDP flows found SUE, frames held until their flows are known,
// a cut file read a second time, IP and Tofu reassembly, the go-back-N analysis in the session,
// and the conformance rules over each frame's tree in frame order, as `check` runs them. The
// input is a capture file, so a finding reproduces with the tools themselves (`scaleup stats
// FILE`, `scaleup check FILE`).
//
// The pcap header's two fields that readers ignore (thiszone and sigfigs, bytes 8 to 15) pick
// options: byte 8 bit 0 no heuristics, bit 1 no command profile, bit 2 UDP port 61793 named as
// SUE's, bit 3 IP and UDP checksums checked, bit 4 the analysis keeps every frame's result,
// bit 5 conformance checked for two ports, bit 6 the PDU's summary only, as `stats` asks (no
// tree, so no conformance), bit 7 two dissecting threads; byte 9: the analysis window (1 << its
// low four bits, 256 for 0) and the VCs configured (1 + its high bits mod 4).
//
// Invariants, besides no crash: every reading takes each frame once, in frame order; the
// analysis' counts agree with the facts the session handed over (data PDUs, ACKs and NACKs, per
// connection retransmissions within PDUs, duplicates within retransmissions, RTTs within ACKs),
// every frame's result names a connection that exists; the conformance tallies add up, keep at
// most their first violations in frame order, name frames that were read, and keep every
// violation for its frame once (check_config::per_frame, the plugin's); the flow table
// holds at most a flow per frame; and every hash table kept to its probe bound.
//
// The custom mutator (sue_mutator.hpp) keeps the capture's frames SUE frames with good R-CRCs,
// so that the analysis and the rules see PDUs, not dropped frames.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "app/session.hpp"
#include "common.hpp"
#include "scaleup/dissect/analysis.hpp"
#include "scaleup/dissect/conformance.hpp"
#include "scaleup/dissect/flow_table.hpp"
#include "scaleup/fuzz/sue_mutator.hpp"
#include "scaleup/pcap/reader.hpp"
#include "scaleup/wire/ip.hpp"

namespace cap = scaleup::pcap;  // not `pcap`: libpcap has a struct of that name
namespace fuzz = scaleup::fuzz;
namespace dissect = scaleup::dissect;
namespace app = scaleup::app;
namespace wire = scaleup::wire;

namespace {

struct fuzz_options {
  bool heuristics = true;
  bool profile = true;
  bool named_port = false;
  bool checksums = false;
  bool keep_results = false;
  bool two_ports = false;
  bool summary_only = false;
  unsigned threads = 1;
  std::uint32_t window = 256;
  std::uint8_t vcs = 4;
};

fuzz_options options_of(std::span<const std::uint8_t> in) {
  fuzz_options s;
  // Only a pcap file has the ignored fields; a pcapng file runs with the defaults.
  if (in.size() < 24 || !cap::pcap_file::recognise(in.data())) return s;
  const std::uint8_t a = in[8], b = in[9];
  s.heuristics = !(a & 0x01);
  s.profile = !(a & 0x02);
  s.named_port = a & 0x04;
  s.checksums = a & 0x08;
  s.keep_results = a & 0x10;
  s.two_ports = a & 0x20;
  s.summary_only = a & 0x40;
  s.threads = (a & 0x80) ? 2 : 1;
  if (b & 0x0F) s.window = 1u << (b & 0x0F);
  s.vcs = static_cast<std::uint8_t>(1 + ((b >> 4) % 4));
  return s;
}

// The probe bound of a table of keys from the packets: on average at most four slots per lookup
// (a keyed hash at most half full gives 1.5 for a key present and 2.5 for one absent), with room
// for the chance of small tables. Keys that all collide cost n(n + 1) / 2 slots for n inserts,
// over the bound from 29 keys on.
template <class Table>
void check_probes(const Table& t, const char* what) {
  const auto s = t.probe_stats();
  for (const auto& c : {s.inserts, s.finds}) {
    fuzz::check(c.probes <= 4 * c.lookups + 256, what);
    fuzz::check(c.longest <= c.probes, what);
  }
}

// What `stats` and `check` do with each frame the session hands over, and what the invariants
// count; each reading (a cut file is read twice) starts afresh.
class consumer final : public app::frame_consumer {
 public:
  explicit consumer(std::optional<dissect::check_config> cfg) : cfg_(cfg) {}

  void start(const app::reading&) override {
    if (cfg_) conf.emplace(*cfg_);
    frames = data_pdus = acks = nacks = rhs = lites = 0;
  }
  void take(const app::frame_out& f) override {
    ++frames;
    fuzz::check(f.in.pkt.number == frames, "session: a frame taken out of order or twice");
    fuzz::check(f.kept, "session: a frame left out without a display filter");
    if (f.facts) {
      fuzz::check(f.result != nullptr, "session: facts without a result");
      fuzz::check(f.result->analysed, "analysis: a frame's result not marked analysed");
      data_pdus += f.facts->data;
      acks += f.facts->op == static_cast<std::uint8_t>(wire::rh_op::ack);
      nacks += f.facts->op == static_cast<std::uint8_t>(wire::rh_op::nack);
      connections_named = std::max(connections_named, named(*f.result));
    }
    if (conf) {
      fuzz::check(f.tree != nullptr, "session: no tree though trees in order were asked");
      rhs += f.tree->find_layer("sue.rh") != nullptr;
      lites += f.tree->find_layer("sue_lite") != nullptr;
      conf->add(*f.tree, f.in.pkt.data, f.in.pkt.number, f.in.ns);
    }
  }

  std::optional<dissect::conformance> conf;
  std::uint64_t frames = 0, data_pdus = 0, acks = 0, nacks = 0, rhs = 0, lites = 0;
  std::uint64_t connections_named = 0;  // 1 + the highest connection a result named

 private:
  static std::uint64_t named(const dissect::frame_result& r) {
    std::uint64_t n = 0;
    for (const auto v :
         {dissect::result_value::connection, dissect::result_value::acked_connection})
      if (const auto i = r.get(v)) n = std::max<std::uint64_t>(n, *i + 1);
    return n;
  }
  std::optional<dissect::check_config> cfg_;
};

void check_analysis(const dissect::analysis& an, const consumer& c) {
  std::uint64_t pdus = 0, acked = 0, nacked = 0;
  for (const auto& k : an.connections()) {
    pdus += k.pdus;
    acked += k.acks;
    nacked += k.nacks();
    fuzz::check(k.retransmissions() <= k.pdus, "analysis: more retransmissions than PDUs");
    fuzz::check(k.duplicates() <= k.retransmissions(), "analysis: a duplicate not retransmitted");
    fuzz::check(k.out_of_order() + k.gaps() <= k.pdus, "analysis: more misordered than PDUs");
    fuzz::check(k.window_full() <= k.pdus, "analysis: window full more often than PDUs");
    fuzz::check(k.ack_rtt().count() <= k.acks, "analysis: more RTTs than ACKs");
    fuzz::check(k.frames >= 1, "analysis: a connection without a frame");
  }
  fuzz::check(pdus == c.data_pdus, "analysis: data PDUs lost or counted twice");
  fuzz::check(acked == c.acks && nacked == c.nacks,
              "analysis: ACKs or NACKs lost or counted twice");
  fuzz::check(c.connections_named <= an.connections().size(),
              "analysis: a result names no connection");
  check_probes(an, "analysis: probe bound");
}

void check_conformance(dissect::conformance& c, const consumer& r) {
  c.finish();
  std::uint64_t violations = 0;
  for (const auto& rule : dissect::rules) {
    const auto& t = c.tally(rule.which);
    violations += t.violations;
    fuzz::check(t.first.size() <= std::min<std::uint64_t>(t.violations, c.config().keep),
                "conformance: more violations kept than found or asked for");
    for (std::size_t i = 0; i < t.first.size(); ++i) {
      fuzz::check(t.first[i].frame >= 1 && t.first[i].frame <= r.frames,
                  "conformance: a violation in a frame never read");
      fuzz::check(i == 0 || t.first[i - 1].frame <= t.first[i].frame,
                  "conformance: violations out of frame order");
    }
  }
  fuzz::check(violations == c.violations(), "conformance: tallies do not add up");
  // Every violation is kept for its frame, once, whenever it was judged.
  std::uint64_t by_frame = 0;
  for (std::uint64_t f = 0; f <= r.frames + 1; ++f)
    for (const auto& v : c.of_frame(f)) {
      fuzz::check(v.frame == f, "conformance: a violation kept for another frame");
      ++by_frame;
    }
  fuzz::check(by_frame == violations, "conformance: a violation not kept for its frame, or twice");
  fuzz::check(c.pdus() == r.rhs, "conformance: PDUs not those with an RH");
  fuzz::check(c.lite_frames() == r.lites, "conformance: SUE Lite frames miscounted");
  check_probes(c, "conformance: probe bound");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  const fuzz_options o = options_of(input);

  // The settings `stats` and `check` give the session (tools/stats.cpp, tools/check.cpp).
  app::session_settings ss;
  ss.source.file = "input";
  ss.source.memory = input;
  ss.engine.profile = o.profile ? "default" : "none";
  if (o.named_port) ss.engine.udp_ports.push_back(wire::emit_udp_port);
  ss.engine.no_heuristics = !o.heuristics;
  ss.engine.check_checksums = o.checksums;
  ss.engine.nodes = !o.summary_only;
  ss.threads = o.threads;
  ss.batch = 16;  // small batches, so that a capture of a few frames spans several
  ss.hold = app::default_hold;
  ss.reread = true;
  ss.progress = false;
  ss.trees_in_order = !o.summary_only;
  dissect::analysis_config acfg;
  acfg.window = o.window;
  acfg.keep_results = o.keep_results;
  acfg.record_events = o.keep_results;
  ss.analysis = acfg;

  app::session se(ss);
  if (se.prepare()) fuzz::fail("session: settings refused");
  std::optional<dissect::check_config> ccfg;
  if (!o.summary_only) {
    ccfg.emplace();
    ccfg->vcs = o.vcs;
    ccfg->ports = o.two_ports ? 2 : 1;
    ccfg->profile = se.options().profile != nullptr;
    ccfg->per_frame = true;  // as the plugin and `-Y sue.check.*` keep them
  }
  consumer c(ccfg);
  if (se.run(c) == app::read_end::unreadable) return 0;

  fuzz::check(se.flows().size() <= c.frames, "flows: more flows than frames");
  check_probes(se.flows(), "flows: probe bound");
  if (const auto* an = se.analysis()) check_analysis(*an, c);
  if (c.conf) check_conformance(*c.conf, c);
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
