// The XPU-SUE command interface as a FIFO of bus cycles ("beats") with credits (R2 3.2.1,
// Tables 3 and 4): pure conversions between a command (control + data, as packed in a PDU)
// and the cycles that carry it, and the credit counters that pace them.
//
// The seed gives signal names and widths only. What scaleup fixes (docs/wire-format.md,
// "Command interface"):
//   - cycle 0 carries the control, left-aligned in the 144-bit tx_control, and the first N data
//     bytes; cycle k carries data bytes kN..kN+N-1; the last cycle's unused data bytes are zero;
//   - tx_valid, tx_vc and xpuid qualify every cycle of a command and stay the same on each;
//     tx_control is sampled on cycle 0 only, and unused data lanes are ignored on receipt;
//   - the 6-bit tx_credit / rx_credit word is vc(2) | cmd valid(1) | cmd+data valid(1) |
//     credits - 1 (2), MSB first.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <tuple>

#include "scaleup/pack/command.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::pack {

// tx_* signals go XPU to SUE (Table 3), rx_* SUE to XPU (Table 4). Table 4 has no error signal.
enum class direction : std::uint8_t { tx, rx };

inline constexpr std::size_t max_cycles = 16;     // tx_cycle is 4 bits (R2 Table 3)
inline constexpr std::uint16_t max_xpuid = 1023;  // xpuid is 10 bits (R2 Tables 3 and 4)
inline constexpr std::uint8_t max_vc = 3;         // tx_vc is 2 bits

// tx_valid (R2 Table 3: "none, command only, command with data"). Three kinds in two bits:
// 3 is left undefined by the seed and is rejected, never guessed at.
inline constexpr std::uint8_t valid_none = 0;
inline constexpr std::uint8_t valid_command = 1;
inline constexpr std::uint8_t valid_command_data = 2;
inline constexpr std::array<wire::value_name, 4> valid_names{
    {{0, "none"}, {1, "command only"}, {2, "command with data"}, {3, "undefined"}}};

// A bus of N bytes moves 256 bytes in ceil(256 / N) cycles, and tx_cycle counts at most 16 of
// them, so the bus is at least 16 bytes (128 bits). Wider than 256 bytes would carry nothing
// more per cycle.
template <std::size_t N>
inline constexpr bool supported_bus_width = N >= 1 && N <= max_data_bytes &&
                                            (max_data_bytes + N - 1) / N <= max_cycles;

template <std::size_t N>
constexpr std::size_t cycles_for(std::size_t data_bytes) noexcept {
  return data_bytes == 0 ? 1 : (data_bytes + N - 1) / N;
}

// One cycle of the interface, N = the data bus width in bytes (R2: "if N = 256 bits (32B) then
// 8 cycles are used to transfer 256B"). Members hold the signals at their Table 3/4 widths; a
// value wider than its signal is refused on conversion (value_too_big), never truncated.
template <std::size_t N, direction D = direction::tx>
struct beat {
  static_assert(supported_bus_width<N>,
                "bus width must be 16..256 bytes: tx_cycle (4 bits) numbers at most 16 cycles "
                "and a command carries at most 256 data bytes (R2 Table 3)");
  std::uint8_t cycle = 0;   // tx_cycle / rx_cycle, 4 bits
  std::uint8_t valid = 0;   // tx_valid / rx_valid, 2 bits (valid_*)
  std::uint8_t vc = 0;      // tx_vc / rx_vc, 2 bits
  std::uint16_t xpuid = 0;  // remote XPU, 10 bits: destination on tx, source on rx
  std::uint8_t err = 0;     // tx_err, 1 bit; rx has no such signal and keeps it 0
  std::uint8_t pad = 0;     // not a signal: aligns the image below, always 0
  std::array<std::uint8_t, max_control_bytes> control{};  // tx_control, 144 bits
  std::array<std::uint8_t, N> data{};                     // tx_data, N bytes
  friend constexpr bool operator==(const beat&, const beat&) = default;
};

template <std::size_t N>
using tx_beat = beat<N, direction::tx>;
template <std::size_t N>
using rx_beat = beat<N, direction::rx>;

