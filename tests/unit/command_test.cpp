// Commands inside a SUE PDU (R2 4.2 step 2a; decisions.md "Commands inside a PDU"): golden
// control bytes of every default command shape, written by hand from the layouts in
// default_profile.hpp (big-endian, bit 0 = most significant bit of byte 0); emit_command's
// framing and errors; the rules profile::check() enforces; and the unpacker's walk over
// well-formed and malformed payloads.
#include <scaleup/pack/command.hpp>
#include <scaleup/pack/default_profile.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"

namespace {

namespace pk = scaleup::pack;
namespace w = scaleup::wire;
using w::errc;

using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::hex;
using scaleup::test::ramp;

// emit_command of a typed control, into a buffer with a sentinel after it: the result must be
// exactly the bytes written, and nothing past them touched.
template <class Control>
byte_vector emit(const Control& c, const byte_vector& data = {}) {
  byte_vector out(pk::max_command_bytes + 8, 0xEE);
  const auto r = pk::emit_command(pk::default_profile, c, w::bytes(data), w::mutable_bytes(out));
  REQUIRE(r.ok());
  REQUIRE(*r <= out.size());
  CHECK(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(*r), out.end(),
                    [](std::uint8_t b) { return b == 0xEE; }));
  out.resize(*r);
  return out;
}

const pk::command_type& type_of(std::uint8_t code) {
  const pk::command_type* t = pk::default_profile.find(code);
  REQUIRE(t != nullptr);
  return *t;
}

// Everything the unpacker produced for a payload, copied out of the views.
struct walked {
  std::vector<pk::command_view> views;
  w::error err;
  std::size_t count = 0;
  std::size_t padding = 0;
  std::size_t consumed = 0;
};

walked walk(const pk::profile& prof, w::bytes payload, std::size_t base = 0) {
  walked r;
  pk::unpacker u(prof, payload, base);
  pk::command_view v;
  while (u.next(v)) r.views.push_back(v);
  // Once it has stopped, it stays stopped.
  CHECK_FALSE(u.next(v));
  r.err = u.error_found();
  r.count = u.count();
  r.padding = u.padding();
  r.consumed = u.consumed();
  return r;
}

// ---- a user profile, as an XPU would bring its own ------------------------------------------

constexpr std::array<w::field_info, 2> ping_fields{{
    {.name = "type", .filter = "user.type", .bit = 0, .width = 8},
    {.name = "token", .filter = "user.token", .bit = 8, .width = 8},
}};
constexpr std::array<w::field_info, 4> bulk_fields{{
    {.name = "type", .filter = "user.type", .bit = 0, .width = 8},
    {.name = "data length - 1", .filter = "user.dlen", .bit = 8, .width = 8},
    {.name = "key", .filter = "user.key", .bit = 16, .width = 64},
    {.name = "cookie", .filter = "user.cookie", .bit = 80, .width = 64},
}};
constexpr std::array<pk::command_type, 2> user_types{{
    {.code = 0x10, .name = "PING", .control_units = 1, .has_data = false, .fields = ping_fields},
    {.code = 0x11, .name = "BULK", .control_units = 9, .has_data = true, .fields = bulk_fields},
}};
constexpr pk::profile user_profile{"user", user_types, "two types of a made-up XPU"};
static_assert(user_profile.check().empty());

// ---- broken profiles: each breaks one framing rule ------------------------------------------

constexpr std::array<pk::command_type, 2> dup_types{{
    {.code = 0x20, .control_units = 1},
    {.code = 0x20, .control_units = 2},
}};
constexpr std::array<pk::command_type, 1> zero_code_types{{{.code = 0, .control_units = 1}}};
constexpr std::array<pk::command_type, 1> zero_units_types{{{.code = 0x21, .control_units = 0}}};
constexpr std::array<pk::command_type, 1> ten_units_types{{{.code = 0x22, .control_units = 10}}};
constexpr std::array<pk::command_type, 1> nine_units_types{{{.code = 0x22, .control_units = 9}}};
// A gap: 0..8 then 16..32.
constexpr std::array<w::field_info, 2> gap_fields{{
    {.name = "type", .filter = "t.type", .bit = 0, .width = 8},
    {.name = "x", .filter = "t.x", .bit = 16, .width = 16},
}};
// An overlap: 0..8 then 4..32.
constexpr std::array<w::field_info, 2> overlap_fields{{
    {.name = "type", .filter = "t.type", .bit = 0, .width = 8},
    {.name = "x", .filter = "t.x", .bit = 4, .width = 28},
}};
// Tiles 0..24 of a 32-bit control: the last byte is not covered.
constexpr std::array<w::field_info, 2> short_fields{{
    {.name = "type", .filter = "t.type", .bit = 0, .width = 8},
    {.name = "x", .filter = "t.x", .bit = 8, .width = 16},
}};
// Tiles the control, but the type is 16 bits wide.
constexpr std::array<w::field_info, 2> wide_type_fields{{
    {.name = "type", .filter = "t.type", .bit = 0, .width = 16},
    {.name = "x", .filter = "t.x", .bit = 16, .width = 16},
}};
// Data type whose second field is not the 8-bit data length.
constexpr std::array<w::field_info, 2> no_dlen_fields{{
    {.name = "type", .filter = "t.type", .bit = 0, .width = 8},
    {.name = "x", .filter = "t.x", .bit = 8, .width = 24},
}};
// Fields that do not start at bit 0.
constexpr std::array<w::field_info, 1> late_fields{
    {{.name = "type", .filter = "t.type", .bit = 8, .width = 24}}};
