// Display filters as tshark users type them (`-Y 'sue.rh.xpuid == 7 &&
// sue.analysis.retransmission'`): Wireshark 4.0's display-filter syntax over the names the
// dissection tree and the Wireshark plugin use. A filter is compiled once, against the field tables
// (registry.hpp), into a small program: every name resolved to what a frame holds (a field of the
// tree, a frame.* value, a protocol or layer, an expert info, a result of the sequence analysis or
// of the conformance rules), every literal parsed for the type of what it is compared with.
// Evaluating it over a dissected frame takes no heap. Compiling does: like the analysis, it is
// opt-in state.
//
// The semantics are tshark 4.0's (checked against it; README.md, "Display filters"):
// - A field a frame holds several times (the commands of a PDU) satisfies `==`, `<`, `in`,
//   `contains` and `&` when any occurrence does. `!=` is "all not equal" (the same as
//   `!(a == b)` once the field is there), `===` (all_eq) "all equal", `!==` and `~=` (any_ne)
//   "any not equal".
// - A comparison on a field the frame lacks is false, whatever the operator; `!` of it is true.
// - A field alone tests presence (a boolean field alone is true when it is there, whatever its
//   value, as in Wireshark); so do protocol names (`sue`, `udp`) and expert infos.
// - `&&`/`and` binds tighter than `||`/`or`; `!`/`not` tighter than both.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <algorithm>
#include <array>
#include <bitset>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scaleup/dissect/analysis.hpp"
#include "scaleup/dissect/conformance.hpp"
#include "scaleup/dissect/frame_meta.hpp"
#include "scaleup/dissect/registry.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"
#include "scaleup/wire/ip_address.hpp"

