// Where `dump`, `stats` and `check` get frames, as tshark does: a file (-r FILE or FILE),
// standard input ("-": a pipe from `tcpdump -w -`), or an interface (-i IFACE, through libpcap),
// with a capture filter (-f), a frame count (-c) and a duration (-a duration:S); -w FILE saves
// what was read.
// SIGINT and SIGTERM end the reading cleanly: the command prints what it has and its summary.
#pragma once

#include <pcap/pcap.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "gzip_source.hpp"
#include "profile_file.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/flow_table.hpp"
#include "scaleup/dissect/ip_reassembly.hpp"
#include "scaleup/dissect/limits.hpp"
#include "scaleup/pcap/capture.hpp"

namespace scaleup::cli {

// ---- the options -----------------------------------------------------------------------------

struct input_settings {
  std::string file;                   // positional FILE
  std::string read;                   // -r FILE
  std::string interface;              // -i IFACE
  std::string filter;                 // -f FILTER (live only)
  std::uint64_t count = 0;            // -c N; 0: all
  std::vector<std::string> autostop;  // -a duration:S
  std::string write;                  // -w FILE
};

// -a's condition, tshark's one for time: "duration:S", S seconds above 0.
inline std::optional<double> autostop_seconds(std::string_view s) {
  if (!s.starts_with("duration:")) return std::nullopt;
  const auto n = parse_number<double>(s.substr(9));
  if (!n || !(*n > 0)) return std::nullopt;
  return n;
}

inline void add_input_options(CLI::App* app, input_settings& in) {
  auto* file = app->add_option("FILE", in.file, "a pcap or pcapng capture (gzip too); - for stdin");
  auto* read = app->add_option("-r,--read-file", in.read, "the capture to read (as FILE)");
  auto* iface = app->add_option("-i,--interface", in.interface, "capture live on this interface");
  file->excludes(read);
  iface->excludes(file)->excludes(read);
  app->add_option("-f", in.filter, "capture filter (BPF syntax) for -i")->needs(iface);
  app->add_option("-c", in.count, "stop after N frames")->check(CLI::PositiveNumber);
  app->add_option("-a,--autostop", in.autostop, "stop a live capture: duration:SECONDS")
      ->needs(iface)
      ->check(CLI::Validator(
          [](std::string& v) -> std::string {
            return autostop_seconds(v) ? "" : "takes duration:SECONDS, the seconds above 0";
          },
          "duration:SECONDS"));
  app->add_option("-w", in.write, "save the frames read to this pcap file");
}

// The dissection options `dump` and `stats` share.
struct engine_settings {
  std::string profile = "default";
  std::vector<unsigned> udp_ports;
  bool no_heuristics = false;
  std::string xpu_map;
  bool check_checksums = false;
  std::size_t max_connections = dissect::default_max_connections;
};

inline void add_engine_options(CLI::App* app, engine_settings& e) {
  app->add_option("--profile", e.profile,
                  "command profile: a name (" + profile_names() +
                      "), none (payloads opaque), or a profile file")
      ->capture_default_str();
  app->add_option("--udp-port", e.udp_ports, "SUE over UDP on this port (repeatable)")
      ->check(CLI::Range(1, 65535))
      ->allow_extra_args(false);
  app->add_flag("--no-heuristics", e.no_heuristics,
                "find SUE over UDP on the --udp-port ports only");
  app->add_option("--xpu-map", e.xpu_map, "file of lines ADDRESS XPU");
  app->add_flag("--check-checksums", e.check_checksums, "check IP and UDP checksums");
  app->add_option("--max-connections", e.max_connections,
                  "connections (and UDP flows) kept at most; beyond, a new one is not analysed "
                  "and the report says how many frames that left out (docs/robustness.md)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

// What the UDP flow table's limit left out, as the reports say it.
inline std::string flows_not_remembered_text(const dissect::flow_table& flows) {
  return std::to_string(flows.not_remembered()) +
         " SUE datagrams on UDP flows beyond the flow "
         "limit " +
         std::to_string(flows.max_flows()) +
         " (not remembered: dissected by their own "
         "R-CRC or port)";
}

// Applies what parsing could not check (files to read); the usage error otherwise.
inline std::optional<std::string> apply(const engine_settings& e, dissect::options& o) {
  if (!e.xpu_map.empty()) {
    auto m = dissect::read_xpu_map(e.xpu_map);
    if (!m) {
      const auto& err = m.err;
      return "--xpu-map: " + e.xpu_map + (err.item ? ":" + std::to_string(err.item) : "") + ": " +
             std::string(err.what) + (err.value ? " (" + std::to_string(err.value) + ")" : "");
    }
    run_xpu_map() = std::move(m.value);
    o.xpus = &run_xpu_map();
  }
  o.heuristics = !e.no_heuristics;
  o.check_checksums = e.check_checksums;
  for (const unsigned p : e.udp_ports)
    if (!o.add_udp_port(static_cast<std::uint16_t>(p))) return "--udp-port: too many ports";
  std::string why;
  o.profile = resolve_profile(e.profile, true, why);
  if (!why.empty()) return "--profile: " + why;
  return std::nullopt;
}

// ---- stopping ---------------------------------------------------------------------------------

namespace detail {

inline volatile std::sig_atomic_t stop_signal = 0;
inline std::atomic<pcap_t*> live_handle{nullptr};

extern "C" inline void on_stop_signal(int sig) {
  stop_signal = sig;
  // Wakes a live capture blocked in the kernel (libpcap documents it safe in a handler).
  if (pcap_t* p = live_handle.load()) pcap_breakloop(p);
}

}  // namespace detail

// SIGINT and SIGTERM set a flag that the reading loop sees; no SA_RESTART, so a read blocked
// on a pipe returns.
inline void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = detail::on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

inline bool stop_requested() { return detail::stop_signal != 0; }

// ---- standard input and other pipes ---------------------------------------------------------

// A pipe, a FIFO or a terminal, read as the bytes come: each read is one read(2), so a frame is
// dissected as soon as the writer has written it (the capture reader asks for more only when it
// needs more). A read cut by a stop signal ends the data.
class pipe_source final : public cap::byte_source {
 public:
  explicit pipe_source(int fd, bool owned) noexcept : fd_(fd), owned_(owned) {}
  ~pipe_source() override {
    if (owned_) ::close(fd_);
  }

  std::size_t read(std::span<std::uint8_t> out) override {
    std::size_t done = 0;
    if (prefix_pos_ < prefix_end_) {
      done = std::min(out.size(), prefix_end_ - prefix_pos_);
      std::memcpy(out.data(), prefix_.data() + prefix_pos_, done);
      prefix_pos_ += done;
      return done;
    }
    return fill(out);
  }

  // The first bytes, kept for read(): what opening looks at (the gzip magic).
  std::span<const std::uint8_t> peek(std::size_t n) {
    n = std::min(n, prefix_.size());
    while (prefix_end_ < n) {
      const std::size_t got = fill(std::span(prefix_).subspan(prefix_end_, n - prefix_end_));
      if (got == 0) break;
      prefix_end_ += got;
    }
    return std::span<const std::uint8_t>(prefix_.data(), std::min(n, prefix_end_));
  }

  const std::string& error() const noexcept override { return error_; }

 private:
  std::size_t fill(std::span<std::uint8_t> out) {
    for (;;) {
      const ssize_t got = ::read(fd_, out.data(), out.size());
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno == EINTR && !stop_requested()) continue;
      if (errno != EINTR) error_ = std::strerror(errno);
      return 0;
    }
  }

  int fd_;
  bool owned_;
  std::array<std::uint8_t, 8> prefix_{};
  std::size_t prefix_end_ = 0, prefix_pos_ = 0;
  std::string error_;
};

// ---- progress -------------------------------------------------------------------------------

// Counts the bytes a source gives (of a file: how far reading has come).
class counting_source final : public cap::byte_source {
 public:
  explicit counting_source(std::unique_ptr<cap::byte_source> in) : in_(std::move(in)) {}
  std::size_t read(std::span<std::uint8_t> out) override {
    const std::size_t n = in_->read(out);
    count_ += n;
    return n;
  }
  const std::string& error() const noexcept override { return in_->error(); }
  std::uint64_t count() const noexcept { return count_; }

 private:
  std::unique_ptr<cap::byte_source> in_;
  std::uint64_t count_ = 0;
};

// A line on stderr, redrawn twice a second while a long file is read: bytes read of the file,
// frames a second, the time left at that pace. Only on a terminal; erased at the end.
class progress_line {
 public:
  void start(const counting_source* src, std::uint64_t total) {
    src_ = src;
    total_ = total;
    began_ = next_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  }
  void tick(std::uint64_t frames) {
    if (!src_ || (frames & 1023) != 0) return;  // the clock is looked at every 1024 frames
    const auto now = std::chrono::steady_clock::now();
    if (now < next_) return;
    next_ = now + std::chrono::milliseconds(500);
    const double secs = std::chrono::duration<double>(now - began_).count() + 1.0;
    const double done = static_cast<double>(src_->count());
    const double left = done > 0 ? secs * (static_cast<double>(total_) - done) / done : 0;
    fmt::print(stderr, "\r{:.1f} of {:.1f} MB, {:.0f} frames/s, {:.0f} s left \x1b[K", done / 1e6,
               static_cast<double>(total_) / 1e6, static_cast<double>(frames) / secs,
               std::max(0.0, left));
    shown_ = true;
  }
  void finish() {
    if (shown_) fmt::print(stderr, "\r\x1b[K");
    shown_ = false;
  }
  ~progress_line() { finish(); }

 private:
  const counting_source* src_ = nullptr;
  std::uint64_t total_ = 0;
  std::chrono::steady_clock::time_point began_{}, next_{};
  bool shown_ = false;
};

// ---- the input ------------------------------------------------------------------------------

// What libpcap says of a live capture (pcap_stats): packets the filter passed, those the kernel
// dropped for want of buffer space (ps_drop: the reader did not keep up) and those the
// interface or its driver dropped (ps_ifdrop).
struct capture_drops {
  std::uint64_t received = 0, kernel = 0, interface = 0;
};

inline std::string drops_text(const capture_drops& d) {
  return fmt::format(
      "{} packets received by the capture filter, {} dropped by the kernel, {} "
      "dropped by the interface",
      d.received, d.kernel, d.interface);
}

// Frames from a file, a pipe or an interface, numbered from 1, with -c, -a and the stop
// signals applied, and saved to -w's file as they are read.
class capture_input {
 public:
  using status = cap::reader::status;

  capture_input() = default;
  capture_input(const capture_input&) = delete;
  capture_input& operator=(const capture_input&) = delete;
  ~capture_input() {
    if (live_) {
      detail::live_handle.store(nullptr);
      pcap_close(live_);
    }
  }

  // Opens what `in` names; false after printing why (exit status 1). `progress`: a progress
  // line on stderr while a large file is read, when stderr is a terminal.
  bool open(const input_settings& in, bool progress) {
    progress_wanted_ = progress && ::isatty(2);
    count_limit_ = in.count;
    write_path_ = in.write;
    catch_stop_signals();
    if (!in.interface.empty()) return open_live(in);
    name_ = in.read.empty() ? in.file : in.read;
    return open_file(name_);
  }

  // The next frame, or end (the data ended, -c frames were read, -a's time passed, a stop
  // signal came) or error (error() says why).
  status next(cap::packet& pkt) {
    if (failed_) return status::error;
    if (stop_requested() || (count_limit_ && read_ >= count_limit_)) return status::end;
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
  const std::string& name() const noexcept { return name_; }
  // A live capture's counts so far (capture_drops); nothing for a file or a pipe.
  std::optional<capture_drops> drops() const {
    pcap_stat st{};
    if (!live_ || pcap_stats(live_, &st) != 0) return std::nullopt;
    return capture_drops{st.ps_recv, st.ps_drop, st.ps_ifdrop};
  }

  // Called while a live capture waits for frames (every tenth of a second at most): what is due
  // whether or not frames come (stats --interval's table).
  std::function<void()> on_idle;
  const std::string& error() const noexcept { return error_; }

  // Flushes and closes -w's file; false after printing why.
  bool finish() {
    progress_.finish();
    if (writer_ && !writer_->close()) {
      std::fprintf(stderr, "scaleup: %s\n", writer_->error().c_str());
      return false;
    }
    return true;
  }

 private:
  bool open_file(const std::string& path) {
    std::string err;
    std::unique_ptr<cap::byte_source> source;
    std::span<const std::uint8_t> first;
    struct stat st {};
    const bool standard_input = path == "-";
    if (standard_input || (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))) {
      const int fd = standard_input ? 0 : ::open(path.c_str(), O_RDONLY);
      if (fd < 0) {
        std::fprintf(stderr, "scaleup: %s: %s\n", path.c_str(), std::strerror(errno));
        return false;
      }
      auto pipe = std::make_unique<pipe_source>(fd, !standard_input);
      first = pipe->peek(2);
      source = std::move(pipe);
      streaming_ = true;
    } else {
      auto file = cap::file_source::open(path, err);
      if (!file) {
        std::fprintf(stderr, "scaleup: %s: %s\n", path.c_str(), err.c_str());
        return false;
      }
      first = file->peek(2);
      // Large files only: a small one is read before a line would be worth drawing.
      if (progress_wanted_ && S_ISREG(st.st_mode) && st.st_size > (64 << 20)) {
        auto counted = std::make_unique<counting_source>(std::move(file));
        progress_.start(counted.get(), static_cast<std::uint64_t>(st.st_size));
        source = std::move(counted);
      } else {
        source = std::move(file);
      }
    }
    // gzip is told by the content (its magic), never by the file name.
    if (first.size() == 2 && first[0] == gzip_id1 && first[1] == gzip_id2) {
      source = gzip_source::over(std::move(source));
      if (!source) {
        std::fprintf(stderr, "scaleup: %s: cannot set up gzip decompression\n", path.c_str());
        return false;
      }
    }
    reader_ = cap::reader::open(std::move(source), standard_input ? "(standard input)" : path, err);
    if (!reader_) {
      std::fprintf(stderr, "scaleup: %s\n", err.c_str());
      return false;
    }
    return true;
  }

  bool open_live(const input_settings& in) {
    name_ = in.interface;
    streaming_ = true;
    for (const auto& a : in.autostop) duration_ = autostop_seconds(a).value_or(0);
    char errbuf[PCAP_ERRBUF_SIZE] = {};
    live_ = pcap_create(in.interface.c_str(), errbuf);
    if (!live_) {
      std::fprintf(stderr, "scaleup: %s: %s\n", in.interface.c_str(), errbuf);
      return false;
    }
    // As tshark captures: the whole frame, promiscuous, handed over at once (no batching in
    // the kernel), nanosecond times where the interface gives them.
    pcap_set_snaplen(live_, static_cast<int>(cap::max_snaplen));
    pcap_set_promisc(live_, 1);
    pcap_set_immediate_mode(live_, 1);
    pcap_set_timeout(live_, 100);
    pcap_set_tstamp_precision(live_, PCAP_TSTAMP_PRECISION_NANO);
    const int r = pcap_activate(live_);
    if (r < 0) {
      std::fprintf(stderr, "scaleup: %s: %s\n", in.interface.c_str(),
                   r == PCAP_ERROR ? pcap_geterr(live_) : pcap_statustostr(r));
      return false;
    }
    if (r > 0) std::fprintf(stderr, "scaleup: %s: %s\n", in.interface.c_str(), pcap_statustostr(r));
    if (!in.filter.empty()) {
      bpf_program prog{};
      if (pcap_compile(live_, &prog, in.filter.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0 ||
          pcap_setfilter(live_, &prog) != 0) {
        std::fprintf(stderr, "scaleup: -f '%s': %s\n", in.filter.c_str(), pcap_geterr(live_));
        pcap_freecode(&prog);
        return false;
      }
      pcap_freecode(&prog);
    }
    if (pcap_setnonblock(live_, 1, errbuf) != 0 || pcap_get_selectable_fd(live_) < 0) {
      std::fprintf(stderr, "scaleup: %s: cannot wait for frames: %s\n", in.interface.c_str(),
                   errbuf);
      return false;
    }
    nano_ = pcap_get_tstamp_precision(live_) == PCAP_TSTAMP_PRECISION_NANO;
    link_ = static_cast<std::uint32_t>(pcap_datalink(live_));
    started_ = std::chrono::steady_clock::now();
    detail::live_handle.store(live_);
    std::fprintf(stderr, "Capturing on '%s'\n", in.interface.c_str());
    return true;
  }

  status next_live(cap::packet& pkt) {
    for (;;) {
      if (stop_requested()) return status::end;
      if (duration_ > 0 &&
          std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count() >=
              duration_)
        return status::end;
      pcap_pkthdr* h = nullptr;
      const std::uint8_t* data = nullptr;
      const int r = pcap_next_ex(live_, &h, &data);
      if (r == 0) {
        // Nothing yet (non-blocking): wait for the descriptor a tenth of a second at most, then
        // look at the clock and the signals again. libpcap's own timeout does not end a wait in
        // immediate mode on Linux.
        pollfd fd{pcap_get_selectable_fd(live_), POLLIN, 0};
        ::poll(&fd, 1, 100);
        if (on_idle) on_idle();
        continue;
      }
      if (r == PCAP_ERROR_BREAK) return status::end;
      if (r < 0) {
        error_ = name_ + ": " + pcap_geterr(live_);
        return status::error;
      }
      pkt = cap::packet{};
      pkt.ts_ns = static_cast<std::uint64_t>(h->ts.tv_sec) * 1'000'000'000u +
                  static_cast<std::uint64_t>(h->ts.tv_usec) * (nano_ ? 1u : 1000u);
      pkt.precision = nano_ ? cap::nano_digits : cap::micro_digits;
      pkt.link = link_;
      pkt.interface = 0;
      pkt.caplen = h->caplen;
      pkt.len = h->len;
      pkt.data = std::span<const std::uint8_t>(data, h->caplen);
      return status::packet;
    }
  }

  // -w: the frames as read, on the first frame's link type, with its time precision.
  bool save(const cap::packet& pkt) {
    if (!writer_) {
      std::string err;
      writer_ = cap::writer::create(write_path_, static_cast<cap::link_type>(pkt.link),
                                    cap::max_snaplen, err,
                                    pkt.precision > cap::micro_digits ? cap::time_precision::nano
                                                                      : cap::time_precision::micro);
      if (!writer_) return fail(err);
      write_link_ = pkt.link;
    }
    if (pkt.link != write_link_)
      return fail(write_path_ + ": frame " + std::to_string(pkt.number) + " is on link type " +
                  std::to_string(pkt.link) + ", the file on " + std::to_string(write_link_) +
                  " (a pcap file has one link type)");
    if (!writer_->write(pkt.data, pkt.ts_ns, pkt.len)) return fail(writer_->error());
    if (streaming_) writer_->flush();
    return true;
  }

  bool fail(std::string why) {
    error_ = std::move(why);
    failed_ = true;
    return false;
  }

  std::string name_, write_path_, error_;
  std::optional<cap::reader> reader_;
  std::optional<cap::writer> writer_;
  std::uint32_t write_link_ = 0;
  pcap_t* live_ = nullptr;
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
    const auto ns = static_cast<std::int64_t>(
        std::min<std::uint64_t>(p.ts_ns, std::numeric_limits<std::int64_t>::max()));
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

// ---- reading and dissecting -----------------------------------------------------------------

// What dump, stats and check set up alike: the engine's options from the flags, the UDP flows
// the engine finds SUE kept in `flows` (wire/udp_flow.hpp), a capture named; the usage error
// otherwise.
inline std::optional<std::string> set_up(const input_settings& in, const engine_settings& e,
                                         dissect::options& o, dissect::flow_table& flows) {
  flows = dissect::flow_table(e.max_connections);
  o.flows = &flows;
  if (auto bad = apply(e, o)) return bad;
  if (in.file.empty() && in.read.empty() && in.interface.empty())
    return "which capture? FILE, -r FILE, - (standard input) or -i IFACE";
  return std::nullopt;
}

// The one reassembler of IP fragments a command's frames go through, in frame order. About 4
// MiB, made at the first fragment: most captures hold none, and clearing it (a thousand fresh
// pages) was a tenth of `stats` on a short capture.
class lazy_reassembler {
 public:
  const wire::reassembly_result& push(const wire::ip_fragment& f, std::uint64_t frame,
                                      std::int64_t now_ns) {
    if (!r_) r_ = std::make_unique<wire::ip_reassembler<>>();
    return r_->push(f, frame, now_ns);
  }
  void reset() noexcept {
    if (r_) r_->reset();
  }

 private:
  std::unique_ptr<wire::ip_reassembler<>> r_;
};

inline lazy_reassembler& frame_reassembler() {
  static lazy_reassembler r;
  return r;
}

// The options of a frame read only for what it teaches the flow table (dissect_each's
// learn_only).
inline dissect::options flows_only(dissect::options o) {
  o.flows_only = true;
  return o;
}

// ---- frames held until their flows are known --------------------------------------------
//
// A capture cut by its snapshot length holds no R-CRC in its long datagrams: on a port nobody
// named, a cut datagram is SUE only on a flow or port a whole datagram showed SUE before
// (wire/udp_flow.hpp), so the datagrams before that one stay UDP ("unconfirmed"). `stats` and
// `check` hold the frames from the first such datagram on, in order, until each flow they left
// unconfirmed is recognised (a header-only capture's first stand-alone ACK, a few frames later),
// then dissect them again with what the table now knows and take them: the figures of the whole
// capture, read once (issue 17 item 3; a second reading of the file cost as much as the first).
// At most held_frames::max_bytes or max_frames are held: then, at a frame of an IP fragment
// (whose datagram the reassembler joins in frame order) and at the end of the input, the held
// frames are taken as they are, their flows left unconfirmed in the table, which may have the
// file read again (read_passes).

// The flow table as the reader sees it while frames may be held: the flows a frame's cut
// datagrams left unconfirmed are noted for the frame, not told the table.
class noting_flows final : public wire::flow_binding {
 public:
  explicit noting_flows(dissect::flow_table& t) noexcept : t_(t) {}
  bool bound(const wire::udp_flow& f) const noexcept override { return t_.bound(f); }
  bool port_bound(std::uint16_t port) const noexcept override { return t_.port_bound(port); }
  void bind(const wire::udp_flow& f) noexcept override { t_.bind(f); }
  void unconfirmed(const wire::udp_flow& f) noexcept override { noted.push_back(f); }

  std::vector<wire::udp_flow> noted;  // the current frame's

 private:
  dissect::flow_table& t_;
};

// The reassembler as the reader sees it: whether the frame held a fragment.
struct watched_reassembler {
  lazy_reassembler& r;
  bool pushed = false;
  const wire::reassembly_result& push(const wire::ip_fragment& f, std::uint64_t frame,
                                      std::int64_t now_ns) {
    pushed = true;
    return r.push(f, frame, now_ns);
  }
};

class held_frames {
 public:
  static constexpr std::size_t max_bytes = std::size_t{16} << 20;
  static constexpr std::size_t max_frames = std::size_t{1} << 16;  // by default
  explicit held_frames(std::size_t most = max_frames) noexcept : most_(most) {}

  struct frame {
    cap::packet pkt;  // data: into the held bytes
    std::int64_t ns = 0;
    dissect::frame_meta meta{};
  };

  bool holding() const noexcept { return !frames_.empty(); }
  // Whether a frame whose cut datagrams left `unconfirmed` unrecognised is held: from the first
  // such frame on, every frame is, so that they are taken in order.
  bool wants(std::span<const wire::udp_flow> unconfirmed) const noexcept {
    return most_ > 0 && (holding() || !unconfirmed.empty());
  }
  void hold(const cap::packet& p, std::int64_t ns, const dissect::frame_meta& meta,
            std::span<const wire::udp_flow> unconfirmed) {
    frames_.push_back({p, ns, meta});
    at_.push_back(bytes_.size());
    bytes_.insert(bytes_.end(), p.data.begin(), p.data.end());
    for (const auto& f : unconfirmed) waiting_.insert(f);
  }
  // Whether the held frames are to be taken now: every flow they left unconfirmed is bound,
  // directly or by a port (asked again only when the table changed), or no more may be held.
  bool due(const dissect::flow_table& t) {
    if (bytes_.size() >= max_bytes || frames_.size() >= most_) return true;
    if (t.version() == version_) return false;
    version_ = t.version();
    for (const auto& f : waiting_.keys())
      if (!t.bound(f) && !t.port_bound(f.port_a) && !t.port_bound(f.port_b)) return false;
    return true;
  }
  // The flows the held frames left unconfirmed that the table still does not know, told it as
  // unconfirmed, as the reader would have: before release.
  void note_unresolved(dissect::flow_table& t) const {
    for (const auto& f : waiting_.keys())
      if (!t.bound(f) && !t.port_bound(f.port_a) && !t.port_bound(f.port_b)) t.unconfirmed(f);
  }
  // Calls each(frame) for the held frames in order, then forgets them.
  template <class Each>
  void release(Each&& each) {
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      frame& h = frames_[i];
      h.pkt.data = std::span<const std::uint8_t>(bytes_.data() + at_[i], h.pkt.data.size());
      each(std::as_const(h));
    }
    frames_.clear();
    at_.clear();
    bytes_.clear();
    waiting_.clear();
  }

 private:
  std::vector<frame> frames_;
  std::vector<std::size_t> at_;  // each frame's bytes in bytes_
  std::vector<std::uint8_t> bytes_;
  dissect::flat_index<wire::udp_flow, wire::udp_flow_hash> waiting_;
  std::uint64_t version_ = ~std::uint64_t{0};
  std::size_t most_;
};

// --hold N, hidden: frames held at most (0: none, and a cut file is read twice); for the tests.
inline void add_hold_option(CLI::App* app, std::size_t& most) {
  app->add_option("--hold", most, "frames held at most while their flows are not known")->group("");
}

// Every frame of an open input, dissected, then on_frame(tree, packet, time_ns). Each packet on
// its interface's link type (a pcapng file may mix them) and with its length on the wire (a
// frame the snapshot length cut is read against it, not taken as malformed); IP fragments are
// joined and a datagram is dissected in the frame that completes it. False when reading failed
// (input.error() says why).
// Once `*learn_only` is true (a cut file's first pass certain to be read again: read_again),
// the frames that follow only teach the flow table (options::flows_only) and on_frame sees none.
// With `hold` (the table o.flows is), up to `hold_most` frames are held while their flows are
// not known (see held_frames above): on_frame sees them later, still in frame order.
template <class OnFrame>
bool dissect_each(capture_input& input, const dissect::options& o, OnFrame&& on_frame,
                  const std::atomic<bool>* learn_only = nullptr,
                  dissect::flow_table* hold = nullptr,
                  std::size_t hold_most = held_frames::max_frames) {
  static dissect::large_tree tree;  // room for a PDU full of commands; kept off the stack
  auto& ip_fragments = frame_reassembler();
  ip_fragments.reset();
  const dissect::options light = flows_only(o);
  held_frames held(hold_most);
  std::optional<noting_flows> noting;
  dissect::options noted = o;
  if (hold) noted.flows = &noting.emplace(*hold);
  // A held frame, dissected again with what the table now knows (a tree of its own: the
  // current frame's may still be wanted), and taken.
  static dissect::large_tree again;
  const auto release = [&] {
    held.note_unresolved(*hold);
    held.release([&](const held_frames::frame& h) {
      dissect::dissect_frame(again, h.pkt.data, h.pkt.link, o, ip_fragments, h.pkt.number, h.ns,
                             h.pkt.len);
      on_frame(again, h.pkt, h.ns);
    });
  };
  cap::packet pkt{};
  for (;;) {
    const auto st = input.next(pkt);
    if (st != cap::reader::status::packet) {
      if (hold) release();
      return st == cap::reader::status::end;
    }
    const std::int64_t ns = capture_time_ns(pkt);
    const bool learning = learn_only != nullptr && learn_only->load(std::memory_order_relaxed);
    if (learning || !hold) {
      dissect::dissect_frame(tree, pkt.data, pkt.link, learning ? light : o, ip_fragments,
                             pkt.number, ns, pkt.len);
      if (!learning) on_frame(tree, pkt, ns);
      continue;
    }
    noting->noted.clear();
    watched_reassembler watch{ip_fragments};
    dissect::dissect_frame(tree, pkt.data, pkt.link, noted, watch, pkt.number, ns, pkt.len);
    if (!watch.pushed && held.wants(noting->noted)) {
      held.hold(pkt, ns, {}, noting->noted);
      if (held.due(*hold)) release();
      continue;
    }
    if (held.holding()) release();  // before a fragment's frame
    for (const auto& f : noting->noted) hold->unconfirmed(f);
    on_frame(tree, pkt, ns);
  }
}

// How reading a capture ended.
enum class read_end {
  whole,       // to its end, -c's count, -a's time or a stop signal
  cut_short,   // an interface or a pipe that failed, or -w's file: what was read stands (exit 1)
  unreadable,  // a file that could not be opened or read: its figures would be wrong (exit 1)
};

// stats' and check's reading: start(input) before each pass, then read_pass(input) reads the
// pass's frames (false when reading failed). A capture cut by its snapshot length may hold long
// datagrams of a flow before any whole one showed it SUE: they are held until it does
// (held_frames). When that could not be (more than the frames held at most, or an IP fragment
// among them) and the pass left such datagrams on a flow or port it later recognised, a file is
// read a second time with what the first pass learned (as tshark's two passes do), so a cut
// capture gives the figures of the whole one (issue 17 item 3). A pipe or an interface is read
// once; -w saves the first pass only.
// Whether read_passes reads the file again after this pass (whose figures are then thrown
// away). Once true during the first pass it stays true: the flow table only learns.
inline bool read_again(int pass, const capture_input& input, const dissect::flow_table& flows) {
  return pass == 1 && !input.streaming() && flows.worth_rereading();
}

// Which frames of a pass a command need not analyse: once read_again says the pass is a cut
// file's first, to be read again, its figures will be thrown away when the second starts, so
// the rest of it only teaches the flow table (learn_only(), for dissect_each and
// dissect_in_order). Asked every 4096 frames: worth_rereading walks the unconfirmed flows.
class first_pass_cutoff {
 public:
  void start(const capture_input& input) noexcept {
    ++pass_;
    input_ = &input;
    learning_ = false;
  }
  // In frame order, before a frame is analysed (`frames` analysed so far in this pass): whether
  // it and every later frame of the pass are not.
  bool skip(std::uint64_t frames, const dissect::flow_table& flows) noexcept {
    if (!learning_ && frames % 4096 == 4095 && read_again(pass_, *input_, flows)) learning_ = true;
    return learning_;
  }
  const std::atomic<bool>* learn_only() const noexcept { return &learning_; }

 private:
  int pass_ = 0;
  const capture_input* input_ = nullptr;
  std::atomic<bool> learning_{false};
};

// `drops`: where a live capture's counts are left at its end (capture_drops).
template <class Start, class ReadPass>
read_end read_passes(const input_settings& in, dissect::flow_table& flows, Start&& start,
                     ReadPass&& read_pass, std::optional<capture_drops>* drops = nullptr) {
  input_settings settings = in;
  for (int pass = 1;; ++pass) {
    capture_input input;
    if (!input.open(settings, true)) return read_end::unreadable;
    flows.reset_unconfirmed();
    start(input);
    read_end end = read_end::whole;
    if (!read_pass(input)) {
      fmt::print(stderr, "scaleup: {}\n", input.error());
      if (!input.streaming()) return read_end::unreadable;
      end = read_end::cut_short;
    }
    if (!input.finish()) end = read_end::cut_short;
    if (drops) *drops = input.drops();
    if (!read_again(pass, input, flows)) return end;
    settings.write.clear();
  }
}

// read_passes with each frame dissected, then on_frame(tree, packet, time_ns), in frame order.
// `learn_only` as for dissect_each (a first_pass_cutoff's); frames held as dissect_each holds
// them, `hold_most` at most.
template <class Start, class OnFrame>
read_end read_capture(const input_settings& in, const dissect::options& o,
                      dissect::flow_table& flows, Start&& start, OnFrame&& on_frame,
                      const std::atomic<bool>* learn_only = nullptr,
                      std::size_t hold_most = held_frames::max_frames,
                      std::optional<capture_drops>* drops = nullptr) {
  return read_passes(
      in, flows, start,
      [&](capture_input& input) {
        return dissect_each(input, o, on_frame, learn_only, &flows, hold_most);
      },
      drops);
}

}  // namespace scaleup::cli
