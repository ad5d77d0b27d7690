// The dissection engine reading packed commands with a profile: the tree, JSON and text, the
// R-CRC found at a command boundary in padded frames, SUE Lite padding, malformed commands.
// Command bytes are written by hand from the default profile's layouts (docs/wire-format.md).
#include <scaleup/dissect/analysis.hpp>
#include <scaleup/dissect/engine.hpp>
#include <scaleup/dissect/field_tree.hpp>
#include <scaleup/dissect/frame_json.hpp>
#include <scaleup/dissect/summary.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/wire/frame.hpp>

#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace w = scaleup::wire;
namespace pk = scaleup::pack;
using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::contains;
using scaleup::test::render;

using scaleup::test::barrier;  // BARRIER, tag 7
using scaleup::test::write5;   // WR_FULL, tag 0x1234, 5 data bytes A1..A5
// WR_RSP: type 0E, reserved, tag 0x1234, status SLVERR (2), reserved.
const byte_vector wr_rsp{0x0E, 0x00, 0x12, 0x34, 0x02, 0x00};
// WR_FULL whose data ends in zero bytes: 3 bytes 11 00 00.
const byte_vector write_zeros{0x04, 0x02, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
                              0x00, 0x00, 0x00, 0x08, 0x11, 0x00, 0x00};

byte_vector frame(w::encap e, const byte_vector& payload) {
  w::frame_params p;
  p.kind = e;
  p.src_xpu = 3;
  p.dst_xpu = 4;
  w::reliability_header rh;
  rh.xpuid = 3;
  rh.npsn = 9;
  byte_vector out(8192);
  const auto r =
      e == w::encap::lite ? w::emit_frame(p, payload, out) : w::emit_sue_frame(p, rh, payload, out);
  REQUIRE(r.ok());
  out.resize(r.value);
  return out;
}

struct commands_dissected {
  byte_vector bytes;
  std::unique_ptr<d::large_tree> tree = std::make_unique<d::large_tree>();
  const d::large_tree* operator->() const { return tree.get(); }
};

commands_dissected dissect_pdu(byte_vector f, const d::options& o = {}) {
  commands_dissected r{std::move(f)};
  d::dissect_frame(*r.tree, w::bytes(r.bytes.data(), r.bytes.size()), d::link_ethernet, o);
  return r;
}

std::vector<const d::layer_node*> commands_of(const d::large_tree& t) {
  std::vector<const d::layer_node*> out;
  for (const auto& l : t.layer_list())
    if (l.list == "sue.cmds") out.push_back(&l);
  return out;
}

std::uint64_t member(const d::large_tree& t, const d::layer_node* l, std::string_view filter) {
  const auto li = static_cast<std::size_t>(l - t.layers.data());
  for (const auto& f : t.field_list())
    if (f.layer == li && f.info->filter == filter) return f.value;
  FAIL("no field " << filter);
  return 0;
}

}  // namespace

TEST_CASE("dissect commands: each command is a layer with its table's fields") {
  const auto t = dissect_pdu(frame(w::encap::udp4, cat({write5, barrier, wr_rsp})));
  CHECK(t->encap == "udp4");
  CHECK(t->error_count == 0);
  const auto cmds = commands_of(*t.tree);
  REQUIRE(cmds.size() == 3);
  // udp4: the payload starts after 14 + 20 + 8 + 8 (RH) bytes.
  CHECK(cmds[0]->offset == 50);
  CHECK(cmds[0]->length == 17);
  CHECK(cmds[1]->offset == 67);
  CHECK(cmds[2]->offset == 71);
  CHECK(member(*t.tree, cmds[0], "sue.cmd.type") == 0x04);
  CHECK(member(*t.tree, cmds[0], "sue.cmd.tag") == 0x1234);
  CHECK(member(*t.tree, cmds[0], "sue.cmd.addr") == 0x1000);
  CHECK(member(*t.tree, cmds[0], "sue.cmd.dlen") == 4);
  CHECK(member(*t.tree, cmds[0], "sue.cmd.data_len") == 5);
  CHECK(member(*t.tree, cmds[0], "sue.cmd.control_len") == 12);
  CHECK(member(*t.tree, cmds[1], "sue.cmd.tag") == 7);
  CHECK(member(*t.tree, cmds[1], "sue.cmd.data_len") == 0);
  CHECK(member(*t.tree, cmds[2], "sue.cmd.status") == 2);
  CHECK(t->find("sue.payload.len")->value == 27);
  CHECK(t->find("sue.rcrc.status")->value_name() == "good");
}

