// A frame as a field tree like `tshark -V` (a heading per layer, an indented line per field),
// and a frame's values of one field as a column of `tshark -T fields`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scaleup/dissect/chunked.hpp"
#include "scaleup/dissect/field_text.hpp"
#include "scaleup/dissect/frame_meta.hpp"
#include "scaleup/dissect/tree.hpp"

namespace scaleup::dissect {

namespace detail {

template <class Out, class Tree>
void put_verbose_frame(chunked<Out>& out, const Tree& t, std::uint64_t frame_number,
                       const frame_meta* meta) {
  out("Frame ");
  put_uint(out, frame_number);
  out(": ");
  put_uint(out, t.length_on_wire());
  out(" bytes");
  if (t.length_on_wire() > t.frame_length) {
    out(" on the wire, ");
    put_uint(out, t.frame_length);
    out(" captured");
  }
  out(", encap ");
  out(t.encap);
  out("\n");
  if (meta) {
    const auto line = [&](std::string_view label, std::string_view filter, auto&& value,
                          std::string_view unit, bool generated) {
      out(generated ? "    [" : "    ");
      out(label);
      out(": ");
      value();
      out(unit);
      out(generated ? "]  {" : "  {");
      out(filter);
      out("}\n");
    };
    const auto secs = [&](std::int64_t ns) {
      return [&out, ns] { put_seconds(out, ns, field_digits); };
    };
    const auto num = [&](std::uint64_t v) { return [&out, v] { put_uint(out, v); }; };
    if (meta->has_interface)
      line("Interface id", "frame.interface_id", num(meta->interface), "", false);
    line("Epoch Time", "frame.time_epoch", secs(static_cast<std::int64_t>(meta->time_ns)),
         " seconds", false);
    line("Time delta from previous captured frame", "frame.time_delta", secs(meta->delta_ns),
         " seconds", true);
    line("Time since first frame", "frame.time_relative", secs(meta->relative_ns), " seconds",
         true);
    line("Frame Length", "frame.len", num(meta->len), " bytes", false);
    line("Capture Length", "frame.cap_len", num(meta->cap_len), " bytes", false);
  }
  const auto fields = t.field_list();
  const layer_spans<Tree> spans(t);
  for (std::size_t li = 0; li < t.layer_count; ++li) {
    const auto& l = t.layers[li];
    out(l.title);
    out(" (");
    out(l.name);
    out("), bytes ");
    put_uint(out, l.offset);
    out("-");
    put_uint(out, l.length ? l.offset + l.length - 1 : l.offset);
    out("\n");
    for (const auto& f : fields.subspan(spans.lo[li], spans.hi[li] - spans.lo[li])) {
      if (f.layer != li) continue;
      out("    ");
      if (f.generated) out("[");
      put_field_text(out, f);
      if (f.generated) out("]");
      out("  {");
      out(f.info->filter);
      out("}\n");
    }
  }
  for (const auto& e : t.error_list()) {
    out("    [");
    put_error_text(out, e);
    out("]\n");
  }
}

}  // namespace detail

// A field tree like `tshark -V`: a heading per layer, an indented line per field.
template <class Out, class Tree>
void put_verbose(Out& sink, const Tree& t, std::uint64_t frame_number) {
  detail::chunked<Out> out(sink);
  detail::put_verbose_frame(out, t, frame_number, nullptr);
}

// The same tree headed by the capture's account of the frame (tshark's "Frame" section): its
// interface, time, time since the frame before and since the first, and its lengths.
template <class Out, class Tree>
void put_verbose(Out& sink, const Tree& t, const frame_meta& meta) {
  detail::chunked<Out> out(sink);
  detail::put_verbose_frame(out, t, meta.number, &meta);
}

// One column of `tshark -T fields -e NAME`: the values of every field named `filter` in the
// frame (a name repeated, as in the commands of a PDU, gives them all, comma-separated, as tshark
// does), "encap", or a frame.* value from `meta`. Nothing when the frame has no such field.
template <class Out, class Tree>
void put_field_values(Out& sink, const Tree& t, const frame_meta& meta, std::string_view filter) {
  detail::chunked<Out> out(sink);
  const auto secs = [&](std::int64_t ns) { detail::put_seconds(out, ns, field_digits); };
  if (filter == "frame.number") return detail::put_uint(out, meta.number);
  if (filter == "frame.time_epoch") return secs(static_cast<std::int64_t>(meta.time_ns));
  if (filter == "frame.time_relative") return secs(meta.relative_ns);
  if (filter == "frame.time_delta") return secs(meta.delta_ns);
  if (filter == "frame.len") return detail::put_uint(out, meta.len);
  if (filter == "frame.cap_len") return detail::put_uint(out, meta.cap_len);
  if (filter == "frame.interface_id") {
    if (meta.has_interface) detail::put_uint(out, meta.interface);
    return;
  }
  if (filter == "encap") return out(t.encap);
  bool first = true;
  for (const auto& f : t.field_list()) {
    if (f.info->filter != filter) continue;
    if (!first) out.put(',');
    first = false;
    put_value(out, f);
  }
}

}  // namespace scaleup::dissect
