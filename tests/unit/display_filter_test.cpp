// Display filters (include/scaleup/dissect/display_filter.hpp): the syntax, the literals, the
// operators and their semantics on repeated and absent fields, as tshark 4.0 has them (each
// expectation below was checked against tshark 4.0.17 on the same kind of frame; README.md,
// "Display filters"), and the errors, with where they are.
#include <scaleup/dissect/analysis.hpp>
#include <scaleup/dissect/conformance.hpp>
#include <scaleup/dissect/display_filter.hpp>
#include <scaleup/dissect/engine.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/wire/frame.hpp>

#include <doctest/doctest.h>

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace w = scaleup::wire;
namespace pk = scaleup::pack;
using scaleup::test::byte_vector;
using scaleup::test::cat;

// WR_FULL (type 0x04), 5 data bytes A1..A5; BARRIER (type 0x12), tag 7: a PDU of two commands,
// so that sue.cmd.type and sue.cmd.tag are there twice (docs/wire-format.md's layouts).
using scaleup::test::barrier;
using scaleup::test::write5;

struct frame {
  byte_vector bytes;
  std::unique_ptr<d::large_tree> tree = std::make_unique<d::large_tree>();
  d::frame_meta meta;
};

// An ACK of apsn 6 from XPU 3 (10.0.0.3) to XPU 4, npsn 9 on VC 1, with the two commands.
frame make(w::encap e, byte_vector payload = cat({write5, barrier}), bool pad = true) {
  w::frame_params p;
  p.kind = e;
  p.pad = pad;
  p.src_xpu = 3;
  p.dst_xpu = 4;
  w::reliability_header rh{.op = 0, .xpuid = 3, .npsn = 9, .vc = 1, .apsn = 6};
  frame f;
  f.bytes.resize(8192);
  const auto r = e == w::encap::lite ? w::emit_frame(p, payload, f.bytes)
                                     : w::emit_sue_frame(p, rh, payload, f.bytes);
  REQUIRE(r.ok());
  f.bytes.resize(r.value);
  d::dissect_frame(*f.tree, w::bytes(f.bytes.data(), f.bytes.size()), d::link_ethernet);
  f.meta.number = 12;
  f.meta.time_ns = 1'700'000'000'250'000'000;
  f.meta.relative_ns = 250'000'000;
  f.meta.delta_ns = 1'000;
  f.meta.len = f.meta.cap_len = static_cast<std::uint32_t>(f.bytes.size());
  return f;
}

d::display_filter compiled(std::string_view text) {
  auto c = d::display_filter::compile(text, &pk::default_profile);
  INFO(text << ": " << c.error.what);
  REQUIRE(c.filter);
  return std::move(*c.filter);
}

bool keeps(std::string_view text, const frame& f, const d::frame_result* analysis = nullptr,
           std::span<const d::frame_violation> violations = {}) {
  const auto filter = compiled(text);
  const d::filter_frame ff{&f.meta, w::bytes(f.bytes.data(), f.bytes.size()), analysis, violations};
  const bool whole = filter.matches(*f.tree, ff);
  // The two steps of a parallel reader give the same answer.
  CHECK(filter.finish(filter.test_frame(*f.tree, ff), analysis) == whole);
  return whole;
}

d::filter_error error_of(std::string_view text) {
  auto c = d::display_filter::compile(text, &pk::default_profile);
  CHECK_FALSE(c.filter);
  return c.error;
}

}  // namespace

