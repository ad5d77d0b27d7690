// `scaleup stats`: the go-back-N sequence analysis of a capture (dissect/analysis.hpp, the one
// the Wireshark plugin runs), per connection, as a table, as JSON, and as PSN-over-time graphs.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <fmt/format.h>

#include "capture_options.hpp"
#include "cli.hpp"
#include "scaleup/dissect/analysis.hpp"

namespace scaleup::cli {

namespace {

// The counts of some connections and their RTTs: one connection's histogram as it is, or the
// connections' merged exactly into `merged` (rtt_histogram.hpp).
struct totals {
  std::uint64_t pdus = 0, retransmissions = 0, duplicates = 0, out_of_order = 0, gaps = 0,
                missing = 0, nacks = 0, acks = 0, window_full = 0;
  const dissect::rtt_histogram* rtt = nullptr;
  const dissect::rtt_record* one = nullptr;  // one connection's, instead

  dissect::rtt_summary summary(std::int64_t quantum) const {
    return one ? dissect::summarize(*one, quantum) : dissect::summarize(*rtt, quantum);
  }

  static totals of(const dissect::connection& c) {
    totals t;
    t.count(c);
    t.one = &c.ack_rtt();
    return t;
  }
  static totals of(const std::vector<dissect::connection>& conns, dissect::rtt_histogram& merged) {
    totals t;
    for (const auto& c : conns) {
      t.count(c);
      merged.merge(c.ack_rtt());
    }
    t.rtt = &merged;
    return t;
  }

