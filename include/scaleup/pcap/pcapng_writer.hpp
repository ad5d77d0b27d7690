// Writing pcapng files (draft-ietf-opsawg-pcapng), for captures of several interfaces in one
// file: a frame names the interface it crossed, which a classic pcap record cannot (a fabric's
// planes, each a port of every SUE instance). One section in little-endian order: its Section
// Header Block, an Interface Description Block per interface (link type, snapshot length, name,
// nanosecond time stamps), then an Enhanced Packet Block per frame. Every offset comes from
// pcapng_file.hpp's tables, which the reader uses too. Nothing here throws; failures come back
// as std::nullopt or false with a message meant to be shown to a person as it is.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "scaleup/pcap/byte_source.hpp"
#include "scaleup/pcap/file_field.hpp"
#include "scaleup/pcap/packet.hpp"
#include "scaleup/pcap/pcapng_file.hpp"
#include "scaleup/pcap/writer.hpp"  // detail::file_ptr

namespace scaleup::pcap {

class pcapng_writer {
 public:
  struct interface {
    link_type link = link_type::ethernet;
    std::string name;  // if_name; empty: none
  };

  // `interfaces`: their ids are their places in the list (add_interface describes more later).
  // `snaplen` applies to each.
  static std::optional<pcapng_writer> create(const std::string& path,
                                             std::span<const interface> interfaces,
                                             std::uint32_t snaplen, std::string& error_message) {
    if (snaplen == 0 || snaplen > max_snaplen) {
      error_message = path + ": snaplen " + std::to_string(snaplen) + " is outside 1.." +
                      std::to_string(max_snaplen);
      return std::nullopt;
    }
    errno = 0;
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) {
      error_message = path + ": " + detail::errno_message(errno);
      return std::nullopt;
    }
    pcapng_writer w(f, path, snaplen, interfaces.size());
    w.section_header();
    for (const interface& i : interfaces) w.interface_description(i, snaplen);
    if (!w.put_blocks()) {
      error_message = w.error_;
      return std::nullopt;
    }
    return w;
  }

  // Moved from, a writer is closed (its file is the new one's). Not assigned: a writer
  // replaced would close its file without a word of a failure.
  pcapng_writer(pcapng_writer&&) noexcept = default;
  pcapng_writer& operator=(pcapng_writer&&) = delete;
  pcapng_writer(const pcapng_writer&) = delete;
  pcapng_writer& operator=(const pcapng_writer&) = delete;
  ~pcapng_writer() { close(); }

  // Writes `frame` (all of it captured) as crossing `interface` at ts_ns nanoseconds since the
  // epoch, `wire_len` its length on the wire when longer (0: the frame's). A refused frame (an
  // interface not described, longer than the snapshot length) writes nothing and leaves the
  // writer usable; an I/O failure is final.
  bool write(std::uint32_t interface, std::span<const std::uint8_t> frame, std::uint64_t ts_ns,
             std::uint32_t wire_len = 0) {
    if (!file_) {
      if (!failed_) error_ = path_ + ": write after close";
      return false;
    }
    if (failed_) return false;
    const auto where = [this] { return path_ + ": packet " + std::to_string(count_ + 1) + ": "; };
    if (interface >= interfaces_) {
      error_ = where() + "interface " + std::to_string(interface) + " of " +
               std::to_string(interfaces_) + " described; not written";
      return false;
    }
    if (frame.size() > snaplen_) {
      error_ = where() + "frame of " + std::to_string(frame.size()) +
               " bytes is longer than the snaplen of " + std::to_string(snaplen_) + "; not written";
      return false;
    }
    namespace f = pcapng_file;
    std::uint8_t* b = begin_block(f::block::enhanced_packet, f::enhanced_packet_size);
    store(b, f::epb_interface_id, interface);
    store(b, f::epb_ts_upper, static_cast<std::uint32_t>(ts_ns >> 32));
    store(b, f::epb_ts_lower, static_cast<std::uint32_t>(ts_ns));
    store(b, f::epb_captured_length, static_cast<std::uint32_t>(frame.size()));
    store(b, f::epb_original_length,
          wire_len > frame.size() ? wire_len : static_cast<std::uint32_t>(frame.size()));
    append_padded(frame);
    end_block();
    if (!put_blocks()) return false;
    ++count_;
    return true;
  }

  // Describes one more interface, its id the next (a section's interfaces may be described
  // anywhere before its first frame); false on failure, which is final.
  bool add_interface(const interface& i) {
    if (!file_ || failed_) return false;
    interface_description(i, snaplen_);
    if (!put_blocks()) return false;
    ++interfaces_;
    return true;
  }
  std::uint32_t interfaces() const noexcept { return interfaces_; }