TEST_CASE("display filter: comparison operators, in symbols and in words") {
  const frame f = make(w::encap::udp4);
  CHECK(keeps("sue.rh.npsn == 9", f));
  CHECK(keeps("sue.rh.npsn eq 9", f));
  CHECK(keeps("sue.rh.npsn any_eq 9", f));
  CHECK_FALSE(keeps("sue.rh.npsn == 8", f));
  CHECK(keeps("sue.rh.npsn != 8", f));
  CHECK(keeps("sue.rh.npsn ne 8", f));
  CHECK_FALSE(keeps("sue.rh.npsn != 9", f));
  CHECK(keeps("sue.rh.npsn < 10", f));
  CHECK(keeps("sue.rh.npsn lt 10", f));
  CHECK_FALSE(keeps("sue.rh.npsn < 9", f));
  CHECK(keeps("sue.rh.npsn <= 9", f));
  CHECK(keeps("sue.rh.npsn le 9", f));
  CHECK_FALSE(keeps("sue.rh.npsn <= 8", f));
  CHECK(keeps("sue.rh.npsn > 8", f));
  CHECK(keeps("sue.rh.npsn gt 8", f));
  CHECK_FALSE(keeps("sue.rh.npsn > 9", f));
  CHECK(keeps("sue.rh.npsn >= 9", f));
  CHECK(keeps("sue.rh.npsn ge 9", f));
  CHECK_FALSE(keeps("sue.rh.npsn >= 10", f));
  CHECK(keeps("sue.rh.npsn === 9", f));
  CHECK(keeps("sue.rh.npsn all_eq 9", f));
  CHECK(keeps("sue.rh.npsn !== 8", f));
  CHECK(keeps("sue.rh.npsn ~= 8", f));
  CHECK(keeps("sue.rh.npsn any_ne 8", f));
  CHECK(keeps("sue.rh.npsn all_ne 8", f));
  CHECK(keeps("sue.rh.npsn==9", f));  // no spaces needed
  // in, not in, ranges; & (bitwise and) as a test of its own.
  CHECK(keeps("sue.rh.npsn in {1, 9, 20}", f));
  CHECK_FALSE(keeps("sue.rh.npsn in {1, 8, 20}", f));
  CHECK(keeps("sue.rh.npsn in {1, 5..10}", f));
  CHECK(keeps("sue.rh.npsn in {1, 5 .. 9}", f));
  CHECK_FALSE(keeps("sue.rh.npsn in {10..5}", f));
  CHECK(keeps("sue.rh.npsn not in {1, 2}", f));
  CHECK_FALSE(keeps("sue.rh.npsn not in {9}", f));
  CHECK(keeps("sue.rh.npsn & 0x8", f));
  CHECK(keeps("sue.rh.npsn bitwise_and 1", f));
  CHECK_FALSE(keeps("sue.rh.npsn & 0x6", f));
}

TEST_CASE("display filter: and, or, not, parentheses and their precedence") {
  const frame f = make(w::encap::udp4);
  CHECK(keeps("sue.rh.npsn == 9 && sue.rh.vc == 1", f));
  CHECK(keeps("sue.rh.npsn == 9 and sue.rh.vc == 1", f));
  CHECK_FALSE(keeps("sue.rh.npsn == 9 && sue.rh.vc == 2", f));
  CHECK(keeps("sue.rh.npsn == 8 || sue.rh.vc == 1", f));
  CHECK(keeps("sue.rh.npsn == 8 or sue.rh.vc == 1", f));
  CHECK_FALSE(keeps("sue.rh.npsn == 8 || sue.rh.vc == 2", f));
  CHECK(keeps("!(sue.rh.npsn == 8)", f));
  CHECK(keeps("not sue.rh.npsn == 8", f));
  CHECK(keeps("!!sue.rh", f));
  CHECK(keeps("not not sue", f));
  CHECK(keeps("not!udp.dstport == 61793", f));
  // && binds tighter than ||: true || (true && false) is true, (true || true) && false is not.
  CHECK(keeps("sue.rh.npsn == 9 || sue.rh.vc == 1 && sue.rh.vc == 2", f));
  CHECK(keeps("sue.rh.vc == 1 && sue.rh.vc == 2 || sue.rh.npsn == 9", f));
  CHECK_FALSE(keeps("(sue.rh.npsn == 9 || sue.rh.vc == 1) && sue.rh.vc == 2", f));
  // ! binds tighter than &&: (!false) && true.
  CHECK(keeps("!sue.rh.npsn == 8 && sue.rh.vc == 1", f));
  CHECK_FALSE(keeps("!(sue.rh.npsn == 8 || sue.rh.vc == 1)", f));
  CHECK(keeps("((sue.rh.vc == 1))", f));
  // The empty filter keeps every frame, as tshark's.
  CHECK(keeps("", f));
  CHECK(keeps("   ", f));
}

