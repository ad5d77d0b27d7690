// The XPU-SUE command interface as AXI4 (R2 3.2.2): the five channels as plain values, and
// pure conversions between them and the default profile's commands.
//
// R2 3.2.2 fixes: requests (AR, AW + W) on VC0, responses (R, B) on VC1; AW and W "paired and
// moved as a single unit"; one credit per transaction per channel; the USER bits carry
// "xpu_id, type, and length". What scaleup fixes (docs/wire-format.md, "AXI mapping"):
//   - USER is 32 bits: [9:0] xpuid, [17:10] command type code, [25:18] length - 1, [31:26]
//     reserved (sent as zero, ignored on receipt). W has no USER (R2 lists AW, B, AR, R).
//   - the AXI ID is the command's tag, unchanged both ways;
//   - only INCR bursts map to a command (FIXED and WRAP do not describe one address range);
//   - a write whose strobed bytes leave no gap becomes WR_FULL(_P) at its first strobed byte,
//     whatever the lanes around it (an unaligned start or end is not partial, or no full write
//     of arbitrary length would survive the trip); otherwise WR_PART(_P) over whole 8-byte
//     words, with the strobes of the first and last word in be_first / be_last (bit i = byte
//     i of the word, as WSTRB and PCIe byte enables number them; one word: be_last = 0). A
//     clear strobe in any word between them cannot be expressed and is refused. Bytes whose
//     strobe is clear travel as zero, so stale lane contents never leave the XPU. A WR_PART
//     whose enables leave no gap is a full write by another name and comes back as WR_FULL;
//   - posted or not is the AWUSER type: WR_FULL_P / WR_PART_P are posted, WR_FULL / WR_PART
//     are not (full or partial itself follows from WSTRB). AXI still wants a B for every write:
//     for a posted write no WR_RSP crosses the fabric; posted_write_response builds its B, and
//     transport/posted_writes.hpp releases it when the receiver's ACK covers the PDU that
//     carried the write (R2 3.2.2: "The write response is either an ACK or NACK carried in the
//     header of packets flowing in the reverse direction");
//   - the USER length is exact where AXI counts only beats: a read asks for ARUSER length + 1
//     bytes from ARADDR, so R beats need their AR to place the bytes on the lanes;
//   - messages, barriers and atomics have no AXI4 channel (R2 3.2: messages "that do not map
//     into an AXI4 interface") and are refused.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>

#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/signal_interface.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::pack {

inline constexpr std::uint8_t axi_burst_fixed = 0;
inline constexpr std::uint8_t axi_burst_incr = 1;
inline constexpr std::uint8_t axi_burst_wrap = 2;

// AMBA AXI4 RRESP / BRESP; the default profile's status field holds them unchanged.
inline constexpr std::uint8_t axi_resp_okay = 0;
inline constexpr std::uint8_t axi_resp_exokay = 1;
inline constexpr std::uint8_t axi_resp_slverr = 2;
inline constexpr std::uint8_t axi_resp_decerr = 3;

inline constexpr std::size_t axi_max_beats = 256;      // AXI4 INCR: AxLEN is 8 bits
inline constexpr std::uint64_t axi_page_bytes = 4096;  // AXI4: no burst crosses 4 KB

// AXI4 data buses are 8 to 1024 bits, a power of two.
template <std::size_t B>
inline constexpr bool supported_axi_width = B >= 1 && B <= 128 && (B & (B - 1)) == 0;

template <std::size_t B>
constexpr std::uint8_t axi_size_of() noexcept {
  std::uint8_t s = 0;
  while ((std::size_t{1} << s) < B) ++s;
  return s;
}

// ---- USER bits (R2 3.2.2: "xpu_id, type, and length") ----------------------------------

struct axi_user {
  std::uint8_t rsvd = 0;
  std::uint8_t length = 0;  // data (or read) length - 1; 0 where no data goes with the type
  std::uint8_t type = 0;    // command type code of the default profile
  std::uint16_t xpuid = 0;  // the XPU at the other end, as command_value::xpuid
  friend constexpr bool operator==(const axi_user&, const axi_user&) = default;
};

}  // namespace scaleup::pack

