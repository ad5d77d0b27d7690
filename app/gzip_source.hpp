// gzip-compressed captures (RFC 1952), as tshark reads them: zlib inflates the stream under
// the library's capture reader, which takes any byte source. In the application layer, not the
// library: include/scaleup may use only the standard library, Boost.Endian and libpcap.
#pragma once

#include <zlib.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "scaleup/pcap/byte_source.hpp"

namespace scaleup::app {

// The magic number of a gzip member (RFC 1952 2.3.1, ID1 ID2).
inline constexpr std::uint8_t gzip_id1 = 0x1f;
inline constexpr std::uint8_t gzip_id2 = 0x8b;

class gzip_source final : public pcap::byte_source {
 public:
  // Decompresses what `compressed` yields. nullptr if zlib cannot be set up (out of memory).
  static std::unique_ptr<gzip_source> over(std::unique_ptr<pcap::byte_source> compressed) {
    std::unique_ptr<gzip_source> g(new gzip_source(std::move(compressed)));
    // 16 + 15: a gzip wrapper (not zlib's own), with the largest window.
    if (inflateInit2(&g->z_, 16 + MAX_WBITS) != Z_OK) return nullptr;
    g->live_ = true;
    return g;
  }

  ~gzip_source() override {
    if (live_) inflateEnd(&z_);
  }

  std::size_t read(std::span<std::uint8_t> out) override {
    z_.next_out = out.data();
    z_.avail_out = static_cast<uInt>(out.size());
    while (z_.avail_out > 0 && !done_ && error_.empty()) {
      if (z_.avail_in == 0 && !refill()) {
        // The data ended inside a member: the file was cut short.
        if (error_.empty() && in_member_)
          error_ =
              "gzip: truncated: the compressed data ends before the end of its stream "
              "(after " +
              std::to_string(z_.total_out + produced_before_) + " bytes of the capture)";
        done_ = true;
        break;
      }
      in_member_ = true;
      const int r = inflate(&z_, Z_NO_FLUSH);
      if (r == Z_STREAM_END) {
        in_member_ = false;
        // Members may follow one another (RFC 1952 2.2: `cat a.gz b.gz`); anything else after
        // the last one is ignored, as gzip and zlib's gzread do.
        if (z_.avail_in == 0 && !refill()) {
          done_ = true;
        } else if (z_.next_in[0] != gzip_id1) {
          done_ = true;
        } else {
          produced_before_ += z_.total_out;
          inflateReset(&z_);
        }
      } else if (r != Z_OK && r != Z_BUF_ERROR) {
        error_ = std::string("gzip: ") + (z_.msg ? z_.msg : "cannot decompress") + " (after " +
                 std::to_string(z_.total_out + produced_before_) + " bytes of the capture)";
      }
    }
    return out.size() - z_.avail_out;
  }

  const std::string& error() const noexcept override { return error_; }

 private:
  explicit gzip_source(std::unique_ptr<pcap::byte_source> compressed)
      : in_(std::move(compressed)), buf_(std::make_unique_for_overwrite<std::uint8_t[]>(size)) {}

  // More compressed bytes; false at their end (or on a failure, which becomes ours).
  bool refill() {
    const std::size_t got = in_->read(std::span<std::uint8_t>(buf_.get(), size));
    if (!in_->error().empty()) error_ = in_->error();
    z_.next_in = buf_.get();
    z_.avail_in = static_cast<uInt>(got);
    return got > 0;
  }

  static constexpr std::size_t size = std::size_t{1} << 18;
  std::unique_ptr<pcap::byte_source> in_;
  std::unique_ptr<std::uint8_t[]> buf_;
  z_stream z_{};
  bool live_ = false;
  bool in_member_ = false;
  bool done_ = false;
  std::uint64_t produced_before_ = 0;  // bytes of the members before the current one
  std::string error_;
};

}  // namespace scaleup::app
