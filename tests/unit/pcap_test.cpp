#include <scaleup/pcap/capture.hpp>

#include <doctest/doctest.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "support.hpp"

namespace {

namespace fs = std::filesystem;
using scaleup::pcap::link_type;
using scaleup::pcap::packet;
using scaleup::pcap::reader;
using scaleup::pcap::writer;
using status = reader::status;
using scaleup::test::byte_vector;
using scaleup::test::bytes_of;
using scaleup::test::contains;
using scaleup::test::ramp;

// Unique per process and per call, so parallel test runs do not trample each other's files.
class temp_file {
 public:
  explicit temp_file(const std::string& suffix) {
    static std::atomic<unsigned> counter{0};
    std::random_device rd;
    path_ = fs::temp_directory_path() / ("scaleup_pcap_test_" + std::to_string(rd()) + "_" +
                                         std::to_string(counter++) + suffix);
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    std::error_code ec;
    fs::remove(path_, ec);
  }
  std::string str() const { return path_.string(); }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

void write_file(const fs::path& p, const byte_vector& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  REQUIRE(f.good());
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::trunc);
  f << text;
  REQUIRE(f.good());
}

void put16(byte_vector& v, std::uint16_t x) {
  v.push_back(static_cast<std::uint8_t>(x));
  v.push_back(static_cast<std::uint8_t>(x >> 8));
}
void put32(byte_vector& v, std::uint32_t x) {
  put16(v, static_cast<std::uint16_t>(x));
  put16(v, static_cast<std::uint16_t>(x >> 16));
}
void put_bytes(byte_vector& v, const byte_vector& b) { v.insert(v.end(), b.begin(), b.end()); }

// Little-endian classic pcap, written by hand so that malformed files can be made.
byte_vector pcap_header(std::uint32_t snaplen, std::uint32_t linktype) {
  byte_vector v;
  put32(v, 0xa1b2c3d4);
  put16(v, 2);
  put16(v, 4);
  put32(v, 0);  // thiszone
  put32(v, 0);  // sigfigs
  put32(v, snaplen);
  put32(v, linktype);
  return v;
}
void pcap_record(byte_vector& v, std::uint32_t sec, std::uint32_t usec, std::uint32_t caplen,
                 std::uint32_t len, const byte_vector& data) {
  put32(v, sec);
  put32(v, usec);
  put32(v, caplen);
  put32(v, len);
  put_bytes(v, data);
}

std::optional<reader> open_ok(const std::string& path) {
  std::string err;
  auto r = reader::open(path, err);
  INFO(err);
  REQUIRE(r.has_value());
  CHECK(err.empty());
  return r;
}

std::string open_error(const std::string& path) {
  std::string err;
  auto r = reader::open(path, err);
  CHECK_FALSE(r.has_value());
  return err;
}

struct frame {
  byte_vector data;
  std::int64_t sec;
  std::uint32_t usec;
};

}  // namespace

static_assert(!std::is_copy_constructible_v<reader> &&
              std::is_nothrow_move_constructible_v<reader>);
static_assert(!std::is_copy_constructible_v<writer> &&
              std::is_nothrow_move_constructible_v<writer>);
static_assert(!std::is_copy_assignable_v<reader> && std::is_move_assignable_v<reader>);
static_assert(!std::is_copy_assignable_v<writer> && std::is_move_assignable_v<writer>);

TEST_CASE("pcap: link type names and values") {
  static_assert(scaleup::pcap::to_string(link_type::ethernet) == "ethernet");
  CHECK(scaleup::pcap::to_string(link_type::afh2) == "afh2");
  CHECK(scaleup::pcap::to_string(link_type::tofu) == "tofu");
  CHECK(scaleup::pcap::to_string(static_cast<link_type>(105)) == "unknown");
  CHECK(static_cast<std::uint32_t>(link_type::ethernet) == 1);
  CHECK(static_cast<std::uint32_t>(link_type::afh2) == 147);
  CHECK(static_cast<std::uint32_t>(link_type::tofu) == 148);
}