namespace scaleup::dissect {

// What a frame holds besides its tree, for the names that are not the tree's.
struct filter_frame {
  const frame_meta* meta = nullptr;  // frame.*; none: no frame.* value is there
  wire::bytes bytes{};               // `frame contains`
  // The frame's sequence-analysis result (sue.analysis.*), when the frame was analysed.
  const frame_result* analysis = nullptr;
  // The conformance violations judged at the frame (sue.check.<rule id>).
  std::span<const frame_violation> violations{};
};

// Why a filter did not compile, and where: `at` and `length` are bytes of the filter's text.
struct filter_error {
  std::string what;
  std::size_t at = 0;
  std::size_t length = 0;
  explicit operator bool() const noexcept { return !what.empty(); }
};

// The layers the engines add besides one per field table (whose table names are layer names
// too): a layer name alone tests for the layer, as a protocol name does for the protocol.
inline constexpr std::array<std::string_view, 16> extra_layer_names{
    "sue.payload",      "sue.cmd",  "sue.opaque",   "sue.pad",
    "sue_lite",         "eth.fcs",  "ip.options",   "ip.reassembled",
    "ipv6.reassembled", "rdma.pkt", "rdma.payload", "tofu.slice.words",
    "tofu.slice.pad",   "tofu.tlp", "tofu.dllp",    "tofu.other"};

class display_filter;
struct compiled_filter;

namespace filter_detail {

enum class value_type : std::uint8_t { none, number, boolean, string, mac, ipv4, ipv6, time };

constexpr std::string_view type_name(value_type t) noexcept {
  switch (t) {
    case value_type::none:
      return "a protocol or marker (no value)";
    case value_type::number:
      return "an unsigned integer";
    case value_type::boolean:
      return "a boolean";
    case value_type::string:
      return "a string";
    case value_type::mac:
      return "an Ethernet address";
    case value_type::ipv4:
      return "an IPv4 address";
    case value_type::ipv6:
      return "an IPv6 address";
    case value_type::time:
      return "a time in seconds";
  }
  return "";
}

// Where a name's values come from.
enum class source : std::uint8_t {
  tree,            // fields of the tree, by filter name (two for ip.addr and its kind)
  meta,            // frame.*: index into frame_fields
  frame,           // the protocol "frame": every frame; `contains` reads its bytes
  encap,           // scaleup's encapsulation name
  protocol,        // a filter prefix (sue, udp): a layer of that protocol is there
  layer,           // a layer name (sue.rh): that layer is there
  expert,          // sue.error.<code>, sue.warning.<code>, sue.note.<code>
  analysis,        // sue.analysis: the frame went through the sequence analysis
  analysis_flag,   // sue.analysis.retransmission...: index into analysis_flags
  analysis_value,  // sue.analysis.in_flight...: index into analysis_values
  check,           // sue.check.<rule id>: index: the rule
};

struct field_ref {
  source from = source::tree;
  value_type type = value_type::none;
  std::uint8_t names = 0;  // tree: how many of `name` are in use
  std::array<std::string, 2> name;
  std::array<std::uint64_t, 2> key{};  // wire::filter_key of each name
  std::uint32_t index = 0;
  wire::severity level = wire::severity::error;  // expert
  std::uint64_t max = ~std::uint64_t{0};         // number: the largest value it can hold
  std::vector<wire::value_name> names_of;        // value names, for literals (compile only)
  std::string written;                           // as the filter wrote it, for messages
};

// One occurrence of a field in a frame.
struct scalar {
  std::uint64_t n = 0;  // number, boolean (0 or 1), MAC, IPv4, time (nanoseconds, signed)
  std::span<const std::uint8_t> raw{};  // IPv6 (16 bytes), the frame's bytes
  std::string_view s{};                 // string
};

struct literal {
  std::uint64_t n = 0;
  wire::ipv6_address v6{};
  std::string s;          // string; for `contains` the bytes
  std::uint8_t bits = 0;  // IPv4 and IPv6: the prefix length (32 or 128: the whole address)
  scalar as_scalar() const noexcept {
    scalar v;
    v.n = n;
    v.raw = v6;
    v.s = s;
    return v;
  }
};

enum class relation : std::uint8_t {
  present,
  eq,
  ne,
  all_eq,
  any_ne,
  lt,
  le,
  gt,
  ge,
  in,
  contains,
  bit_and
};

struct test {
  relation rel = relation::present;
  field_ref lhs;
  bool rhs_field = false;
  field_ref rhs;
  literal value;
  std::vector<std::pair<literal, literal>> set;  // `in`: each a range, lo to hi (equal: one)
  bool negated_in = false;                       // `not in`
  bool analysis = false;  // reads the sequence analysis only: finish() judges it
};

struct node {
  enum class kind : std::uint8_t { test, all, any, negate } what = kind::test;
  std::uint32_t first = 0;  // test: its index; negate: the child; all, any: into children
  std::uint32_t count = 0;  // all, any: how many children
};

// ---- comparing -----------------------------------------------------------------------------

// a against b as `type` orders them: negative, zero or positive. `bits`: of an address, how
// many leading bits count (a CIDR prefix).
inline int order(value_type type, const scalar& a, const scalar& b, unsigned bits) noexcept {
  const auto three = [](auto x, auto y) { return x < y ? -1 : x > y ? 1 : 0; };
  switch (type) {
    case value_type::time:
      return three(static_cast<std::int64_t>(a.n), static_cast<std::int64_t>(b.n));
    case value_type::ipv4: {
      const std::uint64_t mask = bits >= 32  ? 0xFFFFFFFFu
                                 : bits == 0 ? 0
                                             : (0xFFFFFFFFu << (32 - bits)) & 0xFFFFFFFFu;
      return three(a.n & mask, b.n & mask);
    }
    case value_type::ipv6: {
      if (a.raw.size() < 16 || b.raw.size() < 16) return three(a.raw.size(), b.raw.size());
      for (unsigned i = 0; i < 16; ++i) {
        const unsigned left = bits > 8 * i ? bits - 8 * i : 0;
        const auto mask = static_cast<std::uint8_t>(left >= 8 ? 0xFF : 0xFF << (8 - left));
        if (const int c = three(a.raw[i] & mask, b.raw[i] & mask)) return c;
      }
      return 0;
    }
    case value_type::string: {
      const int c = a.s.compare(b.s);
      return three(c, 0);
    }
    default:
      return three(a.n, b.n);
  }
}

inline bool holds_bytes(std::span<const std::uint8_t> hay, std::string_view needle) noexcept {
  if (needle.empty() || needle.size() > hay.size()) return false;
  return std::search(hay.begin(), hay.end(), needle.begin(), needle.end(),
                     [](std::uint8_t h, char n) { return h == static_cast<std::uint8_t>(n); }) !=
         hay.end();
}

inline bool contains(value_type type, const scalar& a, const std::string& needle) noexcept {
  switch (type) {
    case value_type::string:
      return !needle.empty() && a.s.find(needle) != std::string_view::npos;
    case value_type::mac: {
      std::array<std::uint8_t, 6> b{};
      for (int i = 0; i < 6; ++i) b[i] = static_cast<std::uint8_t>(a.n >> (8 * (5 - i)));
      return holds_bytes(b, needle);
    }
    default:  // IPv6, the frame
      return holds_bytes(a.raw, needle);
  }
}

// Judges test `x`: lhs(fn) and rhs(fn) call fn(scalar) for each occurrence of the two sides
// until fn returns true, and say whether it did.
template <class Lhs, class Rhs>
bool judge(const test& x, Lhs&& lhs, Rhs&& rhs) noexcept {
  const value_type t = x.lhs.type;
  const auto some = [](const scalar&) { return true; };
  switch (x.rel) {
    case relation::present:
      return lhs(some);
    case relation::in: {
      const bool in = lhs([&](const scalar& a) {
        for (const auto& [lo, hi] : x.set)
          if (order(t, a, lo.as_scalar(), lo.bits) >= 0 &&
              order(t, a, hi.as_scalar(), hi.bits) <= 0)
            return true;
        return false;
      });
      return x.negated_in ? !in : in;
    }
    case relation::contains:
      return lhs([&](const scalar& a) { return contains(t, a, x.value.s); });
    case relation::bit_and:
      return lhs([&](const scalar& a) { return (a.n & x.value.n) != 0; });
    default:
      break;
  }
  // Comparisons: `c` is true for an occurrence (or a pair of them) whose order satisfies `ok`.
  const auto any = [&](auto&& ok) {
    if (!x.rhs_field) {
      const scalar v = x.value.as_scalar();
      return lhs([&](const scalar& a) { return ok(order(t, a, v, x.value.bits)); });
    }
    return lhs([&](const scalar& a) {
      return rhs([&](const scalar& b) { return ok(order(t, a, b, 128)); });
    });
  };
  const auto both_there = [&] { return lhs(some) && (!x.rhs_field || rhs(some)); };
  switch (x.rel) {
    case relation::eq:
      return any([](int c) { return c == 0; });
    case relation::ne:
      return both_there() && !any([](int c) { return c == 0; });
    case relation::all_eq:
      return both_there() && !any([](int c) { return c != 0; });
    case relation::any_ne:
      return any([](int c) { return c != 0; });
    case relation::lt:
      return any([](int c) { return c < 0; });
    case relation::le:
      return any([](int c) { return c <= 0; });
    case relation::gt:
      return any([](int c) { return c > 0; });
    case relation::ge:
      return any([](int c) { return c >= 0; });
    default:
      return false;
  }
}

// The occurrences of a name in the sequence analysis's result.
template <class Fn>
bool each_analysis(const field_ref& r, const frame_result* a, Fn&& fn) noexcept {
  if (!a) return false;
  scalar s;
  switch (r.from) {
    case source::analysis:
      return fn(s);
    case source::analysis_flag:
      return a->has(analysis_flags[r.index].bit) && fn(s);
    case source::analysis_value: {
      const auto v = a->get(analysis_values[r.index].which);
      if (!v) return false;
      s.n = *v;
      return fn(s);
    }
    default:
      return false;
  }
}

// Whether the layer at `i` is its protocol's, as the Wireshark plugin shows it: not inside an
// earlier layer of another protocol (the commands of a SUE Lite payload are SUE Lite's). The
// layers read from a reassembled IP datagram count their offsets from its first byte: no layer
// before it holds them.
template <class Tree>
bool shown_as_own(const Tree& t, std::size_t i, std::string_view prefix) noexcept {
  const layer_node& l = t.layers[i];
  std::size_t first = 0;
  for (std::size_t k = 0; k < i; ++k)
    if (t.layers[k].name == "ip.reassembled" || t.layers[k].name == "ipv6.reassembled")
      first = k + 1;
  for (std::size_t k = first; k < i; ++k) {
    const layer_node& o = t.layers[k];
    if (o.name.substr(0, o.name.find('.')) == prefix) continue;
    if (l.length > 0 && o.offset <= l.offset && l.offset + l.length <= o.offset + o.length)
      return false;
  }
  return true;
}

constexpr bool has_prefix(std::string_view name, std::string_view prefix) noexcept {
  return name.starts_with(prefix) && (name.size() == prefix.size() || name[prefix.size()] == '.');
}

// The occurrences of a name in a frame (everything but the sequence analysis).
template <class Tree, class Fn>
bool each_in_frame(const field_ref& r, const Tree& t, const filter_frame& f, Fn&& fn) noexcept {
  scalar s;
  switch (r.from) {
    case source::tree:
      for (const field_node& n : t.field_list()) {
        bool named = false;
        for (std::size_t k = 0; k < r.names; ++k)
          named = named || (n.info->key == r.key[k] && n.info->filter == r.name[k]);
        if (!named) continue;
        s = scalar{};
        switch (r.type) {
          case value_type::boolean:
            s.n = n.value != 0;
            break;
          case value_type::ipv6:
            if (!n.raw) continue;
            s.raw = std::span<const std::uint8_t>(n.raw, 16);
            break;
          case value_type::string:
            s.s = n.value_name();
            break;
          default:
            s.n = n.value;
            break;
        }
        if (fn(s)) return true;
      }
      return false;
    case source::meta: {
      if (!f.meta) return false;
      const frame_meta& m = *f.meta;
      switch (r.index) {
        case 0:
          s.n = m.number;
          break;
        case 1:
          s.n = m.time_ns;
          break;
        case 2:
          s.n = static_cast<std::uint64_t>(m.relative_ns);
          break;
        case 3:
          s.n = static_cast<std::uint64_t>(m.delta_ns);
          break;
        case 4:
          s.n = m.len;
          break;
        case 5:
          s.n = m.cap_len;
          break;
        default:
          if (!m.has_interface) return false;
          s.n = m.interface;
          break;
      }
      return fn(s);
    }
    case source::frame:
      s.raw = f.bytes;
      return fn(s);
    case source::encap:
      if (t.encap.empty()) return false;
      s.s = t.encap;
      return fn(s);
    case source::protocol: {
      const std::string_view p = r.name[0];
      for (std::size_t i = 0; i < t.layer_count; ++i)
        if (has_prefix(t.layers[i].name, p) && shown_as_own(t, i, p)) return fn(s);
      // A problem found where no layer was decoded (a PDU too short for its RH) is shown under
      // its protocol all the same.
      for (const auto& e : t.error_list())
        if (has_prefix(e.layer, p) && !t.find_layer(e.layer)) return fn(s);
      return false;
    }
    case source::layer:
      return t.find_layer(r.name[0]) && fn(s);
    case source::expert:
      for (const auto& e : t.error_list())
        if (static_cast<std::uint32_t>(e.code) == r.index && e.level == r.level) return fn(s);
      return false;
    case source::check:
      for (const auto& v : f.violations)
        if (static_cast<std::uint32_t>(v.which) == r.index) return fn(s);
      return false;
    default:
      return false;
  }
}

// ---- reading the text ----------------------------------------------------------------------

enum class tok : std::uint8_t {
  end,
  word,    // a name or an unquoted literal
  string,  // "..." (its text unescaped in `value`)
  chr,     // 'c'
  lparen,
  rparen,
  lbrace,
  rbrace,
  comma,
  range,  // ..
  and_,
  or_,
  not_,
  eq,
  ne,
  all_eq,
  any_ne,
  lt,
  le,
  gt,
  ge,
  contains,
  matches,
  in,
  bit_and,
  bad,  // a character no token starts with, or a string left open
};

struct token {
  tok kind = tok::end;
  std::size_t at = 0, length = 0;
  std::string_view text;  // as written
  std::string value;      // string and chr: unescaped
  std::string error;      // bad: why
};

constexpr bool word_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == ':' || c == '/' || c == '+';
}

// The keywords Wireshark 4.0 has (lower case only, as it takes them).
struct keyword {
  std::string_view text;
  tok kind;
};
inline constexpr std::array<keyword, 17> keywords{{{"and", tok::and_},
                                                   {"or", tok::or_},
                                                   {"not", tok::not_},
                                                   {"eq", tok::eq},
                                                   {"ne", tok::ne},
                                                   {"all_eq", tok::all_eq},
                                                   {"any_eq", tok::eq},
                                                   {"all_ne", tok::ne},
                                                   {"any_ne", tok::any_ne},
                                                   {"lt", tok::lt},
                                                   {"le", tok::le},
                                                   {"gt", tok::gt},
                                                   {"ge", tok::ge},
                                                   {"contains", tok::contains},
                                                   {"matches", tok::matches},
                                                   {"in", tok::in},
                                                   {"bitwise_and", tok::bit_and}}};

// The escapes of a quoted string or character (\\ \" \' \a \b \f \n \r \t \v \xHH \ooo),
// unescaped from `s` at `i` (just after the backslash) into `out`; false: not one.
inline bool unescape(std::string_view s, std::size_t& i, std::string& out) {
  if (i >= s.size()) return false;
  const char c = s[i];
  constexpr std::string_view plain = "\\\"'abfnrtv", as = "\\\"'\a\b\f\n\r\t\v";
  if (const auto k = plain.find(c); k != std::string_view::npos) {
    out += as[k];
    ++i;
    return true;
  }
  if (c == 'x') {
    unsigned v = 0, n = 0;
    while (n < 2 && i + 1 + n < s.size() && wire::detail::hex_digit(s[i + 1 + n]) >= 0)
      v = v * 16 + static_cast<unsigned>(wire::detail::hex_digit(s[i + 1 + n++]));
    if (n == 0) return false;
    out += static_cast<char>(v);
    i += 1 + n;
    return true;
  }
  if (c >= '0' && c <= '7') {
    unsigned v = 0, n = 0;
    while (n < 3 && i + n < s.size() && s[i + n] >= '0' && s[i + n] <= '7')
      v = v * 8 + static_cast<unsigned>(s[i + n++] - '0');
    if (v > 255) return false;
    out += static_cast<char>(v);
    i += n;
    return true;
  }
  return false;
}

inline std::vector<token> lex(std::string_view s) {
  std::vector<token> out;
  std::size_t i = 0;
  const auto add = [&](tok k, std::size_t n) {
    token t;
    t.kind = k;
    t.at = i;
    t.length = n;
    t.text = s.substr(i, n);
    out.push_back(std::move(t));
    i += n;
  };
  const auto bad = [&](std::size_t n, std::string why) {
    add(tok::bad, n);
    out.back().error = std::move(why);
  };
  while (i < s.size()) {
    const char c = s[i];
    const std::string_view rest = s.substr(i);
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
      ++i;
      continue;
    }
    if (rest.starts_with("&&")) {
      add(tok::and_, 2);
    } else if (rest.starts_with("||")) {
      add(tok::or_, 2);
    } else if (rest.starts_with("===")) {
      add(tok::all_eq, 3);
    } else if (rest.starts_with("!==")) {
      add(tok::any_ne, 3);
    } else if (rest.starts_with("==")) {
      add(tok::eq, 2);
    } else if (rest.starts_with("!=")) {
      add(tok::ne, 2);
    } else if (rest.starts_with("~=")) {
      add(tok::any_ne, 2);
    } else if (rest.starts_with("<=")) {
      add(tok::le, 2);
    } else if (rest.starts_with(">=")) {
      add(tok::ge, 2);
    } else if (rest.starts_with("..")) {
      add(tok::range, 2);
    } else if (c == '!') {
      add(tok::not_, 1);
    } else if (c == '<') {
      add(tok::lt, 1);
    } else if (c == '>') {
      add(tok::gt, 1);
    } else if (c == '&') {
      add(tok::bit_and, 1);
    } else if (c == '(') {
      add(tok::lparen, 1);
    } else if (c == ')') {
      add(tok::rparen, 1);
    } else if (c == '{') {
      add(tok::lbrace, 1);
    } else if (c == '}') {
      add(tok::rbrace, 1);
    } else if (c == ',') {
      add(tok::comma, 1);
    } else if (c == '"' || c == '\'') {
      std::string value;
      std::size_t k = i + 1;
      bool closed = false, escape_ok = true;
      while (k < s.size()) {
        if (s[k] == c) {
          closed = true;
          break;
        }
        if (s[k] == '\\') {
          ++k;
          if (!unescape(s, k, value)) {
            escape_ok = false;
            break;
          }
          continue;
        }
        value += s[k++];
      }
      if (!escape_ok) {  // nothing after it is read: the parser stops here
        i = k - 1;
        bad(2, "not an escape sequence (\\\\ \\\" \\' \\a \\b \\f \\n \\r \\t \\v \\xHH \\ooo)");
        break;
      }
      if (!closed) {
        bad(s.size() - i, c == '"' ? "the string is not closed: a \" is missing"
                                   : "the character is not closed: a ' is missing");
        break;
      }
      add(c == '"' ? tok::string : tok::chr, k + 1 - i);
      out.back().value = std::move(value);
    } else if (word_char(c)) {
      std::size_t n = 0;
      while (i + n < s.size() && word_char(s[i + n]) &&
             !(s[i + n] == '.' && i + n + 1 < s.size() && s[i + n + 1] == '.'))
        ++n;
      const std::string_view w = s.substr(i, n);
      tok k = tok::word;
      for (const auto& kw : keywords)
        if (kw.text == w) k = kw.kind;
      add(k, n);
    } else {
      // What Wireshark 4.0 has beyond this reader, named when it is met.
      bad(1, c == '['   ? "slices (field[i:j]) are not supported"
             : c == '#' ? "the layer operator (field#n) is not supported"
             : c == '$' ? "display filter macros (${name}) are not supported"
                        : std::string("'") + c + "' was unexpected here");
      break;
    }
  }
  token e;
  e.at = s.size();
  out.push_back(std::move(e));
  return out;
}

