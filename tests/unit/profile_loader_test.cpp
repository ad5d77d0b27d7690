// Command profiles described at run time: the default profile written as a
// description and built back dissects exactly as the constexpr table, and every rule a
// description can break is named with its entry.
#include <scaleup/dissect/engine.hpp>
#include <scaleup/dissect/frame_json.hpp>
#include <scaleup/dissect/profile_loader.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/wire/frame.hpp>

#include <doctest/doctest.h>

#include <memory>
#include <string>

#include "support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace pk = scaleup::pack;
using scaleup::test::render;

// The description of a constexpr profile, field by field (what a profile file holds).
d::profile_description describe(const pk::profile& p) {
  d::profile_description out{std::string(p.name()), std::string(p.description()), {}};
  for (const auto& t : p.types()) {
    auto& c = out.types.emplace_back();
    c.code = t.code;
    c.name = t.name;
    c.control_units = t.control_units;
    c.data = t.has_data;
    c.vc = t.vc;
    c.description = t.description;
    c.seed = t.seed;
    for (const auto& f : t.fields) {
      auto& fd = c.fields.emplace_back();
      fd.name = f.name;
      fd.filter = f.filter;
      fd.bit = f.bit;
      fd.width = f.width;
      fd.type = d::kind_names[static_cast<std::size_t>(f.type)];
      for (const auto& n : f.names) fd.values.emplace_back(n.value, std::string(n.name));
      fd.description = f.description;
      fd.seed = f.seed;
      fd.check = d::rule_names[static_cast<std::size_t>(f.check)];
      fd.expect = f.expect;
    }
  }
  return out;
}

std::string error_of(const d::profile_description& desc) {
  const auto b = d::runtime_profile::build(desc);
  CHECK(b.profile == nullptr);
  return b.error;
}

}  // namespace

TEST_CASE("a described profile is built with the default profile's framing and fields") {
  const auto b = d::runtime_profile::build(describe(pk::default_profile));
  INFO(b.error);
  REQUIRE(b.profile);
  const pk::profile& p = b.profile->profile();
  CHECK(p.check().empty());
  CHECK(p.name() == "default");
  REQUIRE(p.types().size() == pk::default_profile.types().size());
  for (unsigned code = 0; code < 256; ++code)
    CHECK(p.framing(static_cast<std::uint8_t>(code)) ==
          pk::default_profile.framing(static_cast<std::uint8_t>(code)));
  // The JSON writer's output for both is the same text (what profiles/default.json holds).
  CHECK(render([&](auto& out) { d::put_profile_json(out, p); }) ==
        render([&](auto& out) { d::put_profile_json(out, pk::default_profile); }));
}

TEST_CASE("a frame of every default command dissects the same with the built profile") {
  // WR_FULL (5 data bytes), BARRIER, WR_RSP (SLVERR), RD (64 bytes): the layouts of
  // docs/wire-format.md, by hand.
  const scaleup::test::byte_vector payload{0x04, 0x04, 0x12, 0x34, 0,    0,    0,    0,    0,
                                           0,    0x10, 0x00, 0xA1, 0xA2, 0xA3, 0xA4, 0xA5, 0x12,
                                           0x00, 0x00, 0x07, 0x0E, 0x00, 0x12, 0x34, 0x02, 0x00};
  scaleup::wire::frame_params fp;
  fp.kind = scaleup::wire::encap::udp4;
  scaleup::wire::reliability_header rh{.op = 2, .xpuid = 3, .npsn = 9};
  scaleup::test::byte_vector frame(512);
  const auto r = scaleup::wire::emit_sue_frame(fp, rh, payload, frame);
  REQUIRE(r.ok());
  frame.resize(r.value);
  const auto b = d::runtime_profile::build(describe(pk::default_profile));
  REQUIRE(b.profile);
  const auto json_with = [&](const pk::profile* prof) {
    d::options o;
    o.profile = prof;
    auto t = std::make_unique<d::large_tree>();
    d::dissect_frame(*t, frame, d::link_ethernet, o);
    return render([&](auto& out) { d::put_json(out, *t, 1); });
  };
  const std::string want = json_with(&pk::default_profile);
  CHECK(want.find("\"sue.cmd.name\":\"WR_RSP\",") != std::string::npos);
  CHECK(json_with(&b.profile->profile()) == want);
}

