// The dissection engine (include/scaleup/dissect/engine.hpp) in lax mode, and its printers.
//
// Frames come from the emitter (pinned to hand-written goldens in frame_test.cpp) or are
// written here by hand; every malformed frame is made by patching bytes at offsets worked out
// from the header layouts, with checksums fixed by a reference ones'-complement sum and a
// bitwise reference CRC-32 that share no code with scaleup (support.hpp).
#include <scaleup/dissect/engine.hpp>
#include <scaleup/dissect/field_tree.hpp>
#include <scaleup/dissect/frame_json.hpp>
#include <scaleup/dissect/registered_fields.hpp>
#include <scaleup/dissect/summary.hpp>
#include <scaleup/wire/frame.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "support.hpp"
#include "tree_support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace w = scaleup::wire;
using scaleup::test::be16;
using scaleup::test::byte_vector;
using scaleup::test::cat;
using scaleup::test::contains;
using scaleup::test::fix_ipv4_checksum;
using scaleup::test::fix_udp4_checksum;
using scaleup::test::golden_udp_port;
using scaleup::test::params_for;
using scaleup::test::ramp;
using scaleup::test::ref_crc32;
using scaleup::test::ref_sum;
using scaleup::test::render;
using scaleup::test::set16;
using scaleup::test::test_rh;
using scaleup::test::with_ethernet_fcs;

using scaleup::test::ip4_at;
using scaleup::test::pdu4_at;
using scaleup::test::rcrc_status;
using scaleup::test::udp4_at;

// ---- frames -----------------------------------------------------------------------------

const byte_vector kDissectPayload{0xAA, 0xBB, 0xCC};
constexpr std::uint32_t kRcrcValue = 0x6323B880;  // CRC-32 of 00 01 12 34 40 05 00 42 AA BB CC

byte_vector emit_frame(const w::frame_params& p, const w::reliability_header& rh = test_rh(),
                       const byte_vector& payload = kDissectPayload) {
  byte_vector out(8192);
  const auto r = p.kind == w::encap::lite ? w::emit_frame(p, payload, out)
                                          : w::emit_sue_frame(p, rh, payload, out);
  REQUIRE(r.ok());
  out.resize(r.value);
  return out;
}
byte_vector emit_frame(w::encap e) { return emit_frame(params_for(e)); }

byte_vector emit_inner(const w::frame_params& p, const byte_vector& inner) {
  byte_vector out(8192);
  const auto r = w::emit_frame(p, inner, out);
  REQUIRE(r.ok());
  out.resize(r.value);
  return out;
}

using scaleup::test::all_encaps;

// ---- tree access --------------------------------------------------------------------------

// These tests carry opaque payloads (AA BB CC ...): no command profile. Commands are tested in
// dissect_commands_test.cpp. Their UDP frames go to and from golden_udp_port (support.hpp), which
// these options name as SUE's, as `--udp-port 4793` does: damaged PDUs are read as SUE there.
// No port is SUE's by default ("SUE over UDP by port ..." below).
struct opaque_options : d::options {
  opaque_options() {
    profile = nullptr;
    add_udp_port(golden_udp_port);
  }
};

// The tree borrows the frame (IPv6 address fields point into it), so the two travel together.
struct dissected {
  byte_vector frame;
  std::unique_ptr<d::tree> tree;
  d::tree* operator->() const { return tree.get(); }
  d::tree& operator*() const { return *tree; }
};

dissected dissect(byte_vector f, std::uint32_t link = d::link_ethernet,
                  const opaque_options& o = {}) {
  dissected r{std::move(f), std::make_unique<d::tree>()};
  d::dissect_frame(*r.tree, w::bytes(r.frame.data(), r.frame.size()), link, o);
  return r;
}

constexpr std::uint64_t absent = 0xDEADBEEFDEADBEEFull;

std::uint64_t val(const d::tree& t, std::string_view filter) {
  const auto* f = t.find(filter);
  return f ? f->value : absent;
}
bool has(const d::tree& t, std::string_view filter) { return t.find(filter) != nullptr; }

std::string text(const d::field_node& f) {
  return render([&](auto& out) { d::put_value(out, f); });
}
std::string json_of(const d::tree& t, std::uint64_t n = 1) {
  return render([&](auto& out) { d::put_json(out, t, n); });
}
std::string summary_of(const d::tree& t, std::uint64_t n = 1) {
  return render([&](auto& out) { d::put_summary(out, t, n); });
}
std::string verbose_of(const d::tree& t, std::uint64_t n = 1) {
  return render([&](auto& out) { d::put_verbose(out, t, n); });
}

std::string errors_text(const d::tree& t) {
  std::string s;
  for (const auto& e : t.error_list()) {
    s += render([&](auto& out) { d::put_error_text(out, e); });
    s += '\n';
  }
  return s;
}

// The one problem a test expects, found by layer and code.
const w::error* find_error(const d::tree& t, std::string_view layer, w::errc code) {
  for (const auto& e : t.error_list())
    if (e.layer == layer && e.code == code) return &e;
  return nullptr;
}

struct want_error {
  std::string_view layer;
  w::errc code;
  std::uint32_t offset;
  w::severity level = w::severity::error;
  std::string_view field{};
  std::optional<std::uint64_t> value{};
  std::uint32_t needed = 0;
  std::uint32_t available = 0;
};

// Exactly this problem, once, with every detail.
void check_only_error(const d::tree& t, const want_error& want) {
  INFO("errors:\n" << errors_text(t));
  REQUIRE(t.error_count == 1);
  const w::error& e = t.errors[0];
  CHECK(e.layer == want.layer);
  CHECK(w::to_string(e.code) == w::to_string(want.code));
  CHECK(e.offset == want.offset);
  CHECK(e.level == want.level);
  CHECK(e.field == want.field);
  if (want.value) CHECK(e.value == *want.value);
  CHECK(e.needed == want.needed);
  CHECK(e.available == want.available);
  CHECK_FALSE(e.what.empty());
  CHECK(t.has_errors() == (want.level == w::severity::error));
}

void check_rh(const d::tree& t) {
  CHECK(val(t, "sue.rh.ver") == 0);
  CHECK(val(t, "sue.rh.op") == 0);
  CHECK(t.find("sue.rh.op")->value_name() == "ACK");
  CHECK(val(t, "sue.rh.xpuid") == 1);
  CHECK(val(t, "sue.rh.npsn") == 0x1234);
  CHECK(val(t, "sue.rh.vc") == 1);
  CHECK(val(t, "sue.rh.partition") == 5);
  CHECK(val(t, "sue.rh.apsn") == 0x42);
  // Code that knows the header finds a field by its table entry: the node its name finds. A copy
  // of the entry, the same name at another address, is not the entry.
  const auto by_entry = [&](const w::field_info& f) {
    CHECK(t.find(f.filter) != nullptr);
    CHECK(t.find(f) == t.find(f.filter));
  };
  std::apply([&](const auto&... f) { (by_entry(f), ...); },
             w::layout<w::reliability_header>::fields);
  CHECK(t.find(d::computed_fields::payload_len) == t.find("sue.payload.len"));
  const w::field_info copy = w::info_of<w::reliability_header, &w::reliability_header::npsn>();
  CHECK(t.find(copy) == nullptr);
}

// ---- a small strict JSON parser (RFC 8259 subset: no floats needed, but accepted) ----------

struct json {
  enum class type { null, boolean, number, string, array, object };
  type t = type::null;
  bool b = false;
  std::string str;  // string value, or the number's text
  std::vector<json> items;
  std::vector<std::string> keys;

  const json* get(std::string_view k) const {
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (keys[i] == k) return &items[i];
    return nullptr;
  }
};

class json_parser {
 public:
  explicit json_parser(std::string_view s) : s_(s) {}

  // One value filling the whole text, or nullopt.
  std::optional<json> document() {
    json v;
    if (!value(v, 0)) return std::nullopt;
    ws();
    if (i_ != s_.size()) return std::nullopt;
    return v;
  }

 private:
  void ws() {
    while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r'))
      ++i_;
  }
  bool lit(std::string_view l) {
    if (s_.substr(i_, l.size()) != l) return false;
    i_ += l.size();
    return true;
  }
  static bool digit(char c) { return c >= '0' && c <= '9'; }
  static bool hexdigit(char c) {
    return digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
  }

  bool string(std::string& out) {
    if (i_ >= s_.size() || s_[i_] != '"') return false;
    ++i_;
    while (i_ < s_.size()) {
      const char c = s_[i_++];
      if (c == '"') return true;
      if (static_cast<unsigned char>(c) < 0x20) return false;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (i_ >= s_.size()) return false;
      const char e = s_[i_++];
      switch (e) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u':
          for (int k = 0; k < 4; ++k)
            if (i_ >= s_.size() || !hexdigit(s_[i_++])) return false;
          out += '?';
          break;
        default:
          return false;
      }
    }
    return false;
  }

  bool number(std::string& out) {
    const std::size_t start = i_;
    if (i_ < s_.size() && s_[i_] == '-') ++i_;
    if (i_ >= s_.size() || !digit(s_[i_])) return false;
    if (s_[i_] == '0')
      ++i_;
    else
      while (i_ < s_.size() && digit(s_[i_])) ++i_;
    if (i_ < s_.size() && s_[i_] == '.') {
      ++i_;
      if (i_ >= s_.size() || !digit(s_[i_])) return false;
      while (i_ < s_.size() && digit(s_[i_])) ++i_;
    }
    if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      if (i_ >= s_.size() || !digit(s_[i_])) return false;
      while (i_ < s_.size() && digit(s_[i_])) ++i_;
    }
    out = std::string(s_.substr(start, i_ - start));
    return true;
  }

  bool value(json& v, int depth) {
    if (depth > 32) return false;
    ws();
    if (i_ >= s_.size()) return false;
    const char c = s_[i_];
    if (c == '{') {
      v.t = json::type::object;
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == '}') return ++i_, true;
      for (;;) {
        ws();
        std::string k;
        if (!string(k)) return false;
        if (v.get(k)) return false;  // a duplicate key is a defect in our output
        ws();
        if (!lit(":")) return false;
        json item;
        if (!value(item, depth + 1)) return false;
        v.keys.push_back(std::move(k));
        v.items.push_back(std::move(item));
        ws();
        if (lit(",")) continue;
        return lit("}");
      }
    }
    if (c == '[') {
      v.t = json::type::array;
      ++i_;
      ws();
      if (i_ < s_.size() && s_[i_] == ']') return ++i_, true;
      for (;;) {
        json item;
        if (!value(item, depth + 1)) return false;
        v.items.push_back(std::move(item));
        ws();
        if (lit(",")) continue;
        return lit("]");
      }
    }
    if (c == '"') {
      v.t = json::type::string;
      return string(v.str);
    }
    if (lit("true")) return v.t = json::type::boolean, v.b = true, true;
    if (lit("false")) return v.t = json::type::boolean, true;
    if (lit("null")) return v.t = json::type::null, true;
    v.t = json::type::number;
    return number(v.str);
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

