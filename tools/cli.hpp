// What the `scaleup` subcommands share: argument parsing, buffered output, and writing frames
// to a capture together with a JSON manifest of what was written.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gzip_source.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/xpu_table.hpp"
#include "scaleup/pack/profiles.hpp"
#include "scaleup/pcap/capture.hpp"
#include "scaleup/wire/frame.hpp"

namespace scaleup::cli {

namespace cap = scaleup::pcap;  // ::pcap is libpcap's struct

// Time 0 of every simulation `scaleup gen` writes: 2023-11-14 22:13:20 UTC, in nanoseconds
// since the epoch (captures hold absolute times; the simulations count from 0).
inline constexpr std::uint64_t capture_epoch_ns = 1'700'000'000'000'000'000;

extern const std::string_view usage_text;

inline int fail_usage(const std::string& message) {
  std::fprintf(stderr, "scaleup: %s\n\n%.*s", message.c_str(), static_cast<int>(usage_text.size()),
               usage_text.data());
  return 2;
}

template <class T>
std::optional<T> parse_number(std::string_view s) {
  T v{};
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Walks argv: `flag()` for options, `value()` for their arguments.
class args {
 public:
  explicit args(std::span<const std::string_view> a) : a_(a) {}
  bool done() const { return i_ >= a_.size(); }
  std::string_view flag() { return a_[i_++]; }
  std::optional<std::string_view> value() {
    if (i_ >= a_.size()) return std::nullopt;
    return a_[i_++];
  }
  template <class T>
  std::optional<T> number() {
    const auto v = value();
    return v ? parse_number<T>(*v) : std::nullopt;
  }
  // A probability or a rate in [0, 1].
  std::optional<double> fraction() {
    const auto v = value();
    const auto p = v ? parse_number<double>(*v) : std::nullopt;
    if (!p || !(*p >= 0.0 && *p <= 1.0)) return std::nullopt;
    return p;
  }

 private:
  std::span<const std::string_view> a_;
  std::size_t i_ = 0;
};

// Buffered stdout; the printers write through it.
struct stdout_sink {
  std::string buf;
  void operator()(std::string_view s) {
    buf.append(s);
    if (buf.size() > (1u << 16)) flush();
  }
  void flush() {
    std::fwrite(buf.data(), 1, buf.size(), stdout);
    buf.clear();
    std::fflush(stdout);
  }
  ~stdout_sink() { flush(); }
};

// --encap LIST: comma-separated names or "all"; `allowed` filters "all" and is enforced.
template <class Allowed>
std::optional<std::string> parse_encaps(std::string_view list, Allowed&& allowed,
                                        std::vector<wire::encap>& out) {
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view name = list.substr(start, comma - start);
    if (name == "all") {
      for (std::size_t k = 0; k < wire::encap_names.size(); ++k)
        if (allowed(static_cast<wire::encap>(k))) out.push_back(static_cast<wire::encap>(k));
    } else if (const auto e = wire::encap_from_string(name)) {
      if (!allowed(*e)) return "encapsulation '" + std::string(name) + "' is not allowed here";
      out.push_back(*e);
    } else {
      return "unknown encapsulation '" + std::string(name) + "'";
    }
    start = comma + 1;
  }
  return std::nullopt;
}

inline const pack::profile* profile_by_name(std::string_view name) {
  return pack::find_profile(name);
}

inline std::string profile_names() {
  std::string s;
  for (const auto* p : pack::shipped_profiles)
    s += (s.empty() ? "" : ", ") + std::string(p->name());
  return s;
}

// The options every `gen` command takes: -o/--output FILE, --seed N, --json. nullopt: `flag`
// is not one of them; an empty string: taken; otherwise the usage error.
inline std::optional<std::string> gen_option(std::string_view flag, args& a, std::string& out,
                                             std::uint64_t& seed, bool& json) {
  if (flag == "-o" || flag == "--output") {
    const auto v = a.value();
    if (!v) return "gen: -o needs a file name";
    out = std::string(*v);
  } else if (flag == "--seed") {
    const auto n = a.number<std::uint64_t>();
    if (!n) return "gen: --seed needs a whole number";
    seed = *n;
  } else if (flag == "--json") {
    json = true;
  } else {
    return std::nullopt;
  }
  return std::string{};
}

// The XPU map of this run (--xpu-map), which the options point to.
inline dissect::xpu_table& run_xpu_map() {
  static dissect::xpu_table map;
  return map;
}

// The dissection options `dump` and `stats` share (--udp-port, --profile, --no-heuristics,
// --xpu-map, --check-checksums). nullopt: `flag` is not one of them; an empty string: taken;
// otherwise the usage error.
inline std::optional<std::string> engine_option(std::string_view cmd, std::string_view flag,
                                                args& a, dissect::options& o) {
  const std::string c(cmd);
  if (flag == "--xpu-map") {
    const auto v = a.value();
    if (!v || v->empty()) return c + ": --xpu-map needs a file of lines ADDRESS XPU";
    const std::string path(*v);
    auto m = dissect::read_xpu_map(path);
    if (!m) {
      const auto& e = m.err;
      return c + ": " + path + (e.item ? ":" + std::to_string(e.item) : std::string()) + ": " +
             std::string(e.what) + (e.value ? " (" + std::to_string(e.value) + ")" : "");
    }
    run_xpu_map() = std::move(m.value);
    o.xpus = &run_xpu_map();
  } else if (flag == "--no-heuristics") {
    o.heuristics = false;
  } else if (flag == "--check-checksums") {
    o.check_checksums = true;
  } else if (flag == "--udp-port") {
    const auto n = a.number<std::uint16_t>();
    if (!n || *n == 0) return c + ": --udp-port needs a port number from 1 to 65535";
    if (!o.add_udp_port(*n)) return c + ": too many --udp-port options";
  } else if (flag == "--profile") {
    const std::string_view v = a.value().value_or("");
    if (v == "none") {
      o.profile = nullptr;
    } else if (const auto* p = profile_by_name(v)) {
      o.profile = p;
    } else {
      return c + ": --profile takes none or one of: " + profile_names();
    }
  } else {
    return std::nullopt;
  }
  return std::string{};
}

// Opens a capture for `dump` and `stats`: pcap or pcapng, gzip-compressed or not, told by the
// content (the gzip magic), never by the file name. nullopt after printing why.
inline std::optional<cap::reader> open_capture(const std::string& path) {
  std::string err;
  auto file = cap::file_source::open(path, err);
  if (!file) {
    std::fprintf(stderr, "scaleup: %s: %s\n", path.c_str(), err.c_str());
    return std::nullopt;
  }
  const auto first = file->peek(2);
  std::unique_ptr<cap::byte_source> source = std::move(file);
  if (first.size() == 2 && first[0] == gzip_id1 && first[1] == gzip_id2) {
    source = gzip_source::over(std::move(source));
    if (!source) {
      std::fprintf(stderr, "scaleup: %s: cannot set up gzip decompression\n", path.c_str());
      return std::nullopt;
    }
  }
  auto r = cap::reader::open(std::move(source), path, err);
  if (!r) std::fprintf(stderr, "scaleup: %s\n", err.c_str());
  return r;
}

// A packet's time as the analysis and the IP reassembler count it: signed nanoseconds, enough
// until 2262.
inline std::int64_t capture_time_ns(const cap::packet& p) {
  return static_cast<std::int64_t>(
      std::min<std::uint64_t>(p.ts_ns, std::numeric_limits<std::int64_t>::max()));
}

// One command as the generator knows it, for the manifest.
struct command_note {
  std::uint8_t type = 0;
  std::size_t control = 0;
  std::size_t data = 0;
};

// What a generator writes: frames to a capture, and with --json one manifest object per frame
// built from the values the generator used (never from dissecting its own output), so tests can
// hold `dump --json` against it.
class capture_out {
 public:
  capture_out(std::string path, std::uint32_t link, bool json)
      : path_(std::move(path)), link_(link), json_(json) {}

