// Where the capture reader's bytes come from: a file, bytes in memory, or anything a caller
// puts in between, such as the gzip decompressor of the `scaleup` tool (the library itself may
// use only the standard library, Boost.Endian and libpcap).
//
// A source is read in large pieces into the reader's one buffer; nothing is read per packet.
// Nothing here throws: a failure is a short read plus error().
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <system_error>

namespace scaleup::pcap {

class byte_source {
 public:
  byte_source() = default;
  byte_source(const byte_source&) = delete;
  byte_source& operator=(const byte_source&) = delete;
  virtual ~byte_source() = default;

  // Reads into `out` and returns how many bytes it read: out.size(), or fewer when fewer have
  // arrived (a pipe), and 0 only when the data has ended or reading failed; error() then tells
  // the two apart. The reader asks again until it has what it needs.
  virtual std::size_t read(std::span<std::uint8_t> out) = 0;
  // Empty unless reading failed: then why, to be shown to a person as it is.
  virtual const std::string& error() const noexcept = 0;
};

namespace detail {

inline std::string errno_message(int e) {
  return e != 0 ? std::generic_category().message(e) : std::string("I/O error");
}

}  // namespace detail

// A file, read with the C library's buffering turned off, so that each read of the reader's
// buffer is one read(2) of the whole size straight into it.
class file_source final : public byte_source {
 public:
  // "-" is a file name here, never standard input.
  static std::unique_ptr<file_source> open(const std::string& path, std::string& error_message) {
    errno = 0;
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (f == nullptr) {
      const int e = errno;
      error_message = detail::errno_message(e);
      return nullptr;
    }
    std::setvbuf(f, nullptr, _IONBF, 0);
    return std::unique_ptr<file_source>(new file_source(f));
  }

  ~file_source() override { std::fclose(file_); }

  // The first bytes of the file, read without consuming them: what a caller looks at to choose
  // a decoder (at most 8 bytes; fewer if the file is shorter or reading failed).
  std::span<const std::uint8_t> peek(std::size_t n) {
    n = std::min(n, prefix_.size());
    while (prefix_end_ < n && error_.empty()) {
      const std::size_t got = fill(std::span(prefix_).subspan(prefix_end_, n - prefix_end_));
      if (got == 0) break;
      prefix_end_ += got;
    }
    return std::span<const std::uint8_t>(prefix_.data(), std::min(n, prefix_end_));
  }

  std::size_t read(std::span<std::uint8_t> out) override {
    std::size_t done = 0;
    if (prefix_pos_ < prefix_end_) {
      done = std::min(out.size(), prefix_end_ - prefix_pos_);
      std::copy_n(prefix_.data() + prefix_pos_, done, out.data());
      prefix_pos_ += done;
    }
    while (done < out.size() && error_.empty() && !ended_) {
      const std::size_t got = fill(out.subspan(done));
      if (got == 0) break;
      done += got;
    }
    return done;
  }

  const std::string& error() const noexcept override { return error_; }

 private:
  explicit file_source(std::FILE* f) noexcept : file_(f) {}

  std::size_t fill(std::span<std::uint8_t> out) {
    errno = 0;
    const std::size_t got = std::fread(out.data(), 1, out.size(), file_);
    if (got < out.size()) {
      if (std::ferror(file_)) {
        const int e = errno;
        error_ = detail::errno_message(e);
      } else {
        ended_ = true;
      }
    }
    return got;
  }

  std::FILE* file_;
  std::array<std::uint8_t, 8> prefix_{};
  std::size_t prefix_end_ = 0;
  std::size_t prefix_pos_ = 0;
  bool ended_ = false;
  std::string error_;
};

// Bytes already in memory (a fuzzer's input, a test's hand-built file). Keeps a view: the
// bytes must outlive the source.
class memory_source final : public byte_source {
 public:
  explicit memory_source(std::span<const std::uint8_t> bytes) noexcept : bytes_(bytes) {}

  std::size_t read(std::span<std::uint8_t> out) override {
    const std::size_t n = std::min(out.size(), bytes_.size());
    std::copy_n(bytes_.data(), n, out.data());
    bytes_ = bytes_.subspan(n);
    return n;
  }

  const std::string& error() const noexcept override { return error_; }

 private:
  std::span<const std::uint8_t> bytes_;
  std::string error_;  // always empty: memory does not fail
};

}  // namespace scaleup::pcap