std::optional<json> parse_json(const std::string& s) { return json_parser(s).document(); }

// ---- invariants for arbitrary input ----------------------------------------------------------

void check_invariants(const d::tree& t, std::size_t input_len) {
  REQUIRE(t.error_count <= t.errors.size());
  REQUIRE(t.layer_count <= t.layers.size());
  REQUIRE(t.field_count <= t.fields.size());
  REQUIRE(t.frame_length <= input_len);
  for (const auto& l : t.layer_list()) {
    CAPTURE(l.name);
    REQUIRE(std::size_t{l.offset} + l.length <= input_len);
  }
  for (const auto& f : t.field_list()) {
    REQUIRE(f.info != nullptr);
    REQUIRE(f.layer < t.layer_count);
    if (f.generated) continue;
    CAPTURE(f.info->filter);
    REQUIRE(std::uint64_t{f.bit} + f.info->width <= std::uint64_t{t.frame_length} * 8);
  }
  for (const auto& e : t.error_list()) REQUIRE(!e.layer.empty());
}

}  // namespace

// ---- each encapsulation, emitted then dissected --------------------------------------------

TEST_CASE("dissect: the fields a Wireshark dissector registers, and the bits it draws") {
  d::registered_fields r;
  r.collect_shipped();
  const auto bits = [&](std::string_view filter) {
    const d::registered_field* f = r.find(filter);
    REQUIRE(f != nullptr);
    return std::pair{f->bitmask(), f->shift()};
  };
  // RH octet 0 (R2 Table 5): ver, op and rsv, two bits each; xpuid's ten bits end octet 1.
  CHECK(bits("sue.rh.ver") == std::pair{0xC0u, 6u});
  CHECK(bits("sue.rh.op") == std::pair{0x30u, 4u});
  CHECK(bits("sue.rh.rsv") == std::pair{0x0Cu, 2u});
  CHECK(bits("sue.rh.xpuid") == std::pair{0x03FFu, 0u});
  CHECK(bits("ip.frag_offset") == std::pair{0x1FFFu, 0u});
  CHECK(bits("sue.rh.npsn").first == 0);       // fills its bytes
  CHECK(bits("ipv6.flow").first == 0);         // hex: tshark's digits would follow the bits
  CHECK(bits("tofu.rh.di").first == 0);        // three bits over two bytes, an 8-bit type
  CHECK(bits("rdma.payload.len").first == 0);  // computed
  // An entry elsewhere in its byte, of another width, or a command's: registered without.
  r.collect(w::field_info{.name = "ver", .filter = "sue.rh.ver", .bit = 1, .width = 2}, true);
  CHECK(bits("sue.rh.ver").first == 0);
  r.collect(w::field_info{.name = "op", .filter = "sue.rh.op", .bit = 2, .width = 3}, true);
  CHECK(bits("sue.rh.op").first == 0);
  r.collect(w::field_info{.name = "rsv", .filter = "sue.rh.rsv", .bit = 4, .width = 2});
  CHECK(bits("sue.rh.rsv").first == 0);
  CHECK(r.find("sue.rh.rsv")->width == 2);
  CHECK(r.find("sue.rh.xpuid")->name == "xpuid");
  CHECK(r.find("no.such.field") == nullptr);
}

TEST_CASE("dissect: every encapsulation round-trips through the emitter") {
  for (w::encap e : all_encaps) {
    const std::string_view name = w::to_string(e);
    CAPTURE(name);
    const byte_vector f = emit_frame(e);
    const auto t = dissect(f);
    INFO("errors:\n" << errors_text(*t));
    CHECK(t->encap == name);
    CHECK(t->error_count == 0);
    CHECK_FALSE(t->overflow);
    CHECK(t->frame_length == f.size());
    CHECK_FALSE(has(*t, "eth.fcs"));
    check_invariants(*t, f.size());

    if (e == w::encap::lite) {
      CHECK(val(*t, "afh2c.src_xpu") == 1);
      CHECK(val(*t, "afh2c.dst_xpu") == 2);
      CHECK(val(*t, "afh2c.tc") == 3);
      CHECK(val(*t, "afh2.w") == 1);
      // The padding to 60 bytes cannot be told from packed payload without the commands.
      CHECK(val(*t, "sue_lite.len") == 60 - 6);
      CHECK_FALSE(has(*t, "sue.rh.ver"));
      CHECK_FALSE(has(*t, "afh2.type"));
      const auto* l = t->find_layer("sue_lite");
      REQUIRE(l != nullptr);
      CHECK(l->offset == 6);
      CHECK(l->length == 54);
      continue;
    }

    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");
    CHECK(val(*t, "sue.payload.len") == 3);
    CHECK(val(*t, "sue.rcrc") == kRcrcValue);
    const std::size_t hs = w::header_size(e);
    const auto* rh_layer = t->find_layer("sue.rh");
    REQUIRE(rh_layer != nullptr);
    CHECK(rh_layer->offset == hs);
    CHECK(rh_layer->length == 8);
    const auto* crc_layer = t->find_layer("sue.rcrc");
    REQUIRE(crc_layer != nullptr);
    CHECK(crc_layer->offset == hs + 11);

    switch (e) {
      case w::encap::udp4:
        CHECK(val(*t, "eth.type") == 0x0800);
        CHECK(val(*t, "ip.src") == 0x0A000001);
        CHECK(val(*t, "ip.dst") == 0x0A000002);
        CHECK(val(*t, "ip.len") == 43);
        CHECK(val(*t, "ip.dsfield.dscp") == 3);
        CHECK(val(*t, "udp.dstport") == 4793);
        CHECK(val(*t, "udp.length") == 23);
        CHECK(text(*t->find("ip.src")) == "10.0.0.1");
        break;
      case w::encap::udp6:
        CHECK(val(*t, "eth.type") == 0x86DD);
        CHECK(text(*t->find("ipv6.src")) == "fd53:5545::1");
        CHECK(text(*t->find("ipv6.dst")) == "fd53:5545::2");
        CHECK(val(*t, "ipv6.plen") == 23);
        CHECK(val(*t, "ipv6.tclass") == 3 << 2);
        CHECK(val(*t, "udp.length") == 23);
        break;
      case w::encap::afh1:
      case w::encap::afh1_vlan:
      case w::encap::afh1_shim:
      case w::encap::afh1_vlan_shim:
        CHECK(val(*t, "afh1.dst_xpu") == 2);
        CHECK(val(*t, "afh1.src_xpu") == 1);
        CHECK(val(*t, "afh1.da_prefix") == 0x42535545);
        CHECK(val(*t, "afh1.sa_prefix") == 0x42535545);
        CHECK(has(*t, "vlan.priority") == w::has_vlan(e));
        if (w::has_vlan(e)) {
          CHECK(val(*t, "vlan.priority") == 3);
          CHECK(val(*t, "vlan.id") == 1);
        }
        CHECK(has(*t, "afh1.shim.version") == w::has_shim(e));
        if (w::has_shim(e)) {
          CHECK(val(*t, "afh1.shim.src_xpu") == 1);
          CHECK(val(*t, "afh1.shim.dst_xpu") == 2);
          CHECK(val(*t, "afh1.shim.tc") == 3);
          CHECK(val(*t, "afh1.shim.hop_limit") == 64);
          CHECK(val(*t, "afh1.shim.next_header") == 253);
          CHECK(val(*t, "afh1.shim.length") == 15);
        }
        break;
      case w::encap::afh2:
        CHECK(val(*t, "afh2.dst_xpu") == 2);
        CHECK(val(*t, "afh2.src_xpu") == 1);
        CHECK(val(*t, "afh2.tc") == 3);
        CHECK(val(*t, "afh2.hop_count") == 64);
        CHECK(val(*t, "afh2.w") == 0);
        CHECK(val(*t, "afh2.type") == 0x88B5);
        break;
      case w::encap::afh2c:
        CHECK(val(*t, "afh2c.dst_xpu") == 2);
        CHECK(val(*t, "afh2c.src_xpu") == 1);
        CHECK(val(*t, "afh2c.tc") == 3);
        CHECK(val(*t, "afh2.type") == 0x88B5);
        break;
      case w::encap::lite:
        break;
    }

    // Layer 2 carriers: the R-CRC is found in front of the zero padding.
    const bool l2_padded = e == w::encap::afh1 || e == w::encap::afh1_vlan || e == w::encap::afh2 ||
                           e == w::encap::afh2c;
    const auto* pad = t->find_layer("sue.pad");
    CHECK((pad != nullptr) == l2_padded);
    if (pad) {
      CHECK(pad->offset == hs + 15);
      CHECK(pad->length == 60 - hs - 15);
    }
  }
}

TEST_CASE("dissect: unpadded Layer 2 frames and bigger payloads") {
  for (w::encap e : {w::encap::afh1, w::encap::afh1_vlan, w::encap::afh1_shim,
                     w::encap::afh1_vlan_shim, w::encap::afh2, w::encap::afh2c}) {
    CAPTURE(w::to_string(e));
    w::frame_params p = params_for(e);
    p.pad = false;
    auto t = dissect(emit_frame(p));
    CHECK(t->error_count == 0);
    CHECK(rcrc_status(*t) == "good");
    CHECK(val(*t, "sue.payload.len") == 3);
    byte_vector payload = ramp(100, 0x00);
    payload.back() = 0;  // trailing zeros in the payload itself
    t = dissect(emit_frame(params_for(e), test_rh(), payload));
    CHECK(t->error_count == 0);
    CHECK(rcrc_status(*t) == "good");
    CHECK(val(*t, "sue.payload.len") == 100);
  }
  // A short payload ending in zeros, inside a padded frame: the R-CRC is still found.
  const byte_vector zero_tail{0x11, 0x00, 0x00};
  const auto t = dissect(emit_frame(params_for(w::encap::afh2c), test_rh(), zero_tail));
  CHECK(rcrc_status(*t) == "good");
  CHECK(val(*t, "sue.payload.len") == 3);
  CHECK(t->error_count == 0);
  w::frame_params p = params_for(w::encap::lite);
  p.pad = false;
  const auto lt = dissect(emit_frame(p));
  CHECK(lt->error_count == 0);
  CHECK(val(*lt, "sue_lite.len") == 3);
}

// ---- FCS ----------------------------------------------------------------------------------

