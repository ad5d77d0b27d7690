// Commands packed back to back in a SUE PDU, and the command profile that delimits them.
//
// R2 4.2 step 2a: "The first bytes of the control are the command type and length. The
// command type defines the length of the control information ... (in 2B units) and whether
// data is present. If data is present, the data length is defined." The profile is the
// XPU-specific part (decisions.md "Commands inside a PDU"); the framing rules every profile
// shares are scaleup's (docs/wire-format.md "Commands"):
//   byte 0 of the control is the command type; type 0 is padding, never a command;
//   the control is `control_units` x 2 bytes (1..9 units: up to the 144-bit tx_control);
//   when the type carries data, byte 1 of the control is the data length - 1 (1..256 bytes),
//   and the data follows the control directly.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "scaleup/wire/bits.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace scaleup::pack {

using wire::bytes;
using wire::errc;
using wire::error;
using wire::mutable_bytes;

inline constexpr std::uint8_t padding_type = 0;
inline constexpr std::size_t max_control_units = 9;  // 144-bit tx_control (R2 Table 3)
inline constexpr std::size_t max_control_bytes = 2 * max_control_units;
inline constexpr std::size_t max_data_bytes = 256;  // R2 Table 2: transaction size 256B
inline constexpr std::size_t max_command_bytes = max_control_bytes + max_data_bytes;

struct command_type {
  std::uint8_t code = 0;
  std::string_view name{};
  std::uint8_t control_units = 1;  // control length in 2-byte units
  bool has_data = false;
  std::span<const wire::field_info> fields{};  // the control's layout, bits from its first bit
  std::string_view description{};
  std::string_view seed{};
  std::uint8_t vc = 0;  // the VC the AXI mapping puts it on (requests 0, responses 1)

  constexpr std::size_t control_bytes() const noexcept { return 2u * control_units; }
};

inline constexpr std::size_t max_types = 255;

// The first byte of every command: its type, by which the profile frames the rest (R2 4.2 step
// 2a). Every profile's commands start with it; errors about a type name it.
inline constexpr wire::field_info type_field{.name = "type",
                                             .filter = "sue.cmd.type",
                                             .bit = 0,
                                             .width = 8,
                                             .type = wire::kind::hex,
                                             .description = "Command type (profile)",
                                             .seed = "R2 4.2 step 2a"};

// The fields the dissection engine gives every command beside its control's: its type by name
// (profile::name_field) and the lengths of its control and data (dissect/engine.hpp). A command
// type's own fields have other names, so that no name appears twice in a command.
inline constexpr std::string_view name_filter = "sue.cmd.name";
inline constexpr std::string_view control_len_filter = "sue.cmd.control_len";
inline constexpr std::string_view data_len_filter = "sue.cmd.data_len";
inline constexpr std::array<std::string_view, 3> engine_fields{name_filter, control_len_filter,
                                                               data_len_filter};

// A profile: command types by code, checked when it is built (check() says what is wrong).
class profile {
 public:
  constexpr profile(std::string_view name, std::span<const command_type> types,
                    std::string_view description = {}) noexcept
      : name_(name), description_(description), types_(types) {
    index_.fill(none);
    const std::size_t n = types.size() < max_types ? types.size() : max_types;
    for (std::size_t i = 0; i < n; ++i) {
      const auto& t = types[i];
      names_[i] = wire::value_name{t.code, t.name};
      if (index_[t.code] != none) duplicate_ = true;
      index_[t.code] = static_cast<std::uint8_t>(i);
      // Type 0 is padding whatever the table says (check() refuses it): its framing stays 0, so
      // a walk meets padding where it meets an unknown type, off its hot path.
      if (t.code != padding_type)
        framing_[t.code] = static_cast<std::uint16_t>(known | (t.has_data ? carries_data : 0) |
                                                      (t.control_bytes() & control_mask));
    }
    name_field_ =
        wire::field_info{.name = "name",
                         .filter = name_filter,
                         .width = 8,
                         .type = wire::kind::label,
                         .names = std::span<const wire::value_name>(names_.data(), types.size()),
                         .description = "Command type by name, from the profile",
                         .seed = "R2 4.2 step 2a"};
    checked_ = check().empty();
  }

  // name_field() points into this object: a profile stays where it was built.
  profile(const profile&) = delete;
  profile& operator=(const profile&) = delete;

