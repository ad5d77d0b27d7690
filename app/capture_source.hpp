// Where `dump`, `stats` and `check` get frames, as tshark does: a file (-r FILE or FILE),
// standard input ("-": a pipe from `tcpdump -w -`), or an interface (-i IFACE, through libpcap),
// with a capture filter (-f), a frame count (-c) and a duration (-a duration:S); -w FILE saves
// what was read. gzip-compressed files and pipes are read too (told by their content).
// SIGINT and SIGTERM end the reading cleanly: the command prints what it has and its summary.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "scaleup/dissect/frame_meta.hpp"
#include "scaleup/pcap/capture.hpp"
#include "scaleup/pcap/pcapng_writer.hpp"

struct pcap;  // libpcap's handle (pcap_t)

namespace scaleup::app {

namespace cap = scaleup::pcap;  // ::pcap is libpcap's struct

// What names the capture and bounds the reading (the commands' -r/-i/-f/-c/-a/-w).
struct source_settings {
  std::string file;                   // positional FILE
  std::string read;                   // -r FILE
  std::string interface;              // -i IFACE
  std::string filter;                 // -f FILTER (live only)
  std::uint64_t count = 0;            // -c N; 0: all
  std::vector<std::string> autostop;  // -a duration:S
  std::string write;                  // -w FILE
  // A capture already in memory, read as a file named `file` (a program that holds the bytes,
  // a fuzz target); the bytes must outlive the reading. No stop signals are caught for it.
  std::optional<std::span<const std::uint8_t>> memory;
  // A library caller's reading (the Python module) rather than a command's: it keeps its own
  // SIGINT and SIGTERM handlers (catch_signals off), ends the reading early through `stop` as a
  // stop signal would, and takes the reading's errors in `errors` (the last one, the text a
  // command prints after "scaleup: ") to raise them, rather than on stderr.
  bool catch_signals = true;
  const std::atomic<bool>* stop = nullptr;
  std::string* errors = nullptr;
};

// -a's condition, tshark's one for time: "duration:S", S seconds above 0.
std::optional<double> autostop_seconds(std::string_view s);

// SIGINT and SIGTERM set a flag that the reading sees; no SA_RESTART, so a read blocked on a
// pipe returns.
void catch_stop_signals();
bool stop_requested() noexcept;

// A packet's time as the analysis and the IP reassembler count it: signed nanoseconds, enough
// until 2262.
inline std::int64_t capture_time_ns(const cap::packet& p) noexcept {
  return static_cast<std::int64_t>(
      std::min<std::uint64_t>(p.ts_ns, std::numeric_limits<std::int64_t>::max()));
}

// What libpcap says of a live capture (pcap_stats): packets the filter passed, those the kernel
// dropped for want of buffer space (ps_drop: the reader did not keep up) and those the
// interface or its driver dropped (ps_ifdrop).
struct capture_drops {
  std::uint64_t received = 0, kernel = 0, interface = 0;
};

class counting_source;

// A line on stderr, redrawn twice a second while a long file is read: bytes read of the file,
// frames a second, the time left at that pace. Only on a terminal; erased at the end.
class progress_line {
 public:
  void start(const counting_source* src, std::uint64_t total);
  void tick(std::uint64_t frames) {
    if (!src_ || (frames & 1023) != 0) return;  // the clock is looked at every 1024 frames
    draw(frames);
  }
  void finish();
  ~progress_line() { finish(); }

 private:
  void draw(std::uint64_t frames);
  const counting_source* src_ = nullptr;
  std::uint64_t total_ = 0;
  std::chrono::steady_clock::time_point began_{}, next_{};
  bool shown_ = false;
};

// Frames from a file, a pipe or an interface, numbered from 1, with -c, -a and the stop
// signals applied, and saved to -w's file as they are read.
class capture_source {
 public:
  using status = cap::reader::status;

  capture_source();
  capture_source(const capture_source&) = delete;
  capture_source& operator=(const capture_source&) = delete;
  ~capture_source();

  // Opens what `in` names; false after printing why (exit status 1). `progress`: a progress
  // line on stderr while a large file is read, when stderr is a terminal.
  bool open(const source_settings& in, bool progress);

