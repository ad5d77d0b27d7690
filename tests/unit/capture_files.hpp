// Capture files written byte by byte for the reader's tests (namespace scaleup::test): pcap and
// pcapng in either byte order, from the field layouts of draft-ietf-opsawg-pcap and
// draft-ietf-opsawg-pcapng written out here again, independently of the library's tables, so
// that well-formed and damaged files can be made alike. Plus temporary files.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "support.hpp"

namespace scaleup::test {

// Bytes in one byte order.
class ordered_bytes {
 public:
  explicit ordered_bytes(bool big) : big_(big) {}
  void u8(std::uint8_t x) { v_.push_back(x); }
  void u16(std::uint16_t x) { put(x, 2); }
  void u32(std::uint32_t x) { put(x, 4); }
  void u64(std::uint64_t x) { put(x, 8); }
  void raw(const byte_vector& b) { v_.insert(v_.end(), b.begin(), b.end()); }
  void pad4() {
    while (v_.size() % 4) v_.push_back(0);
  }
  bool big() const { return big_; }
  const byte_vector& bytes() const { return v_; }
  std::size_t size() const { return v_.size(); }

 private:
  void put(std::uint64_t x, int n) {
    for (int i = 0; i < n; ++i)
      v_.push_back(static_cast<std::uint8_t>(x >> (8 * (big_ ? n - 1 - i : i))));
  }
  bool big_;
  byte_vector v_;
};

// ---- pcap ----------------------------------------------------------------------------------

inline constexpr std::uint32_t pcap_usec_magic = 0xa1b2c3d4;
inline constexpr std::uint32_t pcap_nsec_magic = 0xa1b23c4d;

struct pcap_builder {
  ordered_bytes b;
  explicit pcap_builder(bool big = false, std::uint32_t magic = pcap_usec_magic,
                        std::uint32_t snaplen = 65535, std::uint32_t link = 1,
                        std::uint16_t major = 2, std::uint16_t minor = 4)
      : b(big) {
    b.u32(magic);
    b.u16(major);
    b.u16(minor);
    b.u32(0);  // thiszone
    b.u32(0);  // sigfigs
    b.u32(snaplen);
    b.u32(link);
  }
  pcap_builder& record(std::uint32_t sec, std::uint32_t frac, std::uint32_t caplen,
                       std::uint32_t len, const byte_vector& data) {
    b.u32(sec);
    b.u32(frac);
    b.u32(caplen);
    b.u32(len);
    b.raw(data);
    return *this;
  }
  pcap_builder& record(std::uint32_t sec, std::uint32_t frac, const byte_vector& data) {
    return record(sec, frac, static_cast<std::uint32_t>(data.size()),
                  static_cast<std::uint32_t>(data.size()), data);
  }
  const byte_vector& bytes() const { return b.bytes(); }
};

// ---- pcapng --------------------------------------------------------------------------------

struct ng_option {
  std::uint16_t code;
  byte_vector value;
};

// One or more sections; each block is written in the builder's current byte order.
class pcapng_builder {
 public:
  explicit pcapng_builder(bool big = false) : big_(big) {}

