// Checksums and the SUE PDU: CRC-32 against published check values and a slow textbook
// reference, the Internet checksum against RFC 1071 and a real IPv4 header, emit_pdu golden
// bytes, and finding the R-CRC with an exact length and at the end of a padded Layer 2 frame.
//
// CRC literals were computed outside scaleup (Python's zlib.crc32, i.e. zlib's CRC-32, which
// is CRC-32/ISO-HDLC) and are re-checked against ref_crc32 below, a bit-at-a-time
// implementation of the textbook definition (non-reflected register with reflected input and
// output), deliberately different in form from the library's reflected slicing tables and
// PCLMULQDQ folding.
#include <scaleup/wire/checksum.hpp>
#include <scaleup/wire/pdu.hpp>
#include <scaleup/wire/reliability_header.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"

namespace {

namespace w = scaleup::wire;
using w::errc;
using w::rcrc_status;

using scaleup::test::byte_vector;
using scaleup::test::hex;

constexpr std::uint32_t reflect(std::uint32_t v, int bits) {
  std::uint32_t r = 0;
  for (int i = 0; i < bits; ++i)
    if (v & (std::uint32_t{1} << i)) r |= std::uint32_t{1} << (bits - 1 - i);
  return r;
}

// CRC-32/ISO-HDLC from its definition: width 32, poly 0x04C11DB7, init 0xFFFFFFFF, refin,
// refout, xorout 0xFFFFFFFF. MSB-first register, one bit at a time.
constexpr std::uint32_t ref_crc32(w::bytes data) {
  std::uint32_t c = 0xFFFFFFFFu;
  for (const std::uint8_t b : data) {
    c ^= reflect(b, 8) << 24;
    for (int k = 0; k < 8; ++k) c = (c & 0x80000000u) ? (c << 1) ^ 0x04C11DB7u : c << 1;
  }
  return reflect(c, 32) ^ 0xFFFFFFFFu;
}

w::bytes str_bytes(std::string_view s) {
  return w::bytes(reinterpret_cast<const std::uint8_t*>(s.data()), s.size());
}

constexpr std::array<std::uint8_t, 9> check_string{'1', '2', '3', '4', '5', '6', '7', '8', '9'};
static_assert(w::crc32(check_string) == 0xCBF43926u);
static_assert(ref_crc32(check_string) == 0xCBF43926u);
static_assert(w::crc32(w::bytes{}) == 0u);
// Every tail after the 16- and 8-byte steps (four bytes in one step, then one at a time), in a
// constant expression too.
static_assert([] {
  for (std::size_t n = 0; n <= check_string.size(); ++n)
    if (w::crc32(w::bytes(check_string).first(n)) != ref_crc32(w::bytes(check_string).first(n)))
      return false;
  return true;
}());
// Long enough for the PCLMUL path at run time; constant evaluation must take the tables.
// zlib.crc32(bytes(range(128))) = 0x24650D57.
constexpr auto ramp128 = [] {
  std::array<std::uint8_t, 128> a{};
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::uint8_t>(i);
  return a;
}();
static_assert(w::crc32(ramp128) == 0x24650D57u);
static_assert(ref_crc32(ramp128) == 0x24650D57u);

// The RH of wire_headers_test: ver 0, op 1, xpuid 0x3FF, npsn 0x1234, vc 3, partition 0x3FF,
// apsn 0xBEEF -> 13 FF 12 34 C3 FF BE EF (bits worked out there).
constexpr w::reliability_header rh = scaleup::test::rh_golden;

// RH + AA BB CC + R-CRC. zlib.crc32(13FF1234C3FFBEEF AABBCC) = 0x47B31BDD, big-endian.
constexpr std::array<std::uint8_t, 15> pdu_golden{0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF,
                                                  0xAA, 0xBB, 0xCC, 0x47, 0xB3, 0x1B, 0xDD};
constexpr std::uint32_t pdu_golden_crc = 0x47B31BDD;

// RH only + R-CRC. zlib.crc32(13FF1234C3FFBEEF) = 0x8F0C179D.
constexpr std::array<std::uint8_t, 12> pdu_empty{0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF,
                                                 0xBE, 0xEF, 0x8F, 0x0C, 0x17, 0x9D};

constexpr auto emitted_golden = [] {
  std::array<std::uint8_t, 15> out{};
  const std::array<std::uint8_t, 3> payload{0xAA, 0xBB, 0xCC};
  (void)w::emit_pdu(rh, payload, out);
  return out;
}();
static_assert(emitted_golden == pdu_golden);
static_assert(w::pdu_bounds_exact(pdu_golden).status == rcrc_status::good);
static_assert(w::pdu_bounds_exact(pdu_golden).payload_end == 11);

// A Layer 2 frame of `frame_len` bytes: a 14-byte Ethernet header (its content does not matter
// here), the PDU, zeros to the end. Returns the frame; the PDU region starts at 14.
byte_vector padded_frame(w::bytes pdu, std::size_t frame_len) {
  byte_vector f(frame_len, 0);
  for (std::size_t i = 0; i < 14; ++i) f[i] = static_cast<std::uint8_t>(0xA0 + i);
  for (std::size_t i = 0; i < pdu.size(); ++i) f[14 + i] = pdu[i];
  return f;
}

byte_vector make_pdu(std::initializer_list<std::uint8_t> payload, std::uint32_t crc) {
  byte_vector p{0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF};
  for (const std::uint8_t b : payload) p.push_back(b);
  p.push_back(static_cast<std::uint8_t>(crc >> 24));
  p.push_back(static_cast<std::uint8_t>(crc >> 16));
  p.push_back(static_cast<std::uint8_t>(crc >> 8));
  p.push_back(static_cast<std::uint8_t>(crc));
  return p;
}

// ---- CRC-32 ------------------------------------------------------------------------------

TEST_CASE("crc32: check values") {
  CHECK(w::crc32(str_bytes("123456789")) == 0xCBF43926u);
  CHECK(w::crc32(w::bytes{}) == 0u);
  CHECK(w::crc32(str_bytes("a")) == 0xE8B7BE43u);
  CHECK(w::crc32(str_bytes("The quick brown fox jumps over the lazy dog")) == 0x414FA339u);
  // The reference agrees with the same published values, so it can be trusted below.
  CHECK(ref_crc32(str_bytes("123456789")) == 0xCBF43926u);
  CHECK(ref_crc32(w::bytes{}) == 0u);
  CHECK(ref_crc32(str_bytes("a")) == 0xE8B7BE43u);
  CHECK(ref_crc32(str_bytes("The quick brown fox jumps over the lazy dog")) == 0x414FA339u);
  CHECK(ref_crc32(w::bytes(pdu_golden).first(11)) == pdu_golden_crc);
  CHECK(ref_crc32(w::bytes(pdu_empty).first(8)) == 0x8F0C179Du);
  // Running form: init, update, final.
  CHECK(w::crc32_final(w::crc32_update(w::crc32_init, str_bytes("123456789"))) == 0xCBF43926u);
}

TEST_CASE("crc32: agrees with the bitwise reference on random buffers") {
  // Every length 0..600 covers the tables alone (< 64 bytes), the PCLMUL kernel's four-way fold
  // (each multiple of 64), its 16-byte steps and every 0-15-byte tail.
  std::mt19937_64 rng(0xC4C32);
  int failures = 0;
  for (std::size_t len = 0; len <= 600; ++len) {
    for (int rep = 0; rep < 8; ++rep) {
      // Random start within a larger buffer, so every alignment of the 16-byte loads is seen.
      byte_vector buf(len + 15);
      for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
      const std::size_t start = rng() % 16;
      const w::bytes data = w::bytes(buf).subspan(start, len);
      const std::uint32_t want = ref_crc32(data);
      const std::uint32_t whole = w::crc32(data);
      const std::uint32_t tables =
          w::crc32_final(w::detail::crc32_update_tables(w::crc32_init, data.data(), len));
      // Fed in two pieces split at a random point.
      const std::size_t cut = rng() % (len + 1);
      const std::uint32_t split = w::crc32_final(
          w::crc32_update(w::crc32_update(w::crc32_init, data.first(cut)), data.subspan(cut)));
      // Fed in random pieces of 0 to 150 bytes, some long enough for the kernel.
      std::uint32_t pieces = w::crc32_init;
      for (std::size_t at = 0; at < len;) {
        const std::size_t k = std::min<std::size_t>(rng() % 151, len - at);
        pieces = w::crc32_update(pieces, data.subspan(at, k));
        at += k;
      }
      if (whole != want || tables != want || split != want || w::crc32_final(pieces) != want) {
        ++failures;
        CAPTURE(len);
        CAPTURE(start);
        CAPTURE(cut);
        CHECK(whole == want);
        CHECK(tables == want);
        CHECK(split == want);
        CHECK(w::crc32_final(pieces) == want);
      }
    }
    // Fed one byte at a time (one buffer per length: the reference is slow).
    if (len <= 100) {
      const byte_vector buf = scaleup::test::ramp(len, static_cast<std::uint8_t>(len), 37);
      std::uint32_t running = w::crc32_init;
      for (std::size_t i = 0; i < len; ++i)
        running = w::crc32_update(running, w::bytes(buf).subspan(i, 1));
      if (w::crc32_final(running) != ref_crc32(buf)) {
        ++failures;
        CAPTURE(len);
        CHECK(w::crc32_final(running) == ref_crc32(buf));
      }
    }
  }
  CHECK(failures == 0);
}

#if SCALEUP_CRC32_HAS_CLMUL
// The kernel's folding constants from their definition: x^n mod P (P = 0x104C11DB7, high
// degree first), bit-reflected over 32 bits and shifted left once, as the reflected fold wants.
constexpr std::uint64_t fold_constant(int n) {
  std::uint64_t r = 1;  // x^0
  for (int i = 0; i < n; ++i) {
    r <<= 1;
    if (r & (std::uint64_t{1} << 32)) r ^= 0x104C11DB7u;
  }
  return std::uint64_t{reflect(static_cast<std::uint32_t>(r), 32)} << 1;
}
// floor(x^64 / P) by long division, the dividend's bits fed in from x^64 down: while bit i is
// the window's lowest, its bit 32 stands for x^(i+32), so subtracting P * x^i sets quotient bit
// i. Then reflected over 33 bits.
constexpr std::uint64_t barrett_constant() {
  std::uint64_t window = 0, q = 0;
  for (int i = 64; i >= 0; --i) {
    window = (window << 1) | (i == 64 ? 1 : 0);
    if (window & (std::uint64_t{1} << 32)) {
      window ^= 0x104C11DB7u;
      q |= std::uint64_t{1} << i;
    }
  }
  std::uint64_t r = 0;
  for (int i = 0; i < 33; ++i)
    if (q & (std::uint64_t{1} << i)) r |= std::uint64_t{1} << (32 - i);
  return r;
}
static_assert(w::detail::crc32_k1 == fold_constant(4 * 128 + 32));
static_assert(w::detail::crc32_k2 == fold_constant(4 * 128 - 32));
static_assert(w::detail::crc32_k3 == fold_constant(128 + 32));
static_assert(w::detail::crc32_k4 == fold_constant(128 - 32));
static_assert(w::detail::crc32_k5 == fold_constant(64));
static_assert(w::detail::crc32_p == 0x1DB710641u);  // 0x104C11DB7 reflected over 33 bits
static_assert(w::detail::crc32_u == barrett_constant());

// crc32_update takes the kernel only when the CPU has PCLMUL, so it is called here directly:
// without that, a kernel bug on a machine that has it would hide behind the tables.
TEST_CASE("crc32: the PCLMULQDQ kernel agrees with the tables") {
  if (!w::detail::crc32_clmul_available()) {
    MESSAGE("this CPU has no PCLMULQDQ/SSE4.1: the kernel is not exercised");
    return;
  }
  // The check string eight times (72 bytes, kernel on the first 64): zlib.crc32 = 0x8811A440.
  byte_vector nine;
  for (int i = 0; i < 8; ++i)
    for (const std::uint8_t b : check_string) nine.push_back(b);
  const std::uint32_t head = w::detail::crc32_clmul(w::crc32_init, nine.data(), 64);
  CHECK(w::crc32_final(w::detail::crc32_update_tables(head, nine.data() + 64, 8)) == 0x8811A440u);
  CHECK(w::crc32(nine) == 0x8811A440u);

  std::mt19937_64 rng(0xC1A5);
  int failures = 0;
  for (std::size_t len = w::detail::crc32_clmul_min; len <= 1024; len += 16) {
    for (int rep = 0; rep < 4; ++rep) {
      byte_vector buf(len + 15);
      for (auto& b : buf) b = static_cast<std::uint8_t>(rng());
      const std::uint8_t* p = buf.data() + rng() % 16;
      // Any running register, not only the initial one, as in an incremental update.
      const auto crc = static_cast<std::uint32_t>(rng());
      const std::uint32_t got = w::detail::crc32_clmul(crc, p, len);
      const std::uint32_t want = w::detail::crc32_update_tables(crc, p, len);
      if (got != want) {
        ++failures;
        CAPTURE(len);
        CHECK(got == want);
      }
    }
  }
  CHECK(failures == 0);
}
#endif

// ---- Internet checksum -------------------------------------------------------------------

TEST_CASE("ones_sum: RFC 1071 example") {
  // RFC 1071 section 3: 0001 + f203 + f4f5 + f6f7 = 2ddf0 -> ddf0 + 2 = ddf2; checksum ~ = 220d.
  constexpr std::array<std::uint8_t, 8> data{0x00, 0x01, 0xF2, 0x03, 0xF4, 0xF5, 0xF6, 0xF7};
  w::ones_sum s;
  s.add(data);
  CHECK(s.acc == 0xDDF2u);
  CHECK(s.checksum() == 0x220Du);
  static_assert(w::ones_sum{}.add(data).checksum() == 0x220D);
  // Word by word gives the same.
  w::ones_sum words;
  words.add16(0x0001).add16(0xF203).add16(0xF4F5).add16(0xF6F7);
  CHECK(words.acc == 0xDDF2u);
  // Two 32-bit halves.
  w::ones_sum dwords;
  dwords.add32(0x0001F203).add32(0xF4F5F6F7);
  CHECK(dwords.acc == 0xDDF2u);
  // Even-length chunks may be added separately.
  w::ones_sum chunks;
  chunks.add(w::bytes(data).first(2)).add(w::bytes(data).subspan(2));
  CHECK(chunks.acc == 0xDDF2u);
}

TEST_CASE("ones_sum: odd length pads with a zero byte") {
  // 01 02 03 -> 0102 + 0300 = 0402; checksum fbfd.
  constexpr std::array<std::uint8_t, 3> data{0x01, 0x02, 0x03};
  const auto s = w::ones_sum{}.add(data);
  CHECK(s.acc == 0x0402u);
  CHECK(s.checksum() == 0xFBFDu);
  // Nothing: sum 0, checksum ffff.
  CHECK(w::ones_sum{}.add(w::bytes{}).checksum() == 0xFFFFu);
  // All ones: ffff + ffff = 1fffe -> fffe + 1 = ffff; checksum 0.
  constexpr std::array<std::uint8_t, 4> ones{0xFF, 0xFF, 0xFF, 0xFF};
  CHECK(w::ones_sum{}.add(ones).acc == 0xFFFFu);
}

// The word-at-a-time sum against RFC 1071's definition (16-bit words, end-around carry after
// each add), over random bytes of every length to 300, split at random points, and the
// all-ones bytes where a wrong fold shows (0xFFFF, never 0, for a non-zero sum).
TEST_CASE("ones_sum: agrees with a 16-bit reference on random pieces") {
  const auto reference = [](const std::vector<std::uint8_t>& d) {
    std::uint32_t acc = 0;
    for (std::size_t i = 0; i < d.size(); i += 2) {
      acc += std::uint32_t{d[i]} << 8 | (i + 1 < d.size() ? d[i + 1] : 0u);
      acc = (acc & 0xFFFF) + (acc >> 16);
    }
    return acc;
  };
  std::mt19937 rng(1071);
  int failures = 0;
  for (std::size_t len = 0; len <= 300; ++len) {
    for (const bool ones : {false, true}) {
      std::vector<std::uint8_t> d(len);
      for (auto& b : d) b = ones ? 0xFF : static_cast<std::uint8_t>(rng());
      const std::uint32_t want = reference(d);
      if (w::ones_sum{}.add(d).acc != want) ++failures;
      const std::size_t cut1 = len ? rng() % (len + 1) : 0;
      const std::size_t cut2 = cut1 + (len - cut1 ? rng() % (len - cut1 + 1) : 0);
      const w::bytes all(d);
      w::ones_sum pieces;
      pieces.add(all.first(cut1)).add(all.subspan(cut1, cut2 - cut1)).add(all.subspan(cut2));
      if (pieces.acc != want) ++failures;
    }
  }
  CHECK(failures == 0);
}

TEST_CASE("ones_sum: a real IPv4 header") {
  // 45 00 00 73 00 00 40 00 40 11 b8 61 c0 a8 00 01 c0 a8 00 c7
  // 4500 + 0073 + 0000 + 4000 + 4011 + b861 + c0a8 + 0001 + c0a8 + 00c7 = 2fffd
  //   -> fffd + 2 = ffff: the header checks, checksum() == 0.
  // With the checksum field zeroed: 2fffd - b861 = 2479c -> 479c + 2 = 479e; ~479e = b861.
  std::array<std::uint8_t, 20> ip{0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11,
                                  0xB8, 0x61, 0xC0, 0xA8, 0x00, 0x01, 0xC0, 0xA8, 0x00, 0xC7};
  CHECK(w::ones_sum{}.add(ip).acc == 0xFFFFu);
  CHECK(w::ones_sum{}.add(ip).checksum() == 0u);
  ip[10] = 0;
  ip[11] = 0;
  CHECK(w::ones_sum{}.add(ip).acc == 0x479Eu);
  CHECK(w::ones_sum{}.add(ip).checksum() == 0xB861u);
  // A corrupted header no longer checks.
  ip[10] = 0xB8;
  ip[11] = 0x61;
  ip[8] = 0x3F;  // TTL 64 -> 63 without fixing the checksum
  CHECK(w::ones_sum{}.add(ip).checksum() != 0u);
}

// ---- emit_pdu ----------------------------------------------------------------------------

TEST_CASE("emit_pdu: golden bytes") {
  CHECK(w::pdu_size(3) == 15u);
  CHECK(w::pdu_size(0) == 12u);
  const std::array<std::uint8_t, 3> payload{0xAA, 0xBB, 0xCC};
  std::array<std::uint8_t, 20> out{};
  out.fill(0xEE);
  const auto r = w::emit_pdu(rh, payload, out);
  REQUIRE(r.ok());
  CHECK(*r == 15u);
  CHECK(hex(w::bytes(out).first(15)) == hex(pdu_golden));
  for (std::size_t i = 15; i < out.size(); ++i) CHECK(out[i] == 0xEE);
  // The R-CRC is the reference CRC over RH + payload, big-endian.
  const std::uint32_t crc = ref_crc32(w::bytes(out).first(11));
  CHECK(out[11] == static_cast<std::uint8_t>(crc >> 24));
  CHECK(out[12] == static_cast<std::uint8_t>(crc >> 16));
  CHECK(out[13] == static_cast<std::uint8_t>(crc >> 8));
  CHECK(out[14] == static_cast<std::uint8_t>(crc));

  std::array<std::uint8_t, 12> empty{};
  const auto e = w::emit_pdu(rh, w::bytes{}, empty);
  REQUIRE(e.ok());
  CHECK(*e == 12u);
  CHECK(hex(empty) == hex(pdu_empty));
}

TEST_CASE("emit_pdu: errors write nothing") {
  const std::array<std::uint8_t, 3> payload{0xAA, 0xBB, 0xCC};
  std::array<std::uint8_t, 15> out{};
  out.fill(0xEE);
  const auto r = w::emit_pdu(rh, payload, w::mutable_bytes(out).first(14));
  CHECK_FALSE(r.ok());
  CHECK(r.err.code == errc::no_space);
  CHECK(r.err.needed == 15u);
  CHECK(r.err.available == 14u);
  for (const std::uint8_t b : out) CHECK(b == 0xEE);

  w::reliability_header bad = rh;
  bad.xpuid = 1024;
  const auto t = w::emit_pdu(bad, payload, out);
  CHECK(t.err.code == errc::value_too_big);
  CHECK(t.err.field == "sue.rh.xpuid");
  for (const std::uint8_t b : out) CHECK(b == 0xEE);
}

// ---- the R-CRC with an exact length ------------------------------------------------------

TEST_CASE("pdu_bounds_exact") {
  SUBCASE("good") {
    const auto b = w::pdu_bounds_exact(pdu_golden);
    CHECK(b.status == rcrc_status::good);
    CHECK(b.payload_end == 11u);
    CHECK(b.pad == 0u);
    CHECK(b.rcrc == pdu_golden_crc);
    CHECK(b.computed == pdu_golden_crc);
    const auto e = w::pdu_bounds_exact(pdu_empty);
    CHECK(e.status == rcrc_status::good);
    CHECK(e.payload_end == 8u);
    CHECK(e.rcrc == 0x8F0C179Du);
  }
  SUBCASE("bad: a payload bit flipped") {
    auto p = pdu_golden;
    p[9] ^= 0x01;  // BB -> BA
    const auto b = w::pdu_bounds_exact(p);
    CHECK(b.status == rcrc_status::bad);
    CHECK(b.payload_end == 11u);
    CHECK(b.rcrc == pdu_golden_crc);
    CHECK(b.computed == ref_crc32(w::bytes(p).first(11)));
    CHECK(b.computed != b.rcrc);
  }
  SUBCASE("bad: an R-CRC bit flipped") {
    auto p = pdu_golden;
    p[14] ^= 0x80;
    const auto b = w::pdu_bounds_exact(p);
    CHECK(b.status == rcrc_status::bad);
    CHECK(b.rcrc == (pdu_golden_crc ^ 0x80u));
    CHECK(b.computed == pdu_golden_crc);
  }
  SUBCASE("missing") {
    // Exactly an RH: no room for an R-CRC.
    const auto rh_only = w::pdu_bounds_exact(w::bytes(pdu_golden).first(8));
    CHECK(rh_only.status == rcrc_status::missing);
    CHECK(rh_only.payload_end == 8u);
    CHECK(rh_only.pad == 0u);
    // 11 bytes: one short of RH + R-CRC.
    const auto eleven = w::pdu_bounds_exact(w::bytes(pdu_golden).first(11));
    CHECK(eleven.status == rcrc_status::missing);
    CHECK(eleven.payload_end == 11u);
    CHECK(w::pdu_bounds_exact(w::bytes{}).status == rcrc_status::missing);
  }
}

// ---- the R-CRC at the end of a Layer 2 frame ---------------------------------------------

void check_l2(const byte_vector& pdu, std::size_t payload_end, std::uint32_t crc) {
  CAPTURE(hex(pdu));
  // The frame is padded to the 60-byte minimum after the R-CRC.
  const byte_vector frame = padded_frame(pdu, 60);
  const w::bytes carried = w::bytes(frame).subspan(14);
  const auto b = w::pdu_bounds_l2(carried, frame.size());
  CHECK(b.status == rcrc_status::good);
  CHECK(b.payload_end == payload_end);
  CHECK(b.pad == 60 - 14 - pdu.size());
  CHECK(b.rcrc == crc);
  CHECK(b.computed == crc);
  CHECK(ref_crc32(w::bytes(pdu).first(payload_end)) == crc);
}

TEST_CASE("pdu_bounds_l2: padding after the R-CRC") {
  // 15-byte PDU in a 60-byte frame: 14 + 15 + 31 zeros.
  check_l2(byte_vector(pdu_golden.begin(), pdu_golden.end()), 11, pdu_golden_crc);
  check_l2(byte_vector(pdu_empty.begin(), pdu_empty.end()), 8, 0x8F0C179D);
}

TEST_CASE("pdu_bounds_l2: payload ending in zeros") {
  // Payload AA 00 00 00; zlib.crc32(RH AA000000) = 0x84637B4C.
  check_l2(make_pdu({0xAA, 0x00, 0x00, 0x00}, 0x84637B4C), 12, 0x84637B4C);
  // Payload of five zeros; zlib.crc32(RH 0000000000) = 0x977B067A.
  check_l2(make_pdu({0, 0, 0, 0, 0}, 0x977B067A), 13, 0x977B067A);
  // The R-CRC itself ends in a zero byte: zlib.crc32(RH AA00) = 0x520DB800.
  check_l2(make_pdu({0xAA, 0x00}, 0x520DB800), 10, 0x520DB800);
  // Payload ends in two zeros and the R-CRC in two zeros, then padding:
  // zlib.crc32(RH 61E50000) = 0x8A060000.
  check_l2(make_pdu({0x61, 0xE5, 0x00, 0x00}, 0x8A060000), 12, 0x8A060000);
}

TEST_CASE("pdu_bounds_l2: a PDU that fills the minimum frame exactly") {
  // 14 + 46: RH 8 + 34 payload bytes + 4.
  byte_vector pdu{0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF};
  for (std::uint8_t i = 1; i <= 34; ++i) pdu.push_back(i);
  const std::uint32_t crc = ref_crc32(pdu);
  for (int s = 24; s >= 0; s -= 8) pdu.push_back(static_cast<std::uint8_t>(crc >> s));
  REQUIRE(pdu.size() == 46u);
  const byte_vector frame = padded_frame(pdu, 60);
  const auto b = w::pdu_bounds_l2(w::bytes(frame).subspan(14), frame.size());
  CHECK(b.status == rcrc_status::good);
  CHECK(b.payload_end == 42u);
  CHECK(b.pad == 0u);
  CHECK(b.rcrc == crc);
}

TEST_CASE("pdu_bounds_l2: frames over the minimum use the last four bytes") {
  // The padded 60-byte frame from above, one byte longer: no padding is allowed, so the last
  // four bytes (zeros) are the R-CRC, and it is bad.
  const byte_vector frame = padded_frame(pdu_golden, 61);
  const w::bytes carried = w::bytes(frame).subspan(14);
  const auto b = w::pdu_bounds_l2(carried, frame.size());
  CHECK(b.status == rcrc_status::bad);
  CHECK(b.payload_end == carried.size() - 4);
  CHECK(b.pad == 0u);
  CHECK(b.rcrc == 0u);
  CHECK(b.computed == ref_crc32(carried.first(carried.size() - 4)));

  // A long PDU exactly filling a 64-byte frame is found.
  byte_vector pdu{0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF};
  for (std::uint8_t i = 0; i < 38; ++i) pdu.push_back(static_cast<std::uint8_t>(0x40 + i));
  const std::uint32_t crc = ref_crc32(pdu);
  for (int s = 24; s >= 0; s -= 8) pdu.push_back(static_cast<std::uint8_t>(crc >> s));
  const byte_vector big = padded_frame(pdu, 14 + pdu.size());
  REQUIRE(big.size() == 64u);
  const auto g = w::pdu_bounds_l2(w::bytes(big).subspan(14), big.size());
  CHECK(g.status == rcrc_status::good);
  CHECK(g.payload_end == 46u);
  CHECK(g.pad == 0u);
  CHECK(g.rcrc == crc);
}

TEST_CASE("pdu_bounds_l2: corrupted and short") {
  byte_vector frame = padded_frame(pdu_golden, 60);
  frame[14 + 9] ^= 0x01;  // a payload bit
  CHECK(w::pdu_bounds_l2(w::bytes(frame).subspan(14), 60).status == rcrc_status::bad);

  byte_vector crc_hit = padded_frame(pdu_golden, 60);
  crc_hit[14 + 12] ^= 0x10;  // an R-CRC bit
  CHECK(w::pdu_bounds_l2(w::bytes(crc_hit).subspan(14), 60).status == rcrc_status::bad);

  // Shorter than RH + R-CRC: missing.
  const auto s = w::pdu_bounds_l2(w::bytes(pdu_golden).first(11), 14 + 11);
  CHECK(s.status == rcrc_status::missing);
  CHECK(s.payload_end == 11u);
}

TEST_CASE("pdu_bounds_l2: random PDUs in padded minimum frames") {
  std::mt19937_64 rng(0x12C2);
  int failures = 0;
  for (int iter = 0; iter < 2000 && failures == 0; ++iter) {
    const std::size_t payload = rng() % 35;  // 14 + 8 + 34 + 4 = 60 at most
    byte_vector pdu{0x13, 0xFF, 0x12, 0x34, 0xC3, 0xFF, 0xBE, 0xEF};
    for (std::size_t i = 0; i < payload; ++i)
      pdu.push_back(rng() % 3 == 0 ? 0 : static_cast<std::uint8_t>(rng()));
    const std::uint32_t crc = ref_crc32(pdu);
    for (int s = 24; s >= 0; s -= 8) pdu.push_back(static_cast<std::uint8_t>(crc >> s));
    const byte_vector frame = padded_frame(pdu, 60);
    const auto b = w::pdu_bounds_l2(w::bytes(frame).subspan(14), 60);
    if (b.status != rcrc_status::good || b.payload_end != 8 + payload ||
        b.pad != 60 - 14 - pdu.size() || b.rcrc != crc) {
      ++failures;
      CAPTURE(hex(pdu));
      CHECK(b.status == rcrc_status::good);
      CHECK(b.payload_end == 8 + payload);
      CHECK(b.pad == 60 - 14 - pdu.size());
      CHECK(b.rcrc == crc);
    }
  }
  CHECK(failures == 0);
}

// The in-place forms write every field of the bounds they are given: a reader hands them the
// bounds of its value, which hold whatever they held before.
bool same_bounds(const w::pdu_bounds& a, const w::pdu_bounds& b) {
  return a.payload_end == b.payload_end && a.pad == b.pad && a.status == b.status &&
         a.rcrc == b.rcrc && a.computed == b.computed;
}

TEST_CASE("pdu_bounds_exact_in, pdu_bounds_l2_in: every field written, as the returned value") {
  const w::pdu_bounds stale{.payload_end = 999,
                            .pad = 77,
                            .status = rcrc_status::not_captured,
                            .rcrc = 0xDEADBEEF,
                            .computed = 0x12345678};
  auto bad = pdu_golden;
  bad[9] ^= 0x01;
  const byte_vector padded = padded_frame(pdu_golden, 60);
  for (const w::bytes pdu :
       {w::bytes(pdu_golden), w::bytes(bad), w::bytes(pdu_empty), w::bytes(pdu_golden).first(8),
        w::bytes(pdu_golden).first(11), w::bytes{}, w::bytes(padded).subspan(14)}) {
    CAPTURE(hex(byte_vector(pdu.begin(), pdu.end())));
    w::pdu_bounds b = stale;
    w::pdu_bounds_exact_in(b, pdu);
    CHECK(same_bounds(b, w::pdu_bounds_exact(pdu)));
    for (const std::size_t frame_len : {std::size_t{60}, std::size_t{61}, std::size_t{1514}}) {
      CAPTURE(frame_len);
      b = stale;
      w::pdu_bounds_l2_in(b, pdu, frame_len, nullptr);
      CHECK(same_bounds(b, w::pdu_bounds_l2(pdu, frame_len)));
    }
  }
}

}  // namespace

TEST_CASE("ones_sum: pieces of odd length continue mid-word") {
  // 01 | 02 must sum like 01 02, and 01 02 03 | 04 like 01 02 03 04 (RFC 1071).
  using scaleup::wire::ones_sum;
  const std::uint8_t a[] = {0x01}, b[] = {0x02}, c[] = {0x01, 0x02, 0x03}, d[] = {0x04};
  const std::uint8_t whole[] = {0x01, 0x02, 0x03, 0x04};
  CHECK(ones_sum{}.add(a).add(b).acc == 0x0102);
  CHECK(ones_sum{}.add(c).add(d).acc == ones_sum{}.add(whole).acc);
  CHECK(ones_sum{}.add(whole).acc == 0x0406);
  CHECK(ones_sum{}.add(a).add16(0x0203).add(d).acc == 0x0406);  // 01 02 03 04 again
}