// A command's names are distinct when its profile passed check(): the JSON printer then takes
// them as they lie. A profile that did not (one name twice in a type) still gets each name
// once, its values in an array.
TEST_CASE("dissect commands: JSON of a profile that check() refuses gathers a repeated name") {
  static constexpr std::array<w::field_info, 3> twice{
      pk::type_field, w::field_info{.name = "x", .filter = "sue.cmd.x", .bit = 8, .width = 4},
      w::field_info{.name = "x", .filter = "sue.cmd.x", .bit = 12, .width = 4}};
  static constexpr std::array<w::field_info, 3> once{
      pk::type_field, w::field_info{.name = "x", .filter = "sue.cmd.x", .bit = 8, .width = 4},
      w::field_info{.name = "y", .filter = "sue.cmd.y", .bit = 12, .width = 4}};
  static constexpr std::array<pk::command_type, 1> refused{
      pk::command_type{.code = 0x21, .name = "T", .fields = twice}};
  static constexpr std::array<pk::command_type, 1> fine{
      pk::command_type{.code = 0x21, .name = "T", .fields = once}};
  const pk::profile bad("bad", refused), good("good", fine);
  CHECK(!bad.checked());
  CHECK(bad.check() == "a filter name appears twice in a command type");
  CHECK(good.checked());
  const auto json_with = [](const pk::profile& p) {
    d::options o;
    o.profile = &p;
    const auto t = dissect_pdu(frame(w::encap::udp4, {0x21, 0x5A, 0x21, 0x3C}), o);
    return render([&](auto& out) { d::put_json(out, *t.tree, 1); });
  };
  CHECK(contains(json_with(bad),
                 "\"sue.cmds\":[{\"sue.cmd.type\":33,\"sue.cmd.x\":[5,10],"
                 "\"sue.cmd.name\":\"T\",\"sue.cmd.control_len\":2,"
                 "\"sue.cmd.data_len\":0},{\"sue.cmd.type\":33,"
                 "\"sue.cmd.x\":[3,12],"));
  CHECK(contains(json_with(good),
                 "\"sue.cmds\":[{\"sue.cmd.type\":33,\"sue.cmd.x\":5,"
                 "\"sue.cmd.y\":10,\"sue.cmd.name\":\"T\","));
}

TEST_CASE("dissect commands: a field a profile lets run past its control reads zeros there") {
  // Two-byte controls; "x" takes bits 12-19, the last four past the control. The bytes after
  // the control (the next command's) are in the frame, and are not the field's.
  static constexpr std::array<w::field_info, 2> past{
      pk::type_field, w::field_info{.name = "x", .filter = "sue.cmd.x", .bit = 12, .width = 8}};
  static constexpr std::array<pk::command_type, 1> types{
      pk::command_type{.code = 0x21, .name = "T", .fields = past}};
  const pk::profile p("past", types);
  CHECK(!p.checked());
  d::options o;
  o.profile = &p;
  const auto t = dissect_pdu(frame(w::encap::udp4, {0x21, 0x5A, 0x21, 0x3C}), o);
  const std::string json = render([&](auto& out) { d::put_json(out, *t.tree, 1); });
  CHECK(contains(json, "\"sue.cmds\":[{\"sue.cmd.type\":33,\"sue.cmd.x\":160,"));  // 0xA0
  CHECK(contains(json, "{\"sue.cmd.type\":33,\"sue.cmd.x\":192,"));                // 0xC0
}