TEST_CASE("pcap: three frames round-trip on each link type") {
  const std::array<frame, 3> frames{{
      {ramp(14, 1, 7), 1700000000, 0},
      {ramp(60, 2, 7), 1700000000, 999999},
      {ramp(1514, 3, 7), 1700000123, 42},
  }};
  for (link_type lt : {link_type::ethernet, link_type::afh2, link_type::tofu}) {
    CAPTURE(scaleup::pcap::to_string(lt));
    temp_file tmp(".pcap");
    {
      std::string err;
      auto w = writer::create(tmp.str(), lt, 65535, err);
      INFO(err);
      REQUIRE(w.has_value());
      for (const frame& f : frames) CHECK(w->write(f.data, f.sec, f.usec));
      CHECK(w->close());
      CHECK(w->error().empty());
    }
    auto r = open_ok(tmp.str());
    CHECK(r->link() == static_cast<std::uint32_t>(lt));
    CHECK(r->snaplen() == 65535);
    packet p;
    for (std::size_t i = 0; i < frames.size(); ++i) {
      CAPTURE(i);
      REQUIRE(r->next(p) == status::packet);
      CHECK(p.number == i + 1);
      CHECK(p.ts_sec == frames[i].sec);
      CHECK(p.ts_usec == frames[i].usec);
      CHECK(p.caplen == frames[i].data.size());
      CHECK(p.len == frames[i].data.size());
      CHECK(bytes_of(p.data) == frames[i].data);
    }
    CHECK(r->next(p) == status::end);
    CHECK(r->next(p) == status::end);
    CHECK(r->error().empty());
  }
}

TEST_CASE("pcap: times after 2038 survive the unsigned 32-bit seconds field") {
  temp_file tmp(".pcap");
  const std::int64_t after_2038 = 3000000000;
  const std::int64_t last = 0xffffffff;
  {
    std::string err;
    auto w = writer::create(tmp.str(), link_type::ethernet, 128, err);
    REQUIRE(w.has_value());
    CHECK(w->write(ramp(20, 0, 7), 0, 0));
    CHECK(w->write(ramp(20, 0, 7), after_2038, 1));
    CHECK(w->write(ramp(20, 0, 7), last, 999999));
    CHECK(w->close());
  }
  auto r = open_ok(tmp.str());
  packet p;
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.ts_sec == 0);
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.ts_sec == after_2038);
  CHECK(p.ts_usec == 1);
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.ts_sec == last);
  CHECK(p.ts_usec == 999999);
  CHECK(r->next(p) == status::end);
}

TEST_CASE("pcap: missing file names the path and the reason") {
  temp_file tmp(".pcap");  // never created
  const std::string err = open_error(tmp.str());
  CHECK(contains(err, tmp.str()));
  CHECK(contains(err, "No such file"));
}

TEST_CASE("pcap: a directory is reported as such") {
  const std::string dir = fs::temp_directory_path().string();
  const std::string err = open_error(dir);
  CHECK(contains(err, dir));
  CHECK(contains(err, "directory"));
}

TEST_CASE("pcap: a text file is not a capture") {
  temp_file tmp(".txt");
  write_text(tmp.path(), "this is a text file, not a packet capture\n");
  const std::string err = open_error(tmp.str());
  CHECK(contains(err, tmp.str()));
  CHECK(contains(err, "not a pcap or pcapng capture"));
}

TEST_CASE("pcap: a text file shorter than a magic number is not a capture") {
  temp_file tmp(".txt");
  write_text(tmp.path(), "hi");
  const std::string err = open_error(tmp.str());
  CHECK(contains(err, "not a pcap or pcapng capture"));
}

TEST_CASE("pcap: an empty file is not a capture") {
  temp_file tmp(".pcap");
  write_file(tmp.path(), {});
  const std::string err = open_error(tmp.str());
  CHECK(contains(err, tmp.str()));
  CHECK(contains(err, "not a pcap or pcapng capture"));
  CHECK(contains(err, "empty"));
}

