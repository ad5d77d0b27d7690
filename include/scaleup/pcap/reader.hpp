// Reading capture files as tshark reads them: pcap (microsecond and nanosecond, either byte
// order, and the patched variant) and pcapng (several sections, each in its own byte order;
// several interfaces of different link types; Enhanced, Simple and the obsolete Packet Blocks;
// every other block skipped by its length). Each packet comes with its interface, that
// interface's link type, its time in nanoseconds and the precision the file recorded it with.
//
// Written here rather than taken from libpcap, which refuses pcapng files whose interfaces
// differ in link type and never reads a compressed file, or from Wireshark's libwiretap, which
// would tie the library and the tool to Wireshark's internal libraries and their API of the
// release (docs/wire-format.md, "Capture files"). It needs no library: the bytes come from a
// byte_source, so a caller can put a decompressor underneath.
//
// The reader holds one buffer, filled by large reads from the source and grown only for a
// record larger than it; packets are views into it, valid until the next read. Every length
// in the file is checked against the bytes there before use: damage is an error that names the
// packet or block and its offset, never a read out of bounds. Nothing here throws; the
// allocations are this buffer, the list of interfaces and the messages.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scaleup/pcap/byte_source.hpp"
#include "scaleup/pcap/file_field.hpp"
#include "scaleup/pcap/packet.hpp"
#include "scaleup/pcap/pcap_file.hpp"
#include "scaleup/pcap/pcapng_file.hpp"

namespace scaleup::pcap {

namespace detail {

// AddressSanitizer builds (GCC defines __SANITIZE_ADDRESS__; Clang has the feature test).
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool address_sanitizer = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool address_sanitizer = true;
#else
inline constexpr bool address_sanitizer = false;
#endif
#else
inline constexpr bool address_sanitizer = false;
#endif

// Files that are not captures but hold one, to say so rather than "not a capture".
struct compressed_format {
  std::array<std::uint8_t, 4> magic;
  std::uint8_t size;
  std::string_view name;
};
inline constexpr std::array<compressed_format, 6> compressed_formats{{
    {{0x1f, 0x8b}, 2, "gzip"},
    {{'B', 'Z', 'h'}, 3, "bzip2"},
    {{0xfd, '7', 'z', 'X'}, 4, "xz"},
    {{0x28, 0xb5, 0x2f, 0xfd}, 4, "zstd"},
    {{0x04, 0x22, 0x4d, 0x18}, 4, "lz4"},
    {{'P', 'K', 0x03, 0x04}, 4, "zip"},
}};

inline std::string hex_bytes(std::span<const std::uint8_t> b) {
  std::string s;
  char two[4];
  for (const std::uint8_t x : b) {
    std::snprintf(two, sizeof two, "%02x", x);
    s += (s.empty() ? "" : " ") + std::string(two);
  }
  return s;
}

}  // namespace detail

// A capture interface: one per pcap file, as many as the Interface Description Blocks of a
// pcapng file (counted over all its sections).
struct interface_info {
  std::uint32_t link = 0;
  std::uint32_t snaplen = 0;  // as the file says; in pcapng 0 means no limit
  precision_digits precision = micro_digits;
  pcapng_file::ts_resolution resolution{};
  std::int64_t offset_s = 0;  // pcapng if_tsoffset, added to every time stamp
  std::string name;           // pcapng if_name; empty when not given
};

class reader {
 public:
  enum class status { packet, end, error };
  enum class format : std::uint8_t { pcap, pcapng };

  // How much is asked of the source at a time, once it has shown it holds that much; the
  // buffer starts at first_chunk. Large enough that the reads cost nothing next to the
  // packets, small enough that the fresh memory it touches stays cheap (bench/pcap_read.cpp
  // --reader, CPU time: a 20 000-frame capture 15 ms with 256 KiB, 26 ms with 1 MiB, 18 ms
  // through libpcap; a 1 M-frame one 0.16 s, 0.15 to 0.2 s, 0.43 s).
  static constexpr std::size_t chunk = std::size_t{1} << 18;
  static constexpr std::size_t first_chunk = std::size_t{1} << 16;

  static std::optional<reader> open(const std::string& path, std::string& error_message) {
    std::string why;
    auto source = file_source::open(path, why);
    if (!source) {
      error_message = path + ": " + why;
      return std::nullopt;
    }
    return open(std::move(source), path, error_message);
  }

  // Reads from `source`; `name` starts every message (a path, usually).
  static std::optional<reader> open(std::unique_ptr<byte_source> source, std::string name,
                                    std::string& error_message) {
    reader r(std::move(source), std::move(name));
    if (!r.start()) {
      error_message = std::move(r.error_);
      return std::nullopt;
    }
    return r;
  }

