// Micro-benchmarks of the codecs, packer, transport and Tofu and RDMA paths, the fabric at scale
// and the keyed tables' lookups (docs/performance.md): each figure is a median over several runs
// and comes with a baseline measured in the same process on the same data (for the RH codec, the
// frames of udp4, afh1-shim and afh2c, the packer and the unpacker, hand-written code for the same
// job; for Tofu, RDMA and the other encapsulations, a plain memcpy of the same bytes; for the
// fabric, emitting and reading the same PDUs' bytes alone; for a keyed table, the unkeyed mix it
// replaced). The frame and packer groups are in baselines.cpp, the hand-written code they are
// measured against in hand_frames.hpp, hand_packer.hpp and hand_rh.hpp. The RH, frame, packer and
// hash rows run each figure and its baseline in turn and time them in CPU time of the thread, so
// that a share of a busy machine falls on both. Prints a table and, with --json PATH, writes the
// same rows as JSON.
//
//   micro [--quick] [--runs N] [--json PATH] [--only GROUPS]
//
// --quick shrinks every workload (a smoke run: the numbers mean nothing). --only runs some of
// the groups rh, frames, packer, gbn, tofu, rdma, fabric, hash (comma-separated), e.g. under
// callgrind.
#include <scaleup/dissect/analysis.hpp>
#include <scaleup/dissect/flat_index.hpp>
#include <scaleup/pack/command.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/rdma/segmenter.hpp>
#include <scaleup/sim/fabric.hpp>
#include <scaleup/tofu/frame.hpp>
#include <scaleup/tofu/slicer.hpp>
#include <scaleup/transport/go_back_n.hpp>
#include <scaleup/wire/field.hpp>
#include <scaleup/wire/frame.hpp>
#include <scaleup/wire/reliability_header.hpp>

#include <boost/endian/conversion.hpp>

#include <malloc.h>

#include <algorithm>
#include <array>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "collisions.hpp"
#include "hand_rh.hpp"
#include "measure.hpp"

namespace {

namespace w = scaleup::wire;
namespace d = scaleup::dissect;
namespace pk = scaleup::pack;
namespace t = scaleup::transport;
namespace tf = scaleup::tofu;
namespace rd = scaleup::rdma;
namespace sm = scaleup::sim;

using namespace scaleup::bench;

// ---- 1. Reliability Header encode / decode -----------------------------------------------

// The baseline of the RH codec: hand_encode and hand_decode (hand_rh.hpp).

[[noreturn]] void codec_mismatch(const char* what, std::size_t i) {
  std::fprintf(stderr, "RH: the hand-written codec and the library differ (%s, header %zu)\n", what,
               i);
  std::abort();
}

// Before any timing: both codecs agree on the benchmark's headers (hs, encoded by the library in
// `wire`) and on random 64-bit words, every bit of which is some field's (the RH has no fixed
// field: every word is a header). Otherwise the comparison would be of two different jobs.
void check_hand_codec(const std::vector<w::reliability_header>& hs,
                      const std::vector<std::uint8_t>& wire) {
  std::array<std::uint8_t, 8> b{};
  for (std::size_t i = 0; i < hs.size(); ++i) {
    hand_encode(hs[i], b.data());
    if (std::memcmp(b.data(), wire.data() + i * 8, 8) != 0) codec_mismatch("encode", i);
    if (!(hand_decode(wire.data() + i * 8) == hs[i])) codec_mismatch("decode", i);
  }
  std::uint64_t x = 0x9E3779B97F4A7C15u;
  for (std::size_t i = 0; i < 100'000; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    boost::endian::store_big_u64(b.data(), x);
    const auto lib = w::decode<w::reliability_header>(b);
    if (!lib || !(lib.value == hand_decode(b.data()))) codec_mismatch("decode, random word", i);
    std::array<std::uint8_t, 8> lib_bytes{}, hand_bytes{};
    if (!w::encode(lib.value, lib_bytes)) codec_mismatch("encode refused, random word", i);
    hand_encode(lib.value, hand_bytes.data());
    if (lib_bytes != b || hand_bytes != b) codec_mismatch("encode, random word", i);
  }
}

// The timed loops, one per row: each takes its buffers as parameters, so that its pointers and
// count are locals the byte stores cannot alias (captured by reference in a lambda, they were
// reloaded at every header). Each result is checked, as a caller would; keep() holds on to the
// output. (keep(r) per header would force the whole result, error included, out to memory: a
// cost no caller pays.)
void encode_by_hand(const w::reliability_header* src, std::uint8_t* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) hand_encode(src[i], dst + i * 8);
  keep(dst[0]);
}