 private:
  void count(const dissect::connection& c) {
    pdus += c.pdus;
    retransmissions += c.retransmissions();
    duplicates += c.duplicates();
    out_of_order += c.out_of_order();
    gaps += c.gaps();
    missing += c.missing();
    nacks += c.nacks();
    acks += c.acks;
    window_full += c.window_full();
  }
};

// Times are printed in microseconds with as many decimals as the capture's time stamps have
// beyond the microsecond (packet::precision): 3 for a nanosecond capture, none for a
// microsecond one, so that no digit is shown that the file did not record.
struct time_format {
  cap::precision_digits digits;
  int decimals;
  explicit time_format(cap::precision_digits d)
      : digits(d), decimals(d > cap::micro_digits ? d - cap::micro_digits : 0) {}
  // The time stamps' resolution in ns: percentiles are rounded to it (rtt_histogram.hpp).
  std::int64_t quantum() const {
    std::int64_t q = 1;
    for (int d = digits; d < 9; ++d) q *= 10;
    return q;
  }
  std::string us(std::int64_t ns) const {
    return fmt::format("{:.{}f}", static_cast<double>(ns) / 1000.0, decimals);
  }
};

using json = dissect::json_writer<stdout_sink>;

void json_counts(json& j, const totals& t, const time_format& tf) {
  const auto s = t.summary(tf.quantum());
  j.member("pdus", t.pdus)
      .member("retransmissions", t.retransmissions)
      .member("duplicates", t.duplicates)
      .member("out_of_order", t.out_of_order)
      .member("gaps", t.gaps)
      .member("missing", t.missing)
      .member("nacks", t.nacks)
      .member("acks", t.acks)
      .member("window_full", t.window_full);
  const auto rtt = [&](std::string_view key, auto&& put) {
    j.object(key).member("count", s.count);
    put("min", s.min);
    put("p50", s.p50);
    put("p90", s.p90);
    put("p99", s.p99);
    put("max", s.max);
    // The percentiles come from a histogram (rtt_histogram.hpp): at most this far off, as a
    // fraction of the value; count, min and max are exact.
    j.number_text("percentile_error", fmt::format("{}", dissect::rtt_histogram::relative_error));
    j.end();
  };
  rtt("ack_rtt_us", [&](std::string_view k, std::int64_t ns) { j.number_text(k, tf.us(ns)); });
  rtt("ack_rtt_ns", [&](std::string_view k, std::int64_t ns) { j.member(k, ns); });
}

// ---- the graphs ----------------------------------------------------------------------------

using kind = dissect::psn_event::kind;

// One mark of the graph: an event, or a column's events of one kind (psn_trace.hpp).
struct mark {
  std::int64_t time_ns;
  kind what;
  std::int64_t lowest, highest;
  std::uint64_t count;
};

std::vector<mark> marks_of(const dissect::psn_trace& t) {
  std::vector<mark> out;
  if (!t.folded()) {
    for (const auto& e : t.events()) out.push_back({e.time_ns, e.what, e.psn, e.psn, 1});
    return out;
  }
  for (const auto& c : t.columns())
    for (const kind k : {kind::ack, kind::first, kind::retransmission, kind::nack})
      if (const auto& sp = c.of(k); sp.count)
        out.push_back({c.start_ns + t.width_ns() / 2, k, sp.lowest, sp.highest, sp.count});
  return out;
}

// One panel per connection, like Wireshark's stream graphs (tcptrace): PSN over time, first
// transmissions and retransmissions as dots, NACKs as crosses at the PSN asked for, ACKs as a
// staircase at the highest PSN acknowledged. Beyond psn_trace::default_points events a
// connection is drawn by columns (psn_trace.hpp): a mark per column and kind, stretched over its
// PSNs, with data-n the events it stands for; so the file's size is bounded per connection.
std::string svg(const dissect::analysis& an, std::int64_t t0, std::int64_t t1) {
  const auto& conns = an.connections();
  constexpr double width = 960, panel = 240, left = 70, right = 20, top = 34, bottom = 40;
  constexpr double plot_w = width - left - right, plot_h = panel - top - bottom;
  const double span = std::max<double>(1.0, static_cast<double>(t1 - t0));
  std::string s;
  const auto put = [&]<class... A>(fmt::format_string<A...> f, A&&... v) {
    fmt::format_to(std::back_inserter(s), f, std::forward<A>(v)...);
  };
  const double height = 40 + panel * static_cast<double>(std::max<std::size_t>(1, conns.size()));
  put("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{:.0f}\" height=\"{:.0f}\" "
      "viewBox=\"0 0 {:.0f} {:.0f}\" font-family=\"sans-serif\" font-size=\"11\">\n",
      width, height, width, height);
  s += "<style>.first{fill:#1f77b4}.retransmission{fill:#d62728}"
       ".nack{stroke:#ff7f0e;stroke-width:1.5;fill:none}"
       ".ack{stroke:#2ca02c;stroke-width:1.2;fill:none}.axis{stroke:#444;fill:none}"
       ".grid{stroke:#ddd}</style>\n";
  s += "<g class=\"legend\" transform=\"translate(70,20)\">"
       "<circle class=\"first\" cx=\"0\" cy=\"-4\" r=\"3\"/><text x=\"8\" y=\"0\">first "
       "transmission</text>"
       "<circle class=\"retransmission\" cx=\"130\" cy=\"-4\" r=\"3\"/><text x=\"138\" "
       "y=\"0\">retransmission</text>"
       "<path class=\"nack\" d=\"M250,-7l6,6m0,-6l-6,6\"/><text x=\"262\" y=\"0\">NACK (PSN "
       "asked for)</text>"
       "<path class=\"ack\" d=\"M400,-4h14\"/><text x=\"420\" y=\"0\">ACK (highest PSN "
       "acknowledged)</text></g>\n";
  if (conns.empty()) s += "<text x=\"70\" y=\"80\">no SUE connection in this capture</text>\n";
  for (std::size_t i = 0; i < conns.size(); ++i) {
    const auto& c = conns[i];
    const auto& key = an.key(i);
    const double y0 = 40 + panel * static_cast<double>(i);
    // What is drawn: each event as it was, or, for a long trace, each column's events of a
    // kind as one mark spanning their PSNs (psn_trace.hpp).
    std::vector<mark> marks = marks_of(an.events(i));
    std::int64_t lo = 0, hi = 0;
    for (std::size_t k = 0; k < marks.size(); ++k) {
      lo = k ? std::min(lo, marks[k].lowest) : marks[k].lowest;
      hi = k ? std::max(hi, marks[k].highest) : marks[k].highest;
    }
    if (hi == lo) ++hi;
    const auto x = [&](std::int64_t t) {
      return left + plot_w * static_cast<double>(t - t0) / span;
    };
    const auto y = [&](std::int64_t p) {
      return y0 + top + plot_h * (1.0 - static_cast<double>(p - lo) / static_cast<double>(hi - lo));
    };
    const std::string from = dissect::to_string(key.src), to = dissect::to_string(key.dst);
    put("<g class=\"connection\" data-src=\"{}\" data-dst=\"{}\" data-port=\"{}\" "
        "data-vc=\"{}\">\n",
        from, to, unsigned{key.port}, unsigned{key.vc});
    put("<text x=\"{:.0f}\" y=\"{:.0f}\" font-weight=\"bold\">connection {}: {} to {}, port "
        "{}, VC {}: {} PDUs, {} retransmissions, {} NACKs</text>\n",
        left, y0 + 20, i, from, to, unsigned{key.port}, unsigned{key.vc},
        static_cast<unsigned long long>(c.pdus),
        static_cast<unsigned long long>(c.retransmissions()),
        static_cast<unsigned long long>(c.nacks()));
    put("<rect class=\"axis\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"/>\n",
        left, y0 + top, plot_w, plot_h);
    for (int k = 0; k <= 4; ++k) {
      const double gx = left + plot_w * k / 4.0;
      const double gy = y0 + top + plot_h * k / 4.0;
      put("<path class=\"grid\" d=\"M{:.1f},{:.1f}V{:.1f}M{:.1f},{:.1f}H{:.1f}\"/>", gx, y0 + top,
          y0 + top + plot_h, left, gy, left + plot_w);
      put("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{:.3f}</text>", gx,
          y0 + top + plot_h + 14, span * k / 4.0 / 1000.0);
      put("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{:.0f}</text>\n", left - 4, gy + 4,
          static_cast<double>(hi) - static_cast<double>(hi - lo) * k / 4.0);
    }
    put("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">time (us)</text>",
        left + plot_w / 2, y0 + top + plot_h + 30);
    put("<text transform=\"translate(14,{:.1f}) rotate(-90)\" text-anchor=\"middle\">PSN</text>\n",
        y0 + top + plot_h / 2);
    // ACKs: one staircase, drawn first so the dots stay on top.
    std::string steps;
    for (const auto& m : marks) {
      if (m.what != kind::ack) continue;
      // Across to the ACK's time, then up to its PSN (through a column's lowest to its highest).
      const double mx = x(m.time_ns);
      if (steps.empty())
        fmt::format_to(std::back_inserter(steps), "M{:.1f},{:.1f}", mx, y(m.lowest));
      else
        fmt::format_to(std::back_inserter(steps), "H{:.1f}V{:.1f}", mx, y(m.lowest));
      if (m.highest != m.lowest) fmt::format_to(std::back_inserter(steps), "V{:.1f}", y(m.highest));
    }
    if (!steps.empty()) s += "<path class=\"ack\" d=\"" + steps + "\"/>\n";
    for (const auto& m : marks) {
      // data-n: how many events a column's mark stands for.
      const std::string n = m.count > 1 ? fmt::format(" data-n=\"{}\"", m.count) : std::string();
      const double mx = x(m.time_ns), top_y = y(m.highest), low_y = y(m.lowest);
      switch (m.what) {
        case kind::first:
        case kind::retransmission: {
          const char* cls = m.what == kind::first ? "first" : "retransmission";
          if (m.highest == m.lowest)
            put("<circle class=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2\"{}/>", cls, mx, top_y, n);
          else  // a dot stretched over the column's PSNs
            put("<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"4\" height=\"{:.1f}\" "
                "rx=\"2\"{}/>",
                cls, mx - 2, top_y - 2, low_y - top_y + 4, n);
          break;
        }
        case kind::nack:
          if (m.highest == m.lowest)
            put("<path class=\"nack\" d=\"M{:.1f},{:.1f}l6,6m0,-6l-6,6\"{}/>", mx - 3, top_y - 3,
                n);
          else  // crosses at the lowest and highest PSN asked for, joined
            put("<path class=\"nack\" d=\"M{:.1f},{:.1f}l6,6m0,-6l-6,6M{:.1f},{:.1f}l6,6m0,-6l-6,"
                "6M{:.1f},{:.1f}V{:.1f}\"{}/>",
                mx - 3, top_y - 3, mx - 3, low_y - 3, mx, top_y, low_y, n);
          break;
        case kind::ack:
          break;
      }
    }
    s += "\n</g>\n";
  }
  s += "</svg>\n";
  return s;
}

// A connection's ends in JSON (docs/wire-format.md, "stats --json"): "src" and "dst" as text
// ("XPU 7", "192.168.1.10"), then what the frames gave: "src_xpu" and "dst_xpu" where the ends
// are XPU ids, "src_ip" and "dst_ip" where they are IP addresses, with "src_xpu" then the RH's
// xpuid. No destination XPU is made up from an address.
void json_ends(json& j, const dissect::connection& c, const dissect::connection_key& key) {
  const auto end = [&](std::string_view side, const dissect::endpoint& e) {
    const std::string text = dissect::to_string(e);
    j.member(side, text);
    if (e.is_xpu())
      j.member(std::string(side) + "_xpu", e.xpu);
    else
      j.member(std::string(side) + "_ip", text);
  };
  end("src", key.src);
  end("dst", key.dst);
  if (!key.src.is_xpu() && c.src_xpu) j.member("src_xpu", *c.src_xpu);
}

// The text table's name of an end; an IP source with the RH's xpuid after it.
std::string text_end(const dissect::endpoint& e, std::optional<std::uint16_t> xpuid = {}) {
  if (e.is_xpu()) return std::to_string(e.xpu);
  return dissect::to_string(e) + (xpuid ? " (XPU " + std::to_string(*xpuid) + ")" : "");
}

report_notes notes_of(const dissect::analysis& an, const scaleup::app::session& se) {
  return {an.not_analysed_frames(), an.config().max_connections, se.flows(), se.drops()};
}

// The table: a heading, a row per connection, the totals.
void put_table(stdout_sink& out, const std::string& name, std::uint64_t frames,
               std::uint64_t analysed, std::uint64_t left_out, const dissect::analysis& an,
               const report_notes& notes, const time_format& tf) {
  const auto& conns = an.connections();
  dissect::rtt_histogram merged;
  const totals all = totals::of(conns, merged);
  out(
      fmt::format("{}: {} frames, {} SUE PDUs analysed ({} left out: errors), {} connections, "
                  "window {}\n",
                  name, frames, analysed, left_out, conns.size(), an.config().window));
  notes.put_text(out, "analysed");
  // Ends are XPU ids, or IP addresses: the columns are as wide as the widest.
  std::size_t src_w = 6, dst_w = 6;
  for (std::size_t i = 0; i < conns.size(); ++i) {
    src_w = std::max(src_w, text_end(an.key(i).src, conns[i].src_xpu).size());
    dst_w = std::max(dst_w, text_end(an.key(i).dst).size());
  }
  out(
      fmt::format("  conn {:>{}} {:>{}} port vc    PDUs  retrans    dup  ooo gaps missing  NACKs   "
                  "ACKs wfull   RTT p50/p90/p99 (us)\n",
                  "src", src_w, "dst", dst_w));
  const auto row = [&](const std::string& head, const totals& t) {
    const auto s = t.summary(tf.quantum());
    out(fmt::format("{} {:7} {:8} {:6} {:4} {:4} {:7} {:6} {:6} {:5}   ", head, t.pdus,
                    t.retransmissions, t.duplicates, t.out_of_order, t.gaps, t.missing, t.nacks,
                    t.acks, t.window_full));
    out(s.count ? tf.us(s.p50) + "/" + tf.us(s.p90) + "/" + tf.us(s.p99) : std::string("-"));
    out("\n");
  };
  for (std::size_t i = 0; i < conns.size(); ++i) {
    const auto& c = conns[i];
    const auto& key = an.key(i);
    row(fmt::format("{:>6} {:>{}} {:>{}} {:4} {:2}", i, text_end(key.src, c.src_xpu), src_w,
                    text_end(key.dst), dst_w, unsigned{key.port}, unsigned{key.vc}),
        totals::of(c));
  }
  row("   all" + std::string(src_w + dst_w + 10, ' '), all);
}

struct stats_settings {
  app::session_settings session;
  bool json = false;
  std::string svg_out;
  std::uint32_t window = 256;
  double interval = 0;
};

// The report: the frames counted, the table (and, with --interval, the table while reading).
class stats_report final : public app::frame_consumer {
 public:
  stats_report(const stats_settings& s, stdout_sink& out) : s_(s), out_(out) {}