// Shared by both directions' tables; only the names and the error bit differ.
template <class T, direction D>
constexpr auto beat_fields() noexcept {
  constexpr bool tx = D == direction::tx;
  constexpr std::size_t n = std::tuple_size_v<decltype(T::data)>;
  constexpr std::string_view seed = tx ? "R2 3.2.1, Table 3" : "R2 3.2.1, Table 4";
  // clang-format off
  return std::tuple{
      wire::member(&T::cycle, {.name = tx ? "tx_cycle" : "rx_cycle",
                             .filter = tx ? "sue.fifo.tx_cycle" : "sue.fifo.rx_cycle",
                             .bit = 0, .width = 4,
                             .description = "Cycle number within the command", .seed = seed}),
      wire::member(&T::valid, {.name = tx ? "tx_valid" : "rx_valid",
                             .filter = tx ? "sue.fifo.tx_valid" : "sue.fifo.rx_valid",
                             .bit = 4, .width = 2, .names = valid_names,
                             .description = "None, command only, command with data",
                             .seed = seed}),
      wire::member(&T::vc, {.name = tx ? "tx_vc" : "rx_vc",
                          .filter = tx ? "sue.fifo.tx_vc" : "sue.fifo.rx_vc",
                          .bit = 6, .width = 2, .description = "Virtual channel", .seed = seed}),
      wire::member(&T::xpuid, {.name = "xpuid", .filter = "sue.fifo.xpuid", .bit = 8, .width = 10,
                             .description = tx ? "Destination XPU" : "Source XPU",
                             .seed = seed}),
      wire::member(&T::err, tx ? wire::field_info{.name = "tx_err", .filter = "sue.fifo.tx_err",
                                                .bit = 18, .width = 1, .type = wire::kind::flag,
                                                .description = "Uncorrectable ECC error on the "
                                                               "die-to-die interface",
                                                .seed = seed}
                             : wire::field_info{.name = "reserved", .filter = "sue.fifo.rx_rsvd",
                                                .bit = 18, .width = 1,
                                                .description = "Table 4 has no rx_err",
                                                .seed = seed, .check = wire::rule::fixed}),
      wire::member(&T::pad, {.name = "pad", .filter = "sue.fifo.pad", .bit = 19, .width = 5,
                           .description = "Not a signal: puts the control on a byte boundary",
                           .seed = "scaleup", .check = wire::rule::fixed}),
      wire::member(&T::control, {.name = tx ? "tx_control" : "rx_control",
                               .filter = tx ? "sue.fifo.tx_control" : "sue.fifo.rx_control",
                               .bit = 24, .width = 8 * max_control_bytes, .type = wire::kind::hex,
                               .description = "Command control, left-aligned; cycle 0 only",
                               .seed = seed}),
      wire::member(&T::data, {.name = tx ? "tx_data" : "rx_data",
                            .filter = tx ? "sue.fifo.tx_data" : "sue.fifo.rx_data",
                            .bit = 24 + 8 * max_control_bytes,
                            .width = static_cast<std::uint16_t>(8 * n), .type = wire::kind::hex,
                            .description = "Data bytes of this cycle", .seed = seed}),
  };
  // clang-format on
}

}  // namespace scaleup::pack

namespace scaleup::wire {

// The signals are parallel wires with no byte order of their own. This image (for traces, the
// dissector and the width checks) lists them in table order, with the error bit moved up and
// 5 pad bits so that control and data fall on byte boundaries: 21 + N bytes.
template <std::size_t N, pack::direction D>
struct layout<pack::beat<N, D>> {
  using T = pack::beat<N, D>;
  static constexpr std::string_view name = "sue.fifo";
  static constexpr std::string_view title = D == pack::direction::tx
                                                ? "XPU to SUE command interface cycle"
                                                : "SUE to XPU command interface cycle";
  static constexpr std::string_view seed =
      D == pack::direction::tx ? "R2 3.2.1, Table 3" : "R2 3.2.1, Table 4";
  static constexpr std::size_t size = 3 + pack::max_control_bytes + N;
  static constexpr auto fields = pack::beat_fields<T, D>();
};

}  // namespace scaleup::wire