TEST_CASE("dissect: a trailing Ethernet FCS is found, or kept with fcs_mode::absent") {
  for (w::encap e : all_encaps) {
    CAPTURE(w::to_string(e));
    const byte_vector f = emit_frame(e);
    const byte_vector ff = with_ethernet_fcs(f);
    const std::uint32_t fcs = ref_crc32(f.data(), f.size());
    const auto plain = dissect(f);

    opaque_options present;
    present.fcs = d::fcs_mode::present;
    for (const opaque_options& o : {opaque_options{}, present}) {
      const auto t = dissect(ff, d::link_ethernet, o);
      INFO("errors:\n" << errors_text(*t));
      CHECK(t->encap == plain->encap);
      CHECK(t->frame_length == f.size());
      CHECK(t->error_count == 0);
      REQUIRE(t->field_count == plain->field_count + 1);
      for (std::size_t i = 0; i < plain->field_count; ++i) {
        CAPTURE(plain->fields[i].info->filter);
        CHECK(t->fields[i].info == plain->fields[i].info);
        CHECK(t->fields[i].value == plain->fields[i].value);
        CHECK(t->fields[i].bit == plain->fields[i].bit);
      }
      CHECK(val(*t, "eth.fcs") == fcs);
      const auto* l = t->find_layer("eth.fcs");
      REQUIRE(l != nullptr);
      CHECK(l->offset == f.size());
      CHECK(l->length == 4);
      check_invariants(*t, ff.size());
    }

    // fcs_mode::absent: the four bytes stay part of the frame. Where the carrier bounds the
    // PDU (IP/UDP lengths, shim length) nothing changes; where the PDU runs to the end of the
    // frame (64 bytes now, so no padding search), the FCS is read as the R-CRC and is bad.
    opaque_options absent_fcs;
    absent_fcs.fcs = d::fcs_mode::absent;
    const auto t = dissect(ff, d::link_ethernet, absent_fcs);
    CHECK(t->encap == w::to_string(e));
    CHECK(t->frame_length == ff.size());
    CHECK_FALSE(has(*t, "eth.fcs"));
    check_invariants(*t, ff.size());
    const std::size_t hs = w::header_size(e);
    switch (e) {
      case w::encap::udp4:
      case w::encap::udp6:
      case w::encap::afh1_shim:
      case w::encap::afh1_vlan_shim:
        CHECK(t->error_count == 0);
        CHECK(rcrc_status(*t) == "good");
        CHECK(val(*t, "sue.payload.len") == 3);
        break;
      case w::encap::afh1:
      case w::encap::afh1_vlan:
      case w::encap::afh2:
      case w::encap::afh2c: {
        CHECK(rcrc_status(*t) == "bad");
        CHECK(val(*t, "sue.payload.len") == 60 - hs - 8);
        CHECK(val(*t, "sue.rcrc") ==
              ((fcs & 0xFF) << 24 | (fcs & 0xFF00) << 8 | (fcs >> 8 & 0xFF00) | fcs >> 24));
        check_only_error(*t, {.layer = "sue.rcrc",
                              .code = w::errc::bad_checksum,
                              .offset = 60,
                              .field = "sue.rcrc",
                              .value = ref_crc32(f.data() + hs, 60 - hs)});
        break;
      }
      case w::encap::lite:
        CHECK(t->error_count == 0);
        CHECK(val(*t, "sue_lite.len") == 58);
        break;
    }
  }
}

// ---- link type 147: bare AFH Gen 2 ------------------------------------------------------------

TEST_CASE("dissect: link type 147 carries bare AFH Gen 2") {
  for (w::encap e : {w::encap::afh2, w::encap::afh2c, w::encap::lite}) {
    CAPTURE(w::to_string(e));
    const byte_vector f = emit_frame(e);
    const auto t = dissect(f, d::link_afh2);
    const auto eth = dissect(f, d::link_ethernet);
    CHECK(t->encap == w::to_string(e));
    CHECK(t->error_count == 0);
    REQUIRE(t->field_count == eth->field_count);
    for (std::size_t i = 0; i < t->field_count; ++i) {
      CHECK(t->fields[i].info == eth->fields[i].info);
      CHECK(t->fields[i].value == eth->fields[i].value);
    }
    if (e != w::encap::lite) {
      check_rh(*t);
      CHECK(rcrc_status(*t) == "good");
    }
  }
  SUBCASE("no FCS stripping on link 147") {
    const byte_vector ff = with_ethernet_fcs(emit_frame(w::encap::lite));
    const auto t = dissect(ff, d::link_afh2);
    CHECK(val(*t, "sue_lite.len") == 58);
    CHECK_FALSE(has(*t, "eth.fcs"));
  }
  SUBCASE("a first octet without the SLAP signature") {
    for (std::uint8_t first : {0x00, 0x42, 0x06, 0x0A, 0x12, 0x82, 0x43, 0x01}) {
      CAPTURE(int{first});
      byte_vector f = emit_frame(w::encap::afh2);
      f[0] = first;
      const auto t = dissect(f, d::link_afh2);
      CHECK(t->encap == "afh2");
      CHECK(t->field_count == 0);
      check_only_error(*t, {.layer = "afh2",
                            .code = w::errc::bad_value,
                            .offset = 0,
                            .field = "afh2.x",
                            .value = first});
    }
  }
  SUBCASE("AFH Gen 2 normal naming another transport: a warning") {
    byte_vector f = emit_frame(w::encap::afh2);
    set16(f, 12, 0x0800);
    const auto t = dissect(f, d::link_afh2);
    CHECK(t->encap == "afh2");
    CHECK(val(*t, "afh2.dst_xpu") == 2);
    CHECK(val(*t, "afh2.type") == 0x0800);
    CHECK_FALSE(has(*t, "sue.rh.ver"));
    check_only_error(*t, {.layer = "afh2.etype",
                          .code = w::errc::unsupported,
                          .offset = 12,
                          .level = w::severity::warning,
                          .field = "afh2.type",
                          .value = 0x0800});
  }
  SUBCASE("AFH Gen 2 normal with a group source half: bad_value, header kept") {
    byte_vector f = emit_frame(w::encap::afh2);
    f[6] = 0x19;  // tc 3, spare 0, SA U/L 0, SA I/G 1
    const auto t = dissect(f, d::link_afh2);
    CHECK(val(*t, "afh2.src_xpu") == 1);
    CHECK_FALSE(has(*t, "sue.rh.ver"));
    INFO("errors:\n" << errors_text(*t));
    REQUIRE(t->error_count == 1);  // the first hard error is the one reported
    CHECK(t->errors[0].code == w::errc::bad_value);
    CHECK(t->errors[0].layer == "afh2");
    CHECK(t->errors[0].offset == 6);
    CHECK(t->errors[0].field == "afh2.sa_ul");
  }
  SUBCASE("spare bits set in the compressed header: a warning, SUE still decoded") {
    byte_vector f = emit_frame(w::encap::afh2c);
    f[1] = 0x1D;  // tc 3, spare 101
    const auto t = dissect(f, d::link_afh2);
    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");
    check_only_error(*t, {.layer = "afh2c",
                          .code = w::errc::reserved_nonzero,
                          .offset = 1,
                          .level = w::severity::warning,
                          .field = "afh2c.spare",
                          .value = 5});
  }
}

// ---- UDP: ports and heuristics ----------------------------------------------------------------

TEST_CASE("dissect: SUE over UDP by port, by option and by heuristic") {
  w::frame_params p9999 = params_for(w::encap::udp4);
  p9999.udp_src_port = 9999;
  p9999.udp_dst_port = 9999;
  const byte_vector on_9999 = emit_frame(p9999);

  SUBCASE("no port is SUE's by default") {
    const d::options defaults;
    CHECK(defaults.udp_port_count == 0);
    CHECK_FALSE(defaults.is_sue_port(golden_udp_port));
    CHECK_FALSE(defaults.is_sue_port(w::emit_udp_port));
    // A damaged PDU on 4793 (Ultra Ethernet Transport's port) is UDP: no port says SUE.
    byte_vector f = emit_frame(w::encap::udp4);
    f[pdu4_at + 8] ^= 0xFF;  // first payload byte: the R-CRC no longer matches
    fix_udp4_checksum(f, ip4_at, udp4_at);
    d::tree t;
    d::dissect_frame(t, w::bytes(f.data(), f.size()), d::link_ethernet, defaults);
    CHECK(t.encap == "ipv4/udp");
    CHECK(t.find("sue.rh.ver") == nullptr);
  }
  SUBCASE("a named port, either direction") {
    w::frame_params p = params_for(w::encap::udp4);
    p.udp_src_port = 50000;
    opaque_options no_heur;
    no_heur.heuristics = false;
    auto t = dissect(emit_frame(p), d::link_ethernet, no_heur);
    CHECK(t->encap == "udp4");
    check_rh(*t);
    p.udp_src_port = 4793;
    p.udp_dst_port = 50000;
    t = dissect(emit_frame(p), d::link_ethernet, no_heur);
    CHECK(t->encap == "udp4");
  }
  SUBCASE("a port added with add_udp_port") {
    opaque_options o;
    o.heuristics = false;
    REQUIRE(o.add_udp_port(9999));
    auto t = dissect(on_9999, d::link_ethernet, o);
    CHECK(t->encap == "udp4");
    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");
    CHECK(t->error_count == 0);
    w::frame_params p6 = params_for(w::encap::udp6);
    p6.udp_dst_port = 9999;
    p6.udp_src_port = 9998;
    t = dissect(emit_frame(p6), d::link_ethernet, o);
    CHECK(t->encap == "udp6");
    check_rh(*t);
  }
  SUBCASE("the port table is bounded") {
    opaque_options o;
    for (std::uint16_t port = 1; port < 16; ++port) CHECK(o.add_udp_port(port));
    CHECK_FALSE(o.add_udp_port(16));
    CHECK(o.udp_port_count == 16);
    CHECK(o.is_sue_port(golden_udp_port));  // named by opaque_options
    CHECK(o.is_sue_port(15));
    CHECK_FALSE(o.is_sue_port(16));
  }
  SUBCASE("an unlisted port with a plausible RH: SUE by heuristic") {
    const auto t = dissect(on_9999);
    CHECK(t->encap == "udp4");
    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");
    CHECK(t->error_count == 0);
  }
  SUBCASE("heuristics off: plain UDP, no SUE fields") {
    opaque_options o;
    o.heuristics = false;
    const auto t = dissect(on_9999, d::link_ethernet, o);
    CHECK(t->encap == "ipv4/udp");
    CHECK(val(*t, "udp.dstport") == 9999);
    CHECK_FALSE(has(*t, "sue.rh.ver"));
    CHECK_FALSE(has(*t, "sue.rcrc.status"));
    CHECK(t->error_count == 0);
  }
  SUBCASE("an unlisted port with other payloads: not SUE") {
    w::frame_params p = p9999;
    byte_vector random{0x9E, 0x37, 0x79, 0xB9, 0x7F, 0x4A, 0x7C, 0x15,
                       0xF3, 0x9C, 0xC0, 0x60, 0x5C, 0xED, 0xC8};
    // An RH that passes the version and reserved checks, but whose R-CRC is wrong.
    byte_vector rh_bad_crc{0x00, 0x01, 0x12, 0x34, 0x40, 0x05, 0x00, 0x42,
                           0xAA, 0xBB, 0xCC, 0x63, 0x23, 0xB8, 0x81};
    // A good R-CRC but a reserved bit set (rsv = 1).
    byte_vector rsv_set{0x04, 0x01, 0x12, 0x34, 0x40, 0x05, 0x00, 0x42, 0xAA, 0xBB, 0xCC};
    const std::uint32_t c = ref_crc32(rsv_set.data(), rsv_set.size());
    for (int i = 3; i >= 0; --i) rsv_set.push_back(static_cast<std::uint8_t>(c >> (8 * i)));
    // Version 1, good R-CRC.
    byte_vector ver1{0x40, 0x01, 0x12, 0x34, 0x40, 0x05, 0x00, 0x42, 0xAA, 0xBB, 0xCC};
    const std::uint32_t c1 = ref_crc32(ver1.data(), ver1.size());
    for (int i = 3; i >= 0; --i) ver1.push_back(static_cast<std::uint8_t>(c1 >> (8 * i)));
    // Too short to hold RH and R-CRC.
    const byte_vector short_rh{0x00, 0x01, 0x12, 0x34, 0x40, 0x05, 0x00, 0x42, 0x00, 0x00, 0x00};
    for (const byte_vector& inner : {random, rh_bad_crc, rsv_set, ver1, short_rh, byte_vector{}}) {
      CAPTURE(inner.size());
      const auto t = dissect(emit_inner(p, inner));
      CHECK(t->encap == "ipv4/udp");
      CHECK_FALSE(has(*t, "sue.rh.ver"));
      CHECK(t->error_count == 0);
    }
  }
}

