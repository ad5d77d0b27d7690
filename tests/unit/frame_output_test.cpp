// What `scaleup dump` prints of a frame beside its dissection: tshark's frame.*
// fields in JSON, -V and -T fields, the summary line's tshark columns, the tools' JSON writer,
// and the capture reader on a source that gives its bytes a few at a time (a pipe).
#include <scaleup/dissect/engine.hpp>
#include <scaleup/dissect/field_tree.hpp>
#include <scaleup/dissect/frame_json.hpp>
#include <scaleup/dissect/json_writer.hpp>
#include <scaleup/dissect/registry.hpp>
#include <scaleup/dissect/summary.hpp>
#include <scaleup/pcap/reader.hpp>
#include <scaleup/wire/frame.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "capture_files.hpp"
#include "support.hpp"

namespace {

namespace d = scaleup::dissect;
namespace w = scaleup::wire;
namespace cap = scaleup::pcap;
using scaleup::test::byte_vector;
using scaleup::test::render;

// An RH-only ACK over UDP/IPv4 from 10.0.0.1 to 10.0.0.2, xpuid 5, npsn 7, apsn 6.
byte_vector ack_frame() {
  w::frame_params p;
  p.kind = w::encap::udp4;
  p.src_xpu = 1;
  p.dst_xpu = 2;
  w::reliability_header rh{.op = 0, .xpuid = 5, .npsn = 7, .vc = 0, .apsn = 6};
  byte_vector out(256);
  const auto r = w::emit_sue_frame(p, rh, {}, out);
  REQUIRE(r.ok());
  out.resize(r.value);
  return out;
}

d::frame_meta meta_of(std::uint64_t number) {
  d::frame_meta m;
  m.number = number;
  m.time_ns = 1'700'000'000'123'456'789;
  m.relative_ns = 2'000'000'001;
  m.delta_ns = -1'500;  // an earlier time than the frame before: tshark prints it negative
  m.digits = 9;
  m.len = 60;
  m.cap_len = 60;
  return m;
}

}  // namespace

