// The capture reader on files built here byte by byte (capture_files.hpp), read from memory:
// pcap in both byte orders and time stamp precisions, pcapng sections, interfaces, packet
// blocks and options, and every way a file can be damaged.
#include <scaleup/pcap/reader.hpp>

#include <doctest/doctest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "capture_files.hpp"
#include "support.hpp"

namespace {

namespace cap = scaleup::pcap;
namespace ng = scaleup::pcap::pcapng_file;
using cap::packet;
using cap::reader;
using status = reader::status;
using scaleup::test::byte_vector;
using scaleup::test::bytes_of;
using scaleup::test::contains;
using scaleup::test::ng_option;
using scaleup::test::pcap_builder;
using scaleup::test::pcap_nsec_magic;
using scaleup::test::pcap_usec_magic;
using scaleup::test::pcapng_builder;
using scaleup::test::ramp;

// A packet as read, its bytes copied (the reader's view ends with the next read).
struct got {
  packet p;
  byte_vector data;
};

// The reader over `bytes` (which must outlive it), or nothing with the message.
std::optional<reader> open_bytes(const byte_vector& bytes, std::string& err) {
  return reader::open(std::make_unique<cap::memory_source>(bytes), "mem", err);
}

reader open_ok(const byte_vector& bytes) {
  std::string err;
  auto r = open_bytes(bytes, err);
  INFO(err);
  REQUIRE(r.has_value());
  return std::move(*r);
}

std::string open_error(const byte_vector& bytes) {
  std::string err;
  CHECK_FALSE(open_bytes(bytes, err).has_value());
  CHECK(err.rfind("mem: ", 0) == 0);
  return err;
}

// Every packet up to the end or the error; `last` is the status that stopped it.
std::vector<got> read_all(reader& r, status& last) {
  std::vector<got> out;
  packet p;
  while ((last = r.next(p)) == status::packet) out.push_back({p, bytes_of(p.data)});
  CHECK(p.data.empty());  // a non-packet status leaves no stale view
  return out;
}

std::vector<got> read_ok(reader& r) {
  status last{};
  auto v = read_all(r, last);
  INFO(r.error());
  CHECK(last == status::end);
  CHECK(r.error().empty());
  return v;
}

// Reads until the error and returns its message; `before` packets must come first.
std::string read_error(const byte_vector& bytes, std::size_t before) {
  reader r = open_ok(bytes);
  status last{};
  const auto v = read_all(r, last);
  CHECK(last == status::error);
  CHECK(v.size() == before);
  packet p;
  CHECK(r.next(p) == status::error);  // stays failed
  CHECK(r.error().rfind("mem: ", 0) == 0);
  return r.error();
}

constexpr std::uint64_t s_ns = 1'000'000'000;

}  // namespace

// ---- time stamps -----------------------------------------------------------------------------

TEST_CASE("capture reader: pcap record times in nanoseconds") {
  using cap::pcap_file::time_ns;
  static_assert(time_ns(1700000000, 123456, 6) == 1700000000 * s_ns + 123456000);
  static_assert(time_ns(1700000000, 123456789, 9) == 1700000000 * s_ns + 123456789);
  static_assert(time_ns(0xffffffff, 999999999, 9) == 0xffffffffull * s_ns + 999999999);
  // A fraction of a second or more is added as it is, as tshark does.
  static_assert(time_ns(1, 1000000, 6) == 2 * s_ns);
}