// ---- literals ------------------------------------------------------------------------------

inline bool iequal(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
    if (lower(a[i]) != lower(b[i])) return false;
  }
  return true;
}

// An unsigned integer as Wireshark reads one: decimal, 0x hex, 0b binary, 0 octal, a leading '+'.
inline std::optional<std::uint64_t> parse_unsigned(std::string_view w) noexcept {
  if (w.starts_with('+')) w.remove_prefix(1);
  int base = 10;
  if (w.size() > 2 && w[0] == '0' && (w[1] == 'x' || w[1] == 'X')) {
    base = 16;
    w.remove_prefix(2);
  } else if (w.size() > 2 && w[0] == '0' && (w[1] == 'b' || w[1] == 'B')) {
    base = 2;
    w.remove_prefix(2);
  } else if (w.size() > 1 && w[0] == '0') {
    base = 8;
    w.remove_prefix(1);
  }
  std::uint64_t v = 0;
  const auto r = std::from_chars(w.data(), w.data() + w.size(), v, base);
  if (w.empty() || r.ec != std::errc{} || r.ptr != w.data() + w.size()) return std::nullopt;
  return v;
}

// Whether the digits of `w` are a number too big for 64 bits (not merely not a number).
inline bool too_big_number(std::string_view w) noexcept {
  std::uint64_t v = 0;
  if (w.starts_with('+')) w.remove_prefix(1);
  const auto r = std::from_chars(w.data(), w.data() + w.size(), v);
  return r.ec == std::errc::result_out_of_range;
}

