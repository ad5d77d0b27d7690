// The structure-aware mutator (fuzz/sue_mutator.hpp): a frame of every encapsulation, mutated
// thousands of times, still reads through read_frame with a good R-CRC and commands the profile
// frames; each repair, on a frame damaged by hand, gives back the frame the emitter wrote; each
// fault it leaves on purpose is one a receiver sees; a capture stays a capture the reader reads,
// its fragments reassemble into the datagram they came from, a reply answers its frame.
//
// Expected frames come from the emitters (frame_test.cpp pins them to hand-written goldens);
// damage is patched at offsets worked out by hand, R-CRCs checked by the suite's own reference.
#include <scaleup/dissect/ip_reassembly.hpp>
#include <scaleup/fuzz/sue_mutator.hpp>
#include <scaleup/pack/command.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/receive.hpp>
#include <scaleup/pcap/reader.hpp>
#include <scaleup/wire/frame.hpp>
#include <scaleup/wire/ip_reassembly.hpp>
#include <scaleup/wire/receive.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "support.hpp"

namespace {

namespace w = scaleup::wire;
namespace pk = scaleup::pack;
namespace fz = scaleup::fuzz;
namespace cap = scaleup::pcap;
using scaleup::test::be16;
using scaleup::test::be32;
using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::fix_ipv4_checksum;
using scaleup::test::hex;
using scaleup::test::params_for;
using scaleup::test::ref_crc32;
using scaleup::test::set16;
using scaleup::test::test_rh;
using scaleup::test::with_ethernet_fcs;

using scaleup::test::all_encaps;

// Three commands of the default profile: a write with 5 bytes of data, a barrier, a read.
byte_vector three_commands() {
  byte_vector out(64);
  std::size_t at = 0;
  const auto put = [&](auto control, byte_vector data) {
    const auto r = pk::emit_command(pk::default_profile, control, data,
                                    w::mutable_bytes(out.data() + at, out.size() - at));
    REQUIRE(r.ok());
    at += r.value;
  };
  put(pk::cmd_write{.tag = 7, .addr = 0x1000}, {1, 2, 3, 4, 5});
  put(pk::cmd_barrier{.tag = 8}, {});
  put(pk::cmd_read{.dlen = 63, .tag = 9, .addr = 0x2000}, {});
  out.resize(at);
  return out;
}

byte_vector emit(const w::frame_params& p, const w::reliability_header& rh,
                 const byte_vector& payload) {
  byte_vector out(16384);
  const auto r = p.kind == w::encap::lite ? w::emit_frame(p, payload, out)
                                          : w::emit_sue_frame(p, rh, payload, out);
  REQUIRE(r.ok());
  out.resize(r.value);
  return out;
}

byte_vector frame_of(w::encap e, const byte_vector& payload = three_commands()) {
  return emit(params_for(e), test_rh(), payload);
}

w::received_frame read(const byte_vector& f, std::uint32_t link = w::link_ethernet,
                       w::fcs_mode fcs = w::fcs_mode::absent) {
  w::receive_options o;
  o.fcs = fcs;
  (void)o.add_udp_port(scaleup::test::golden_udp_port);
  return pk::read_frame(f, link, &pk::default_profile, o);
}

// Whether the payload's commands are whole and the profile knows each.
bool commands_whole(w::bytes payload) {
  pk::unpacker u(pk::default_profile, payload);
  pk::command_view c;
  while (u.next(c)) {
  }
  return !u.error_found();
}

// A frame run through repair_frame with `cfg` (the default: fixed bits, no FCS).
byte_vector repaired(byte_vector f, const fz::mutator_config& cfg = {}) {
  static fz::sue_mutator m;
  m.config() = cfg;
  f.resize(f.size() + 256);
  const std::size_t n = m.repair_frame(f.data(), f.size() - 256, f.size());
  f.resize(n);
  return f;
}

// ---- pcap files -----------------------------------------------------------------------------

byte_vector pcap_of(std::uint32_t link, const std::vector<byte_vector>& frames) {
  byte_vector out = cat({{0xD4, 0xC3, 0xB2, 0xA1, 2, 0, 4, 0},
                         byte_vector(8),
                         {0, 0, 4, 0},
                         {static_cast<std::uint8_t>(link), 0, 0, 0}});
  std::uint32_t t = 0;
  for (const auto& f : frames) {
    const auto le32 = [](std::uint32_t v) {
      return byte_vector{static_cast<std::uint8_t>(v), static_cast<std::uint8_t>(v >> 8),
                         static_cast<std::uint8_t>(v >> 16), static_cast<std::uint8_t>(v >> 24)};
    };
    const auto n = static_cast<std::uint32_t>(f.size());
    out = cat({out, le32(1700000000), le32(t += 10), le32(n), le32(n), f});
  }
  return out;
}

struct record {
  byte_vector data;
  std::uint32_t len = 0;
  std::uint64_t ns = 0;
};

// Every record of a capture, through the library's reader; fails the test unless the file reads
// to its end.
std::vector<record> records_of(const byte_vector& file) {
  std::string err;
  auto r = cap::reader::open(std::make_unique<cap::memory_source>(file), "test", err);
  REQUIRE_MESSAGE(r, err);
  std::vector<record> out;
  cap::packet p{};
  cap::reader::status st;
  while ((st = r->next(p)) == cap::reader::status::packet)
    out.push_back({byte_vector(p.data.begin(), p.data.end()), p.len, p.ts_ns});
  REQUIRE_MESSAGE(st == cap::reader::status::end, r->error());
  return out;
}

// Mutates `file` with seeds from `first` on until the mutator did `want`; the result.
byte_vector mutated_until(fz::sue_mutator& m, byte_vector file, fz::mutation want,
                          unsigned first = 0) {
  const std::size_t size = file.size();
  file.resize(size + 4096);
  for (unsigned seed = first; seed < first + 5000; ++seed) {
    byte_vector copy = file;
    const std::size_t n = m.mutate_capture(copy.data(), size, copy.size(), seed);
    if (m.last() == want) {
      copy.resize(n);
      return copy;
    }
  }
  FAIL("the mutator never did " << fz::to_string(want));
  return {};
}

}  // namespace

