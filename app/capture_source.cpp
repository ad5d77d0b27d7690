// Capture sources (capture_source.hpp): files, pipes, gzip and live interfaces.
#include "app/capture_source.hpp"

#include <fcntl.h>
#include <pcap/pcap.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "app/gzip_source.hpp"
#include "scaleup/pcap/capture_file.hpp"

namespace scaleup::app {

namespace {

volatile std::sig_atomic_t stop_signal = 0;
std::atomic<pcap_t*> live_handle{nullptr};

extern "C" void on_stop_signal(int sig) {
  stop_signal = sig;
  // Wakes a live capture blocked in the kernel (libpcap documents it safe in a handler).
  if (pcap_t* p = live_handle.load()) pcap_breakloop(p);
}

}  // namespace

std::optional<double> autostop_seconds(std::string_view s) {
  if (!s.starts_with("duration:")) return std::nullopt;
  double n = 0;
  const auto v = s.substr(9);
  const auto r = std::from_chars(v.data(), v.data() + v.size(), n);
  if (r.ec != std::errc{} || r.ptr != v.data() + v.size() || !(n > 0)) return std::nullopt;
  return n;
}

void catch_stop_signals() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested() noexcept { return stop_signal != 0; }

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

void progress_line::start(const counting_source* src, std::uint64_t total) {
  src_ = src;
  total_ = total;
  began_ = next_ = std::chrono::steady_clock::now() + std::chrono::seconds(1);
}

void progress_line::draw(std::uint64_t frames) {
  const auto now = std::chrono::steady_clock::now();
  if (now < next_) return;
  next_ = now + std::chrono::milliseconds(500);
  const double secs = std::chrono::duration<double>(now - began_).count() + 1.0;
  const double done = static_cast<double>(src_->count());
  const double left = done > 0 ? secs * (static_cast<double>(total_) - done) / done : 0;
  std::fprintf(stderr, "\r%.1f of %.1f MB, %.0f frames/s, %.0f s left \x1b[K", done / 1e6,
               static_cast<double>(total_) / 1e6, static_cast<double>(frames) / secs,
               std::max(0.0, left));
  shown_ = true;
}

void progress_line::finish() {
  if (shown_) std::fprintf(stderr, "\r\x1b[K");
  shown_ = false;
}

// ---- the source -----------------------------------------------------------------------------

capture_source::capture_source() = default;

capture_source::~capture_source() {
  if (live_) {
    live_handle.store(nullptr);
    pcap_close(live_);
  }
}

bool capture_source::open(const source_settings& in, bool progress) {
  progress_wanted_ = progress && ::isatty(2);
  count_limit_ = in.count;
  write_path_ = in.write;
  name_ = in.read.empty() ? in.file : in.read;
  errors_ = in.errors;
  stop_ = in.stop;
  if (in.memory) {
    auto source = std::make_unique<cap::memory_source>(*in.memory);
    return open_bytes(std::move(source),
                      in.memory->first(std::min<std::size_t>(2, in.memory->size())), name_);
  }
  if (in.catch_signals) catch_stop_signals();
  if (!in.interface.empty()) return open_live(in);
  return open_file(name_);
}

bool capture_source::finish() {
  progress_.finish();
  if (writer_ && !writer_->close()) {
    std::fprintf(stderr, "scaleup: %s\n", writer_->error().c_str());
    return false;
  }
  if (ng_writer_ && !ng_writer_->close()) {
    std::fprintf(stderr, "scaleup: %s\n", ng_writer_->error().c_str());
    return false;
  }
  return true;
}

bool capture_source::open_file(const std::string& path) {
  std::string err;
  std::unique_ptr<cap::byte_source> source;
  std::span<const std::uint8_t> first;
  struct stat st {};
  const bool standard_input = path == "-";
  if (standard_input || (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode))) {
    const int fd = standard_input ? 0 : ::open(path.c_str(), O_RDONLY);
    if (fd < 0) {
      complain(path + ": " + std::strerror(errno));
      return false;
    }
    auto pipe = std::make_unique<pipe_source>(fd, !standard_input);
    first = pipe->peek(2);
    source = std::move(pipe);
    streaming_ = true;
  } else {
    auto file = cap::file_source::open(path, err);
    if (!file) {
      complain(path + ": " + err);
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
  return open_bytes(std::move(source), first, standard_input ? "(standard input)" : path);
}

bool capture_source::open_bytes(std::unique_ptr<cap::byte_source> source,
                                std::span<const std::uint8_t> first, const std::string& name) {
  // gzip is told by the content (its magic), never by the file name.
  if (first.size() == 2 && first[0] == gzip_id1 && first[1] == gzip_id2) {
    source = gzip_source::over(std::move(source));
    if (!source) {
      complain(name + ": cannot set up gzip decompression");
      return false;
    }
  }
  std::string err;
  reader_ = cap::reader::open(std::move(source), name, err);
  if (!reader_) {
    complain(err);
    return false;
  }
  return true;
}

bool capture_source::open_live(const source_settings& in) {
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
    std::fprintf(stderr, "scaleup: %s: cannot wait for frames: %s\n", in.interface.c_str(), errbuf);
    return false;
  }
  nano_ = pcap_get_tstamp_precision(live_) == PCAP_TSTAMP_PRECISION_NANO;
  link_ = static_cast<std::uint32_t>(pcap_datalink(live_));
  started_ = std::chrono::steady_clock::now();
  live_handle.store(live_);
  std::fprintf(stderr, "Capturing on '%s'\n", in.interface.c_str());
  return true;
}

capture_source::status capture_source::next_live(cap::packet& pkt) {
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

bool capture_source::save(const cap::packet& pkt) {
  if (cap::names_pcapng(write_path_)) return save_pcapng(pkt);
  if (!writer_) {
    std::string err;
    writer_ = cap::writer::create(
        write_path_, static_cast<cap::link_type>(pkt.link), cap::max_snaplen, err,
        pkt.precision > cap::micro_digits ? cap::time_precision::nano : cap::time_precision::micro);
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

// pcapng keeps what a pcap cannot: each frame's interface, with its link type and name, so a
// capture of several interfaces or link types is saved whole. An interface is described when its
// first frame is saved.
bool capture_source::save_pcapng(const cap::packet& pkt) {
  if (!ng_writer_) {
    std::string err;
    auto w = cap::pcapng_writer::create(write_path_, {}, cap::max_snaplen, err);
    if (!w) return fail(err);
    ng_writer_.emplace(std::move(*w));
  }
  constexpr std::uint32_t none = ~std::uint32_t{0};
  // Bounded by the interfaces the source described (the reader refuses a frame of another).
  if (pkt.interface >= saved_as_.size()) saved_as_.resize(std::size_t{pkt.interface} + 1, none);
  std::uint32_t& id = saved_as_[pkt.interface];
  if (id == none) {
    std::string name = name_;  // a live capture's interface
    if (reader_) {
      const auto ifs = reader_->interfaces();
      name = pkt.interface < ifs.size() ? ifs[pkt.interface].name : std::string();
    }
    if (!ng_writer_->add_interface({static_cast<cap::link_type>(pkt.link), std::move(name)}))
      return fail(ng_writer_->error());
    id = ng_writer_->interfaces() - 1;
  }
  if (!ng_writer_->write(id, pkt.data, pkt.ts_ns, pkt.len)) return fail(ng_writer_->error());
  if (streaming_) ng_writer_->flush();
  return true;
}

void capture_source::complain(const std::string& what) const {
  if (errors_)
    *errors_ = what;
  else
    std::fprintf(stderr, "scaleup: %s\n", what.c_str());
}

bool capture_source::fail(std::string why) {
  error_ = std::move(why);
  failed_ = true;
  return false;
}

std::optional<capture_drops> capture_source::drops() const {
  pcap_stat st{};
  if (!live_ || pcap_stats(live_, &st) != 0) return std::nullopt;
  return capture_drops{st.ps_recv, st.ps_drop, st.ps_ifdrop};
}

}  // namespace scaleup::app