// Filter names: one a display filter (and JSON) cannot take, one twice in a type, one the
// engine's.
constexpr std::array<w::field_info, 2> quoted_fields{{
    {.name = "type", .filter = "t.type", .bit = 0, .width = 8},
    {.name = "x", .filter = "t.\"x\"", .bit = 8, .width = 24},
}};
constexpr std::array<w::field_info, 2> twice_fields{{
    {.name = "type", .filter = "t.x", .bit = 0, .width = 8},
    {.name = "x", .filter = "t.x", .bit = 8, .width = 24},
}};
constexpr std::array<w::field_info, 2> engine_named_fields{{
    {.name = "type", .filter = "t.type", .bit = 0, .width = 8},
    {.name = "x", .filter = "sue.cmd.data_len", .bit = 8, .width = 24},
}};
constexpr std::array<pk::command_type, 1> quoted_types{
    {{.code = 0x23, .control_units = 2, .fields = quoted_fields}}};
constexpr std::array<pk::command_type, 1> twice_types{
    {{.code = 0x23, .control_units = 2, .fields = twice_fields}}};
constexpr std::array<pk::command_type, 1> engine_named_types{
    {{.code = 0x23, .control_units = 2, .fields = engine_named_fields}}};
constexpr std::array<pk::command_type, 1> gap_types{
    {{.code = 0x23, .control_units = 2, .fields = gap_fields}}};
constexpr std::array<pk::command_type, 1> overlap_types{
    {{.code = 0x23, .control_units = 2, .fields = overlap_fields}}};
constexpr std::array<pk::command_type, 1> short_types{
    {{.code = 0x23, .control_units = 2, .fields = short_fields}}};
constexpr std::array<pk::command_type, 1> wide_type_types{
    {{.code = 0x23, .control_units = 2, .fields = wide_type_fields}}};
constexpr std::array<pk::command_type, 1> no_dlen_types{
    {{.code = 0x23, .control_units = 2, .has_data = true, .fields = no_dlen_fields}}};
constexpr std::array<pk::command_type, 1> late_types{
    {{.code = 0x23, .control_units = 2, .fields = late_fields}}};

constexpr pk::profile dup_profile{"dup", dup_types};
constexpr pk::profile zero_code_profile{"zero code", zero_code_types};
constexpr pk::profile zero_units_profile{"zero units", zero_units_types};
constexpr pk::profile ten_units_profile{"ten units", ten_units_types};
constexpr pk::profile nine_units_profile{"nine units", nine_units_types};
constexpr pk::profile gap_profile{"gap", gap_types};
constexpr pk::profile overlap_profile{"overlap", overlap_types};
constexpr pk::profile short_profile{"short", short_types};
constexpr pk::profile wide_type_profile{"wide type", wide_type_types};
constexpr pk::profile no_dlen_profile{"no dlen", no_dlen_types};
constexpr pk::profile late_profile{"late", late_types};
constexpr pk::profile quoted_profile{"quoted", quoted_types};
constexpr pk::profile twice_profile{"twice", twice_types};
constexpr pk::profile engine_named_profile{"engine named", engine_named_types};
constexpr pk::profile empty_profile{"empty", std::span<const pk::command_type>{}};

// check() is usable where it is meant to be used: in a static_assert.
static_assert(!dup_profile.check().empty());
static_assert(!ten_units_profile.check().empty());

}  // namespace

// ---- golden control bytes ---------------------------------------------------------------------

TEST_CASE("command: golden bytes of the read request (RD, 6 units, no data)") {
  // type 0A | read length - 1 | tag (16) | address (64)
  const pk::cmd_read c{
      .type = pk::code::read, .dlen = 0x3F, .tag = 0x1234, .addr = 0x0102030405060708};
  // No data: byte 1 is the read length and is written as given.
  CHECK(hex(emit(c)) == "0A 3F 12 34 01 02 03 04 05 06 07 08");
}