TEST_CASE("pcap: a truncated global header is a damaged capture, not a foreign file") {
  temp_file tmp(".pcap");
  byte_vector hdr = pcap_header(65535, 1);
  hdr.resize(10);
  write_file(tmp.path(), hdr);
  const std::string err = open_error(tmp.str());
  CHECK(contains(err, tmp.str()));
  CHECK(contains(err, "truncated"));
  CHECK_FALSE(contains(err, "not a pcap"));
}

TEST_CASE("pcap: truncation inside the second packet's data") {
  temp_file tmp(".pcap");
  const byte_vector first = ramp(40, 9, 7);
  {
    std::string err;
    auto w = writer::create(tmp.str(), link_type::ethernet, 65535, err);
    REQUIRE(w.has_value());
    CHECK(w->write(first, 10, 20));
    CHECK(w->write(ramp(62, 1, 7), 11, 21));
    CHECK(w->write(ramp(30, 5, 7), 12, 22));
    CHECK(w->close());
  }
  fs::resize_file(tmp.path(), 24 + 16 + first.size() + 16 + 10);
  auto r = open_ok(tmp.str());
  packet p;
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.number == 1);
  CHECK(bytes_of(p.data) == first);
  REQUIRE(r->next(p) == status::error);
  const std::string& err = r->error();
  INFO(err);
  CHECK(contains(err, tmp.str()));
  CHECK(contains(err, "packet 2"));
  CHECK(contains(err, "truncated"));
  CHECK(r->next(p) == status::error);  // stays failed
}

TEST_CASE("pcap: truncation inside the second packet's record header") {
  temp_file tmp(".pcap");
  byte_vector v = pcap_header(65535, 1);
  pcap_record(v, 1, 2, 4, 4, {1, 2, 3, 4});
  put32(v, 5);  // 4 of the 16 bytes of the next record header
  write_file(tmp.path(), v);
  auto r = open_ok(tmp.str());
  packet p;
  REQUIRE(r->next(p) == status::packet);
  REQUIRE(r->next(p) == status::error);
  CHECK(contains(r->error(), "packet 2"));
  CHECK(contains(r->error(), "truncated"));
}

TEST_CASE("pcap: an absurd caplen is an error, not a crash") {
  temp_file tmp(".pcap");
  byte_vector v = pcap_header(65535, 1);
  pcap_record(v, 1, 2, 300000, 300000, ramp(64, 0, 7));
  write_file(tmp.path(), v);
  auto r = open_ok(tmp.str());
  packet p;
  REQUIRE(r->next(p) == status::error);
  INFO(r->error());
  CHECK(contains(r->error(), "packet 1"));
  CHECK(contains(r->error(), "300000"));
}

TEST_CASE("pcap: a caplen above the file's snaplen is cut to the snaplen") {
  temp_file tmp(".pcap");
  const byte_vector data = ramp(200, 3, 7);
  byte_vector v = pcap_header(100, 147);
  pcap_record(v, 1, 2, 200, 200, data);
  pcap_record(v, 3, 4, 4, 4, {9, 8, 7, 6});
  write_file(tmp.path(), v);
  auto r = open_ok(tmp.str());
  CHECK(r->link() == 147);
  CHECK(r->snaplen() == 100);
  packet p;
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.caplen == 100);
  CHECK(p.len == 200);
  CHECK(bytes_of(p.data) == byte_vector(data.begin(), data.begin() + 100));
  REQUIRE(r->next(p) == status::packet);  // the rest of the long record was skipped
  CHECK(p.number == 2);
  CHECK(bytes_of(p.data) == byte_vector{9, 8, 7, 6});
  CHECK(r->next(p) == status::end);
}

