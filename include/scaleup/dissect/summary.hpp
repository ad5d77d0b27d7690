// A frame as one line of text: tshark's summary columns (No., Time, Source, Destination,
// Protocol, Length, Info), or the shorter line without the capture's account of the frame.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "scaleup/dissect/chunked.hpp"
#include "scaleup/dissect/field_text.hpp"
#include "scaleup/dissect/frame_meta.hpp"
#include "scaleup/dissect/tree.hpp"

namespace scaleup::dissect {

namespace detail {

// The protocol a summary line names: the innermost format the library reads, else the last
// layer found.
template <class Tree>
std::string_view summary_protocol(const Tree& t) {
  if (t.find("sue.rh.ver")) return "SUE";
  if (t.find("tofu.rh.one")) return t.find("tofu.slice.lane") ? "Tofu slice" : "Tofu frame";
  if (t.find("rdma.ftr.crc")) return "ExaJet";
  if (t.find("sue_lite.len")) return "SUE Lite";
  if (t.find("sue.failover.ver")) return "SUE failover";
  return {};
}

// A summary line's info: what matters for the layer found, the commands, the error counts, and
// one line per command.
template <class Out, class Tree>
void put_summary_info(chunked<Out>& out, const Tree& t) {
  const auto show = [&](std::string_view label, std::string_view filter) {
    if (const auto* f = t.find(filter)) {
      out(" ");
      out(label);
      out("=");
      if (!f->value_name().empty() && f->info->type != wire::kind::label) {
        out(f->value_name());
      } else {
        put_value(out, *f);
      }
    }
  };
  if (t.find("sue.rh.ver")) {
    show("op", "sue.rh.op");
    show("xpuid", "sue.rh.xpuid");
    show("npsn", "sue.rh.npsn");
    if (const auto* op = t.find("sue.rh.op"); op && op->value <= 1) show("apsn", "sue.rh.apsn");
    show("vc", "sue.rh.vc");
    show("partition", "sue.rh.partition");
    show("payload", "sue.payload.len");
    show("rcrc", "sue.rcrc.status");
  } else if (t.find("tofu.rh.one")) {
    show("lane", "tofu.slice.lane");
    show("LEN", "tofu.rh.len");
    show("pat", "tofu.rh.pat");
    show("stat", "tofu.rh.stat");
    show("seq", "tofu.rh.seq");
    show("fcs", "tofu.slice.fcs.status");
    show("tlp", "tofu.tlp.len");
  } else if (t.find("rdma.ftr.crc")) {
    show("type", "rdma.pkt.type");
    show("type", "rdma.ack.type");
    show("type", "rdma.ctl.type");
    show("tid", "rdma.pkt.tid");
    show("tid", "rdma.ack.tid");
    show("seq", "rdma.pkt.seq");
    show("seq", "rdma.ack.seq");
    show("block", "rdma.pkt.block_seq");
    show("block", "rdma.ack.block_seq");
    show("payload", "rdma.payload.len");
    show("crc", "rdma.ftr.crc.status");
  } else if (t.find("sue_lite.len")) {
    show("src", "afh2c.src_xpu");
    show("dst", "afh2c.dst_xpu");
    show("tc", "afh2c.tc");
    show("payload", "sue_lite.len");
  } else if (t.find("sue.failover.ver")) {
    show("type", "sue.failover.type");
    show("xpuid", "sue.failover.xpuid");
    show("port", "sue.failover.port");
    show("vc", "sue.failover.vc");
    show("generation", "sue.failover.generation");
    show("base", "sue.failover.base");
    if (const auto* ty = t.find("sue.failover.type"); ty && ty->value == 2)
      show("expected", "sue.failover.expected");
  } else {
    show("src", "ip.src");
    show("dst", "ip.dst");
    show("src", "ipv6.src");
    show("dst", "ipv6.dst");
  }
  std::size_t commands = 0;
  for (const auto& l : t.layer_list()) commands += l.list == "sue.cmds";
  if (commands) {
    out(" cmds=");
    put_uint(out, commands);
  }
  std::size_t errors = 0, notes = 0;
  for (const auto& e : t.error_list()) {
    errors += e.level == wire::severity::error;
    notes += e.level == wire::severity::note;
  }
  const std::size_t warnings = t.error_count - errors - notes;
  if (t.error_count) {
    out("  [");
    put_uint(out, errors);
    out(errors == 1 ? " error" : " errors");
    if (warnings) {
      out(", ");
      put_uint(out, warnings);
      out(warnings == 1 ? " warning" : " warnings");
    }
    if (notes) {
      out(", ");
      put_uint(out, notes);
      out(notes == 1 ? " note" : " notes");
    }
    out("]");
  }
  // One line per command: its name, control and data lengths.
  if (!commands) return;
  const layer_spans<Tree> spans(t);
  const auto fields = t.field_list();
  std::size_t n = 0;
  for (std::size_t li = 0; li < t.layer_count; ++li) {
    if (t.layers[li].list != "sue.cmds") continue;
    out("\n          cmd ");
    put_uint_right(out, ++n, 4);
    const auto member = [&](std::string_view filter) -> const field_node* {
      for (std::size_t i = spans.lo[li]; i < spans.hi[li]; ++i)
        if (fields[i].layer == li && fields[i].info->filter == filter) return &fields[i];
      return nullptr;
    };
    out("  ");
    if (const auto* f = member("sue.cmd.name")) {
      out(f->value_name());
      if (f->value_name().size() < 10)
        out(std::string_view("          ", 10 - f->value_name().size()));
    }
    if (const auto* f = member("sue.cmd.control_len")) {
      out(" ctrl=");
      put_uint(out, f->value);
    }
    if (const auto* f = member("sue.cmd.data_len")) {
      out(" data=");
      put_uint(out, f->value);
    }
  }
}

// The ends a summary line names, as tshark's Source and Destination columns: IP addresses, else
// the XPU ids of an AFH header, else Ethernet addresses.
struct summary_end {
  std::string_view src, dst;
  bool xpu;
};
inline constexpr std::array<summary_end, 7> summary_ends{{
    {"ip.src", "ip.dst", false},
    {"ipv6.src", "ipv6.dst", false},
    {"afh1.shim.src_xpu", "afh1.shim.dst_xpu", true},
    {"afh1.src_xpu", "afh1.dst_xpu", true},
    {"afh2.src_xpu", "afh2.dst_xpu", true},
    {"afh2c.src_xpu", "afh2c.dst_xpu", true},
    {"eth.src", "eth.dst", false},
}};

template <class Out>
void put_column(chunked<Out>& out, std::string_view s, std::size_t width, bool right) {
  static constexpr std::string_view spaces = "                        ";
  const std::size_t pad = s.size() < width ? std::min(width - s.size(), spaces.size()) : 0;
  if (right) out(spaces.substr(0, pad));
  out(s);
  if (!right) out(spaces.substr(0, pad));
}

}  // namespace detail

// One line per frame: number, encapsulation, length, then what matters for the layer found.
template <class Out, class Tree>
void put_summary(Out& sink, const Tree& t, std::uint64_t frame_number) {
  detail::chunked<Out> out(sink);
  detail::put_uint_right(out, frame_number, 6);
  out("  ");
  out(t.encap);
  if (t.encap.size() < 15) out(std::string_view("               ", 15 - t.encap.size()));
  detail::put_uint_right(out, t.length_on_wire(), 5);
  out(" B");
  if (const auto proto = detail::summary_protocol(t); !proto.empty()) {
    out("  ");
    out(proto);
  }
  detail::put_summary_info(out, t);
}

// tshark's columns: No., Time (relative, with the capture's decimals), Source, Destination,
// Protocol, Length (on the wire), then Info: the encapsulation and what put_summary shows.
template <class Out, class Tree>
void put_summary(Out& sink, const Tree& t, const frame_meta& meta) {
  detail::chunked<Out> out(sink);
  detail::put_uint_right(out, meta.number, 6);
  out(" ");
  {
    std::array<char, 40> b{};
    std::size_t n = 0;
    const auto into = [&](std::string_view s) {
      const std::size_t k = std::min(s.size(), b.size() - n);
      std::memcpy(b.data() + n, s.data(), k);
      n += k;
    };
    detail::put_seconds(into, meta.relative_ns, meta.digits);
    detail::put_column(out, std::string_view(b.data(), n), 12, true);
  }
  // Source and destination as their values print; empty when the frame names neither.
  std::array<char, 48> src{}, dst{};
  std::size_t ns = 0, nd = 0;
  for (const auto& e : detail::summary_ends) {
    const auto* s = t.find(e.src);
    const auto* d = t.find(e.dst);
    if (!s || !d) continue;
    const auto fill = [](std::array<char, 48>& b, std::size_t& n, const field_node& f, bool xpu) {
      const auto into = [&](std::string_view v) {
        const std::size_t k = std::min(v.size(), b.size() - n);
        std::memcpy(b.data() + n, v.data(), k);
        n += k;
      };
      if (xpu) into("XPU ");
      put_value(into, f);
    };
    fill(src, ns, *s, e.xpu);
    fill(dst, nd, *d, e.xpu);
    break;
  }
  out(" ");
  detail::put_column(out, std::string_view(src.data(), ns), 17, true);
  out(" \u2192 ");
  detail::put_column(out, std::string_view(dst.data(), nd), 17, false);
  out(" ");
  std::string_view proto = detail::summary_protocol(t);
  if (proto.empty() && t.layer_count) proto = t.layers[t.layer_count - 1].name;
  detail::put_column(out, proto, 8, false);
  out(" ");
  detail::put_uint_right(out, meta.len, 5);
  out(" ");
  out(t.encap);
  detail::put_summary_info(out, t);
}

}  // namespace scaleup::dissect
