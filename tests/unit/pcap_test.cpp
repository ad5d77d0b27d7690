// Capture files on disk: the writer (libpcap, nanoseconds by default), the reader opening
// paths, and the reader against files that Wireshark's tools write and against what tshark
// reads from them.
#include <scaleup/pcap/capture.hpp>
#include <scaleup/pcap/pcapng_writer.hpp>

#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "capture_files.hpp"
#include "support.hpp"

namespace {

namespace fs = std::filesystem;
using scaleup::pcap::link_type;
using scaleup::pcap::packet;
using scaleup::pcap::pcapng_writer;
using scaleup::pcap::reader;
using scaleup::pcap::time_precision;
using scaleup::pcap::writer;
using status = reader::status;
using scaleup::test::byte_vector;
using scaleup::test::bytes_of;
using scaleup::test::contains;
using scaleup::test::pcap_builder;
using scaleup::test::ramp;
using scaleup::test::temp_file;
using scaleup::test::write_file;
using scaleup::test::write_text;

constexpr std::uint64_t s_ns = 1'000'000'000;

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

struct pcap_frame {
  byte_vector data;
  std::uint64_t ts_ns;
};

byte_vector file_bytes(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return byte_vector(std::istreambuf_iterator<char>(f), {});
}

bool have(const char* tool) {
  return std::system(("command -v " + std::string(tool) + " >/dev/null 2>&1").c_str()) == 0;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }

// What a command prints on standard output.
std::string output_of(const std::string& cmd) {
  std::string out;
  std::FILE* p = popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  CHECK(pclose(p) == 0);
  return out;
}

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
  CHECK(scaleup::pcap::to_string(link_type::rdma) == "rdma");
  CHECK(scaleup::pcap::to_string(static_cast<link_type>(105)) == "unknown");
  CHECK(static_cast<std::uint32_t>(link_type::ethernet) == 1);
  CHECK(static_cast<std::uint32_t>(link_type::afh2) == 147);
  CHECK(static_cast<std::uint32_t>(link_type::tofu) == 148);
  CHECK(static_cast<std::uint32_t>(link_type::rdma) == 149);
}

TEST_CASE("pcap: three frames round-trip on each link type, in nanoseconds") {
  const std::array<pcap_frame, 3> frames{{
      {ramp(14, 1, 7), 1700000000 * s_ns},
      {ramp(60, 2, 7), 1700000000 * s_ns + 999999999},
      {ramp(1514, 3, 7), 1700000123 * s_ns + 42},
  }};
  for (link_type lt : {link_type::ethernet, link_type::afh2, link_type::tofu, link_type::rdma}) {
    CAPTURE(scaleup::pcap::to_string(lt));
    temp_file tmp(".pcap");
    {
      std::string err;
      auto w = writer::create(tmp.str(), lt, 65535, err);
      INFO(err);
      REQUIRE(w.has_value());
      for (const pcap_frame& f : frames) CHECK(w->write(f.data, f.ts_ns));
      CHECK(w->close());
      CHECK(w->error().empty());
    }
    // The nanosecond magic, in this host's order (a little-endian host).
    const byte_vector head = file_bytes(tmp.path());
    REQUIRE(head.size() > 24);
    CHECK(byte_vector(head.begin(), head.begin() + 4) == byte_vector{0x4d, 0x3c, 0xb2, 0xa1});
    auto r = open_ok(tmp.str());
    CHECK(r->link() == static_cast<std::uint32_t>(lt));
    CHECK(r->snaplen() == 65535);
    packet p;
    for (std::size_t i = 0; i < frames.size(); ++i) {
      CAPTURE(i);
      REQUIRE(r->next(p) == status::packet);
      CHECK(p.number == i + 1);
      CHECK(p.ts_ns == frames[i].ts_ns);
      CHECK(p.precision == 9);
      CHECK(p.link == static_cast<std::uint32_t>(lt));
      CHECK(p.interface == 0);
      CHECK(p.caplen == frames[i].data.size());
      CHECK(p.len == frames[i].data.size());
      CHECK(bytes_of(p.data) == frames[i].data);
    }
    CHECK(r->next(p) == status::end);
    CHECK(r->next(p) == status::end);
    CHECK(r->error().empty());
  }
}

