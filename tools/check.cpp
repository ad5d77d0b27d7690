// `scaleup check`: does a capture conform to SUE? Every rule of dissect/conformance.hpp (the
// table the Wireshark plugin's sue.check.* expert infos and docs/conformance.md come from), per
// rule what was examined, what could not be, the violations and the first violating frames.
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "cli.hpp"
#include "scaleup/dissect/conformance.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/flow_table.hpp"
#include "scaleup/dissect/ip_reassembly.hpp"

namespace scaleup::cli {

namespace {

// Exit statuses (issue 20): 0 conformant, 1 unreadable input, 2 usage, 3 a rule violated.
constexpr int exit_violated = 3;

std::string json_string(std::string_view s) {
  std::string o = "\"";
  for (const char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    if (static_cast<unsigned char>(ch) < 0x20) {
      char b[8];
      std::snprintf(b, sizeof b, "\\u%04x", static_cast<unsigned>(ch));
      o += b;
      continue;
    }
    o += ch;
  }
  return o + "\"";
}

// --rules LIST: comma-separated rule ids; a prefix ending in '.' selects a family ("ack.").
std::optional<std::string> parse_rules(std::string_view list, dissect::rule_set& out) {
  out.reset();
  for (std::size_t start = 0; start <= list.size();) {
    const std::size_t comma = std::min(list.find(',', start), list.size());
    const std::string_view id = list.substr(start, comma - start);
    bool found = false;
    for (const auto& r : dissect::rules)
      if (r.id == id || (!id.empty() && id.back() == '.' && r.id.starts_with(id))) {
        out.set(static_cast<std::size_t>(r.which));
        found = true;
      }
    if (!found) return "check: unknown rule '" + std::string(id) + "' (see docs/conformance.md)";
    start = comma + 1;
  }
  return std::nullopt;
}

// --partitions FILE: lines `XPU PARTITION...` (partitions a source XPU may use), # comments.
std::optional<std::string> read_partitions(const std::string& path, dissect::partition_policy& p) {
  std::ifstream in(path);
  if (!in) return "check: " + path + ": cannot read";
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (const auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string w;
    std::optional<std::uint16_t> src;
    while (words >> w) {
      const auto v = parse_number<std::uint16_t>(w);
      if (!v || *v >= transport::partitions)
        return "check: " + path + ":" + std::to_string(n) + ": '" + w +
               "' is not an XPU or partition from 0 to 1023";
      if (!src) {
        src = *v;
        p.listed.set(*v);
      } else {
        p.allowed->allow(*src, *v);
      }
    }
  }
  return std::nullopt;
}

void print_text(stdout_sink& out, const std::string& file, std::uint64_t frames,
                const dissect::conformance& c) {
  const auto verdict = c.conformant() ? std::string("conformant")
                                      : std::to_string(c.violations()) + " violation" +
                                            (c.violations() == 1 ? "" : "s");
  out(file + ": " + std::to_string(frames) + " frames, " + std::to_string(c.pdus()) +
      " SUE PDUs, " + std::to_string(c.lite_frames()) + " SUE Lite frames: " + verdict + "\n");
  char line[256];
  std::snprintf(line, sizeof line, "  %-18s %10s %10s %10s  %s\n", "rule", "examined", "not exam.",
                "violations", "seed");
  out(line);
  for (const auto& r : dissect::rules) {
    if (!c.selected(r.which)) continue;
    const auto& t = c.tally(r.which);
    std::snprintf(line, sizeof line, "  %-18.*s %10llu %10llu %10llu  ",
                  static_cast<int>(r.id.size()), r.id.data(),
                  static_cast<unsigned long long>(t.examined),
                  static_cast<unsigned long long>(t.not_examinable),
                  static_cast<unsigned long long>(t.violations));
    out(line);
    out(std::string(r.seed) + "\n");
  }
  for (const auto& r : dissect::rules) {
    const auto& t = c.tally(r.which);
    if (!c.selected(r.which) || t.violations == 0) continue;
    out("\n" + std::string(r.id) + ": " + std::string(r.sentence) + "\n");
    for (const auto& v : t.first)
      out("  frame " + std::to_string(v.frame) + ": expected " + v.expected + "; seen " + v.seen +
          "\n");
    if (t.violations > t.first.size())
      out("  ... and " + std::to_string(t.violations - t.first.size()) + " more\n");
  }
}

void print_json(stdout_sink& out, const std::string& file, std::uint64_t frames,
                const dissect::conformance& c) {
  out("{\"file\":" + json_string(file) + ",\"frames\":" + std::to_string(frames) + ",\"pdus\":" +
      std::to_string(c.pdus()) + ",\"lite_frames\":" + std::to_string(c.lite_frames()) +
      ",\"conformant\":" + (c.conformant() ? "true" : "false") +
      ",\"violations\":" + std::to_string(c.violations()) + ",\"rules\":[");
  bool first_rule = true;
  for (const auto& r : dissect::rules) {
    if (!c.selected(r.which)) continue;
    const auto& t = c.tally(r.which);
    out(std::string(first_rule ? "" : ",") + "{\"id\":" + json_string(r.id) +
        ",\"seed\":" + json_string(r.seed) + ",\"sentence\":" + json_string(r.sentence) +
        ",\"examined\":" + std::to_string(t.examined) +
        ",\"not_examinable\":" + std::to_string(t.not_examinable) +
        ",\"violations\":" + std::to_string(t.violations) + ",\"first\":[");
    first_rule = false;
    for (std::size_t i = 0; i < t.first.size(); ++i)
      out(std::string(i ? "," : "") + "{\"frame\":" + std::to_string(t.first[i].frame) +
          ",\"expected\":" + json_string(t.first[i].expected) +
          ",\"seen\":" + json_string(t.first[i].seen) + "}");
    out("]}");
  }
  out("]}\n");
}

}  // namespace

int check(std::span<const std::string_view> argv) {
  std::string file;
  bool json = false;
  dissect::options o;
  dissect::flow_table flows;  // UDP flows found SUE stay SUE (wire/udp_flow.hpp)
  o.flows = &flows;
  dissect::check_config cfg;
  dissect::partition_policy partitions;
  args a(argv);
  while (!a.done()) {
    const std::string_view f = a.flag();
    if (f == "--json") {
      json = true;
    } else if (f == "--rules") {
      if (const auto e = parse_rules(a.value().value_or(""), cfg.selected)) return fail_usage(*e);
    } else if (f == "--max-pdu" || f == "--max-lite") {
      const auto n = a.number<std::uint32_t>();
      if (!n || *n == 0 || *n > 65535)
        return fail_usage("check: " + std::string(f) + " needs a byte count from 1 to 65535");
      (f == "--max-pdu" ? cfg.max_pdu : cfg.max_lite) = *n;
    } else if (f == "--vcs") {
      const auto n = a.number<unsigned>();
      if (!n || *n < 1 || *n > 4) return fail_usage("check: --vcs takes 1 to 4");
      cfg.vcs = static_cast<std::uint8_t>(*n);
    } else if (f == "--ports") {
      const auto n = a.number<unsigned>();
      if (!n || (*n != 1 && *n != 2 && *n != 4))
        return fail_usage("check: --ports takes 1, 2 or 4");
      cfg.ports = static_cast<std::uint8_t>(*n);
    } else if (f == "--rto") {
      const auto n = a.number<std::uint64_t>();
      if (!n || *n == 0) return fail_usage("check: --rto needs a time in nanoseconds above 0");
      cfg.rto_ns = *n;
    } else if (f == "--partitions") {
      const auto v = a.value();
      if (!v || v->empty())
        return fail_usage("check: --partitions needs a file of lines XPU PARTITION...");
      const std::string path(*v);
      if (!std::ifstream(path)) {  // a file that cannot be read: 1, as for the capture
        std::fprintf(stderr, "scaleup: %s: cannot read\n", path.c_str());
        return 1;
      }
      if (const auto e = read_partitions(path, partitions)) return fail_usage(*e);
      cfg.partitions = &partitions;
    } else if (const auto taken = engine_option("check", f, a, o)) {
      if (!taken->empty()) return fail_usage(*taken);
    } else if (!f.empty() && f[0] == '-' && f != "-") {
      return fail_usage("check: unknown option '" + std::string(f) + "'");
    } else if (file.empty()) {
      file = std::string(f);
    } else {
      return fail_usage("check: one capture file at a time");
    }
  }
  if (file.empty()) return fail_usage("check: which capture file?");
  cfg.profile = o.profile != nullptr;

  auto r = open_capture(file);
  if (!r) return 1;
  static dissect::large_tree tree;             // room for a PDU full of commands
  static wire::ip_reassembler<> ip_fragments;  // about 4 MiB: kept off the stack
  dissect::conformance c(cfg);
  std::uint64_t frames = 0;
  cap::packet pkt{};
  for (;;) {
    const auto st = r->next(pkt);
    if (st == cap::reader::status::end) break;
    if (st == cap::reader::status::error) {
      std::fprintf(stderr, "scaleup: %s\n", r->error().c_str());
      return 1;
    }
    ++frames;
    const std::int64_t ns = capture_time_ns(pkt);
    dissect::dissect_frame(tree, pkt.data, pkt.link, o, ip_fragments, pkt.number, ns, pkt.len);
    c.add(tree, pkt.data, pkt.number, ns);
  }
  c.finish();
  stdout_sink out;
  if (json)
    print_json(out, file, frames, c);
  else
    print_text(out, file, frames, c);
  return c.conformant() ? 0 : exit_violated;
}

}  // namespace scaleup::cli