  constexpr std::string_view name() const noexcept { return name_; }
  constexpr std::string_view description() const noexcept { return description_; }
  constexpr std::span<const command_type> types() const noexcept { return types_; }
  constexpr const wire::field_info& name_field() const noexcept { return name_field_; }
  // check() found nothing wrong, so no name appears twice among a command's fields and the
  // engine's (engine_fields).
  constexpr bool checked() const noexcept { return checked_; }

  constexpr const command_type* find(std::uint8_t code) const noexcept {
    return index_[code] == none ? nullptr : &types_[index_[code]];
  }

  // What framing needs of a type, in one load (walking a payload, each command's size waits on
  // the one before: a lookup through find() would add a load to that chain). 0: not in the
  // profile, or type 0 (padding); otherwise control_bytes(), with carries_data when the type has
  // data.
  static constexpr std::uint16_t known = 0x4000;
  static constexpr std::uint16_t carries_data = 0x8000;
  static constexpr std::uint16_t control_mask = 0x3FFF;
  constexpr std::uint16_t framing(std::uint8_t code) const noexcept { return framing_[code]; }

  // Whether the table keeps the framing rules; profiles are checked with static_assert.
  constexpr std::string_view check() const noexcept {
    if (types_.size() > max_types) return "more than 255 command types";
    if (duplicate_) return "a command type code appears twice";
    for (const auto& t : types_) {
      if (t.code == padding_type) return "type 0 is padding";
      if (t.control_units < 1 || t.control_units > max_control_units)
        return "control length outside 1..9 units";
      // The RH's vc field is two bits (R2 3.3): a type's VC must be one a PDU can name.
      if (t.vc >
          wire::max_value(
              wire::info_of<wire::reliability_header, &wire::reliability_header::vc>().width))
        return "a VC is 0 to 3";
      std::size_t next = 0;
      for (std::size_t i = 0; i < t.fields.size(); ++i) {
        const auto& f = t.fields[i];
        if (f.bit != next) return "control fields do not tile the control";
        next += f.width;
        if (!wire::is_filter_name(f.filter))
          return "a field's filter name has a character other than a letter, a digit, '.', '_' "
                 "or '-'";
        for (std::size_t j = 0; j < i; ++j)
          if (t.fields[j].filter == f.filter)
            return "a filter name appears twice in a command type";
        for (const std::string_view engine : engine_fields)
          if (f.filter == engine)
            return "a field's filter name is one the engine gives every command (sue.cmd.name, "
                   "sue.cmd.control_len, sue.cmd.data_len)";
      }
      if (!t.fields.empty() && next != 8 * t.control_bytes())
        return "control fields do not cover the control";
      if (!t.fields.empty() && (t.fields[0].bit != 0 || t.fields[0].width != 8))
        return "the first control field must be the 8-bit type";
      if (t.has_data && !t.fields.empty() && (t.fields.size() < 2 || t.fields[1].width != 8))
        return "a type with data must have the 8-bit data length second";
    }
    return {};
  }

 private:
  static constexpr std::uint8_t none = 0xFF;
  std::string_view name_;
  std::string_view description_;
  std::span<const command_type> types_;
  std::array<std::uint8_t, 256> index_{};
  std::array<std::uint16_t, 256> framing_{};
  std::array<wire::value_name, max_types> names_{};
  wire::field_info name_field_{};
  bool duplicate_ = false;
  bool checked_ = false;
};

// One command inside a payload: views into the caller's bytes, nothing copied.
struct command_view {
  const command_type* type = nullptr;
  bytes control{};
  bytes data{};
  std::size_t offset = 0;   // of the control, from the start of the buffer the caller numbers by
  std::uint32_t index = 0;  // 1-based position in the PDU

  constexpr std::uint8_t code() const noexcept { return control[0]; }
  constexpr std::size_t size() const noexcept { return control.size() + data.size(); }
  // A control field by its description in the type's table.
  constexpr std::uint64_t field(const wire::field_info& f) const noexcept {
    return wire::get_bits(control, f.bit, f.width);
  }
};