  void attach(const app::session& se) { session_ = &se; }

  void start(const app::reading& r) override {
    name = r.name;
    frames = analysed = left_out = 0;
    t0 = t1 = 0;
    digits = 0;
    next_table_ = clock::now() + interval();
  }
  void take(const app::frame_out& f) override {
    digits = std::max(digits, f.in.pkt.precision);
    if (frames++ == 0) t0 = f.in.ns;
    t1 = std::max(t1, f.in.ns);
    if (f.facts)
      ++analysed;
    else
      left_out += f.rh_dropped;
    idle();
  }
  // The table when it is due, frames or not (a quiet link still gets its redraw).
  void idle() override {
    if (s_.interval <= 0 || clock::now() < next_table_) return;
    table();
    out_.flush();
    next_table_ = clock::now() + interval();
  }

  void table() {
    // --interval: the table every S seconds while reading, redrawn in place on a terminal.
    if (s_.interval > 0 && !s_.json && ::isatty(1)) out_("\x1b[H\x1b[2J");
    const dissect::analysis& an = *session_->analysis();
    put_table(out_, name, frames, analysed, left_out, an, notes_of(an, *session_),
              time_format(frames ? digits : cap::micro_digits));
  }

  // From here, what take writes at every frame: apart from the start of the object
  // (frame_consumer::look).
  alignas(64) std::string name;
  std::uint64_t frames = 0, analysed = 0, left_out = 0;
  std::int64_t t0 = 0, t1 = 0;
  cap::precision_digits digits = 0;  // the finest any packet has

