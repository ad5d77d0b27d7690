// Writing capture files through libpcap: the only part of the library that links it (and, with
// the reader, that allocates: std::string messages). Nothing here throws; failures come back
// as std::nullopt or false together with a message meant to be shown to a person as it is.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>

#include <pcap/pcap.h>

#include "scaleup/pcap/byte_source.hpp"
#include "scaleup/pcap/packet.hpp"

namespace scaleup::pcap {

// The fraction of a second a pcap file records: microseconds (magic a1b2c3d4) or nanoseconds
// (a1b23c4d); the value is the number of digits (packet::precision).
enum class time_precision : precision_digits { micro = micro_digits, nano = nano_digits };

namespace detail {

struct pcap_closer {
  void operator()(pcap_t* p) const noexcept { pcap_close(p); }
};
struct dumper_closer {
  void operator()(pcap_dumper_t* d) const noexcept { pcap_dump_close(d); }
};
struct file_closer {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};

using pcap_ptr = std::unique_ptr<pcap_t, pcap_closer>;
using dumper_ptr = std::unique_ptr<pcap_dumper_t, dumper_closer>;
using file_ptr = std::unique_ptr<std::FILE, file_closer>;

}  // namespace detail

// Writes the classic pcap format, with nanosecond time stamps unless told otherwise (the
// simulations behind `scaleup gen` run in nanoseconds, and a transport's round trips are a few
// hundred of them); libpcap cannot write pcapng.
class writer {
 public:
  static std::optional<writer> create(const std::string& path, link_type lt, std::uint32_t snaplen,
                                      std::string& error_message,
                                      time_precision precision = time_precision::nano) {
    if (snaplen == 0 || snaplen > max_snaplen) {
      error_message = path + ": snaplen " + std::to_string(snaplen) + " is outside 1.." +
                      std::to_string(max_snaplen);
      return std::nullopt;
    }
    detail::pcap_ptr dead{pcap_open_dead_with_tstamp_precision(
        static_cast<int>(lt), static_cast<int>(snaplen),
        precision == time_precision::nano ? PCAP_TSTAMP_PRECISION_NANO
                                          : PCAP_TSTAMP_PRECISION_MICRO)};
    if (!dead) {
      error_message = path + ": cannot set up libpcap for link type " +
                      std::to_string(static_cast<std::uint32_t>(lt));
      return std::nullopt;
    }
    // Opened here rather than by pcap_dump_open so that "-" is a file name, not standard
    // output, and so that errno reaches the message.
    errno = 0;
    detail::file_ptr file{std::fopen(path.c_str(), "wb")};
    if (!file) {
      const int e = errno;
      error_message = path + ": " + detail::errno_message(e);
      return std::nullopt;
    }
    pcap_dumper_t* d = pcap_dump_fopen(dead.get(), file.get());
    if (d == nullptr) {
      error_message = path + ": " + pcap_geterr(dead.get());
      return std::nullopt;
    }
    file.release();  // pcap_dump_close closes it from now on
    return writer{std::move(dead), detail::dumper_ptr{d}, path, snaplen, precision};
  }

  writer(writer&&) noexcept = default;
  writer& operator=(writer&& other) noexcept {
    if (this != &other) {
      close();
      dead_ = std::move(other.dead_);
      dumper_ = std::move(other.dumper_);
      path_ = std::move(other.path_);
      error_ = std::move(other.error_);
      snaplen_ = other.snaplen_;
      precision_ = other.precision_;
      count_ = other.count_;
      failed_ = other.failed_;
    }
    return *this;
  }
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;
  ~writer() { close(); }