namespace scaleup::pack {

namespace detail {

constexpr error fifo_error(errc code, std::string_view what, std::string_view field = {},
                           std::uint64_t value = 0, std::size_t item = 0, std::size_t needed = 0,
                           std::size_t available = 0) noexcept {
  return error{code,
               "sue.fifo",
               0,
               static_cast<std::uint32_t>(needed),
               static_cast<std::uint32_t>(available),
               what,
               field,
               value,
               wire::severity::error,
               static_cast<std::uint32_t>(item)};
}

}  // namespace detail

// A command with its own storage (command_view points into a PDU; this outlives any buffer).
// xpuid is the remote XPU: the destination when sending, the source when receiving.
struct command_value {
  const command_type* type = nullptr;
  std::uint16_t xpuid = 0;
  std::uint8_t vc = 0;
  std::uint8_t control_size = 0;
  std::uint16_t data_size = 0;
  std::array<std::uint8_t, max_control_bytes> control{};
  std::array<std::uint8_t, max_data_bytes> data{};

  constexpr std::uint8_t code() const noexcept { return control[0]; }
  constexpr bytes control_bytes() const noexcept { return bytes(control.data(), control_size); }
  constexpr bytes data_bytes() const noexcept { return bytes(data.data(), data_size); }

  friend constexpr bool operator==(const command_value& a, const command_value& b) noexcept {
    if (a.xpuid != b.xpuid || a.vc != b.vc || a.control_size != b.control_size ||
        a.data_size != b.data_size)
      return false;
    for (std::size_t i = 0; i < a.control_size; ++i)
      if (a.control[i] != b.control[i]) return false;
    for (std::size_t i = 0; i < a.data_size; ++i)
      if (a.data[i] != b.data[i]) return false;
    return true;
  }
};

// A checked command_value. The framing rules are emit_command's, so byte 1 of a type with data
// is set to the data length - 1 here too: control and data cannot disagree.
constexpr wire::result<command_value> make_command(const profile& prof, std::uint16_t xpuid,
                                                   std::uint8_t vc, bytes control,
                                                   bytes data) noexcept {
  if (xpuid > max_xpuid)
    return detail::fifo_error(errc::value_too_big, "xpuid is 10 bits (R2 Table 3)",
                              "sue.fifo.xpuid", xpuid);
  if (vc > max_vc)
    return detail::fifo_error(errc::value_too_big, "tx_vc is 2 bits (R2 Table 3)", "sue.fifo.tx_vc",
                              vc);
  std::array<std::uint8_t, max_command_bytes> buf{};
  const auto n = emit_command(prof, control, data, buf);
  if (!n) return n.err;
  command_value out{};
  out.type = prof.find(control[0]);
  out.xpuid = xpuid;
  out.vc = vc;
  out.control_size = static_cast<std::uint8_t>(control.size());
  out.data_size = static_cast<std::uint16_t>(data.size());
  for (std::size_t i = 0; i < control.size(); ++i) out.control[i] = buf[i];
  for (std::size_t i = 0; i < data.size(); ++i) out.data[i] = buf[control.size() + i];
  return out;
}

// The cycles of one command; capacity 16 / ceil(256 / N).
template <std::size_t N, direction D = direction::tx>
struct beat_sequence {
  static constexpr std::size_t capacity = cycles_for<N>(max_data_bytes);
  std::array<beat<N, D>, capacity> beats{};
  std::size_t count = 0;