TEST_CASE("command: golden bytes of the full writes (WR_FULL, WR_FULL_P)") {
  // type | data length - 1 | tag | address; then the data.
  pk::cmd_write c{
      .type = pk::code::write_full, .dlen = 0x00, .tag = 0xBEEF, .addr = 0x1122334455667788};
  // dlen says 0 (1 byte), the data is 4 bytes: byte 1 follows the data.
  CHECK(hex(emit(c, {0xDE, 0xAD, 0xBE, 0xEF})) ==
        "04 03 BE EF 11 22 33 44 55 66 77 88 DE AD BE EF");
  c.type = pk::code::write_full_posted;
  c.dlen = 0x77;
  CHECK(hex(emit(c, {0x42})) == "02 00 BE EF 11 22 33 44 55 66 77 88 42");
}

TEST_CASE("command: golden bytes of the partial writes (WR_PART, WR_PART_P)") {
  // type | dlen | tag | address (64) | be_first | be_last | reserved (16)
  pk::cmd_write_partial c{.type = pk::code::write_partial,
                          .dlen = 0x99,
                          .tag = 0x0001,
                          .addr = 0xA0A1A2A3A4A5A6A7,
                          .be_first = 0x0F,
                          .be_last = 0xF0};
  CHECK(hex(emit(c, ramp(9, 0x10))) ==
        "08 08 00 01 A0 A1 A2 A3 A4 A5 A6 A7 0F F0 00 00 "
        "10 11 12 13 14 15 16 17 18");
  c.type = pk::code::write_partial_posted;
  c.be_first = 0xFF;
  c.be_last = 0x01;
  CHECK(hex(emit(c, {0x33, 0x44})) == "06 01 00 01 A0 A1 A2 A3 A4 A5 A6 A7 FF 01 00 00 33 44");
}

TEST_CASE("command: golden bytes of the write response (WR_RSP, no data)") {
  // type 0E | reserved | tag | status | reserved
  const pk::cmd_response c{.type = pk::code::write_response, .dlen = 0, .tag = 0xCAFE, .status = 2};
  CHECK(hex(emit(c)) == "0E 00 CA FE 02 00");
}

TEST_CASE("command: golden bytes of the read and atomic responses (RD_RSP, ATOMIC_RSP)") {
  // type | data length - 1 | tag | status | reserved; then the data.
  pk::cmd_response_data c{};
  c.type = pk::code::read_response;
  c.tag = 0x0102;
  c.status = 1;
  CHECK(hex(emit(c, {0x5A})) == "0C 00 01 02 01 00 5A");
  // 256 bytes of read data: byte 1 = 0xFF.
  const byte_vector full = ramp(256, 0x00);
  const byte_vector out = emit(c, full);
  REQUIRE(out.size() == 6 + 256);
  CHECK(hex(w::bytes(out).first(6)) == "0C FF 01 02 01 00");
  CHECK(byte_vector(out.begin() + 6, out.end()) == full);

  c.type = pk::code::atomic_response;
  c.tag = 0xABCD;
  c.status = 0;
  CHECK(hex(emit(c, ramp(8, 0x90))) == "16 07 AB CD 00 00 90 91 92 93 94 95 96 97");
}

TEST_CASE("command: golden bytes of the message (MSG)") {
  // type 10 | data length - 1 | tag | queue (16); then the message.
  const pk::cmd_message c{.type = pk::code::message, .dlen = 0xFF, .tag = 0x7777, .queue = 0x0A0B};
  CHECK(hex(emit(c, {'h', 'i', '!'})) == "10 02 77 77 0A 0B 68 69 21");
}

TEST_CASE("command: golden bytes of the barrier (BARRIER, 2 units)") {
  const pk::cmd_barrier c{.type = pk::code::barrier, .dlen = 0, .tag = 0xFFFF};
  CHECK(hex(emit(c)) == "12 00 FF FF");
}

TEST_CASE("command: golden bytes of the atomic (ATOMIC, 7 units)") {
  // type 14 | dlen | tag | op | reserved | address (64); then the operands.
  const pk::cmd_atomic c{
      .type = pk::code::atomic, .dlen = 0, .tag = 0x0042, .op = 2, .addr = 0x0000000100000002};
  CHECK(hex(emit(c, ramp(16, 0x00))) ==
        "14 0F 00 42 02 00 00 00 00 01 00 00 00 02 "
        "00 01 02 03 04 05 06 07 08 09 0A 0B 0C 0D 0E 0F");
}