namespace scaleup::wire {

// Drawn MSB first like every table here: bit 0 of the table is USER[31].
template <>
struct layout<pack::axi_user> {
  using T = pack::axi_user;
  static constexpr std::string_view name = "axi.user";
  static constexpr std::string_view title = "AXI USER bits (AWUSER, ARUSER, RUSER, BUSER)";
  static constexpr std::string_view seed = "R2 3.2.2; widths: scaleup";
  static constexpr std::size_t size = 4;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::rsvd, {.name = "reserved", .filter = "axi.user.rsvd", .bit = 0, .width = 6,
                      .description = "USER[31:26]", .seed = "scaleup", .check = rule::reserved}),
      member(&T::length, {.name = "length - 1", .filter = "axi.user.length", .bit = 6, .width = 8,
                        .description = "USER[25:18]: bytes - 1, exact where AXI counts beats",
                        .seed = "R2 3.2.2 (length)"}),
      member(&T::type, {.name = "type", .filter = "axi.user.type", .bit = 14, .width = 8,
                      .type = kind::hex, .description = "USER[17:10]: command type code",
                      .seed = "R2 3.2.2 (type)"}),
      member(&T::xpuid, {.name = "xpuid", .filter = "axi.user.xpuid", .bit = 22, .width = 10,
                       .description = "USER[9:0]: remote XPU",
                       .seed = "R2 3.2.2 (xpu_id); 10 bits as R2 Table 3"}),
  };
  // clang-format on
};

static_assert(tiles<pack::axi_user>());

}  // namespace scaleup::wire