  // Starts a section in byte order `big` (options none; section length unknown).
  pcapng_builder& shb(bool big, std::uint16_t major = 1, std::uint16_t minor = 0) {
    big_ = big;
    ordered_bytes body(big_);
    body.u32(0x1a2b3c4d);
    body.u16(major);
    body.u16(minor);
    body.u64(~std::uint64_t{0});  // -1: not given
    return block(0x0a0d0d0a, body.bytes());
  }
  pcapng_builder& idb(std::uint16_t link, std::uint32_t snaplen = 0,
                      const std::vector<ng_option>& options = {}) {
    ordered_bytes body(big_);
    body.u16(link);
    body.u16(0);
    body.u32(snaplen);
    put_options(body, options);
    return block(1, body.bytes());
  }
  pcapng_builder& epb(std::uint32_t iface, std::uint64_t ts, const byte_vector& data,
                      std::uint32_t orig = 0, const std::vector<ng_option>& options = {}) {
    ordered_bytes body(big_);
    body.u32(iface);
    body.u32(static_cast<std::uint32_t>(ts >> 32));
    body.u32(static_cast<std::uint32_t>(ts));
    body.u32(static_cast<std::uint32_t>(data.size()));
    body.u32(orig ? orig : static_cast<std::uint32_t>(data.size()));
    body.raw(data);
    body.pad4();
    put_options(body, options);
    return block(6, body.bytes());
  }
  pcapng_builder& spb(std::uint32_t orig, const byte_vector& data) {
    ordered_bytes body(big_);
    body.u32(orig);
    body.raw(data);
    return block(3, body.bytes());
  }
  pcapng_builder& pb(std::uint16_t iface, std::uint64_t ts, const byte_vector& data,
                     std::uint32_t orig = 0) {
    ordered_bytes body(big_);
    body.u16(iface);
    body.u16(0);  // drops
    body.u32(static_cast<std::uint32_t>(ts >> 32));
    body.u32(static_cast<std::uint32_t>(ts));
    body.u32(static_cast<std::uint32_t>(data.size()));
    body.u32(orig ? orig : static_cast<std::uint32_t>(data.size()));
    body.raw(data);
    return block(2, body.bytes());
  }
  // Any block: type, total length, body padded to 32 bits, total length again.
  pcapng_builder& block(std::uint32_t type, const byte_vector& body) {
    ordered_bytes b(big_);
    const auto total = static_cast<std::uint32_t>(12 + (body.size() + 3) / 4 * 4);
    b.u32(type);
    b.u32(total);
    b.raw(body);
    b.pad4();
    b.u32(total);
    out_.insert(out_.end(), b.bytes().begin(), b.bytes().end());
    return *this;
  }
  pcapng_builder& raw(const byte_vector& bytes) {
    out_.insert(out_.end(), bytes.begin(), bytes.end());
    return *this;
  }
  const byte_vector& bytes() const { return out_; }
  byte_vector& bytes() { return out_; }
  bool big() const { return big_; }

  static ng_option u8_option(std::uint16_t code, std::uint8_t v) { return {code, {v}}; }
  ng_option u64_option(std::uint16_t code, std::uint64_t v) const {
    ordered_bytes b(big_);
    b.u64(v);
    return {code, b.bytes()};
  }
  static ng_option text_option(std::uint16_t code, const std::string& s) {
    return {code, byte_vector(s.begin(), s.end())};
  }

 private:
  void put_options(ordered_bytes& body, const std::vector<ng_option>& options) const {
    if (options.empty()) return;
    for (const auto& o : options) {
      body.u16(o.code);
      body.u16(static_cast<std::uint16_t>(o.value.size()));
      body.raw(o.value);
      body.pad4();
    }
    body.u16(0);  // opt_endofopt
    body.u16(0);
  }

  bool big_;
  byte_vector out_;
};

// ---- files ---------------------------------------------------------------------------------

// Unique per process and per call, so parallel test runs do not trample each other's files.
class temp_file {
 public:
  explicit temp_file(const std::string& suffix) {
    static std::atomic<unsigned> counter{0};
    std::random_device rd;
    path_ = std::filesystem::temp_directory_path() / ("scaleup_pcap_test_" + std::to_string(rd()) +
                                                      "_" + std::to_string(counter++) + suffix);
  }
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;
  ~temp_file() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  std::string str() const { return path_.string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline bool write_file(const std::filesystem::path& p, const byte_vector& bytes) {
  std::ofstream f(p, std::ios::binary | std::ios::trunc);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  return f.good();
}

inline bool write_text(const std::filesystem::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::trunc);
  f << text;
  return f.good();
}

}  // namespace scaleup::test