  reader(reader&&) noexcept = default;
  reader& operator=(reader&&) noexcept = default;
  reader(const reader&) = delete;
  reader& operator=(const reader&) = delete;
  ~reader() = default;

  format file_format() const noexcept { return format_; }
  // The first interface's link type and snapshot length (a pcap file has one interface); 0
  // for a pcapng file that describes no interface before its end. Packets carry their own.
  std::uint32_t link() const noexcept { return ifaces_.empty() ? 0 : ifaces_.front().link; }
  std::uint32_t snaplen() const noexcept { return ifaces_.empty() ? 0 : ifaces_.front().snaplen; }
  // The interfaces described so far, indexed by packet::interface.
  std::span<const interface_info> interfaces() const noexcept { return ifaces_; }

  // After end or error, keeps returning the same status.
  status next(packet& out) {
    if (state_ != status::packet) return state_;
    const step s = format_ == format::pcap ? pcap_record(out) : pcapng_packet(out);
    if (s == step::packet) return status::packet;
    state_ = s == step::end ? status::end : status::error;
    out = packet{};
    return state_;
  }

  const std::string& error() const noexcept { return error_; }

 private:
  enum class step { packet, more, held, end, error };

  reader(std::unique_ptr<byte_source> source, std::string name)
      : src_(std::move(source)), name_(std::move(name)) {}

  // ---- the buffer ----------------------------------------------------------------------------

  const std::uint8_t* here() const noexcept { return buf_.get() + pos_; }
  std::size_t available() const noexcept { return end_ - pos_; }
  std::uint64_t offset() const noexcept { return base_ + pos_; }  // of here() in the file

  // Makes n bytes available from here(); false if the data ends or fails first. May move
  // the bytes (pointers into the buffer must be taken again).
  bool need(std::size_t n) { return available() >= n || fill(n); }

  bool fill(std::size_t n) {
    if (pos_ > 0) {
      std::memmove(buf_.get(), buf_.get() + pos_, end_ - pos_);
      base_ += pos_;
      end_ -= pos_;
      pos_ = 0;
    }
    while (end_ < n) {
      if (ended_) return false;
      // Grown as the data arrives: up to `chunk` while the source keeps filling it (a large
      // file is read 256 KiB at a time, a small one never costs that much), beyond that only for
      // a record larger than the buffer, so that a length promising more than the file holds
      // costs no more than the file.
      if (end_ == cap_ || (cap_ < chunk && filled_)) {
        auto bigger = std::make_unique_for_overwrite<std::uint8_t[]>(cap_ * 2);
        std::memcpy(bigger.get(), buf_.get(), end_);
        buf_ = std::move(bigger);
        cap_ *= 2;
      }
      const std::size_t want = cap_ - end_;
      const std::size_t got = src_->read(std::span<std::uint8_t>(buf_.get() + end_, want));
      end_ += got;
      filled_ = got == want;
      // A pipe gives what has arrived: only nothing at all is the end.
      if (got == 0) ended_ = true;
    }
    return true;
  }

  // ---- messages ------------------------------------------------------------------------------

  step fail(const std::string& where, const std::string& what) {
    error_ = name_ + ": " + where + ": " + what;
    return step::error;
  }

  // Why `n` bytes could not be had: the source's failure, or the end of the data.
  std::string short_of(std::size_t n, std::string_view what) const {
    if (!src_->error().empty()) return src_->error();
    return "truncated: the file ends " + std::to_string(available()) + " bytes into " +
           std::string(what) + " of " + std::to_string(n) + " bytes";
  }

  std::string record_where() const {
    return "packet " + std::to_string(count_ + 1) + " (record at offset " +
           std::to_string(offset()) + ")";
  }

  std::string block_where(std::uint32_t type, bool known) const {
    std::string s = "block at offset " + std::to_string(offset());
    if (known) {
      s += " (" + std::string(pcapng_file::name_of(type));
      const auto b = static_cast<pcapng_file::block>(type);
      if (b == pcapng_file::block::enhanced_packet || b == pcapng_file::block::simple_packet ||
          b == pcapng_file::block::packet)
        s += ", packet " + std::to_string(count_ + 1);
      s += ")";
    }
    return s;
  }

  // ---- opening -------------------------------------------------------------------------------