 private:
  using clock = std::chrono::steady_clock;
  clock::duration interval() const {
    return std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(s_.interval));
  }
  const stats_settings& s_;
  stdout_sink& out_;
  const app::session* session_ = nullptr;
  clock::time_point next_table_{};
};

int run_stats(const CLI::App& app, const stats_settings& s) {
  scaleup::app::session_settings ss = s.session;
  ss.engine.nodes = false;  // the analysis reads the PDU's summary only
  dissect::analysis_config cfg;
  cfg.window = s.window;
  cfg.record_events = !s.svg_out.empty();
  cfg.keep_results = false;  // one pass in frame order: no frame is asked about again
  cfg.max_connections = ss.engine.max_connections;
  ss.analysis = cfg;
  ss.reread = true;
  ss.progress = true;
  // --interval's tables show the first reading as it is read, one frame at a time.
  if (s.interval > 0) {
    ss.threads = 1;
    ss.cut_first_reading = false;
  }
  scaleup::app::session se(ss);
  if (const auto bad = se.prepare()) return fail_usage(app, *bad);
  if (const auto* f = se.filter()) {
    if (f->needs_analysis())
      return fail_usage(app,
                        "-Y: stats computes sue.analysis.* from the frames the filter keeps: "
                        "the filter cannot name them");
    if (f->needs_conformance())
      return fail_usage(app, "-Y: sue.check.* are `scaleup check`'s and `dump -Y`'s, not stats'");
  }
  stdout_sink out;
  stats_report r(s, out);
  r.attach(se);
  const auto end = se.run(r);
  if (end == scaleup::app::read_end::unreadable) return 1;
  const int status = end == scaleup::app::read_end::whole ? 0 : 1;

  const dissect::analysis& an = *se.analysis();
  const auto& conns = an.connections();
  const report_notes notes = notes_of(an, se);
  if (!s.svg_out.empty()) {
    std::ofstream svg_file(s.svg_out, std::ios::binary);
    svg_file << svg(an, r.t0, r.t1);
    if (!svg_file.flush()) {
      fmt::print(stderr, "scaleup: {}: cannot write\n", s.svg_out.c_str());
      return 1;
    }
  }
  const time_format tf(r.frames ? r.digits : cap::micro_digits);
  if (!s.json) {
    if (s.interval > 0) out("totals\n");
    put_table(out, r.name, r.frames, r.analysed, r.left_out, an, notes, tf);
    return status;
  }
  dissect::rtt_histogram merged;
  const totals all = totals::of(conns, merged);
  json j(out);
  j.object()
      .member("file", r.name)
      .member("frames", r.frames)
      .member("analysed", r.analysed)
      .member("left_out", r.left_out)
      .member("window", cfg.window)
      .member("time_precision", tf.digits)
      .member("connection_count", conns.size());
  notes.put_json(j);
  json_counts(j, all, tf);
  j.array("connections");
  for (std::size_t i = 0; i < conns.size(); ++i) {
    const auto& c = conns[i];
    j.object().member("connection", i);
    json_ends(j, c, an.key(i));
    j.member("port", an.key(i).port)
        .member("vc", an.key(i).vc)
        .member("frames", c.frames)
        .member("bytes", c.bytes)
        .number_text("first_us", tf.us(c.first_ns - r.t0))
        .number_text("last_us", tf.us(c.last_ns - r.t0))
        .member("first_ns", c.first_ns - r.t0)
        .member("last_ns", c.last_ns - r.t0);
    json_counts(j, totals::of(c), tf);
    j.end();
  }
  j.end().end().raw("\n");
  return status;
}

}  // namespace