  constexpr std::span<const beat<N, D>> view() const noexcept { return {beats.data(), count}; }
  constexpr std::size_t size() const noexcept { return count; }
  constexpr const beat<N, D>& operator[](std::size_t i) const noexcept { return beats[i]; }
};

namespace detail {

// Every signal within its width, the fixed bits zero: the field table's encode does the work.
template <std::size_t N, direction D>
constexpr error check_beat(const beat<N, D>& b, std::size_t item) noexcept {
  std::array<std::uint8_t, wire::layout<beat<N, D>>::size> image{};
  const auto r = wire::encode(b, image);
  if (r) return {};
  error e = r.err;
  e.item = static_cast<std::uint32_t>(item);
  return e;
}

}  // namespace detail

// The cycles that carry one command. The value is checked again: its members are public.
template <std::size_t N, direction D = direction::tx>
constexpr wire::result<beat_sequence<N, D>> to_beats(const profile& prof,
                                                     const command_value& cmd) noexcept {
  const auto c = make_command(prof, cmd.xpuid, cmd.vc, cmd.control_bytes(), cmd.data_bytes());
  if (!c) return c.err;
  beat_sequence<N, D> out{};
  out.count = cycles_for<N>(c->data_size);
  for (std::size_t k = 0; k < out.count; ++k) {
    auto& b = out.beats[k];
    b.cycle = static_cast<std::uint8_t>(k);
    b.valid = c->type->has_data ? valid_command_data : valid_command;
    b.vc = c->vc;
    b.xpuid = c->xpuid;
    for (std::size_t i = 0; i < N && k * N + i < c->data_size; ++i) b.data[i] = c->data[k * N + i];
  }
  for (std::size_t i = 0; i < c->control_size; ++i) out.beats[0].control[i] = c->control[i];
  return out;
}

template <std::size_t N, direction D = direction::tx>
constexpr wire::result<beat_sequence<N, D>> to_beats(const profile& prof, std::uint16_t xpuid,
                                                     std::uint8_t vc, bytes control,
                                                     bytes data) noexcept {
  const auto c = make_command(prof, xpuid, vc, control, data);
  if (!c) return c.err;
  return to_beats<N, D>(prof, *c);
}

// The command that a run of cycles carries, or why it must not be delivered. Errors name the
// 1-based cycle position in `item`.
template <std::size_t N, direction D>
constexpr wire::result<command_value> from_beats(const profile& prof,
                                                 std::span<const beat<N, D>> beats) noexcept {
  using detail::fifo_error;
  constexpr bool tx = D == direction::tx;
  if (beats.empty()) return fifo_error(errc::truncated, "no cycles", {}, 0, 0, 1, 0);
  for (std::size_t i = 0; i < beats.size(); ++i) {
    const auto& b = beats[i];
    if (const error e = detail::check_beat(b, i + 1)) return e;
    // Data that failed its ECC check may have corrupted any field: drop the whole command
    // rather than deliver something the XPU never sent (R2 Table 3, tx_err).
    if (b.err != 0)
      return fifo_error(errc::bad_value,
                        "tx_err: uncorrectable ECC error on the interface; the command is "
                        "rejected",
                        "sue.fifo.tx_err", 1, i + 1);
    if (b.valid == valid_none)
      return fifo_error(errc::bad_value, "cycle carries no command (valid = none)",
                        tx ? "sue.fifo.tx_valid" : "sue.fifo.rx_valid", b.valid, i + 1);
    if (b.valid > valid_command_data)
      return fifo_error(errc::bad_value, "valid = 3 is not defined (R2 Table 3)",
                        tx ? "sue.fifo.tx_valid" : "sue.fifo.rx_valid", b.valid, i + 1);
    if (b.valid != beats[0].valid)
      return fifo_error(errc::bad_value, "valid changes within one command",
                        tx ? "sue.fifo.tx_valid" : "sue.fifo.rx_valid", b.valid, i + 1);
    if (b.vc != beats[0].vc)
      return fifo_error(errc::bad_value, "vc changes within one command",
                        tx ? "sue.fifo.tx_vc" : "sue.fifo.rx_vc", b.vc, i + 1);
    if (b.xpuid != beats[0].xpuid)
      return fifo_error(errc::bad_value, "xpuid changes within one command", "sue.fifo.xpuid",
                        b.xpuid, i + 1);
  }
  const std::string_view cycle_field = tx ? "sue.fifo.tx_cycle" : "sue.fifo.rx_cycle";
  for (std::size_t i = 0; i < beats.size(); ++i) {
    if (beats[i].cycle == i) continue;
    bool later = false;
    for (std::size_t j = i + 1; j < beats.size(); ++j) later = later || beats[j].cycle == i;
    if (later || beats[i].cycle < i)
      return fifo_error(errc::bad_value, "cycles out of order or repeated", cycle_field,
                        beats[i].cycle, i + 1);
    return fifo_error(errc::truncated, "a cycle is missing", cycle_field, i, i + 1);
  }

  const auto& first = beats[0];
  const command_type* t = prof.find(first.control[0]);
  if (!t)
    return fifo_error(errc::bad_value, "command type not in the profile", type_field.filter,
                      first.control[0], 1);
  for (std::size_t i = t->control_bytes(); i < max_control_bytes; ++i)
    if (first.control[i] != 0)
      return fifo_error(errc::bad_value, "control bytes past the type's control length",
                        tx ? "sue.fifo.tx_control" : "sue.fifo.rx_control", i, 1);
  if (t->has_data != (first.valid == valid_command_data))
    return fifo_error(errc::bad_value,
                      t->has_data ? "valid says command only, but the type carries data"
                                  : "valid says command with data, but the type carries none",
                      tx ? "sue.fifo.tx_valid" : "sue.fifo.rx_valid", first.valid, 1);
  const std::size_t data_size = t->has_data ? std::size_t{first.control[1]} + 1 : 0;
  const std::size_t needed = cycles_for<N>(data_size);
  if (beats.size() < needed)
    return fifo_error(errc::truncated, "cycles missing: the data length needs more", "sue.cmd.dlen",
                      first.control[1], 0, needed, beats.size());
  if (beats.size() > needed)
    return fifo_error(errc::bad_length, "more cycles than the data length needs", "sue.cmd.dlen",
                      first.control[1], needed + 1, needed, beats.size());

  std::array<std::uint8_t, max_data_bytes> data{};
  for (std::size_t i = 0; i < data_size; ++i) data[i] = beats[i / N].data[i % N];
  return make_command(prof, first.xpuid, first.vc, bytes(first.control.data(), t->control_bytes()),
                      bytes(data.data(), data_size));
}

template <std::size_t N, direction D>
constexpr wire::result<command_value> from_beats(const profile& prof,
                                                 const beat_sequence<N, D>& seq) noexcept {
  return from_beats<N, D>(prof, seq.view());
}

// ---- credits (R2 Table 3 tx_credit, Table 4 rx_credit: "Credit and valid for cmd and
// cmd+data, per VC") ------------------------------------------------------------------------
//
// tx_credit flows SUE to XPU and paces the XPU's commands; rx_credit flows XPU to SUE and paces
// SUE's deliveries. Both use one 6-bit word, MSB first:
//   bits 5..4 vc | bit 3 command-only pool valid | bit 2 command+data pool valid |
//   bits 1..0 credits - 1, added to each pool whose valid bit is set (1..4 per cycle).
// The word names no destination: SUE's per-{destination, VC} flow control (R2 3.2.1) shows at
// the interface only as credits withheld. A word with neither valid bit set is idle and must be
// all zero.

struct credit_word {
  std::uint8_t pad = 0;  // the two bits above the 6-bit word in its byte
  std::uint8_t vc = 0;
  std::uint8_t command = 0;       // 1: credits for the command-only pool
  std::uint8_t command_data = 0;  // 1: credits for the command-with-data pool
  std::uint8_t count = 0;         // credits returned to each flagged pool, minus one
  friend constexpr bool operator==(const credit_word&, const credit_word&) = default;
};

}  // namespace scaleup::pack