TEST_CASE("dissect: an RH-only PDU on 4793 has no R-CRC") {
  const byte_vector rh_only{0x00, 0x01, 0x12, 0x34, 0x40, 0x05, 0x00, 0x42};
  for (w::encap e : {w::encap::udp4, w::encap::udp6}) {
    CAPTURE(w::to_string(e));
    const auto t = dissect(emit_inner(params_for(e), rh_only));
    CHECK(t->encap == w::to_string(e));
    check_rh(*t);
    CHECK(rcrc_status(*t) == "missing");
    CHECK(val(*t, "sue.payload.len") == 0);
    CHECK_FALSE(has(*t, "sue.rcrc"));
    CHECK(t->error_count == 0);
  }
}

// ---- error paths ------------------------------------------------------------------------------

TEST_CASE("dissect: Ethernet and IPv4 errors") {
  const byte_vector good = emit_frame(w::encap::udp4);

  SUBCASE("truncated Ethernet header") {
    for (std::size_t n : {std::size_t{10}, std::size_t{13}}) {
      const byte_vector f(good.begin(), good.begin() + static_cast<std::ptrdiff_t>(n));
      const auto t = dissect(f);
      CHECK(t->encap == "eth");
      CHECK(t->field_count == 0);
      check_only_error(*t, {.layer = "eth",
                            .code = w::errc::truncated,
                            .offset = 0,
                            .needed = 14,
                            .available = static_cast<std::uint32_t>(n)});
    }
  }
  SUBCASE("truncated IPv4 header") {
    const byte_vector f(good.begin(), good.begin() + 24);
    const auto t = dissect(f);
    CHECK(t->encap == "ipv4");
    CHECK(val(*t, "eth.type") == 0x0800);
    CHECK(val(*t, "eth.src") == 0x020000000001);
    CHECK_FALSE(has(*t, "ip.version"));
    check_only_error(
        *t,
        {.layer = "ip", .code = w::errc::truncated, .offset = 14, .needed = 20, .available = 10});
  }
  SUBCASE("IHL 4") {
    byte_vector f = good;
    f[ip4_at] = 0x44;
    fix_ipv4_checksum(f, ip4_at);
    const auto t = dissect(f);
    CHECK(t->encap == "ipv4");
    CHECK(val(*t, "ip.hdr_len") == 4);
    CHECK(val(*t, "ip.src") == 0x0A000001);
    CHECK_FALSE(has(*t, "udp.length"));
    check_only_error(*t, {.layer = "ip",
                          .code = w::errc::bad_value,
                          .offset = 14,
                          .field = "ip.hdr_len",
                          .value = 4});
  }
  SUBCASE("version other than 4") {
    byte_vector f = good;
    f[ip4_at] = 0x65;
    fix_ipv4_checksum(f, ip4_at);
    const auto t = dissect(f);
    CHECK(val(*t, "ip.version") == 6);
    CHECK_FALSE(has(*t, "udp.length"));
    check_only_error(*t, {.layer = "ip",
                          .code = w::errc::bad_value,
                          .offset = 14,
                          .field = "ip.version",
                          .value = 6});
  }
  SUBCASE("IPv4 options cut off") {
    byte_vector f = good;
    f[ip4_at] = 0x4F;  // 60-byte header, 46 bytes present
    const auto t = dissect(f);
    CHECK(val(*t, "ip.hdr_len") == 15);
    check_only_error(
        *t,
        {.layer = "ip", .code = w::errc::truncated, .offset = 14, .needed = 60, .available = 46});
  }
  SUBCASE("IPv4 options are skipped") {
    // Insert 4 option bytes (NOP NOP NOP EOL); IHL 6, total length 47.
    byte_vector f(good.begin(), good.begin() + 34);
    f.insert(f.end(), {0x01, 0x01, 0x01, 0x00});
    f.insert(f.end(), good.begin() + 34, good.begin() + 57);
    f[ip4_at] = 0x46;
    set16(f, ip4_at + 2, 47);
    fix_ipv4_checksum(f, ip4_at);
    // UDP now starts at 38; its checksum does not cover the IP header, so it still holds.
    const auto t = dissect(f);
    INFO("errors:\n" << errors_text(*t));
    CHECK(t->encap == "udp4");
    CHECK(t->error_count == 0);
    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");
    const auto* opt = t->find_layer("ip.options");
    REQUIRE(opt != nullptr);
    CHECK(opt->offset == 34);
    CHECK(opt->length == 4);
  }
  SUBCASE("bad IPv4 header checksum: not checked unless asked, then a warning") {
    byte_vector f = good;
    f[ip4_at + 10] ^= 0xFF;
    const auto t = dissect(f);
    CHECK(t->encap == "udp4");
    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");
    CHECK(t->error_count == 0);
    CHECK(t->find("ip.checksum.status")->value_name() == "unverified");
    opaque_options check;
    check.check_checksums = true;
    const auto c = dissect(f, d::link_ethernet, check);
    check_rh(*c);
    CHECK(rcrc_status(*c) == "good");
    CHECK(c->find("ip.checksum.status")->value_name() == "bad");
    check_only_error(*c, {.layer = "ip",
                          .code = w::errc::bad_checksum,
                          .offset = 24,
                          .level = w::severity::warning,
                          .field = "ip.checksum",
                          .value = 0xD9B4});
    const auto g = dissect(good, d::link_ethernet, check);
    CHECK(g->error_count == 0);
    CHECK(g->find("ip.checksum.status")->value_name() == "good");
  }
  SUBCASE("total length beyond the frame") {
    byte_vector f = good;
    set16(f, ip4_at + 2, 143);
    fix_ipv4_checksum(f, ip4_at);
    const auto t = dissect(f);
    CHECK(t->encap == "udp4");
    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");
    check_only_error(*t, {.layer = "ip",
                          .code = w::errc::truncated,
                          .offset = 14,
                          .field = "ip.len",
                          .value = 143,
                          .needed = 143,
                          .available = 46});
  }
  SUBCASE("total length below the header length") {
    byte_vector f = good;
    set16(f, ip4_at + 2, 19);
    fix_ipv4_checksum(f, ip4_at);
    const auto t = dissect(f);
    CHECK_FALSE(has(*t, "udp.length"));
    check_only_error(
        *t,
        {.layer = "ip", .code = w::errc::bad_length, .offset = 16, .field = "ip.len", .value = 19});
  }
  SUBCASE("IPv4 fragments are not read past IP without a reassembler") {
    for (std::uint16_t flags : {std::uint16_t{0x2000}, std::uint16_t{0x4001}}) {
      CAPTURE(flags);
      byte_vector f = good;
      set16(f, ip4_at + 6, flags);
      fix_ipv4_checksum(f, ip4_at);
      const auto t = dissect(f);
      CHECK(t->encap == "ipv4");
      CHECK(has(*t, "ip.frag_offset"));
      CHECK_FALSE(has(*t, "udp.length"));
      CHECK(t->error_count == 0);
    }
  }
  SUBCASE("another IP protocol: IPv4 only, no problem") {
    byte_vector f = good;
    f[ip4_at + 9] = 6;
    fix_ipv4_checksum(f, ip4_at);
    const auto t = dissect(f);
    CHECK(t->encap == "ipv4");
    CHECK(t->error_count == 0);
    CHECK_FALSE(has(*t, "udp.length"));
  }
}