  bool open() {
    std::string err;
    w_ = cap::writer::create(path_, static_cast<cap::link_type>(link_), 65535, err);
    if (!w_) std::fprintf(stderr, "scaleup: %s\n", err.c_str());
    return w_.has_value();
  }

  std::uint32_t link() const { return link_; }

  // Builds and writes one frame. `rh` is null for SUE Lite. Returns false after printing why.
  bool write(const wire::frame_params& p, const wire::reliability_header* rh,
             std::span<const std::uint8_t> payload, std::span<const command_note> cmds) {
    ++number_;
    frame_.resize(payload.size() + 256);
    const auto r =
        rh ? wire::emit_sue_frame(p, *rh, payload, frame_) : wire::emit_frame(p, payload, frame_);
    if (!r) {
      std::fprintf(stderr, "scaleup: frame %llu: %.*s\n", static_cast<unsigned long long>(number_),
                   static_cast<int>(r.err.what.size()), r.err.what.data());
      return false;
    }
    std::size_t len = r.value;
    // Bare AFH Gen 2 frames on their own link type have no minimum size.
    if (link_ != 1)
      len = wire::header_size(p.kind) + (rh ? wire::pdu_size(payload.size()) : payload.size());
    // No simulation behind these frames: one every millisecond.
    const std::uint64_t ts_ns = capture_epoch_ns + number_ * 1'000'000;
    if (!w_->write(std::span<const std::uint8_t>(frame_.data(), len), ts_ns)) {
      std::fprintf(stderr, "scaleup: %s\n", w_->error().c_str());
      return false;
    }
    if (json_) manifest(p, rh, payload.size(), cmds);
    return true;
  }