namespace scaleup::wire {

template <>
struct layout<pack::credit_word> {
  using T = pack::credit_word;
  static constexpr std::string_view name = "sue.fifo.credit";
  static constexpr std::string_view title = "tx_credit / rx_credit word";
  static constexpr std::string_view seed = "R2 Tables 3 and 4; encoding: scaleup";
  static constexpr std::size_t size = 1;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::pad, {.name = "pad", .filter = "sue.fifo.credit.pad", .bit = 0, .width = 2,
                     .description = "Above the 6-bit signal", .seed = "scaleup",
                     .check = rule::fixed}),
      member(&T::vc, {.name = "vc", .filter = "sue.fifo.credit.vc", .bit = 2, .width = 2,
                    .description = "VC the credits are for", .seed = "R2 Table 3 (per VC)"}),
      member(&T::command, {.name = "cmd valid", .filter = "sue.fifo.credit.cmd", .bit = 4,
                         .width = 1, .type = kind::flag,
                         .description = "Credits for commands without data",
                         .seed = "R2 Table 3 (cmd)"}),
      member(&T::command_data, {.name = "cmd+data valid", .filter = "sue.fifo.credit.cmd_data",
                              .bit = 5, .width = 1, .type = kind::flag,
                              .description = "Credits for commands with data",
                              .seed = "R2 Table 3 (cmd+data)"}),
      member(&T::count, {.name = "credits - 1", .filter = "sue.fifo.credit.count", .bit = 6,
                       .width = 2, .description = "Credits per flagged pool, minus one",
                       .seed = "scaleup"}),
  };
  // clang-format on
};

static_assert(tiles<pack::credit_word>());

}  // namespace scaleup::wire