TEST_CASE("dissect: UDP errors") {
  const byte_vector good = emit_frame(w::encap::udp4);

  SUBCASE("length below 8") {
    byte_vector f = good;
    set16(f, udp4_at + 4, 7);
    const auto t = dissect(f);
    CHECK(t->encap == "ipv4/udp");
    CHECK(val(*t, "udp.dstport") == 4793);
    CHECK_FALSE(has(*t, "sue.rh.ver"));
    check_only_error(*t, {.layer = "udp",
                          .code = w::errc::bad_length,
                          .offset = 38,
                          .field = "udp.length",
                          .value = 7});
  }
  SUBCASE("length beyond the IP datagram") {
    byte_vector f = good;
    set16(f, udp4_at + 4, 30);
    const auto t = dissect(f);
    CHECK(t->encap == "udp4");
    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");  // the PDU ends where the IP datagram does
    check_only_error(*t, {.layer = "udp",
                          .code = w::errc::truncated,
                          .offset = 34,
                          .field = "udp.length",
                          .value = 30,
                          .needed = 30,
                          .available = 23});
  }
  opaque_options check;
  check.check_checksums = true;
  SUBCASE("bad checksum: not checked unless asked, then a warning") {
    byte_vector f = good;
    f[udp4_at + 6] ^= 0x01;
    const auto t = dissect(f);
    CHECK(t->encap == "udp4");
    check_rh(*t);
    CHECK(t->error_count == 0);
    CHECK(t->find("udp.checksum.status")->value_name() == "unverified");
    const auto c = dissect(f, d::link_ethernet, check);
    check_rh(*c);
    CHECK(rcrc_status(*c) == "good");
    CHECK(c->find("udp.checksum.status")->value_name() == "bad");
    check_only_error(*c, {.layer = "udp",
                          .code = w::errc::bad_checksum,
                          .offset = 40,
                          .level = w::severity::warning,
                          .field = "udp.checksum",
                          .value = 0x59F7});
    CHECK(dissect(good, d::link_ethernet, check)->find("udp.checksum.status")->value_name() ==
          "good");
  }
  SUBCASE("checksum 0 over IPv4 means none") {
    w::frame_params p = params_for(w::encap::udp4);
    p.udp4_checksum = false;
    for (const bool asked : {false, true}) {
      opaque_options o;
      o.check_checksums = asked;
      const auto t = dissect(emit_frame(p), d::link_ethernet, o);
      CHECK(val(*t, "udp.checksum") == 0);
      CHECK(t->error_count == 0);
      CHECK(rcrc_status(*t) == "good");
      CHECK(t->find("udp.checksum.status")->value_name() == "not_present");
    }
  }
  SUBCASE("checksum 0 over IPv6 is wrong (RFC 8200 8.1): a warning when checked") {
    byte_vector f = emit_frame(w::encap::udp6);
    set16(f, 60, 0);
    CHECK(dissect(f)->error_count == 0);
    const auto t = dissect(f, d::link_ethernet, check);
    CHECK(t->encap == "udp6");
    check_rh(*t);
    check_only_error(*t, {.layer = "udp",
                          .code = w::errc::bad_checksum,
                          .offset = 60,
                          .level = w::severity::warning,
                          .field = "udp.checksum",
                          .value = 0});
  }
  SUBCASE("IPv6 payload length beyond the frame") {
    byte_vector f = emit_frame(w::encap::udp6);
    set16(f, 18, 100);
    const auto t = dissect(f);
    CHECK(t->encap == "udp6");
    check_rh(*t);
    check_only_error(*t, {.layer = "ipv6",
                          .code = w::errc::truncated,
                          .offset = 14,
                          .field = "ipv6.plen",
                          .value = 100,
                          .needed = 140,
                          .available = 63});
  }
  SUBCASE("a checksum sent as 0xFFFF for a computed zero is accepted") {
    w::frame_params p = params_for(w::encap::udp4);
    p.tc = 0;
    const auto t = dissect(emit_inner(p, {0xC6, 0x65}));
    CHECK(val(*t, "udp.checksum") == 0xFFFF);
    CHECK(find_error(*t, "udp", w::errc::bad_checksum) == nullptr);
    const auto c = dissect(emit_inner(p, {0xC6, 0x65}), d::link_ethernet, check);
    CHECK(c->find("udp.checksum.status")->value_name() == "good");
    // On 4793 the two bytes are taken for an RH, which they cannot hold.
    check_only_error(
        *t,
        {.layer = "sue.rh", .code = w::errc::truncated, .offset = 42, .needed = 8, .available = 2});
  }
}

TEST_CASE("dissect: SUE PDU errors") {
  SUBCASE("truncated RH on 4793") {
    const auto t = dissect(emit_inner(params_for(w::encap::udp4), {0x00, 0x01, 0x12, 0x34, 0x40}));
    CHECK(t->encap == "udp4");
    CHECK(val(*t, "udp.length") == 13);
    CHECK_FALSE(has(*t, "sue.rh.ver"));
    check_only_error(
        *t,
        {.layer = "sue.rh", .code = w::errc::truncated, .offset = 42, .needed = 8, .available = 5});
  }
  SUBCASE("bad R-CRC over UDP") {
    byte_vector f = emit_frame(w::encap::udp4);
    f[pdu4_at + 8] ^= 0xFF;  // first payload byte
    fix_udp4_checksum(f, ip4_at, udp4_at);
    const auto t = dissect(f);
    CHECK(t->encap == "udp4");
    check_rh(*t);
    CHECK(rcrc_status(*t) == "bad");
    CHECK(val(*t, "sue.rcrc") == kRcrcValue);
    CHECK(val(*t, "sue.payload.len") == 3);
    check_only_error(*t, {.layer = "sue.rcrc",
                          .code = w::errc::bad_checksum,
                          .offset = 53,
                          .field = "sue.rcrc",
                          .value = ref_crc32(f.data() + pdu4_at, 11)});
  }
  SUBCASE("bad R-CRC over Layer 2, unpadded") {
    const byte_vector payload(40, 0x5A);
    byte_vector f = emit_frame(params_for(w::encap::afh1), test_rh(), payload);
    REQUIRE(f.size() == 66);
    f[30] ^= 0x01;
    const auto t = dissect(f);
    CHECK(t->encap == "afh1");
    CHECK(rcrc_status(*t) == "bad");
    CHECK(val(*t, "sue.payload.len") == 40);
    check_only_error(*t, {.layer = "sue.rcrc",
                          .code = w::errc::bad_checksum,
                          .offset = 62,
                          .field = "sue.rcrc",
                          .value = ref_crc32(f.data() + 14, 48)});
  }
  SUBCASE("bad R-CRC in a padded frame: no boundary matches, the last four bytes are blamed") {
    byte_vector f = emit_frame(w::encap::afh1);
    f[22] ^= 0x01;
    const auto t = dissect(f);
    CHECK(rcrc_status(*t) == "bad");
    CHECK(val(*t, "sue.payload.len") == 60 - 14 - 8 - 4);
    check_only_error(*t, {.layer = "sue.rcrc",
                          .code = w::errc::bad_checksum,
                          .offset = 56,
                          .field = "sue.rcrc",
                          .value = ref_crc32(f.data() + 14, 42)});
  }
  SUBCASE("reserved RH bits: warnings, the PDU is still decoded") {
    w::reliability_header rh = test_rh();
    rh.rsv = 1;
    rh.rsvd = 0xF;
    const byte_vector f = emit_frame(params_for(w::encap::udp4), rh);
    REQUIRE(f[42] == 0x04);  // 00 00 01 00 | 0000 0001
    REQUIRE(f[46] == 0x7C);  // 01 1111 00 | 0000 0101
    const auto t = dissect(f);
    INFO("errors:\n" << errors_text(*t));
    CHECK(t->encap == "udp4");
    check_rh(*t);
    CHECK(val(*t, "sue.rh.rsv") == 1);
    CHECK(val(*t, "sue.rh.rsvd") == 0xF);
    CHECK(rcrc_status(*t) == "good");
    CHECK_FALSE(t->has_errors());
    REQUIRE(t->error_count == 2);
    const auto& a = t->errors[0];
    CHECK(a.code == w::errc::reserved_nonzero);
    CHECK(a.level == w::severity::warning);
    CHECK(a.layer == "sue.rh");
    CHECK(a.field == "sue.rh.rsv");
    CHECK(a.value == 1);
    CHECK(a.offset == 42);
    const auto& b = t->errors[1];
    CHECK(b.code == w::errc::reserved_nonzero);
    CHECK(b.level == w::severity::warning);
    CHECK(b.field == "sue.rh.rsvd");
    CHECK(b.value == 0xF);
    CHECK(b.offset == 46);
  }
  SUBCASE("op 3 is accepted as 'none'") {
    w::reliability_header rh = test_rh();
    rh.op = 3;
    const auto t = dissect(emit_frame(params_for(w::encap::afh2c), rh));
    CHECK(t->error_count == 0);
    CHECK(t->find("sue.rh.op")->value_name() == "none");
  }
}

namespace {
// The shim's length field: bits 28..43 of the shim.
void set_shim_length(byte_vector& f, std::size_t shim, std::uint16_t len) {
  f[shim + 3] = static_cast<std::uint8_t>((f[shim + 3] & 0xF0) | (len >> 12));
  f[shim + 4] = static_cast<std::uint8_t>(len >> 4);
  f[shim + 5] = static_cast<std::uint8_t>(((len & 0xF) << 4) | (f[shim + 5] & 0x0F));
}
// The shim's next header: bits 20..27.
void set_shim_next(byte_vector& f, std::size_t shim, std::uint8_t next) {
  f[shim + 2] = static_cast<std::uint8_t>((f[shim + 2] & 0xF0) | (next >> 4));
  f[shim + 3] = static_cast<std::uint8_t>(((next & 0xF) << 4) | (f[shim + 3] & 0x0F));
}
}  // namespace

TEST_CASE("dissect: AFH Gen 1 shim errors") {
  SUBCASE("length past the end of the frame") {
    w::frame_params p = params_for(w::encap::afh1_shim);
    p.pad = false;
    byte_vector f = emit_frame(p);
    REQUIRE(f.size() == 45);
    set_shim_length(f, 14, 100);
    const auto t = dissect(f);
    CHECK(t->encap == "afh1-shim");
    CHECK(val(*t, "afh1.shim.length") == 100);
    CHECK(val(*t, "afh1.dst_xpu") == 2);
    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");  // what is there is still one whole PDU
    check_only_error(*t, {.layer = "afh1.shim",
                          .code = w::errc::truncated,
                          .offset = 17,
                          .field = "afh1.shim.length",
                          .value = 100,
                          .needed = 100,
                          .available = 15});
  }
  SUBCASE("a set_shim_length sanity check against the emitter's bytes") {
    byte_vector f = emit_frame(w::encap::afh1_shim);
    byte_vector g = f;
    set_shim_length(g, 14, 15);
    CHECK(f == g);
    set_shim_next(g, 14, 253);
    CHECK(f == g);
  }
  SUBCASE("next header other than SUE: a warning") {
    byte_vector f = emit_frame(w::encap::afh1_vlan_shim);
    set_shim_next(f, 18, 17);
    const auto t = dissect(f);
    CHECK(t->encap == "afh1-vlan-shim");
    CHECK(val(*t, "afh1.shim.next_header") == 17);
    CHECK(val(*t, "afh1.shim.src_xpu") == 1);
    CHECK_FALSE(has(*t, "sue.rh.ver"));
    check_only_error(*t, {.layer = "afh1.shim",
                          .code = w::errc::unsupported,
                          .offset = 20,
                          .level = w::severity::warning,
                          .field = "afh1.shim.next_header",
                          .value = 17});
  }
  SUBCASE("version other than 0: bad_value") {
    byte_vector f = emit_frame(w::encap::afh1_shim);
    f[14] |= 0x10;
    const auto t = dissect(f);
    CHECK(t->encap == "afh1-shim");
    CHECK(val(*t, "afh1.shim.version") == 1);
    CHECK(val(*t, "afh1.shim.dst_xpu") == 2);
    CHECK(val(*t, "afh1.src_xpu") == 1);
    CHECK_FALSE(has(*t, "sue.rh.ver"));
    check_only_error(*t, {.layer = "afh1.shim",
                          .code = w::errc::bad_value,
                          .offset = 14,
                          .field = "afh1.shim.version",
                          .value = 1});
  }
  SUBCASE("shim cut off") {
    byte_vector f = emit_frame(w::encap::afh1_shim);
    f.resize(20);
    const auto t = dissect(f);
    CHECK(t->encap == "afh1-shim");
    CHECK(val(*t, "afh1.src_xpu") == 1);
    check_only_error(*t, {.layer = "afh1.shim",
                          .code = w::errc::truncated,
                          .offset = 14,
                          .needed = 16,
                          .available = 6});
  }
}