TEST_CASE("command: the profile's field tables read the golden bytes back") {
  const byte_vector rd = {0x0A, 0x3F, 0x12, 0x34, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08};
  const walked r = walk(pk::default_profile, rd);
  REQUIRE(r.views.size() == 1);
  const pk::command_view& v = r.views[0];
  std::size_t seen = 0;
  for (const auto& f : v.type->fields) {
    CAPTURE(f.filter);
    std::uint64_t want = 0;
    if (f.filter == "sue.cmd.type") {
      want = 0x0A;
    } else if (f.filter == "sue.cmd.rlen") {
      want = 0x3F;
    } else if (f.filter == "sue.cmd.tag") {
      want = 0x1234;
    } else if (f.filter == "sue.cmd.addr") {
      want = 0x0102030405060708;
    } else {
      continue;
    }
    ++seen;
    CHECK(v.field(f) == want);
  }
  CHECK(seen == 4);
  CHECK(v.type->name == "RD");
  CHECK(pk::default_profile.name_field().name_of(0x0A) == "RD");
  CHECK(pk::default_profile.name_field().name_of(0x16) == "ATOMIC_RSP");
  CHECK(pk::default_profile.name_field().name_of(0x00).empty());
}

// ---- the default profile's table ----------------------------------------------------------------

TEST_CASE("command: default profile control lengths, data and VCs per type") {
  CHECK(pk::default_profile.check().empty());
  CHECK(pk::default_profile.types().size() == 11);
  struct row {
    std::uint8_t code;
    std::uint8_t units;
    bool data;
    std::uint8_t vc;
  };
  // Units from the layouts: RD 12 B, WR 12 B, WR_PART 16 B, responses 6 B, MSG 6 B, BARRIER 4 B,
  // ATOMIC 14 B. Requests on VC0, responses on VC1 (R2 3.2.2).
  const row rows[] = {
      {pk::code::write_full_posted, 6, true, 0},
      {pk::code::write_full, 6, true, 0},
      {pk::code::write_partial_posted, 8, true, 0},
      {pk::code::write_partial, 8, true, 0},
      {pk::code::read, 6, false, 0},
      {pk::code::read_response, 3, true, 1},
      {pk::code::write_response, 3, false, 1},
      {pk::code::message, 3, true, 0},
      {pk::code::barrier, 2, false, 0},
      {pk::code::atomic, 7, true, 0},
      {pk::code::atomic_response, 3, true, 1},
  };
  for (const row& r : rows) {
    CAPTURE(int{r.code});
    const pk::command_type& t = type_of(r.code);
    CHECK(t.code == r.code);
    CHECK(t.control_units == r.units);
    CHECK(t.control_bytes() == 2u * r.units);
    CHECK(t.has_data == r.data);
    CHECK(t.vc == r.vc);
    CHECK_FALSE(t.fields.empty());
  }
  CHECK(pk::default_profile.find(0) == nullptr);
  CHECK(pk::default_profile.find(0x01) == nullptr);  // odd: never a type (SUE Lite's I/G bit)
  CHECK(pk::default_profile.find(0x18) == nullptr);
  CHECK(pk::default_profile.find(0xFF) == nullptr);
}

// ---- user and broken profiles -------------------------------------------------------------------

TEST_CASE("command: a user profile emits and unpacks") {
  CHECK(user_profile.check().empty());
  CHECK(user_profile.name() == "user");
  REQUIRE(user_profile.find(0x10) != nullptr);
  REQUIRE(user_profile.find(0x11) != nullptr);
  CHECK(user_profile.find(0x01) == nullptr);  // the default profile's codes mean nothing here

  // PING: 2 bytes, no data. BULK: 18 bytes of control, then data.
  const byte_vector ping = {0x10, 0xAB};
  byte_vector bulk_ctrl = ramp(18, 0x40);
  bulk_ctrl[0] = 0x11;
  const byte_vector bulk_data = {0x01, 0x02};
  byte_vector payload(64, 0xEE);
  std::size_t at = 0;
  for (const auto& [ctrl, data] : {std::pair{ping, byte_vector{}}, std::pair{bulk_ctrl, bulk_data},
                                   std::pair{byte_vector{0x10, 0xCD}, byte_vector{}}}) {
    const auto r = pk::emit_command(user_profile, w::bytes(ctrl), w::bytes(data),
                                    w::mutable_bytes(payload).subspan(at));
    REQUIRE(r.ok());
    at += *r;
  }
  REQUIRE(at == 2 + 18 + 2 + 2);
  payload.resize(at);
  CHECK(hex(w::bytes(payload).subspan(0, 4)) == "10 AB 11 01");  // byte 1 of BULK = 2 - 1

  const walked r = walk(user_profile, payload);
  CHECK_FALSE(r.err);
  REQUIRE(r.views.size() == 3);
  CHECK(r.views[0].type->name == "PING");
  CHECK(r.views[0].control.size() == 2);
  CHECK(r.views[0].data.empty());
  CHECK(r.views[1].type->name == "BULK");
  CHECK(r.views[1].offset == 2);
  CHECK(r.views[1].control.size() == 18);
  CHECK(r.views[1].data.size() == 2);
  CHECK(r.views[1].data.data() == payload.data() + 20);
  CHECK(r.views[1].field(bulk_fields[2]) == 0x4243444546474849);
  CHECK(r.views[2].offset == 22);
  CHECK(r.views[2].field(ping_fields[1]) == 0xCD);

  // The default profile cannot read it: 0x10 is its MSG, whose data (0xAB + 1 bytes) runs past
  // the payload.
  const walked d = walk(pk::default_profile, payload);
  CHECK(d.views.empty());
  CHECK(d.err.code == errc::truncated);
  CHECK(d.err.item == 1);
}