// Seconds with up to nine decimals, as frame.time_relative and sue.analysis.ack_rtt take them:
// "0.000005", "-1", "12.5"; in nanoseconds.
inline std::optional<std::int64_t> parse_seconds(std::string_view w) noexcept {
  bool negative = false;
  if (!w.empty() && (w[0] == '-' || w[0] == '+')) {
    negative = w[0] == '-';
    w.remove_prefix(1);
  }
  const auto dot = w.find('.');
  const std::string_view whole = w.substr(0, dot);
  const std::string_view frac = dot == std::string_view::npos ? "" : w.substr(dot + 1);
  if (whole.empty() || frac.size() > 9 || (dot != std::string_view::npos && frac.empty()))
    return std::nullopt;
  std::int64_t secs = 0;
  const auto r = std::from_chars(whole.data(), whole.data() + whole.size(), secs);
  if (r.ec != std::errc{} || r.ptr != whole.data() + whole.size() || secs > 9'000'000'000)
    return std::nullopt;
  std::int64_t ns = 0;
  for (std::size_t k = 0; k < 9; ++k) {
    const char d = k < frac.size() ? frac[k] : '0';
    if (d < '0' || d > '9') return std::nullopt;
    ns = ns * 10 + (d - '0');
  }
  const std::int64_t v = secs * 1'000'000'000 + ns;
  return negative ? -v : v;
}

// A MAC address: aa:bb:cc:dd:ee:ff, aa-bb-cc-dd-ee-ff, aabb.ccdd.eeff or aabbccddeeff.
inline std::optional<std::uint64_t> parse_mac(std::string_view w) noexcept {
  std::uint64_t v = 0;
  unsigned digits = 0;
  char sep = 0;
  std::size_t run = 0;
  for (const char c : w) {
    const int d = wire::detail::hex_digit(c);
    if (d >= 0) {
      v = v << 4 | static_cast<unsigned>(d);
      ++digits;
      ++run;
      continue;
    }
    if ((c != ':' && c != '-' && c != '.') || (sep && c != sep) || run == 0) return std::nullopt;
    sep = c;
    if ((c == '.' && run != 4) || (c != '.' && run != 2)) return std::nullopt;
    run = 0;
  }
  if (digits != 12 || (sep == '.' ? run != 4 : sep ? run != 2 : false)) return std::nullopt;
  return v;
}

// A byte string: aa:bb:cc, aa-bb, aa.bb, or hex digits in pairs (aabbcc); one byte at least.
inline std::optional<std::string> parse_bytes(std::string_view w) {
  std::string out;
  char sep = 0;
  std::size_t i = 0;
  while (i < w.size()) {
    if (i > 0 && (w[i] == ':' || w[i] == '-' || w[i] == '.')) {
      if (sep && w[i] != sep) return std::nullopt;
      sep = w[i++];
      if (i == w.size()) return std::nullopt;
    }
    if (i + 2 > w.size()) return std::nullopt;
    const int hi = wire::detail::hex_digit(w[i]), lo = wire::detail::hex_digit(w[i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
    if (sep && i < w.size() && w[i] != sep) return std::nullopt;
  }
  if (out.empty()) return std::nullopt;
  return out;
}

}  // namespace filter_detail

class display_filter {
 public:
  // Filters with more tests than this, or nested deeper, are refused (`partial` holds a bit per
  // test; the evaluator recurses once per level).
  static constexpr std::size_t max_tests = 256;
  static constexpr std::size_t max_depth = 64;

  // The tests of a frame judged by test_frame(), for finish() to combine with the sequence
  // analysis's.
  struct partial {
    std::bitset<max_tests> held;
  };

  // `text` compiled against the field tables and `profile`'s command fields (null: none, as
  // `--profile none` reads payloads); an empty text keeps every frame, as tshark's does.
  static compiled_filter compile(std::string_view text, const pack::profile* profile);

  const std::string& text() const noexcept { return text_; }
  // Whether the filter reads the sequence analysis (sue.analysis*) or the conformance rules
  // (sue.check.*): the caller runs them, in frame order, to pass their results.
  bool needs_analysis() const noexcept { return analysis_; }
  bool needs_conformance() const noexcept { return conformance_; }

  // Whether the frame passes: its tree, and what `frame` gives.
  template <class Tree>
  bool matches(const Tree& t, const filter_frame& frame) const noexcept {
    return finish(test_frame(t, frame), frame.analysis);
  }

  // The same in two steps, for a caller that dissects frames in parallel and runs the sequence
  // analysis afterwards in frame order: test_frame judges every test but those of the analysis
  // (frame.analysis is not read), finish() those with the frame's result and says whether the
  // frame passes.
  template <class Tree>
  partial test_frame(const Tree& t, const filter_frame& frame) const noexcept {
    partial p;
    for (std::size_t i = 0; i < tests_.size(); ++i) {
      const auto& x = tests_[i];
      if (x.analysis) continue;
      const auto side = [&](const filter_detail::field_ref& r) {
        return
            [&t, &frame, &r](auto&& fn) { return filter_detail::each_in_frame(r, t, frame, fn); };
      };
      p.held[i] = filter_detail::judge(x, side(x.lhs), side(x.rhs));
    }
    return p;
  }

  bool finish(const partial& p, const frame_result* analysis) const noexcept {
    if (nodes_.empty()) return true;  // the empty filter
    return eval(root_, p, analysis);
  }

 private:
  friend struct filter_compiler;
  display_filter() = default;

  bool eval(std::uint32_t n, const partial& p, const frame_result* a) const noexcept {
    using kind = filter_detail::node::kind;
    const auto& x = nodes_[n];
    switch (x.what) {
      case kind::test: {
        const auto& t = tests_[x.first];
        if (!t.analysis) return p.held[x.first];
        const auto side = [a](const filter_detail::field_ref& r) {
          return [a, &r](auto&& fn) { return filter_detail::each_analysis(r, a, fn); };
        };
        return filter_detail::judge(t, side(t.lhs), side(t.rhs));
      }
      case kind::negate:
        return !eval(x.first, p, a);
      case kind::all:
        for (std::uint32_t k = 0; k < x.count; ++k)
          if (!eval(children_[x.first + k], p, a)) return false;
        return true;
      case kind::any:
        for (std::uint32_t k = 0; k < x.count; ++k)
          if (eval(children_[x.first + k], p, a)) return true;
        return false;
    }
    return false;
  }

  std::string text_;
  std::vector<filter_detail::test> tests_;
  std::vector<filter_detail::node> nodes_;
  std::vector<std::uint32_t> children_;
  std::uint32_t root_ = 0;
  bool analysis_ = false, conformance_ = false;
};

struct compiled_filter {
  std::optional<display_filter> filter;  // none: `error` says why
  filter_error error;
};

// ---- compiling -----------------------------------------------------------------------------

struct filter_compiler {
  using field_ref = filter_detail::field_ref;
  using value_type = filter_detail::value_type;
  using source = filter_detail::source;
  using tok = filter_detail::tok;
  using token = filter_detail::token;
  using relation = filter_detail::relation;
  using node = filter_detail::node;

  std::string_view text;
  const pack::profile* profile;
  std::vector<token> toks;
  std::size_t pos = 0;
  display_filter out;
  filter_error error;
  std::size_t depth = 0;

  bool fail(std::string what, std::size_t at, std::size_t length) {
    if (!error) error = filter_error{std::move(what), at, length};
    return false;
  }
  bool fail(std::string what, const token& t) { return fail(std::move(what), t.at, t.length); }

  const token& peek(std::size_t ahead = 0) const {
    return toks[std::min(pos + ahead, toks.size() - 1)];
  }

  // What a token is called in a message: its text, or the end.
  static std::string shown(const token& t) {
    return t.kind == tok::end ? std::string("the end of the filter")
                              : "\"" + std::string(t.text) + "\"";
  }

  bool unexpected(const token& t) {
    if (t.kind == tok::bad) return fail(t.error, t);
    if (t.kind == tok::end) return fail("the filter ends too soon", t);
    return fail(shown(t) + " was unexpected here", t);
  }

  // ---- names ----

  // Every field_info a filter name has, in tables, computed fields and the profile.
  template <class Fn>
  void each_info(std::string_view name, Fn&& fn) const {
    for (const auto& t : tables)
      for (const auto& f : t.fields)
        if (f.filter == name) fn(f);
    for (const auto* f : computed)
      if (f->filter == name) fn(*f);
    if (profile) {
      if (profile->name_field().filter == name) fn(profile->name_field());
      for (const auto& type : profile->types())
        for (const auto& f : type.fields)
          if (f.filter == name) fn(f);
    }
  }

  static value_type type_of(wire::kind k) noexcept {
    switch (k) {
      case wire::kind::flag:
        return value_type::boolean;
      case wire::kind::mac:
        return value_type::mac;
      case wire::kind::ipv4:
        return value_type::ipv4;
      case wire::kind::ipv6:
        return value_type::ipv6;
      case wire::kind::label:
        return value_type::string;
      default:
        return value_type::number;
    }
  }

  // The largest value Wireshark takes for an unsigned field of `width` bits: its FT_UINTn holds
  // whole bytes (the plugin registers fields so).
  static std::uint64_t max_of(unsigned width) noexcept {
    const unsigned bytes = std::clamp((width + 7) / 8, 1u, 8u);
    return bytes == 8 ? ~std::uint64_t{0} : (std::uint64_t{1} << (8 * bytes)) - 1;
  }

  // A tree field's reference, or none when no table has the name.
  std::optional<field_ref> tree_field(std::string_view name) const {
    field_ref r;
    unsigned width = 0;
    bool found = false;
    each_info(name, [&](const wire::field_info& f) {
      if (!found) r.type = type_of(f.type);
      found = true;
      width = std::max<unsigned>(width, f.width);
      for (const auto& n : f.names) r.names_of.push_back(n);
    });
    if (!found) return std::nullopt;
    r.from = source::tree;
    r.names = 1;
    r.name[0] = std::string(name);
    r.key[0] = wire::filter_key(name);
    r.max = max_of(width);
    return r;
  }

  static bool known_layer(std::string_view name) noexcept {
    for (const auto& t : tables)
      if (t.name == name) return true;
    for (const auto n : extra_layer_names)
      if (n == name) return true;
    return false;
  }

  static bool known_protocol(std::string_view name) noexcept {
    const auto prefix = [](std::string_view s) { return s.substr(0, s.find('.')); };
    for (const auto& t : tables) {
      if (prefix(t.name) == name) return true;
      for (const auto& f : t.fields)
        if (prefix(f.filter) == name) return true;
    }
    for (const auto n : extra_layer_names)
      if (prefix(n) == name) return true;
    return false;
  }

  // What `name` is, or none.
  std::optional<field_ref> resolve(std::string_view name) const {
    field_ref r;
    r.written = std::string(name);
    r.name[0] = std::string(name);
    const auto as = [&](source s, value_type t, std::uint32_t index = 0) {
      r.from = s;
      r.type = t;
      r.index = index;
      return std::optional<field_ref>(r);
    };
    for (std::uint32_t i = 0; i < frame_fields.size(); ++i)
      if (frame_fields[i] == name) {
        r.max = 0xFFFFFFFFu;
        const bool time = name.starts_with("frame.time_");
        return as(source::meta, time ? value_type::time : value_type::number, i);
      }
    if (name == "frame") return as(source::frame, value_type::none);
    if (name == "encap") return as(source::encap, value_type::string);
    if (auto f = tree_field(name)) {
      f->written = r.written;
      return f;
    }
    // Either end, as Wireshark's ip.addr, ipv6.addr, udp.port and eth.addr.
    constexpr std::array<std::array<std::string_view, 3>, 4> either{{
        {"ip.addr", "ip.src", "ip.dst"},
        {"ipv6.addr", "ipv6.src", "ipv6.dst"},
        {"udp.port", "udp.srcport", "udp.dstport"},
        {"eth.addr", "eth.src", "eth.dst"},
    }};
    for (const auto& e : either)
      if (e[0] == name) {
        auto f = tree_field(e[1]);
        if (!f) break;
        f->names = 2;
        f->name[1] = std::string(e[2]);
        f->key[1] = wire::filter_key(e[2]);
        f->written = r.written;
        return f;
      }
    if (name == analysis_filter) return as(source::analysis, value_type::none);
    for (std::uint32_t i = 0; i < analysis_flags.size(); ++i)
      if (analysis_flags[i].filter == name) return as(source::analysis_flag, value_type::none, i);
    for (std::uint32_t i = 0; i < analysis_values.size(); ++i)
      if (analysis_values[i].filter == name) {
        r.max = 0xFFFFFFFFu;
        const bool ns = analysis_values[i].kind == unit::nanoseconds;
        return as(source::analysis_value, ns ? value_type::time : value_type::number, i);
      }
    if (name.starts_with(check_filter) && name.size() > check_filter.size() &&
        name[check_filter.size()] == '.')
      if (const auto rule = rule_by_id(name.substr(check_filter.size() + 1)))
        return as(source::check, value_type::none, static_cast<std::uint32_t>(*rule));
    // Expert infos of the problems the readers report: sue.error.<code> and its kin.
    constexpr std::array<std::pair<std::string_view, wire::severity>, 3> levels{{
        {"sue.error.", wire::severity::error},
        {"sue.warning.", wire::severity::warning},
        {"sue.note.", wire::severity::note},
    }};
    for (const auto& [head, level] : levels) {
      if (!name.starts_with(head)) continue;
      for (unsigned c = 1; c < 256; ++c) {
        const auto code = static_cast<wire::errc>(c);
        if (wire::to_string(code) == "unknown") break;
        if (wire::to_string(code) == name.substr(head.size())) {
          r.level = level;
          return as(source::expert, value_type::none, c);
        }
      }
    }
    if (known_layer(name)) return as(source::layer, value_type::none);
    if (known_protocol(name)) return as(source::protocol, value_type::none);
    return std::nullopt;
  }

  // A word that looks like a name (a letter first, then what filter names hold).
  static bool name_shaped(std::string_view w) noexcept {
    return !w.empty() && ((w[0] >= 'a' && w[0] <= 'z') || (w[0] >= 'A' && w[0] <= 'Z')) &&
           wire::is_filter_name(w);
  }

  bool unknown_name(const token& t) {
    if (name_shaped(t.text)) return fail("no field is named '" + std::string(t.text) + "'", t);
    return fail(shown(t) + " is not a field or protocol name", t);
  }

  // ---- literals ----

  // The literal `t` as a value of `f`'s type into `v`; `for_contains`: as `contains` takes it
  // (bytes, or a string's text).
  bool literal_of(const field_ref& f, const token& t, filter_detail::literal& v,
                  bool for_contains = false) {
    using namespace filter_detail;
    const std::string w(t.text);
    const bool quoted = t.kind == tok::string;
    const auto cannot = [&](std::string_view what) {
      return fail(f.written + " is " + std::string(type_name(f.type)) + ": " + shown(t) + " " +
                      std::string(what),
                  t);
    };
    if (t.kind == tok::chr && f.type != value_type::number && f.type != value_type::boolean)
      return cannot("is a character");
    if (for_contains) {
      if (f.type == value_type::string) {
        v.s = quoted ? t.value : w;
        return true;
      }
      if (quoted) {
        v.s = t.value;
        return true;
      }
      if (auto b = parse_bytes(w)) {
        v.s = std::move(*b);
        return true;
      }
      return cannot("is not a byte string (aa:bb:cc) or a quoted string");
    }
    // A value name (case does not matter, as in Wireshark), for numbers and booleans.
    const auto by_name = [&](std::string_view n) {
      for (const auto& vn : f.names_of)
        if (iequal(vn.name, n)) {
          v.n = f.type == value_type::boolean ? vn.value != 0 : vn.value;
          return true;
        }
      return false;
    };
    switch (f.type) {
      case value_type::none:
        return fail(f.written + " is " + std::string(type_name(f.type)) +
                        ": it can only be tested for presence",
                    t);
      case value_type::string:
        if (t.kind == tok::word) {
          v.s = w;
          return true;
        }
        v.s = t.value;
        return true;
      case value_type::number:
      case value_type::boolean: {
        if (t.kind == tok::chr) {
          if (t.value.size() != 1) return cannot("is not one character");
          v.n = static_cast<unsigned char>(t.value[0]);
        } else if (quoted) {
          if (!by_name(t.value))
            return f.names_of.empty() ? cannot("is a string")
                                      : cannot("is not among the values' names");
          return true;
        } else if (f.type == value_type::boolean &&
                   (w == "True" || w == "TRUE" || w == "False" || w == "FALSE")) {
          v.n = w[0] == 'T';
          return true;
        } else if (const auto n = parse_unsigned(w)) {
          v.n = *n;
        } else if (by_name(w)) {
          return true;
        } else if (w.starts_with('-') && parse_unsigned(w.substr(1))) {
          return cannot("is negative");
        } else if (too_big_number(w)) {
          return cannot("is too big for 64 bits");
        } else {
          return cannot(f.names_of.empty() ? "is not a number"
                                           : "is not a number nor among the values' names");
        }
        if (f.type == value_type::boolean) {
          v.n = v.n != 0;
        } else if (v.n > f.max) {
          return cannot("is too big for it: at most " + std::to_string(f.max));
        }
        return true;
      }
      case value_type::mac:
        if (quoted) return cannot("is a string, not an address");
        if (const auto m = parse_mac(w)) {
          v.n = *m;
          return true;
        }
        return cannot("is not an Ethernet address (aa:bb:cc:dd:ee:ff)");
      case value_type::ipv4:
      case value_type::ipv6: {
        if (quoted) return cannot("is a string, not an address");
        const bool v4 = f.type == value_type::ipv4;
        std::string_view a = w;
        v.bits = v4 ? 32 : 128;
        if (const auto slash = a.find('/'); slash != std::string_view::npos) {
          const auto bits = parse_unsigned(a.substr(slash + 1));
          if (!bits || a.substr(slash + 1).starts_with('0') || *bits > v.bits)
            return cannot(v4 ? "has a prefix length other than 1 to 32"
                             : "has a prefix length other than 1 to 128");
          v.bits = static_cast<std::uint8_t>(*bits);
          a = a.substr(0, slash);
        }
        const auto ip = wire::parse_ip_address(a);
        if (!ip || (ip->version == 4) != v4)
          return cannot(v4 ? "is not an IPv4 address (10.0.0.1, 10.0.0.0/8)"
                           : "is not an IPv6 address (fd00::1, fd00::/16)");
        if (v4)
          v.n = ip->ipv4();
        else
          v.v6 = ip->bytes;
        return true;
      }
      case value_type::time:
        if (!quoted)
          if (const auto ns = parse_seconds(w)) {
            v.n = static_cast<std::uint64_t>(*ns);
            return true;
          }
        return cannot("is not a time in seconds (0.000005)");
    }
    return false;
  }

  // ---- the grammar ----
  //   filter := or? END
  //   or     := and (("||" | "or") and)*
  //   and    := unary (("&&" | "and") unary)*
  //   unary  := ("!" | "not") unary | "(" or ")" | test
  //   test   := NAME [op value | "in" set | "not" "in" set | "contains" value | "&" value]
  //   set    := "{" item ("," item)* "}",  item := value [".." value]

  std::uint32_t add_node(node n) {
    out.nodes_.push_back(n);
    return static_cast<std::uint32_t>(out.nodes_.size() - 1);
  }

  bool deeper(const token& t) {
    if (++depth > display_filter::max_depth)
      return fail("nested more than " + std::to_string(display_filter::max_depth) + " deep", t);
    return true;
  }

  bool chain(bool any, std::uint32_t& n) {
    std::vector<std::uint32_t> kids;
    const tok joiner = any ? tok::or_ : tok::and_;
    for (;;) {
      std::uint32_t k = 0;
      if (!(any ? chain(false, k) : unary(k))) return false;
      kids.push_back(k);
      if (peek().kind != joiner) break;
      ++pos;
    }
    if (kids.size() == 1) {
      n = kids[0];
      return true;
    }
    node x;
    x.what = any ? node::kind::any : node::kind::all;
    x.first = static_cast<std::uint32_t>(out.children_.size());
    x.count = static_cast<std::uint32_t>(kids.size());
    out.children_.insert(out.children_.end(), kids.begin(), kids.end());
    n = add_node(x);
    return true;
  }

  bool unary(std::uint32_t& n) {
    const token& t = peek();
    if (t.kind == tok::not_) {
      ++pos;
      if (!deeper(t)) return false;
      std::uint32_t k = 0;
      if (!unary(k)) return false;
      --depth;
      n = add_node(node{node::kind::negate, k, 0});
      return true;
    }
    if (t.kind == tok::lparen) {
      ++pos;
      if (!deeper(t)) return false;
      if (!chain(true, n)) return false;
      --depth;
      if (peek().kind != tok::rparen)
        return peek().kind == tok::end ? fail("a ')' is missing", peek()) : unexpected(peek());
      ++pos;
      return true;
    }
    return test(n);
  }

  static relation relation_of(tok k) noexcept {
    switch (k) {
      case tok::eq:
        return relation::eq;
      case tok::ne:
        return relation::ne;
      case tok::all_eq:
        return relation::all_eq;
      case tok::any_ne:
        return relation::any_ne;
      case tok::lt:
        return relation::lt;
      case tok::le:
        return relation::le;
      case tok::gt:
        return relation::gt;
      case tok::ge:
        return relation::ge;
      default:
        return relation::present;
    }
  }

  static bool ordering(relation r) noexcept {
    return r == relation::lt || r == relation::le || r == relation::gt || r == relation::ge;
  }

  // The right side of a comparison: a literal, or another field of the same type.
  bool value(filter_detail::test& x) {
    const token& t = peek();
    if (t.kind != tok::word && t.kind != tok::string && t.kind != tok::chr) return unexpected(t);
    ++pos;
    // A word that names something is that field, unless a string is wanted and the word names
    // no value (`encap == afh2`: the encapsulation, not the protocol).
    if (t.kind == tok::word && name_shaped(t.text)) {
      auto other = resolve(t.text);
      if (other && !(x.lhs.type == value_type::string && other->type == value_type::none)) {
        if (other->type != x.lhs.type || other->type == value_type::none)
          return fail(x.lhs.written + " and " + other->written + " are not of compatible types", t);
        const bool lhs_analysis = is_analysis(x.lhs.from), rhs_analysis = is_analysis(other->from);
        if (lhs_analysis != rhs_analysis)
          return fail(
              "a field of the sequence analysis is compared with values, or with "
              "another of its fields only",
              t);
        x.rhs_field = true;
        x.rhs = std::move(*other);
        return true;
      }
    }
    if (!literal_of(x.lhs, t, x.value)) {
      // A word shaped like a name that is not a value of the field: most likely a misspelt field.
      if (t.kind == tok::word && name_shaped(t.text) &&
          t.text.find('.') != std::string_view::npos && x.lhs.type != value_type::string) {
        error = {};
        return unknown_name(t);
      }
      return false;
    }
    return true;
  }

  static bool is_analysis(source s) noexcept {
    return s == source::analysis || s == source::analysis_flag || s == source::analysis_value;
  }

  // A value of a set: a literal (Wireshark 4.0 takes fields too; this reader does not).
  bool set_value(const filter_detail::test& x, const token& t, filter_detail::literal& v) {
    if (t.kind != tok::word && t.kind != tok::string && t.kind != tok::chr) return unexpected(t);
    ++pos;
    if (literal_of(x.lhs, t, v)) return true;
    if (t.kind == tok::word && name_shaped(t.text) && resolve(t.text)) {
      error = {};
      return fail("a set holds values here, not fields", t);
    }
    return false;
  }

  bool set(filter_detail::test& x) {
    if (peek().kind != tok::lbrace) return unexpected(peek());
    ++pos;
    for (;;) {
      filter_detail::literal a, b;
      if (!set_value(x, peek(), a)) return false;
      if (peek().kind == tok::range) {
        ++pos;
        if (!set_value(x, peek(), b)) return false;
      } else {
        b = a;
      }
      x.set.emplace_back(std::move(a), std::move(b));
      if (peek().kind == tok::comma) {
        ++pos;
        continue;
      }
      if (peek().kind == tok::rbrace) {
        ++pos;
        return true;
      }
      return unexpected(peek());
    }
  }

  bool test(std::uint32_t& n) {
    const token& name = peek();
    if (name.kind != tok::word) return unexpected(name);
    ++pos;
    filter_detail::test x;
    {
      auto r = resolve(name.text);
      if (!r && peek().kind == tok::lparen)
        return fail("functions (len, count, upper, ...) are not supported", name);
      if (!r) {
        if (relation_of(peek().kind) != relation::present && !name_shaped(name.text))
          return fail("the left side of " + shown(peek()) + " must be a field, not " +
                          std::string(name.text),
                      name);
        return unknown_name(name);
      }
      x.lhs = std::move(*r);
    }
    const token& op = peek();
    const value_type t = x.lhs.type;
    const auto refuse = [&](std::string_view what) {
      return fail(x.lhs.written + " is " + std::string(filter_detail::type_name(t)) + ": " +
                      std::string(what),
                  op);
    };
    if (const relation r = relation_of(op.kind); r != relation::present) {
      ++pos;
      if (t == value_type::none) return refuse("it can only be tested for presence");
      x.rel = r;
      if (!value(x)) return false;
      if (x.value.bits && x.value.bits < (t == value_type::ipv4 ? 32 : 128) && ordering(r))
        return refuse("a network (CIDR) is compared with == and != only");
    } else if (op.kind == tok::in || (op.kind == tok::not_ && peek(1).kind == tok::in)) {
      x.negated_in = op.kind == tok::not_;
      pos += x.negated_in ? 2 : 1;
      if (t == value_type::none) return refuse("it can only be tested for presence");
      x.rel = relation::in;
      if (!set(x)) return false;
    } else if (op.kind == tok::contains) {
      ++pos;
      if (t != value_type::string && t != value_type::mac && t != value_type::ipv6 &&
          x.lhs.from != source::frame)
        return refuse("contains takes a string, an address, or the frame's bytes");
      x.rel = relation::contains;
      const token& v = peek();
      if (v.kind != tok::word && v.kind != tok::string && v.kind != tok::chr) return unexpected(v);
      ++pos;
      if (!literal_of(x.lhs, v, x.value, true)) return false;
    } else if (op.kind == tok::bit_and) {
      ++pos;
      if (t != value_type::number) return refuse("& takes an unsigned integer field");
      x.rel = relation::bit_and;
      const token& v = peek();
      if (v.kind != tok::word && v.kind != tok::chr) return unexpected(v);
      ++pos;
      if (!literal_of(x.lhs, v, x.value)) return false;
      if (relation_of(peek().kind) != relation::present)
        return fail(
            "arithmetic is not supported: FIELD & MASK is a test of its own (true "
            "when a bit of MASK is set)",
            peek());
    } else if (op.kind == tok::matches) {
      return fail("matches (regular expressions) is not supported; contains is", op);
    }
    x.analysis = is_analysis(x.lhs.from);
    out.analysis_ = out.analysis_ || x.analysis;
    out.conformance_ = out.conformance_ || x.lhs.from == source::check;
    if (out.tests_.size() == display_filter::max_tests)
      return fail("more than " + std::to_string(display_filter::max_tests) + " tests", name);
    x.lhs.names_of.clear();
    x.lhs.names_of.shrink_to_fit();
    out.tests_.push_back(std::move(x));
    n = add_node(node{node::kind::test, static_cast<std::uint32_t>(out.tests_.size() - 1), 0});
    return true;
  }

  bool run() {
    toks = filter_detail::lex(text);
    out.text_ = std::string(text);
    if (peek().kind == tok::end) return true;  // every frame
    if (!chain(true, out.root_)) return false;
    if (peek().kind != tok::end) return unexpected(peek());
    return true;
  }
};

inline compiled_filter display_filter::compile(std::string_view text,
                                               const pack::profile* profile) {
  filter_compiler c{text, profile, {}, 0, display_filter{}, {}, 0};
  if (!c.run()) return {std::nullopt, std::move(c.error)};
  return {std::move(c.out), {}};
}

}  // namespace scaleup::dissect