void encode_each(const w::reliability_header* src, std::uint8_t* dst, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i)
    if (!w::encode(src[i], w::mutable_bytes(dst + i * 8, 8))) std::abort();
  keep(dst[0]);
}

// The batch path: the same checks, tested once per block of headers.
void encode_batch(const w::reliability_header* src, std::uint8_t* dst, std::size_t n) {
  const auto r = w::encode_all(std::span(src, n), w::mutable_bytes(dst, n * 8));
  if (!r || r.value != n) std::abort();
  keep(dst[0]);
}

void decode_by_hand(const std::uint8_t* in, w::reliability_header* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) out[i] = hand_decode(in + i * 8);
  keep(out[0]);
}

// `auto r`, not `const auto r`: GCC 12 keeps a const local aggregate in memory and copies
// r.value out with two 8-byte loads over the nine narrow stores that built it, a
// store-forwarding stall per header (3x slower) that has nothing to do with decode.
void decode_each(const std::uint8_t* in, w::reliability_header* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    auto r = w::decode<w::reliability_header>(w::bytes(in + i * 8, 8));
    if (!r) std::abort();
    out[i] = r.value;
  }
  keep(out[0]);
}

void view_each(const std::uint8_t* in, w::reliability_header* out, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    const auto v = w::view<w::reliability_header>::make(w::bytes(in + i * 8, 8));
    if (!v) std::abort();
    out[i] = v->value();
  }
  keep(out[0]);
}

void bench_rh() {
  const std::size_t n = g_quick ? 10'000 : 1'000'000;
  std::vector<w::reliability_header> hs(n);
  std::uint32_t x = 12345;
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 1103515245u + 12345u;
    auto& h = hs[i];
    h.op = static_cast<std::uint8_t>(x >> 30);
    h.xpuid = static_cast<std::uint16_t>((x >> 8) & 0x3FF);
    h.npsn = static_cast<std::uint16_t>(i);
    h.vc = static_cast<std::uint8_t>((x >> 4) & 3);
    h.partition = static_cast<std::uint16_t>((x >> 12) & 0x3FF);
    h.apsn = static_cast<std::uint16_t>(x >> 16);
  }
  const std::size_t bytes = n * 8;
  std::vector<std::uint8_t> wire(bytes), copy(bytes);
  for (std::size_t i = 0; i < n; ++i)
    if (!w::encode(hs[i], w::mutable_bytes(wire.data() + i * 8, 8))) std::abort();
  check_hand_codec(hs, wire);
  std::vector<w::reliability_header> out(n);

  // Each row runs in turn with its baseline (paired_median_seconds), on the same buffers.
  using encoder = void (*)(const w::reliability_header*, std::uint8_t*, std::size_t);
  using decoder = void (*)(const std::uint8_t*, w::reliability_header*, std::size_t);
  const auto row_of = [&](const char* figure, const pair_seconds& t, const char* baseline,
                          double goal, const char* goal_text) {
    add(figure, static_cast<double>(bytes) / t.value / MB, "MB/s",
        static_cast<double>(bytes) / t.baseline / MB, baseline, goal, goal_text);
  };
  const auto encoding = [&](const char* figure, encoder f) {
    row_of(figure,
           paired_median_seconds([&] { f(hs.data(), copy.data(), n); },
                                 [&] { encode_by_hand(hs.data(), copy.data(), n); }),
           "hand-written encode", 0.9, ">= 0.9 x hand");
  };
  const auto decoding = [&](const char* figure, decoder f) {
    row_of(figure,
           paired_median_seconds([&] { f(wire.data(), out.data(), n); },
                                 [&] { decode_by_hand(wire.data(), out.data(), n); }),
           "hand-written decode", 0.9, ">= 0.9 x hand");
  };
  encoding("1. RH encode (1M headers)", encode_each);
  encoding("1. RH encode_all (1M headers)", encode_batch);
  decoding("1. RH decode (1M headers)", decode_each);
  decoding("1. RH view().value() (1M headers)", view_each);

  // For scale only, no goal: the same bytes copied by one memcpy, which runs at the speed of
  // the caches (13 to 61 GB/s from run to run on the 2-core machine), beside the hand-written
  // decode.
  row_of("1. memcpy of the RH bytes (for scale)",
         paired_median_seconds(
             [&] {
               std::memcpy(copy.data(), wire.data(), bytes);
               keep(copy[0]);
             },
             [&] { decode_by_hand(wire.data(), out.data(), n); }),
         "hand-written decode", NAN, "-");
}