TEST_CASE("pcap: a hand-built pcapng file is read") {
  // pcapng (draft-ietf-opsawg-pcapng): SHB, IDB with LINKTYPE_ETHERNET and no if_tsresol (so
  // microseconds), then two EPBs, one of them cut short by the capture.
  byte_vector v;
  put32(v, 0x0a0d0d0a);  // SHB
  put32(v, 28);
  put32(v, 0x1a2b3c4d);  // byte-order magic
  put16(v, 1);
  put16(v, 0);
  put32(v, 0xffffffff);  // section length unknown (-1, 64 bits)
  put32(v, 0xffffffff);
  put32(v, 28);

  put32(v, 1);  // IDB
  put32(v, 20);
  put16(v, 1);  // LinkType
  put16(v, 0);
  put32(v, 0);  // SnapLen: no limit
  put32(v, 20);

  const auto epb = [&v](std::uint64_t ts_us, std::uint32_t orig_len, const byte_vector& data) {
    const std::uint32_t padded = static_cast<std::uint32_t>((data.size() + 3) / 4 * 4);
    put32(v, 6);  // EPB
    put32(v, 32 + padded);
    put32(v, 0);  // interface 0
    put32(v, static_cast<std::uint32_t>(ts_us >> 32));
    put32(v, static_cast<std::uint32_t>(ts_us));
    put32(v, static_cast<std::uint32_t>(data.size()));
    put32(v, orig_len);
    put_bytes(v, data);
    v.resize(v.size() + (padded - data.size()), 0);
    put32(v, 32 + padded);
  };
  const byte_vector a = ramp(61, 4, 7);  // odd lengths exercise the padding
  const byte_vector b = ramp(5, 8, 7);
  epb(1700000000123456ull, 61, a);
  epb(1700000001000007ull, 1500, b);

  temp_file tmp(".pcapng");
  write_file(tmp.path(), v);
  auto r = open_ok(tmp.str());
  CHECK(r->link() == 1);
  packet p;
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.number == 1);
  CHECK(p.ts_sec == 1700000000);
  CHECK(p.ts_usec == 123456);
  CHECK(p.caplen == 61);
  CHECK(p.len == 61);
  CHECK(bytes_of(p.data) == a);
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.number == 2);
  CHECK(p.ts_sec == 1700000001);
  CHECK(p.ts_usec == 7);
  CHECK(p.caplen == 5);
  CHECK(p.len == 1500);
  CHECK(bytes_of(p.data) == b);
  CHECK(r->next(p) == status::end);
}

TEST_CASE("pcap: writer refuses a frame longer than the snaplen and stays usable") {
  temp_file tmp(".pcap");
  const byte_vector ok = ramp(64, 1, 7);
  {
    std::string err;
    auto w = writer::create(tmp.str(), link_type::afh2, 64, err);
    REQUIRE(w.has_value());
    CHECK_FALSE(w->write(ramp(65, 0, 7), 1, 0));
    INFO(w->error());
    CHECK(contains(w->error(), tmp.str()));
    CHECK(contains(w->error(), "65"));
    CHECK(contains(w->error(), "snaplen"));
    CHECK(w->write(ok, 2, 0));
    CHECK(w->close());
  }
  auto r = open_ok(tmp.str());
  packet p;
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.number == 1);
  CHECK(p.ts_sec == 2);
  CHECK(bytes_of(p.data) == ok);
  CHECK(r->next(p) == status::end);
}

TEST_CASE("pcap: writer refuses what the pcap format cannot hold") {
  temp_file tmp(".pcap");
  std::string err;
  CHECK_FALSE(writer::create(tmp.str(), link_type::ethernet, 0, err).has_value());
  CHECK(contains(err, "snaplen"));
  err.clear();
  CHECK_FALSE(writer::create(tmp.str(), link_type::ethernet, 262145, err).has_value());
  CHECK(contains(err, "snaplen"));
  err.clear();

  auto w = writer::create(tmp.str(), link_type::tofu, scaleup::pcap::max_snaplen, err);
  REQUIRE(w.has_value());
  const byte_vector f = ramp(8, 0, 7);
  CHECK_FALSE(w->write(f, -1, 0));
  CHECK_FALSE(w->write(f, std::int64_t{1} << 32, 0));
  CHECK_FALSE(w->write(f, 1, 1000000));
  CHECK(contains(w->error(), "1000000"));
  CHECK(w->close());
  CHECK(w->close());
  CHECK_FALSE(w->write(f, 1, 0));
  CHECK(contains(w->error(), "close"));
}

