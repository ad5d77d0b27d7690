// `scaleup stats`: the go-back-N sequence analysis of a capture (dissect/analysis.hpp, the one
// the Wireshark plugin runs), per connection, as a table, as JSON, and as PSN-over-time graphs.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <string>

#include "cli.hpp"
#include "scaleup/dissect/analysis.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/flow_table.hpp"
#include "scaleup/dissect/ip_reassembly.hpp"

namespace scaleup::cli {

namespace {

struct totals {
  std::uint64_t pdus = 0, retransmissions = 0, duplicates = 0, out_of_order = 0, gaps = 0,
                missing = 0, nacks = 0, acks = 0, window_full = 0;
  std::vector<std::int64_t> rtt;

  void add(const dissect::connection& c) {
    pdus += c.pdus;
    retransmissions += c.retransmissions;
    duplicates += c.duplicates;
    out_of_order += c.out_of_order;
    gaps += c.gaps;
    missing += c.missing;
    nacks += c.nacks;
    acks += c.acks;
    window_full += c.window_full;
    rtt.insert(rtt.end(), c.ack_rtt_ns.begin(), c.ack_rtt_ns.end());
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
  std::string us(std::int64_t ns) const {
    char b[40];
    std::snprintf(b, sizeof b, "%.*f", decimals, static_cast<double>(ns) / 1000.0);
    return b;
  }
};

std::string json_counts(const totals& t, const time_format& tf) {
  const auto s = dissect::summarize(t.rtt);
  const auto rtt = [&](auto&& put) {
    return "{\"count\":" + std::to_string(s.count) + ",\"min\":" + put(s.min) +
           ",\"p50\":" + put(s.p50) + ",\"p90\":" + put(s.p90) + ",\"p99\":" + put(s.p99) +
           ",\"max\":" + put(s.max) + "}";
  };
  return "\"pdus\":" + std::to_string(t.pdus) +
         ",\"retransmissions\":" + std::to_string(t.retransmissions) +
         ",\"duplicates\":" + std::to_string(t.duplicates) +
         ",\"out_of_order\":" + std::to_string(t.out_of_order) +
         ",\"gaps\":" + std::to_string(t.gaps) + ",\"missing\":" + std::to_string(t.missing) +
         ",\"nacks\":" + std::to_string(t.nacks) + ",\"acks\":" + std::to_string(t.acks) +
         ",\"window_full\":" + std::to_string(t.window_full) +
         ",\"ack_rtt_us\":" + rtt([&](std::int64_t ns) { return tf.us(ns); }) +
         ",\"ack_rtt_ns\":" + rtt([](std::int64_t ns) { return std::to_string(ns); });
}

// ---- the graphs ----------------------------------------------------------------------------

// One panel per connection, like Wireshark's stream graphs (tcptrace): PSN over time, first
// transmissions and retransmissions as dots, NACKs as crosses at the PSN asked for, ACKs as a
// staircase at the highest PSN acknowledged.
std::string svg(const std::vector<dissect::connection>& conns, std::int64_t t0, std::int64_t t1) {
  constexpr double width = 960, panel = 240, left = 70, right = 20, top = 34, bottom = 40;
  constexpr double plot_w = width - left - right, plot_h = panel - top - bottom;
  const double span = std::max<double>(1.0, static_cast<double>(t1 - t0));
  std::string s;
  char b[256];
  const auto put = [&](const char* fmt, auto... v) {
    std::snprintf(b, sizeof b, fmt, v...);
    s += b;
  };
  const double height = 40 + panel * static_cast<double>(std::max<std::size_t>(1, conns.size()));
  put("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\" font-size=\"11\">\n",
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
    const double y0 = 40 + panel * static_cast<double>(i);
    std::int64_t lo = 0, hi = 0;
    bool any = false;
    for (const auto& e : c.events) {
      lo = any ? std::min(lo, e.psn) : e.psn;
      hi = any ? std::max(hi, e.psn) : e.psn;
      any = true;
    }
    if (hi == lo) ++hi;
    const auto x = [&](std::int64_t t) {
      return left + plot_w * static_cast<double>(t - t0) / span;
    };
    const auto y = [&](std::int64_t p) {
      return y0 + top + plot_h * (1.0 - static_cast<double>(p - lo) / static_cast<double>(hi - lo));
    };
    const std::string from = dissect::to_string(c.key.src), to = dissect::to_string(c.key.dst);
    put("<g class=\"connection\" data-src=\"%s\" data-dst=\"%s\" data-port=\"%u\" "
        "data-vc=\"%u\">\n",
        from.c_str(), to.c_str(), unsigned{c.key.port}, unsigned{c.key.vc});
    put("<text x=\"%.0f\" y=\"%.0f\" font-weight=\"bold\">connection %zu: %s to %s, port "
        "%u, VC %u: %llu PDUs, %llu retransmissions, %llu NACKs</text>\n",
        left, y0 + 20, i, from.c_str(), to.c_str(), unsigned{c.key.port}, unsigned{c.key.vc},
        static_cast<unsigned long long>(c.pdus), static_cast<unsigned long long>(c.retransmissions),
        static_cast<unsigned long long>(c.nacks));
    put("<rect class=\"axis\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", left,
        y0 + top, plot_w, plot_h);
    for (int k = 0; k <= 4; ++k) {
      const double gx = left + plot_w * k / 4.0;
      const double gy = y0 + top + plot_h * k / 4.0;
      put("<path class=\"grid\" d=\"M%.1f,%.1fV%.1fM%.1f,%.1fH%.1f\"/>", gx, y0 + top,
          y0 + top + plot_h, left, gy, left + plot_w);
      put("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%.3f</text>", gx,
          y0 + top + plot_h + 14, span * k / 4.0 / 1000.0);
      put("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%.0f</text>\n", left - 4, gy + 4,
          static_cast<double>(hi) - static_cast<double>(hi - lo) * k / 4.0);
    }
    put("<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">time (us)</text>", left + plot_w / 2,
        y0 + top + plot_h + 30);
    put("<text transform=\"translate(14,%.1f) rotate(-90)\" text-anchor=\"middle\">PSN</text>\n",
        y0 + top + plot_h / 2);
    // ACKs: one staircase, drawn first so the dots stay on top.
    std::string steps;
    for (const auto& e : c.events) {
      if (e.what != dissect::psn_event::kind::ack) continue;
      // Across to the ACK's time, then up to its PSN.
      if (steps.empty())
        std::snprintf(b, sizeof b, "M%.1f,%.1f", x(e.time_ns), y(e.psn));
      else
        std::snprintf(b, sizeof b, "H%.1fV%.1f", x(e.time_ns), y(e.psn));
      steps += b;
    }
    if (!steps.empty()) s += "<path class=\"ack\" d=\"" + steps + "\"/>\n";
    for (const auto& e : c.events) {
      switch (e.what) {
        case dissect::psn_event::kind::first:
        case dissect::psn_event::kind::retransmission:
          put("<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"2\"/>",
              e.what == dissect::psn_event::kind::first ? "first" : "retransmission", x(e.time_ns),
              y(e.psn));
          break;
        case dissect::psn_event::kind::nack:
          put("<path class=\"nack\" d=\"M%.1f,%.1fl6,6m0,-6l-6,6\"/>", x(e.time_ns) - 3,
              y(e.psn) - 3);
          break;
        case dissect::psn_event::kind::ack:
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
std::string json_ends(const dissect::connection& c) {
  const auto end = [](std::string_view side, const dissect::endpoint& e) {
    std::string s = ",\"" + std::string(side) + "\":\"" + dissect::to_string(e) + "\"";
    if (e.is_xpu())
      s += ",\"" + std::string(side) + "_xpu\":" + std::to_string(e.xpu);
    else
      s += ",\"" + std::string(side) + "_ip\":\"" + dissect::to_string(e) + "\"";
    return s;
  };
  std::string s = end("src", c.key.src) + end("dst", c.key.dst);
  if (!c.key.src.is_xpu() && c.src_xpu) s += ",\"src_xpu\":" + std::to_string(*c.src_xpu);
  return s;
}

// The text table's name of an end; an IP source with the RH's xpuid after it.
std::string text_end(const dissect::endpoint& e, std::optional<std::uint16_t> xpuid = {}) {
  if (e.is_xpu()) return std::to_string(e.xpu);
  return dissect::to_string(e) + (xpuid ? " (XPU " + std::to_string(*xpuid) + ")" : "");
}

}  // namespace

int stats(std::span<const std::string_view> argv) {
  std::string file, svg_out;
  bool json = false;
  dissect::options o;
  o.command_nodes = false;    // the analysis reads the headers and the errors only
  dissect::flow_table flows;  // UDP flows found SUE stay SUE (wire/udp_flow.hpp)
  o.flows = &flows;
  dissect::analysis_config cfg;
  args a(argv);
  while (!a.done()) {
    const std::string_view f = a.flag();
    if (f == "--json") {
      json = true;
    } else if (f == "--svg") {
      const auto v = a.value();
      if (!v || v->empty()) return fail_usage("stats: --svg needs an output file name");
      svg_out = std::string(*v);
    } else if (f == "--window") {
      const auto n = a.number<std::uint32_t>();
      if (!n || *n == 0 || *n >= 32768)
        return fail_usage("stats: --window needs a number from 1 to 32767");
      cfg.window = *n;
    } else if (const auto taken = engine_option("stats", f, a, o)) {
      if (!taken->empty()) return fail_usage(*taken);
    } else if (!f.empty() && f[0] == '-' && f != "-") {
      return fail_usage("stats: unknown option '" + std::string(f) + "'");
    } else if (file.empty()) {
      file = std::string(f);
    } else {
      return fail_usage("stats: one capture file at a time");
    }
  }
  if (file.empty()) return fail_usage("stats: which capture file?");
  cfg.record_events = !svg_out.empty();

  static dissect::large_tree tree;  // room for a PDU full of commands; kept off the stack
  static wire::ip_reassembler<> ip_fragments;  // about 4 MiB: kept off the stack
  std::optional<dissect::analysis> an;
  std::uint64_t frames = 0, analysed = 0, left_out = 0;
  std::int64_t t0 = 0, t1 = 0;
  cap::precision_digits digits = 0;  // the finest any packet has
  // One pass over the capture. A capture cut by its snapshot length may hold long datagrams of
  // a flow before any whole one showed it SUE: when that happened, the file is read a second
  // time with the flows and ports the first pass recognised (as tshark's two passes do), so a
  // cut capture gives the figures of the whole one (issue 17 item 3).
  const auto pass = [&]() -> bool {
    auto r = open_capture(file);
    if (!r) return false;
    an.emplace(cfg);
    ip_fragments.reset();
    flows.reset_unconfirmed();
    frames = analysed = left_out = 0;
    t0 = t1 = 0;
    digits = 0;
    cap::packet pkt{};
    for (;;) {
      const auto st = r->next(pkt);
      if (st == cap::reader::status::end) break;
      if (st == cap::reader::status::error) {
        std::fprintf(stderr, "scaleup: %s\n", r->error().c_str());
        return false;
      }
      const std::int64_t ns = capture_time_ns(pkt);
      digits = std::max(digits, pkt.precision);
      if (frames++ == 0) t0 = ns;
      t1 = std::max(t1, ns);
      // With the length on the wire: a frame the snapshot length cut counts as long as its RH
      // was captured (dissect/analysis.hpp says which frames count). A reassembled PDU counts
      // at the time of the frame that completed it.
      dissect::dissect_frame(tree, pkt.data, pkt.link, o, ip_fragments, pkt.number, ns, pkt.len);
      const auto facts = dissect::facts_of(tree, pkt.number, ns);
      if (!facts) {
        left_out += tree.find_layer("sue.rh") != nullptr;
        continue;
      }
      ++analysed;
      an->add(*facts);
    }
    return true;
  };
  if (!pass()) return 1;
  // Standard input cannot be read twice.
  if (flows.worth_rereading() && file != "-" && !pass()) return 1;

  const auto& conns = an->connections();
  if (!svg_out.empty()) {
    std::ofstream out(svg_out, std::ios::binary);
    out << svg(conns, t0, t1);
    if (!out.flush()) {
      std::fprintf(stderr, "scaleup: %s: cannot write\n", svg_out.c_str());
      return 1;
    }
  }
  totals all;
  for (const auto& c : conns) all.add(c);
  const time_format tf(frames ? digits : cap::micro_digits);
  stdout_sink out;
  if (json) {
    out("{\"file\":\"");
    for (const char ch : file) {
      if (ch == '"' || ch == '\\') out("\\");
      out(std::string_view(&ch, 1));
    }
    out("\",\"frames\":" + std::to_string(frames) + ",\"analysed\":" + std::to_string(analysed) +
        ",\"left_out\":" + std::to_string(left_out) + ",\"window\":" + std::to_string(cfg.window) +
        ",\"time_precision\":" + std::to_string(tf.digits) + ",\"connection_count\":" +
        std::to_string(conns.size()) + "," + json_counts(all, tf) + ",\"connections\":[");
    for (std::size_t i = 0; i < conns.size(); ++i) {
      const auto& c = conns[i];
      totals one;
      one.add(c);
      out((i ? ",{" : "{") + std::string("\"connection\":") + std::to_string(i) + json_ends(c) +
          ",\"port\":" + std::to_string(c.key.port) + ",\"vc\":" + std::to_string(c.key.vc) +
          ",\"frames\":" + std::to_string(c.frames) + ",\"bytes\":" + std::to_string(c.bytes) +
          ",\"first_us\":" + tf.us(c.first_ns - t0) + ",\"last_us\":" + tf.us(c.last_ns - t0) +
          ",\"first_ns\":" + std::to_string(c.first_ns - t0) +
          ",\"last_ns\":" + std::to_string(c.last_ns - t0) + "," + json_counts(one, tf) + "}");
    }
    out("]}\n");
    return 0;
  }
  char line[256];
  std::snprintf(line, sizeof line,
                "%s: %llu frames, %llu SUE PDUs analysed (%llu left out: errors), %zu "
                "connections, window %u\n",
                file.c_str(), static_cast<unsigned long long>(frames),
                static_cast<unsigned long long>(analysed),
                static_cast<unsigned long long>(left_out), conns.size(), cfg.window);
  out(line);
  // Ends are XPU ids, or IP addresses: the columns are as wide as the widest.
  std::size_t src_w = 6, dst_w = 6;
  for (const auto& c : conns) {
    src_w = std::max(src_w, text_end(c.key.src, c.src_xpu).size());
    dst_w = std::max(dst_w, text_end(c.key.dst).size());
  }
  const auto pad = [](std::string v, std::size_t w) { return std::string(w - v.size(), ' ') + v; };
  out("  conn " + pad("src", src_w) + " " + pad("dst", dst_w) +
      " port vc    PDUs  retrans    dup  ooo gaps missing  NACKs   ACKs "
      "wfull   RTT p50/p90/p99 (us)\n");
  const auto row = [&](const std::string& head, const totals& t) {
    const auto s = dissect::summarize(t.rtt);
    std::snprintf(
        line, sizeof line, "%s %7llu %8llu %6llu %4llu %4llu %7llu %6llu %6llu %5llu   ",
        head.c_str(), static_cast<unsigned long long>(t.pdus),
        static_cast<unsigned long long>(t.retransmissions),
        static_cast<unsigned long long>(t.duplicates),
        static_cast<unsigned long long>(t.out_of_order), static_cast<unsigned long long>(t.gaps),
        static_cast<unsigned long long>(t.missing), static_cast<unsigned long long>(t.nacks),
        static_cast<unsigned long long>(t.acks), static_cast<unsigned long long>(t.window_full));
    out(line);
    out(s.count ? tf.us(s.p50) + "/" + tf.us(s.p90) + "/" + tf.us(s.p99) : std::string("-"));
    out("\n");
  };
  for (std::size_t i = 0; i < conns.size(); ++i) {
    const auto& c = conns[i];
    totals one;
    one.add(c);
    std::snprintf(line, sizeof line, " %4u %2u", unsigned{c.key.port}, unsigned{c.key.vc});
    row(pad(std::to_string(i), 6) + " " + pad(text_end(c.key.src, c.src_xpu), src_w) + " " +
            pad(text_end(c.key.dst), dst_w) + line,
        one);
  }
  row("   all" + std::string(src_w + dst_w + 10, ' '), all);
  return 0;
}

}  // namespace scaleup::cli