TEST_CASE("display filter: a repeated field, an absent one, and presence") {
  const frame f = make(w::encap::udp4);     // sue.cmd.type: 0x04, then 0x12
  CHECK(keeps("sue.cmd.type == 0x12", f));  // any occurrence
  CHECK(keeps("sue.cmd.type == 4", f));
  CHECK_FALSE(keeps("sue.cmd.type != 4", f));  // != is "all not equal" in 4.0
  CHECK(keeps("sue.cmd.type != 5", f));
  CHECK_FALSE(keeps("sue.cmd.type === 4", f));  // all equal
  CHECK(keeps("sue.cmd.type !== 4", f));        // any not equal
  CHECK(keeps("sue.cmd.type ~= 4", f));
  CHECK(keeps("sue.cmd.type > 0x10", f));
  CHECK(keeps("sue.cmd.type < 0x10", f));
  CHECK(keeps("sue.cmd.type in {0x12}", f));
  CHECK_FALSE(keeps("sue.cmd.type not in {4}", f));
  CHECK(keeps("sue.cmd.name == \"BARRIER\"", f));
  CHECK_FALSE(keeps("sue.cmd.name != BARRIER", f));
  // Absent: every comparison is false, its negation true.
  const frame afh = make(w::encap::afh1);
  CHECK_FALSE(keeps("ip.ttl == 64", afh));
  CHECK_FALSE(keeps("ip.ttl != 64", afh));
  CHECK_FALSE(keeps("ip.ttl != 5", afh));
  CHECK_FALSE(keeps("ip.ttl === 64", afh));
  CHECK_FALSE(keeps("ip.ttl !== 5", afh));
  CHECK_FALSE(keeps("ip.ttl < 255", afh));
  CHECK_FALSE(keeps("ip.ttl in {0..255}", afh));
  CHECK(keeps("ip.ttl not in {64}", afh));  // not in is !(in)
  CHECK(keeps("!(ip.ttl == 64)", afh));
  CHECK(keeps("!ip.ttl", afh));
  CHECK(keeps("ip.ttl == 64", f));
  // A field alone: there or not, whatever its value (a boolean 0 too).
  CHECK(keeps("sue.rh.apsn", f));
  CHECK(keeps("ip.flags.mf", f));
  CHECK_FALSE(keeps("ip.flags.mf == 1", f));
  CHECK_FALSE(keeps("afh1.dst_xpu", f));
  CHECK(keeps("afh1.dst_xpu", afh));
}

TEST_CASE("display filter: protocols, layers and expert infos") {
  const frame udp = make(w::encap::udp4);
  const frame lite = make(w::encap::lite, cat({write5, barrier}), false);
  const frame padded = make(w::encap::lite);
  const frame v6 = make(w::encap::udp6);
  CHECK(keeps("frame", udp));
  CHECK(keeps("sue && udp && ip && eth", udp));
  CHECK_FALSE(keeps("ipv6 || sue_lite || afh2c", udp));
  CHECK(keeps("ipv6 && !ip", v6));
  // The commands of a SUE Lite payload are SUE Lite's: the frame holds no "sue" (the plugin
  // shows them under SUE Lite), though it holds sue.cmd fields and layers.
  CHECK(keeps("sue_lite && afh2c", lite));
  CHECK_FALSE(keeps("sue", lite));
  CHECK(keeps("sue.cmd.type && sue.cmd", lite));
  // Padding after them is SUE's, on its own (the plugin shows it as SUE's too).
  CHECK(keeps("sue && sue.pad", padded));
  // Layer names, scaleup's own (Wireshark has protocol names only).
  CHECK(keeps("sue.rh && sue.payload && sue.cmd && sue.rcrc", udp));
  CHECK_FALSE(keeps("sue.opaque || sue.pad", udp));
  // Expert infos: the problems of the frame, by severity and code.
  frame broken = make(w::encap::afh1, cat({write5, barrier}), false);
  broken.bytes[broken.bytes.size() - 1] ^= 0xFF;  // the R-CRC
  d::dissect_frame(*broken.tree, w::bytes(broken.bytes.data(), broken.bytes.size()),
                   d::link_ethernet);
  CHECK(keeps("sue.error.bad_checksum", broken));
  CHECK(keeps("sue.rcrc.status == \"bad\"", broken));
  CHECK_FALSE(keeps("sue.error.bad_checksum", make(w::encap::afh1)));
  CHECK_FALSE(keeps("sue.warning.bad_checksum", broken));
}