TEST_CASE("sue_mutator: an emitted frame taken apart and put together comes back byte for byte") {
  fz::sue_mutator m;
  for (const w::encap e : all_encaps) {
    CAPTURE(w::to_string(e));
    for (const byte_vector& payload : {three_commands(), byte_vector{}}) {
      const byte_vector f = frame_of(e, payload);
      fz::frame_parts p;
      REQUIRE(m.take_apart(f, w::link_ethernet, p));
      CHECK(p.kind == e);
      CHECK(p.has_rh == (e != w::encap::lite));
      CHECK(hex(p.payload_bytes()) == hex(payload));
      byte_vector out(f.size() + 64);
      out.resize(m.put_together(p, out));
      CHECK(hex(out) == hex(f));
    }
  }
}

TEST_CASE(
    "sue_mutator: a frame of every encapsulation, mutated 1500 times, still passes a "
    "receiver's checks") {
  std::map<fz::mutation, int> seen;
  for (const w::encap e : all_encaps)
    for (const std::uint32_t link : {w::link_ethernet, w::link_afh2}) {
      const bool afh2_family = e == w::encap::afh2 || e == w::encap::afh2c || e == w::encap::lite;
      if (link == w::link_afh2 && !afh2_family) continue;
      CAPTURE(w::to_string(e));
      CAPTURE(link);
      fz::sue_mutator m({.link = link, .fault_one_in = 0});
      byte_vector f = frame_of(e);
      std::size_t size = f.size();
      f.resize(4096);
      int failed = 0;
      for (unsigned seed = 0; seed < 1500; ++seed) {
        size = m.mutate_frame(f.data(), size, f.size(), seed);
        REQUIRE(size <= f.size());
        ++seen[m.last()];
        const byte_vector now(f.begin(), f.begin() + static_cast<std::ptrdiff_t>(size));
        const w::received_frame r = read(now, link);
        // A head's bytes mutated may name something else than SUE (another Ethertype, another
        // IP version), as may bytes no repair found a PDU in: kept as they are.
        if (m.last() == fz::mutation::head_bytes || m.last() == fz::mutation::bytes) continue;
        fz::frame_parts p;
        // A SUE Lite frame on an Ethernet link whose commands happen to carry an IPv4 or VLAN
        // Ethertype at bytes 12 and 13 reads as that: the format's ambiguity, not the mutator's.
        const bool lite = m.take_apart(now, link, p) && p.kind == w::encap::lite;
        const bool ok =
            lite ? (r.kind == w::encap::lite ? commands_whole(r.payload) : link == w::link_ethernet)
                 : r.accepted() && r.ok() && commands_whole(r.payload);
        failed += !ok;
        if (!ok) MESSAGE("seed " << seed << " " << fz::to_string(m.last()) << ": " << hex(now));
      }
      CHECK(failed == 0);
    }
  // Every frame mutation happened.
  for (const auto k :
       {fz::mutation::repaired, fz::mutation::head_bytes, fz::mutation::rh_bytes,
        fz::mutation::rh_field, fz::mutation::payload_bytes, fz::mutation::command_bytes,
        fz::mutation::command_insert, fz::mutation::command_remove, fz::mutation::command_duplicate,
        fz::mutation::command_swap, fz::mutation::command_resize, fz::mutation::payload_cut,
        fz::mutation::encapsulation}) {
    CAPTURE(fz::to_string(k));
    CHECK(seen[k] > 0);
  }
}

