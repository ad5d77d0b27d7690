// A fabric of 64 XPUs on one switch, driven by the library's harness: uniform and incast
// traffic at several loads and loss rates. Prints goodput, command latency percentiles and
// retransmissions per run, and draws goodput against loss rate as an SVG.
//
//   example_sim              brief run (a few points, used by the test suite)
//   example_sim --full       every load and loss rate, more commands
//   example_sim --svg FILE   where to write the picture (default: sim_goodput.svg)
//
// Latency: the harness reports each delivered command with the time it was offered
// (fabric::on_delivery), so the percentiles are over every command's own latency.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "scaleup/sim/fabric.hpp"

namespace {

using scaleup::sim::fabric;
using scaleup::sim::fabric_config;
using scaleup::sim::fabric_stats;
using scaleup::sim::offer;

enum class pattern { uniform, incast };

struct point {
  pattern pat;
  double load, loss;
  fabric_stats stats;
  double p50, p99, p999;     // ns
  std::uint64_t completion;  // ns, first offer to last delivery
};

constexpr std::uint16_t xpus = 64;
constexpr std::uint16_t data_bytes = 256;

point run_one(pattern pat, double load, double loss, int commands_per_xpu) {
  fabric_config cfg;
  cfg.xpus = xpus;
  cfg.ports = 1;
  cfg.loss = loss;
  cfg.corrupt = loss / 10;
  cfg.seed = 7;
  fabric f(cfg);

  // Offered load is a fraction of one port's rate per sender: 12 bytes of command header plus
  // the write data per command.
  const double ns_per_cmd = (12.0 + data_bytes) * 8.0 / (load * cfg.instance_gbps);
  std::mt19937_64 rng(11);
  std::exponential_distribution<double> gap(1.0 / ns_per_cmd);
  std::size_t offers = 0;
  for (std::uint16_t s = 0; s < xpus; ++s) {
    if (pat == pattern::incast && s == 0) continue;
    double t = 0;
    for (int i = 0; i < commands_per_xpu; ++i) {
      t += gap(rng);
      std::uint16_t d = 0;
      if (pat == pattern::uniform) {
        d = static_cast<std::uint16_t>(std::uniform_int_distribution<int>(0, xpus - 2)(rng));
        if (d >= s) ++d;
      }
      const auto at = static_cast<std::uint64_t>(t);
      f.add(offer{.at = at, .src = s, .dst = d, .vc = 0, .data = data_bytes});
      ++offers;
    }
  }
  std::vector<double> lat;
  lat.reserve(offers);
  f.on_delivery([&](const scaleup::sim::delivery& d) {
    lat.push_back(static_cast<double>(d.delivered_at - d.offered_at));
  });
  f.run();
  std::sort(lat.begin(), lat.end());
  const auto pct = [&](double p) {
    if (lat.empty()) return 0.0;
    return lat[std::min(lat.size() - 1,
                        static_cast<std::size_t>(p * static_cast<double>(lat.size())))];
  };
  const fabric_stats& st = f.stats();
  return point{pat,       load,      loss,       st,
               pct(0.50), pct(0.99), pct(0.999), st.last_delivery - st.first_offer};
}

const char* name(pattern p) { return p == pattern::uniform ? "uniform" : "incast"; }

void write_svg(const std::string& path, const std::vector<point>& pts,
               const std::vector<double>& losses) {
  const double w = 640, h = 400, l = 70, r = 170, top = 30, bottom = 50;
  double ymax = 1;
  for (const auto& p : pts) ymax = std::max(ymax, p.stats.goodput_gbps());
  ymax *= 1.1;
  const auto x_of = [&](std::size_t i) {
    return l + (w - l - r) * (losses.size() > 1
                                  ? static_cast<double>(i) / static_cast<double>(losses.size() - 1)
                                  : 0.5);
  };
  const auto y_of = [&](double g) { return top + (h - top - bottom) * (1 - g / ymax); };
  std::ofstream o(path);
  o << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << w << "\" height=\"" << h
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n"
    << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
    << "<text x=\"" << l << "\" y=\"18\">Goodput against loss rate, 64 XPUs on one switch</text>\n"
    << "<line x1=\"" << l << "\" y1=\"" << h - bottom << "\" x2=\"" << w - r << "\" y2=\""
    << h - bottom << "\" stroke=\"black\"/>\n"
    << "<line x1=\"" << l << "\" y1=\"" << top << "\" x2=\"" << l << "\" y2=\"" << h - bottom
    << "\" stroke=\"black\"/>\n";
  for (int k = 0; k <= 4; ++k) {
    const double g = ymax * k / 4;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.0f", g);
    o << "<text x=\"" << l - 6 << "\" y=\"" << y_of(g) + 4 << "\" text-anchor=\"end\">" << buf
      << "</text>\n";
  }
  for (std::size_t i = 0; i < losses.size(); ++i) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", losses[i]);
    o << "<text x=\"" << x_of(i) << "\" y=\"" << h - bottom + 16 << "\" text-anchor=\"middle\">"
      << buf << "</text>\n";
  }
  o << "<text x=\"" << (l + w - r) / 2 << "\" y=\"" << h - 10
    << "\" text-anchor=\"middle\">frame loss rate</text>\n"
    << "<text x=\"16\" y=\"" << (top + h - bottom) / 2 << "\" transform=\"rotate(-90 16 "
    << (top + h - bottom) / 2 << ")\" text-anchor=\"middle\">goodput (Gb/s)</text>\n";
  const char* colours[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
  int series = 0;
  for (pattern pat : {pattern::uniform, pattern::incast}) {
    std::vector<double> loads;
    for (const auto& p : pts)
      if (p.pat == pat && std::find(loads.begin(), loads.end(), p.load) == loads.end())
        loads.push_back(p.load);
    for (double ld : loads) {
      const char* c = colours[series % 6];
      std::string poly;
      for (std::size_t i = 0; i < losses.size(); ++i)
        for (const auto& p : pts)
          if (p.pat == pat && p.load == ld && p.loss == losses[i]) {
            const double x = x_of(i), y = y_of(p.stats.goodput_gbps());
            poly += std::to_string(x) + "," + std::to_string(y) + " ";
            o << "<circle cx=\"" << x << "\" cy=\"" << y << "\" r=\"3\" fill=\"" << c << "\"/>\n";
          }
      o << "<polyline fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\""
        << (pat == pattern::incast ? " stroke-dasharray=\"6,3\"" : "") << " points=\"" << poly
        << "\"/>\n";
      const double ly = top + 16 + 18 * series;
      char label[64];
      std::snprintf(label, sizeof label, "%s, load %.2f", name(pat), ld);
      o << "<line x1=\"" << w - r + 10 << "\" y1=\"" << ly - 4 << "\" x2=\"" << w - r + 34
        << "\" y2=\"" << ly - 4 << "\" stroke=\"" << c << "\" stroke-width=\"2\""
        << (pat == pattern::incast ? " stroke-dasharray=\"6,3\"" : "") << "/>\n"
        << "<text x=\"" << w - r + 40 << "\" y=\"" << ly << "\">" << label << "</text>\n";
      ++series;
    }
  }
  o << "</svg>\n";
}

}  // namespace