TEST_CASE("display filter: literals of every kind") {
  const frame f = make(w::encap::udp4);
  // Integers: decimal, hex, octal, binary, '+', a character, a value name (any case).
  for (const char* s : {"sue.rh.npsn == 9", "sue.rh.npsn == 0x9", "sue.rh.npsn == 0X09",
                        "sue.rh.npsn == 011", "sue.rh.npsn == 0b1001", "sue.rh.npsn == +9",
                        "sue.rh.npsn == '\\t'", "sue.rh.npsn == '\\x09'", "sue.rh.npsn == '\\011'",
                        "sue.rh.op == ACK", "sue.rh.op == ack", "sue.rh.op == \"ACK\"",
                        "sue.rh.op in {ACK, NACK}", "sue.rh.op in {ACK..NACK}", "ip.ttl == '@'"}) {
    INFO(s);
    CHECK(keeps(s, f));
  }
  CHECK_FALSE(keeps("sue.rh.op == NACK", f));
  // Booleans: 1/0, True/False, any non-zero number is true.
  CHECK(keeps("ip.flags.mf == 0", f));
  CHECK(keeps("ip.flags.mf == False", f));
  CHECK(keeps("ip.flags.mf == FALSE", f));
  CHECK_FALSE(keeps("ip.flags.mf == True", f));
  CHECK_FALSE(keeps("ip.flags.mf == 2", f));
  CHECK(keeps("ip.flags.mf != 2", f));
  CHECK(keeps("ip.flags.df == 2 && ip.flags.df == TRUE && ip.flags.df == 1", f));
  // IPv4, a network (CIDR), the either-end names Wireshark has.
  CHECK(keeps("ip.src == 10.0.0.3", f));
  CHECK(keeps("ip.src == 10.0.0.0/8", f));
  CHECK(keeps("ip.dst == 10.0.0.99/24", f));
  CHECK_FALSE(keeps("ip.src == 192.168.0.0/16", f));
  CHECK_FALSE(keeps("ip.src != 10.0.0.0/8", f));
  CHECK(keeps("ip.src in {10.0.0.1 .. 10.0.0.3}", f));
  CHECK(keeps("ip.src > 10.0.0.2", f));
  CHECK(keeps("ip.addr == 10.0.0.4 && ip.addr == 10.0.0.3", f));
  CHECK_FALSE(keeps("ip.addr != 10.0.0.4", f));  // all not equal: the destination is
  CHECK(keeps("udp.port == 61793 && udp.srcport == udp.dstport", f));
  // IPv6 and its prefixes.
  const frame v6 = make(w::encap::udp6);
  CHECK(keeps("ipv6.src == fd53:5545::3", v6));
  CHECK(keeps("ipv6.dst == fd53:5545:0:0:0:0:0:4", v6));
  CHECK(keeps("ipv6.src == fd53::/16 && ipv6.addr == fd53:5545::4", v6));
  CHECK_FALSE(keeps("ipv6.src == fd00::/16", v6));
  CHECK(keeps("ipv6.src > fd53:5545::2", v6));
  // MAC addresses in the forms Wireshark reads.
  for (const char* s :
       {"eth.src == 02:00:00:00:00:03", "eth.src == 02-00-00-00-00-03", "eth.src == 0200.0000.0003",
        "eth.src == 020000000003", "eth.addr == 02:00:00:00:00:04", "eth.src contains 00:03"}) {
    INFO(s);
    CHECK(keeps(s, f));
  }
  // Strings: quoted with escapes, or a bare word.
  CHECK(keeps("sue.rcrc.status == good", f));
  CHECK(keeps("sue.rcrc.status == \"g\\x6f\\157d\"", f));
  CHECK_FALSE(keeps("sue.rcrc.status == Good", f));  // strings compare exactly
  CHECK(keeps("sue.cmd.name contains \"BARR\"", f));
  CHECK(keeps("sue.cmd.name contains RR", f));
  CHECK(keeps("sue.rcrc.status > \"a\"", f));
  CHECK(keeps("encap == udp4", f));
  // The frame's bytes: a byte string in any of its forms, or a quoted string.
  CHECK(keeps("frame contains a1:a2:a3", f));
  CHECK(keeps("frame contains a1a2a3a4", f));
  CHECK(keeps("frame contains a1.a2", f));
  CHECK(keeps("frame contains \"\\xa3\\xa4\"", f));
  CHECK_FALSE(keeps("frame contains a2:a1", f));
  CHECK_FALSE(keeps("frame contains \"\"", f));
  // frame.*: times in seconds, up to nine decimals.
  CHECK(keeps("frame.number == 12", f));
  CHECK(keeps("frame.time_relative == 0.25", f));
  CHECK(keeps("frame.time_relative > 0.249999999", f));
  CHECK(keeps("frame.time_delta == 0.000001", f));
  CHECK(keeps("frame.time_epoch >= 1700000000.25", f));
  CHECK(keeps("frame.time_relative > -1", f));
  CHECK(keeps("frame.len == frame.cap_len", f));
  CHECK_FALSE(keeps("frame.interface_id", f));  // a pcap names no interface
}