TEST_CASE("capture reader: pcapng if_tsresol, if_tsoffset and the conversion to nanoseconds") {
  using ng::digits_of;
  using ng::resolution_of;
  using ng::time_ns;
  using ng::ts_resolution;
  static_assert(resolution_of(6) == ts_resolution{6, false});
  static_assert(resolution_of(0x89) == ts_resolution{9, true});
  static_assert(resolution_of(19) == ts_resolution{19, false});
  static_assert(!resolution_of(20));  // 10^20 units per second do not fit 64 bits
  static_assert(resolution_of(0x80 | 63) == ts_resolution{63, true});
  static_assert(!resolution_of(0x80 | 64));

  static_assert(digits_of({6, false}) == 6 && digits_of({9, false}) == 9);
  static_assert(digits_of({0, false}) == 0 && digits_of({3, false}) == 3);
  static_assert(digits_of({12, false}) == 9);  // below a nanosecond is not kept
  static_assert(digits_of({0, true}) == 0 && digits_of({10, true}) == 4);  // 1024 < 10^4
  static_assert(digits_of({30, true}) == 9);

  constexpr ts_resolution us{6, false}, ns{9, false}, ms{3, false}, ps{12, false};
  static_assert(time_ns(1700000000123456, us, 0) == 1700000000123456000);
  static_assert(time_ns(1700000000123456789, ns, 0) == 1700000000123456789);
  static_assert(time_ns(1700000000123, ms, 0) == 1700000000123000000);
  static_assert(time_ns(1700000000123456789ull, ps, 0) == 1700000000123456);  // cut, not rounded
  static_assert(time_ns(3, {0, false}, 0) == 3 * s_ns);
  // Powers of two: 2^-10 s units; 1536 units = 1.5 s.
  static_assert(time_ns(1536, {10, true}, 0) == 1'500'000'000);
  static_assert(time_ns(1, {10, true}, 0) == 976562);  // 976562.5 ns, cut
  static_assert(time_ns((std::uint64_t{5} << 40) + (std::uint64_t{1} << 39), {40, true}, 0) ==
                5'500'000'000);
  static_assert(time_ns(~std::uint64_t{0}, {63, true}, 0) == 1'999'999'999);
  static_assert(time_ns(7, {0, true}, 0) == 7 * s_ns);
  // if_tsoffset moves by whole seconds, either way; out of range saturates.
  static_assert(time_ns(1'000'000, us, 1700000000) == 1700000001 * s_ns);
  static_assert(time_ns(5'000'000, us, -2) == 3 * s_ns);
  static_assert(time_ns(5'000'000, us, -6) == 0);
  static_assert(time_ns(0, us, std::numeric_limits<std::int64_t>::min()) == 0);
  static_assert(time_ns(0, us, std::numeric_limits<std::int64_t>::max()) ==
                std::numeric_limits<std::uint64_t>::max());
  static_assert(time_ns(~std::uint64_t{0}, {0, false}, 0) ==
                std::numeric_limits<std::uint64_t>::max());
}

// ---- pcap ------------------------------------------------------------------------------------

TEST_CASE("capture reader: microsecond and nanosecond pcap in both byte orders") {
  const byte_vector a = ramp(60, 1, 3), b = ramp(17, 9, 5);
  struct variant {
    bool big;
    std::uint32_t magic;
    std::uint32_t frac_a, frac_b;
    std::uint64_t ns_a, ns_b;
    std::uint8_t digits;
  };
  for (const variant& v : {
           variant{false, pcap_usec_magic, 123456, 999999, 123456000, 999999000, 6},
           variant{true, pcap_usec_magic, 123456, 999999, 123456000, 999999000, 6},
           variant{false, pcap_nsec_magic, 123456789, 1, 123456789, 1, 9},
           variant{true, pcap_nsec_magic, 123456789, 1, 123456789, 1, 9},
       }) {
    CAPTURE(v.big);
    CAPTURE(v.magic);
    pcap_builder f(v.big, v.magic, 1500, 147);
    f.record(1700000000, v.frac_a, a).record(1700000001, v.frac_b, 17, 300, b);
    reader r = open_ok(f.bytes());
    CHECK(r.file_format() == reader::format::pcap);
    CHECK(r.link() == 147);
    CHECK(r.snaplen() == 1500);
    REQUIRE(r.interfaces().size() == 1);
    CHECK(r.interfaces()[0].precision == v.digits);
    const auto got = read_ok(r);
    REQUIRE(got.size() == 2);
    CHECK(got[0].p.number == 1);
    CHECK(got[0].p.ts_ns == 1700000000 * s_ns + v.ns_a);
    CHECK(got[0].p.precision == v.digits);
    CHECK(got[0].p.link == 147);
    CHECK(got[0].p.interface == 0);
    CHECK(got[0].p.caplen == 60);
    CHECK(got[0].p.len == 60);
    CHECK(got[0].data == a);
    CHECK(got[1].p.number == 2);
    CHECK(got[1].p.ts_ns == 1700000001 * s_ns + v.ns_b);
    CHECK(got[1].p.caplen == 17);
    CHECK(got[1].p.len == 300);
    CHECK(got[1].data == b);
  }
}

TEST_CASE("capture reader: the bits above the link type (FCS length) are not the link type") {
  pcap_builder f(false, pcap_usec_magic, 65535, 0x14000001);  // FCS of 4 bytes, F bit, Ethernet
  f.record(1, 0, ramp(20, 0));
  reader r = open_ok(f.bytes());
  CHECK(r.link() == 1);
  CHECK(read_ok(r).at(0).p.link == 1);
}

TEST_CASE("capture reader: patched pcap (a1b2cd34) has 24-byte record headers") {
  scaleup::test::ordered_bytes f(false);
  f.u32(0xa1b2cd34);
  f.u16(2);
  f.u16(4);
  f.u32(0);
  f.u32(0);
  f.u32(65535);
  f.u32(1);
  for (std::uint32_t i = 0; i < 2; ++i) {
    f.u32(100 + i);
    f.u32(7);
    f.u32(10);
    f.u32(10);
    f.u32(3);       // ifindex
    f.u16(0x0800);  // protocol
    f.u8(0);        // pkt_type
    f.u8(0);
    f.raw(ramp(10, static_cast<std::uint8_t>(i)));
  }
  reader r = open_ok(f.bytes());
  const auto got = read_ok(r);
  REQUIRE(got.size() == 2);
  CHECK(got[1].p.ts_ns == 101 * s_ns + 7000);
  CHECK(got[1].data == ramp(10, 1));
}

TEST_CASE("capture reader: pcap before 2.3 has its two lengths the other way round") {
  // Version 2.2: the first length field is the original length.
  pcap_builder f(false, pcap_usec_magic, 65535, 1, 2, 2);
  f.record(1, 0, 100, 8, ramp(8, 0));
  reader r = open_ok(f.bytes());
  const auto got = read_ok(r);
  REQUIRE(got.size() == 1);
  CHECK(got[0].p.caplen == 8);
  CHECK(got[0].p.len == 100);
  // 2.3: swapped only where the "captured" length exceeds the "original" one.
  pcap_builder g(true, pcap_usec_magic, 65535, 1, 2, 3);
  g.record(1, 0, 100, 8, ramp(8, 0)).record(2, 0, 8, 100, ramp(8, 0));
  reader r2 = open_ok(g.bytes());
  const auto got2 = read_ok(r2);
  REQUIRE(got2.size() == 2);
  CHECK((got2[0].p.caplen == 8 && got2[0].p.len == 100));
  CHECK((got2[1].p.caplen == 8 && got2[1].p.len == 100));

  pcap_builder old(false, pcap_usec_magic, 65535, 1, 1, 0);
  const std::string err = open_error(old.bytes());
  CHECK(contains(err, "version 1.0 is not supported"));
}

TEST_CASE("capture reader: a record longer than the snaplen is read whole, as tshark does") {
  const byte_vector data = ramp(200, 3);
  pcap_builder f(false, pcap_usec_magic, 100, 1);
  f.record(1, 2, data).record(3, 4, {9, 8, 7, 6});
  reader r = open_ok(f.bytes());
  CHECK(r.snaplen() == 100);
  const auto got = read_ok(r);
  REQUIRE(got.size() == 2);
  CHECK(got[0].data == data);
  CHECK(got[1].data == byte_vector{9, 8, 7, 6});
}

TEST_CASE("capture reader: records across the buffer's edge and larger than the buffer") {
  // Odd-sized records over several buffer refills, then one record three times the buffer.
  pcap_builder f(true, pcap_nsec_magic, 0, 1);
  std::vector<byte_vector> frames;
  std::size_t total = 0;
  for (std::uint32_t i = 0; total < 3 * reader::chunk; ++i) {
    frames.push_back(ramp(333 + i % 97, static_cast<std::uint8_t>(i), 7));
    total += 16 + frames.back().size();
  }
  frames.push_back(ramp(3 * reader::chunk + 5, 11, 13));
  for (std::size_t i = 0; i < frames.size(); ++i)
    f.record(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i), frames[i]);
  reader r = open_ok(f.bytes());
  const auto got = read_ok(r);
  REQUIRE(got.size() == frames.size());
  for (std::size_t i = 0; i < frames.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i].p.ts_ns == i * s_ns + i);
    CHECK(got[i].data == frames[i]);
  }
}