  // The next frame, or end (the data ended, -c frames were read, -a's time passed, a stop
  // signal came) or error (error() says why).
  status next(cap::packet& pkt) {
    if (failed_) return status::error;
    if (stop_requested() || (stop_ && stop_->load(std::memory_order_relaxed)) ||
        (count_limit_ && read_ >= count_limit_))
      return status::end;
    const status s = live_ ? next_live(pkt) : reader_->next(pkt);
    if (s == status::error) {
      error_ = live_ ? error_ : reader_->error();
      return s;
    }
    if (s != status::packet) return s;
    ++read_;
    progress_.tick(read_);
    if (live_) pkt.number = read_;
    if (!write_path_.empty() && !save(pkt)) return status::error;
    return s;
  }

  // Whether frames arrive as they happen (an interface, a pipe): output then goes out frame by
  // frame.
  bool streaming() const noexcept { return streaming_; }
  bool live() const noexcept { return live_ != nullptr; }
  // Whether frames name their interface (pcapng, live captures): frame.interface_id.
  bool names_interfaces() const noexcept {
    return live_ || (reader_ && reader_->file_format() == cap::reader::format::pcapng);
  }
  // What the frames came from: the file as named, "(standard input)", or the interface.
  const std::string& name() const noexcept { return name_; }
  // A live capture's counts so far (capture_drops); nothing for a file or a pipe.
  std::optional<capture_drops> drops() const;

  // Called while a live capture waits for frames (every tenth of a second at most): what is due
  // whether or not frames come (stats --interval's table).
  std::function<void()> on_idle;
  const std::string& error() const noexcept { return error_; }

  // Flushes and closes -w's file; false after printing why.
  bool finish();

  // An error of the reading: on stderr after "scaleup: ", or kept in source_settings::errors.
  void complain(const std::string& what) const;

 private:
  bool open_file(const std::string& path);
  bool open_bytes(std::unique_ptr<cap::byte_source> source, std::span<const std::uint8_t> first,
                  const std::string& name);
  bool open_live(const source_settings& in);
  status next_live(cap::packet& pkt);
  bool save(const cap::packet& pkt);
  bool save_pcapng(const cap::packet& pkt);
  bool fail(std::string why);

  std::string name_, write_path_, error_;
  std::string* errors_ = nullptr;
  const std::atomic<bool>* stop_ = nullptr;
  std::optional<cap::reader> reader_;
  std::optional<cap::writer> writer_;
  std::optional<cap::pcapng_writer> ng_writer_;
  std::vector<std::uint32_t> saved_as_;  // per interface of the source: its id in ng_writer_
  std::uint32_t write_link_ = 0;
  ::pcap* live_ = nullptr;
  bool nano_ = false, streaming_ = false, failed_ = false;
  std::uint32_t link_ = 0;
  double duration_ = 0;
  std::chrono::steady_clock::time_point started_{};
  std::uint64_t count_limit_ = 0, read_ = 0;
  bool progress_wanted_ = false;
  progress_line progress_;
};

// The frame.* values of each packet: times relative to the first and to the one before.
class frame_clock {
 public:
  explicit frame_clock(bool interfaces) noexcept : interfaces_(interfaces) {}

  dissect::frame_meta operator()(const cap::packet& p) {
    const std::int64_t ns = capture_time_ns(p);
    if (!started_) first_ = prev_ = ns;
    started_ = true;
    dissect::frame_meta m;
    m.number = p.number;
    m.time_ns = p.ts_ns;
    m.relative_ns = ns - first_;
    m.delta_ns = ns - prev_;
    m.digits =
        p.precision ? std::min<std::uint8_t>(p.precision, cap::nano_digits) : cap::nano_digits;
    m.len = std::max(p.len, p.caplen);
    m.cap_len = p.caplen;
    m.has_interface = interfaces_;
    m.interface = p.interface;
    prev_ = ns;
    return m;
  }

 private:
  bool interfaces_;
  bool started_ = false;
  std::int64_t first_ = 0, prev_ = 0;
};

}  // namespace scaleup::app