namespace scaleup::pack {

constexpr wire::result<std::uint32_t> encode_user(const axi_user& u) noexcept {
  std::array<std::uint8_t, 4> b{};
  if (const auto r = wire::encode(u, b); !r) return r.err;
  return wire::load_be32(b.data());
}

// Reserved bits are ignored, so a later use of them does not break this reader.
constexpr wire::result<axi_user> decode_user(std::uint32_t user) noexcept {
  std::array<std::uint8_t, 4> b{};
  wire::store_be32(b.data(), user);
  return wire::decode<axi_user>(b);
}

// ---- channel transfers -----------------------------------------------------------------

struct axi_aw {
  std::uint16_t id = 0;  // AWID = the command's tag
  std::uint64_t addr = 0;
  std::uint8_t len = 0;   // beats - 1
  std::uint8_t size = 0;  // log2(bytes per beat)
  std::uint8_t burst = axi_burst_incr;
  std::uint32_t user = 0;
  friend constexpr bool operator==(const axi_aw&, const axi_aw&) = default;
};

struct axi_ar {
  std::uint16_t id = 0;  // ARID = the command's tag
  std::uint64_t addr = 0;
  std::uint8_t len = 0;
  std::uint8_t size = 0;
  std::uint8_t burst = axi_burst_incr;
  std::uint32_t user = 0;
  friend constexpr bool operator==(const axi_ar&, const axi_ar&) = default;
};

// Byte lane i carries the byte whose address is i modulo the bus width; WSTRB bit i enables it
// (strb[i / 8], bit i % 8).
template <std::size_t B>
struct axi_w {
  static_assert(supported_axi_width<B>, "AXI4 data bus: a power of two, 1..128 bytes");
  std::array<std::uint8_t, B> data{};
  std::array<std::uint8_t, (B + 7) / 8> strb{};
  bool last = false;
  friend constexpr bool operator==(const axi_w&, const axi_w&) = default;
};

struct axi_b {
  std::uint16_t id = 0;
  std::uint8_t resp = axi_resp_okay;
  std::uint32_t user = 0;
  friend constexpr bool operator==(const axi_b&, const axi_b&) = default;
};

template <std::size_t B>
struct axi_r {
  static_assert(supported_axi_width<B>, "AXI4 data bus: a power of two, 1..128 bytes");
  std::uint16_t id = 0;
  std::array<std::uint8_t, B> data{};
  std::uint8_t resp = axi_resp_okay;
  bool last = false;
  std::uint32_t user = 0;
  friend constexpr bool operator==(const axi_r&, const axi_r&) = default;
};

template <std::size_t B>
constexpr bool strobe(const axi_w<B>& w, std::size_t lane) noexcept {
  return lane < 8 * w.strb.size() && ((w.strb[lane / 8] >> (lane % 8)) & 1u) != 0;
}

template <std::size_t B>
constexpr void set_strobe(axi_w<B>& w, std::size_t lane, bool on = true) noexcept {
  const auto bit = static_cast<std::uint8_t>(1u << (lane % 8));
  w.strb[lane / 8] =
      static_cast<std::uint8_t>(on ? (w.strb[lane / 8] | bit) : (w.strb[lane / 8] & ~bit));
}

// Beats of a full-width burst carrying up to 256 bytes from any start address.
template <std::size_t B>
inline constexpr std::size_t max_write_beats = (max_data_bytes + 2 * B - 2) / B;

template <std::size_t B>
struct axi_write {
  axi_aw aw{};
  std::array<axi_w<B>, max_write_beats<B>> w{};
  std::size_t count = 0;
  constexpr std::span<const axi_w<B>> beats() const noexcept { return {w.data(), count}; }
};

// The AR decides the beat count, and a narrow AR (ARSIZE below the bus) may take one beat per
// byte: room for AXI4's 256.
template <std::size_t B>
struct axi_read_response {
  std::array<axi_r<B>, axi_max_beats> r{};
  std::size_t count = 0;
  constexpr std::span<const axi_r<B>> beats() const noexcept { return {r.data(), count}; }
};

namespace detail {

constexpr error axi_error(errc code, std::string_view what, std::string_view field = {},
                          std::uint64_t value = 0, std::size_t item = 0, std::size_t needed = 0,
                          std::size_t available = 0) noexcept {
  return error{code,
               "axi",
               0,
               static_cast<std::uint32_t>(needed),
               static_cast<std::uint32_t>(available),
               what,
               field,
               value,
               wire::severity::error,
               static_cast<std::uint32_t>(item)};
}

constexpr bool is_write_code(std::uint8_t c) noexcept {
  return c == code::write_full || c == code::write_full_posted || c == code::write_partial ||
         c == code::write_partial_posted;
}

constexpr bool is_posted_code(std::uint8_t c) noexcept {
  return c == code::write_full_posted || c == code::write_partial_posted;
}

// Where an INCR burst's beats fall (AMBA AXI4 A3.4.1): beat 0 from the start address to the
// end of its size-aligned container, beat k >= 1 the k-th container after it.
struct burst_geometry {
  std::uint64_t start = 0;
  std::uint64_t aligned = 0;
  std::uint64_t nb = 1;  // bytes per beat
  std::size_t beats = 0;
  std::uint64_t span = 0;  // bytes from start to the end of the last beat
  constexpr std::uint64_t begin(std::size_t k) const noexcept {
    return k == 0 ? start : aligned + k * nb;
  }
  constexpr std::uint64_t end(std::size_t k) const noexcept { return aligned + (k + 1) * nb; }
};

template <std::size_t B>
constexpr wire::result<burst_geometry> geometry(std::uint64_t addr, std::uint8_t len,
                                                std::uint8_t size, std::uint8_t burst,
                                                bool write) noexcept {
  if (size > 7)
    return axi_error(errc::value_too_big, "AxSIZE is 3 bits", write ? "axi.awsize" : "axi.arsize",
                     size);
  if ((std::size_t{1} << size) > B)
    return axi_error(errc::bad_value, "AxSIZE is wider than the data bus",
                     write ? "axi.awsize" : "axi.arsize", size);
  if (burst > 3)
    return axi_error(errc::value_too_big, "AxBURST is 2 bits",
                     write ? "axi.awburst" : "axi.arburst", burst);
  if (burst != axi_burst_incr)
    return axi_error(errc::unsupported, "only INCR bursts map to a command",
                     write ? "axi.awburst" : "axi.arburst", burst);
  burst_geometry g{};
  g.start = addr;
  g.nb = std::uint64_t{1} << size;
  g.aligned = addr & ~(g.nb - 1);
  g.beats = std::size_t{len} + 1;
  g.span = g.beats * g.nb - (addr - g.aligned);
  if ((addr & (axi_page_bytes - 1)) + g.span > axi_page_bytes)
    return axi_error(errc::bad_value, "burst crosses a 4 KB boundary (AXI4 forbids it)",
                     write ? "axi.awaddr" : "axi.araddr", addr);
  return g;
}

// The reverse direction: the full-width burst that covers [addr, addr + n).
template <std::size_t B>
constexpr wire::result<burst_geometry> cover(std::uint64_t addr, std::size_t n) noexcept {
  if ((addr & (axi_page_bytes - 1)) + n > axi_page_bytes)
    return axi_error(errc::unsupported,
                     "command crosses a 4 KB boundary: AXI4 forbids one burst across it",
                     "sue.cmd.addr", addr);
  burst_geometry g{};
  g.start = addr;
  g.nb = B;
  g.aligned = addr & ~std::uint64_t{B - 1};
  g.beats = static_cast<std::size_t>((addr - g.aligned + n + B - 1) / B);
  g.span = g.beats * g.nb - (addr - g.aligned);
  return g;
}

template <class T>
constexpr wire::result<std::array<std::uint8_t, wire::layout<T>::size>> control_of(
    const T& v) noexcept {
  return wire::to_bytes(v);
}

}  // namespace detail

// ---- AW + W -> write request -------------------------------------------------------------

template <std::size_t B>
constexpr wire::result<command_value> from_axi_write(const axi_aw& aw,
                                                     std::span<const axi_w<B>> w) noexcept {
  using detail::axi_error;
  const auto u = decode_user(aw.user);
  if (!u) return u.err;
  if (!detail::is_write_code(u->type))
    return axi_error(errc::bad_value, "AWUSER type is not a write type", "axi.user.type", u->type);
  const auto g = detail::geometry<B>(aw.addr, aw.len, aw.size, aw.burst, true);
  if (!g) return g.err;
  if (w.size() != g->beats)
    return axi_error(errc::bad_length, "W beats differ from AWLEN + 1", "axi.awlen", aw.len, 0,
                     g->beats, w.size());
  for (std::size_t k = 0; k < w.size(); ++k)
    if (w[k].last != (k + 1 == w.size()))
      return axi_error(errc::bad_value, "WLAST must be set on the last beat only", "axi.wlast",
                       w[k].last, k + 1);
  // First pass: which bytes are written, and no strobe on a lane the beat does not cover.
  std::uint64_t first = 0;
  std::uint64_t last = 0;
  std::size_t count = 0;
  for (std::size_t k = 0; k < w.size(); ++k) {
    std::array<bool, 8 * ((B + 7) / 8)> active{};
    for (std::uint64_t a = g->begin(k); a < g->end(k); ++a) {
      const auto lane = static_cast<std::size_t>(a % B);
      active[lane] = true;
      if (!strobe(w[k], lane)) continue;
      if (count++ == 0) first = a;
      last = a;
    }
    for (std::size_t lane = 0; lane < active.size(); ++lane)
      if (!active[lane] && strobe(w[k], lane))
        return axi_error(errc::bad_value, "WSTRB set outside the beat's active byte lanes",
                         "axi.wstrb", lane, k + 1);
  }
  if (count == 0) return axi_error(errc::bad_value, "no byte is strobed", "axi.wstrb", 0);

  // Full when the written bytes leave no gap: the command starts at the first of them. Else
  // whole 8-byte words from the one holding the first written byte to the one holding the
  // last; only those two end words may have clear strobes.
  const bool full = count == last - first + 1;
  const std::uint64_t base = full ? first : first & ~std::uint64_t{7};
  const std::uint64_t w1 = last & ~std::uint64_t{7};
  const std::uint64_t n64 = full ? count : w1 - base + 8;
  if (n64 > max_data_bytes)
    return axi_error(errc::bad_length,
                     full ? "more than 256 bytes written: one command carries 256"
                          : "partial write spans more than 256 bytes of 8-byte words",
                     "axi.wstrb", n64, 0, max_data_bytes, static_cast<std::size_t>(n64));
  const auto n = static_cast<std::size_t>(n64);
  if (u->length != n - 1)
    return axi_error(errc::bad_length,
                     full ? "AWUSER length disagrees with the bytes written"
                          : "AWUSER length disagrees with the whole words of the partial write",
                     "axi.user.length", u->length, 0, n, std::size_t{u->length} + 1);

  // Second pass: the bytes, relative to the command's address; clear strobes stay zero.
  std::array<std::uint8_t, max_data_bytes> data{};
  std::array<bool, max_data_bytes> on{};
  for (std::size_t k = 0; k < w.size(); ++k)
    for (std::uint64_t a = g->begin(k); a < g->end(k); ++a) {
      const auto lane = static_cast<std::size_t>(a % B);
      if (!strobe(w[k], lane)) continue;
      const auto off = static_cast<std::size_t>(a - base);
      on[off] = true;
      data[off] = w[k].data[lane];
    }

  const bool posted = detail::is_posted_code(u->type);
  if (full) {
    const cmd_write c{.type = posted ? code::write_full_posted : code::write_full,
                      .dlen = static_cast<std::uint8_t>(n - 1),
                      .tag = aw.id,
                      .addr = base};
    const auto ctrl = detail::control_of(c);
    if (!ctrl) return ctrl.err;
    return make_command(default_profile, u->xpuid, 0, *ctrl, bytes(data.data(), n));
  }

  for (std::size_t i = 8; i + 8 < n; ++i)
    if (!on[i])
      return axi_error(errc::unsupported,
                       "clear strobe inside the write: WR_PART has byte enables for its first "
                       "and last 8-byte words only",
                       "axi.wstrb", base + i);
  std::uint8_t be_first = 0;
  std::uint8_t be_last = 0;
  for (unsigned i = 0; i < 8; ++i) {
    if (on[i]) be_first = static_cast<std::uint8_t>(be_first | (1u << i));
    if (n > 8 && on[n - 8 + i]) be_last = static_cast<std::uint8_t>(be_last | (1u << i));
  }
  const cmd_write_partial c{.type = posted ? code::write_partial_posted : code::write_partial,
                            .dlen = static_cast<std::uint8_t>(n - 1),
                            .tag = aw.id,
                            .addr = base,
                            .be_first = be_first,
                            .be_last = be_last};
  const auto ctrl = detail::control_of(c);
  if (!ctrl) return ctrl.err;
  return make_command(default_profile, u->xpuid, 0, *ctrl, bytes(data.data(), n));
}

// ---- write request -> AW + W -------------------------------------------------------------

template <std::size_t B>
constexpr wire::result<axi_write<B>> to_axi_write(const command_value& cmd) noexcept {
  using detail::axi_error;
  const auto c =
      make_command(default_profile, cmd.xpuid, cmd.vc, cmd.control_bytes(), cmd.data_bytes());
  if (!c) return c.err;
  if (!detail::is_write_code(c->code()))
    return axi_error(errc::unsupported, "only write requests travel on AW and W", type_field.filter,
                     c->code());
  const std::size_t n = c->data_size;
  const bool partial = c->code() == code::write_partial || c->code() == code::write_partial_posted;
  std::uint64_t addr = 0;
  std::uint16_t tag = 0;
  std::uint8_t be_first = 0xFF;
  std::uint8_t be_last = 0xFF;
  if (partial) {
    const auto p = wire::decode<cmd_write_partial>(c->control_bytes());
    if (!p) return p.err;
    addr = p->addr;
    tag = p->tag;
    be_first = p->be_first;
    be_last = p->be_last;
    if (addr % 8 != 0)
      return axi_error(errc::bad_value, "partial write address is not 8-byte aligned",
                       "sue.cmd.addr", addr);
    if (n % 8 != 0)
      return axi_error(errc::bad_length, "partial write data is not whole 8-byte words",
                       "sue.cmd.dlen", n - 1);
    if (be_first == 0)
      return axi_error(errc::bad_value, "be_first enables no byte", "sue.cmd.be_first", 0);
    if (n == 8 ? be_last != 0 : be_last == 0)
      return axi_error(errc::bad_value,
                       n == 8 ? "a one-word partial write has be_last 0 (PCIe convention)"
                              : "be_last enables no byte",
                       "sue.cmd.be_last", be_last);
  } else {
    const auto f = wire::decode<cmd_write>(c->control_bytes());
    if (!f) return f.err;
    addr = f->addr;
    tag = f->tag;
  }
  const auto g = detail::cover<B>(addr, n);
  if (!g) return g.err;
  const auto user = encode_user(
      {.length = static_cast<std::uint8_t>(n - 1), .type = c->code(), .xpuid = c->xpuid});
  if (!user) return user.err;

  axi_write<B> out{};
  out.aw = axi_aw{.id = tag,
                  .addr = addr,
                  .len = static_cast<std::uint8_t>(g->beats - 1),
                  .size = axi_size_of<B>(),
                  .burst = axi_burst_incr,
                  .user = *user};
  out.count = g->beats;
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t word = i / 8;
    const unsigned bit = static_cast<unsigned>(i % 8);
    const bool on = !partial            ? true
                    : word == 0         ? ((be_first >> bit) & 1u) != 0
                    : word == n / 8 - 1 ? ((be_last >> bit) & 1u) != 0
                                        : true;
    const std::uint64_t a = addr + i;
    auto& beat = out.w[static_cast<std::size_t>((a - g->aligned) / B)];
    const auto lane = static_cast<std::size_t>(a % B);
    beat.data[lane] = on ? c->data[i] : 0;
    set_strobe(beat, lane, on);
  }
  out.w[out.count - 1].last = true;
  return out;
}