TEST_CASE("capture reader: a record cut short names the packet, its offset and the lengths") {
  pcap_builder f;
  f.record(1, 0, ramp(40, 0)).record(2, 0, ramp(62, 1));
  byte_vector cut = f.bytes();
  cut.resize(24 + 16 + 40 + 16 + 10);
  const std::string err = read_error(cut, 1);
  INFO(err);
  CHECK(contains(err, "packet 2 (record at offset 80)"));
  CHECK(contains(err, "truncated"));
  CHECK(contains(err, "62"));  // what the record says was captured...
  CHECK(contains(err, "10"));  // ...and what the file holds
}

TEST_CASE("capture reader: a record header cut short") {
  pcap_builder f;
  f.record(1, 2, {1, 2, 3, 4});
  byte_vector cut = f.bytes();
  cut.insert(cut.end(), {5, 0, 0, 0});
  const std::string err = read_error(cut, 1);
  INFO(err);
  CHECK(contains(err, "packet 2 (record at offset 44)"));
  CHECK(contains(err, "truncated"));
  CHECK(contains(err, "record header"));
}

TEST_CASE("capture reader: a captured length beyond the file or absurd is an error") {
  pcap_builder f;
  f.record(1, 2, 300000, 300000, ramp(64, 0));
  std::string err = read_error(f.bytes(), 0);
  INFO(err);
  CHECK(contains(err, "packet 1 (record at offset 24)"));
  CHECK(contains(err, "300000"));
  CHECK(contains(err, "truncated"));

  pcap_builder g;
  g.record(1, 2, ramp(4, 0)).record(1, 2, 0xfffffff0, 0xfffffff0, ramp(64, 0));
  err = read_error(g.bytes(), 1);
  INFO(err);
  CHECK(contains(err, "packet 2 (record at offset 44)"));
  CHECK(contains(err, "captured length 4294967280 is absurd"));
  CHECK(contains(err, std::to_string(cap::max_record)));
}