TEST_CASE("put_seconds: seconds with the capture's decimals, tshark's frame.time_* form") {
  const auto s = [](std::int64_t ns, unsigned digits) {
    return render([&](auto& out) { d::detail::put_seconds(out, ns, digits); });
  };
  CHECK(s(1'700'000'000'123'456'789, 9) == "1700000000.123456789");
  CHECK(s(1'700'000'000'123'456'789, 6) == "1700000000.123456");  // cut, as the file holds
  CHECK(s(0, 9) == "0.000000000");
  CHECK(s(-1'500, 9) == "-0.000001500");
  CHECK(s(5'000'000'000, 0) == "5");
  CHECK(s(1, 12) == "0.000000001");  // no more than nanoseconds
}

TEST_CASE("frame meta in JSON, -V and -T fields") {
  const auto bytes = ack_frame();
  d::tree t;
  d::dissect_frame(t, bytes, d::link_ethernet);
  auto m = meta_of(3);
  const std::string json = render([&](auto& out) { d::put_json(out, t, m); });
  CHECK(json.starts_with(
      "{\"frame\":3,\"encap\":\"udp4\",\"frame.time_epoch\":\"1700000000.123456789\","
      "\"frame.time_relative\":\"2.000000001\",\"frame.time_delta\":\"-0.000001500\","
      "\"frame.len\":60,\"frame.cap_len\":60,\"eth.dst\""));
  CHECK(json.find("\"len\":") == std::string::npos);  // frame.len in its place
  CHECK(json.find("frame.interface_id") == std::string::npos);
  m.has_interface = true;
  m.interface = 2;
  CHECK(render([&](auto& out) { d::put_json(out, t, m); }).find(",\"frame.interface_id\":2,") !=
        std::string::npos);
  // Without meta the object is the one it always was.
  const std::string plain = render([&](auto& out) { d::put_json(out, t, 3); });
  CHECK(plain.starts_with("{\"frame\":3,\"encap\":\"udp4\",\"len\":60,\"eth.dst\""));

  const std::string v = render([&](auto& out) { d::put_verbose(out, t, m); });
  CHECK(
      v.starts_with("Frame 3: 60 bytes, encap udp4\n"
                    "    Interface id: 2  {frame.interface_id}\n"
                    "    Epoch Time: 1700000000.123456789 seconds  {frame.time_epoch}\n"
                    "    [Time delta from previous captured frame: -0.000001500 seconds]  "
                    "{frame.time_delta}\n"
                    "    [Time since first frame: 2.000000001 seconds]  {frame.time_relative}\n"
                    "    Frame Length: 60 bytes  {frame.len}\n"
                    "    Capture Length: 60 bytes  {frame.cap_len}\n"));

  const auto field = [&](std::string_view name) {
    return render([&](auto& out) { d::put_field_values(out, t, m, name); });
  };
  CHECK(field("frame.number") == "3");
  CHECK(field("frame.time_epoch") == "1700000000.123456789");
  CHECK(field("frame.time_delta") == "-0.000001500");
  CHECK(field("frame.interface_id") == "2");
  CHECK(field("encap") == "udp4");
  CHECK(field("sue.rh.npsn") == "7");
  CHECK(field("ip.src") == "10.0.0.1");
  CHECK(field("sue.rh.op") == "0");       // the value, as tshark's -T fields prints it
  CHECK(field("afh2c.src_xpu").empty());  // not in this frame
  m.digits = 6;  // a microsecond file: the fields keep tshark's nine decimals
  CHECK(field("frame.time_relative") == "2.000000001");
}

TEST_CASE("-T fields: every occurrence of a repeated field, and -E's layouts") {
  // Two barriers (type 0x12, reserved, tag 7 and 8) in one PDU.
  const byte_vector payload{0x12, 0x00, 0x00, 0x07, 0x12, 0x00, 0x00, 0x08};
  w::frame_params p;
  p.kind = w::encap::afh2c;
  w::reliability_header rh{.op = 2, .xpuid = 1, .npsn = 1};
  byte_vector bytes(256);
  const auto r = w::emit_sue_frame(p, rh, payload, bytes);
  REQUIRE(r.ok());
  bytes.resize(r.value);
  auto t = std::make_unique<d::large_tree>();
  d::dissect_frame(*t, bytes, d::link_ethernet);
  const auto m = meta_of(1);
  CHECK(render([&](auto& out) { d::put_field_values(out, *t, m, "sue.cmd.name"); }) ==
        "BARRIER,BARRIER");
  CHECK(render([&](auto& out) { d::put_field_values(out, *t, m, "sue.cmd.tag"); }) == "7,8");

  // tshark's -E options, as tshark writes them (wireshark_fields_csv holds dump to it).
  const auto column = [&](std::string_view name, const d::field_layout& l) {
    return render([&](auto& out) { d::put_field_values(out, *t, m, name, l); });
  };
  using occ = d::field_occurrence;
  CHECK(column("sue.cmd.tag", {.aggregator = ';', .quote = '"'}) == "\"7;8\"");
  CHECK(column("sue.cmd.tag", {.quote = '\'', .occurrence = occ::first}) == "'7'");
  CHECK(column("sue.cmd.tag", {.occurrence = occ::last}) == "8");
  CHECK(column("sue.rh.npsn", {.quote = '"', .occurrence = occ::last}) == "\"1\"");
  CHECK(column("frame.number", {.quote = '"'}) == "\"1\"");
  CHECK(column("ip.src", {.quote = '"'}).empty());  // absent: no quotes either
  // The joined values are escaped as one text: unquoted, an aggregator that is the separator
  // gets a backslash (tshark 4.4: "7\,8"); quoted, it is only text.
  CHECK(column("sue.cmd.tag", {.separator = ','}) == "7\\,8");
  CHECK(column("sue.cmd.tag", {.separator = ',', .quote = '"'}) == "\"7,8\"");
  CHECK(column("frame.number", {.separator = '1'}) == "\\1");
  const std::vector<std::string> names{"frame.number", "ip.src", "sue.cmd.name"};
  const d::field_layout csv{.separator = ',', .quote = '"', .header = true, .bom = true};
  CHECK(render([&](auto& out) { d::put_field_header(out, names, csv); }) ==
        "\xEF\xBB\xBF"
        "frame.number,ip.src,sue.cmd.name\n");
  CHECK(render([&](auto& out) { d::put_field_row(out, *t, m, names, csv); }) ==
        "\"1\",,\"BARRIER,BARRIER\"");
}

TEST_CASE("-T fields: text in a column is escaped as tshark 4.4 escapes it") {
  // What tshark 4.4.19 wrote for an HTTP User-Agent of these characters, -E separator=, with
  // each quote option (and escape=n).
  const std::string_view text = "a\"b\\c,d'e\tf|g";
  const auto column = [&](const d::field_layout& l) {
    return render([&](auto& sink) {
      d::detail::chunked<std::remove_reference_t<decltype(sink)>> out(sink);
      d::detail::put_column_text(out, text, l);
    });
  };
  CHECK(column({.separator = ',', .quote = '"'}) == "a\"\"b\\\\c,d'e\\tf|g");
  CHECK(column({.separator = ',', .quote = '\''}) == "a\"b\\\\c,d''e\\tf|g");
  CHECK(column({.separator = ',', .quote = '\0'}) == "a\"b\\\\c\\,d'e\\tf|g");
  CHECK(column({.separator = ',', .quote = '\0', .escape = false}) == "a\"b\\\\c\\,d'e\tf|g");
  CHECK(column({.separator = ',', .quote = '"', .escape = false}) == "a\"\"b\\c,d'e\tf|g");
  // The C escapes (NUL with escape=n too); other control characters as they are.
  const std::string ctl("\a\b\f\n\r\v\x01\0", 8);
  const auto raw = [&](const d::field_layout& l) {
    return render([&](auto& sink) {
      d::detail::chunked<std::remove_reference_t<decltype(sink)>> out(sink);
      d::detail::put_column_text(out, ctl, l);
    });
  };
  CHECK(raw({}) == "\\a\\b\\f\\n\\r\\v\x01\\0");
  CHECK(raw({.escape = false}) == std::string("\a\b\f\n\r\v\x01\\0", 9));
}

TEST_CASE("field names for -e: the tables, computed fields, frame.*, a profile's controls") {
  const auto* def = &scaleup::pack::default_profile;
  for (const auto* name :
       {"sue.rh.npsn", "ip.src", "afh2c.dst_xpu", "sue.rcrc.status", "frame.time_epoch",
        "frame.interface_id", "encap", "sue.cmd.name", "sue.cmd.tag", "tofu.rh.seq"})
    CHECK_MESSAGE(d::is_field_name(name, def), name);
  CHECK_FALSE(d::is_field_name("sue.rh.bogus", def));
  CHECK_FALSE(d::is_field_name("", def));
  CHECK_FALSE(d::is_field_name("frame.time", def));
}

TEST_CASE("the summary line in tshark's columns") {
  const auto bytes = ack_frame();
  d::tree t;
  d::dissect_frame(t, bytes, d::link_ethernet);
  auto m = meta_of(12);
  m.relative_ns = 1'234'000;
  const std::string line = render([&](auto& out) { d::put_summary(out, t, m); });
  CHECK(line ==
        "    12  0.001234000          10.0.0.1 \u2192 10.0.0.2          SUE         60 udp4 "
        "op=ACK xpuid=5 npsn=7 apsn=6 vc=0 partition=0 payload=0 rcrc=good");
  // The frame-number form keeps its columns (the Wireshark plugin's Info takes what follows
  // " B  ").
  CHECK(render([&](auto& out) { d::put_summary(out, t, 12); }) ==
        "    12  udp4              60 B  SUE op=ACK xpuid=5 npsn=7 apsn=6 vc=0 partition=0 "
        "payload=0 rcrc=good");
}

TEST_CASE("json_writer: nesting, commas, escapes, signed numbers") {
  const std::string s = render([](auto& out) {
    d::json_writer<std::remove_reference_t<decltype(out)>> j(out);
    j.object()
        .member("file", std::string_view("a\x01"
                                         "b\"c\\\n"))
        .member("n", std::uint64_t{18446744073709551615u})
        .member("neg", std::int64_t{-9223372036854775807 - 1})
        .number_text("us", "1.500")
        .member_bool("ok", true);
    j.array("list").member({}, 1).object().member("k", "v").end().array().end().end();
    j.line("  ").member("last", 0);
    j.end().raw("\n");
  });
  CHECK(s ==
        "{\"file\":\"a\\u0001b\\\"c\\\\\\u000a\",\"n\":18446744073709551615,"
        "\"neg\":-9223372036854775808,\"us\":1.500,\"ok\":true,\"list\":[1,{\"k\":\"v\"},[]],\n"
        "  \"last\":0}\n");
}

// JSON strings are tested eight bytes at a time (detail::any_json_special), then escaped byte
// by byte where a word holds something to escape. Against the rule written out per byte: every
// byte value at every place of a word, among neighbours on either side of each edge the test
// draws (0x1F/0x20, '!'/'"'/'#', '['/'\\'/']', 0x7F/0x80, 0xFF), and strings of 0 to 40 bytes with
// one such byte at every place, so across and at the ends of the 8-byte words.
TEST_CASE("json strings: escapes found at every place in and across 8-byte words") {
  const auto special = [](unsigned char c) { return c < 0x20 || c == '"' || c == '\\'; };
  const std::array<unsigned char, 10> fill{0x1F, 0x20, '!', '"', '#', '[', '\\', ']', 0x7F, 0xFF};
  for (unsigned v = 0; v < 256; ++v)
    for (std::size_t at = 0; at < 8; ++at)
      for (const unsigned char f : fill) {
        std::array<unsigned char, 8> b;
        b.fill(f);
        b[at] = static_cast<unsigned char>(v);
        const auto word = std::bit_cast<std::uint64_t>(b);
        CHECK(d::detail::any_json_special(word) ==
              (special(f) || special(static_cast<unsigned char>(v))));
      }
  const auto by_hand = [&](const std::string& in) {
    std::string o = "\"";
    for (const char ch : in) {
      const auto c = static_cast<unsigned char>(ch);
      if (c == '"' || c == '\\') {
        o += '\\';
        o += ch;
      } else if (c < 0x20) {
        static constexpr char hexd[] = "0123456789abcdef";
        o += "\\u00";
        o += hexd[c >> 4];
        o += hexd[c & 0xF];
      } else {
        o += ch;
      }
    }
    return o + "\"";
  };
  for (std::size_t len = 0; len <= 40; ++len)
    for (std::size_t at = 0; at < len; ++at)
      for (const unsigned char c : {0x00, 0x0A, 0x1F, 0x20, 0x22, 0x5C, 0x7F, 0x80, 0xE9}) {
        std::string in(len, 'x');
        in[at] = static_cast<char>(c);
        CAPTURE(len);
        CAPTURE(at);
        CAPTURE(static_cast<unsigned>(c));
        CHECK(render([&](auto& out) { d::detail::put_json_string(out, in); }) == by_hand(in));
      }
}

namespace {

// Gives at most `step` bytes a read, as a pipe gives what has arrived.
class trickle final : public cap::byte_source {
 public:
  trickle(const byte_vector& b, std::size_t step) : bytes_(b), step_(step) {}
  std::size_t read(std::span<std::uint8_t> out) override {
    const std::size_t n = std::min({out.size(), step_, bytes_.size() - at_});
    std::copy_n(bytes_.data() + at_, n, out.data());
    at_ += n;
    return n;
  }
  const std::string& error() const noexcept override { return error_; }

 private:
  const byte_vector& bytes_;
  std::size_t step_, at_ = 0;
  std::string error_;
};

}  // namespace

TEST_CASE("the capture reader takes a short read for bytes still coming, not for the end") {
  scaleup::test::pcap_builder b(false, scaleup::test::pcap_nsec_magic);
  const byte_vector f1 = ack_frame();
  b.record(1, 5, f1).record(2, 6, byte_vector(70, 0xAB)).record(3, 7, byte_vector{1, 2, 3});
  for (const std::size_t step : {1u, 7u, 100u}) {
    std::string err;
    auto r = cap::reader::open(std::make_unique<trickle>(b.bytes(), step), "pipe", err);
    INFO("step ", step, ": ", err);
    REQUIRE(r.has_value());
    cap::packet p;
    std::vector<std::size_t> sizes;
    while (r->next(p) == cap::reader::status::packet) sizes.push_back(p.data.size());
    CHECK(r->error().empty());
    CHECK(sizes == std::vector<std::size_t>{f1.size(), 70, 3});
  }
}

// JSON keys are the fields' filter names written as they are, so every name a frame's output
// can hold must be a display-filter name (wire::is_filter_name, Wireshark's rule): every table's,
// every computed field's, the frame.* fields', the shipped profiles' (checked with the profile).
TEST_CASE("every field's filter name is a display-filter name: a JSON key without escapes") {
  std::size_t names = 0;
  for (const auto& t : d::tables)
    for (const auto& f : t.fields) {
      CHECK_MESSAGE(w::is_filter_name(f.filter), f.filter);
      ++names;
    }
  for (const auto* f : d::computed) CHECK_MESSAGE(w::is_filter_name(f->filter), f->filter);
  for (const auto name : d::frame_fields) CHECK(w::is_filter_name(name));
  CHECK(names > 200);
  CHECK(w::is_filter_name("sue.cmd.data_len"));
  CHECK(w::is_filter_name("ieee8021ah.etype"));
  CHECK_FALSE(w::is_filter_name(""));
  CHECK_FALSE(w::is_filter_name("sue.\"x\""));
  CHECK_FALSE(w::is_filter_name("sue x"));
  CHECK_FALSE(w::is_filter_name("sue.x\\"));
  CHECK_FALSE(w::is_filter_name("sue.\x01"));
  CHECK_FALSE(w::is_filter_name("sue.\xc3\xa9"));
}

namespace {

// A sink the printers write into in place (dissect::direct_sink), that checks what it is told:
// a commit within what the last reserve handed out, and no byte written past it (a guard of
// bytes after the room, which must still hold what they were given at the commit).
struct in_place {
  static constexpr std::size_t guard = 16;
  std::string text;
  std::size_t reserved = 0;  // bytes handed out by the last reserve
  std::size_t end = 0;       // where they end
  int reserves = 0;
  char* reserve(std::size_t n) {
    ++reserves;
    const std::size_t at = text.size();
    text.resize(at + n + guard, '\xff');
    reserved = n;
    end = at + n;
    return text.data() + at;
  }
  void commit(char* to) {
    const auto used = static_cast<std::size_t>(to - text.data());
    REQUIRE(used <= end);
    REQUIRE(end - used <= reserved);
    CHECK(text.find_first_not_of('\xff', end) == std::string::npos);
    text.resize(used);
  }
};
static_assert(d::direct_sink<in_place>);

}  // namespace

// The printers write a frame the same into a direct sink (in place) as through the buffer they
// hand a plain sink; and numbers of every length as std::to_chars writes them.
TEST_CASE("printers: a direct sink gets the same text, numbers as to_chars") {
  const byte_vector f = ack_frame();
  auto t = std::make_unique<d::large_tree>();
  d::dissect_frame(*t, w::bytes(f.data(), f.size()), d::link_ethernet);
  const auto meta = meta_of(3);
  const auto plain = [&](auto&& print) { return render([&](auto& out) { print(out); }); };
  const auto direct = [&](auto&& print) {
    in_place s;
    print(s);
    CHECK(s.reserves > 0);
    return s.text;
  };
  for (int form = 0; form < 3; ++form) {
    const auto print = [&](auto& out) {
      if (form == 0) d::put_json(out, *t, meta);
      if (form == 1) d::put_verbose(out, *t, meta);
      if (form == 2) d::put_summary(out, *t, meta);
    };
    CHECK(direct(print) == plain(print));
  }
  std::vector<std::uint64_t> numbers{0, 9, 10, 99, 100, 18446744073709551615u};
  for (std::uint64_t p = 10; p <= 10'000'000'000'000'000'000u / 10; p *= 10)
    for (const std::uint64_t v : {p - 1, p, p + 1, 3 * p + 7}) numbers.push_back(v);
  std::string want = "[";
  for (std::size_t i = 0; i < numbers.size(); ++i) {
    std::array<char, 24> b{};
    want.append(i ? "," : "")
        .append(b.data(), std::to_chars(b.data(), b.data() + 24, numbers[i]).ptr);
  }
  want += "]";
  const auto numbers_json = [&](auto& out) {
    d::json_writer<std::remove_reference_t<decltype(out)>> j(out);
    j.array();
    for (const auto v : numbers) j.member({}, v);
    j.end();
  };
  CHECK(plain(numbers_json) == want);
  CHECK(direct(numbers_json) == want);
}

// The IPv4 writer stores the dot after each byte without a branch and keeps it only between
// bytes, so the last one lands past the address: it asks for room for 16 bytes, not 15, and an
// address at the very end of the writer's window stays inside it.
TEST_CASE("printers: an address at the end of the writer's window is written inside it") {
  using writer = d::detail::chunked<in_place>;
  for (std::size_t left = 14; left <= 18; ++left) {
    CAPTURE(left);
    const std::string pad(writer::capacity - left, 'x');  // leaves `left` bytes of the window
    in_place ip, mac;
    {
      writer w(ip);
      w(pad);
      w.ipv4(0xFFFFFFFF);
    }
    {
      writer w(mac);
      w(pad);
      w.mac(0xFFFFFFFFFFFF);
    }
    CHECK(ip.text == pad + "255.255.255.255");
    CHECK(mac.text == pad + "ff:ff:ff:ff:ff:ff");
  }
}

TEST_CASE("printers: JSON members across the writer's 4 KB window come out whole, in any sink") {
  // 250 members (fewer than the 256 the printer indexes) with long, distinct names, about 16 KB
  // of JSON: numbers of every length, with labels and reserved fields between them, so that the
  // printer's window ends inside members of each kind, in a direct sink and through the
  // printer's own buffer.
  static constexpr w::value_name states[] = {{0, "zero"}, {1, "one"}};
  std::vector<std::string> names;
  names.reserve(250);
  std::vector<w::field_info> infos;
  infos.reserve(250);
  auto t = std::make_unique<d::large_tree>();
  const auto l = t->add_layer("t", "Test", 0, 0);
  std::string want = "{\"frame\":1,\"encap\":\"\",\"len\":0";
  for (std::size_t i = 0; i < 250; ++i) {
    names.push_back("t.member_with_a_rather_long_name_that_fills_the_window_" + std::to_string(i));
    w::field_info info{.name = "m", .filter = names.back(), .width = 64};
    if (i % 5 == 3) {
      info.type = w::kind::label;
      info.names = states;
    }
    if (i % 11 == 4) info.check = w::rule::reserved;
    infos.push_back(info);
    const std::uint64_t v = info.type == w::kind::label ? i % 2 : ~std::uint64_t{0} >> (i % 64);
    t->add_field({&infos.back(), l, 0, false, v, nullptr});
    if (info.check == w::rule::reserved) continue;  // not shown
    want +=
        ",\"" + names.back() + "\":" +
        (info.type == w::kind::label ? std::string(v ? "\"one\"" : "\"zero\"") : std::to_string(v));
  }
  want += ",\"errors\":[]}";
  REQUIRE(want.size() > 3 * 4096);
  const auto print = [&](auto& out) { d::put_json(out, *t, 1); };
  CHECK(render(print) == want);
  in_place direct;
  print(direct);
  CHECK(direct.reserves > 3);
  CHECK(direct.text == want);
}
