// Reading and writing capture files through libpcap.
//
// This is the only part of the library that depends on libpcap, and the only part that
// allocates (std::string messages): it is opt-in, so the wire formats stay usable without it.
// Nothing here throws; failures come back as std::nullopt, false or status::error together with
// a message meant to be shown to a person as it is.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>

#include <pcap/pcap.h>

namespace scaleup::pcap {

// LINKTYPE_ values as stored in the file header. The two user types keep our own frames
// distinguishable from Ethernet without registering a link type.
enum class link_type : std::uint32_t {
  ethernet = 1,  // LINKTYPE_ETHERNET
  afh2 = 147,    // LINKTYPE_USER0: bare AFH Gen 2 frames
  tofu = 148,    // LINKTYPE_USER1: Tofu-style slices
  rdma = 149,    // LINKTYPE_USER2: bare ExaJet packets of the RDMA engine
};

constexpr std::string_view to_string(link_type lt) noexcept {
  switch (lt) {
    case link_type::ethernet:
      return "ethernet";
    case link_type::afh2:
      return "afh2";
    case link_type::tofu:
      return "tofu";
    case link_type::rdma:
      return "rdma";
  }
  return "unknown";
}

// libpcap refuses to read packets longer than this (MAXIMUM_SNAPLEN), so the writer refuses to
// write files that promise more.
inline constexpr std::uint32_t max_snaplen = 262144;

struct packet {
  std::uint64_t number = 0;  // 1-based, as Wireshark numbers frames
  std::int64_t ts_sec = 0;
  std::uint32_t ts_usec = 0;
  std::uint32_t caplen = 0;
  std::uint32_t len = 0;  // original length on the wire; larger than caplen if cut by the snaplen
  std::span<const std::uint8_t> data{};  // caplen bytes, valid until the next read
};

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

inline std::string errno_message(int e) {
  return e != 0 ? std::generic_category().message(e) : std::string("I/O error");
}

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

// Names the format a file claims to be, to tell "not a capture at all" from "a damaged
// capture": libpcap reports both as a truncated or unknown header, which sends the user
// looking in the wrong place.
inline std::string_view claimed_format(const std::uint8_t (&m)[4]) noexcept {
  const std::uint32_t le = std::uint32_t{m[0]} | std::uint32_t{m[1]} << 8 |
                           std::uint32_t{m[2]} << 16 | std::uint32_t{m[3]} << 24;
  const std::uint32_t be = std::uint32_t{m[3]} | std::uint32_t{m[2]} << 8 |
                           std::uint32_t{m[1]} << 16 | std::uint32_t{m[0]} << 24;
  for (std::uint32_t v : {le, be}) {
    if (v == 0xa1b2c3d4 || v == 0xa1b23c4d || v == 0xa1b2cd34) return "pcap";  // us, ns, patched
  }
  if (le == 0x0a0d0d0a) return "pcapng";  // Section Header Block type, a palindrome
  return {};
}

}  // namespace detail

class reader {
 public:
  enum class status { packet, end, error };

  static std::optional<reader> open(const std::string& path, std::string& error_message) {
    // Opening the file ourselves keeps errno intact for the message and stops libpcap from
    // reading standard input when the path is "-".
    errno = 0;
    detail::file_ptr file{std::fopen(path.c_str(), "rb")};
    if (!file) {
      const int e = errno;
      error_message = path + ": " + detail::errno_message(e);
      return std::nullopt;
    }
    std::uint8_t magic[4] = {};
    errno = 0;
    const std::size_t got = std::fread(magic, 1, sizeof magic, file.get());
    if (got == 0 && std::ferror(file.get())) {  // a directory, for one
      const int e = errno;
      error_message = path + ": " + detail::errno_message(e);
      return std::nullopt;
    }
    if (got == 0) {
      error_message = path + ": not a pcap or pcapng capture (empty file)";
      return std::nullopt;
    }
    const std::string_view format = got == sizeof magic ? detail::claimed_format(magic) : "";
    std::rewind(file.get());

    char errbuf[PCAP_ERRBUF_SIZE] = {};
    pcap_t* p = pcap_fopen_offline(file.get(), errbuf);
    if (p == nullptr) {
      error_message = path + ": ";
      if (format.empty()) {
        error_message += "not a pcap or pcapng capture (";
      } else {
        error_message.append(format).append(" file header damaged or truncated (");
      }
      error_message.append(errbuf).append(")");
      return std::nullopt;
    }
    file.release();  // pcap_close closes it from now on
    return reader{detail::pcap_ptr{p}, path};
  }

  reader(reader&&) noexcept = default;
  reader& operator=(reader&&) noexcept = default;
  reader(const reader&) = delete;
  reader& operator=(const reader&) = delete;
  ~reader() = default;

  // The DLT value; for the link types in link_type it equals the LINKTYPE value in the file.
  std::uint32_t link() const noexcept {
    return static_cast<std::uint32_t>(pcap_datalink(p_.get()));
  }
  // As libpcap reports it: a header snaplen of 0 or above its maximum is raised or lowered.
  std::uint32_t snaplen() const noexcept {
    return static_cast<std::uint32_t>(pcap_snapshot(p_.get()));
  }