// ---- AR <-> read request -----------------------------------------------------------------

template <std::size_t B>
constexpr wire::result<command_value> from_axi_read(const axi_ar& ar) noexcept {
  using detail::axi_error;
  const auto u = decode_user(ar.user);
  if (!u) return u.err;
  if (u->type != code::read)
    return axi_error(errc::bad_value, "ARUSER type is not RD", "axi.user.type", u->type);
  const auto g = detail::geometry<B>(ar.addr, ar.len, ar.size, ar.burst, false);
  if (!g) return g.err;
  const std::size_t n = std::size_t{u->length} + 1;
  if (n > g->span)
    return axi_error(errc::bad_length, "ARUSER length asks for more than the burst covers",
                     "axi.user.length", u->length, 0, n, g->span);
  if (g->start + n <= g->begin(g->beats - 1))
    return axi_error(errc::bad_length, "ARUSER length leaves the last beat unused",
                     "axi.user.length", u->length, 0, n, g->span);
  const cmd_read c{
      .type = code::read, .dlen = static_cast<std::uint8_t>(n - 1), .tag = ar.id, .addr = ar.addr};
  const auto ctrl = detail::control_of(c);
  if (!ctrl) return ctrl.err;
  return make_command(default_profile, u->xpuid, 0, *ctrl, {});
}

