// The micro-benchmark groups whose baseline is the best hand-written code for the same job
// (docs/performance.md): the frames (emitting and reading udp4, afh1-shim and afh2c against
// hand_frames.hpp) and the packer and unpacker (against hand_packer.hpp). Before any timing, each
// hand-written baseline is run on the same inputs as the library, and on variations of them (other
// sizes, values, refusals, damaged frames and payloads), and must give the same bytes and the same
// verdicts: otherwise the comparison would be of two different jobs, and the program stops.
//
// Each figure and its baseline run in turn, timed in CPU time of the thread
// (paired_median_seconds), so that a share of a busy machine falls on both.
#include <scaleup/dissect/engine.hpp>
#include <scaleup/dissect/tree.hpp>
#include <scaleup/pack/command.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/packer.hpp>
#include <scaleup/transport/sue_frame.hpp>
#include <scaleup/wire/frame.hpp>
#include <scaleup/wire/receive.hpp>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "hand_frames.hpp"
#include "hand_packer.hpp"
#include "measure.hpp"

namespace scaleup::bench {

namespace {

namespace w = scaleup::wire;
namespace d = scaleup::dissect;
namespace pk = scaleup::pack;

[[noreturn]] void differ(const char* group, const std::string& what) {
  std::fprintf(stderr,
               "%s: the hand-written baseline and the library differ (%s): the comparison would "
               "not be of the same job\n",
               group, what.c_str());
  std::abort();
}

// ---- 2. frames ---------------------------------------------------------------------------

using hand_emitter = std::size_t (*)(std::uint32_t, std::uint32_t, std::uint8_t,
                                     const w::reliability_header&, const std::uint8_t*, std::size_t,
                                     std::uint8_t*, std::size_t);
using hand_reader = hand_read (*)(const std::uint8_t*, std::size_t);

struct frame_case {
  w::encap kind;
  hand_emitter emit;
  hand_reader read;
  std::uint32_t max_xpu;  // the largest XPU id the encapsulation carries
  std::uint8_t max_tc;    // and traffic class
  // The first byte the checks change or cut the frame at: the bytes before it say which reader
  // the frame is for (the library reads a compressed AFH Gen 2 header cut short as SUE Lite).
  std::size_t damage_from;
};

// The receivers' options (transport::sue_receive_options), checksums checked or not.
w::receive_options receive_options(bool checksums) {
  w::receive_options o = transport::sue_receive_options();
  o.check_checksums = checksums;
  return o;
}

std::string describe(const frame_case& c, w::bytes frame, const char* field) {
  std::string s = std::string(w::to_string(c.kind)) + " frame of " + std::to_string(frame.size()) +
                  " B, " + field + "; bytes:";
  char b[4];
  for (const std::uint8_t x : frame) {
    std::snprintf(b, sizeof b, " %02x", x);
    s += b;
  }
  return s;
}

// One frame through the library's two readers (the full reader and a receiver's reading, whose
// fast path reads most of these frames) and the hand-written one.
void compare_read(const frame_case& c, w::bytes frame, const w::receive_options& o,
                  const hand_read& h, bool checksums) {
  const auto fail = [&](const char* field) { differ("frames", describe(c, frame, field)); };
  const w::received_frame f = w::read_frame(frame, w::link_ethernet, o);
  if (f.kind != h.kind) fail("encapsulation");
  if (!f.failover && f.ok() != h.ok) fail("verdict (ok)");
  if (f.src_xpu != h.src_xpu || f.dst_xpu != h.dst_xpu) fail("XPU ids");
  if (f.rh != h.rh) fail("RH");
  if (f.rh && (f.pdu_offset != h.pdu_offset || f.payload_length() != h.payload_length ||
               f.bounds.status != h.status))
    fail("PDU offset, payload length or R-CRC verdict");
  if (c.kind == w::encap::udp4 && f.ipv4 && f.udp &&
      (f.ipv4_checksum != h.ipv4_checksum || f.udp_checksum != h.udp_checksum) && checksums)
    fail("checksum verdicts");
  const transport::sue_frame s = transport::read_sue_frame(frame, o);
  if (s.kind != h.kind || s.rh != h.rh || s.good() != (h.rh && h.status == w::rcrc_status::good))
    fail("a receiver's reading: encapsulation, RH or verdict");
  if (s.good() && s.payload.size() != h.payload_length) fail("a receiver's reading: payload");
}

void check_hand_frames(const frame_case& c) {
  std::mt19937 rng(11);
  std::vector<std::uint8_t> lib(8192), hand(8192);
  const auto reader = [&](bool checksums) { return checksums ? &hand_read_udp4<true> : c.read; };
  std::size_t frames = 0, damaged = 0;
  for (const std::size_t len : {0u, 1u, 7u, 20u, 64u, 200u, 1500u, 4096u, 4097u}) {
    for (const std::uint32_t xpu : {0u, 1u, c.max_xpu, c.max_xpu + 1}) {
      for (const std::uint8_t tc :
           {std::uint8_t{0}, std::uint8_t{3}, c.max_tc, static_cast<std::uint8_t>(c.max_tc + 1)}) {
        w::reliability_header rh;
        rh.op = static_cast<std::uint8_t>(rng() & 3);
        rh.xpuid = static_cast<std::uint16_t>(rng() & (len == 20 ? 0x7FF : 0x3FF));  // 20: too big
        rh.npsn = static_cast<std::uint16_t>(rng());
        rh.vc = static_cast<std::uint8_t>(rng() & 3);
        rh.partition = static_cast<std::uint16_t>(rng() & 0x3FF);
        rh.apsn = static_cast<std::uint16_t>(rng());
        std::vector<std::uint8_t> data(len);
        for (auto& x : data) x = static_cast<std::uint8_t>(rng());
        w::frame_params p;
        p.kind = c.kind;
        p.src_xpu = xpu == 0 ? 5 : xpu;
        p.dst_xpu = xpu;
        p.tc = c.kind == w::encap::afh1_shim && tc > c.max_tc ? c.max_tc : tc;
        for (const std::size_t room : {lib.size(), std::size_t{59}, len + 40}) {
          const auto r = w::emit_sue_frame(p, rh, data, w::mutable_bytes(lib.data(), room));
          const std::size_t n =
              c.emit(p.src_xpu, p.dst_xpu, p.tc, rh, data.data(), data.size(), hand.data(), room);
          if (!r != (n == 0))
            differ("frames",
                   std::string(w::to_string(c.kind)) + " emit: one refuses, the other not");
          if (!r) continue;
          if (r.value != n || std::memcmp(lib.data(), hand.data(), n) != 0)
            differ("frames", describe(c, w::bytes(lib.data(), r.value), "emitted bytes"));
          ++frames;
          const w::bytes frame(lib.data(), n);
          for (const bool checksums : {false, true}) {
            if (checksums && c.kind != w::encap::udp4) continue;
            const auto o = receive_options(checksums);
            const auto read = reader(checksums);
            compare_read(c, frame, o, read(frame.data(), frame.size()), checksums);
            // Cut anywhere from damage_from, and any byte from there changed (three values
            // each).
            std::vector<std::uint8_t> bad(frame.begin(), frame.end());
            for (std::size_t cut = c.damage_from; cut < n && n <= 300; ++cut, ++damaged)
              compare_read(c, w::bytes(bad.data(), cut), o, read(bad.data(), cut), checksums);
            for (std::size_t at = c.damage_from; at < n && n <= 300; ++at) {
              for (int k = 0; k < 3; ++k, ++damaged) {
                bad[at] = static_cast<std::uint8_t>(k == 0 ? bad[at] ^ 0xFF : rng());
                compare_read(c, w::bytes(bad.data(), n), o, read(bad.data(), n), checksums);
              }
              bad[at] = frame[at];
            }
          }
        }
      }
    }
  }
  std::fprintf(stderr, "  (%s: %zu frames emitted alike, %zu damaged frames read alike)\n",
               std::string(w::to_string(c.kind)).c_str(), frames, damaged);
}

// The RH and the network header every frame row sends: XPU 1 to XPU 2.
w::reliability_header bench_rh() {
  w::reliability_header rh;
  rh.xpuid = 1;
  rh.npsn = 7;
  rh.vc = 1;
  rh.partition = 5;
  rh.apsn = 3;
  return rh;
}
w::frame_params bench_params(w::encap kind, std::uint8_t tc) {
  w::frame_params p;
  p.kind = kind;
  p.src_xpu = 1;
  p.dst_xpu = 2;
  p.tc = tc;
  return p;
}

void bench_frames_hand(const frame_case& c, const std::vector<std::uint8_t>& payload,
                       d::tree& tree) {
  check_hand_frames(c);
  const std::size_t n = g_quick ? 1'000 : 100'000;
  w::reliability_header rh = bench_rh();
  w::frame_params p = bench_params(c.kind, 3);
  std::vector<std::uint8_t> buf(2048);
  const std::string name(w::to_string(c.kind));
  const auto rate = [&](double seconds) { return static_cast<double>(n) / seconds / 1e6; };

  // Emitting: one frame after another into the same buffer, each with the next PSN.
  const auto emit_lib = [&] {
    for (std::size_t i = 0; i < n; ++i) {
      rh.npsn = static_cast<std::uint16_t>(i);
      const auto r = w::emit_sue_frame(p, rh, payload, buf);
      if (!r) std::abort();
      keep(buf[0]);
    }
  };
  const auto emit_hand = [&] {
    for (std::size_t i = 0; i < n; ++i) {
      rh.npsn = static_cast<std::uint16_t>(i);
      if (c.emit(p.src_xpu, p.dst_xpu, p.tc, rh, payload.data(), payload.size(), buf.data(),
                 buf.size()) == 0)
        std::abort();
      keep(buf[0]);
    }
  };
  const auto e = paired_median_seconds(emit_lib, emit_hand);
  rh.npsn = 7;
  const auto len = w::emit_sue_frame(p, rh, payload, buf);
  if (!len) std::abort();
  add("2. emit_sue_frame " + name + " (" + std::to_string(len.value) + " B)", rate(e.value),
      "Mframes/s", rate(e.baseline), "hand-written emit", 0.7, ">= 0.7 x hand");

  // Reading: the same frame again and again, as a receiver takes it (accepted, its payload).
  const w::bytes frame(buf.data(), len.value);
  const auto read_rows = [&](bool checksums, hand_reader read, const std::string& what) {
    const w::receive_options o = receive_options(checksums);
    std::size_t good = 0, sum = 0;
    const auto read_lib = [&] {
      for (std::size_t i = 0; i < n; ++i) {
        const auto f = w::read_frame(frame, w::link_ethernet, o);
        good += f.accepted();
        sum += f.payload.size();
        keep(good);
      }
    };
    const auto read_hand = [&] {
      for (std::size_t i = 0; i < n; ++i) {
        const hand_read h = read(frame.data(), frame.size());
        good += h.rh && h.status == w::rcrc_status::good;
        sum += h.payload_length;
        keep(good);
      }
    };
    const auto t = paired_median_seconds(read_lib, read_hand);
    if (good == 0 || sum == 0) std::abort();
    add("2. read_frame " + name + what, rate(t.value), "Mframes/s", rate(t.baseline),
        "hand-written read", 0.7, ">= 0.7 x hand");
    if (checksums) return t.baseline;  // not part of what a receiver is given
    // What a receiver (an instance, a switch, the fabric) reads of the same frame: where it
    // goes, the RH, the payload and the verdict.
    const auto read_receiver = [&] {
      for (std::size_t i = 0; i < n; ++i) {
        const auto s = transport::read_sue_frame(frame, o);
        good += s.good();
        sum += s.payload.size();
        keep(good);
      }
    };
    const auto r = paired_median_seconds(read_receiver, read_hand);
    add("2. read_sue_frame " + name + " (a receiver's)", rate(r.value), "Mframes/s",
        rate(r.baseline), "hand-written read", 0.7, ">= 0.7 x hand");
    return t.baseline;
  };
  read_rows(false, c.read, "");
  if (c.kind == w::encap::udp4) read_rows(true, &hand_read_udp4<true>, ", checksums checked");

  // The dissection tree beside them: no goal (it builds a tree for display).
  std::size_t good = 0;
  const auto t = paired_median_seconds(
      [&] {
        for (std::size_t i = 0; i < n; ++i) {
          d::dissect_frame(tree, frame, w::link_ethernet);
          keep(tree);
        }
      },
      [&] {
        for (std::size_t i = 0; i < n; ++i) {
          const hand_read h = c.read(frame.data(), frame.size());
          good += h.rh && h.status == w::rcrc_status::good;
          keep(good);
        }
      });
  add("2. dissect_frame " + name, rate(t.value), "Mframes/s", rate(t.baseline),
      "hand-written read");
}

// The encapsulations without a hand-written baseline: emitting and dissecting, against a memcpy
// of the frame (for scale).
void bench_frames_memcpy(w::encap e, const std::vector<std::uint8_t>& payload, d::tree& tree) {
  const std::size_t n = g_quick ? 1'000 : 100'000;
  w::reliability_header rh = bench_rh();
  std::vector<std::uint8_t> buf(2048), copy(2048);
  w::frame_params p = bench_params(e, e == w::encap::afh1 ? 0 : 3);
  const auto build = [&] {
    return e == w::encap::lite ? w::emit_frame(p, payload, buf)
                               : w::emit_sue_frame(p, rh, payload, buf);
  };
  const auto first = build();
  if (!first) {
    std::fprintf(stderr, "  skip %s: cannot build\n", std::string(w::to_string(e)).c_str());
    return;
  }
  const std::size_t len = first.value;
  const std::string name(w::to_string(e));
  const double base = median_seconds([&] {
    for (std::size_t i = 0; i < n; ++i) {
      std::memcpy(copy.data(), buf.data(), len);
      clobber();
    }
  });
  const double base_fps = static_cast<double>(n) / base / MB;
  const double b = median_seconds([&] {
    for (std::size_t i = 0; i < n; ++i) {
      rh.npsn = static_cast<std::uint16_t>(i);
      const auto r = build();
      keep(r.value);
      clobber();
    }
  });
  add("2. build " + name + " (" + std::to_string(len) + " B)", static_cast<double>(n) / b / MB,
      "Mframes/s", base_fps, "memcpy frame");
  if (!build()) std::abort();
  const double pz = median_seconds([&] {
    for (std::size_t i = 0; i < n; ++i) {
      d::dissect_frame(tree, w::bytes(buf.data(), len), d::link_ethernet);
      keep(tree);
    }
  });
  add("2. parse " + name + " (dissect_frame)", static_cast<double>(n) / pz / MB, "Mframes/s",
      base_fps, "memcpy frame");
}

// ---- 3. packer / unpacker ----------------------------------------------------------------

// The packer's loop: `pdus` PDUs of `per_pdu` commands each (control and data of `size` bytes,
// back to back in `store`), each PDU pushed then packed into its 4 KB of `out`. A function of
// its own, its parameters locals: captured by reference in the timed lambda, every one of them
// was reloaded at each push (the packer's stores may alias them), a cost of the harness and not
// of the packer. The same for the hand-written packer.
template <class Packer>
void push_and_pack(Packer& pack, const std::uint8_t* store, std::size_t ctrl, std::size_t size,
                   std::size_t per_pdu, std::size_t pdus, std::uint8_t* out, std::size_t* sizes) {
  const std::size_t data_len = size - ctrl;
  const std::uint8_t* src = store;
  for (std::size_t p = 0; p < pdus; ++p) {
    for (std::size_t c = 0; c < per_pdu; ++c, src += size) {
      const pk::queued_command q{
          0, 0, w::bytes(src, ctrl), pk::borrow(w::bytes(src + ctrl, data_len)), false, c};
      if (pack.push(q)) std::abort();
    }
    const auto r = pack.next(w::mutable_bytes(out + p * pk::sue_pack_limit, pk::sue_pack_limit));
    if (!r || r.value.commands != per_pdu) std::abort();
    sizes[p] = r.value.bytes;
  }
  keep(out[0]);
}

template <class Hand>
void push_and_pack_by_hand(Hand& pack, const std::uint8_t* store, std::size_t ctrl,
                           std::size_t size, std::size_t per_pdu, std::size_t pdus,
                           std::uint8_t* out, std::size_t* sizes) {
  const std::size_t data_len = size - ctrl;
  const std::uint8_t* src = store;
  for (std::size_t p = 0; p < pdus; ++p) {
    for (std::size_t c = 0; c < per_pdu; ++c, src += size)
      if (!pack.push(0, 0, src, ctrl, src + ctrl, data_len)) std::abort();
    const hand_pdu r = pack.next(out + p * pk::sue_pack_limit);
    if (r.commands != per_pdu) std::abort();
    sizes[p] = r.bytes;
  }
  keep(out[0]);
}

// Random traffic through both packers, pushes in bursts between PDUs: the same refusals, the
// same PDUs (destination, VC, bytes), until both are empty. Commands of every type of the
// default profile, of every data length, some of them malformed (a type not in the profile, a
// control or data length the type does not have), some with send_now.
template <std::size_t Destinations, bool Borrow>
void check_hand_packer_random(const std::array<std::uint16_t, 4>& weights, std::size_t limit,
                              std::uint32_t seed) {
  using lib_t = pk::packer<Destinations, 4, 1024>;
  pk::packer_config<4> cfg;
  cfg.weights = weights;
  cfg.limit = limit;
  auto lib = std::make_unique<lib_t>(pk::default_profile, cfg);
  auto hand = std::make_unique<hand_packer<Destinations, 4, (1u << 17), Borrow>>(weights, limit);
  std::mt19937 rng(seed);
  std::vector<std::uint8_t> pool(1 << 16);
  for (auto& x : pool) x = static_cast<std::uint8_t>(rng());
  std::vector<std::uint8_t> a(limit), b(limit);
  static constexpr std::array<std::uint8_t, 14> codes{0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C, 0x0E,
                                                      0x10, 0x12, 0x14, 0x16, 0x00, 0x03, 0xFF};
  std::size_t pdus = 0, pushed = 0, refused = 0;
  const auto compare_next = [&] {
    const auto r = lib->next(w::mutable_bytes(a.data(), a.size()));
    const hand_pdu h = hand->next(b.data());
    if (!r || r.value.destination != h.destination || r.value.vc != h.vc ||
        r.value.bytes != h.bytes || r.value.commands != h.commands ||
        std::memcmp(a.data(), b.data(), h.bytes) != 0)
      differ("packer", "PDU " + std::to_string(pdus) + " (library: destination " +
                           std::to_string(r.value.destination) + ", VC " +
                           std::to_string(r.value.vc) + ", " + std::to_string(r.value.commands) +
                           " commands, " + std::to_string(r.value.bytes) +
                           " B; hand: destination " + std::to_string(h.destination) + ", VC " +
                           std::to_string(h.vc) + ", " + std::to_string(h.commands) +
                           " commands, " + std::to_string(h.bytes) + " B)");
    ++pdus;
    return h.commands;
  };
  for (std::size_t step = 0; step < 20'000; ++step) {
    if (rng() % 10 < 6 && lib->queued() < 400) {
      for (std::size_t k = 1 + rng() % 8; k > 0; --k) {
        const std::uint8_t code = codes[rng() % codes.size()];
        const std::uint8_t f = hand_framing[code];
        std::size_t clen = f != 0 ? (f & 0x7F) : 2 + 2 * (rng() % 8);
        if (rng() % 50 == 0) clen += 2;
        std::size_t dlen = (f & 0x80) ? 1 + rng() % 256 : 0;
        if (rng() % 50 == 0) dlen = (f & 0x80) ? (rng() % 2 ? 0 : 257) : 5;
        std::array<std::uint8_t, 24> control{};
        for (auto& x : control) x = static_cast<std::uint8_t>(rng());
        control[0] = code;
        const std::uint8_t* data = pool.data() + rng() % (pool.size() - 300);
        const auto dest = static_cast<std::uint16_t>(rng() % Destinations);
        const auto vc = static_cast<std::uint8_t>(rng() % 4);
        const bool now = rng() % 20 == 0;
        const bool lib_ok = !lib->push(pk::queued_command{
            dest, vc, w::bytes(control.data(), clen), pk::borrow(w::bytes(data, dlen)), now, 0});
        const bool hand_ok = hand->push(dest, vc, control.data(), clen, data, dlen, now);
        if (lib_ok != hand_ok)
          differ("packer", "push of a command of type " + std::to_string(code) + ", control " +
                               std::to_string(clen) + " B, data " + std::to_string(dlen) +
                               " B: one refuses, the other not");
        ++(lib_ok ? pushed : refused);
      }
    } else {
      compare_next();
    }
  }
  while (compare_next() != 0) {
  }
  if (lib->queued() != 0) differ("packer", "the library's packer still holds commands");
  std::fprintf(stderr,
               "  (packer, data %s, %zu destinations, limit %zu: %zu commands, %zu refused, "
               "%zu PDUs alike)\n",
               Borrow ? "borrowed" : "copied", Destinations, limit, pushed, refused, pdus);
}

// One payload through both unpackers: the same commands (offset, control and data lengths,
// type), the same verdict and, on an error, the same place.
void compare_unpack(w::bytes payload, const char* what) {
  struct cmd {
    std::size_t offset, control, data;
    std::uint8_t code;
    bool operator==(const cmd&) const = default;
  };
  std::vector<cmd> lib, hand;
  pk::unpacker u(pk::default_profile, payload);
  pk::command_view v;
  while (u.next(v)) lib.push_back({v.offset, v.control.size(), v.data.size(), v.code()});
  std::size_t at_error = 0;
  const bool ok = hand_unpack(
      payload.data(), payload.size(),
      [&](const hand_command& c) {
        hand.push_back({c.offset, c.control_len, c.data_len, payload[c.offset]});
      },
      at_error);
  if (lib != hand || ok != !u.error_found() || (!ok && at_error != u.error_found().offset))
    differ("unpacker", std::string(what) + ", " + std::to_string(payload.size()) + " B payload");
}

void check_hand_unpacker(std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::size_t payloads = 0;
  for (std::size_t round = 0; round < 2'000; ++round) {
    // Valid commands of every type back to back, then damaged copies.
    std::vector<std::uint8_t> p;
    for (std::size_t k = rng() % 20; k > 0; --k) {
      static constexpr std::array<std::uint8_t, 11> codes{0x02, 0x04, 0x06, 0x08, 0x0A, 0x0C,
                                                          0x0E, 0x10, 0x12, 0x14, 0x16};
      const std::uint8_t code = codes[rng() % codes.size()];
      const std::uint8_t f = hand_framing[code];
      const std::size_t dlen = (f & 0x80) ? 1 + rng() % 256 : 0;
      const std::size_t at = p.size();
      p.resize(at + (f & 0x7F) + dlen);
      for (std::size_t i = at; i < p.size(); ++i) p[i] = static_cast<std::uint8_t>(rng());
      p[at] = code;
      if (dlen) p[at + 1] = static_cast<std::uint8_t>(dlen - 1);
    }
    compare_unpack(p, "valid commands");
    std::vector<std::uint8_t> q = p;
    q.resize(q.size() + 1 + rng() % 40, 0);
    compare_unpack(q, "zero padding");
    q.back() = 1;
    compare_unpack(q, "padding, then a non-zero byte");
    if (!p.empty()) {
      compare_unpack(w::bytes(p.data(), rng() % p.size()), "cut short");
      q = p;
      q[rng() % q.size()] = static_cast<std::uint8_t>(rng());
      compare_unpack(q, "a byte changed");
    }
    payloads += 5;
  }
  std::fprintf(stderr, "  (unpacker: %zu payloads read alike)\n", payloads);
}

void bench_packer_sizes() {
  using packer_t = pk::packer<1, 4, 1024>;
  using hand_copied = hand_packer<1, 4, 16384, false>;
  using hand_borrowed = hand_packer<1, 4, 16384, true>;
  const std::size_t total_target = g_quick ? (1u << 16) : (16u << 20);  // bytes of commands
  for (const std::size_t size : {16u, 64u, 256u}) {
    const pk::command_type* ty = pk::default_profile.find(pk::code::write_full);
    if (ty == nullptr) std::abort();
    const std::size_t ctrl = ty->control_bytes();
    const std::size_t data_len = size - ctrl;
    const std::size_t per_pdu = pk::sue_pack_limit / size;  // commands that fit one 4 KB PDU
    const std::size_t pdus = total_target / (per_pdu * size);
    const std::size_t count = pdus * per_pdu;
    // The commands: control and data, one contiguous store.
    std::vector<std::uint8_t> store(count * size);
    for (std::size_t c = 0; c < count; ++c) {
      std::uint8_t* at = store.data() + c * size;
      for (std::size_t i = 0; i < size; ++i) at[i] = static_cast<std::uint8_t>(c * 31 + i);
      at[0] = pk::code::write_full;
      at[1] = static_cast<std::uint8_t>(data_len - 1);
    }
    const std::size_t bytes = count * size;
    std::vector<std::uint8_t> out(pk::sue_pack_limit * pdus), scratch(out.size());
    std::vector<std::size_t> sizes(pdus), hand_sizes(pdus);
    const auto mbs = [&](double seconds) { return static_cast<double>(bytes) / seconds / MB; };
    const std::string s = std::to_string(size);

    auto pack = std::make_unique<packer_t>(pk::default_profile);
    auto copied = std::make_unique<hand_copied>(std::array<std::uint16_t, 4>{1, 1, 1, 1});
    auto borrowed = std::make_unique<hand_borrowed>(std::array<std::uint16_t, 4>{1, 1, 1, 1});
    // Before timing: the same PDUs from all three.
    push_and_pack(*pack, store.data(), ctrl, size, per_pdu, pdus, out.data(), sizes.data());
    const auto same_pdus = [&](auto& hand, const char* design) {
      push_and_pack_by_hand(hand, store.data(), ctrl, size, per_pdu, pdus, scratch.data(),
                            hand_sizes.data());
      for (std::size_t p = 0; p < pdus; ++p)
        if (sizes[p] != hand_sizes[p] ||
            std::memcmp(out.data() + p * pk::sue_pack_limit,
                        scratch.data() + p * pk::sue_pack_limit, sizes[p]) != 0)
          differ("packer", std::string(design) + ", PDU " + std::to_string(p) + " of the " + s +
                               " B commands");
    };
    same_pdus(*copied, "data copied");
    same_pdus(*borrowed, "data borrowed");

    // The library against each hand-written design in turn; the faster design is the baseline.
    const auto lib_run = [&] {
      push_and_pack(*pack, store.data(), ctrl, size, per_pdu, pdus, out.data(), sizes.data());
    };
    const auto copied_run = [&] {
      push_and_pack_by_hand(*copied, store.data(), ctrl, size, per_pdu, pdus, scratch.data(),
                            hand_sizes.data());
    };
    const auto borrowed_run = [&] {
      push_and_pack_by_hand(*borrowed, store.data(), ctrl, size, per_pdu, pdus, scratch.data(),
                            hand_sizes.data());
    };
    const pair_seconds pc = paired_median_seconds(lib_run, copied_run);
    const pair_seconds pb = paired_median_seconds(lib_run, borrowed_run);
    const bool borrow_wins = pb.baseline < pc.baseline;
    const pair_seconds pt = borrow_wins ? pb : pc;
    std::fprintf(stderr,
                 "  (hand-written packers, %s B: data copied %.0f MB/s, borrowed %.0f MB/s)\n",
                 s.c_str(), mbs(pc.baseline), mbs(pb.baseline));
    add("3. packer push+next (" + s + " B cmds)", mbs(pt.value), "MB/s", mbs(pt.baseline),
        borrow_wins ? "hand pack, borrow" : "hand pack, copy", 0.9, ">= 0.9 x hand");

    // For scale only: each command's bytes copied into consecutive 4 KB buffers.
    const auto copy_base = [&](std::uint8_t* into) {
      for (std::size_t p = 0; p < pdus; ++p) {
        std::uint8_t* o = into + p * pk::sue_pack_limit;
        for (std::size_t c = 0; c < per_pdu; ++c) {
          const std::uint8_t* src = store.data() + (p * per_pdu + c) * size;
          std::memcpy(o, src, ctrl);
          std::memcpy(o + ctrl, src + ctrl, data_len);
          o += size;
          clobber();
        }
      }
      keep(into[0]);
    };
    const pair_seconds mt =
        borrow_wins ? paired_median_seconds([&] { copy_base(scratch.data()); }, borrowed_run)
                    : paired_median_seconds([&] { copy_base(scratch.data()); }, copied_run);
    add("3. memcpy into 4 KB (" + s + " B cmds, for scale)", mbs(mt.value), "MB/s",
        mbs(mt.baseline), borrow_wins ? "hand pack, borrow" : "hand pack, copy");

    // The packer's output, made again (the runs above wrote over `out`), read by both.
    push_and_pack(*pack, store.data(), ctrl, size, per_pdu, pdus, out.data(), sizes.data());
    for (std::size_t p = 0; p < pdus; ++p)
      compare_unpack(w::bytes(out.data() + p * pk::sue_pack_limit, sizes[p]), "a benchmark PDU");
    // Each command consumed alike: counted, its size and type byte summed.
    std::size_t seen = 0, sum = 0;
    const pair_seconds ut = paired_median_seconds(
        [&] {
          for (std::size_t p = 0; p < pdus; ++p) {
            pk::unpacker u(pk::default_profile,
                           w::bytes(out.data() + p * pk::sue_pack_limit, sizes[p]));
            pk::command_view v;
            while (u.next(v)) {
              ++seen;
              sum += v.size() + v.code();
            }
            if (u.error_found()) std::abort();
          }
          keep(sum);
        },
        [&] {
          for (std::size_t p = 0; p < pdus; ++p) {
            const std::uint8_t* pdu = out.data() + p * pk::sue_pack_limit;
            std::size_t at_error = 0;
            if (!hand_unpack(
                    pdu, sizes[p],
                    [&](const hand_command& c) {
                      ++seen;
                      sum += std::size_t{c.control_len} + c.data_len + pdu[c.offset];
                    },
                    at_error))
              std::abort();
          }
          keep(sum);
        });
    if (seen == 0) std::abort();
    add("3. unpacker (" + s + " B cmds)", mbs(ut.value), "MB/s", mbs(ut.baseline),
        "hand-written unpack", 0.9, ">= 0.9 x hand");
  }
}

}  // namespace

void bench_frames() {
  std::vector<std::uint8_t> payload(64);
  for (std::size_t i = 0; i < payload.size(); ++i) payload[i] = static_cast<std::uint8_t>(i);
  auto tree = std::make_unique<d::tree>();
  const frame_case cases[] = {
      {w::encap::udp4, &hand_emit_udp4, &hand_read_udp4<false>, 0xFFFFFF, 63, 14},
      {w::encap::afh1_shim, &hand_emit_afh1_shim, &hand_read_afh1_shim, 0xFFFF, 255, 14},
      {w::encap::afh2c, &hand_emit_afh2c, &hand_read_afh2c, 0xFFFF, 31, 8},
  };
  for (std::size_t k = 0; k < w::encap_names.size(); ++k) {
    const auto e = static_cast<w::encap>(k);
    bool hand = false;
    for (const auto& c : cases)
      if (c.kind == e) {
        bench_frames_hand(c, payload, *tree);
        hand = true;
      }
    if (!hand) bench_frames_memcpy(e, payload, *tree);
  }
}

void bench_packer() {
  check_hand_packer_random<1, false>({1, 1, 1, 1}, pk::sue_pack_limit, 1);
  check_hand_packer_random<8, false>({3, 1, 0, 2}, pk::sue_pack_limit, 2);
  check_hand_packer_random<8, false>({0, 2, 0, 1}, pk::lite_pack_limit, 3);
  check_hand_packer_random<1, true>({1, 1, 1, 1}, pk::sue_pack_limit, 1);
  check_hand_packer_random<8, true>({3, 1, 0, 2}, pk::sue_pack_limit, 2);
  check_hand_packer_random<8, true>({0, 2, 0, 1}, pk::lite_pack_limit, 3);
  check_hand_unpacker(4);
  bench_packer_sizes();
}

}  // namespace scaleup::bench
