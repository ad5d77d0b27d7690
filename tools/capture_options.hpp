// The command-line options of the commands that read captures (`dump`, `stats`, `check`),
// declared once: what to read (-r, -i, -f, -c, -a, -w), how to dissect it (--profile,
// --udp-port, ...), on how many threads. They fill the settings of an app::session.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "app/session.hpp"
#include "cli.hpp"

namespace scaleup::cli {

inline void add_input_options(CLI::App* app, scaleup::app::source_settings& in) {
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
            return scaleup::app::autostop_seconds(v)
                       ? ""
                       : "takes duration:SECONDS, the seconds above 0";
          },
          "duration:SECONDS"));
  app->add_option("-w", in.write,
                  "save the frames read to this pcap file (pcapng, each frame with its "
                  "interface, when named *.pcapng)");
}

inline void add_engine_options(CLI::App* app, scaleup::app::engine_settings& e) {
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
  app->add_flag("--port-by-interface", e.port_by_interface,
                "each capture interface is one port of the SUE instances (a pcapng of a "
                "fabric's planes, `gen session -o F.pcapng`): connections are told apart by it");
  app->add_option("--max-connections", e.max_connections,
                  "connections (and UDP flows) kept at most; beyond, a new one is not analysed "
                  "and the report says how many frames that left out (docs/robustness.md)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
}

// --threads N (default: every core); --batch N, hidden, lets the tests cross batch boundaries
// on small captures.
inline void add_thread_options(CLI::App* app, scaleup::app::session_settings& s) {
  s.threads = std::clamp(std::thread::hardware_concurrency(), 1u, scaleup::app::max_threads);
  app->add_option("--threads", s.threads,
                  "threads that read and dissect a capture file, the reading one included "
                  "(default: every core, at most " +
                      std::to_string(scaleup::app::max_threads) + "; 1: that one alone)")
      ->check(CLI::Range(1u, scaleup::app::max_threads))
      ->capture_default_str();
  app->add_option("--batch", s.batch, "frames a thread takes at a time")
      ->check(CLI::Range(1u, 1u << 20))
      ->group("");
}

// -Y FILTER (--display-filter): a display filter in Wireshark's syntax, compiled and applied by
// the session (app::filter_scope); `what` says what the command does with the frames it keeps.
inline void add_filter_option(CLI::App* app, scaleup::app::filter_settings& f,
                              scaleup::app::filter_scope scope, const std::string& what) {
  f.scope = scope;
  app->add_option("-Y,--display-filter", f.text,
                  "a display filter in Wireshark's syntax over the field names of dump's output "
                  "(-Y 'sue.rh.xpuid == 7 && sue.rh.vc != 0'; README.md, \"Display filters\"): " +
                      what)
      ->allow_extra_args(false);
}

// Frames held at most while their flows are not known (app/session.cpp): 65536 by default.
// --hold N, hidden: 0 holds none, so a cut file is read twice; for the tests.
inline void add_hold_option(CLI::App* app, scaleup::app::session_settings& s) {
  s.hold = scaleup::app::default_hold;
  app->add_option("--hold", s.hold, "frames held at most while their flows are not known")
      ->group("");
}

// ---- what the reports of `stats` and `check` say beyond their figures -----------------------

// Frames the connection limit left out, datagrams of flows the flow limit did not remember, and
// a live capture's drops.
struct report_notes {
  std::uint64_t not_analysed = 0;  // frames: a new connection beyond the limit
  std::size_t max_connections = 0;
  const dissect::flow_table& flows;
  std::optional<scaleup::app::capture_drops> drops;

  // Why frames were not analysed, where some were.
  std::string reason() const {
    if (not_analysed == 0) return {};
    return "connection limit " + std::to_string(max_connections) + " reached";
  }

  // Lines of the text report after its heading: `what` says what was not done ("analysed").
  void put_text(stdout_sink& out, std::string_view what) const {
    if (not_analysed)
      out(fmt::format("  {} frames not {}: {} (new connections beyond it are left out)\n",
                      not_analysed, what, reason()));
    if (flows.not_remembered()) out("  " + flows_text(flows) + "\n");
    if (drops) out("  capture: " + drops_text(*drops) + "\n");
  }
  static std::string flows_text(const dissect::flow_table& flows) {
    return fmt::format(
        "{} SUE datagrams on UDP flows beyond the flow limit {} (not remembered: dissected by "
        "their own R-CRC or port)",
        flows.not_remembered(), flows.max_flows());
  }
  static std::string drops_text(const scaleup::app::capture_drops& d) {
    return fmt::format(
        "{} packets received by the capture filter, {} dropped by the kernel, {} dropped by the "
        "interface",
        d.received, d.kernel, d.interface);
  }

  // The members "not_analysed" and, for a live capture, "capture_drops".
  template <class Json>
  void put_json(Json& j) const {
    j.object("not_analysed")
        .member("frames", not_analysed)
        .member("reason", reason())
        .member("max_connections", max_connections)
        .member("udp_datagrams_not_remembered", flows.not_remembered())
        .end();
    if (drops)
      j.object("capture_drops")
          .member("received", drops->received)
          .member("kernel", drops->kernel)
          .member("interface", drops->interface)
          .end();
  }
};

}  // namespace scaleup::cli