template <std::size_t B>
constexpr wire::result<axi_ar> to_axi_read(const command_value& cmd) noexcept {
  using detail::axi_error;
  const auto c =
      make_command(default_profile, cmd.xpuid, cmd.vc, cmd.control_bytes(), cmd.data_bytes());
  if (!c) return c.err;
  if (c->code() != code::read)
    return axi_error(errc::unsupported, "only RD travels on AR", type_field.filter, c->code());
  const auto r = wire::decode<cmd_read>(c->control_bytes());
  if (!r) return r.err;
  const std::size_t n = std::size_t{r->dlen} + 1;
  const auto g = detail::cover<B>(r->addr, n);
  if (!g) return g.err;
  const auto user = encode_user({.length = r->dlen, .type = code::read, .xpuid = c->xpuid});
  if (!user) return user.err;
  return axi_ar{.id = r->tag,
                .addr = r->addr,
                .len = static_cast<std::uint8_t>(g->beats - 1),
                .size = axi_size_of<B>(),
                .burst = axi_burst_incr,
                .user = *user};
}

// ---- R <-> read response (with the AR it answers) ----------------------------------------

template <std::size_t B>
constexpr wire::result<command_value> from_axi_read_response(const axi_ar& ar,
                                                             std::span<const axi_r<B>> r) noexcept {
  using detail::axi_error;
  const auto rd = from_axi_read<B>(ar);
  if (!rd) return rd.err;
  const auto g = detail::geometry<B>(ar.addr, ar.len, ar.size, ar.burst, false);
  const std::size_t n = std::size_t{rd->control[1]} + 1;
  if (r.size() != g->beats)
    return axi_error(errc::bad_length, "R beats differ from ARLEN + 1", "axi.arlen", ar.len, 0,
                     g->beats, r.size());
  const auto u = decode_user(r[0].user);
  if (!u) return u.err;
  if (u->type != code::read_response)
    return axi_error(errc::bad_value, "RUSER type is not RD_RSP", "axi.user.type", u->type, 1);
  if (u->length != n - 1)
    return axi_error(errc::bad_length, "RUSER length differs from the read's", "axi.user.length",
                     u->length, 1, n, std::size_t{u->length} + 1);
  // One status per command: the worst the beats report (AXI4 codes grow with severity).
  std::uint8_t status = axi_resp_okay;
  std::array<std::uint8_t, max_data_bytes> data{};
  for (std::size_t k = 0; k < r.size(); ++k) {
    if (r[k].id != ar.id)
      return axi_error(errc::bad_value, "RID differs from ARID", "axi.rid", r[k].id, k + 1);
    if (r[k].last != (k + 1 == r.size()))
      return axi_error(errc::bad_value, "RLAST must be set on the last beat only", "axi.rlast",
                       r[k].last, k + 1);
    if (r[k].user != r[0].user)
      return axi_error(errc::bad_value, "RUSER changes within one burst", "axi.ruser", r[k].user,
                       k + 1);
    if (r[k].resp > axi_resp_decerr)
      return axi_error(errc::value_too_big, "RRESP is 2 bits", "axi.rresp", r[k].resp, k + 1);
    if (r[k].resp > status) status = r[k].resp;
    for (std::uint64_t a = g->begin(k); a < g->end(k) && a < g->start + n; ++a)
      data[static_cast<std::size_t>(a - g->start)] = r[k].data[static_cast<std::size_t>(a % B)];
  }
  cmd_response_data c{};
  c.type = code::read_response;
  c.dlen = static_cast<std::uint8_t>(n - 1);
  c.tag = ar.id;
  c.status = status;
  const auto ctrl = detail::control_of(c);
  if (!ctrl) return ctrl.err;
  return make_command(default_profile, u->xpuid, 1, *ctrl, bytes(data.data(), n));
}