// Frames the command at the start of `at` (all of `at` is readable): its total size and type,
// or an error naming it by `index` and `offset`. The framing rules and their errors (unpacker::next
// tests the same rules inline first).
constexpr error frame_command(const profile& prof, bytes at, std::size_t offset,
                              std::uint32_t index, std::size_t& size_out,
                              const command_type*& type_out) noexcept {
  const std::uint16_t framing = prof.framing(at[0]);
  if (framing == 0)
    return error{errc::bad_value,
                 "sue.cmd",
                 static_cast<std::uint32_t>(offset),
                 0,
                 0,
                 "command type not in the profile",
                 type_field.filter,
                 at[0],
                 wire::severity::error,
                 index};
  const std::size_t ctrl = framing & profile::control_mask;
  if (at.size() < ctrl)
    return error{errc::truncated,
                 "sue.cmd",
                 static_cast<std::uint32_t>(offset),
                 static_cast<std::uint32_t>(ctrl),
                 static_cast<std::uint32_t>(at.size()),
                 "command control cut off",
                 {},
                 0,
                 wire::severity::error,
                 index};
  std::size_t size = ctrl;
  // Laid out for a type with data (writes, read responses, messages), the bulk of the traffic:
  // the compiler otherwise jumps out to the data's length and back for each such command.
  if ((framing & profile::carries_data) != 0) [[likely]] {
    const std::size_t data = std::size_t{at[1]} + 1;
    size += data;
    if (at.size() < size)
      return error{errc::truncated,
                   "sue.cmd",
                   static_cast<std::uint32_t>(offset),
                   static_cast<std::uint32_t>(size),
                   static_cast<std::uint32_t>(at.size()),
                   "command data cut off",
                   "sue.cmd.data_len",
                   data,
                   wire::severity::error,
                   index};
  }
  size_out = size;
  type_out = prof.find(at[0]);  // off the chain: the next command's place does not need it
  return {};
}

// The padding rule for `rest`, which starts with a zero type byte: zeros to the end are padding,
// anything else an error naming the command `index` at `offset`. Once a payload, at its end: a
// call kept out of the walk's loop.
SCALEUP_COLD constexpr error padding_error(bytes rest, std::size_t offset,
                                           std::uint32_t index) noexcept {
  for (const std::uint8_t b : rest)
    if (b != 0)
      return error{errc::bad_value,
                   "sue.cmd",
                   static_cast<std::uint32_t>(offset),
                   0,
                   0,
                   "type 0 is padding, but non-zero bytes follow",
                   type_field.filter,
                   0,
                   wire::severity::error,
                   index};
  return {};
}

// Walks the commands of a payload in order. A malformed command stops the walk with an error
// naming its index and offset; nothing after it is delivered. Zero bytes at the end are padding
// (a Layer 2 minimum frame), not commands.
class unpacker {
 public:
  constexpr unpacker(const profile& prof, bytes payload, std::size_t base_offset = 0) noexcept
      : prof_(&prof), payload_(payload), base_(base_offset), at_(payload.data()) {}

  // True with the next command; false at the end of the payload or at an error.
  constexpr bool next(command_view& out) noexcept {
    if (done_) return false;
    const std::uint8_t* const end = payload_.data() + payload_.size();
    if (at_ == end) return finish();
    // frame_command's rules as tests alone: a command that passes them is framed here, and
    // one that does not goes to stop(), where frame_command says what is wrong (err_ is
    // written only then: an empty error assigned per command is ~90 bytes of stores).
    const std::size_t room = static_cast<std::size_t>(end - at_);
    const std::uint16_t framing = prof_->framing(at_[0]);
    const std::size_t ctrl = framing & profile::control_mask;
    std::size_t size = ctrl;
    bool bad = false;
    if ((framing & profile::carries_data) != 0) [[likely]] {
      bad = room < ctrl;  // then its length byte is not read
      if (!bad) {
        // Each command's place waits on the one before, through its type byte and the framing
        // word; the size is that word plus what is read beside its load (the framing of a type
        // with data is known | carries_data | its control length): one add after the load,
        // where masking the length out and adding the data's took an and and a three-part lea
        // (64-byte commands, cache-resident: 3.65 -> 3.25 ns a command).
        const std::size_t data = std::size_t{at_[1]} + 1 - (profile::known | profile::carries_data);
        size = framing + data;
        bad = room < size;
      }
    } else {
      bad = framing == 0 || room < ctrl;
    }
    if (bad) [[unlikely]]
      return stop(end);
    // The type's entry (find()) is off the chain, and not looked up when the caller does not
    // read it.
    const std::size_t offset = base_ + pos();
    out = command_view{prof_->find(at_[0]), bytes(at_, ctrl), bytes(at_ + ctrl, size - ctrl),
                       offset, ++count_};
    at_ += size;
    return true;
  }

  constexpr const error& error_found() const noexcept { return err_; }
  constexpr std::size_t count() const noexcept { return count_; }
  constexpr std::size_t padding() const noexcept { return padding_; }
  // Bytes taken by whole commands so far.
  constexpr std::size_t consumed() const noexcept { return pos() - padding_; }