// ---- 4. go-back-N --------------------------------------------------------------------------

// A sender and a receiver back to back: every call to step() counts. `loss_per_mille` of the
// PDUs are dropped on the way (a cheap LCG decides); NACKs and timeouts recover.
std::uint64_t run_gbn(std::uint64_t pdus, std::uint32_t loss_per_mille, std::uint64_t& steps) {
  using P = t::psn<16>;
  t::gbn_config cfg;
  t::gbn_sender<16> s;
  t::gbn_receiver<16> r;
  std::uint64_t now = 0;
  std::uint32_t rng = 1;
  std::uint32_t resend = 0;
  P cursor{};
  steps = 0;
  const auto transmit = [&](P psn) {
    rng = rng * 1664525u + 1013904223u;
    if ((rng >> 8) % 1000 < loss_per_mille) return;
    auto [nr, ra] = t::step(r, t::receiver_event<16>{t::receiver_input::pdu, psn, true}, now, cfg);
    r = nr;
    ++steps;
    if (ra.ack_now) {
      const auto [op, apsn] = t::pending_ack(r);
      if (op != w::rh_op::none) {
        const auto in = op == w::rh_op::nack ? t::sender_input::nack : t::sender_input::ack;
        auto [ns, sa] = t::step(s, t::sender_event<16>{in, apsn}, now, cfg);
        s = ns;
        ++steps;
        if (sa.resend) {
          resend = sa.resend;
          cursor = sa.resend_from;
        }
      }
      auto [nr2, ra2] =
          t::step(r, t::receiver_event<16>{t::receiver_input::ack_sent, {}, true}, now, cfg);
      r = nr2;
      ++steps;
      keep(ra2);
    }
  };
  while (r.delivered < pdus) {
    ++now;
    if (resend > 0) {
      const P p = cursor;
      cursor = cursor + 1;
      --resend;
      transmit(p);
      continue;
    }
    auto [ns, sa] = t::step(s, t::sender_event<16>{t::sender_input::send, {}}, now, cfg);
    s = ns;
    ++steps;
    if (sa.assigned) {
      transmit(sa.psn_assigned);
      continue;
    }
    // Window full: let time pass; a coalesced ACK or the retransmit timer moves things on.
    now += cfg.rto;
    auto [nr, ra] = t::step(r, t::receiver_event<16>{t::receiver_input::tick, {}, true}, now, cfg);
    r = nr;
    ++steps;
    const auto [op, apsn] = t::pending_ack(r);
    if (op != w::rh_op::none) {
      const auto in = op == w::rh_op::nack ? t::sender_input::nack : t::sender_input::ack;
      auto [ns2, sa2] = t::step(s, t::sender_event<16>{in, apsn}, now, cfg);
      s = ns2;
      ++steps;
      auto [nr2, ra2] =
          t::step(r, t::receiver_event<16>{t::receiver_input::ack_sent, {}, true}, now, cfg);
      r = nr2;
      ++steps;
      keep(ra2);
      if (sa2.resend) {
        resend = sa2.resend;
        cursor = sa2.resend_from;
      }
    } else {
      auto [ns2, sa2] = t::step(s, t::sender_event<16>{t::sender_input::tick, {}}, now, cfg);
      s = ns2;
      ++steps;
      if (sa2.resend) {
        resend = sa2.resend;
        cursor = sa2.resend_from;
      }
    }
    keep(ra);
  }
  return s.resent;
}