TEST_CASE("sue_mutator: not a SUE frame: bytes mutated, or a new SUE frame made") {
  fz::sue_mutator m;
  int generated = 0;
  for (unsigned seed = 0; seed < 200; ++seed) {
    byte_vector f(256, 0);  // an Ethernet frame of Ethertype 0: not SUE
    f[20] = 0x55;
    const std::size_t n = m.mutate_frame(f.data(), 64, f.size(), seed);
    REQUIRE(n <= f.size());
    if (m.last() == fz::mutation::generated) {
      ++generated;
      f.resize(n);
      CHECK(read(f).accepted() + (read(f).kind == w::encap::lite) == 1);
    } else {
      CHECK(m.last() == fz::mutation::bytes);
    }
  }
  CHECK(generated > 50);
  CHECK(generated < 150);
  // An empty input too (libFuzzer starts from one without seeds).
  byte_vector f(4096);
  const std::size_t n = m.mutate_frame(f.data(), 0, f.size(), 1);
  CHECK(n > 0);
}

// ---- each repair --------------------------------------------------------------------------

TEST_CASE("repair: the R-CRC is computed again over RH and payload") {
  for (const w::encap e : all_encaps) {
    if (e == w::encap::lite) continue;
    CAPTURE(w::to_string(e));
    // The write's tag changed: the R-CRC no longer matches (nor the UDP checksum).
    byte_vector payload = three_commands();
    payload[2] ^= 0x40;
    const std::size_t pdu = w::header_size(e);
    byte_vector bad = frame_of(e);
    bad[pdu + 8 + 2] ^= 0x40;
    REQUIRE(!read(bad).accepted());
    // The frame the emitter writes for that payload; its R-CRC the reference CRC.
    const byte_vector fixed = repaired(bad);
    CHECK(hex(fixed) == hex(frame_of(e, payload)));
    const std::size_t end = pdu + 8 + payload.size();
    CHECK(be32(fixed, end) == ref_crc32(fixed.data() + pdu, end - pdu));
  }
}

TEST_CASE("repair: the RH's version and reserved bits, as a receiver checks them") {
  const byte_vector good = frame_of(w::encap::udp4);
  byte_vector bad = good;
  bad[42] |= 0xC0 | 0x0C;  // ver 3, rsv 3 (byte 0: ver(2) op(2) rsv(2) xpuid(2))
  bad[46] |= 0x3C;         // rsvd 15 (byte 4: vc(2) rsvd(4) partition(2))
  const std::size_t end = bad.size() - 4;
  const std::uint32_t crc = ref_crc32(bad.data() + 42, end - 42);
  set16(bad, end, static_cast<std::uint16_t>(crc >> 16));
  set16(bad, end + 2, static_cast<std::uint16_t>(crc));
  scaleup::test::fix_udp4_checksum(bad, 14, 34);
  REQUIRE(read(bad).accepted());  // the R-CRC good, the bits not
  CHECK(hex(repaired(bad)) == hex(good));
  // Without fixed_bits they stay: the frame was whole.
  CHECK(hex(repaired(bad, {.fixed_bits = false})) == hex(bad));
}