TEST_CASE("dissect: link types, empty and one-byte frames, look-alike addresses") {
  SUBCASE("an unknown link type") {
    const auto t = dissect(emit_frame(w::encap::udp4), 105);
    CHECK(t->encap == "unknown");
    CHECK(t->field_count == 0);
    check_only_error(*t,
                     {.layer = "frame", .code = w::errc::unsupported, .offset = 0, .value = 105});
  }
  SUBCASE("a docker-style MAC (02:42:...) on IPv4 is not AFH Gen 2") {
    byte_vector f = emit_frame(w::encap::udp4);
    const byte_vector docker{0x02, 0x42, 0xAC, 0x11, 0x00, 0x02};
    std::copy(docker.begin(), docker.end(), f.begin());
    const auto t = dissect(f);
    CHECK(t->encap == "udp4");
    CHECK(val(*t, "eth.dst") == 0x0242AC110002);
    CHECK_FALSE(has(*t, "afh2.x"));
    CHECK(t->error_count == 0);
    check_rh(*t);
    // With heuristics off and another port: ordinary IPv4/UDP.
    w::frame_params p = params_for(w::encap::udp4);
    p.udp_dst_port = 53;
    p.udp_src_port = 53;
    byte_vector g = emit_inner(p, {1, 2, 3, 4});
    std::copy(docker.begin(), docker.end(), g.begin());
    const auto u = dissect(g);
    CHECK(u->encap == "ipv4/udp");
    CHECK(u->error_count == 0);
  }
  SUBCASE("empty frame") {
    const byte_vector f;
    auto t = dissect(f, d::link_ethernet);
    CHECK(t->encap == "eth");
    CHECK(t->frame_length == 0);
    check_only_error(
        *t,
        {.layer = "eth", .code = w::errc::truncated, .offset = 0, .needed = 14, .available = 0});
    t = dissect(f, d::link_afh2);
    CHECK(t->encap == "afh2");
    check_only_error(
        *t,
        {.layer = "afh2", .code = w::errc::truncated, .offset = 0, .needed = 6, .available = 0});
  }
  SUBCASE("one byte on each link type") {
    struct one {
      std::uint8_t b;
      std::uint32_t link;
      std::string_view encap;
      std::string_view layer;
      w::errc code;
      std::uint32_t needed;
    };
    for (const one& c : {
             one{0x00, d::link_ethernet, "eth", "eth", w::errc::truncated, 14},
             one{0x02, d::link_ethernet, "eth", "eth", w::errc::truncated, 14},
             one{0x22, d::link_ethernet, "afh2c", "afh2c", w::errc::truncated, 6},
             one{0x02, d::link_afh2, "afh2", "afh2", w::errc::truncated, 12},
             one{0x23, d::link_afh2, "afh2c", "afh2c", w::errc::truncated, 6},
             one{0xFF, d::link_afh2, "afh2", "afh2", w::errc::bad_value, 0},
         }) {
      CAPTURE(int{c.b});
      CAPTURE(c.link);
      const byte_vector f{c.b};
      const auto t = dissect(f, c.link);
      CHECK(t->encap == c.encap);
      CHECK(t->field_count == 0);
      INFO("errors:\n" << errors_text(*t));
      REQUIRE(t->error_count == 1);
      CHECK(t->errors[0].layer == c.layer);
      CHECK(t->errors[0].code == c.code);
      CHECK(t->errors[0].offset == 0);
      CHECK(t->errors[0].needed == c.needed);
      CHECK(t->errors[0].available == (c.needed ? 1u : 0u));
    }
  }
}

TEST_CASE("dissect: more truncations and size limits") {
  SUBCASE("VLAN tag cut off") {
    byte_vector f = emit_frame(w::encap::afh1_vlan);
    f.resize(16);
    const auto t = dissect(f);
    CHECK(val(*t, "eth.type") == 0x8100);
    CHECK_FALSE(has(*t, "vlan.id"));
    check_only_error(
        *t,
        {.layer = "vlan", .code = w::errc::truncated, .offset = 14, .needed = 4, .available = 2});
  }
  SUBCASE("AFH Gen 2 Ethertype cut off on link 147") {
    byte_vector f = emit_frame(w::encap::afh2);
    f.resize(13);
    const auto t = dissect(f, d::link_afh2);
    CHECK(t->encap == "afh2");
    CHECK(val(*t, "afh2.src_xpu") == 1);
    check_only_error(*t, {.layer = "afh2.etype",
                          .code = w::errc::truncated,
                          .offset = 12,
                          .needed = 2,
                          .available = 1});
  }
  SUBCASE("UDP header cut off") {
    byte_vector f = emit_frame(w::encap::udp4);
    f.resize(38);
    const auto t = dissect(f);
    CHECK(t->encap == "ipv4/udp");
    CHECK(val(*t, "ip.len") == 43);
    INFO("errors:\n" << errors_text(*t));
    REQUIRE(t->error_count == 2);
    const w::error* ip = find_error(*t, "ip", w::errc::truncated);
    REQUIRE(ip != nullptr);
    CHECK(ip->needed == 43);
    CHECK(ip->available == 24);
    const w::error* udp = find_error(*t, "udp", w::errc::truncated);
    REQUIRE(udp != nullptr);
    CHECK(udp->offset == 34);
    CHECK(udp->needed == 8);
    CHECK(udp->available == 4);
  }
  SUBCASE("IPv6 header cut off, and another next header") {
    byte_vector f = emit_frame(w::encap::udp6);
    f.resize(50);
    auto t = dissect(f);
    CHECK(t->encap == "ipv6");
    check_only_error(
        *t,
        {.layer = "ipv6", .code = w::errc::truncated, .offset = 14, .needed = 40, .available = 36});
    byte_vector g = emit_frame(w::encap::udp6);
    g[20] = 59;  // no next header
    t = dissect(g);
    CHECK(t->encap == "ipv6");
    CHECK(t->error_count == 0);
    CHECK_FALSE(has(*t, "udp.length"));
  }
  SUBCASE("a SUE payload over 4096 bytes: a warning") {
    byte_vector inner{0x00, 0x01, 0x12, 0x34, 0x40, 0x05, 0x00, 0x42};
    inner.resize(8 + 4097, 0x77);
    const std::uint32_t c = ref_crc32(inner.data(), inner.size());
    for (int i = 3; i >= 0; --i) inner.push_back(static_cast<std::uint8_t>(c >> (8 * i)));
    const auto t = dissect(emit_inner(params_for(w::encap::udp4), inner));
    CHECK(t->encap == "udp4");
    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");
    CHECK(val(*t, "sue.payload.len") == 4097);
    check_only_error(*t, {.layer = "sue.payload",
                          .code = w::errc::bad_length,
                          .offset = 50,
                          .level = w::severity::warning,
                          .field = "sue.payload.len",
                          .value = 4097});
  }
  SUBCASE("a SUE Lite payload over 1024 bytes: a warning") {
    byte_vector f{0x22, 0x18, 0x00, 0x01, 0x00, 0x02};
    f.resize(6 + 1025, 0x32);
    for (std::uint32_t link : {d::link_ethernet, d::link_afh2}) {
      CAPTURE(link);
      const auto t = dissect(f, link);
      CHECK(t->encap == "lite");
      CHECK(val(*t, "sue_lite.len") == 1025);
      check_only_error(*t, {.layer = "sue_lite",
                            .code = w::errc::bad_length,
                            .offset = 6,
                            .level = w::severity::warning,
                            .field = "sue_lite.len",
                            .value = 1025});
    }
  }
}

TEST_CASE("dissect: a tree too small says so instead of cutting silently") {
  const byte_vector f = emit_frame(w::encap::udp4);
  SUBCASE("fields") {
    d::basic_tree<24, 8, 16> t;
    d::dissect_frame(t, w::bytes(f.data(), f.size()), d::link_ethernet, opaque_options{});
    CHECK(t.overflow);
    CHECK(t.field_count == 8);
    REQUIRE(t.error_count == 1);
    CHECK(t.errors[0].code == w::errc::no_space);
    CHECK(t.errors[0].layer == "frame");
    CHECK(t.has_errors());
  }
  SUBCASE("layers") {
    d::basic_tree<2, 192, 16> t;
    d::dissect_frame(t, w::bytes(f.data(), f.size()), d::link_ethernet, opaque_options{});
    CHECK(t.overflow);
    CHECK(t.layer_count == 2);
    for (const auto& fl : t.field_list()) CHECK(fl.layer < 2);
    REQUIRE(t.error_count == 1);
    CHECK(t.errors[0].code == w::errc::no_space);
  }
  SUBCASE("errors: the flag is set, the list stays within capacity") {
    byte_vector g = f;
    g[ip4_at + 10] ^= 0xFF;  // bad IPv4 checksum
    g[udp4_at + 6] ^= 0xFF;  // bad UDP checksum
    d::basic_tree<24, 192, 1> t;
    opaque_options check;
    check.check_checksums = true;
    d::dissect_frame(t, w::bytes(g.data(), g.size()), d::link_ethernet, check);
    CHECK(t.overflow);
    REQUIRE(t.error_count == 1);
    CHECK(t.errors[0].layer == "ip");
  }
}

// ---- robustness -------------------------------------------------------------------------------