  bool start() {
    buf_ = std::make_unique_for_overwrite<std::uint8_t[]>(first_chunk);
    cap_ = first_chunk;
    if (!need(4)) {
      if (!src_->error().empty())
        error_ = name_ + ": " + src_->error();
      else if (available() == 0)
        error_ = name_ + ": not a pcap or pcapng capture (empty file)";
      else
        error_ =
            name_ + ": not a pcap or pcapng capture (" + std::to_string(available()) + " bytes)";
      return false;
    }
    if (const auto v = pcap_file::recognise(here())) return start_pcap(*v);
    if (load32(here(), pcapng_file::block_type, byte_order::little) ==
        static_cast<std::uint32_t>(pcapng_file::block::section_header))
      return start_pcapng();
    for (const auto& c : detail::compressed_formats) {
      if (std::equal(c.magic.begin(), c.magic.begin() + c.size, here())) {
        error_ = name_ + ": a " + std::string(c.name) +
                 "-compressed file, not a capture; decompress it first" +
                 (c.name == "gzip" ? " (scaleup dump and stats read gzip themselves)" : "");
        return false;
      }
    }
    error_ = name_ + ": not a pcap or pcapng capture (it begins " +
             detail::hex_bytes(std::span(here(), 4)) + ")";
    return false;
  }

  bool start_pcap(const pcap_file::recognised& v) {
    format_ = format::pcap;
    order_ = v.order;
    variant_ = v.kind;
    const std::string what = std::string(v.kind.name) + " file header";
    if (!need(pcap_file::header_size)) {
      error_ = name_ + ": " + what + " damaged: " + short_of(pcap_file::header_size, "it");
      return false;
    }
    const auto major = static_cast<std::uint16_t>(load(here(), pcap_file::major_version, order_));
    const auto minor = static_cast<std::uint16_t>(load(here(), pcap_file::minor_version, order_));
    if (major < 2) {
      error_ = name_ + ": " + what + ": version " + std::to_string(major) + "." +
               std::to_string(minor) + " is not supported (2.0 and later are)";
      return false;
    }
    lengths_ = pcap_file::length_order_of(major, minor);
    interface_info i;
    i.link = load32(here(), pcap_file::link_type, order_) & pcap_file::link_type_mask;
    i.snaplen = load32(here(), pcap_file::snaplen, order_);
    i.precision = v.kind.precision;
    ifaces_.push_back(std::move(i));
    pos_ += pcap_file::header_size;
    return true;
  }

  // Reads up to the first interface (or the first packet block, or the end), so that link()
  // and snaplen() mean what they do for a pcap file.
  bool start_pcapng() {
    format_ = format::pcapng;
    packet unused;
    for (;;) {
      const step s = pcapng_block(unused, true);
      if (s == step::error) return false;
      if (s != step::more || !ifaces_.empty()) return true;
    }
  }

  // ---- delivering a packet -------------------------------------------------------------------

  void deliver(packet& out, std::uint32_t interface, std::uint64_t ts_ns, std::uint32_t caplen,
               std::uint32_t len, const std::uint8_t* data) {
    const interface_info& i = ifaces_[interface];
    out.number = ++count_;
    out.ts_ns = ts_ns;
    out.precision = i.precision;
    out.link = i.link;
    out.interface = interface;
    out.caplen = caplen;
    out.len = len;
    if constexpr (detail::address_sanitizer) {
      // A copy of exactly caplen bytes: in the buffer, a read past the packet's end would land
      // in the next record, where AddressSanitizer cannot see it.
      copy_ = std::make_unique<std::uint8_t[]>(caplen);
      std::copy_n(data, caplen, copy_.get());
      data = copy_.get();
    }
    out.data = std::span<const std::uint8_t>(data, caplen);
  }

  // ---- pcap ----------------------------------------------------------------------------------

  step pcap_record(packet& out) {
    const std::size_t header = variant_.record_size;
    if (!need(header)) {
      if (available() == 0 && src_->error().empty()) return step::end;
      return fail(record_where(), short_of(header, "the record header"));
    }
    std::uint32_t caplen = load32(here(), pcap_file::captured_length, order_);
    std::uint32_t len = load32(here(), pcap_file::original_length, order_);
    if (lengths_ == pcap_file::length_order::swapped ||
        (lengths_ == pcap_file::length_order::maybe_swapped && caplen > len))
      std::swap(caplen, len);
    if (caplen > max_record)
      return fail(record_where(), "captured length " + std::to_string(caplen) +
                                      " is absurd (the reader's limit is " +
                                      std::to_string(max_record) + " bytes)");
    if (!need(header + caplen)) {
      if (!src_->error().empty()) return fail(record_where(), src_->error());
      return fail(record_where(), "truncated: the record holds " + std::to_string(caplen) +
                                      " captured bytes, the file ends after " +
                                      std::to_string(available() - header) + " of them");
    }
    const std::uint8_t* h = here();
    deliver(out, 0,
            pcap_file::time_ns(load32(h, pcap_file::ts_seconds, order_),
                               load32(h, pcap_file::ts_fraction, order_), variant_.precision),
            caplen, len, h + header);
    pos_ += header + caplen;
    return step::packet;
  }