TEST_CASE("repair: IPv4 total length and header checksum") {
  const byte_vector good = frame_of(w::encap::udp4);
  // Longer than the frame, or shorter than its own header (a shorter one that still holds the
  // header cuts the datagram: what it leaves out is gone, not repaired).
  for (const std::uint16_t total :
       {std::uint16_t(be16(good, 16) + 7), std::uint16_t(12), std::uint16_t(0)}) {
    CAPTURE(total);
    byte_vector bad = good;
    set16(bad, 16, total);
    set16(bad, 24, 0xBEEF);  // the header checksum
    REQUIRE(!read(bad).ok());
    CHECK(hex(repaired(bad)) == hex(good));
  }
  // IHL below 5: taken as 5.
  byte_vector bad = good;
  bad[14] = 0x43;
  fix_ipv4_checksum(bad, 14);
  CHECK(hex(repaired(bad)) == hex(good));
  // Only the checksum wrong: the frame is whole, and it comes back right too.
  bad = good;
  set16(bad, 24, 0xBEEF);
  CHECK(hex(repaired(bad)) == hex(good));
}

TEST_CASE("repair: UDP length and checksum, over IPv4 and IPv6") {
  for (const w::encap e : {w::encap::udp4, w::encap::udp6}) {
    CAPTURE(w::to_string(e));
    const byte_vector good = frame_of(e);
    const std::size_t udp = e == w::encap::udp4 ? 34 : 54;
    // Below its header, or longer than the datagram.
    for (const std::uint16_t len : {std::uint16_t(3), std::uint16_t(be16(good, udp + 4) + 100)}) {
      CAPTURE(len);
      byte_vector bad = good;
      set16(bad, udp + 4, len);
      CHECK(hex(repaired(bad)) == hex(good));
    }
    // A command changed and the checksum wrong: the frame the emitter writes for that payload.
    byte_vector payload = three_commands();
    payload[2] ^= 0x11;  // the write's tag
    byte_vector bad = good;
    bad[udp + 8 + 8 + 2] ^= 0x11;
    set16(bad, udp + 6, 0x1234);
    CHECK(hex(repaired(bad)) == hex(emit(params_for(e), test_rh(), payload)));
  }
  // A datagram sent without a checksum (IPv4 allows it) keeps none.
  w::frame_params p = params_for(w::encap::udp4);
  p.udp4_checksum = false;
  const byte_vector good = emit(p, test_rh(), three_commands());
  byte_vector bad = good;
  set16(bad, 38, 7);
  CHECK(hex(repaired(bad)) == hex(good));
}

TEST_CASE("repair: IPv6 payload length") {
  const byte_vector good = frame_of(w::encap::udp6);
  for (const std::uint16_t len : {std::uint16_t(4), std::uint16_t(be16(good, 18) + 40)}) {
    byte_vector bad = good;
    set16(bad, 18, len);
    CHECK(hex(repaired(bad)) == hex(good));
  }
}

TEST_CASE("repair: AFH Gen 1 shim length") {
  for (const w::encap e : {w::encap::afh1_shim, w::encap::afh1_vlan_shim}) {
    CAPTURE(w::to_string(e));
    const byte_vector good = frame_of(e);
    const std::size_t shim = e == w::encap::afh1_shim ? 14 : 18;
    // The length is bits 28-43 of the shim: bytes 3 (low nibble), 4 and 5 (high nibble).
    for (const std::uint16_t len : {std::uint16_t(3), std::uint16_t(900)}) {
      CAPTURE(len);
      byte_vector bad = good;
      bad[shim + 3] = static_cast<std::uint8_t>((bad[shim + 3] & 0xF0) | (len >> 12));
      bad[shim + 4] = static_cast<std::uint8_t>(len >> 4);
      bad[shim + 5] = static_cast<std::uint8_t>((bad[shim + 5] & 0x0F) | ((len & 0xF) << 4));
      REQUIRE(!read(bad).ok());
      CHECK(hex(repaired(bad)) == hex(good));
    }
  }
}