TEST_CASE("dissect: arbitrary bytes never break the tree's invariants") {
  std::mt19937 rng(20240611);
  byte_vector buf(1500);
  std::vector<byte_vector> seeds;
  for (w::encap e : all_encaps) seeds.push_back(emit_frame(e));
  for (w::encap e : all_encaps) seeds.push_back(with_ethernet_fcs(emit_frame(e)));
  seeds.push_back(
      emit_inner(params_for(w::encap::udp4), {0x00, 0x01, 0x12, 0x34, 0x40, 0x05, 0x00, 0x42}));
  std::size_t sue_seen = 0, errors_seen = 0, json_checked = 0;
  const std::array<std::uint8_t, 6> firsts{0x02, 0x03, 0x22, 0x23, 0x42, 0x00};
  const std::array<std::uint16_t, 6> types{0x0800, 0x86DD, 0x8100, 0x88B5, 0x88B6, 0x88A8};

  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t link = (i & 1) ? d::link_afh2 : d::link_ethernet;
    std::size_t n = rng() % 201;
    switch (i % 4) {
      case 0:  // pure random bytes
        for (std::size_t k = 0; k < n; ++k) buf[k] = static_cast<std::uint8_t>(rng());
        break;
      case 1:  // random, with a plausible first octet and Ethertype
        for (std::size_t k = 0; k < n; ++k) buf[k] = static_cast<std::uint8_t>(rng());
        if (n > 0) buf[0] = firsts[rng() % firsts.size()];
        if (n > 13) {
          const std::uint16_t ty = types[rng() % types.size()];
          buf[12] = static_cast<std::uint8_t>(ty >> 8);
          buf[13] = static_cast<std::uint8_t>(ty);
        }
        break;
      default: {  // a valid frame, cut or extended, with a few bytes changed
        const byte_vector& s = seeds[rng() % seeds.size()];
        n = std::min<std::size_t>(n, 200);
        for (std::size_t k = 0; k < n; ++k)
          buf[k] = k < s.size() ? s[k] : static_cast<std::uint8_t>(rng());
        const int flips = static_cast<int>(rng() % 4);
        for (int k = 0; k < flips && n > 0; ++k) buf[rng() % n] ^= static_cast<std::uint8_t>(rng());
        break;
      }
    }
    const w::bytes f(buf.data(), n);
    auto t = std::make_unique<d::tree>();
    d::dissect_frame(*t, f, link);
    CAPTURE(i);
    CAPTURE(n);
    check_invariants(*t, n);
    sue_seen += t->find("sue.rh.ver") != nullptr;
    errors_seen += t->error_count != 0;
    // Every printer copes; the JSON stays one well-formed object.
    const std::string js = json_of(*t, static_cast<std::uint64_t>(i));
    const auto parsed = parse_json(js);
    INFO(js);
    REQUIRE(parsed.has_value());
    REQUIRE(parsed->t == json::type::object);
    ++json_checked;
    CHECK_FALSE(summary_of(*t).empty());
    CHECK_FALSE(verbose_of(*t).empty());
  }
  // The loop reached the deep layers, not only the first length check.
  CHECK(sue_seen > 1000);
  CHECK(errors_seen > 1000);
  CHECK(json_checked == 20000);
}

// ---- printing -----------------------------------------------------------------------------------

TEST_CASE("dissect: JSON of a udp4 SUE frame") {
  const auto t = dissect(emit_frame(w::encap::udp4));
  const std::string js = json_of(*t, 7);
  INFO(js);
  const auto doc = parse_json(js);
  REQUIRE(doc.has_value());
  REQUIRE(doc->t == json::type::object);
  for (std::string_view k : {"frame", "len", "sue.rh.ver", "sue.rh.op", "sue.rh.xpuid",
                             "sue.rh.npsn", "sue.rh.vc", "sue.rh.partition", "sue.rh.apsn",
                             "sue.rcrc", "sue.payload.len", "ip.len", "udp.dstport"}) {
    CAPTURE(k);
    const json* v = doc->get(k);
    REQUIRE(v != nullptr);
    CHECK(v->t == json::type::number);
  }
  for (std::string_view k : {"encap", "sue.rcrc.status", "ip.src", "eth.dst"}) {
    CAPTURE(k);
    const json* v = doc->get(k);
    REQUIRE(v != nullptr);
    CHECK(v->t == json::type::string);
  }
  CHECK(doc->get("encap")->str == "udp4");
  CHECK(doc->get("sue.rcrc.status")->str == "good");
  CHECK(doc->get("ip.src")->str == "10.0.0.1");
  CHECK(doc->get("eth.dst")->str == "02:00:00:00:00:02");
  CHECK(doc->get("sue.rh.npsn")->str == "4660");
  const json* errs = doc->get("errors");
  REQUIRE(errs != nullptr);
  CHECK(errs->t == json::type::array);
  CHECK(errs->items.empty());
  CHECK(doc->get("sue.rh.rsv") == nullptr);
  CHECK(doc->get("sue.rh.rsvd") == nullptr);
  CHECK(doc->get("ip.flags.rb") == nullptr);
  CHECK(doc->keys.front() == "frame");
  CHECK(doc->keys.back() == "errors");
  CHECK(js.rfind("{\"frame\":7,\"encap\":\"udp4\",\"len\":60,", 0) == 0);
  CHECK(contains(js, "\"sue.rh.xpuid\":1,"));
  CHECK(contains(js, "\"sue.rh.apsn\":66"));
  CHECK(contains(js, "\"sue.rh.op\":0,"));
  CHECK(contains(js, "\"sue.rcrc.status\":\"good\""));
  CHECK(contains(js, "\"sue.rcrc\":1663285376"));  // 0x6323B880
  CHECK(contains(js, "\"errors\":[]}"));
  CHECK(js.back() == '}');
  CHECK(js.find('\n') == std::string::npos);
}

TEST_CASE("dissect: JSON lists problems and repeated fields") {
  SUBCASE("two VLAN tags give arrays") {
    // QinQ by hand: outer tag PCP 0 VID 100, inner tag PCP 3 VID 1, then SUE.
    const byte_vector pdu{0x00, 0x01, 0x12, 0x34, 0x40, 0x05, 0x00, 0x42,
                          0xAA, 0xBB, 0xCC, 0x63, 0x23, 0xB8, 0x80};
    const byte_vector f = cat({{0x42, 0x53, 0x55, 0x45, 0x00, 0x02, 0x42, 0x53, 0x55, 0x45, 0x00,
                                0x01, 0x81, 0x00, 0x00, 0x64, 0x81, 0x00, 0x60, 0x01, 0x88, 0xB5},
                               pdu,
                               byte_vector(23, 0)});
    REQUIRE(f.size() == 60);
    const auto t = dissect(f);
    CHECK(t->encap == "afh1-vlan");
    CHECK(t->error_count == 0);
    check_rh(*t);
    CHECK(rcrc_status(*t) == "good");
    const std::string js = json_of(*t);
    INFO(js);
    CHECK(contains(js, "\"vlan.id\":[100,1]"));
    CHECK(contains(js, "\"vlan.priority\":[0,3]"));
    CHECK(contains(js, "\"vlan.etype\":[33024,34997]"));
    const auto doc = parse_json(js);
    REQUIRE(doc.has_value());
    REQUIRE(doc->get("vlan.id") != nullptr);
    CHECK(doc->get("vlan.id")->t == json::type::array);
    CHECK(doc->get("vlan.id")->items.size() == 2);
  }
  SUBCASE("an error object") {
    byte_vector f = emit_frame(w::encap::udp4);
    f[pdu4_at + 8] ^= 0x01;  // the payload: the R-CRC no longer matches
    const auto t = dissect(f);
    const std::string js = json_of(*t);
    INFO(js);
    CHECK(contains(js,
                   "\"errors\":[{\"layer\":\"sue.rcrc\",\"offset\":53,\"needed\":0,"
                   "\"available\":0,\"code\":\"bad_checksum\","));
    CHECK(contains(js, "\"field\":\"sue.rcrc\",\"value\":" +
                           std::to_string(ref_crc32(f.data() + pdu4_at, 11)) +
                           ",\"severity\":\"error\"}]}"));
    const auto doc = parse_json(js);
    REQUIRE(doc.has_value());
    REQUIRE(doc->get("errors")->items.size() == 1);
    const json& e = doc->get("errors")->items[0];
    CHECK(e.get("what")->t == json::type::string);
  }
}

TEST_CASE("dissect: a frame cut by the snapshot length") {
  const byte_vector whole = emit_frame(params_for(w::encap::udp4), test_rh(), ramp(100, 1));
  REQUIRE(whole.size() == 154);
  d::tree t;
  d::dissect_frame(t, w::bytes(whole).first(80), d::link_ethernet, opaque_options{}, whole.size());
  CHECK(t.encap == "udp4");
  check_rh(t);
  CHECK(t.frame_length == 80);
  CHECK(t.wire_length == 154);
  CHECK(rcrc_status(t) == "not_captured");
  CHECK(val(t, "sue.payload.len") == 100);  // from the UDP length
  CHECK_FALSE(has(t, "sue.rcrc"));          // not in the capture: no value shown
  const auto* pl = t.find_layer("sue.payload");
  REQUIRE(pl != nullptr);
  CHECK(pl->offset == 50);
  CHECK(pl->length == 30);  // the part captured
  CHECK_FALSE(t.has_errors());
  REQUIRE(t.error_count == 1);
  CHECK(t.errors[0].level == w::severity::note);
  CHECK(t.errors[0].code == w::errc::not_captured);
  const std::string js = json_of(t);
  INFO(js);
  CHECK(contains(js, "\"len\":154,\"cap_len\":80,"));
  CHECK(contains(js, "\"sue.rcrc.status\":\"not_captured\""));
  CHECK(contains(js, "\"code\":\"not_captured\""));
  CHECK(contains(js, "\"severity\":\"note\""));
  CHECK(parse_json(js).has_value());
  const std::string line = summary_of(t);
  CHECK(contains(line, "  154 B"));
  CHECK(contains(line, "[0 errors, 1 note]"));
  const std::string v = verbose_of(t);
  CHECK(contains(v, "Frame 1: 154 bytes on the wire, 80 captured, encap udp4"));
  CHECK(contains(v, "note: frame at byte 80: not_captured: "));
  // A whole frame: no cap_len.
  d::dissect_frame(t, whole, d::link_ethernet, opaque_options{});
  CHECK_FALSE(contains(json_of(t), "cap_len"));
  CHECK(rcrc_status(t) == "good");
}