TEST_CASE("pcap: a microsecond writer keeps the whole microseconds") {
  temp_file tmp(".pcap");
  {
    std::string err;
    auto w = writer::create(tmp.str(), link_type::ethernet, 100, err, time_precision::micro);
    REQUIRE(w.has_value());
    CHECK(w->write(ramp(20, 0, 7), 1700000000 * s_ns + 123456789));
    CHECK(w->close());
  }
  const byte_vector b = file_bytes(tmp.path());
  CHECK(byte_vector(b.begin(), b.begin() + 4) == byte_vector{0xd4, 0xc3, 0xb2, 0xa1});
  auto r = open_ok(tmp.str());
  packet p;
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.ts_ns == 1700000000 * s_ns + 123456000);
  CHECK(p.precision == 6);
}

TEST_CASE("pcap: times after 2038 survive the unsigned 32-bit seconds field") {
  temp_file tmp(".pcap");
  const std::uint64_t after_2038 = 3000000000 * s_ns + 1;
  const std::uint64_t last = 0xffffffff * s_ns + 999999999;
  {
    std::string err;
    auto w = writer::create(tmp.str(), link_type::ethernet, 128, err);
    REQUIRE(w.has_value());
    CHECK(w->write(ramp(20, 0, 7), 0));
    CHECK(w->write(ramp(20, 0, 7), after_2038));
    CHECK(w->write(ramp(20, 0, 7), last));
    CHECK(w->close());
  }
  auto r = open_ok(tmp.str());
  packet p;
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.ts_ns == 0);
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.ts_ns == after_2038);
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.ts_ns == last);
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
  REQUIRE(write_text(tmp.path(), "this is a text file, not a packet capture\n"));
  const std::string err = open_error(tmp.str());
  CHECK(contains(err, tmp.str()));
  CHECK(contains(err, "not a pcap or pcapng capture"));
}

TEST_CASE("pcap: an empty file is not a capture") {
  temp_file tmp(".pcap");
  REQUIRE(write_file(tmp.path(), {}));
  const std::string err = open_error(tmp.str());
  CHECK(contains(err, tmp.str()));
  CHECK(contains(err, "not a pcap or pcapng capture (empty file)"));
}

TEST_CASE("pcap: a truncated file header is a damaged capture, not a foreign file") {
  temp_file tmp(".pcap");
  byte_vector hdr = pcap_builder().bytes();
  hdr.resize(10);
  REQUIRE(write_file(tmp.path(), hdr));
  const std::string err = open_error(tmp.str());
  CHECK(contains(err, tmp.str()));
  CHECK(contains(err, "truncated"));
  CHECK_FALSE(contains(err, "not a pcap"));
}