TEST_CASE("command: check() names the broken rule") {
  CHECK(dup_profile.check() == "a command type code appears twice");
  CHECK(zero_code_profile.check() == "type 0 is padding");
  CHECK(zero_units_profile.check() == "control length outside 1..9 units");
  CHECK(ten_units_profile.check() == "control length outside 1..9 units");
  CHECK(nine_units_profile.check().empty());  // 9 units, the 144-bit tx_control, is allowed
  CHECK(gap_profile.check() == "control fields do not tile the control");
  CHECK(overlap_profile.check() == "control fields do not tile the control");
  CHECK(late_profile.check() == "control fields do not tile the control");
  CHECK(short_profile.check() == "control fields do not cover the control");
  CHECK(wide_type_profile.check() == "the first control field must be the 8-bit type");
  CHECK(no_dlen_profile.check() == "a type with data must have the 8-bit data length second");
  CHECK(empty_profile.check().empty());
  CHECK(empty_profile.find(0x01) == nullptr);
  // Names are JSON keys and Wireshark fields as they are: display-filter names, once each.
  CHECK(quoted_profile.check() ==
        "a field's filter name has a character other than a letter, a digit, '.', '_' or '-'");
  CHECK(twice_profile.check() == "a filter name appears twice in a command type");
  CHECK(engine_named_profile.check() ==
        "a field's filter name is one the engine gives every command (sue.cmd.name, "
        "sue.cmd.control_len, sue.cmd.data_len)");
}

// ---- emit_command
// --------------------------------------------------------------------------------

TEST_CASE("command: emit_command writes control then data, byte 1 = data length - 1") {
  for (const std::size_t n :
       {std::size_t{1}, std::size_t{2}, std::size_t{200}, std::size_t{255}, std::size_t{256}}) {
    CAPTURE(n);
    byte_vector ctrl = ramp(12, 0x30);
    ctrl[0] = pk::code::write_full;
    ctrl[1] = 0x5C;  // whatever the caller left there
    const byte_vector data = ramp(n, 0x01);
    byte_vector out(400, 0xEE);
    const auto r = pk::emit_command(pk::default_profile, w::bytes(ctrl), w::bytes(data),
                                    w::mutable_bytes(out));
    REQUIRE(r.ok());
    REQUIRE(*r == 12 + n);
    byte_vector want = cat({ctrl, data});
    want[1] = static_cast<std::uint8_t>(n - 1);
    CHECK(byte_vector(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(*r)) == want);
    CHECK(out[*r] == 0xEE);
  }
  // No data: byte 1 is the type's own (a read length, a reserved byte) and stays as given.
  byte_vector rd = ramp(12, 0x30);
  rd[0] = pk::code::read;
  byte_vector out(12, 0xEE);
  const auto r = pk::emit_command(pk::default_profile, w::bytes(rd), {}, w::mutable_bytes(out));
  REQUIRE(r.ok());
  CHECK(*r == 12);
  CHECK(out == rd);
}