template <std::size_t B>
constexpr wire::result<axi_read_response<B>> to_axi_read_response(
    const axi_ar& ar, const command_value& cmd) noexcept {
  using detail::axi_error;
  const auto rd = from_axi_read<B>(ar);
  if (!rd) return rd.err;
  const auto g = detail::geometry<B>(ar.addr, ar.len, ar.size, ar.burst, false);
  const std::size_t n = std::size_t{rd->control[1]} + 1;
  const auto c =
      make_command(default_profile, cmd.xpuid, cmd.vc, cmd.control_bytes(), cmd.data_bytes());
  if (!c) return c.err;
  if (c->code() != code::read_response)
    return axi_error(errc::unsupported, "only RD_RSP travels on R", type_field.filter, c->code());
  const auto rsp = wire::decode<cmd_response_data>(c->control_bytes());
  if (!rsp) return rsp.err;
  if (rsp->tag != ar.id)
    return axi_error(errc::bad_value, "the response's tag is not the read's ARID", "sue.cmd.tag",
                     rsp->tag);
  if (c->data_size != n)
    return axi_error(errc::bad_length, "response data length differs from the read's",
                     "sue.cmd.dlen", c->data_size - 1u, 0, n, c->data_size);
  if (rsp->status > axi_resp_decerr)
    return axi_error(errc::value_too_big, "status does not fit RRESP (2 bits)", "sue.cmd.status",
                     rsp->status);
  const auto user = encode_user(
      {.length = static_cast<std::uint8_t>(n - 1), .type = code::read_response, .xpuid = c->xpuid});
  if (!user) return user.err;
  axi_read_response<B> out{};
  out.count = g->beats;
  for (std::size_t k = 0; k < out.count; ++k) {
    auto& beat = out.r[k];
    beat.id = rsp->tag;
    beat.resp = rsp->status;
    beat.last = k + 1 == out.count;
    beat.user = *user;
    for (std::uint64_t a = g->begin(k); a < g->end(k) && a < g->start + n; ++a)
      beat.data[static_cast<std::size_t>(a % B)] = c->data[static_cast<std::size_t>(a - g->start)];
  }
  return out;
}