void add_stats(CLI::App& parent, commands& out) {
  auto s = std::make_shared<stats_settings>();
  CLI::App* app = parent.add_subcommand(
      "stats",
      "Go-back-N sequence analysis (the one the Wireshark plugin shows) per connection {source, "
      "destination, port, VC}: PDUs, retransmissions, duplicates, out-of-order PDUs, gaps, "
      "NACKs, ACKs, window-full events and ACK RTT percentiles (from a histogram: within 0.4 %; "
      "count, min and max exact). Memory grows with the connections, not the frames.");
  add_input_options(app, s->session.source);
  app->add_flag("--json", s->json, "one JSON object");
  app->add_option("--svg", s->svg_out,
                  "draw PSN over time per connection to this file (beyond 1024 events a "
                  "connection is drawn in 512 time columns: bounded size)");
  app->add_option("--window", s->window, "the go-back-N window")
      ->check(CLI::Range(1, 32767))
      ->capture_default_str();
  app->add_option("--interval", s->interval,
                  "print the table every S seconds while reading (redrawn on a terminal)")
      ->check(CLI::PositiveNumber);
  add_engine_options(app, s->session.engine);
  add_thread_options(app, s->session);
  add_hold_option(app, s->session);
  add_filter_option(app, s->session.filter, scaleup::app::filter_scope::counted,
                    "analyse and count only the frames it keeps (frames in the output counts "
                    "them). The analysis needs both directions of a connection: a filter that "
                    "keeps a connection's PDUs but not the ACKs coming back (sue.rh.xpuid == 7 "
                    "alone) finds no ACK; keep whole conversations (sue.rh.vc == 1, ip.addr == A "
                    "&& ip.addr == B)");
  out.push_back({app, [app, s] { return run_stats(*app, *s); }});
}

}  // namespace scaleup::cli