int main(int argc, char** argv) {
  bool full = false;
  std::string svg = "sim_goodput.svg";
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--full"))
      full = true;
    else if (!std::strcmp(argv[i], "--quick"))
      full = false;
    else if (!std::strcmp(argv[i], "--svg") && i + 1 < argc)
      svg = argv[++i];
    else {
      std::fprintf(stderr, "usage: %s [--quick|--full] [--svg FILE]\n", argv[0]);
      return 2;
    }
  }
  const std::vector<double> loads =
      full ? std::vector<double>{0.25, 0.5, 0.9} : std::vector<double>{0.5};
  const std::vector<double> losses =
      full ? std::vector<double>{0, 0.001, 0.01, 0.05} : std::vector<double>{0, 0.01};
  const int per_xpu = full ? 200 : 20;

  std::printf(
      "64 XPUs, 1 port each at 800 Gb/s, %u-byte writes, %d commands per sender "
      "(incast: %d)\n",
      data_bytes, per_xpu, full ? per_xpu / 5 : per_xpu);
  std::printf("%-8s %5s %6s %9s %9s %7s %8s %8s %8s %10s\n", "pattern", "load", "loss", "offered",
              "delivered", "retx", "p50 ns", "p99 ns", "p99.9 ns", "goodput");
  std::vector<point> pts;
  bool ok = true;
  for (pattern pat : {pattern::uniform, pattern::incast})
    for (double ld : loads)
      for (double ls : losses) {
        // Incast through one egress port is the slow case to simulate: fewer commands.
        const point p =
            run_one(pat, ld, ls, full && pat == pattern::incast ? per_xpu / 5 : per_xpu);
        std::printf("%-8s %5.2f %6.3f %9llu %9llu %7llu %8.0f %8.0f %8.0f %6.1f Gb/s\n", name(pat),
                    ld, ls, static_cast<unsigned long long>(p.stats.offered),
                    static_cast<unsigned long long>(p.stats.delivered),
                    static_cast<unsigned long long>(p.stats.retransmissions), p.p50, p.p99, p.p999,
                    p.stats.goodput_gbps());
        std::fflush(stdout);
        ok = ok && p.stats.delivered == p.stats.offered && p.stats.duplicates == 0 &&
             p.stats.out_of_order == 0;
        pts.push_back(p);
      }
  write_svg(svg, pts, losses);
  std::printf("goodput against loss rate: %s\n", svg.c_str());
  if (!ok) std::printf("FAILED: not every command was delivered exactly once and in order\n");
  return ok ? 0 : 1;
}