void bench_gbn() {
  const std::uint64_t pdus = g_quick ? 100'000 : 10'000'000;
  const double goal = 50e6;
  for (const std::uint32_t loss : {0u, 10u}) {
    std::uint64_t steps = 0, resent = 0;
    const double sec = median_seconds([&] {
      resent = run_gbn(pdus, loss, steps);
      keep(resent);
    });
    const std::string name =
        loss == 0 ? "4. go-back-N steps, lossless" : "4. go-back-N steps, 1% loss";
    std::fprintf(stderr, "  (%llu steps, %llu resent)\n", static_cast<unsigned long long>(steps),
                 static_cast<unsigned long long>(resent));
    add(name, static_cast<double>(steps) / sec / 1e6, "Msteps/s", goal / 1e6, "goal 50 M/s", 1.0,
        ">= 50 M steps/s");
  }
}

// ---- 5. Tofu slicing / reassembly, RDMA segmentation -------------------------------------

template <std::size_t Lanes>
void bench_tofu_lanes(std::uint8_t pat) {
  const std::size_t n = g_quick ? 1'000 : 200'000;
  tf::routing_header h;
  h.len = tf::max_len;
  h.pat = pat;
  h.seq = 1;
  std::vector<std::uint8_t> tlp(tf::tlp_size(h.len)), dllp(tf::dllp_size),
      oc(tf::other_control_size);
  for (std::size_t i = 0; i < tlp.size(); ++i) tlp[i] = static_cast<std::uint8_t>(i * 7);
  std::vector<std::uint8_t> frame(tf::frame_size(h.len)), back(frame.size()), copy(frame.size());
  const auto e = tf::emit_frame(h, tlp, dllp, oc, frame);
  if (!e) {
    std::fprintf(stderr, "  skip tofu %zu lanes: emit_frame failed\n", Lanes);
    return;
  }
  auto set = std::make_unique<tf::slice_set<Lanes>>();
  if (tf::slice_frame<Lanes>(frame, *set)) {
    std::fprintf(stderr, "  skip tofu %zu lanes: PAT %u refused\n", Lanes, unsigned{pat});
    return;
  }
  const double bytes = static_cast<double>(n * frame.size());
  const double base = median_seconds([&] {
    for (std::size_t i = 0; i < n; ++i) {
      std::memcpy(copy.data(), frame.data(), frame.size());
      clobber();
    }
  });
  const double base_mbs = bytes / base / MB;
  const double sl = median_seconds([&] {
    for (std::size_t i = 0; i < n; ++i) {
      const auto err = tf::slice_frame<Lanes>(frame, *set);
      keep(err);
      clobber();
    }
  });
  const std::string l = std::to_string(Lanes);
  add("5. Tofu slice, " + l + " lanes (" + std::to_string(frame.size()) + " B)", bytes / sl / MB,
      "MB/s", base_mbs, "memcpy frame");
  const auto spans = set->spans();
  const double re = median_seconds([&] {
    for (std::size_t i = 0; i < n; ++i) {
      const auto r = tf::reassemble<Lanes>(spans, back);
      keep(r.value);
      clobber();
    }
  });
  if (!tf::reassemble<Lanes>(spans, back) || back != frame) std::abort();
  add("5. Tofu reassemble, " + l + " lanes", bytes / re / MB, "MB/s", base_mbs, "memcpy frame");
}

