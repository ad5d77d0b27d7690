// What the `scaleup` subcommands share: their command lines (CLI11: the options they have in
// common, declared once), buffered output, and writing frames to a capture together with a JSON
// manifest of what was written.
#pragma once

#include <unistd.h>

#include <fmt/core.h>
#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "app/capture_source.hpp"
#include "app/profile_file.hpp"
#include "app/text_buffer.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/json_writer.hpp"
#include "scaleup/pack/profiles.hpp"
#include "scaleup/pcap/capture.hpp"
#include "scaleup/pcap/capture_file.hpp"
#include "scaleup/wire/frame.hpp"

namespace scaleup::cli {

namespace cap = scaleup::pcap;  // ::pcap is libpcap's struct
using app::profile_names;
using app::text_buffer;

// Time 0 of every simulation `scaleup gen` writes: 2023-11-14 22:13:20 UTC, in nanoseconds
// since the epoch (captures hold absolute times; the simulations count from 0).
inline constexpr std::uint64_t capture_epoch_ns = 1'700'000'000'000'000'000;

// A subcommand and what it does once its command line has parsed: 0 done, 1 a file could not
// be read or written, 2 a usage error found after parsing (a bad --xpu-map file, say).
struct command {
  CLI::App* app;
  std::function<int()> run;
};
using commands = std::vector<command>;

// A usage error found after parsing: the message, then the command's usage line (main.cpp).
int fail_usage(const CLI::App& app, const std::string& message);

template <class T>
std::optional<T> parse_number(std::string_view s) {
  T v{};
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Standard output, gathered in a buffer (a direct_sink too) and written with write(2) a few
// hundred kilobytes at a time; what stdio holds goes first.
// Text that stays where it is for a while (a batch's, app/session.hpp) can be kept by
// reference instead (keep(), until release()): pieces that follow each other in memory make one
// piece, and a large one goes out in one write straight from where it is. Copying a batch's
// output into the buffer read it from the core that wrote it: a fifth of `dump --json` with
// two threads. A small piece is copied into the buffer as before, when it is released.
struct stdout_sink {
  static constexpr std::size_t size = std::size_t{1} << 18;
  char* reserve(std::size_t n) {
    release();
    if (buf.capacity() - buf.size() < n) flush();
    return buf.reserve(n);
  }
  void commit(char* end) noexcept { buf.commit(end); }
  void operator()(std::string_view s) {
    release();
    put(s);
  }
  // Output whose bytes stay where they are, unchanged, until release(): after what came before.
  void keep(std::string_view s) {
    if (!kept_.empty() && kept_.data() + kept_.size() == s.data()) {
      kept_ = std::string_view(kept_.data(), kept_.size() + s.size());
      return;
    }
    release();
    kept_ = s;
  }
  // What keep() holds, written or copied: before its bytes change.
  void release() {
    if (kept_.empty()) return;
    const std::string_view s = kept_;
    kept_ = {};
    put(s);
  }
  void flush() {
    release();
    std::fflush(stdout);
    write_all(buf.view());
    buf.clear();
  }
  stdout_sink() { buf.reserve(size); }
  ~stdout_sink() { flush(); }

 private:
  // A piece after the buffer's: copied into it, or, when it is as large as a quarter of the
  // buffer, written from where it is once the buffer is out.
  void put(std::string_view s) {
    if (s.size() >= size / 4) {
      flush();
      write_all(s);
      return;
    }
    if (buf.capacity() - buf.size() < s.size()) flush();
    char* const p = buf.reserve(s.size());
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    buf.commit(p + s.size());
  }
  static void write_all(std::string_view s) {
    while (!s.empty()) {
      const ssize_t n = ::write(1, s.data(), s.size());
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;  // a closed pipe: SIGPIPE ends the command, as for any writer
      s.remove_prefix(static_cast<std::size_t>(n));
    }
  }
  text_buffer buf;
  std::string_view kept_;  // by reference: see keep()
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

// The options every `gen` command takes: -o/--output FILE, --seed N, --json.
struct gen_settings {
  std::string out;
  std::uint64_t seed = 1;
  bool json = false;
};

inline void add_gen_options(CLI::App* app, gen_settings& g) {
  app->add_option("-o,--output", g.out, "the capture to write (pcap; pcapng when named *.pcapng)")
      ->required();
  app->add_option("--seed", g.seed, "makes the file reproducible")->capture_default_str();
  app->add_flag("--json", g.json, "print what was written (or the statistics) as JSON");
}

// An option that takes one of the names in `choices` and sets `target` to its value; the help
// lists the names.
template <class T>
CLI::Option* add_choice(CLI::App* app, const std::string& name, T& target,
                        std::vector<std::pair<std::string, T>> choices,
                        const std::string& description) {
  std::vector<std::string> names;
  for (const auto& c : choices) names.push_back(c.first);
  return app
      ->add_option_function<std::string>(
          name,
          [&target, choices](const std::string& v) {
            for (const auto& c : choices)
              if (c.first == v) target = c.second;
          },
          description)
      ->check(CLI::IsMember(names));
}

// --link ethernet|afh2: the link type bare AFH Gen 2 frames are written on.
inline CLI::Option* add_link_option(CLI::App* app, std::uint32_t& link) {
  return add_choice<std::uint32_t>(
      app, "--link", link, {{"ethernet", dissect::link_ethernet}, {"afh2", dissect::link_afh2}},
      "ethernet, or afh2: bare AFH Gen 2 frames on link type 147 (afh2, afh2c and lite only)");
}

// What a generator writes its frames to (pcap, or pcapng by its name), saying why it cannot.
class capture_file : public cap::capture_file {
 public:
  bool open(const std::string& path, cap::link_type link, unsigned interfaces = 1) {
    std::string err;
    if (cap::capture_file::open(path, link, 65535, err, interfaces)) return true;
    fmt::print(stderr, "scaleup: {}\n", err.c_str());
    return false;
  }
};

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

  bool open() { return w_.open(path_, static_cast<cap::link_type>(link_)); }

  std::uint32_t link() const { return link_; }

  // Builds and writes one frame. `rh` is null for SUE Lite. Returns false after printing why.
  bool write(const wire::frame_params& p, const wire::reliability_header* rh,
             std::span<const std::uint8_t> payload, std::span<const command_note> cmds) {
    ++number_;
    frame_.resize(payload.size() + 256);
    const auto r =
        rh ? wire::emit_sue_frame(p, *rh, payload, frame_) : wire::emit_frame(p, payload, frame_);
    if (!r) {
      fmt::print(stderr, "scaleup: frame {}: {}\n", number_, r.err.what);
      return false;
    }
    std::size_t len = r.value;
    // Bare AFH Gen 2 frames on their own link type have no minimum size.
    if (link_ != 1)
      len = wire::header_size(p.kind) + (rh ? wire::pdu_size(payload.size()) : payload.size());
    // No simulation behind these frames: one every millisecond.
    const std::uint64_t ts_ns = capture_epoch_ns + number_ * 1'000'000;
    if (!w_.write(std::span<const std::uint8_t>(frame_.data(), len), ts_ns)) {
      fmt::print(stderr, "scaleup: {}\n", w_.error().c_str());
      return false;
    }
    if (json_) manifest(p, rh, payload.size(), cmds);
    return true;
  }

  bool close() {
    if (!w_.close()) {
      fmt::print(stderr, "scaleup: {}\n", w_.error().c_str());
      return false;
    }
    if (!json_)
      fmt::print(stderr, "scaleup: wrote {} frame{} to {}\n",
                 static_cast<unsigned long long>(number_), number_ == 1 ? "" : "s", path_.c_str());
    return true;
  }

 private:
  void manifest(const wire::frame_params& p, const wire::reliability_header* rh,
                std::size_t payload, std::span<const command_note> cmds) {
    dissect::json_writer<stdout_sink> j(out_);
    j.object().member("frame", number_).member("encap", wire::to_string(p.kind));
    if (rh) {
      j.member("sue.rh.ver", rh->ver)
          .member("sue.rh.op", rh->op)
          .member("sue.rh.xpuid", rh->xpuid)
          .member("sue.rh.npsn", rh->npsn)
          .member("sue.rh.vc", rh->vc)
          .member("sue.rh.partition", rh->partition)
          .member("sue.rh.apsn", rh->apsn)
          .member("sue.payload.len", payload)
          .member("sue.rcrc.status", "good");
    } else {
      j.member("sue_lite.len", payload);
    }
    j.member("src_xpu", p.src_xpu).member("dst_xpu", p.dst_xpu).member("tc", p.tc);
    j.array("sue.cmds");
    for (const auto& c : cmds)
      j.object()
          .member(pack::type_field.filter, c.type)
          .member(pack::control_len_filter, c.control)
          .member(pack::data_len_filter, c.data)
          .end();
    j.end().end().raw("\n");
  }

  std::string path_;
  std::uint32_t link_;
  bool json_;
  capture_file w_;
  std::vector<std::uint8_t> frame_;
  std::uint64_t number_ = 0;
  stdout_sink out_;
};

// The note for a command written at p[0] (its framing was checked when it was written).
inline command_note note_of(const pack::profile& prof, std::span<const std::uint8_t> cmd) {
  const pack::command_type* t = prof.find(cmd[0]);
  return {cmd[0], t->control_bytes(), cmd.size() - t->control_bytes()};
}

// Each file declares its subcommand under `parent` and adds it to `out`.
void add_gen_basic(CLI::App& parent, commands& out);
void add_gen_traffic(CLI::App& parent, commands& out);
void add_gen_session(CLI::App& parent, commands& out);
void add_gen_tofu(CLI::App& parent, commands& out);
void add_gen_rdma(CLI::App& parent, commands& out);
void add_dump(CLI::App& parent, commands& out);
void add_stats(CLI::App& parent, commands& out);
void add_check(CLI::App& parent, commands& out);

}  // namespace scaleup::cli