TEST_CASE("capture reader: headers that are not a capture, or damaged") {
  CHECK(contains(open_error({}), "not a pcap or pcapng capture (empty file)"));
  CHECK(contains(open_error({'h', 'i'}), "not a pcap or pcapng capture (2 bytes)"));
  const std::string text = "this is text\n";
  CHECK(contains(open_error(byte_vector(text.begin(), text.end())),
                 "not a pcap or pcapng capture (it begins 74 68 69 73)"));
  pcap_builder f;
  byte_vector cut = f.bytes();
  cut.resize(10);
  const std::string err = open_error(cut);
  CHECK(contains(err, "pcap file header damaged: truncated: the file ends 10 bytes into it"));
  pcap_builder ns(true, pcap_nsec_magic);
  byte_vector cut_ns = ns.bytes();
  cut_ns.resize(23);
  CHECK(contains(open_error(cut_ns), "nanosecond pcap file header damaged"));
}

TEST_CASE("capture reader: compressed files are named, not called foreign") {
  struct c {
    byte_vector magic;
    const char* name;
  };
  for (const c& x : {c{{0x1f, 0x8b, 8, 0}, "a gzip-compressed file"},
                     c{{'B', 'Z', 'h', '9'}, "a bzip2-compressed file"},
                     c{{0xfd, '7', 'z', 'X', 'Z', 0}, "a xz-compressed file"},
                     c{{0x28, 0xb5, 0x2f, 0xfd}, "a zstd-compressed file"},
                     c{{0x04, 0x22, 0x4d, 0x18}, "a lz4-compressed file"},
                     c{{'P', 'K', 3, 4}, "a zip-compressed file"}}) {
    const std::string err = open_error(x.magic);
    CAPTURE(err);
    CHECK(contains(err, x.name));
    CHECK(contains(err, "decompress it first"));
  }
}