TEST_CASE("command: emit_command errors") {
  byte_vector out(400, 0xEE);
  const byte_vector untouched = out;
  const auto emit_raw = [&](const byte_vector& ctrl, const byte_vector& data,
                            std::size_t out_size = 400) {
    return pk::emit_command(pk::default_profile, w::bytes(ctrl), w::bytes(data),
                            w::mutable_bytes(out).first(out_size));
  };
  byte_vector wr(12, 0);
  wr[0] = pk::code::write_full;

  SUBCASE("unknown type") {
    byte_vector c = wr;
    c[0] = 0x7E;
    const auto r = emit_raw(c, {1});
    CHECK(r.err.code == errc::bad_value);
    CHECK(r.err.layer == "sue.cmd");
    CHECK(r.err.field == "sue.cmd.type");
    CHECK(r.err.value == 0x7E);
  }
  SUBCASE("type 0 is padding, not a type") {
    const auto r = emit_raw(byte_vector(12, 0), {1});
    CHECK(r.err.code == errc::bad_value);
    CHECK(r.err.field == "sue.cmd.type");
  }
  SUBCASE("empty control") {
    const auto r = emit_raw({}, {});
    CHECK(r.err.code == errc::truncated);
    CHECK(r.err.layer == "sue.cmd");
  }
  SUBCASE("control length wrong (raw)") {
    byte_vector c = wr;
    c.resize(10);
    const auto r = emit_raw(c, {1});
    CHECK(r.err.code == errc::bad_length);
    CHECK(r.err.layer == "sue.cmd");
    CHECK(r.err.needed == 12);
    CHECK(r.err.available == 10);
    c.resize(14);
    CHECK(emit_raw(c, {1}).err.code == errc::bad_length);
  }
  SUBCASE("control length wrong (a typed control of another shape)") {
    // A 4-byte barrier struct naming the 12-byte read.
    const pk::cmd_barrier c{.type = pk::code::read};
    const auto r = pk::emit_command(pk::default_profile, c, {}, w::mutable_bytes(out));
    CHECK(r.err.code == errc::bad_length);
    CHECK(r.err.needed == 12);
    CHECK(r.err.available == 4);
  }
  SUBCASE("data on a no-data type") {
    byte_vector c(12, 0);
    c[0] = pk::code::read;
    const auto r = emit_raw(c, {1, 2});
    CHECK(r.err.code == errc::bad_length);
    CHECK(r.err.layer == "sue.cmd");
    CHECK(r.err.field == "sue.cmd.data_len");
    CHECK(r.err.available == 2);
  }
  SUBCASE("no data on a data type") {
    const auto r = emit_raw(wr, {});
    CHECK(r.err.code == errc::bad_length);
    CHECK(r.err.layer == "sue.cmd");
    CHECK(r.err.field == "sue.cmd.data_len");
    CHECK(r.err.available == 0);
  }
  SUBCASE("257 bytes of data") {
    const auto r = emit_raw(wr, byte_vector(257, 1));
    CHECK(r.err.code == errc::bad_length);
    CHECK(r.err.layer == "sue.cmd");
    CHECK(r.err.field == "sue.cmd.data_len");
    CHECK(r.err.value == 257);
  }
  SUBCASE("output too small") {
    const auto r = emit_raw(wr, byte_vector(20, 1), 31);
    CHECK(r.err.code == errc::no_space);
    CHECK(r.err.layer == "sue.cmd");
    CHECK(r.err.needed == 32);
    CHECK(r.err.available == 31);
    // Exactly enough is enough.
    CHECK(emit_raw(wr, byte_vector(20, 1), 32).ok());
    out = untouched;
  }
  SUBCASE("a write response given data is refused") {
    pk::cmd_response c{};  // the write response carries no data
    CHECK(
        pk::emit_command(pk::default_profile, c, byte_vector{1}, w::mutable_bytes(out)).err.code ==
        errc::bad_length);
    // The data-carrying shape defaults to the read response, which takes it.
    static_assert(pk::cmd_response_data{}.type == pk::code::read_response);
  }
  // Nothing is written when the command is refused.
  CHECK(out == untouched);
}

// ---- unpacker
// -------------------------------------------------------------------------------------

namespace {

// RD (12) | WR_FULL_P (12 + 3) | BARRIER (4) | MSG (6 + 1) | WR_RSP (6): 44 bytes.
byte_vector five_commands() {
  const byte_vector rd = {0x0A, 0x07, 0x00, 0x01, 1, 2, 3, 4, 5, 6, 7, 8};
  const byte_vector wr = {0x02, 0x02, 0x00, 0x02, 9, 9, 9, 9, 9, 9, 9, 9, 0xD0, 0xD1, 0xD2};
  const byte_vector bar = {0x12, 0x00, 0x00, 0x03};
  const byte_vector msg = {0x10, 0x00, 0x00, 0x04, 0x00, 0x11, 0xE0};
  const byte_vector rsp = {0x0E, 0x00, 0x00, 0x05, 0x00, 0x00};
  return cat({rd, wr, bar, msg, rsp});
}

}  // namespace