TEST_CASE("repair: each command framed as the profile frames it") {
  const byte_vector cmds = three_commands();  // write (12 + 5), barrier (4), read (12)
  REQUIRE(cmds.size() == 33);
  const auto payload_after = [](byte_vector payload) {
    const byte_vector f = repaired(emit(params_for(w::encap::udp4), test_rh(), payload));
    const w::received_frame r = read(f);
    REQUIRE(r.accepted());
    return byte_vector(r.payload.begin(), r.payload.end());
  };
  // A data length past the payload's end: cut to what is there (here, the rest).
  byte_vector p = cmds;
  p[1] = 200;
  byte_vector want = cmds;
  want[1] = static_cast<std::uint8_t>(cmds.size() - 12 - 1);
  CHECK(hex(payload_after(p)) == hex(want));
  // A type the profile lacks becomes one it has (types[code % count]), its bytes kept: 0x13
  // becomes the barrier it replaced, or cut when that type's control does not fit.
  const auto types = pk::default_profile.types();
  REQUIRE(types[0x13 % types.size()].code == pk::code::barrier);
  p = cmds;
  p[17] = 0x13;
  CHECK(hex(payload_after(p)) == hex(cmds));
  REQUIRE(types[0x03 % types.size()].control_bytes() + 1 > 16);  // control and one data byte
  p[17] = 0x03;
  CHECK(hex(payload_after(p)) == hex(w::bytes(cmds).first(17)));
  // Zeros to the end are padding: cut off.
  p = cat({cmds, byte_vector(7, 0)});
  CHECK(hex(payload_after(p)) == hex(cmds));
  // A control cut off: dropped.
  p = cat({cmds, {pk::code::read, 0, 0}});
  CHECK(hex(payload_after(p)) == hex(cmds));
  // A reserved field set (the barrier's byte 1): cleared.
  p = cmds;
  p[18] = 0x55;
  CHECK(hex(payload_after(p)) == hex(cmds));
  // Commands beyond max_payload: cut at the last boundary within it.
  fz::mutator_config small;
  small.max_payload = 20;
  const byte_vector f = repaired(frame_of(w::encap::udp4), small);
  CHECK(hex(read(f).payload) == hex(w::bytes(cmds).first(17)));
}

TEST_CASE("repair: a Layer 2 frame padded to the minimum, its R-CRC at the commands' end") {
  for (const w::encap e : {w::encap::afh1, w::encap::afh2c}) {
    CAPTURE(w::to_string(e));
    const byte_vector payload = {pk::code::barrier, 0, 0, 1};
    const byte_vector good = frame_of(e, payload);
    REQUIRE(good.size() == 60);
    // The padding lost.
    const std::size_t end = w::header_size(e) + 8 + payload.size() + 4;
    const byte_vector bad(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(end));
    const byte_vector fixed = repaired(bad);
    CHECK(hex(fixed) == hex(good));
    CHECK(read(fixed).bounds.pad == 60 - end);
    // Without padding asked for, none.
    CHECK(hex(repaired(bad, {.pad = false})) == hex(bad));
  }
}

TEST_CASE("repair: the FCS, when the frames carry one") {
  const byte_vector good = with_ethernet_fcs(frame_of(w::encap::udp6));
  byte_vector bad = good;
  bad[70] ^= 0x08;  // the PDU: the R-CRC and the FCS both wrong
  const byte_vector fixed = repaired(bad, {.fcs = true});
  const w::received_frame r = read(fixed, w::link_ethernet, w::fcs_mode::present);
  CHECK(r.accepted());
  CHECK(r.fcs.present);
  CHECK(r.fcs.good);
  // The frame repaired without its FCS, then the reference FCS appended.
  CHECK(hex(fixed) == hex(with_ethernet_fcs(repaired(byte_vector(bad.begin(), bad.end() - 4)))));
}

TEST_CASE("repair: a datagram on a port nobody named, with a bad R-CRC, is still found") {
  w::frame_params p = params_for(w::encap::udp4);
  p.udp_src_port = p.udp_dst_port = 9999;
  const byte_vector good = emit(p, test_rh(), three_commands());
  byte_vector bad = good;
  bad[60] ^= 1;
  REQUIRE(!pk::read_frame(bad, w::link_ethernet, &pk::default_profile).kind);
  CHECK(hex(repaired(bad)) != hex(bad));
  CHECK(pk::read_frame(repaired(bad), w::link_ethernet, &pk::default_profile).accepted());
}

TEST_CASE("repair: no SUE PDU to be found: 0, the bytes untouched") {
  byte_vector arp = cat({byte_vector(12, 0xFF), {0x08, 0x06}, byte_vector(46, 0x11)});
  const byte_vector before = arp;
  fz::sue_mutator m;
  CHECK(m.repair_frame(arp.data(), arp.size(), arp.size()) == 0);
  CHECK(hex(arp) == hex(before));
  // An IP fragment is the reassembler's, not a frame to repair.
  byte_vector frag = frame_of(w::encap::udp4);
  frag[20] = 0x20;  // MF
  fix_ipv4_checksum(frag, 14);
  CHECK(m.repair_frame(frag.data(), frag.size(), frag.size()) == 0);
}