TEST_CASE("a description's errors name the entry and the rule") {
  const auto base = describe(pk::default_profile);
  auto e = base;
  e.name.clear();
  CHECK(error_of(e) == "name: a profile needs a name");
  e = base;
  e.types.clear();
  CHECK(error_of(e) == "types: a profile needs at least one command type");
  e = base;
  e.types[1].code = 0;
  CHECK(error_of(e).starts_with("types[1] (code 0, WR_FULL): code: a code is 1 to 255"));
  e = base;
  e.types[2].code = 300;
  CHECK(error_of(e).starts_with("types[2] (code 300, WR_PART_P): code:"));
  e = base;
  e.types[3].code = e.types[0].code;
  CHECK(error_of(e) == "types[3] (code 2, WR_PART): code: the same code as types[0]");
  e = base;
  e.types[4].name.clear();
  CHECK(error_of(e) == "types[4] (code 10): name: a command type needs a name");
  e = base;
  e.types[4].control_units = 10;
  CHECK(error_of(e).starts_with("types[4] (code 10, RD): control_units: the control is 1 to 9"));
  e = base;
  e.types[5].vc = 4;
  CHECK(error_of(e) == "types[5] (code 12, RD_RSP): vc: a VC is 0 to 3");
  e = base;
  e.types[6].fields[2].bit += 1;
  CHECK(
      error_of(e).starts_with("types[6] (code 14, WR_RSP): fields[2] (sue.cmd.tag): bit: starts "
                              "at 17, the field before ends at 16"));
  e = base;
  e.types[6].fields[1].width = 0;
  CHECK(error_of(e).ends_with("fields[1] (sue.cmd.rsvd): width: 1 to 64 bits"));
  e = base;
  e.types[6].fields[0].type = "float";
  CHECK(
      error_of(e).ends_with("fields[0] (sue.cmd.type): type: one of uint, hex, flag, mac, "
                            "ipv4, label"));
  e = base;
  e.types[6].fields[0].check = "sometimes";
  CHECK(error_of(e).ends_with("check: one of any, reserved, fixed"));
  e = base;
  e.types[6].fields[0].values.emplace_back(256, "too big");
  CHECK(error_of(e).ends_with("fields[0] (sue.cmd.type): values: 256 does not fit the field"));
  e = base;
  e.types[6].fields[0].filter.clear();
  CHECK(error_of(e).ends_with("fields[0] (type): a field needs a name and a filter"));
  // pack::profile::check()'s own rules, with the entry named.
  e = base;
  e.types[6].control_units = 4;  // the fields cover 6 bytes, the control 8
  CHECK(error_of(e) == "types[6] (code 14, WR_RSP): control fields do not cover the control");
  e = base;
  e.types[6].fields[0].width = 4;
  e.types[6].fields[1].bit = 4;
  e.types[6].fields[1].width = 12;
  CHECK(error_of(e) ==
        "types[6] (code 14, WR_RSP): the first control field must be the 8-bit type");
  e = base;
  e.types[0].fields[1].width = 4;
  e.types[0].fields[2].bit = 12;
  e.types[0].fields[2].width = 20;
  CHECK(error_of(e) ==
        "types[0] (code 2, WR_FULL_P): a type with data must have the 8-bit data length second");
  // A field's name is a display filter's and a JSON key as it is: Wireshark's characters only,
  // once in a type, none of the engine's.
  e = base;
  e.types[6].fields[2].filter = "sue.cmd.\"tag\"";
  CHECK(error_of(e) ==
        "types[6] (code 14, WR_RSP): a field's filter name has a character other than a letter, "
        "a digit, '.', '_' or '-'");
  e = base;
  e.types[6].fields[2].filter = "sue.cmd tag";
  CHECK(
      error_of(e).ends_with("a field's filter name has a character other than a letter, a "
                            "digit, '.', '_' or '-'"));
  e = base;
  e.types[6].fields[2].filter = e.types[6].fields[1].filter;
  CHECK(error_of(e) == "types[6] (code 14, WR_RSP): a filter name appears twice in a command type");
  e = base;
  e.types[6].fields[2].filter = "sue.cmd.name";
  CHECK(error_of(e).starts_with(
      "types[6] (code 14, WR_RSP): a field's filter name is one the engine gives every command"));
}