TEST_CASE("display filter: the sequence analysis and the conformance rules") {
  const frame f = make(w::encap::udp4);
  d::frame_result r;
  r.analysed = true;
  r.set(d::flag::retransmission);
  r.set(d::result_value::first_frame, 5);
  r.set(d::result_value::ack_rtt, 12'000);
  const auto filter = compiled("sue.rh.xpuid == 3 && sue.analysis.retransmission");
  CHECK(filter.needs_analysis());
  CHECK_FALSE(filter.needs_conformance());
  CHECK(keeps("sue.rh.xpuid == 3 && sue.analysis.retransmission", f, &r));
  CHECK_FALSE(keeps("sue.rh.xpuid == 3 && sue.analysis.retransmission", f));  // not analysed
  CHECK_FALSE(keeps("sue.rh.xpuid == 4 && sue.analysis.retransmission", f, &r));
  CHECK(keeps("sue.analysis", f, &r));
  CHECK_FALSE(keeps("sue.analysis", f));
  CHECK_FALSE(keeps("sue.analysis.nack || sue.analysis.gap", f, &r));
  CHECK(keeps("sue.analysis.first_frame == 5 && !sue.analysis.acks_frame", f, &r));
  CHECK(keeps("sue.analysis.ack_rtt > 0.00001 && sue.analysis.ack_rtt < 0.000013", f, &r));
  const std::array<d::frame_violation, 1> v{{{d::rule::gbn_resend, 12, "a", "b"}}};
  const auto check = compiled("sue.check.gbn.resend");
  CHECK(check.needs_conformance());
  CHECK(keeps("sue.check.gbn.resend", f, nullptr, v));
  CHECK_FALSE(keeps("sue.check.psn.next", f, nullptr, v));
  CHECK_FALSE(keeps("sue.check.gbn.resend", f));
}

TEST_CASE("display filter: errors say what and where") {
  const auto at = [](std::string_view text, std::string_view what, std::size_t where,
                     std::size_t length) {
    const auto e = error_of(text);
    INFO(text << " -> " << e.what << " at " << e.at);
    CHECK(scaleup::test::contains(e.what, what));
    CHECK(e.at == where);
    CHECK(e.length == length);
  };
  at("sue.rh.xpuidd == 3", "no field is named 'sue.rh.xpuidd'", 0, 13);
  at("sue.rh.vc == 1 && sue.rh.xpuidd", "no field is named 'sue.rh.xpuidd'", 18, 13);
  at("sue.rh.npsn == sue.rh.apsnn", "no field is named 'sue.rh.apsnn'", 15, 12);
  at("frame.number in {1 3}", "\"3\" was unexpected", 19, 1);
  at("frame.number in {1, 3,}", "\"}\" was unexpected", 22, 1);
  at("frame.number in {}", "\"}\" was unexpected", 17, 1);
  at("frame.number in {1, frame.len}", "not fields", 20, 9);
  at("frame.number == 1 ||", "ends too soon", 20, 0);
  at("(frame.number == 1", "')' is missing", 18, 0);
  at("frame.number == 1)", "\")\" was unexpected", 17, 1);
  at("frame.number = 1", "'=' was unexpected", 13, 1);
  at("frame.number == 1 xor frame.number == 2", "\"xor\" was unexpected", 18, 3);
  at("frame.number == 1 ^^ ip", "'^' was unexpected", 18, 1);
  at("frame.number == 1 AND ip", "\"AND\" was unexpected", 18, 3);
  at("frame contains \"abc", "not closed", 15, 4);
  at("frame contains \"a\\qc\"", "not an escape", 17, 2);
  at("sue.rh.vc == 300", "too big for it: at most 255", 13, 3);
  at("sue.rh.xpuid == 70000", "at most 65535", 16, 5);
  at("sue.rh.npsn == 1000.0", "is not a number", 15, 6);
  at("sue.rh.npsn == -1", "is negative", 15, 2);
  at("sue.rh.op == MAYBE", "not a number nor among the values' names", 13, 5);
  at("sue.rh.npsn == \"9\"", "is a string", 15, 3);
  at("ip.src == \"10.0.0.1\"", "is a string, not an address", 10, 10);
  at("ip.src == 10.0.0", "is not an IPv4 address", 10, 6);
  at("ip.src == 10.0.0.0/33", "prefix length", 10, 11);
  at("ip.src > 10.0.0.0/8", "CIDR", 7, 1);
  at("ipv6.src == 10.0.0.1", "is not an IPv6 address", 12, 8);
  at("eth.src == 02:00:00:00:00", "not an Ethernet address", 11, 14);
  at("frame.time_relative > 1e-3", "not a time", 22, 4);
  at("frame.time_relative > 1.0000000001", "not a time", 22, 12);
  at("ip.src == udp.srcport", "not of compatible types", 10, 11);
  at("sue == 1", "can only be tested for presence", 4, 2);
  at("sue.analysis.retransmission == 1", "can only be tested for presence", 28, 2);
  at("sue.analysis.first_frame < frame.number", "sequence analysis", 27, 12);
  at("sue.rh.npsn contains 09", "contains takes", 12, 8);
  at("sue.cmd.name & 1", "& takes an unsigned integer", 13, 1);
  at("sue.rh.npsn & 1 == 1", "arithmetic is not supported", 16, 2);
  at("sue.cmd.name matches \"^W\"", "matches", 13, 7);
  at("5 < sue.rh.npsn", "the left side of \"<\" must be a field, not 5", 0, 1);
  at("sue.rh.npsn == 1 == 2", "\"==\" was unexpected", 17, 2);
  at("frame.number == 1 and and", "\"and\" was unexpected", 22, 3);
  at("()", "\")\" was unexpected", 1, 1);
  at("frame[0] == 02", "slices", 5, 1);
  at("len(ip.src) == 4", "functions", 0, 3);
  at("ip.src#1 == 10.0.0.1", "layer operator", 6, 1);
  at("${x}", "macros", 0, 1);
  at(std::string(65, '(') + "sue" + std::string(65, ')'), "nested more than 64 deep", 64, 1);
  std::string many = "sue";
  for (int i = 0; i < 256; ++i) many += " || sue";
  at(many, "more than 256 tests", many.size() - 3, 3);
}

TEST_CASE("display filter: names come from the tables and the profile") {
  // Every field of every table, every computed field and every frame.* name compiles.
  for (const auto& t : d::tables)
    for (const auto& f : t.fields) {
      INFO(f.filter);
      CHECK(d::display_filter::compile(f.filter, &pk::default_profile).filter);
    }
  for (const auto* f : d::computed) CHECK(d::display_filter::compile(f->filter, nullptr).filter);
  for (const auto n : d::frame_fields) CHECK(d::display_filter::compile(n, nullptr).filter);
  for (const auto& f : d::analysis_flags)
    CHECK(d::display_filter::compile(f.filter, nullptr).filter);
  for (const auto& v : d::analysis_values)
    CHECK(d::display_filter::compile(v.filter, nullptr).filter);
  for (const auto& r : d::rules)
    CHECK(d::display_filter::compile("sue.check." + std::string(r.id), nullptr).filter);
  // The profile's name field is known with a profile, as `-e` knows it.
  CHECK(d::display_filter::compile("sue.cmd.name", &pk::default_profile).filter);
  CHECK_FALSE(d::display_filter::compile("sue.cmd.name", nullptr).filter);
  CHECK_FALSE(d::display_filter::compile("sue.check.psn", nullptr).filter);
  CHECK_FALSE(d::display_filter::compile("sue.error.nothing_like_it", nullptr).filter);
}