// ---- faults ---------------------------------------------------------------------------------

TEST_CASE("sue_mutator: each fault it leaves on purpose is one a receiver sees") {
  std::map<fz::fault, int> seen;
  for (const w::encap e : {w::encap::udp4, w::encap::udp6, w::encap::afh1_shim, w::encap::afh2}) {
    CAPTURE(w::to_string(e));
    fz::sue_mutator m({.fault_one_in = 1});
    const byte_vector start = frame_of(e);
    for (unsigned seed = 0; seed < 400; ++seed) {
      byte_vector f = start;
      f.resize(4096);
      const std::size_t n = m.mutate_frame(f.data(), start.size(), f.size(), seed);
      f.resize(n);
      // Where the headers may have changed (their bytes mutated, another encapsulation), a reader
      // that names only the original port may not take a faulty PDU for SUE at all.
      if (m.last() == fz::mutation::head_bytes || m.last() == fz::mutation::bytes ||
          m.last() == fz::mutation::repaired || m.last() == fz::mutation::encapsulation)
        continue;
      const w::received_frame r = read(f);
      ++seen[m.last_fault()];
      CAPTURE(static_cast<int>(m.last_fault()));
      CAPTURE(hex(f));
      switch (m.last_fault()) {
        case fz::fault::none:
          CHECK(r.accepted());
          break;
        case fz::fault::rcrc:
          CHECK(!r.accepted());
          break;
        case fz::fault::length:
          // A length off by one to eight: an error, or the PDU read short of its R-CRC.
          CHECK((!r.ok() || !r.accepted()));
          break;
        case fz::fault::rh_bits:
          REQUIRE(r.rh);
          CHECK(r.rh->rsvd != 0);
          CHECK(r.accepted());  // the R-CRC covers the bits as sent
          break;
        case fz::fault::command_length:
          CHECK(r.accepted());
          CHECK(!commands_whole(r.payload));
          break;
      }
    }
  }
  for (const auto f :
       {fz::fault::rcrc, fz::fault::length, fz::fault::rh_bits, fz::fault::command_length}) {
    CAPTURE(static_cast<int>(f));
    CHECK(seen[f] > 20);
  }
  CHECK(seen[fz::fault::none] == 0);  // one in one: always a fault
}

// ---- captures -------------------------------------------------------------------------------

TEST_CASE("sue_mutator: a capture mutated 3000 times stays a file the reader reads") {
  const std::vector<byte_vector> frames{frame_of(w::encap::udp4), frame_of(w::encap::udp6),
                                        frame_of(w::encap::afh1_vlan_shim),
                                        frame_of(w::encap::afh2c)};
  fz::sue_mutator m({.fault_one_in = 0});
  byte_vector file = pcap_of(w::link_ethernet, frames);
  std::size_t size = file.size();
  file.resize(16384);
  std::map<fz::mutation, int> seen;
  int frames_not_sue = 0, frames_total = 0;
  for (unsigned seed = 0; seed < 3000; ++seed) {
    size = m.mutate_capture(file.data(), size, file.size(), seed);
    REQUIRE(size <= file.size());
    ++seen[m.last()];
    const auto restart = [&] {
      const byte_vector first = pcap_of(w::link_ethernet, frames);
      size = first.size();
      std::copy(first.begin(), first.end(), file.begin());
    };
    // The file's bytes, or a frame's head, mutated: what comes out need not be SUE.
    if (m.last() == fz::mutation::bytes || m.last() == fz::mutation::head_bytes) {
      restart();
      continue;
    }
    const auto recs =
        records_of(byte_vector(file.begin(), file.begin() + static_cast<std::ptrdiff_t>(size)));
    for (const auto& r : recs) {
      ++frames_total;
      if (r.data.size() < r.len) continue;  // cut by a snapshot length
      const w::received_frame f = read(r.data);
      fz::frame_parts p;
      const bool lite = m.take_apart(r.data, w::link_ethernet, p) && p.kind == w::encap::lite;
      frames_not_sue += !(f.accepted() || f.fragment || lite);
    }
    if (recs.size() > 40) restart();  // kept small
  }
  CHECK(frames_not_sue == 0);
  CHECK(frames_total > 3000);
  for (const auto k :
       {fz::mutation::record_duplicate, fz::mutation::record_remove, fz::mutation::record_move,
        fz::mutation::record_reply, fz::mutation::record_time, fz::mutation::record_cut,
        fz::mutation::record_fragment, fz::mutation::rh_field, fz::mutation::command_insert,
        fz::mutation::bytes}) {
    CAPTURE(fz::to_string(k));
    CHECK(seen[k] > 0);
  }
}