// ---- B <-> write response ----------------------------------------------------------------

constexpr wire::result<command_value> from_axi_write_response(const axi_b& b) noexcept {
  using detail::axi_error;
  if (b.resp > axi_resp_decerr)
    return axi_error(errc::value_too_big, "BRESP is 2 bits", "axi.bresp", b.resp);
  const auto u = decode_user(b.user);
  if (!u) return u.err;
  if (u->type != code::write_response)
    return axi_error(errc::bad_value, "BUSER type is not WR_RSP", "axi.user.type", u->type);
  if (u->length != 0)
    return axi_error(errc::bad_value, "BUSER length must be 0: no data goes with WR_RSP",
                     "axi.user.length", u->length);
  const cmd_response c{.type = code::write_response, .dlen = 0, .tag = b.id, .status = b.resp};
  const auto ctrl = detail::control_of(c);
  if (!ctrl) return ctrl.err;
  return make_command(default_profile, u->xpuid, 1, *ctrl, {});
}

constexpr wire::result<axi_b> to_axi_write_response(const command_value& cmd) noexcept {
  using detail::axi_error;
  const auto c =
      make_command(default_profile, cmd.xpuid, cmd.vc, cmd.control_bytes(), cmd.data_bytes());
  if (!c) return c.err;
  if (c->code() != code::write_response)
    return axi_error(errc::unsupported, "only WR_RSP travels on B", type_field.filter, c->code());
  const auto rsp = wire::decode<cmd_response>(c->control_bytes());
  if (!rsp) return rsp.err;
  if (rsp->status > axi_resp_decerr)
    return axi_error(errc::value_too_big, "status does not fit BRESP (2 bits)", "sue.cmd.status",
                     rsp->status);
  const auto user = encode_user({.type = code::write_response, .xpuid = c->xpuid});
  if (!user) return user.err;
  return axi_b{.id = rsp->tag, .resp = rsp->status, .user = *user};
}