// A source that hands out its bytes and then fails, as a disk or a decompressor may.
class failing_source final : public cap::byte_source {
 public:
  failing_source(const byte_vector& b, std::size_t good) : b_(b), good_(good) {}
  std::size_t read(std::span<std::uint8_t> out) override {
    const std::size_t n = std::min(out.size(), good_ - at_);
    std::copy_n(b_.data() + at_, n, out.data());
    at_ += n;
    if (n < out.size()) error_ = "Input/output error";
    return n;
  }
  const std::string& error() const noexcept override { return error_; }

 private:
  const byte_vector& b_;
  std::size_t good_, at_ = 0;
  std::string error_;
};

TEST_CASE("capture reader: a failing source's message reaches the caller") {
  pcap_builder f;
  f.record(1, 0, ramp(40, 0)).record(2, 0, ramp(40, 1));
  std::string err;
  auto r = reader::open(std::make_unique<failing_source>(f.bytes(), 24 + 56 + 20), "disk", err);
  REQUIRE(r.has_value());
  status last{};
  CHECK(read_all(*r, last).size() == 1);
  CHECK(last == status::error);
  CHECK(r->error() == "disk: packet 2 (record at offset 80): Input/output error");
  // Failing before the magic number is read.
  CHECK_FALSE(reader::open(std::make_unique<failing_source>(f.bytes(), 2), "disk", err));
  CHECK(err == "disk: Input/output error");
}

// ---- pcapng ----------------------------------------------------------------------------------

TEST_CASE("capture reader: pcapng, golden bytes of a little-endian section") {
  // SHB, IDB (Ethernet, snaplen 0, if_tsresol 9), EPB: written out in full once, by hand.
  const byte_vector file{
      0x0a, 0x0d, 0x0d, 0x0a, 28,   0,    0,    0,                  // SHB, 28 bytes
      0x4d, 0x3c, 0x2b, 0x1a, 1,    0,    0,    0,                  // byte-order magic, 1.0
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 28, 0, 0, 0,  // length -1; trailer
      1,    0,    0,    0,    32,   0,    0,    0,                  // IDB, 32 bytes
      1,    0,    0,    0,    0,    0,    0,    0,                  // Ethernet, snaplen 0
      9,    0,    1,    0,    9,    0,    0,    0,                  // if_tsresol = 9, padded
      0,    0,    0,    0,    32,   0,    0,    0,                  // opt_endofopt; trailer
      6,    0,    0,    0,    36,   0,    0,    0,                  // EPB, 36 bytes
      0,    0,    0,    0,                                          // interface 0
      0xfe, 0x9c, 0x97, 0x17, 0x15, 0xcd, 0x85, 0x3d,               // ts 1700000000123456789 ns
      3,    0,    0,    0,    60,   0,    0,    0,                  // captured 3, original 60
      0xaa, 0xbb, 0xcc, 0,    36,   0,    0,    0,                  // data, padding; trailer
  };
  reader r = open_ok(file);
  CHECK(r.file_format() == reader::format::pcapng);
  CHECK(r.link() == 1);
  CHECK(r.snaplen() == 0);
  const auto got = read_ok(r);
  REQUIRE(got.size() == 1);
  CHECK(got[0].p.ts_ns == 1700000000123456789);
  CHECK(got[0].p.precision == 9);
  CHECK(got[0].p.caplen == 3);
  CHECK(got[0].p.len == 60);
  CHECK(got[0].data == byte_vector{0xaa, 0xbb, 0xcc});
}