namespace scaleup::pack {

inline constexpr std::uint8_t max_credit_word = 0x3F;

constexpr wire::result<std::uint8_t> encode_credit(const credit_word& w) noexcept {
  std::array<std::uint8_t, 1> b{};
  if (const auto r = wire::encode(w, b); !r) return r.err;
  if (w.command == 0 && w.command_data == 0 && b[0] != 0)
    return detail::fifo_error(errc::bad_value, "a credit word without a valid bit must be zero",
                              "sue.fifo.credit", b[0]);
  return b[0];
}

constexpr wire::result<credit_word> decode_credit(std::uint8_t word) noexcept {
  if (word > max_credit_word)
    return detail::fifo_error(errc::value_too_big, "credit word is 6 bits", "sue.fifo.credit",
                              word);
  const std::array<std::uint8_t, 1> b{word};
  const auto w = wire::decode<credit_word>(b);
  if (!w) return w.err;
  if (w->command == 0 && w->command_data == 0 && word != 0)
    return detail::fifo_error(errc::bad_value, "a credit word without a valid bit must be zero",
                              "sue.fifo.credit", word);
  return *w;
}

enum class credit_pool : std::uint8_t { command, command_data };

// What a sender may still send, per VC and pool. Pure: every operation returns a new state.
struct fifo_credits {
  std::array<std::uint16_t, max_vc + 1> command{};
  std::array<std::uint16_t, max_vc + 1> command_data{};

  constexpr std::uint16_t available(std::uint8_t vc, credit_pool p) const noexcept {
    if (vc > max_vc) return 0;
    return p == credit_pool::command ? command[vc] : command_data[vc];
  }
  friend constexpr bool operator==(const fifo_credits&, const fifo_credits&) = default;
};

// One command, one credit from its pool; none left is an error (the caller waits), never a
// negative count.
constexpr wire::result<fifo_credits> consume(const fifo_credits& s, std::uint8_t vc,
                                             credit_pool p) noexcept {
  if (vc > max_vc)
    return detail::fifo_error(errc::value_too_big, "vc is 2 bits", "sue.fifo.credit.vc", vc);
  fifo_credits out = s;
  auto& n = p == credit_pool::command ? out.command[vc] : out.command_data[vc];
  if (n == 0)
    return detail::fifo_error(
        errc::no_space,
        p == credit_pool::command ? "no command credit left on this VC"
                                  : "no command+data credit left on this VC",
        p == credit_pool::command ? "sue.fifo.credit.cmd" : "sue.fifo.credit.cmd_data", vc, 0, 1,
        0);
  --n;
  return out;
}

// The pool and VC come from the first cycle; the sequence takes one credit however many
// cycles it has.
template <std::size_t N, direction D>
constexpr wire::result<fifo_credits> consume(const fifo_credits& s,
                                             std::span<const beat<N, D>> beats) noexcept {
  if (beats.empty()) return detail::fifo_error(errc::truncated, "no cycles", {}, 0, 0, 1, 0);
  const auto& b = beats[0];
  if (b.valid != valid_command && b.valid != valid_command_data)
    return detail::fifo_error(errc::bad_value, "valid names no credit pool",
                              D == direction::tx ? "sue.fifo.tx_valid" : "sue.fifo.rx_valid",
                              b.valid, 1);
  return consume(s, b.vc,
                 b.valid == valid_command ? credit_pool::command : credit_pool::command_data);
}

template <std::size_t N, direction D>
constexpr wire::result<fifo_credits> consume(const fifo_credits& s,
                                             const beat_sequence<N, D>& seq) noexcept {
  return consume<N, D>(s, seq.view());
}

// Applies one received tx_credit / rx_credit word.
constexpr wire::result<fifo_credits> return_credits(const fifo_credits& s,
                                                    std::uint8_t word) noexcept {
  const auto w = decode_credit(word);
  if (!w) return w.err;
  fifo_credits out = s;
  const unsigned add = w->count + 1u;
  for (int pool = 0; pool < 2; ++pool) {
    const bool pool_cmd = pool == 0;
    if (!(pool_cmd ? w->command : w->command_data)) continue;
    auto& n = pool_cmd ? out.command[w->vc] : out.command_data[w->vc];
    if (n + add > 0xFFFFu)
      return detail::fifo_error(errc::value_too_big, "credit counter would pass 65535",
                                "sue.fifo.credit", word);
    n = static_cast<std::uint16_t>(n + add);
  }
  return out;
}

}  // namespace scaleup::pack