TEST_CASE("sue_mutator: a reply answers its frame from the other end") {
  fz::sue_mutator m({.fault_one_in = 0});
  for (const w::encap e :
       {w::encap::udp4, w::encap::udp6, w::encap::afh1_shim, w::encap::afh2, w::encap::afh2c}) {
    CAPTURE(w::to_string(e));
    w::frame_params params = params_for(e);
    params.udp_src_port = 1111;  // to the golden port, so that a reply comes back from it
    const byte_vector sent = emit(params, test_rh(), three_commands());
    for (unsigned first : {0u, 1000u, 2000u}) {
      const auto recs = records_of(
          mutated_until(m, pcap_of(w::link_ethernet, {sent}), fz::mutation::record_reply, first));
      REQUIRE(recs.size() == 2);
      CHECK(hex(recs[0].data) == hex(sent));
      CHECK(recs[1].ns > recs[0].ns);
      const w::received_frame a = read(recs[0].data), b = read(recs[1].data);
      REQUIRE(b.accepted());
      CHECK(b.kind == a.kind);
      CHECK((b.rh->op == 0 || b.rh->op == 1));
      CHECK(b.rh->apsn + 1 - a.rh->npsn <= 2u);  // npsn - 1 to npsn + 1
      CHECK(b.rh->xpuid == 2);                   // the XPU the frame was sent to
      if (a.ipv4) {
        CHECK(b.ipv4->value.src == a.ipv4->value.dst);
        CHECK(b.ipv4->value.dst == a.ipv4->value.src);
      }
      if (a.ipv6) CHECK(b.ipv6->value.src == a.ipv6->value.dst);
      if (a.udp) {
        CHECK(b.udp->value.src_port == a.udp->value.dst_port);
        CHECK(b.udp->value.dst_port == a.udp->value.src_port);
      }
      if (a.eth) CHECK(b.eth->value.dst == a.eth->value.src);
      if (a.dst_xpu) {
        CHECK(b.src_xpu == a.dst_xpu);
        CHECK(b.dst_xpu == a.src_xpu);
      }
    }
  }
}

TEST_CASE("sue_mutator: fragments of a datagram reassemble into it") {
  fz::sue_mutator m({.fault_one_in = 0});
  for (const w::encap e : {w::encap::udp4, w::encap::udp6}) {
    CAPTURE(w::to_string(e));
    const byte_vector payload = cat({three_commands(), three_commands(), three_commands()});
    const byte_vector sent = frame_of(e, payload);
    const w::received_frame whole = read(sent);
    const std::size_t udp = whole.udp->offset;
    const byte_vector datagram(sent.begin() + static_cast<std::ptrdiff_t>(udp), sent.end());
    for (unsigned first : {0u, 500u, 1000u, 1500u}) {
      const auto recs = records_of(mutated_until(m, pcap_of(w::link_ethernet, {sent}),
                                                 fz::mutation::record_fragment, first));
      REQUIRE(recs.size() >= 2);
      scaleup::wire::ip_reassembler<> r;
      int complete = 0;
      std::uint64_t n = 0;
      for (const auto& rec : recs) {
        const w::received_frame f = read(rec.data);
        REQUIRE(f.fragment);
        const auto& got = r.push(*f.fragment, ++n, 0);
        if (got.state != w::fragment_state::complete) continue;
        ++complete;
        const w::received_frame d = read(byte_vector(got.datagram.begin(), got.datagram.end()),
                                         e == w::encap::udp4 ? w::link_ipv4 : w::link_ipv6);
        CHECK(d.accepted());
        const std::size_t hl = e == w::encap::udp4 ? 20 : 40;
        CHECK(hex(w::bytes(got.datagram).subspan(hl)) == hex(datagram));
      }
      CHECK(complete == 1);
    }
  }
}

