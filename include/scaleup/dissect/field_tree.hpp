// A frame as a field tree like `tshark -V` (a heading per layer, an indented line per field),
// and a frame's values of one field as a column of `tshark -T fields`.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
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

// `tshark -T fields`' output options (-E): the character between columns and between the
// occurrences of a field, the quote around a column, which occurrences are printed, whether
// control characters and backslashes are written as C escapes, the header line of field names
// and the UTF-8 byte order mark before it. The defaults are tshark's.
enum class field_occurrence : char { first = 'f', last = 'l', all = 'a' };
struct field_layout {
  char separator = '\t';
  char aggregator = ',';
  char quote = '\0';  // '"' (quote=d) or '\'' (quote=s); none by default
  field_occurrence occurrence = field_occurrence::all;
  bool escape = true;  // escape=y|n
  bool header = false;
  bool bom = false;
};

namespace detail {

// A column's text as tshark writes it (Wireshark 4.2 and later: wsutil's ws_escape_csv, as
// epan/print.c calls it on the column's values joined by the aggregator), so that the column
// reads back as what it holds: with escape=y alert, backspace, form feed, newline, return, tab,
// vertical tab, backslash and NUL as the two characters of their C escape (with escape=n NUL
// alone); within quotes the quote doubled, as RFC 4180 has it; without quotes the separator and
// a backslash after a backslash. Wireshark 4.0 wrote the quote, the separator and a backslash as
// they are (README.md, "-T fields").
template <class Out>
void put_column_text(chunked<Out>& out, std::string_view s, const field_layout& layout) {
  // Most text (numbers, names) holds nothing to escape: the loop starts at the first character
  // that may get a mark (a control character, the backslash, and the quote or, unquoted, the
  // separator: every one it marks is among them), and text without one goes out in one piece.
  const char marked = layout.quote ? layout.quote : layout.separator;
  const auto first = std::find_if(s.begin(), s.end(), [marked](char c) {
    return static_cast<unsigned char>(c) < 0x20 || c == '\\' || c == marked;
  });
  std::size_t from = 0;
  for (auto i = static_cast<std::size_t>(first - s.begin()); i < s.size(); ++i) {
    const char c = s[i];
    char e = 0;
    if (layout.escape) {
      switch (c) {
        case '\a':
          e = 'a';
          break;
        case '\b':
          e = 'b';
          break;
        case '\f':
          e = 'f';
          break;
        case '\n':
          e = 'n';
          break;
        case '\r':
          e = 'r';
          break;
        case '\t':
          e = 't';
          break;
        case '\v':
          e = 'v';
          break;
        case '\\':
          e = '\\';
          break;
        default:
          break;
      }
    }
    if (e == 0 && c == '\0') e = '0';
    if (e != 0) {
      out(s.substr(from, i - from));
      out.put('\\');
      out.put(e);
      from = i + 1;
    } else if (layout.quote ? c == layout.quote : c == layout.separator || c == '\\') {
      // The character stays and gets a second one before it: the quote doubled, or a
      // backslash before the separator or a backslash.
      out(s.substr(from, i - from));
      out.put(layout.quote ? c : '\\');
      from = i;
    }
  }
  out(s.substr(from));
}

// A sink that writes what it is given into `out` as a column's text.
template <class Out>
struct column_text_sink {
  chunked<Out>* out;
  const field_layout* layout;
  void operator()(std::string_view s) const { put_column_text(*out, s, *layout); }
};

}  // namespace detail

// One column of `tshark -T fields -e NAME`: the values of every field named `filter` in the
// frame (a name repeated, as in the commands of a PDU, gives the occurrences `layout` picks, all
// of them by default, joined by its aggregator), "encap", or a frame.* value from `meta`, in the
// layout's quotes. Nothing, not even the quotes, when the frame has no such field.
template <class Out, class Tree>
void put_field_values(Out& sink, const Tree& t, const frame_meta& meta, std::string_view filter,
                      const field_layout& layout = {}) {
  detail::chunked<Out> out(sink);
  // The column's text, values and aggregators, goes out escaped as one string (as tshark
  // escapes the joined values); the quotes around it do not.
  const detail::column_text_sink<Out> escaped{&out, &layout};
  const auto column = [&](auto&& write) {
    if (layout.quote) out.put(layout.quote);
    {
      detail::chunked<const detail::column_text_sink<Out>> text(escaped);
      write(text);
    }
    if (layout.quote) out.put(layout.quote);
  };
  const auto secs = [&](std::int64_t ns) {
    column([&](auto& text) { detail::put_seconds(text, ns, field_digits); });
  };
  const auto num = [&](std::uint64_t v) { column([&](auto& text) { detail::put_uint(text, v); }); };
  if (filter == "frame.number") return num(meta.number);
  if (filter == "frame.time_epoch") return secs(static_cast<std::int64_t>(meta.time_ns));
  if (filter == "frame.time_relative") return secs(meta.relative_ns);
  if (filter == "frame.time_delta") return secs(meta.delta_ns);
  if (filter == "frame.len") return num(meta.len);
  if (filter == "frame.cap_len") return num(meta.cap_len);
  if (filter == "frame.interface_id") {
    if (meta.has_interface) num(meta.interface);
    return;
  }
  if (filter == "encap") return column([&](auto& text) { text(t.encap); });
  const auto value = [&](auto& text, const field_node& f) {
    if (f.info->type == wire::kind::label)
      text(f.value_name());
    else
      put_value(text, f);
  };
  const std::span<const field_node> fields = t.field_list();
  std::size_t first = 0;
  while (first < fields.size() && fields[first].info->filter != filter) ++first;
  if (first == fields.size()) return;
  switch (layout.occurrence) {
    case field_occurrence::first:
      return column([&](auto& text) { value(text, fields[first]); });
    case field_occurrence::last: {
      std::size_t last = first;
      for (std::size_t i = first + 1; i < fields.size(); ++i)
        if (fields[i].info->filter == filter) last = i;
      return column([&](auto& text) { value(text, fields[last]); });
    }
    case field_occurrence::all:
      return column([&](auto& text) {
        value(text, fields[first]);
        for (std::size_t i = first + 1; i < fields.size(); ++i) {
          if (fields[i].info->filter != filter) continue;
          text.put(layout.aggregator);
          value(text, fields[i]);
        }
      });
  }
}

// A frame's row of `tshark -T fields`: a column per name, between them the layout's separator
// (no line end).
template <class Out, class Tree, class Names>
void put_field_row(Out& sink, const Tree& t, const frame_meta& meta, const Names& names,
                   const field_layout& layout) {
  bool first = true;
  for (const auto& name : names) {
    if (!first) sink(std::string_view(&layout.separator, 1));
    first = false;
    put_field_values(sink, t, meta, name, layout);
  }
}

// What `tshark -T fields` writes before the first frame: the byte order mark with bom=y, the
// field names on a line with header=y, between them the separator.
template <class Out, class Names>
void put_field_header(Out& out, const Names& names, const field_layout& layout) {
  if (layout.bom) out(std::string_view("\xEF\xBB\xBF"));
  if (!layout.header) return;
  bool first = true;
  for (const auto& name : names) {
    if (!first) out(std::string_view(&layout.separator, 1));
    first = false;
    out(std::string_view(name));
  }
  out(std::string_view("\n"));
}

}  // namespace scaleup::dissect