TEST_CASE("pcap: truncation inside the second packet's data of a written file") {
  temp_file tmp(".pcap");
  const byte_vector first = ramp(40, 9, 7);
  {
    std::string err;
    auto w = writer::create(tmp.str(), link_type::ethernet, 65535, err);
    REQUIRE(w.has_value());
    CHECK(w->write(first, 10 * s_ns + 20));
    CHECK(w->write(ramp(62, 1, 7), 11 * s_ns));
    CHECK(w->write(ramp(30, 5, 7), 12 * s_ns));
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

TEST_CASE("pcap: writer refuses a frame longer than the snaplen and stays usable") {
  temp_file tmp(".pcap");
  const byte_vector ok = ramp(64, 1, 7);
  {
    std::string err;
    auto w = writer::create(tmp.str(), link_type::afh2, 64, err);
    REQUIRE(w.has_value());
    CHECK_FALSE(w->write(ramp(65, 0, 7), 1 * s_ns));
    INFO(w->error());
    CHECK(contains(w->error(), tmp.str()));
    CHECK(contains(w->error(), "65"));
    CHECK(contains(w->error(), "snaplen"));
    CHECK(w->write(ok, 2 * s_ns));
    CHECK(w->close());
  }
  auto r = open_ok(tmp.str());
  packet p;
  REQUIRE(r->next(p) == status::packet);
  CHECK(p.number == 1);
  CHECK(p.ts_ns == 2 * s_ns);
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
  CHECK(w->write(f, 0xffffffff * s_ns + 999999999));  // the last time a record holds
  CHECK_FALSE(w->write(f, 0x100000000 * s_ns));
  CHECK(contains(w->error(), "4294967296 s does not fit"));
  CHECK(w->close());
  CHECK(w->close());
  CHECK_FALSE(w->write(f, 1));
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
  (void)w->write(ramp(100, 0, 7), 1);  // may or may not fail before the buffer is flushed
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
  CHECK(w2.write(ramp(10, 0, 7), 5));
  w.reset();  // the moved-from writer must not close the file under w2
  CHECK(w2.write(ramp(11, 0, 7), 6));
  CHECK(w2.close());

  auto r = open_ok(tmp.str());
  reader r2 = std::move(*r);
  r.reset();
  packet p;
  CHECK(r2.next(p) == status::packet);
  CHECK(r2.next(p) == status::packet);
  CHECK(p.len == 11);
  CHECK(p.ts_ns == 6);
  CHECK(r2.next(p) == status::end);
}

TEST_CASE("pcap: captures written by text2pcap are read") {
  if (!have("text2pcap")) {
    MESSAGE("skipped: text2pcap (wireshark-common) is not on PATH");
    return;
  }
  temp_file hex(".txt");
  // "%s.%f": seconds since the epoch (independent of the local time zone) and a fraction.
  REQUIRE(write_text(hex.path(),
                     "1700000000.250000\n"
                     "0000  ff ff ff ff ff ff 02 00 00 00 00 01 08 06 00 01\n"
                     "0010  08 00 06 04 00 01\n"
                     "1700000001.000001\n"
                     "0000  01 02 03 04 05 06 07 08 09 0a 0b 0c 88 b5 de ad\n"));
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
    const std::string cmd = std::string("text2pcap -q -t '%s.%f' ") + var.options + " " +
                            quoted(hex.str()) + " " + quoted(out.str()) + " >/dev/null 2>&1";
    REQUIRE(std::system(cmd.c_str()) == 0);
    auto r = open_ok(out.str());
    CHECK(r->link() == var.link);
    packet p;
    REQUIRE(r->next(p) == status::packet);
    CHECK(p.number == 1);
    CHECK(p.ts_ns == 1700000000 * s_ns + 250000000);
    CHECK(p.len == first.size());
    CHECK(bytes_of(p.data) == first);
    REQUIRE(r->next(p) == status::packet);
    CHECK(p.number == 2);
    CHECK(p.ts_ns == 1700000001 * s_ns + 1000);
    CHECK(bytes_of(p.data) == second);
    CHECK(r->next(p) == status::end);
  }
}

// For each file Wireshark's tools make from a nanosecond capture (pcapng by editcap, a
// microsecond pcap, a merge with a cooked capture of another link type), the reader gives the
// packets tshark gives: as many, with the same times (to the nanosecond), interfaces and
// lengths.
TEST_CASE("pcap: the reader reads what tshark reads, files of editcap, mergecap, text2pcap") {
  for (const char* tool : {"tshark", "editcap", "mergecap", "text2pcap"}) {
    if (!have(tool)) {
      MESSAGE("skipped: " << tool << " (Wireshark) is not on PATH");
      return;
    }
  }
  temp_file ns(".pcap"), ng(".pcapng"), us(".pcap"), hex(".txt"), sll(".pcap"), merged(".pcapng");
  {
    std::string err;
    auto w = writer::create(ns.str(), link_type::ethernet, 65535, err);
    REQUIRE(w.has_value());
    for (std::uint64_t i = 0; i < 5; ++i)
      CHECK(w->write(ramp(60 + i, static_cast<std::uint8_t>(i), 3),
                     1700000000 * s_ns + i * 1234567 + i));
    CHECK(w->close());
  }
  REQUIRE(write_text(hex.path(),
                     "1700000000.000100\n0000  00 04 00 01 00 06 02 00 00 00 00 01 00 00 "
                     "88 b5 de ad\n"
                     "1700000000.003000\n0000  00 00 00 01 00 06 02 00 00 00 00 02 00 00 "
                     "08 00 45 00\n"));
  const auto sh = [](const std::string& cmd) {
    INFO(cmd);
    REQUIRE(std::system((cmd + " >/dev/null 2>&1").c_str()) == 0);
  };
  sh("editcap -F pcapng " + quoted(ns.str()) + " " + quoted(ng.str()));
  sh("editcap -F pcap " + quoted(ns.str()) + " " + quoted(us.str()));
  sh("text2pcap -q -F pcap -l 113 -t '%s.%f' " + quoted(hex.str()) + " " + quoted(sll.str()));
  sh("mergecap -F pcapng -w " + quoted(merged.str()) + " " + quoted(ns.str()) + " " +
     quoted(sll.str()));

  struct expect {
    const temp_file* file;
    std::size_t packets;
    std::uint8_t digits;
  };
  for (const expect& e : {expect{&ns, 5, 9}, expect{&ng, 5, 9}, expect{&us, 5, 6},
                          expect{&sll, 2, 6}, expect{&merged, 7, 9}}) {
    CAPTURE(e.file->str());
    std::istringstream lines(output_of(
        "tshark -n -r " + quoted(e.file->str()) +
        " -T fields -e frame.time_epoch -e frame.interface_id -e frame.cap_len -e frame.len "
        "2>/dev/null"));
    auto r = open_ok(e.file->str());
    packet p;
    std::string line;
    std::size_t n = 0;
    while (std::getline(lines, line)) {
      CAPTURE(line);
      REQUIRE(r->next(p) == status::packet);
      ++n;
      // Tab-separated; a pcap file has no interface id (an empty field).
      std::vector<std::string> f;
      for (std::size_t at = 0;;) {
        const std::size_t tab = line.find('\t', at);
        f.push_back(line.substr(at, tab - at));
        if (tab == std::string::npos) break;
        at = tab + 1;
      }
      REQUIRE(f.size() == 4);
      const std::string& epoch = f[0];
      const std::uint32_t iface = f[1].empty() ? 0 : static_cast<std::uint32_t>(std::stoul(f[1]));
      const auto caplen = static_cast<std::uint32_t>(std::stoul(f[2]));
      const auto len = static_cast<std::uint32_t>(std::stoul(f[3]));
      // tshark prints seconds and nine digits.
      const auto dot = epoch.find('.');
      REQUIRE(dot != std::string::npos);
      const std::uint64_t t =
          std::stoull(epoch.substr(0, dot)) * s_ns + std::stoull(epoch.substr(dot + 1));
      CHECK(p.ts_ns == t);
      CHECK(p.interface == iface);
      CHECK(p.caplen == caplen);
      CHECK(p.len == len);
      CHECK(p.precision <= e.digits);
    }
    CHECK(n == e.packets);
    CHECK(r->next(p) == status::end);
  }
  // The merged file's interfaces keep their link types: Ethernet and Linux cooked (113).
  auto r = open_ok(merged.str());
  packet p;
  std::vector<std::uint32_t> links;
  while (r->next(p) == status::packet) links.push_back(p.link);
  CHECK(links == std::vector<std::uint32_t>{1, 113, 1, 1, 113, 1, 1});
}

// ---- pcapng, written ---------------------------------------------------------------------------

static_assert(!std::is_copy_constructible_v<pcapng_writer> &&
              std::is_nothrow_move_constructible_v<pcapng_writer>);

TEST_CASE("pcapng: the writer's bytes, written by hand from the specification") {
  temp_file tmp(".pcapng");
  {
    std::string err;
    const std::array<pcapng_writer::interface, 1> ifs{{{link_type::ethernet, "p0"}}};
    auto w = pcapng_writer::create(tmp.str(), ifs, 65535, err);
    INFO(err);
    REQUIRE(w.has_value());
    CHECK(w->write(0, byte_vector{1, 2, 3}, 0x0000000100000002ull, 5));
    CHECK(w->close());
  }
  const byte_vector want{
      // Section Header Block (4.1): type, length 28, byte-order magic, version 1.0, section
      // length -1 (not given), length again.
      0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 0x4d, 0x3c, 0x2b, 0x1a, 1, 0, 0, 0,  //
      0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 28, 0, 0, 0,              //
      // Interface Description Block (4.2): type 1, length 40, LinkType 1, reserved, SnapLen
      // 65535; if_name "p0" (code 2, padded to 4), if_tsresol 9 (code 9: nanoseconds),
      // opt_endofopt; length again.
      1, 0, 0, 0, 40, 0, 0, 0, 1, 0, 0, 0, 0xff, 0xff, 0, 0,  //
      2, 0, 2, 0, 'p', '0', 0, 0, 9, 0, 1, 0, 9, 0, 0, 0, 0, 0, 0, 0, 40, 0, 0, 0,
      // Enhanced Packet Block (4.3): type 6, length 36, interface 0, the time stamp's upper and
      // lower words, captured 3, original 5, the data padded to 4, length again.
      6, 0, 0, 0, 36, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 5, 0, 0, 0,  //
      1, 2, 3, 0, 36, 0, 0, 0};
  CHECK(file_bytes(tmp.path()) == want);
}

TEST_CASE("pcapng: frames on several interfaces read back, by this reader and by tshark") {
  temp_file tmp(".pcapng");
  const std::array<pcapng_writer::interface, 3> ifs{
      {{link_type::ethernet, "port0"}, {link_type::ethernet, "port1"}, {link_type::afh2, ""}}};
  struct sent {
    std::uint32_t interface;
    byte_vector data;
    std::uint64_t ts_ns;
    std::uint32_t wire_len;
  };
  const std::array<sent, 4> frames{{{1, ramp(60, 1, 7), 1700000000 * s_ns + 1, 0},
                                    {0, ramp(61, 2, 7), 1700000000 * s_ns + 999999999, 0},
                                    {2, ramp(30, 3, 7), 1700000001 * s_ns + 42, 100},
                                    {1, ramp(1514, 4, 7), 4300000000 * s_ns, 0}}};
  {
    std::string err;
    auto w = pcapng_writer::create(tmp.str(), ifs, 65535, err);
    INFO(err);
    REQUIRE(w.has_value());
    for (const sent& f : frames) CHECK(w->write(f.interface, f.data, f.ts_ns, f.wire_len));
    CHECK(w->count() == frames.size());
    CHECK(w->close());
  }
  auto r = open_ok(tmp.str());
  packet p;
  for (std::size_t i = 0; i < frames.size(); ++i) {
    CAPTURE(i);
    REQUIRE(r->next(p) == status::packet);
    CHECK(p.interface == frames[i].interface);
    CHECK(p.link == static_cast<std::uint32_t>(ifs[frames[i].interface].link));
    CHECK(p.ts_ns == frames[i].ts_ns);
    CHECK(p.precision == 9);
    CHECK(p.caplen == frames[i].data.size());
    CHECK(p.len == std::max<std::size_t>(frames[i].wire_len, frames[i].data.size()));
    CHECK(bytes_of(p.data) == frames[i].data);
  }
  CHECK(r->next(p) == status::end);
  CHECK(r->error().empty());

  if (!have("tshark")) {
    MESSAGE("skipped: tshark (Wireshark) is not on PATH");
    return;
  }
  const std::string out =
      output_of("tshark -r " + quoted(tmp.str()) +
                " -T fields -e frame.interface_id -e frame.interface_name -e frame.time_epoch"
                " -e frame.len -e frame.cap_len 2>/dev/null");
  CHECK(out ==
        "1\tport1\t1700000000.000000001\t60\t60\n"
        "0\tport0\t1700000000.999999999\t61\t61\n"
        "2\tunknown\t1700000001.000000042\t100\t30\n"  // tshark names a nameless one
        "1\tport1\t4300000000.000000000\t1514\t1514\n");
}

TEST_CASE("pcapng: the writer refuses what it cannot write, and stays usable") {
  temp_file tmp(".pcapng");
  std::string err;
  const std::array<pcapng_writer::interface, 2> ifs{{{}, {}}};
  CHECK_FALSE(pcapng_writer::create(tmp.str(), ifs, 0, err).has_value());
  CHECK(contains(err, "snaplen 0"));
  // Interfaces described as they come: none at first, two later.
  auto w = pcapng_writer::create(tmp.str(), std::span<const pcapng_writer::interface>(), 100, err);
  REQUIRE(w.has_value());
  CHECK_FALSE(w->write(0, ramp(10, 0, 7), 1));
  CHECK(contains(w->error(), "interface 0 of 0"));
  CHECK(w->add_interface(ifs[0]));
  CHECK(w->add_interface(ifs[1]));
  CHECK(w->interfaces() == 2);
  CHECK_FALSE(w->write(2, ramp(10, 0, 7), 1));
  CHECK(contains(w->error(), "interface 2 of 2"));
  CHECK_FALSE(w->write(0, ramp(101, 0, 7), 1));
  CHECK(contains(w->error(), "longer than the snaplen of 100"));
  CHECK(w->write(1, ramp(100, 0, 7), 2));
  pcapng_writer moved = std::move(*w);
  w.reset();  // the moved-from writer must not close the file under `moved`
  CHECK(moved.write(0, ramp(10, 0, 7), 3));
  // An interface described after frames of others, on another link type.
  CHECK(moved.add_interface({link_type::afh2, "late"}));
  CHECK(moved.write(2, ramp(12, 0, 7), 4));
  CHECK(moved.close());
  CHECK_FALSE(moved.write(0, ramp(10, 0, 7), 4));
  CHECK(contains(moved.error(), "close"));
  auto r = open_ok(tmp.str());
  packet p;
  REQUIRE(r->next(p) == status::packet);
  CHECK((p.interface == 1 && p.ts_ns == 2 && p.caplen == 100));
  REQUIRE(r->next(p) == status::packet);
  CHECK((p.interface == 0 && p.ts_ns == 3 && p.caplen == 10));
  REQUIRE(r->next(p) == status::packet);
  CHECK((p.interface == 2 && p.ts_ns == 4 && p.caplen == 12 && p.link == 147));
  CHECK(r->interfaces()[2].name == "late");
  CHECK(r->next(p) == status::end);

  const std::string path =
      (fs::temp_directory_path() / "scaleup_pcap_test_no_such_dir" / "out.pcapng").string();
  CHECK_FALSE(pcapng_writer::create(path, ifs, 100, err).has_value());
  CHECK(contains(err, path));
  CHECK(contains(err, "No such file"));
  if (fs::exists("/dev/full")) {
    auto full = pcapng_writer::create("/dev/full", ifs, 65535, err);
    if (full) {  // the headers may wait in the buffer: then the frame or the close fails
      (void)full->write(0, ramp(100, 0, 7), 1);
      CHECK_FALSE(full->close());
      CHECK(contains(full->error(), "No space left"));
    } else {
      CHECK(contains(err, "No space left"));
    }
  }
}