  // Writes caplen = frame.size() at ts_ns nanoseconds since the epoch (a microsecond file keeps
  // the whole microseconds), with len the frame's length on the wire when it was longer than
  // what was captured (`wire_len`; 0 or less than caplen: caplen). A refused frame (too long, or
  // a time the format cannot hold) writes nothing and leaves the writer usable; an I/O failure
  // is final.
  bool write(std::span<const std::uint8_t> frame, std::uint64_t ts_ns, std::uint32_t wire_len = 0) {
    if (!dumper_) {
      if (!failed_) error_ = path_ + ": write after close";
      return false;
    }
    if (failed_) return false;
    const auto where = [this] { return path_ + ": packet " + std::to_string(count_ + 1) + ": "; };
    if (frame.size() > snaplen_) {
      // Truncating would quietly lose bytes the reader of the file cannot get back.
      error_ = where() + "frame of " + std::to_string(frame.size()) +
               " bytes is longer than the snaplen of " + std::to_string(snaplen_) + "; not written";
      return false;
    }
    const std::uint64_t sec = ts_ns / 1'000'000'000u;
    if (sec > std::numeric_limits<std::uint32_t>::max()) {
      error_ = where() + "time " + std::to_string(sec) +
               " s does not fit the 32-bit unsigned seconds of a pcap record; not written";
      return false;
    }
    const std::uint64_t ns = ts_ns % 1'000'000'000u;
    pcap_pkthdr hdr{};
    // The record stores the low 32 bits; on a 32-bit time_t this wraps the same way.
    hdr.ts.tv_sec = static_cast<decltype(hdr.ts.tv_sec)>(sec);
    // A dumper opened for nanoseconds writes tv_usec as the nanoseconds.
    hdr.ts.tv_usec =
        static_cast<decltype(hdr.ts.tv_usec)>(precision_ == time_precision::nano ? ns : ns / 1000);
    hdr.caplen = static_cast<bpf_u_int32>(frame.size());
    hdr.len = wire_len > hdr.caplen ? wire_len : hdr.caplen;
    // pcap_dump reports nothing; the stream's error flag is the only trace of a failed write.
    errno = 0;
    pcap_dump(reinterpret_cast<u_char*>(dumper_.get()), &hdr, frame.data());
    if (std::ferror(pcap_dump_file(dumper_.get()))) {
      const int e = errno;
      fail(where() + detail::errno_message(e));
      return false;
    }
    ++count_;
    return true;
  }

  // Hands what was written to the file now (a reader may be following it); false on failure,
  // which is final.
  bool flush() {
    if (!dumper_ || failed_) return false;
    errno = 0;
    if (pcap_dump_flush(dumper_.get()) != 0) {
      const int e = errno;
      fail(path_ + ": " + detail::errno_message(e));
      return false;
    }
    return true;
  }

  // Flushes and closes; false if anything written so far may not have reached the file.
  // Closing again returns the same answer.
  bool close() {
    if (dumper_) {
      errno = 0;
      // Flushing before pcap_dump_close, which drops fclose's result, so that a full disk
      // is reported rather than lost.
      if (!failed_ &&
          (pcap_dump_flush(dumper_.get()) != 0 || std::ferror(pcap_dump_file(dumper_.get())))) {
        const int e = errno;
        fail(path_ + ": " + detail::errno_message(e));
      }
      dumper_.reset();
      dead_.reset();
    }
    return !failed_;
  }

  const std::string& error() const noexcept { return error_; }

 private:
  writer(detail::pcap_ptr dead, detail::dumper_ptr d, std::string path, std::uint32_t snaplen,
         time_precision precision)
      : dead_(std::move(dead)),
        dumper_(std::move(d)),
        path_(std::move(path)),
        snaplen_(snaplen),
        precision_(precision) {}

  void fail(std::string message) noexcept {
    failed_ = true;
    error_ = std::move(message);
  }

  detail::pcap_ptr dead_;
  detail::dumper_ptr dumper_;
  std::string path_;
  std::string error_;
  std::uint32_t snaplen_ = 0;
  time_precision precision_ = time_precision::nano;
  std::uint64_t count_ = 0;
  bool failed_ = false;
};

}  // namespace scaleup::pcap