TEST_CASE("capture reader: pcapng interfaces of different link types and resolutions") {
  pcapng_builder f;
  f.shb(false)
      .idb(1, 0, {pcapng_builder::text_option(ng::if_name, "eth0")})  // microseconds
      .idb(113, 65535, {pcapng_builder::u8_option(ng::if_tsresol, 9)})
      .idb(148, 0,
           {pcapng_builder::u8_option(ng::if_tsresol, 0x80 | 10),
            f.u64_option(ng::if_tsoffset, 1700000000)})
      .idb(147, 0, {pcapng_builder::u8_option(ng::if_tsresol, 3)});
  const byte_vector e = ramp(61, 1), c = ramp(20, 2), t = ramp(33, 3), a = ramp(5, 4);
  f.epb(0, 1700000000123456, e)
      .epb(1, 1700000000123456789, c, 1000)
      .epb(2, 1536, t)
      .epb(3, 1700000000123, a)
      .epb(0, 1700000000000001, e);
  reader r = open_ok(f.bytes());
  REQUIRE(r.interfaces().size() == 1);  // open reads up to the first interface
  const auto got = read_ok(r);
  REQUIRE(got.size() == 5);
  REQUIRE(r.interfaces().size() == 4);
  CHECK(r.interfaces()[0].name == "eth0");
  CHECK(r.interfaces()[1].name.empty());
  CHECK(r.interfaces()[1].snaplen == 65535);
  CHECK(r.interfaces()[2].offset_s == 1700000000);
  const std::uint32_t links[] = {1, 113, 148, 147, 1};
  const std::uint8_t digits[] = {6, 9, 4, 3, 6};
  const std::uint64_t times[] = {1700000000123456000, 1700000000123456789, 1700000001500000000,
                                 1700000000123000000, 1700000000000001000};
  for (std::size_t i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(got[i].p.number == i + 1);
    CHECK(got[i].p.interface == (i == 4 ? 0 : i));
    CHECK(got[i].p.link == links[i]);
    CHECK(got[i].p.precision == digits[i]);
    CHECK(got[i].p.ts_ns == times[i]);
  }
  CHECK(got[1].p.len == 1000);
  CHECK(got[2].data == t);
}

TEST_CASE("capture reader: pcapng sections in both byte orders, interfaces numbered over them") {
  pcapng_builder f;
  f.shb(true).idb(1, 0).epb(0, 5'000'000, ramp(14, 0));
  f.shb(false).idb(147).idb(149, 0, {pcapng_builder::u8_option(ng::if_tsresol, 9)});
  f.epb(1, 7, ramp(9, 1)).epb(0, 8'000'000, ramp(8, 2));
  f.shb(true).idb(148).pb(0, 9'000'000, ramp(7, 3));
  reader r = open_ok(f.bytes());
  const auto got = read_ok(r);
  REQUIRE(got.size() == 4);
  CHECK((got[0].p.interface == 0 && got[0].p.link == 1 && got[0].p.ts_ns == 5 * s_ns));
  CHECK((got[1].p.interface == 2 && got[1].p.link == 149 && got[1].p.ts_ns == 7));
  CHECK((got[2].p.interface == 1 && got[2].p.link == 147 && got[2].p.ts_ns == 8 * s_ns));
  CHECK((got[3].p.interface == 3 && got[3].p.link == 148 && got[3].p.ts_ns == 9 * s_ns));
  CHECK(got[3].data == ramp(7, 3));
  CHECK(r.interfaces().size() == 4);
}