TEST_CASE("dissect commands: JSON lists them under sue.cmds, text gives one line each") {
  const auto t = dissect_pdu(frame(w::encap::udp4, cat({write5, wr_rsp})));
  const std::string json = render([&](auto& out) { d::put_json(out, *t.tree, 1); });
  CHECK(json.find("\"sue.cmds\":[{\"sue.cmd.type\":4,\"sue.cmd.dlen\":4,\"sue.cmd.tag\":4660,"
                  "\"sue.cmd.addr\":4096,\"sue.cmd.name\":\"WR_FULL\",\"sue.cmd.control_len\":12,"
                  "\"sue.cmd.data_len\":5},{\"sue.cmd.type\":14,\"sue.cmd.tag\":4660,"
                  "\"sue.cmd.status\":2,\"sue.cmd.name\":\"WR_RSP\",\"sue.cmd.control_len\":6,"
                  "\"sue.cmd.data_len\":0}]") != std::string::npos);
  // Reserved command fields stay out of JSON; top-level keys are not repeated per command.
  CHECK(json.find("sue.cmd.rsvd") == std::string::npos);
  CHECK(json.find("\"sue.rh.xpuid\":3") != std::string::npos);
  const std::string line = render([&](auto& out) { d::put_summary(out, *t.tree, 1); });
  CHECK(line.find("cmds=2") != std::string::npos);
  CHECK(line.find("cmd    1  WR_FULL    ctrl=12 data=5") != std::string::npos);
  CHECK(line.find("cmd    2  WR_RSP     ctrl=6 data=0") != std::string::npos);
  const std::string tree = render([&](auto& out) { d::put_verbose(out, *t.tree, 1); });
  CHECK(tree.find("status: 2 (SLVERR)") != std::string::npos);
}

TEST_CASE("dissect commands: the R-CRC of a padded frame sits at a command boundary") {
  // afh2c: 8 header bytes + 8 RH + 15 command bytes + 4 R-CRC = 35, padded to 60. The command
  // ends in two zero bytes, which a search over zeros alone could not tell from padding.
  const auto t = dissect_pdu(frame(w::encap::afh2c, write_zeros));
  CHECK(t->encap == "afh2c");
  CHECK(t->error_count == 0);
  CHECK(t->find("sue.payload.len")->value == 15);
  CHECK(t->find("sue.rcrc.status")->value_name() == "good");
  REQUIRE(commands_of(*t.tree).size() == 1);
  CHECK(member(*t.tree, commands_of(*t.tree)[0], "sue.cmd.data_len") == 3);
  const auto pad = t->find_layer("sue.pad");
  REQUIRE(pad != nullptr);
  CHECK(pad->offset == 35);
  CHECK(pad->length == 25);
}

TEST_CASE("dissect commands: SUE Lite padding is not payload") {
  const auto t = dissect_pdu(frame(w::encap::lite, cat({barrier, wr_rsp})));
  CHECK(t->encap == "lite");
  CHECK(t->error_count == 0);
  CHECK(t->frame_length == 60);
  CHECK(t->find("sue_lite.len")->value == 10);
  CHECK(commands_of(*t.tree).size() == 2);
  // Opaque, the same frame's padding counts as payload.
  d::options opaque;
  opaque.profile = nullptr;
  const auto o = dissect_pdu(frame(w::encap::lite, cat({barrier, wr_rsp})), opaque);
  CHECK(o->find("sue_lite.len")->value == 54);
  CHECK(commands_of(*o.tree).empty());
}

// What the profile cannot parse is opaque bytes, not a fault of the PDU: the
// commands before it, then one "sue.opaque" layer to the end of the payload, and a warning
// naming where the parse stopped and why; the PDU stays in the analysis.
const d::layer_node* opaque_layer(const d::large_tree& t) { return t.find_layer("sue.opaque"); }