  // Hands what was written to the file now; false on failure, which is final.
  bool flush() {
    if (!file_ || failed_) return false;
    errno = 0;
    if (std::fflush(file_.get()) != 0) {
      fail(path_ + ": " + detail::errno_message(errno));
      return false;
    }
    return true;
  }

  // Flushes and closes; false if anything written so far may not have reached the file.
  bool close() {
    if (file_) {
      errno = 0;
      if (std::fflush(file_.get()) != 0 || std::ferror(file_.get())) {
        if (!failed_) fail(path_ + ": " + detail::errno_message(errno));
      }
      if (std::fclose(file_.release()) != 0 && !failed_)
        fail(path_ + ": " + detail::errno_message(errno));
    }
    return !failed_;
  }

  const std::string& error() const noexcept { return error_; }
  std::uint64_t count() const noexcept { return count_; }

 private:
  pcapng_writer(std::FILE* f, std::string path, std::uint32_t snaplen, std::size_t interfaces)
      : file_(f),
        path_(std::move(path)),
        snaplen_(snaplen),
        interfaces_(static_cast<std::uint32_t>(interfaces)) {}

  static void store(std::uint8_t* at, const file_field& f, std::uint64_t v) noexcept {
    pcap::store(at, f, byte_order::little, v);
  }

  // A block of `type` with `fixed` bytes before its variable part, zeroed, into block_ (after
  // any blocks already there); its lengths are filled in by end_block.
  std::uint8_t* begin_block(pcapng_file::block type, std::size_t fixed) {
    start_ = block_.size();
    block_.resize(start_ + fixed);
    std::uint8_t* b = block_.data() + start_;
    std::fill(b, b + fixed, std::uint8_t{0});
    store(b, pcapng_file::block_type, static_cast<std::uint32_t>(type));
    return b;
  }
  void append_padded(std::span<const std::uint8_t> bytes) {
    block_.insert(block_.end(), bytes.begin(), bytes.end());
    block_.resize(pcapng_file::padded(block_.size()), 0);
  }
  // An option's length has 16 bits: a longer value (no name read from a file is) is cut there,
  // so that the block stays whole.
  void option(std::uint16_t code, std::span<const std::uint8_t> value) {
    namespace f = pcapng_file;
    value = value.first(std::min<std::size_t>(value.size(), 0xFFFF));
    std::uint8_t h[f::option_header_size];
    store(h, f::option_code, code);
    store(h, f::option_length, static_cast<std::uint16_t>(value.size()));
    block_.insert(block_.end(), h, h + sizeof h);
    append_padded(value);
  }
  // Writes every block held.
  bool put_blocks() {
    errno = 0;
    if (std::fwrite(block_.data(), 1, block_.size(), file_.get()) != block_.size()) {
      fail(path_ + ": " + detail::errno_message(errno));
      return false;
    }
    block_.clear();
    return true;
  }
  // Ends the block begun last: its total length, at both ends.
  void end_block() {
    namespace f = pcapng_file;
    const auto total = static_cast<std::uint32_t>(block_.size() - start_ + f::block_trailer_size);
    block_.resize(block_.size() + f::block_trailer_size);
    store(block_.data() + start_, f::block_total_length, total);
    store(block_.data() + block_.size() - f::block_trailer_size, f::trailing_total_length, total);
  }

  void section_header() {
    namespace f = pcapng_file;
    std::uint8_t* b = begin_block(f::block::section_header, f::section_header_size);
    store(b, f::byte_order_magic, f::byte_order_value);
    store(b, f::major_version, f::supported_major);
    store(b, f::minor_version, 0);
    store(b, f::section_length, std::numeric_limits<std::uint64_t>::max());  // not given
    end_block();
  }
  void interface_description(const interface& i, std::uint32_t snaplen) {
    namespace f = pcapng_file;
    std::uint8_t* b = begin_block(f::block::interface_description, f::interface_description_size);
    store(b, f::idb_link_type, static_cast<std::uint16_t>(i.link));
    store(b, f::idb_snaplen, snaplen);
    if (!i.name.empty()) {
      const std::vector<std::uint8_t> name(i.name.begin(), i.name.end());
      option(f::if_name, name);
    }
    const std::uint8_t nanoseconds[] = {9};
    option(f::if_tsresol, nanoseconds);
    option(f::opt_endofopt, {});
    end_block();
  }

  void fail(std::string message) noexcept {
    failed_ = true;
    error_ = std::move(message);
  }

  detail::file_ptr file_;
  std::string path_;
  std::string error_;
  std::vector<std::uint8_t> block_;  // blocks not yet written
  std::size_t start_ = 0;            // where the block begun last starts in block_
  std::uint32_t snaplen_ = 0;
  std::uint32_t interfaces_ = 0;
  std::uint64_t count_ = 0;
  bool failed_ = false;
};

}  // namespace scaleup::pcap