// The B a posted write gets: OKAY, built locally since no WR_RSP comes from the remote. When it
// may be given is the transport's business (transport/posted_writes.hpp: once ACKed, by default).
constexpr wire::result<axi_b> posted_write_response(const axi_aw& aw) noexcept {
  const auto u = decode_user(aw.user);
  if (!u) return u.err;
  if (!detail::is_posted_code(u->type))
    return detail::axi_error(errc::bad_value, "not a posted write: its B comes from WR_RSP",
                             "axi.user.type", u->type);
  const auto user = encode_user({.type = code::write_response, .xpuid = u->xpuid});
  if (!user) return user.err;
  return axi_b{.id = aw.id, .resp = axi_resp_okay, .user = *user};
}

// ---- credits: one per transaction per channel (R2 3.2.2) --------------------------------

enum class axi_channel : std::uint8_t { aw, w, b, ar, r };
inline constexpr std::size_t axi_channel_count = 5;
inline constexpr std::array<std::string_view, axi_channel_count> axi_channel_names{"AW", "W", "B",
                                                                                   "AR", "R"};

// A sender's view: transactions it may still start on each channel. A whole burst (all its W
// or R beats) is one transaction.
struct axi_credits {
  std::array<std::uint16_t, axi_channel_count> count{};
  constexpr std::uint16_t available(axi_channel ch) const noexcept {
    return count[static_cast<std::size_t>(ch)];
  }
  friend constexpr bool operator==(const axi_credits&, const axi_credits&) = default;
};

constexpr wire::result<axi_credits> consume(const axi_credits& s, axi_channel ch) noexcept {
  const auto i = static_cast<std::size_t>(ch);
  if (i >= axi_channel_count)
    return detail::axi_error(errc::bad_value, "no such AXI channel", "axi.channel", i);
  if (s.count[i] == 0)
    return detail::axi_error(errc::no_space, "no credit left on this AXI channel", "axi.channel", i,
                             0, 1, 0);
  axi_credits out = s;
  --out.count[i];
  return out;
}

// AW and W move as one unit (R2 3.2.2), so a write takes both credits or neither.
constexpr wire::result<axi_credits> consume_write(const axi_credits& s) noexcept {
  const auto a = consume(s, axi_channel::aw);
  if (!a) return a.err;
  return consume(*a, axi_channel::w);
}

constexpr wire::result<axi_credits> return_credits(const axi_credits& s, axi_channel ch,
                                                   std::uint16_t n = 1) noexcept {
  const auto i = static_cast<std::size_t>(ch);
  if (i >= axi_channel_count)
    return detail::axi_error(errc::bad_value, "no such AXI channel", "axi.channel", i);
  if (s.count[i] + std::size_t{n} > 0xFFFFu)
    return detail::axi_error(errc::value_too_big, "credit counter would pass 65535", "axi.channel",
                             i);
  axi_credits out = s;
  out.count[i] = static_cast<std::uint16_t>(out.count[i] + n);
  return out;
}

}  // namespace scaleup::pack