TEST_CASE("dissect: summary and verbose text") {
  SUBCASE("summary of a SUE frame") {
    const auto t = dissect(emit_frame(w::encap::udp4));
    const std::string s = summary_of(*t, 12);
    INFO(s);
    CHECK(s.rfind("    12  udp4", 0) == 0);
    for (std::string_view part : {" 60 B", "  SUE", " op=ACK", " xpuid=1", " npsn=4660", " apsn=66",
                                  " vc=1", " partition=5", " payload=3", " rcrc=good"})
      CHECK(contains(s, part));
    CHECK_FALSE(contains(s, "error"));
  }
  SUBCASE("no apsn when the op carries none") {
    w::reliability_header rh = test_rh();
    rh.op = 2;
    const auto t = dissect(emit_frame(params_for(w::encap::afh2), rh));
    const std::string s = summary_of(*t);
    INFO(s);
    CHECK(contains(s, " op=none"));
    CHECK_FALSE(contains(s, "apsn"));
  }
  SUBCASE("SUE Lite summary") {
    const auto t = dissect(emit_frame(w::encap::lite));
    const std::string s = summary_of(*t);
    INFO(s);
    CHECK(contains(s, "SUE Lite src=1 dst=2 tc=3 payload=54"));
  }
  SUBCASE("problems are counted") {
    byte_vector f = emit_frame(w::encap::udp4);
    f[pdu4_at + 8] ^= 0x01;  // the R-CRC fails
    w::reliability_header rh = test_rh();
    const auto t = dissect(f);
    CHECK(contains(summary_of(*t), "[1 error]"));
    rh.rsv = 2;
    const auto u = dissect(emit_frame(params_for(w::encap::udp4), rh));
    CHECK(contains(summary_of(*u), "[0 errors, 1 warning]"));
  }
  SUBCASE("verbose shows bit patterns") {
    const auto t = dissect(emit_frame(w::encap::udp4));
    const std::string v = verbose_of(*t, 3);
    INFO(v);
    CHECK(v.rfind("Frame 3: 60 bytes, encap udp4\n", 0) == 0);
    CHECK(contains(v, "\n    .... ..00 0000 0001 = xpuid: 1  {sue.rh.xpuid}\n"));
    CHECK(contains(v, "\n    ..00 .... = op: 0 (ACK)  {sue.rh.op}\n"));
    CHECK(contains(v, "\n    01.. .... = vc: 1  {sue.rh.vc}\n"));
    CHECK(contains(v, "\n    .... ..00 0000 0101 = partition: 5  {sue.rh.partition}\n"));
    CHECK(contains(v, "\n    npsn: 4660  {sue.rh.npsn}\n"));
    CHECK(contains(v, "\n    [R-CRC status: good]  {sue.rcrc.status}\n"));
    CHECK(contains(v, "\n    source: 10.0.0.1  {ip.src}\n"));
    CHECK(contains(v, "SUE Reliability Header (sue.rh), bytes 42-49\n"));
  }
}

TEST_CASE("dissect: IPv6 addresses are printed per RFC 5952") {
  const w::field_info& info = w::field_infos<w::ipv6_header>[6];
  REQUIRE(info.filter == "ipv6.src");
  const auto show = [&](const w::ipv6_address& a) {
    const d::field_node node{&info, 0, 64, false, 0, a.data()};
    return text(node);
  };
  CHECK(show({0xFD, 0x53, 0x55, 0x45, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}) == "fd53:5545::1");
  CHECK(show({}) == "::");
  CHECK(show({0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}) == "1::");
  CHECK(show({0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}) == "::1");
  // A single zero group is not compressed.
  CHECK(show({0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 1, 0, 1, 0, 1, 0, 1, 0, 1}) ==
        "2001:db8:0:1:1:1:1:1");
  // Of two equal runs the first is compressed; a longer later run wins.
  CHECK(show({0x20, 0x01, 0x0D, 0xB8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1}) == "2001:db8::1:0:0:1");
  CHECK(show({0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3}) == "1:0:0:2::3");
  // Lowercase, leading zeros dropped.
  CHECK(show({0xAB, 0xCD, 0x0E, 0xF0, 0x00, 0x0A, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34}) ==
        "abcd:ef0:a::1234");
  CHECK(show({0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
              0xFF, 0xFF}) == "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
  // And through a real dissection, in JSON.
  const auto t = dissect(emit_frame(w::encap::udp6));
  CHECK(contains(json_of(*t), "\"ipv6.src\":\"fd53:5545::1\",\"ipv6.dst\":\"fd53:5545::2\""));
}

TEST_CASE("dissect: 22:.. and 23:.. MACs carrying common Ethertypes are ordinary Ethernet") {
  for (const std::uint8_t first : {std::uint8_t{0x22}, std::uint8_t{0x23}}) {
    byte_vector f = emit_frame(w::encap::udp4);
    f[0] = first;  // a randomised, locally administered destination MAC
    const auto t = dissect(f);
    CHECK(t->encap == "udp4");
    CHECK_FALSE(has(*t, "sue_lite.len"));
    CHECK(t->error_count == 0);
    check_rh(*t);
  }
  // The same first octet with no common Ethertype at bytes 12-13 is SUE Lite.
  byte_vector lite = emit_frame(w::encap::lite);
  CHECK(dissect(lite)->encap == "lite");
  // On the bare AFH Gen 2 link there is no Ethernet to fall back to.
  byte_vector f = emit_frame(w::encap::udp4);
  f[0] = 0x22;
  CHECK(dissect(f, d::link_afh2)->encap == "lite");
}

TEST_CASE("dissect: fcs_mode::present checks the FCS it strips") {
  const byte_vector good = with_ethernet_fcs(emit_frame(w::encap::afh1));
  opaque_options o;
  o.fcs = d::fcs_mode::present;
  {
    d::tree t;
    d::dissect_frame(t, good, d::link_ethernet, o);
    CHECK(t.encap == "afh1");
    CHECK(t.error_count == 0);
    CHECK(t.find("eth.fcs") != nullptr);
  }
  byte_vector bad = good;
  bad.back() ^= 0x01;
  d::tree t;
  d::dissect_frame(t, bad, d::link_ethernet, o);
  CHECK(t.encap == "afh1");
  REQUIRE(t.error_count == 1);
  CHECK(t.errors[0].layer == "eth.fcs");
  CHECK(t.errors[0].code == w::errc::bad_checksum);
  CHECK(t.errors[0].offset == good.size() - 4);
  CHECK(t.errors[0].value == ref_crc32(good.data(), good.size() - 4));
  // The PDU itself is still found and good: the FCS was stripped.
  CHECK(t.find("sue.rcrc.status")->value_name() == "good");
}

// A listed layer (a command) whose maker says its names are distinct is written as its fields
// lie; any other is looked through for repeats. A layer that did not fit lends its fields to
// the last one, which then is no longer distinct.
TEST_CASE("dissect: JSON of listed layers, distinct or not, and of layers past the tree's room") {
  static constexpr w::field_info a{.name = "a", .filter = "t.a", .width = 8};
  static constexpr w::field_info b{.name = "b", .filter = "t.b", .width = 8};
  static constexpr w::field_info rsv{
      .name = "rsv", .filter = "t.rsv", .width = 8, .check = w::rule::reserved};
  const auto json = [](const auto& t) {
    return scaleup::test::render([&](auto& out) { d::put_json(out, t, 1); });
  };
  const std::string head = "{\"frame\":1,\"encap\":\"\",\"len\":0,";
  {
    auto t = std::make_unique<d::large_tree>();
    const auto top = t->add_layer("t", "Top", 0, 0);
    const auto c1 = t->add_layer("c", "One", 0, 0, "cs", true);
    const auto c2 = t->add_layer("c", "Two", 0, 0, "cs", false);
    const auto c3 = t->add_layer("c", "Three", 0, 0, "cs", true);
    t->add_field({&a, top, 0, false, 1, nullptr});
    t->add_field({&a, c1, 0, false, 2, nullptr});
    t->add_field({&rsv, c1, 0, false, 0, nullptr});
    t->add_field({&b, c1, 0, false, 3, nullptr});
    t->add_field({&a, c2, 0, false, 4, nullptr});  // not distinct: its repeat is an array
    t->add_field({&a, c2, 0, false, 5, nullptr});
    t->add_field({&a, c3, 0, false, 6, nullptr});  // distinct, but not in one run
    t->add_field({&b, top, 0, false, 7, nullptr});
    t->add_field({&b, c3, 0, false, 8, nullptr});
    CHECK(json(*t) == head +
                          "\"t.a\":1,\"t.b\":7,\"cs\":[{\"t.a\":2,\"t.b\":3},"
                          "{\"t.a\":[4,5]},{\"t.a\":6,\"t.b\":8}],\"errors\":[]}");
  }
  {
    // Four layers of room: the fourth command's fields go to the third.
    d::basic_tree<4, 64, 4> t;
    const auto top = t.add_layer("t", "Top", 0, 0);
    const auto c1 = t.add_layer("c", "One", 0, 0, "cs", true);
    const auto c2 = t.add_layer("c", "Two", 0, 0, "cs", true);
    const auto c3 = t.add_layer("c", "Three", 0, 0, "cs", true);
    REQUIRE(c3 == 3);
    t.add_field({&a, top, 0, false, 1, nullptr});
    t.add_field({&a, c1, 0, false, 2, nullptr});
    t.add_field({&a, c2, 0, false, 3, nullptr});
    t.add_field({&a, c3, 0, false, 4, nullptr});
    t.add_field({&b, c3, 0, false, 5, nullptr});
    const auto c4 = t.add_layer("c", "Four", 0, 0, "cs", true);
    CHECK(c4 == 3);
    t.add_field({&a, c4, 0, false, 6, nullptr});
    t.add_field({&b, c4, 0, false, 7, nullptr});
    CHECK(contains(json(t), head + "\"t.a\":1,\"cs\":[{\"t.a\":2},{\"t.a\":3},"
                                   "{\"t.a\":[4,6],\"t.b\":[5,7]}],\"errors\":["));
  }
}

// put_json indexes up to 256 fields of a layer on the stack and falls back to a general walk
// beyond: both must write the same members. A name once is a value, a name repeated an array in
// order of appearance, a reserved field nothing.
TEST_CASE("dissect: JSON members are the same below and above the indexed 256 fields") {
  static constexpr w::field_info a{.name = "a", .filter = "t.a", .width = 16};
  static constexpr w::field_info b{.name = "b", .filter = "t.b", .width = 16};
  static constexpr w::field_info one{.name = "one", .filter = "t.one", .width = 8};
  static constexpr w::field_info rsv{
      .name = "rsv", .filter = "t.rsv", .width = 8, .check = w::rule::reserved};
  // 1 + 3 x 85 = 256 fields: the last count indexed; 86 pairs take the general walk. Up to 16
  // fields (5 pairs) the repeats are found with one word of bits, beyond with 16.
  for (const std::size_t pairs : {1u, 2u, 5u, 6u, 50u, 85u, 86u, 400u}) {
    CAPTURE(pairs);
    auto t = std::make_unique<d::large_tree>();
    const auto l = t->add_layer("t", "Test", 0, 0);
    t->add_field({&one, l, 0, false, 7, nullptr});
    std::string as, bs;
    for (std::size_t i = 0; i < pairs; ++i) {
      t->add_field({&a, l, 0, false, i, nullptr});
      t->add_field({&rsv, l, 0, false, 0, nullptr});
      t->add_field({&b, l, 0, false, 1000 + i, nullptr});
      as += (i ? "," : "") + std::to_string(i);
      bs += (i ? "," : "") + std::to_string(1000 + i);
    }
    const std::string want = pairs == 1 ? "\"t.one\":7,\"t.a\":0,\"t.b\":1000"
                                        : "\"t.one\":7,\"t.a\":[" + as + "],\"t.b\":[" + bs + "]";
    const std::string got = scaleup::test::render([&](auto& out) { d::put_json(out, *t, 1); });
    CHECK(got == "{\"frame\":1,\"encap\":\"\",\"len\":0," + want + ",\"errors\":[]}");
  }
}