TEST_CASE("capture reader: pcapng simple packet blocks take the snaplen rule") {
  pcapng_builder f(true);
  f.shb(true).idb(1, 40).spb(60, ramp(40, 0)).spb(20, ramp(20, 1));
  f.shb(false).idb(1, 0).spb(30, ramp(30, 2));
  reader r = open_ok(f.bytes());
  const auto got = read_ok(r);
  REQUIRE(got.size() == 3);
  // captured = min(original, snaplen); no time stamp.
  CHECK((got[0].p.caplen == 40 && got[0].p.len == 60 && got[0].data == ramp(40, 0)));
  CHECK((got[1].p.caplen == 20 && got[1].p.len == 20));
  CHECK((got[2].p.caplen == 30 && got[2].p.interface == 1));  // snaplen 0: no limit
  CHECK(got[0].p.ts_ns == 0);

  pcapng_builder bad;
  bad.shb(false).idb(1, 0).spb(100, ramp(40, 0));  // 100 bytes promised, 40 there
  const std::string err = read_error(bad.bytes(), 0);
  CHECK(contains(err, "(simple packet block, packet 1)"));
  CHECK(contains(err, "original length 100 (captured 100) does not fit"));

  pcapng_builder none;
  none.shb(false).spb(4, ramp(4, 0));
  CHECK(contains(read_error(none.bytes(), 0), "interface 0 has not been described"));
}

TEST_CASE("capture reader: pcapng blocks the reader does not need are skipped by length") {
  pcapng_builder f;
  f.shb(false);
  f.block(4, {0, 0, 0, 0});  // name resolution, before the first interface
  f.idb(1, 0);
  f.block(5, ramp(20, 0));           // interface statistics
  f.block(0x40000bad, ramp(13, 0));  // custom, not to be copied
  f.block(0x12345678, {});           // unknown
  f.epb(0, 1, ramp(10, 0), 0, {pcapng_builder::text_option(1, "a comment")});
  f.block(0x0a, ramp(8, 1));  // decryption secrets
  reader r = open_ok(f.bytes());
  const auto got = read_ok(r);
  REQUIRE(got.size() == 1);
  CHECK(got[0].data == ramp(10, 0));
}

TEST_CASE("capture reader: pcapng without an interface opens, reads nothing") {
  pcapng_builder f;
  f.shb(false);
  reader r = open_ok(f.bytes());
  CHECK(r.link() == 0);
  CHECK(r.interfaces().empty());
  CHECK(read_ok(r).empty());
}

TEST_CASE("capture reader: pcapng with a damaged block length") {
  pcapng_builder f;
  f.shb(false).idb(1, 0).epb(0, 1, ramp(10, 0)).epb(0, 2, ramp(10, 1));
  const std::size_t second = f.bytes().size() - 44;  // offset of the second EPB (44 bytes)
  SUBCASE("trailing length differs") {
    byte_vector b = f.bytes();
    b[b.size() - 4] = 40;
    const std::string err = read_error(b, 1);
    INFO(err);
    CHECK(contains(
        err, "block at offset " + std::to_string(second) + " (enhanced packet block, packet 2)"));
    CHECK(contains(err, "block length 44 at its start, 40 at its end (damaged block length)"));
  }
  SUBCASE("leading length damaged") {
    struct damage {
      std::size_t at;  // from the start of the second packet block
      std::uint8_t value;
      const char* message;
    };
    for (const damage& d : {
             damage{4, 42, "block length 42 is not a multiple of 4"},
             damage{4, 8, "block length 8 is below the minimum of 12"},
             damage{7, 0x40, "block length 1073741868 is absurd"},
             damage{5, 1, "truncated: the file ends 44 bytes into the block of 300 bytes"},
         }) {
      CAPTURE(d.message);
      byte_vector b = f.bytes();
      b[second + d.at] = d.value;
      CHECK(contains(read_error(b, 1), d.message));
    }
  }
  SUBCASE("too short for the block's fixed fields") {
    pcapng_builder g;
    g.shb(false).idb(1, 0).block(6, ramp(12, 0));
    CHECK(contains(read_error(g.bytes(), 0), "too short for the block's fixed fields (32 bytes)"));
  }
  SUBCASE("a file cut inside a block header") {
    byte_vector b = f.bytes();
    b.insert(b.end(), {6, 0, 0});
    CHECK(contains(read_error(b, 2), "the file ends 3 bytes into a block header"));
  }
}