TEST_CASE("command: unpacker walks a payload by hand, without copying") {
  const byte_vector p = five_commands();
  REQUIRE(p.size() == 44);
  for (const std::size_t base : {std::size_t{0}, std::size_t{100}}) {
    CAPTURE(base);
    const walked r = walk(pk::default_profile, p, base);
    CHECK_FALSE(r.err);
    CHECK(r.count == 5);
    CHECK(r.padding == 0);
    CHECK(r.consumed == 44);  // the last command ends exactly at the payload end
    REQUIRE(r.views.size() == 5);
    struct want {
      std::uint8_t code;
      std::size_t offset;
      std::size_t ctrl;
      std::size_t data;
    };
    const want ws[] = {
        {0x0A, 0, 12, 0}, {0x02, 12, 12, 3}, {0x12, 27, 4, 0}, {0x10, 31, 6, 1}, {0x0E, 38, 6, 0}};
    for (std::size_t i = 0; i < 5; ++i) {
      CAPTURE(i);
      const pk::command_view& v = r.views[i];
      REQUIRE(v.type != nullptr);
      CHECK(v.type->code == ws[i].code);
      CHECK(v.code() == ws[i].code);
      CHECK(v.type == pk::default_profile.find(ws[i].code));
      CHECK(v.index == i + 1);
      CHECK(v.offset == base + ws[i].offset);
      // Views into the payload itself.
      CHECK(v.control.data() == p.data() + ws[i].offset);
      CHECK(v.control.size() == ws[i].ctrl);
      CHECK(v.data.size() == ws[i].data);
      if (ws[i].data > 0) CHECK(v.data.data() == p.data() + ws[i].offset + ws[i].ctrl);
      CHECK(v.size() == ws[i].ctrl + ws[i].data);
    }
    CHECK(hex(r.views[1].data) == "D0 D1 D2");
    CHECK(hex(r.views[3].data) == "E0");
  }
}

TEST_CASE("command: unpacker edge cases that are not errors") {
  SUBCASE("empty payload") {
    const walked r = walk(pk::default_profile, {});
    CHECK(r.views.empty());
    CHECK_FALSE(r.err);
    CHECK(r.count == 0);
    CHECK(r.padding == 0);
    CHECK(r.consumed == 0);
  }
  SUBCASE("trailing zeros are padding") {
    for (const std::size_t n : {std::size_t{1}, std::size_t{5}, std::size_t{60}}) {
      CAPTURE(n);
      byte_vector p = five_commands();
      p.resize(p.size() + n, 0);
      const walked r = walk(pk::default_profile, p);
      CHECK_FALSE(r.err);
      CHECK(r.views.size() == 5);
      CHECK(r.padding == n);
      CHECK(r.consumed == 44);
    }
  }
  SUBCASE("only padding") {
    const walked r = walk(pk::default_profile, byte_vector(46, 0));
    CHECK_FALSE(r.err);
    CHECK(r.views.empty());
    CHECK(r.padding == 46);
    CHECK(r.consumed == 0);
  }
  SUBCASE("zeros inside a command's data are data, not padding") {
    const byte_vector p = {0x10, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00};
    const walked r = walk(pk::default_profile, p);
    CHECK_FALSE(r.err);
    REQUIRE(r.views.size() == 1);
    CHECK(r.views[0].data.size() == 4);
    CHECK(r.padding == 0);
  }
  SUBCASE("data length boundaries: dlen 0x00 is 1 byte, 0xFF is 256") {
    byte_vector one = {0x10, 0x00, 0, 0, 0, 0, 0x77};
    byte_vector big = {0x10, 0xFF, 0, 0, 0, 0};
    const byte_vector d256 = ramp(256, 0x00);
    big.insert(big.end(), d256.begin(), d256.end());
    const byte_vector p = cat({one, big, one});
    const walked r = walk(pk::default_profile, p);
    CHECK_FALSE(r.err);
    REQUIRE(r.views.size() == 3);
    CHECK(r.views[0].data.size() == 1);
    CHECK(r.views[1].data.size() == 256);
    CHECK(r.views[1].data.data() == p.data() + 7 + 6);
    CHECK(byte_vector(r.views[1].data.begin(), r.views[1].data.end()) == d256);
    CHECK(r.views[2].offset == 7 + 6 + 256);
    CHECK(r.consumed == p.size());
  }
}