void bench_rdma() {
  const std::size_t size = g_quick ? (1u << 20) : (64u << 20);
  const std::uint64_t dst = 1000;  // unaligned start: a short first block
  const std::uint64_t bs = 4096;
  std::vector<std::uint8_t> src(size), out(size + 8192);
  for (std::size_t i = 0; i < size; ++i) src[i] = static_cast<std::uint8_t>(i);
  const double base = memcpy_seconds(src.data(), size, out.data(), out.size(), size);
  const double base_mbs = static_cast<double>(size) / base / MB;
  const double seg = median_seconds([&] {
    const std::uint64_t blocks = rd::total_blocks(dst, size, bs);
    for (std::uint64_t k = 0; k < blocks; ++k) {
      const std::uint64_t off = rd::block_offset(dst, size, bs, k);
      const std::uint64_t len = rd::block_bytes(dst, size, bs, k);
      std::memcpy(out.data() + off, src.data() + off, len);
      clobber();
    }
  });
  add("5. RDMA segment + copy (4 KB blocks)", static_cast<double>(size) / seg / MB, "MB/s",
      base_mbs, "memcpy whole");
  const std::uint64_t reps = g_quick ? 10 : 200;
  std::uint64_t blocks_total = 0;
  const double arith = median_seconds([&] {
    std::uint64_t acc = 0;
    blocks_total = 0;
    for (std::uint64_t r = 0; r < reps; ++r) {
      const std::uint64_t d2 = dst + r;
      const std::uint64_t blocks = rd::total_blocks(d2, size, bs);
      for (std::uint64_t k = 0; k < blocks; ++k)
        acc += rd::block_offset(d2, size, bs, k) ^ rd::block_bytes(d2, size, bs, k);
      blocks_total += blocks;
    }
    keep(acc);
  });
  const double base_blocks = static_cast<double>(size / bs) / base / 1e6;
  add("5. RDMA segmentation only (blocks)", static_cast<double>(blocks_total) / arith / 1e6,
      "Mblocks/s", base_blocks, "memcpy 4 KB blocks");
}

// ---- the fabric at scale -----------------------------------------------------------------

// Simulated PDUs per second of CPU for 8, 64 and 1024 XPUs (4 ports each, strict, udp4, no
// loss), next to emitting and reading the same PDUs' bytes alone (wire::emit_sue_frame and
// sim::read_pdu in a loop: what the fabric does to each PDU's bytes at the least). Each XPU
// sends to the 4 XPUs after it, alternating VC 0 and 1 every 4 commands, one command per PDU
// (send_now), one every 25 ns (a few percent of its ports' capacity: enough that the 1024-XPU
// run lasts 10 us, many round trips, and reaches a steady state within its 400 000 PDUs);
// offers go in as their time comes, 16 rounds at a time, as an outside event loop would add
// them. The PDUs (docs/performance.md, "The fabric at scale"):
//   - "RH-only": the smallest PDU that carries a command, one BARRIER (a 4-byte control, no
//     data). A PDU with no command is a stand-alone ACK/NACK: it takes no PSN, is not a PDU
//     of the count, but is a frame the fabric carries (the figures include them).
//   - "64 B cmd": one posted full write of 64 bytes (12 of control, 52 of data).
constexpr std::uint8_t fabric_ports = 4;
constexpr std::uint16_t fabric_fan_out = 4;

struct fabric_pdu {
  const char* name;
  std::vector<std::uint8_t> command;  // control then data
};

std::uint16_t fabric_dst(std::uint64_t i, std::uint16_t xpus) {
  return static_cast<std::uint16_t>((i % xpus + 1 + (i / xpus) % fabric_fan_out) % xpus);
}
std::uint8_t fabric_vc(std::uint64_t i, std::uint16_t xpus) {
  return static_cast<std::uint8_t>((i / xpus / fabric_fan_out) % 2);
}