TEST_CASE("capture reader: pcapng packets that do not fit or name no interface") {
  SUBCASE("captured length beyond the block") {
    pcapng_builder f;
    f.shb(false).idb(1, 0).epb(0, 1, ramp(10, 0));
    byte_vector b = f.bytes();
    b[b.size() - 44 + 20] = 13;  // captured length 13 in a block with room for 12
    CHECK(contains(read_error(b, 0), "captured length 13 does not fit in the block of 44 bytes"));
  }
  SUBCASE("an interface the section has not described") {
    pcapng_builder f;
    f.shb(false).idb(1, 0).epb(0, 1, ramp(4, 0)).shb(true).idb(1, 0).epb(1, 1, ramp(4, 0));
    const std::string err = read_error(f.bytes(), 1);
    CHECK(contains(err, "interface 1 has not been described (the section has 1 interface"));
  }
  SUBCASE("an option running past its block") {
    pcapng_builder f;
    f.shb(false).idb(1, 0, {pcapng_builder::text_option(ng::if_name, "eth0")});
    byte_vector b = f.bytes();
    b[28 + 16 + 2] = 200;  // if_name of 200 bytes
    std::string err;
    CHECK_FALSE(open_bytes(b, err));
    CHECK(contains(err, "block at offset 28 (interface description block)"));
    CHECK(contains(err, "option 2 of 200 bytes runs past the end of the block"));
  }
  SUBCASE("an if_tsresol too fine for 64 bits keeps microseconds, as tshark does") {
    pcapng_builder f;
    f.shb(false).idb(1, 0, {pcapng_builder::u8_option(ng::if_tsresol, 20)}).epb(0, 7, {1});
    reader r = open_ok(f.bytes());
    const auto got = read_ok(r);
    CHECK((got.at(0).p.ts_ns == 7000 && got.at(0).p.precision == 6));
  }
}

TEST_CASE("capture reader: pcapng section headers that cannot be read") {
  pcapng_builder f;
  f.shb(false).idb(1, 0);
  SUBCASE("byte-order magic") {
    byte_vector b = f.bytes();
    b[8] = 0x4e;
    const std::string err = open_error(b);
    CHECK(contains(err, "block at offset 0 (section header block)"));
    CHECK(contains(err, "byte-order magic 4e 3c 2b 1a is not 1a 2b 3c 4d"));
  }
  SUBCASE("version") {
    pcapng_builder g;
    g.shb(false, 2, 0);
    CHECK(contains(open_error(g.bytes()), "pcapng version 2.0 is not supported"));
  }
  SUBCASE("a later section") {
    pcapng_builder g;
    g.shb(false).idb(1, 0).epb(0, 1, {1}).shb(true, 3, 1).idb(1, 0).epb(0, 1, {2});
    CHECK(contains(read_error(g.bytes(), 1), "pcapng version 3.1 is not supported"));
  }
  SUBCASE("too short") {
    pcapng_builder g;
    g.block(0x0a0d0d0a, {0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0});
    CHECK(contains(open_error(g.bytes()), "too short for the block's fixed fields (28 bytes)"));
  }
  SUBCASE("cut before its byte-order magic") {
    byte_vector b = f.bytes();
    b.resize(10);
    CHECK(contains(open_error(b), "truncated"));
  }
}