TEST_CASE("dissect commands: what the profile cannot parse is opaque, with a warning") {
  SUBCASE("unknown type second") {
    const byte_vector bad{0x77, 0x00, 0x00, 0x00};
    const auto t = dissect_pdu(frame(w::encap::udp4, cat({barrier, bad, wr_rsp})));
    REQUIRE(commands_of(*t.tree).size() == 1);  // the barrier; nothing after the bad one
    REQUIRE(t->error_count == 1);
    const auto& e = t->errors[0];
    CHECK(e.layer == "sue.opaque");
    CHECK(e.level == w::severity::warning);
    CHECK(e.code == w::errc::bad_value);
    CHECK(e.item == 2);
    CHECK(e.offset == 54);
    CHECK(e.field == "sue.cmd.type");
    CHECK(e.value == 0x77);
    CHECK(e.what == "command type not in the profile");
    CHECK_FALSE(t->has_errors());
    const auto* o = opaque_layer(*t.tree);
    REQUIRE(o != nullptr);
    CHECK(o->offset == 54);
    CHECK(o->length == bad.size() + wr_rsp.size());
    const std::string json = render([&](auto& out) { d::put_json(out, *t.tree, 1); });
    CHECK(json.find("\"index\":2") != std::string::npos);
    CHECK(json.find("\"severity\":\"warning\"") != std::string::npos);
    // The R-CRC still covers the whole payload and is good; the PDU counts.
    CHECK(t->find("sue.rcrc.status")->value_name() == "good");
    const auto f = d::facts_of(*t.tree, 1, 0);
    REQUIRE(f);
    CHECK(f->data);
    CHECK(f->npsn == 9);
  }
  SUBCASE("data cut off by the end of the payload") {
    const byte_vector cut(write5.begin(), write5.end() - 2);
    const auto t = dissect_pdu(frame(w::encap::udp6, cut));
    CHECK(commands_of(*t.tree).empty());
    REQUIRE(t->error_count == 1);
    CHECK(t->errors[0].code == w::errc::truncated);
    CHECK(t->errors[0].level == w::severity::warning);
    CHECK(t->errors[0].item == 1);
    CHECK(t->errors[0].needed == 17);
    CHECK(t->errors[0].available == 15);
    REQUIRE(opaque_layer(*t.tree) != nullptr);
    CHECK(opaque_layer(*t.tree)->length == 15);
    CHECK(d::facts_of(*t.tree, 1, 0));
  }
  SUBCASE("garbage after padding") {
    const auto t =
        dissect_pdu(frame(w::encap::udp4, cat({barrier, byte_vector{0x00, 0x00, 0x05}})));
    CHECK(commands_of(*t.tree).size() == 1);
    REQUIRE(t->error_count == 1);
    CHECK(t->errors[0].code == w::errc::bad_value);
    CHECK(t->errors[0].level == w::severity::warning);
    CHECK(t->errors[0].item == 2);
    CHECK(t->errors[0].offset == 54);
    REQUIRE(opaque_layer(*t.tree) != nullptr);
    CHECK(opaque_layer(*t.tree)->offset == 54);
    CHECK(opaque_layer(*t.tree)->length == 3);
  }
  SUBCASE("8-byte opaque payloads: every one a PDU of the analysis") {
    const byte_vector junk{0xDE, 0xAD, 0xBE, 0xEF, 0x01, 0x02, 0x03, 0x04};
    const auto t = dissect_pdu(frame(w::encap::afh1, junk));
    CHECK(commands_of(*t.tree).empty());
    CHECK_FALSE(t->has_errors());
    REQUIRE(opaque_layer(*t.tree) != nullptr);
    CHECK(opaque_layer(*t.tree)->length == junk.size());
    CHECK(d::facts_of(*t.tree, 1, 0));
    // --profile none: no walk, no warning, the payload opaque as before.
    d::options none;
    none.profile = nullptr;
    const auto n = dissect_pdu(frame(w::encap::afh1, junk), none);
    CHECK(n->error_count == 0);
    CHECK(opaque_layer(*n.tree) == nullptr);
    CHECK(d::facts_of(*n.tree, 1, 0));
  }
  SUBCASE("a reserved control field set is a warning, and the walk goes on") {
    byte_vector rsp = wr_rsp;
    rsp[5] = 0x40;  // reserved byte
    const auto t = dissect_pdu(frame(w::encap::udp4, cat({barrier, rsp, barrier})));
    CHECK(commands_of(*t.tree).size() == 3);
    REQUIRE(t->error_count == 1);
    CHECK(t->errors[0].level == w::severity::warning);
    CHECK(t->errors[0].code == w::errc::reserved_nonzero);
    CHECK(t->errors[0].item == 2);
    CHECK(t->errors[0].value == 0x40);
  }
}

