// `scaleup dump`: reads a capture and prints the dissection engine's tree for every frame.
#include <cstdio>
#include <string>

#include "cli.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/flow_table.hpp"
#include "scaleup/dissect/ip_reassembly.hpp"
#include "scaleup/dissect/print.hpp"
#include "scaleup/dissect/tofu.hpp"
#include "scaleup/tofu/slicer.hpp"

namespace scaleup::cli {

int dump(std::span<const std::string_view> argv) {
  std::string file;
  bool verbose = false, json = false;
  dissect::options o;
  dissect::flow_table flows;  // UDP flows found SUE stay SUE (wire/udp_flow.hpp)
  o.flows = &flows;
  args a(argv);
  while (!a.done()) {
    const std::string_view f = a.flag();
    if (f == "-v" || f == "--verbose") {
      verbose = true;
    } else if (f == "--json") {
      json = true;
    } else if (const auto taken = engine_option("dump", f, a, o)) {
      if (!taken->empty()) return fail_usage(*taken);
    } else if (f == "--fcs") {
      const std::string_view v = a.value().value_or("");
      if (v == "auto")
        o.fcs = dissect::fcs_mode::detect;
      else if (v == "yes")
        o.fcs = dissect::fcs_mode::present;
      else if (v == "no")
        o.fcs = dissect::fcs_mode::absent;
      else
        return fail_usage("dump: --fcs takes auto, yes or no");
    } else if (!f.empty() && f[0] == '-' && f != "-") {
      return fail_usage("dump: unknown option '" + std::string(f) + "'");
    } else if (file.empty()) {
      file = std::string(f);
    } else {
      return fail_usage("dump: one capture file at a time");
    }
  }
  if (file.empty()) return fail_usage("dump: which capture file?");

  auto r = open_capture(file);
  if (!r) return 1;
  stdout_sink out;
  static dissect::large_tree tree;  // room for a PDU full of commands; kept off the stack
  static tofu::record_collector tofu_lanes;
  static tofu::frame_buffer tofu_frame{};
  static wire::ip_reassembler<> ip_fragments;  // about 4 MiB: kept off the stack
  const auto print = [&](const dissect::large_tree& t, std::uint64_t number) {
    if (json)
      dissect::put_json(out, t, number);
    else if (verbose)
      dissect::put_verbose(out, t, number);
    else
      dissect::put_summary(out, t, number);
    out("\n");
  };
  cap::packet pkt{};
  for (;;) {
    const auto st = r->next(pkt);
    if (st == cap::reader::status::end) break;
    if (st == cap::reader::status::error) {
      out.flush();
      std::fprintf(stderr, "scaleup: %s\n", r->error().c_str());
      return 1;
    }
    // Each packet on its interface's link type: a pcapng file may mix them. The length on the
    // wire too: a frame the snapshot length cut is read against it, not taken as malformed. IP
    // fragments are joined; a datagram is dissected in the frame that completes it.
    dissect::dissect_frame(tree, pkt.data, pkt.link, o, ip_fragments, pkt.number,
                           capture_time_ns(pkt), pkt.len);
    print(tree, pkt.number);
    // Tofu slices: once every lane of a frame is in, the reassembled frame too.
    if (pkt.link == tofu::link_tofu) {
      const auto got = tofu_lanes.push(pkt.data);
      if (!got.complete) continue;
      const auto frame = tofu_lanes.reassemble(tofu_frame);
      tree.clear();
      if (frame) {
        dissect::dissect_tofu_frame(tree, wire::bytes(tofu_frame.data(), frame->size));
        tree.frame_length = static_cast<std::uint32_t>(frame->size);
      } else {
        tree.encap = "tofu";
        tree.add_error(frame.err);
      }
      tree.encap = "tofu.frame";
      print(tree, pkt.number);
    }
  }
  return 0;
}

}  // namespace scaleup::cli
