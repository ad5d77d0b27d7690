// `scaleup dump`: reads a capture (a file, a pipe or an interface) and prints the dissection
// engine's tree for every frame, in the forms tshark has: a summary line, the field tree (-V),
// JSON Lines (--json, -T json) or chosen fields (-T fields -e NAME).
#include <unistd.h>

#include <cstdio>
#include <string>

#include <fmt/core.h>
#include "capture_input.hpp"
#include "parallel_dissect.hpp"

#include "cli.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/flow_table.hpp"
#include "scaleup/dissect/ip_reassembly.hpp"
#include "scaleup/dissect/print.hpp"
#include "scaleup/dissect/registry.hpp"
#include "scaleup/dissect/tofu.hpp"
#include "scaleup/tofu/slicer.hpp"

namespace scaleup::cli {

namespace {

enum class format { summary, verbose, json, fields };

struct dump_settings {
  input_settings in;
  engine_settings engine;
  bool verbose = false, json = false, quiet = false;
  format as = format::summary;
  std::vector<std::string> fields;
  std::vector<std::string> field_options;  // -E
  std::string fcs = "auto";
  thread_settings threads;
};

// -E separator=C, header=y|n (tshark's field options; occurrence and quote are not kept).
struct field_layout {
  std::string separator = "\t";
  bool header = false;
};

std::optional<std::string> read_field_options(const std::vector<std::string>& opts,
                                              field_layout& out) {
  for (const auto& o : opts) {
    const auto eq = o.find('=');
    const std::string key = o.substr(0, eq), value = eq == o.npos ? "" : o.substr(eq + 1);
    if (key == "separator") {
      // tshark's /t and /s for a tab and a space.
      out.separator = value == "/t" ? "\t" : value == "/s" ? " " : value;
      if (out.separator.empty()) return "-E separator= needs a character";
    } else if (key == "header") {
      if (value != "y" && value != "n") return "-E header= takes y or n";
      out.header = value == "y";
    } else {
      return "-E takes separator=C or header=y|n, not '" + o + "'";
    }
  }
  return std::nullopt;
}

int run_dump(const CLI::App& app, dump_settings& s) {
  dissect::options o;
  dissect::flow_table flows;
  if (const auto bad = set_up(s.in, s.engine, o, flows)) return fail_usage(app, *bad);
  o.fcs = s.fcs == "yes"  ? dissect::fcs_mode::present
          : s.fcs == "no" ? dissect::fcs_mode::absent
                          : dissect::fcs_mode::detect;
  if (s.json) s.as = format::json;
  if (s.verbose && s.as == format::summary) s.as = format::verbose;
  if (s.as == format::fields && s.fields.empty())
    return fail_usage(app, "-T fields needs at least one -e NAME");
  if (s.as != format::fields && !s.fields.empty()) return fail_usage(app, "-e needs -T fields");
  for (const auto& f : s.fields)
    if (!dissect::is_field_name(f, o.profile))
      return fail_usage(app, "-e: no field is named '" + f + "'");
  field_layout layout;
  if (const auto bad = read_field_options(s.field_options, layout)) return fail_usage(app, *bad);

  capture_input input;
  // The progress line only where it cannot mix with the frames on one terminal.
  if (!input.open(s.in, !::isatty(1))) return 1;
  stdout_sink out;
  static tofu::record_collector tofu_lanes;
  static tofu::frame_buffer tofu_frame{};
  if (s.as == format::fields && layout.header) {
    for (std::size_t i = 0; i < s.fields.size(); ++i) {
      if (i) out(layout.separator);
      out(s.fields[i]);
    }
    out("\n");
  }
  // One frame's output, to `out` or to a worker's text (parallel_dissect.hpp).
  const auto print = [&](auto& out, const dissect::large_tree& t, const dissect::frame_meta& m) {
    if (s.quiet) return;
    switch (s.as) {
      case format::json:
        dissect::put_json(out, t, m);
        break;
      case format::verbose:
        dissect::put_verbose(out, t, m);
        break;
      case format::summary:
        dissect::put_summary(out, t, m);
        break;
      case format::fields:
        for (std::size_t i = 0; i < s.fields.size(); ++i) {
          if (i) out(layout.separator);
          dissect::put_field_values(out, t, m, s.fields[i]);
        }
        break;
    }
    out("\n");
  };
  // On any thread: the frame's output, and where it is in `text`.
  struct span_of_text {
    std::size_t begin = 0, end = 0;
  };
  const auto look = [&](const dissect::large_tree& tree, const frame_in& f, span_of_text& r,
                        text_buffer& text) {
    r.begin = text.size();
    print(text, tree, f.meta);
    r.end = text.size();
  };
  static dissect::large_tree tofu_tree;
  std::uint64_t frames = 0;
  int status = 0;
  // In frame order: the output, and the Tofu frames the slices complete.
  const auto take = [&](const frame_in& f, const span_of_text& r, const text_buffer& text) {
    ++frames;
    out.keep(text.view().substr(r.begin, r.end - r.begin));
    // Tofu slices: once every lane of a frame is in, the reassembled frame too.
    if (f.pkt.link == tofu::link_tofu) {
      const auto got = tofu_lanes.push(f.pkt.data);
      if (got.complete) {
        const auto frame = tofu_lanes.reassemble(tofu_frame);
        tofu_tree.clear();
        if (frame) {
          dissect::dissect_tofu_frame(tofu_tree, wire::bytes(tofu_frame.data(), frame->size));
          tofu_tree.frame_length = static_cast<std::uint32_t>(frame->size);
        } else {
          tofu_tree.encap = "tofu";
          tofu_tree.add_error(frame.err);
        }
        tofu_tree.encap = "tofu.frame";
        print(out, tofu_tree, f.meta);
      }
    }
    // Read as it happens: each frame's output goes out at once.
    if (input.streaming()) out.flush();
  };
  const bool read = dissect_in_order<span_of_text>(input, o, flows, s.threads, look, take, nullptr,
                                                   0, [&] { out.release(); });
  if (!read) {
    out.flush();
    fmt::print(stderr, "scaleup: {}\n", input.error());
    status = 1;
  }
  out.flush();
  if (!input.finish()) status = 1;
  if (input.live()) {
    fmt::print(stderr, "{} frame{} captured\n", static_cast<unsigned long long>(frames),
               frames == 1 ? "" : "s");
    if (const auto d = input.drops()) fmt::print(stderr, "capture: {}\n", drops_text(*d));
  }
  // Frames are all dissected; what the flow limit changed is said, as the other reports do.
  if (flows.not_remembered()) fmt::print(stderr, "scaleup: {}\n", flows_not_remembered_text(flows));
  return status;
}

}  // namespace

void add_dump(CLI::App& parent, commands& out) {
  auto s = std::make_shared<dump_settings>();
  CLI::App* app = parent.add_subcommand(
      "dump",
      "Dissect a capture: one summary line per frame (and one per packed command), a field tree "
      "with -V, JSON Lines with --json, chosen fields with -T fields -e NAME. No UDP port is "
      "SUE's: SUE over UDP is found on every --udp-port, and elsewhere when the payload is a "
      "plausible RH (unless --no-heuristics).");
  add_input_options(app, s->in);
  app->add_flag("-v,-V,--verbose", s->verbose, "the field tree of every frame");
  app->add_flag("--json", s->json, "JSON Lines: one object per frame (as -T json)");
  add_choice<format>(
      app, "-T", s->as,
      {{"text", format::summary}, {"json", format::json}, {"fields", format::fields}},
      "output format: text, json or fields");
  app->add_option("-e", s->fields, "a field for -T fields, by its display-filter name")
      ->allow_extra_args(false);
  app->add_option("-E", s->field_options, "-T fields options: separator=C, header=y")
      ->allow_extra_args(false);
  app->add_flag("-q", s->quiet, "print no frames (with -i or -w: capture only)");
  add_engine_options(app, s->engine);
  app->add_option("--fcs", s->fcs, "whether Ethernet frames end in an FCS")
      ->check(CLI::IsMember({"auto", "yes", "no"}))
      ->capture_default_str();
  add_thread_options(app, s->threads);
  out.push_back({app, [app, s] { return run_dump(*app, *s); }});
}

}  // namespace scaleup::cli