TEST_CASE("dissect commands: a PDU full of the smallest commands fits the large tree") {
  byte_vector payload;
  for (int i = 0; i < 1024; ++i) payload.insert(payload.end(), barrier.begin(), barrier.end());
  const auto t = dissect_pdu(frame(w::encap::udp4, payload));
  CHECK(t->error_count == 0);
  CHECK_FALSE(t->overflow);
  CHECK(commands_of(*t.tree).size() == 1024);
  // The small default tree says it is full instead of dropping fields silently.
  auto small = std::make_unique<d::tree>();
  const byte_vector f = frame(w::encap::udp4, payload);
  d::dissect_frame(*small, w::bytes(f.data(), f.size()), d::link_ethernet);
  CHECK(small->overflow);
  CHECK(small->errors[small->error_count - 1].code == w::errc::no_space);
}

// `scaleup stats` builds no layers or fields (options::nodes): the tree holds the readers'
// problems and the PDU's summary, from which the analysis takes the same facts as from the full
// tree the plugin shows: a frame is left out of the analysis exactly when the plugin leaves it
// out. Problems inside the commands never leave a PDU out (they are the XPU's business), so
// without the commands' walk nothing changes.
TEST_CASE("dissect commands: without nodes, the same facts and the readers' problems") {
  byte_vector reserved = wr_rsp;
  reserved[5] = 0x40;
  const byte_vector cut(write5.begin(), write5.end() - 2);
  d::options bare;
  bare.nodes = false;
  int checked = 0, left_out = 0;
  for (const auto& payload :
       {cat({write5, barrier, wr_rsp}), cat({barrier, reserved, barrier, reserved}),
        cat({barrier, byte_vector{0x00, 0x00, 0x05}}), cut, byte_vector{0xEE, 0x00}}) {
    for (const auto e : {w::encap::udp4, w::encap::afh1, w::encap::afh2}) {
      for (const bool damaged : {false, true}) {
        byte_vector f = frame(e, payload);
        if (damaged) {
          // The RH's PSN changed: its R-CRC no longer matches. The first tree is kept while
          // its RH layer is read.
          const auto first = dissect_pdu(f);
          const auto* rh = first->find_layer("sue.rh");
          REQUIRE(rh != nullptr);
          f[rh->offset + 3] ^= 0x10;
        }
        const auto full = dissect_pdu(f);
        const auto lean = dissect_pdu(f, bare);
        CHECK(lean->layer_count == 0);
        CHECK(lean->field_count == 0);
        CHECK(lean->encap == full->encap);
        // The lean tree's problems are the reader's: the full tree's, less the commands'.
        std::vector<const w::error*> readers;
        for (const auto& x : full->error_list())
          if (x.layer != "sue.cmd" && x.layer != "sue.opaque") readers.push_back(&x);
        REQUIRE(lean->error_count == readers.size());
        for (std::size_t i = 0; i < readers.size(); ++i) {
          const auto &a = *readers[i], &b = lean->errors[i];
          CHECK(a.code == b.code);
          CHECK(a.level == b.level);
          CHECK(a.offset == b.offset);
          CHECK(a.value == b.value);
          CHECK(a.field == b.field);
        }
        const auto ff = d::facts_of(*full.tree, 1, 0), fl = d::facts_of(*lean.tree, 1, 0);
        REQUIRE(ff.has_value() == fl.has_value());
        CHECK(ff.has_value() == !damaged);
        if (ff) {
          CHECK(ff->key == fl->key);
          CHECK(ff->npsn == fl->npsn);
          CHECK(ff->data == fl->data);
          CHECK(ff->length == fl->length);
        }
        left_out += !ff && full->pdu.rh && lean->pdu.rh;
        checked += full->error_count > readers.size();
      }
    }
  }
  // Every damaged AFH frame (over UDP on no named port, a bad R-CRC is no SUE at all).
  CHECK(left_out == 10);
  // Four of the five payloads have problems in their commands (4 x 3 whole, 4 x 2 damaged);
  // and in the two padded AFH frames of the first, damaged, no R-CRC marks the PDU's end, so the
  // payload runs to the frame's end and the old R-CRC reads as a command the profile lacks.
  CHECK(checked == 22);
}