  // ---- pcapng --------------------------------------------------------------------------------

  step pcapng_packet(packet& out) {
    for (;;) {
      const step s = pcapng_block(out, false);
      if (s != step::more) return s;
    }
  }

  // One block: a packet (delivered, or with `hold` left unread), anything else consumed.
  step pcapng_block(packet& out, bool hold) {
    using namespace pcapng_file;
    if (!need(block_header_size)) {
      if (available() == 0 && src_->error().empty()) return step::end;
      return fail(block_where(0, false), short_of(block_header_size, "a block header"));
    }
    const std::uint32_t type_le = load32(here(), block_type, byte_order::little);
    const bool shb = type_le == static_cast<std::uint32_t>(block::section_header);
    byte_order o = order_;
    if (shb) {
      // A new section may change the byte order: its magic says which.
      if (!need(block_header_size + byte_order_magic.size))
        return fail(block_where(type_le, true),
                    short_of(block_header_size + byte_order_magic.size, "the block"));
      if (load32(here(), byte_order_magic, byte_order::little) == byte_order_value) {
        o = byte_order::little;
      } else if (load32(here(), byte_order_magic, byte_order::big) == byte_order_value) {
        o = byte_order::big;
      } else {
        return fail(block_where(type_le, true),
                    "byte-order magic " +
                        detail::hex_bytes(std::span(here() + byte_order_magic.offset, 4)) +
                        " is not 1a 2b 3c 4d in either byte order: not a pcapng section");
      }
    }
    const std::uint32_t type = load32(here(), block_type, o);
    const std::uint32_t length = load32(here(), block_total_length, o);
    // Built only for an error: a string per packet cost a tenth of reading a pcapng file.
    const auto where = [&] { return block_where(type, true); };
    if (length < min_block_size || length % 4 != 0)
      return fail(where(), "block length " + std::to_string(length) +
                               (length < min_block_size ? " is below the minimum of 12"
                                                        : " is not a multiple of 4") +
                               " (damaged block length)");
    if (length > max_block_size)
      return fail(where(), "block length " + std::to_string(length) +
                               " is absurd (the reader's limit is " +
                               std::to_string(max_block_size) + " bytes)");
    if (!need(length)) return fail(where(), short_of(length, "the block"));
    const std::uint8_t* b = here();
    const std::uint32_t trailing =
        load32(b + length - block_trailer_size, trailing_total_length, o);
    if (trailing != length)
      return fail(where(), "block length " + std::to_string(length) + " at its start, " +
                               std::to_string(trailing) + " at its end (damaged block length)");
    const auto too_short = [&](std::size_t fixed) {
      return fail(where(), "block length " + std::to_string(length) +
                               " is too short for the block's fixed fields (" +
                               std::to_string(fixed + block_trailer_size) + " bytes)");
    };
    const std::size_t body_end = length - block_trailer_size;

    switch (static_cast<block>(type)) {
      case block::section_header: {
        if (body_end < section_header_size) return too_short(section_header_size);
        const auto major = static_cast<std::uint16_t>(load(b, major_version, o));
        if (major != supported_major)
          return fail(where(), "pcapng version " + std::to_string(major) + "." +
                                   std::to_string(load(b, minor_version, o)) +
                                   " is not supported (1.x is)");
        order_ = o;
        section_base_ = ifaces_.size();
        break;
      }
      case block::interface_description: {
        if (body_end < interface_description_size) return too_short(interface_description_size);
        interface_info i;
        i.link = load32(b, idb_link_type, o);
        i.snaplen = load32(b, idb_snaplen, o);
        std::size_t at = interface_description_size;
        while (at + option_header_size <= body_end) {
          const auto code = static_cast<std::uint16_t>(load(b + at, option_code, o));
          const auto size = static_cast<std::uint16_t>(load(b + at, option_length, o));
          if (code == opt_endofopt) break;
          const std::uint8_t* value = b + at + option_header_size;
          if (at + option_header_size + size > body_end)
            return fail(where(), "option " + std::to_string(code) + " of " + std::to_string(size) +
                                     " bytes runs past the end of the block");
          if (code == if_name) {
            i.name.assign(value, value + size);
          } else if (code == if_tsresol && size == if_tsresol_value.size) {
            // Units too fine to count in 64 bits: tshark keeps microseconds; so does this.
            if (const auto r =
                    resolution_of(static_cast<std::uint8_t>(load(value, if_tsresol_value, o))))
              i.resolution = *r;
          } else if (code == if_tsoffset && size == if_tsoffset_value.size) {
            i.offset_s = static_cast<std::int64_t>(load(value, if_tsoffset_value, o));
          }
          at += option_header_size + padded(size);
        }
        i.precision = digits_of(i.resolution);
        ifaces_.push_back(std::move(i));
        break;
      }
      case block::enhanced_packet:
      case block::packet: {
        if (hold) return step::held;
        const bool enhanced = static_cast<block>(type) == block::enhanced_packet;
        const std::size_t fixed = enhanced ? enhanced_packet_size : packet_size;
        if (body_end < fixed) return too_short(fixed);
        const std::uint32_t id =
            enhanced ? load32(b, epb_interface_id, o) : load32(b, pb_interface_id, o);
        if (id >= ifaces_.size() - section_base_)
          return fail(where(), "interface " + std::to_string(id) + " has not been described (the " +
                                   "section has " + std::to_string(ifaces_.size() - section_base_) +
                                   " interface description blocks before it)");
        const std::uint32_t caplen =
            load32(b, enhanced ? epb_captured_length : pb_captured_length, o);
        const std::uint32_t len = load32(b, enhanced ? epb_original_length : pb_original_length, o);
        if (caplen > body_end - fixed)
          return fail(where(), "captured length " + std::to_string(caplen) +
                                   " does not fit in the block of " + std::to_string(length) +
                                   " bytes");
        const std::uint64_t units =
            std::uint64_t{load32(b, enhanced ? epb_ts_upper : pb_ts_upper, o)} << 32 |
            load32(b, enhanced ? epb_ts_lower : pb_ts_lower, o);
        const interface_info& i = ifaces_[section_base_ + id];
        deliver(out, static_cast<std::uint32_t>(section_base_ + id),
                time_ns(units, i.resolution, i.offset_s), caplen, len, b + fixed);
        pos_ += length;
        return step::packet;
      }
      case block::simple_packet: {
        if (hold) return step::held;
        if (body_end < simple_packet_size) return too_short(simple_packet_size);
        if (ifaces_.size() == section_base_)
          return fail(where(),
                      "interface 0 has not been described (a simple packet block "
                      "belongs to the section's first interface)");
        const interface_info& i = ifaces_[section_base_];
        const std::uint32_t len = load32(b, spb_original_length, o);
        // The captured length is not in the block: it is the original length, cut to the
        // interface's snapshot length if it has one (4.4).
        const std::uint32_t caplen = i.snaplen != 0 ? std::min(len, i.snaplen) : len;
        if (caplen > body_end - simple_packet_size)
          return fail(where(), "original length " + std::to_string(len) + " (captured " +
                                   std::to_string(caplen) + ") does not fit in the block of " +
                                   std::to_string(length) + " bytes");
        // No time stamp either: 0, as tshark shows it.
        deliver(out, static_cast<std::uint32_t>(section_base_), 0, caplen, len,
                b + simple_packet_size);
        pos_ += length;
        return step::packet;
      }
      default:
        break;  // name resolution, statistics, secrets, custom, ...: not needed to read packets
    }
    pos_ += length;
    return step::more;
  }

  std::unique_ptr<byte_source> src_;
  std::string name_;
  std::string error_;
  std::unique_ptr<std::uint8_t[]> buf_;
  std::size_t cap_ = 0;
  std::size_t pos_ = 0;     // where the next record or block starts
  std::size_t end_ = 0;     // end of the bytes read
  std::uint64_t base_ = 0;  // file offset of buf_[0]
  bool ended_ = false;      // the source has nothing more
  bool filled_ = false;     // the last read filled all it asked for
  format format_ = format::pcap;
  byte_order order_ = byte_order::little;
  pcap_file::variant variant_{};
  pcap_file::length_order lengths_ = pcap_file::length_order::as_specified;
  std::vector<interface_info> ifaces_;
  std::size_t section_base_ = 0;  // index in ifaces_ of the current section's interface 0
  std::uint64_t count_ = 0;
  status state_ = status::packet;
  std::unique_ptr<std::uint8_t[]> copy_;  // the current packet, in AddressSanitizer builds
};

}  // namespace scaleup::pcap