  bool close() {
    if (!w_->close()) {
      std::fprintf(stderr, "scaleup: %s\n", w_->error().c_str());
      return false;
    }
    if (!json_)
      std::fprintf(stderr, "scaleup: wrote %llu frame%s to %s\n",
                   static_cast<unsigned long long>(number_), number_ == 1 ? "" : "s",
                   path_.c_str());
    return true;
  }

 private:
  void manifest(const wire::frame_params& p, const wire::reliability_header* rh,
                std::size_t payload, std::span<const command_note> cmds) {
    std::string s = "{\"frame\":" + std::to_string(number_) + ",\"encap\":\"" +
                    std::string(wire::to_string(p.kind)) + "\"";
    const auto num = [&](std::string_view key, std::uint64_t v) {
      s += ",\"" + std::string(key) + "\":" + std::to_string(v);
    };
    if (rh) {
      num("sue.rh.ver", rh->ver);
      num("sue.rh.op", rh->op);
      num("sue.rh.xpuid", rh->xpuid);
      num("sue.rh.npsn", rh->npsn);
      num("sue.rh.vc", rh->vc);
      num("sue.rh.partition", rh->partition);
      num("sue.rh.apsn", rh->apsn);
      num("sue.payload.len", payload);
      s += ",\"sue.rcrc.status\":\"good\"";
    } else {
      num("sue_lite.len", payload);
    }
    num("src_xpu", p.src_xpu);
    num("dst_xpu", p.dst_xpu);
    num("tc", p.tc);
    s += ",\"sue.cmds\":[";
    for (std::size_t i = 0; i < cmds.size(); ++i) {
      s += (i ? ",{" : "{");
      s += "\"sue.cmd.type\":" + std::to_string(cmds[i].type) +
           ",\"sue.cmd.control_len\":" + std::to_string(cmds[i].control) +
           ",\"sue.cmd.data_len\":" + std::to_string(cmds[i].data) + "}";
    }
    s += "]}\n";
    out_(s);
  }

  std::string path_;
  std::uint32_t link_;
  bool json_;
  std::optional<cap::writer> w_;
  std::vector<std::uint8_t> frame_;
  std::uint64_t number_ = 0;
  stdout_sink out_;
};

// The note for a command written at p[0] (its framing was checked when it was written).
inline command_note note_of(const pack::profile& prof, std::span<const std::uint8_t> cmd) {
  const pack::command_type* t = prof.find(cmd[0]);
  return {cmd[0], t->control_bytes(), cmd.size() - t->control_bytes()};
}

int gen_basic(std::span<const std::string_view> args);
int gen_traffic(std::span<const std::string_view> args);
int gen_session(std::span<const std::string_view> args);
int gen_tofu(std::span<const std::string_view> args);
int gen_rdma(std::span<const std::string_view> args);
int dump(std::span<const std::string_view> args);
int stats(std::span<const std::string_view> args);
int check(std::span<const std::string_view> args);

}  // namespace scaleup::cli