 private:
  constexpr bool finish() noexcept {
    done_ = true;
    return false;
  }
  // The walk stops at at_: the error frame_command finds there, or padding to the end.
  SCALEUP_COLD constexpr bool stop(const std::uint8_t* end) noexcept {
    const std::size_t offset = base_ + pos();
    std::size_t size = 0;
    const command_type* t = nullptr;
    if (const error e = frame_command(*prof_, bytes(at_, end), offset, count_ + 1, size, t)) {
      // Padding's framing is 0, as an unknown type's: the padding rule is off the hot path.
      if (at_[0] == padding_type) {
        err_ = padding_error(bytes(at_, end), offset, count_ + 1);
        if (!err_) {
          padding_ = static_cast<std::size_t>(end - at_);
          at_ = end;
        }
      } else {
        err_ = e;
      }
    }
    return finish();
  }
  constexpr std::size_t pos() const noexcept {
    return static_cast<std::size_t>(at_ - payload_.data());
  }
  const profile* prof_;
  bytes payload_;
  std::size_t base_ = 0;
  // The walk's place as a pointer, not an index: each command's place waits on the one before,
  // and an index would add an address computation to that chain.
  const std::uint8_t* at_ = nullptr;
  std::uint32_t count_ = 0;
  std::size_t padding_ = 0;
  error err_{};
  bool done_ = false;
};

// Whether a control and its data keep the profile's framing: the checks for a command about to
// be written (emit_command) or queued (the packer).
constexpr error check_command(const profile& prof, bytes control, bytes data) noexcept {
  if (control.empty()) return error{errc::truncated, "sue.cmd", 0, 1, 0, "empty control"};
  const std::uint16_t framing = prof.framing(control[0]);  // one load: the packer's every push
  if (framing == 0)
    return error{errc::bad_value,   "sue.cmd", 0, 0, 0, "command type not in the profile",
                 type_field.filter, control[0]};
  const std::size_t ctrl = framing & profile::control_mask;
  const bool has_data = (framing & profile::carries_data) != 0;
  if (control.size() != ctrl)
    return error{errc::bad_length,
                 "sue.cmd",
                 0,
                 static_cast<std::uint32_t>(ctrl),
                 static_cast<std::uint32_t>(control.size()),
                 "control length differs from the profile's",
                 "sue.cmd.control_len",
                 control.size()};
  if (has_data ? (data.empty() || data.size() > max_data_bytes) : !data.empty())
    return error{errc::bad_length,
                 "sue.cmd",
                 0,
                 0,
                 static_cast<std::uint32_t>(data.size()),
                 has_data ? "data must be 1 to 256 bytes" : "this type carries no data",
                 "sue.cmd.data_len",
                 data.size()};
  return {};
}

// Writes a command that check_command passed to `out` (room for it checked): two block copies.
// Such a command has data exactly when its type does, so data decides whether byte 1 is set.
SCALEUP_ALWAYS_INLINE constexpr void write_checked_data(bytes data, std::uint8_t* out,
                                                        std::size_t control_len) noexcept {
  wire::copy_short(out + control_len, data.data(), data.size());
  if (!data.empty()) out[1] = static_cast<std::uint8_t>(data.size() - 1);
}
SCALEUP_ALWAYS_INLINE constexpr std::size_t write_checked_command(bytes control, bytes data,
                                                                  std::uint8_t* out) noexcept {
  wire::copy_short(out, control.data(), control.size());
  write_checked_data(data, out, control.size());
  return control.size() + data.size();
}

// Writes one command: its control (whose byte 0 names the type) and data. Byte 1 is set to
// the data length - 1 for types that carry data, so the two cannot disagree.
constexpr wire::result<std::size_t> emit_command(const profile& prof, bytes control, bytes data,
                                                 mutable_bytes out) noexcept {
  if (const error e = check_command(prof, control, data)) return e;
  const std::size_t n = control.size() + data.size();
  if (out.size() < n)
    return error{errc::no_space,
                 "sue.cmd",
                 0,
                 static_cast<std::uint32_t>(n),
                 static_cast<std::uint32_t>(out.size()),
                 "output buffer too small"};
  return write_checked_command(control, data, out.data());
}

// A command from a typed control struct (one with a wire::layout): encode, then frame.
template <class Control>
constexpr wire::result<std::size_t> emit_command(const profile& prof, const Control& control,
                                                 bytes data, mutable_bytes out) noexcept {
  std::array<std::uint8_t, wire::layout<Control>::size> c{};
  if (const auto r = wire::encode(control, c); !r) return r.err;
  return emit_command(prof, bytes(c), data, out);
}

}  // namespace scaleup::pack