TEST_CASE("sue_mutator: a record cut, duplicated, moved in time, removed") {
  fz::sue_mutator m({.fault_one_in = 0});
  const std::vector<byte_vector> frames{frame_of(w::encap::udp4), frame_of(w::encap::afh2)};
  const byte_vector file = pcap_of(w::link_ethernet, frames);
  auto recs = records_of(mutated_until(m, file, fz::mutation::record_cut));
  REQUIRE(recs.size() == 2);
  CHECK(((recs[0].data.size() < recs[0].len) != (recs[1].data.size() < recs[1].len)));
  recs = records_of(mutated_until(m, file, fz::mutation::record_duplicate));
  REQUIRE(recs.size() == 3);
  CHECK((recs[0].data == recs[1].data) + (recs[0].data == recs[2].data) +
            (recs[1].data == recs[2].data) ==
        1);
  recs = records_of(mutated_until(m, file, fz::mutation::record_time));
  REQUIRE(recs.size() == 2);
  CHECK((recs[0].ns != 1700000000000010000ull || recs[1].ns != 1700000000000020000ull));
  recs = records_of(mutated_until(m, file, fz::mutation::record_remove));
  CHECK(recs.size() == 1);
  recs = records_of(mutated_until(m, file, fz::mutation::record_move));
  REQUIRE(recs.size() == 2);
}

TEST_CASE("sue_mutator: not a pcap file: bytes, or a new capture") {
  fz::sue_mutator m;
  int generated = 0;
  for (unsigned seed = 0; seed < 100; ++seed) {
    byte_vector file(4096, 0x42);
    const std::size_t n = m.mutate_capture(file.data(), 100, file.size(), seed);
    if (m.last() != fz::mutation::generated) continue;
    ++generated;
    const auto recs = records_of(byte_vector(file.begin(), file.begin() + n));
    CHECK(!recs.empty());
    for (const auto& r : recs)
      CHECK((read(r.data).accepted() || read(r.data).kind == w::encap::lite));
  }
  CHECK(generated > 20);
}

TEST_CASE("sue_mutator: cross-over of frames and of captures") {
  fz::sue_mutator m({.fault_one_in = 0});
  const byte_vector a = frame_of(w::encap::udp4);
  const byte_vector b = frame_of(w::encap::afh1, cat({three_commands(), three_commands()}));
  for (unsigned seed = 0; seed < 50; ++seed) {
    byte_vector out(4096);
    out.resize(m.cross_over_frame(a, b, out.data(), out.size(), seed));
    const w::received_frame r = read(out);
    REQUIRE(r.accepted());
    CHECK(r.kind == w::encap::udp4);  // a's headers
    CHECK(commands_whole(r.payload));
  }
  const byte_vector ca = pcap_of(w::link_ethernet, {a, a, a});
  const byte_vector cb = pcap_of(w::link_ethernet, {b, b});
  std::set<std::size_t> counts;
  for (unsigned seed = 0; seed < 50; ++seed) {
    byte_vector out(8192);
    out.resize(m.cross_over_capture(ca, cb, out.data(), out.size(), seed));
    const auto recs = records_of(out);
    counts.insert(recs.size());
    for (const auto& r : recs) CHECK(read(r.data).accepted());
  }
  CHECK(counts.size() > 2);
  // Another link type: a's bytes.
  const byte_vector other = pcap_of(w::link_afh2, {frame_of(w::encap::afh2)});
  byte_vector out(8192);
  out.resize(m.cross_over_capture(ca, other, out.data(), out.size(), 3));
  CHECK(hex(out) == hex(ca));
}

TEST_CASE("basic_byte_mutator: never past max_size, never below one byte") {
  fz::mutation_rng r(7);
  const fz::basic_byte_mutator mut{&r};
  std::array<std::uint8_t, 16> buf{};
  std::size_t size = 0;
  for (int i = 0; i < 10000; ++i) {
    const std::size_t max = 1 + r.below(16);
    size = mut(buf.data(), std::min(size, max), max);
    REQUIRE(size >= 1);
    REQUIRE(size <= max);
  }
  CHECK(!fz::libfuzzer_linked());  // not under libFuzzer here: the mutator uses its own
}