TEST_CASE("command: unpacker errors stop the walk and name the command") {
  const byte_vector good = five_commands();

  SUBCASE("unknown type in the middle") {
    byte_vector p = good;
    p[27] = 0x7E;  // the barrier's type byte
    const walked r = walk(pk::default_profile, p, 10);
    REQUIRE(r.views.size() == 2);  // RD and WR_FULL_P, nothing after
    CHECK(r.views[1].index == 2);
    CHECK(r.err.code == errc::bad_value);
    CHECK(r.err.layer == "sue.cmd");
    CHECK(r.err.field == "sue.cmd.type");
    CHECK(r.err.value == 0x7E);
    CHECK(r.err.item == 3);
    CHECK(r.err.offset == 10 + 27);
    CHECK(r.count == 2);
    CHECK(r.consumed == 27);
  }
  SUBCASE("unknown type first") {
    byte_vector p = good;
    p[0] = 0xFF;
    const walked r = walk(pk::default_profile, p);
    CHECK(r.views.empty());
    CHECK(r.err.code == errc::bad_value);
    CHECK(r.err.item == 1);
    CHECK(r.err.offset == 0);
  }
  SUBCASE("control cut off") {
    // RD, then 5 of the 12 bytes of a WR_FULL control.
    const byte_vector p(good.begin(), good.begin() + 12 + 5);
    const walked r = walk(pk::default_profile, p, 4);
    REQUIRE(r.views.size() == 1);
    CHECK(r.err.code == errc::truncated);
    CHECK(r.err.layer == "sue.cmd");
    CHECK(r.err.needed == 12);
    CHECK(r.err.available == 5);
    CHECK(r.err.item == 2);
    CHECK(r.err.offset == 4 + 12);
  }
  SUBCASE("a lone type byte") {
    const byte_vector p = {0x12};
    const walked r = walk(pk::default_profile, p);
    CHECK(r.err.code == errc::truncated);
    CHECK(r.err.needed == 4);
    CHECK(r.err.available == 1);
    CHECK(r.err.item == 1);
  }
  SUBCASE("data cut off") {
    // RD, then a WR_FULL_P that announces 3 bytes of data and has 2.
    const byte_vector p(good.begin(), good.begin() + 12 + 12 + 2);
    const walked r = walk(pk::default_profile, p);
    REQUIRE(r.views.size() == 1);
    CHECK(r.err.code == errc::truncated);
    CHECK(r.err.layer == "sue.cmd");
    CHECK(r.err.needed == 15);  // control + data
    CHECK(r.err.available == 14);
    CHECK(r.err.field == "sue.cmd.data_len");
    CHECK(r.err.value == 3);
    CHECK(r.err.item == 2);
    CHECK(r.err.offset == 12);
  }
  SUBCASE("data cut off by one at 256") {
    byte_vector p = {0x10, 0xFF, 0, 0, 0, 0};
    p.resize(6 + 255, 0x11);
    const walked r = walk(pk::default_profile, p);
    CHECK(r.err.code == errc::truncated);
    CHECK(r.err.needed == 262);
    CHECK(r.err.available == 261);
  }
  SUBCASE("zero type byte followed by a non-zero byte") {
    byte_vector p = good;
    p.insert(p.end(), {0x00, 0x00, 0x05});
    const walked r = walk(pk::default_profile, p, 2);
    CHECK(r.views.size() == 5);  // the commands before it are delivered
    CHECK(r.err.code == errc::bad_value);
    CHECK(r.err.layer == "sue.cmd");
    CHECK(r.err.field == "sue.cmd.type");
    CHECK(r.err.item == 6);         // the would-be sixth command
    CHECK(r.err.offset == 2 + 44);  // where the zeros start
    CHECK(r.padding == 0);
  }
  SUBCASE("padding with garbage far after it") {
    byte_vector p(40, 0);
    p[39] = 0x80;
    const walked r = walk(pk::default_profile, p);
    CHECK(r.views.empty());
    CHECK(r.err.code == errc::bad_value);
    CHECK(r.err.item == 1);
    CHECK(r.err.offset == 0);
  }
  SUBCASE("a zero type between two commands") {
    // RD, a zero byte, then a barrier: not padding, and the barrier is never delivered.
    const byte_vector p = cat({byte_vector(good.begin(), good.begin() + 12), byte_vector{0x00},
                               byte_vector{0x12, 0x00, 0x00, 0x00}});
    const walked r = walk(pk::default_profile, p);
    CHECK(r.views.size() == 1);
    CHECK(r.err.code == errc::bad_value);
    CHECK(r.err.item == 2);
    CHECK(r.err.offset == 12);
  }
}

TEST_CASE("command: frame_command sizes one command") {
  const byte_vector p = five_commands();
  std::size_t size = 0;
  const pk::command_type* t = nullptr;
  CHECK_FALSE(pk::frame_command(pk::default_profile, w::bytes(p).subspan(12), 12, 2, size, t));
  CHECK(size == 15);
  REQUIRE(t != nullptr);
  CHECK(t->code == pk::code::write_full_posted);
  // On error the outputs are left alone.
  size = 99;
  t = nullptr;
  const w::error e =
      pk::frame_command(pk::default_profile, w::bytes(p).subspan(12, 14), 12, 7, size, t);
  CHECK(e.code == errc::truncated);
  CHECK(e.item == 7);
  CHECK(e.offset == 12);
  CHECK(size == 99);
  CHECK(t == nullptr);
}