// The bytes the heap holds for the program (glibc's count of chunks in use and mapped blocks).
std::size_t heap_in_use() {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

// Runs `pdus` commands through a fabric of `xpus` XPUs; returns its frame count. `heap`: what
// the fabric holds at the end of the run, every table at its largest.
std::uint64_t fabric_run(std::uint16_t xpus, const fabric_pdu& k, std::uint64_t pdus,
                         std::size_t* heap = nullptr) {
  const std::size_t before = heap_in_use();
  sm::fabric_config cfg;
  cfg.xpus = xpus;
  cfg.ports = fabric_ports;
  sm::fabric f(cfg);
  constexpr double gap = 25;  // ns between an XPU's commands
  std::uint64_t i = 0;
  for (std::uint64_t round = 0; i < pdus; round += 16) {
    const auto until = static_cast<std::uint64_t>(static_cast<double>(round + 16) * gap);
    for (; i < pdus && i / xpus < round + 16; ++i)
      if (f.add({.at = static_cast<std::uint64_t>(static_cast<double>(i / xpus) * gap),
                 .src = static_cast<std::uint16_t>(i % xpus),
                 .dst = fabric_dst(i, xpus),
                 .vc = fabric_vc(i, xpus),
                 .command = k.command,
                 .send_now = true}))
        std::abort();
    f.advance(until);
  }
  const auto& st = f.run();
  if (st.delivered != pdus || st.pdus != pdus || st.duplicates || st.out_of_order) std::abort();
  if (heap) *heap = heap_in_use() - before;
  return st.frames;
}

// The same PDUs' bytes alone: emit each frame, read it back.
void fabric_bare(std::uint16_t xpus, const fabric_pdu& k, std::uint64_t pdus) {
  std::array<std::uint8_t, 256> buf{};
  std::uint64_t good = 0;
  for (std::uint64_t i = 0; i < pdus; ++i) {
    w::frame_params fp;
    fp.src_xpu = static_cast<std::uint32_t>(i % xpus);
    fp.dst_xpu = fabric_dst(i, xpus);
    w::reliability_header rh{};
    rh.xpuid = static_cast<std::uint16_t>(fp.src_xpu);
    rh.npsn = static_cast<std::uint16_t>(i);
    rh.vc = fabric_vc(i, xpus);
    fp.tc = rh.vc;
    const auto n = w::emit_sue_frame(fp, rh, k.command, buf);
    if (!n) std::abort();
    const auto r = sm::read_pdu(w::bytes(buf.data(), n.value));
    good += r.good() && r.dst_xpu == fp.dst_xpu;
    keep(r);
  }
  if (good != pdus) std::abort();
}

void bench_fabric() {
  std::array<std::uint8_t, 4> barrier{};
  if (!w::encode(pk::cmd_barrier{}, barrier)) std::abort();
  std::vector<std::uint8_t> write(64);
  if (!w::encode(pk::cmd_write{.type = pk::code::write_full_posted, .dlen = 51, .addr = 0x1000},
                 w::mutable_bytes(write.data(), 12)))
    std::abort();
  for (std::size_t i = 12; i < write.size(); ++i) write[i] = static_cast<std::uint8_t>(i);
  const fabric_pdu kinds[] = {{"RH-only", {barrier.begin(), barrier.end()}}, {"64 B cmd", write}};
  const std::uint64_t pdus = g_quick ? 4'096 : 400'000;
  for (const auto& k : kinds) {
    double rate_8 = 0, per_mb_8 = 0;
    for (const std::uint16_t xpus : {std::uint16_t{8}, std::uint16_t{64}, std::uint16_t{1024}}) {
      std::uint64_t frames = 0;
      std::size_t heap = 0;
      const double s = median_cpu_seconds([&] { frames = fabric_run(xpus, k, pdus, &heap); });
      const double b = median_cpu_seconds([&] { fabric_bare(xpus, k, pdus); });
      const double sim_rate = static_cast<double>(pdus) / s / 1e6;
      const double bare_rate = static_cast<double>(pdus) / b / 1e6;
      const std::string name = "6. fabric " + std::to_string(xpus) + " XPUs, " + k.name;
      std::fprintf(stderr, "  (%s: %.0f ns per PDU, %.2f frames per PDU)\n", name.c_str(),
                   1e3 / sim_rate, static_cast<double>(frames) / static_cast<double>(pdus));
      add(name, sim_rate, "MPDU/s cpu", bare_rate, "emit+read alone", 0.5, ">= 0.5 (<= 2x cost)");
      if (k.command.size() == 4)
        add(name + " (rate)", sim_rate, "MPDU/s cpu", 2.0, "goal 2 M/s", 1.0, ">= 2 M PDUs/s");
      if (xpus == 8) rate_8 = sim_rate;
      if (xpus == 1024)  // flat: a PDU costs about the same in the largest fabric
        add(std::string("6. fabric 1024 vs 8 XPUs, ") + k.name, sim_rate, "MPDU/s cpu", rate_8,
            "8 XPUs", 0.67, ">= 0.67 (flat)");
      // Memory linear in the connections used: each XPU sends to fabric_fan_out others, and
      // the pairs a megabyte of the fabric's heap holds stay as many from 8 XPUs to 1024 (a
      // table per pair of all XPUs would hold 128 times fewer at 1024).
      if (k.command.size() != 4) continue;
      const double per_mb = static_cast<double>(xpus) * fabric_fan_out /
                            (static_cast<double>(heap) / MB);
      if (xpus == 8) per_mb_8 = per_mb;
      add("6. fabric memory, " + std::to_string(xpus) + " XPUs", per_mb, "pairs/MB", per_mb_8,
          "8 XPUs", 0.67, ">= 0.67 (linear)");
    }
  }
}

// ---- 7. keyed hashing --------------------------------------------------------------------

// A lookup in the tables of flows and connections (dissect/flat_index.hpp): SipHash-1-3 under
// the process's key against the linear mix it replaced (collisions.hpp, with the fmix64 the
// table then applied), on random keys, on which the old mix spread as well as any. Finds of keys
// present, in a random order, in a table of 1000 keys (in cache: the hash's cost shows) and of
// 1 000 000 (the memory's). Both in turn, in CPU time of the thread.
template <class Key, class Keyed, class Old>
void hash_lookups(const std::string& what, const std::vector<Key>& keys) {
  d::flat_index<Key, Keyed> keyed;
  d::flat_index<Key, Old> old(w::hash_key{});
  for (const Key& k : keys) {
    keyed.insert(k);
    old.insert(k);
  }
  std::vector<std::uint32_t> order(keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = static_cast<std::uint32_t>(i);
  std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
  const std::size_t lookups = g_quick ? 100'000 : 4'000'000;
  const auto run = [&](const auto& table) {
    std::uint64_t sum = 0;
    for (std::size_t i = 0, j = 0; i < lookups; ++i, j = j + 1 == order.size() ? 0 : j + 1)
      sum += table.find(keys[order[j]]);
    keep(sum);
    if (sum == 0 && keys.size() > 1) std::abort();
  };
  const auto t = paired_median_seconds([&] { run(keyed); }, [&] { run(old); });
  const auto ns = [&](double sec) { return sec / static_cast<double>(lookups) * 1e9; };
  add("7. " + what + " lookup, " + std::to_string(keys.size()) + " keys", ns(t.value), "ns cpu",
      ns(t.baseline), "old linear mix");
}

void bench_hash() {
  std::mt19937_64 rng(3);
  const auto address = [&] {
    return w::ip_address::v6(std::bit_cast<w::ipv6_address>(std::array{rng(), rng()}));
  };
  const w::ip_address dst = w::ip_address::v6(w::xpu_ipv6(2));
  for (const std::size_t n :
       {std::size_t{1000}, g_quick ? std::size_t{10'000} : std::size_t{1'000'000}}) {
    std::vector<w::udp_flow> flows;
    std::vector<d::connection_key> conns;
    for (std::size_t i = 0; i < n; ++i) {
      flows.push_back(w::udp_flow::make(address(), static_cast<std::uint16_t>(rng()), dst, 4793));
      conns.push_back({d::endpoint::of_ip(address()), d::endpoint::of_ip(address()), 0,
                       static_cast<std::uint8_t>(rng() % 4)});
    }
    hash_lookups<w::udp_flow, w::udp_flow_hash, scaleup::collisions::old_mix::flow_hash>("UDP flow",
                                                                                         flows);
    hash_lookups<d::connection_key, d::connection_key_hash,
                 scaleup::collisions::old_mix::connection_hash>("connection", conns);
  }
}

// ---- output ------------------------------------------------------------------------------

std::string json_escape(std::string_view s) {
  std::string o;
  for (const char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    o += c;
  }
  return o;
}

std::string num(double v) {
  if (std::isnan(v) || std::isinf(v)) return "null";
  char b[64];
  std::snprintf(b, sizeof b, "%.6g", v);
  return b;
}

void print_table() {
  std::printf("%-42s %12s %-10s %12s %-18s %8s %-18s %s\n", "figure", "value", "unit", "baseline",
              "baseline is", "ratio", "goal", "met?");
  for (const row& r : g_rows)
    std::printf("%-42s %12.2f %-10s %12.2f %-18s %8.3f %-18s %s\n", r.figure.c_str(), r.value,
                r.unit.c_str(), r.baseline, r.baseline_name.c_str(), r.ratio(), r.goal_text.c_str(),
                r.met().c_str());
}

bool write_json(const std::string& path) {
  std::ofstream o(path);
  if (!o) return false;
  o << "{\n  \"runs\": " << g_runs << ",\n  \"quick\": " << (g_quick ? "true" : "false")
    << ",\n  \"rows\": [\n";
  for (std::size_t i = 0; i < g_rows.size(); ++i) {
    const row& r = g_rows[i];
    o << "    {\"figure\": \"" << json_escape(r.figure) << "\", \"value\": " << num(r.value)
      << ", \"unit\": \"" << json_escape(r.unit) << "\", \"baseline\": " << num(r.baseline)
      << ", \"baseline_is\": \"" << json_escape(r.baseline_name)
      << "\", \"ratio\": " << num(r.ratio()) << ", \"goal\": \"" << json_escape(r.goal_text)
      << "\", \"met\": \"" << r.met() << "\"}" << (i + 1 < g_rows.size() ? "," : "") << "\n";
  }
  o << "  ]\n}\n";
  return static_cast<bool>(o);
}

}  // namespace

int main(int argc, char** argv) {
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string_view a = argv[i];
    if (a == "--quick") {
      g_quick = true;
      g_runs = 1;
    } else if (a == "--runs" && i + 1 < argc) {
      g_runs = std::max(1, std::atoi(argv[++i]));
    } else if (a == "--json" && i + 1 < argc) {
      json = argv[++i];
    } else if (a == "--only" && i + 1 < argc) {
      g_only = argv[++i];
    } else {
      std::fprintf(stderr,
                   "usage: micro [--quick] [--runs N] [--json PATH] "
                   "[--only rh,frames,packer,gbn,tofu,rdma,fabric,hash]\n");
      return 2;
    }
  }
  std::fprintf(stderr, "medians of %d runs%s\n", g_runs, g_quick ? " (quick: not meaningful)" : "");
  if (wanted("rh")) bench_rh();
  if (wanted("frames")) bench_frames();
  if (wanted("packer")) bench_packer();
  if (wanted("gbn")) bench_gbn();
  if (wanted("tofu")) {
    bench_tofu_lanes<2>(1);
    bench_tofu_lanes<4>(2);
  }
  if (wanted("rdma")) bench_rdma();
  if (wanted("fabric")) bench_fabric();
  if (wanted("hash")) bench_hash();
  print_table();
  if (!json.empty() && !write_json(json)) {
    std::fprintf(stderr, "cannot write %s\n", json.c_str());
    return 1;
  }
  return 0;
}