  // After end or error, keeps returning the same status.
  status next(packet& out) {
    if (state_ != status::packet) return state_;
    pcap_pkthdr* hdr = nullptr;
    const u_char* data = nullptr;
    const int r = pcap_next_ex(p_.get(), &hdr, &data);
    if (r == 1) {
      out.number = ++count_;
      out.ts_sec = static_cast<std::int64_t>(hdr->ts.tv_sec);
      // libpcap 1.10 reads the unsigned 32-bit seconds of a pcap record as signed, so times
      // from 2038 to 2106 come back negative; neither format can hold a negative time.
      if (out.ts_sec < 0 && out.ts_sec >= std::numeric_limits<std::int32_t>::min()) {
        out.ts_sec += std::int64_t{1} << 32;
      }
      out.ts_usec = static_cast<std::uint32_t>(hdr->ts.tv_usec);
      out.caplen = hdr->caplen;
      out.len = hdr->len;
      if constexpr (detail::address_sanitizer) {
        // A copy of exactly caplen bytes: libpcap keeps the packet in a larger buffer, where
        // a read past its end would go unnoticed.
        copy_ = std::make_unique<std::uint8_t[]>(hdr->caplen);
        std::copy_n(data, hdr->caplen, copy_.get());
        data = copy_.get();
      }
      out.data = std::span<const std::uint8_t>{data, hdr->caplen};
      return status::packet;
    }
    if (r == PCAP_ERROR_BREAK) {
      state_ = status::end;
    } else {
      state_ = status::error;
      error_ = path_ + ": packet " + std::to_string(count_ + 1) + ": " + pcap_geterr(p_.get());
    }
    out = packet{};
    return state_;
  }

  const std::string& error() const noexcept { return error_; }

 private:
  reader(detail::pcap_ptr p, std::string path) : p_(std::move(p)), path_(std::move(path)) {}

  detail::pcap_ptr p_;
  std::string path_;
  std::string error_;
  std::uint64_t count_ = 0;
  status state_ = status::packet;
  std::unique_ptr<std::uint8_t[]> copy_;  // the current packet, in AddressSanitizer builds
};

// Writes the classic pcap format (microsecond timestamps); libpcap cannot write pcapng.
class writer {
 public:
  static std::optional<writer> create(const std::string& path, link_type lt, std::uint32_t snaplen,
                                      std::string& error_message) {
    if (snaplen == 0 || snaplen > max_snaplen) {
      error_message = path + ": snaplen " + std::to_string(snaplen) + " is outside 1.." +
                      std::to_string(max_snaplen);
      return std::nullopt;
    }
    detail::pcap_ptr dead{pcap_open_dead(static_cast<int>(lt), static_cast<int>(snaplen))};
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
    return writer{std::move(dead), detail::dumper_ptr{d}, path, snaplen};
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
      count_ = other.count_;
      failed_ = other.failed_;
    }
    return *this;
  }
  writer(const writer&) = delete;
  writer& operator=(const writer&) = delete;
  ~writer() { close(); }

  // Writes caplen = len = frame.size(). A refused frame (too long, or a time the format cannot
  // hold) writes nothing and leaves the writer usable; an I/O failure is final.
  bool write(std::span<const std::uint8_t> frame, std::int64_t ts_sec, std::uint32_t ts_usec) {
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
    if (ts_sec < 0 || ts_sec > std::int64_t{std::numeric_limits<std::uint32_t>::max()}) {
      error_ = where() + "time " + std::to_string(ts_sec) +
               " s does not fit the 32-bit unsigned seconds of a pcap record; not written";
      return false;
    }
    if (ts_usec >= 1000000) {
      error_ =
          where() + "microseconds " + std::to_string(ts_usec) + " not below 1000000; not written";
      return false;
    }
    pcap_pkthdr hdr{};
    // The record stores the low 32 bits; on a 32-bit time_t this wraps the same way.
    hdr.ts.tv_sec = static_cast<decltype(hdr.ts.tv_sec)>(ts_sec);
    hdr.ts.tv_usec = static_cast<decltype(hdr.ts.tv_usec)>(ts_usec);
    hdr.caplen = static_cast<bpf_u_int32>(frame.size());
    hdr.len = hdr.caplen;
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
  writer(detail::pcap_ptr dead, detail::dumper_ptr d, std::string path, std::uint32_t snaplen)
      : dead_(std::move(dead)), dumper_(std::move(d)), path_(std::move(path)), snaplen_(snaplen) {}

  void fail(std::string message) noexcept {
    failed_ = true;
    error_ = std::move(message);
  }

  detail::pcap_ptr dead_;
  detail::dumper_ptr dumper_;
  std::string path_;
  std::string error_;
  std::uint32_t snaplen_ = 0;
  std::uint64_t count_ = 0;
  bool failed_ = false;
};

}  // namespace scaleup::pcap