TEST_CASE("pcap: writer reports a path it cannot create") {
  const fs::path dir = fs::temp_directory_path() / "scaleup_pcap_test_no_such_dir";
  const std::string path = (dir / "out.pcap").string();
  std::string err;
  CHECK_FALSE(writer::create(path, link_type::ethernet, 65535, err).has_value());
  CHECK(contains(err, path));
  CHECK(contains(err, "No such file"));
}

TEST_CASE("pcap: writer reports a full disk when closing") {
  if (!fs::exists("/dev/full")) {
    MESSAGE("skipped: no /dev/full on this system");
    return;
  }
  std::string err;
  auto w = writer::create("/dev/full", link_type::ethernet, 65535, err);
  INFO(err);
  REQUIRE(w.has_value());
  (void)w->write(ramp(100, 0, 7), 1, 0);  // may or may not fail before the buffer is flushed
  CHECK_FALSE(w->close());
  CHECK(contains(w->error(), "No space left"));
  CHECK_FALSE(w->close());
}

TEST_CASE("pcap: reader and writer move") {
  temp_file tmp(".pcap");
  std::string err;
  auto w = writer::create(tmp.str(), link_type::ethernet, 100, err);
  REQUIRE(w.has_value());
  writer w2 = std::move(*w);
  CHECK(w2.write(ramp(10, 0, 7), 5, 6));
  w.reset();  // the moved-from writer must not close the file under w2
  CHECK(w2.write(ramp(11, 0, 7), 5, 7));
  CHECK(w2.close());

  auto r = open_ok(tmp.str());
  reader r2 = std::move(*r);
  r.reset();
  packet p;
  CHECK(r2.next(p) == status::packet);
  CHECK(r2.next(p) == status::packet);
  CHECK(p.len == 11);
  CHECK(r2.next(p) == status::end);
}

TEST_CASE("pcap: captures written by text2pcap are read") {
  if (std::system("command -v text2pcap >/dev/null 2>&1") != 0) {
    MESSAGE("skipped: text2pcap (wireshark-common) is not on PATH");
    return;
  }
  temp_file hex(".txt");
  // "%s." timestamps are seconds since the epoch, independent of the local time zone.
  write_text(hex.path(),
             "1700000000.250000\n"
             "0000  ff ff ff ff ff ff 02 00 00 00 00 01 08 06 00 01\n"
             "0010  08 00 06 04 00 01\n"
             "1700000001.000001\n"
             "0000  01 02 03 04 05 06 07 08 09 0a 0b 0c 88 b5 de ad\n");
  const byte_vector first{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0x00, 0x00, 0x00,
                          0x01, 0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 0x06, 0x04, 0x00, 0x01};
  const byte_vector second{0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
                           0x09, 0x0a, 0x0b, 0x0c, 0x88, 0xb5, 0xde, 0xad};

  struct variant {
    const char* options;
    std::uint32_t link;
  };
  // Wireshark 4 writes pcapng unless told otherwise.
  for (const variant& var : {variant{"", 1}, variant{"-F pcap -l 147", 147}}) {
    CAPTURE(var.options);
    temp_file out(".cap");
    const std::string cmd = std::string("text2pcap -q -t '%s.' ") + var.options + " '" + hex.str() +
                            "' '" + out.str() + "' >/dev/null 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
    auto r = open_ok(out.str());
    CHECK(r->link() == var.link);
    packet p;
    REQUIRE(r->next(p) == status::packet);
    CHECK(p.number == 1);
    CHECK(p.ts_sec == 1700000000);
    CHECK(p.len == first.size());
    CHECK(bytes_of(p.data) == first);
    REQUIRE(r->next(p) == status::packet);
    CHECK(p.number == 2);
    CHECK(p.ts_sec == 1700000001);
    CHECK(bytes_of(p.data) == second);
    CHECK(r->next(p) == status::end);
  }
}
