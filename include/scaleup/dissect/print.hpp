// Text and JSON renderings of a dissection tree. Output goes to a sink callable taking
// std::string_view, so nothing here allocates; the caller decides where bytes go. A frame's
// pieces are gathered on the stack first (detail::chunked), so the sink sees few, large writes.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <charconv>
#include <concepts>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "scaleup/dissect/tree.hpp"

namespace scaleup::dissect {

// What the capture says of a frame beside its bytes: tshark's frame.* fields. As tshark, the
// fields (JSON, -V, -T fields) have nine decimals whatever the capture recorded, and the summary
// line's Time column the decimals the capture recorded (`digits`: 6 for microseconds, 9 for
// nanoseconds).
struct frame_meta {
  std::uint64_t number = 0;
  std::uint64_t time_ns = 0;     // frame.time_epoch, in nanoseconds since 1970
  std::int64_t relative_ns = 0;  // frame.time_relative: since the first frame
  std::int64_t delta_ns = 0;     // frame.time_delta: since the frame before
  std::uint8_t digits = 9;
  std::uint32_t len = 0;        // frame.len: on the wire
  std::uint32_t cap_len = 0;    // frame.cap_len: captured
  bool has_interface = false;   // pcapng (and live captures) name the interface
  std::uint32_t interface = 0;  // frame.interface_id
};

// The frame.* names frame_meta answers to, besides the tree's fields.
// The decimals of the frame.time_* fields (tshark 4.0's, for every file).
inline constexpr unsigned field_digits = 9;

inline constexpr std::array<std::string_view, 7> frame_fields{
    "frame.number", "frame.time_epoch", "frame.time_relative", "frame.time_delta",
    "frame.len",    "frame.cap_len",    "frame.interface_id"};

namespace detail {

template <class Out>
void put_uint(Out& out, std::uint64_t v) {
  std::array<char, 24> b{};
  const auto r = std::to_chars(b.data(), b.data() + b.size(), v);
  out(std::string_view(b.data(), static_cast<std::size_t>(r.ptr - b.data())));
}

// Right-aligned in `width` columns.
template <class Out>
void put_uint_right(Out& out, std::uint64_t v, std::size_t width) {
  std::array<char, 24> b{};
  const auto r = std::to_chars(b.data(), b.data() + b.size(), v);
  const auto n = static_cast<std::size_t>(r.ptr - b.data());
  for (std::size_t i = n; i < width; ++i) out(" ");
  out(std::string_view(b.data(), n));
}

// Nanoseconds as seconds with `digits` decimals (at most 9), a minus sign when negative: the
// form of tshark's frame.time_* fields. Writes at most 31 characters at p; returns their end.
inline char* seconds_text(char* p, std::int64_t ns, unsigned digits) noexcept {
  const bool negative = ns < 0;
  const std::uint64_t v =
      negative ? std::uint64_t{0} - static_cast<std::uint64_t>(ns) : static_cast<std::uint64_t>(ns);
  if (negative) *p++ = '-';
  p = std::to_chars(p, p + 20, v / 1'000'000'000u).ptr;
  if (digits > 0) {
    digits = digits > 9 ? 9 : digits;
    static constexpr std::array<std::uint32_t, 10> scale{
        1, 10, 100, 1'000, 10'000, 100'000, 1'000'000, 10'000'000, 100'000'000, 1'000'000'000};
    auto frac = static_cast<std::uint32_t>(v % 1'000'000'000u) / scale[9 - digits];
    *p++ = '.';
    for (unsigned k = digits; k > 0; --k, frac /= 10) p[k - 1] = static_cast<char>('0' + frac % 10);
    p += digits;
  }
  return p;
}

template <class Out>
void put_seconds(Out& out, std::int64_t ns, unsigned digits) {
  std::array<char, 32> b{};
  const char* const end = seconds_text(b.data(), ns, digits);
  out(std::string_view(b.data(), static_cast<std::size_t>(end - b.data())));
}

template <class Out>
void put_hex(Out& out, std::uint64_t v, unsigned digits) {
  std::array<char, 20> b{};
  static constexpr char hexd[] = "0123456789abcdef";
  b[0] = '0';
  b[1] = 'x';
  if (digits == 0) digits = 1;
  for (unsigned i = 0; i < digits && i < 16; ++i)
    b[2 + digits - 1 - i] = hexd[(v >> (4 * i)) & 0xF];
  out(std::string_view(b.data(), 2 + digits));
}

template <class Out>
void put_mac(Out& out, std::uint64_t v) {
  static constexpr char hexd[] = "0123456789abcdef";
  std::array<char, 17> b{};
  for (int i = 0; i < 6; ++i) {
    const auto byte = static_cast<unsigned>(v >> (8 * (5 - i))) & 0xFF;
    b[3 * i] = hexd[byte >> 4];
    b[3 * i + 1] = hexd[byte & 0xF];
    if (i < 5) b[3 * i + 2] = ':';
  }
  out(std::string_view(b.data(), b.size()));
}

template <class Out>
void put_ipv4(Out& out, std::uint64_t v) {
  for (int i = 0; i < 4; ++i) {
    if (i) out(".");
    put_uint(out, (v >> (8 * (3 - i))) & 0xFF);
  }
}

// RFC 5952: lowercase, the longest run (two groups or more) of zero groups shown as "::".
template <class Out>
void put_ipv6(Out& out, const std::uint8_t* a) {
  std::array<unsigned, 8> g{};
  for (int i = 0; i < 8; ++i) g[i] = (unsigned{a[2 * i]} << 8) | a[2 * i + 1];
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len && j - i >= 2) best = i, best_len = j - i;
    i = j == i ? i + 1 : j;
  }
  static constexpr char hexd[] = "0123456789abcdef";
  std::array<char, 40> b{};  // the longest text is 39 characters: written once
  std::size_t n = 0;
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      b[n++] = ':';
      b[n++] = ':';
      i += best_len - 1;
      continue;
    }
    if (i && i != best + best_len) b[n++] = ':';
    bool lead = true;
    for (int s = 12; s >= 0; s -= 4) {
      const unsigned d = (g[i] >> s) & 0xF;
      if (lead && d == 0 && s) continue;
      lead = false;
      b[n++] = hexd[d];
    }
  }
  out(std::string_view(b.data(), n));
}

// Whether any of the eight bytes of `w` needs escaping in a JSON string: a control character
// (below 0x20), '"' or '\\' (put_json_string, and chunked::copy_plain for names). Only whether
// there is one, so the order of the bytes in the word does not matter. The "has less" test: taking
// n from every byte, the lowest byte below n wraps and sets its top bit, which ~w keeps, as that
// byte is below 0x80; with no byte below n nothing borrows and no top bit is left.
constexpr bool any_json_special(std::uint64_t w) noexcept {
  constexpr std::uint64_t ones = 0x0101010101010101;
  constexpr std::uint64_t tops = 0x8080808080808080;
  const auto below = [](std::uint64_t x, std::uint64_t n) { return (x - ones * n) & ~x & tops; };
  return (below(w, 0x20) | below(w ^ (ones * '"'), 1) | below(w ^ (ones * '\\'), 1)) != 0;
}

// A string as JSON, escaped. Eight bytes are tested at a time: the expert messages and names
// that make up most strings have nothing to escape (a frame cut by the snapshot length carries
// two messages of some 200 bytes, and testing them byte by byte was 9 % of `dump --json` on a
// cooked capture).
template <class Out>
void put_json_string(Out& out, std::string_view s) {
  out("\"");
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    for (std::uint64_t w; i + 8 <= s.size(); i += 8) {
      std::memcpy(&w, s.data() + i, 8);
      if (any_json_special(w)) break;
    }
    if (i == s.size()) break;
    const auto c = static_cast<unsigned char>(s[i]);
    if (c >= 0x20 && c != '"' && c != '\\') continue;
    out(s.substr(start, i - start));
    if (c == '"' || c == '\\') {
      const char esc[2] = {'\\', static_cast<char>(c)};
      out(std::string_view(esc, 2));
    } else {
      out("\\u00");
      static constexpr char hexd[] = "0123456789abcdef";
      const char h[2] = {hexd[c >> 4], hexd[c & 0xF]};
      out(std::string_view(h, 2));
    }
    start = i + 1;
  }
  out(s.substr(start));
  out("\"");
}

}  // namespace detail

// The value as a person reads it: numbers in decimal, hex kinds as 0x.., addresses in their
// usual notation, labels by name.
template <class Out>
void put_value(Out& out, const field_node& f) {
  using wire::kind;
  switch (f.info->type) {
    case kind::uint:
    case kind::flag:
      detail::put_uint(out, f.value);
      break;
    case kind::hex:
      detail::put_hex(out, f.value, (f.info->width + 3) / 4);
      break;
    case kind::mac:
      detail::put_mac(out, f.value);
      break;
    case kind::ipv4:
      detail::put_ipv4(out, f.value);
      break;
    case kind::ipv6:
      if (f.raw) detail::put_ipv6(out, f.raw);
      break;
    case kind::label:
      out(f.value_name());
      break;
  }
}

// JSON: numbers for every integer kind (hex included), strings for addresses and labels.
constexpr bool json_number(wire::kind k) noexcept {
  return k == wire::kind::uint || k == wire::kind::flag || k == wire::kind::hex;
}
template <class Out>
void put_json_value(Out& out, const field_node& f) {
  if (json_number(f.info->type)) return detail::put_uint(out, f.value);
  out("\"");
  put_value(out, f);
  out("\"");
}

inline bool shown_in_json(const field_node& f) {
  // Reserved fields appear only through a warning when they are not zero.
  return f.info->check != wire::rule::reserved;
}

template <class Out>
void put_json_error(Out& out, const error& e) {
  out("{\"layer\":");
  detail::put_json_string(out, e.layer);
  out(",\"offset\":");
  detail::put_uint(out, e.offset);
  out(",\"needed\":");
  detail::put_uint(out, e.needed);
  out(",\"available\":");
  detail::put_uint(out, e.available);
  out(",\"code\":");
  detail::put_json_string(out, wire::to_string(e.code));
  out(",\"what\":");
  detail::put_json_string(out, e.what);
  if (!e.field.empty()) {
    out(",\"field\":");
    detail::put_json_string(out, e.field);
    out(",\"value\":");
    detail::put_uint(out, e.value);
  }
  if (e.item) {
    out(",\"index\":");
    detail::put_uint(out, e.item);
  }
  out(",\"severity\":");
  out("\"");
  out(wire::to_string(e.level));
  out("\"");
  out("}");
}

namespace detail {

// The fields of the layers selected by `pick`, as `"filter":value` members; a name seen more
// than once among them holds an array (two VLAN tags). put_json's general path, for a layer with
// more fields than put_json_range indexes; the same members as put_json_picked writes.
template <class Out, class Tree, class Pick>
void put_json_members(Out& out, const Tree& t, Pick&& pick, bool& first) {
  const auto all = t.field_list();
  // Only the span from the first picked field to the last can hold a repeat: one command's
  // fields are a few neighbours, not the whole tree (scanning the whole tree for each field of
  // each command made a frame of many commands quadratic in its fields).
  std::size_t lo = 0, hi = all.size();
  while (lo < hi && !pick(all[lo])) ++lo;
  while (hi > lo && !pick(all[hi - 1])) --hi;
  const auto fields = all.subspan(lo, hi - lo);
  // That span still holds every command's fields for the frame's own members (the R-CRC comes
  // after the commands), so the picked fields are indexed once and the repeat checks walk only
  // them; a layer with more than the index holds is walked through the span.
  std::array<std::uint16_t, 256> picked{};
  std::size_t n = 0;
  for (std::size_t i = 0; i < fields.size() && n <= picked.size(); ++i)
    if (pick(fields[i])) {
      if (n < picked.size()) picked[n] = static_cast<std::uint16_t>(i);
      ++n;
    }
  const bool indexed = n <= picked.size();
  // Calls fn(j) for every picked field j, in order, while fn returns true.
  const auto each = [&](auto&& fn) {
    if (indexed) {
      for (std::size_t k = 0; k < n; ++k)
        if (!fn(std::size_t{picked[k]})) return;
    } else {
      for (std::size_t j = 0; j < fields.size(); ++j)
        if (pick(fields[j]) && !fn(j)) return;
    }
  };
  each([&](std::size_t i) {
    const auto& f = fields[i];
    if (!shown_in_json(f)) return true;
    bool seen_before = false, repeated = false;
    each([&](std::size_t j) {
      if (j == i || fields[j].info->filter != f.info->filter) return true;
      seen_before = j < i;
      repeated = true;
      return !seen_before;
    });
    if (seen_before) return true;
    if (!first) out(",");
    first = false;
    put_json_string(out, f.info->filter);
    out(":");
    if (!repeated) {
      put_json_value(out, f);
      return true;
    }
    out("[");
    bool first_value = true;
    each([&](std::size_t j) {
      if (j < i || fields[j].info->filter != f.info->filter) return true;
      if (!first_value) out(",");
      first_value = false;
      put_json_value(out, fields[j]);
      return true;
    });
    out("]");
    return true;
  });
}

}  // namespace detail

// A sink that the printers write into in place: reserve(n) gives room for n bytes, commit(end)
// says how far they were written. Text then goes once to where it is kept (the tools' output
// buffers are such sinks); any other sink gets it a few kilobytes at a time through a buffer of
// the printer's.
template <class Out>
concept direct_sink = requires(Out& o, std::size_t n, char* p) {
  { o.reserve(n) } -> std::same_as<char*>;
  o.commit(p);
};

namespace detail {

// Collects a frame's output in a local buffer: the many short pieces of a JSON object become
// copies, and the sink sees a few large writes (a frame of random commands is ~1.6 KB of JSON
// in hundreds of pieces). Into a direct_sink, the pieces are written where the sink keeps them.
template <class Out>
class chunked {
 public:
  static constexpr std::size_t capacity = 4096;

  // One byte stored, not 4 KB cleared: GCC 12 (-O1, sanitizers) otherwise warns that flush()
  // may pass the sink bytes never written, not seeing that p_ marks the written ones.
  explicit chunked(Out& out) noexcept : out_(out) { buf_[0] = '\0'; }
  chunked(const chunked&) = delete;
  chunked& operator=(const chunked&) = delete;
  ~chunked() { flush(); }

  void operator()(std::string_view s) {
    if constexpr (!direct_sink<Out>) {
      if (s.size() > capacity) {
        flush();
        out_(s);
        return;
      }
    }
    char* const p = room(s.size());
    copy(p, s.data(), s.size());
    commit(p + s.size());
  }

  void put(char c) {
    if (p_ == end_) refill(1);
    *p_++ = c;
  }

  SCALEUP_ALWAYS_INLINE void number(std::uint64_t v) {
    if (v < 10) return put(static_cast<char>('0' + v));  // flags and small counts: most fields
    commit(digits(room(max_digits), v));
  }

  // v in decimal at p (room for max_digits); returns the end.
  static constexpr std::size_t max_digits = 20;
  SCALEUP_ALWAYS_INLINE static char* digits(char* p, std::uint64_t v) noexcept {
    if (v < 10) {
      *p = static_cast<char>('0' + v);
      return p + 1;
    }
    if (v < 100'000'000) return short_digits(p, static_cast<std::uint32_t>(v));
    // Longer (a command's 64-bit address, a checksum): eight digits at a time from the right.
    constexpr std::uint64_t e8 = 100'000'000;
    const auto low = static_cast<std::uint32_t>(v % e8);
    v /= e8;
    if (v < e8) {
      p = short_digits(p, static_cast<std::uint32_t>(v));
    } else {
      p = short_digits(p, static_cast<std::uint32_t>(v / e8));
      p = eight_digits(p, static_cast<std::uint32_t>(v % e8));
    }
    return eight_digits(p, low);
  }

  // An IPv4 address and a MAC address as text, written in place (not piece by piece through
  // the sink): every frame over IP has four of them.
  void ipv4(std::uint32_t a) {
    char* p = room(15);
    for (int i = 3; i >= 0; --i) {
      const unsigned b = (a >> (8 * i)) & 0xFF;
      if (b >= 100) *p++ = static_cast<char>('0' + b / 100);
      if (b >= 10) *p++ = static_cast<char>('0' + b / 10 % 10);
      *p++ = static_cast<char>('0' + b % 10);
      *p = '.';
      p += i ? 1 : 0;
    }
    commit(p);
  }
  void mac(std::uint64_t v) {
    static constexpr char hexd[] = "0123456789abcdef";
    char* const p = room(17);
    for (int i = 0; i < 6; ++i) {
      const auto b = static_cast<unsigned>(v >> (8 * (5 - i))) & 0xFF;
      p[3 * i] = hexd[b >> 4];
      p[3 * i + 1] = hexd[b & 0xF];
      if (i < 5) p[3 * i + 2] = ':';
    }
    commit(p + 17);
  }

  // `,"s":` (no comma when first) for a display-filter name (wire::is_filter_name), which has
  // nothing to escape: the name of a field's member, copied as it is.
  SCALEUP_ALWAYS_INLINE void name(std::string_view s, bool first) {
    if (s.size() + 4 > capacity) return key(s, first);  // no name is that long: a profile's could
    commit(name_at(room(s.size() + 4), s, first));
  }
  // The same at p (room for s.size() + 4); returns the end.
  SCALEUP_ALWAYS_INLINE static char* name_at(char* p, std::string_view s, bool first) noexcept {
    *p = ',';
    p += first ? 0 : 1;
    *p++ = '"';
    copy(p, s.data(), s.size());
    p += s.size();
    p[0] = '"';
    p[1] = ':';
    return p + 2;
  }

  // The write position and the end of the room, for a loop that writes many short pieces
  // through a pointer of its own (put_json_picked): kept in a register, where p_ is stored and
  // loaded again around every piece (the bytes are char stores, which may change any member),
  // a chain through memory of a few cycles a piece. room(k) and commit() as before; end() is
  // where the room given by the last room() ends.
  char* end() const noexcept { return end_; }

  // `s` in quotes; a string that needs escapes goes the general way.
  void quoted(std::string_view s) {
    if (s.size() + 2 <= capacity) {
      char* const p = room(s.size() + 2);
      *p = '"';
      if (copy_plain(p + 1, s)) {
        p[s.size() + 1] = '"';
        return commit(p + s.size() + 2);
      }
    }
    put_json_string(*this, s);
  }

  // `,"s":` (no comma when first): the name of a member.
  void key(std::string_view s, bool first) {
    if (s.size() + 4 <= capacity) {
      char* p = room(s.size() + 4);
      if (!first) *p++ = ',';
      *p++ = '"';
      if (copy_plain(p, s)) {
        p += s.size();
        p[0] = '"';
        p[1] = ':';
        return commit(p + 2);
      }
    }
    if (!first) put(',');
    put_json_string(*this, s);
    put(':');
  }

  // Hands what is written to the sink (a direct one has it already: this says how far).
  void flush() {
    if constexpr (direct_sink<Out>) {
      if (p_) out_.commit(p_);
      p_ = end_ = nullptr;
    } else {
      if (p_ != buf_.data())
        out_(std::string_view(buf_.data(), static_cast<std::size_t>(p_ - buf_.data())));
      p_ = buf_.data();
    }
  }

  // Room for k bytes at the write position: the window [p_, end_) of the buffer, or of the
  // direct sink's own memory, a block at a time; commit(end) after writing them. k is at most
  // `capacity` (the callers see to it).
  SCALEUP_ALWAYS_INLINE char* room(std::size_t k) {
    if (static_cast<std::size_t>(end_ - p_) < k) refill(k);
    return p_;
  }
  SCALEUP_ALWAYS_INLINE void commit(char* end) { p_ = end; }

 private:
  SCALEUP_COLD void refill(std::size_t k) {
    flush();
    if constexpr (direct_sink<Out>) {
      const std::size_t block = k > capacity ? k : capacity;
      p_ = out_.reserve(block);
      end_ = p_ + block;
    } else {
      end_ = buf_.data() + capacity;
    }
  }

  // n bytes from q to p, without a call for the short pieces a frame is made of.
  SCALEUP_ALWAYS_INLINE static void copy(char* p, const char* q, std::size_t n) noexcept {
    wire::copy_short(p, q, n);
  }

  // Copies `s` to `p`, or returns false when it needs an escape (a control character, '"' or
  // '\\'). Eight bytes at a time: the names are mostly longer than that, and checking them a
  // byte at a time cost more than the rest of a member.
  static bool copy_plain(char* p, std::string_view s) noexcept {
    const char* const q = s.data();
    const std::size_t n = s.size();
    if (n < 8) {
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(q[i]);
        if (c < 0x20 || c == '"' || c == '\\') return false;
        p[i] = q[i];
      }
      return true;
    }
    std::uint64_t w = 0;
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&w, q + i, 8);
      if (any_json_special(w)) return false;
      std::memcpy(p + i, &w, 8);
    }
    std::memcpy(&w, q + n - 8, 8);  // the last eight, overlapping the words before
    if (any_json_special(w)) return false;
    std::memcpy(p + n - 8, &w, 8);
    return true;
  }

  // x (below 10^8) in as many digits as it takes; returns their end. The length by compares,
  // then two digits at a time from the right.
  SCALEUP_ALWAYS_INLINE static char* short_digits(char* p, std::uint32_t x) noexcept {
    const std::size_t n = x < 10           ? 1
                          : x < 100        ? 2
                          : x < 1'000      ? 3
                          : x < 10'000     ? 4
                          : x < 100'000    ? 5
                          : x < 1'000'000  ? 6
                          : x < 10'000'000 ? 7
                                           : 8;
    std::size_t i = n;
    for (; x >= 100; x /= 100, i -= 2) std::memcpy(p + i - 2, pairs + 2 * (x % 100), 2);
    if (x >= 10)
      std::memcpy(p, pairs + 2 * x, 2);
    else
      p[0] = static_cast<char>('0' + x);
    return p + n;
  }
  // x (below 10^8) in exactly eight digits.
  static char* eight_digits(char* p, std::uint32_t x) noexcept {
    for (std::size_t i = 8; i > 0; i -= 2, x /= 100)
      std::memcpy(p + i - 2, pairs + 2 * (x % 100), 2);
    return p + 8;
  }

  static constexpr char pairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";

  Out& out_;
  std::array<char, capacity> buf_;  // for a sink that is not direct
  char* p_ = direct_sink<Out> ? nullptr : buf_.data();
  char* end_ = direct_sink<Out> ? nullptr : buf_.data() + capacity;
};

template <class Out>
SCALEUP_ALWAYS_INLINE void put_json_value(chunked<Out>& w, const field_node& f) {
  using wire::kind;
  if (json_number(f.info->type)) return w.number(f.value);
  switch (f.info->type) {
    case kind::label:  // a profile file's value names are anybody's text
      w.quoted(f.value_name());
      break;
    case kind::ipv4:
      w.put('"');
      w.ipv4(static_cast<std::uint32_t>(f.value));
      w.put('"');
      break;
    case kind::mac:
      w.put('"');
      w.mac(f.value);
      w.put('"');
      break;
    default:
      w.put('"');
      put_value(w, f);
      w.put('"');
  }
}

// The number and time writers above, straight into a frame's buffer.
template <class Out>
void put_uint(chunked<Out>& w, std::uint64_t v) {
  w.number(v);
}
template <class Out>
void put_seconds(chunked<Out>& w, std::int64_t ns, unsigned digits) {
  w.commit(seconds_text(w.room(32), ns, digits));
}

// put_json_picked where a name appears more than once: its fields gathered in one array.
template <class Out>
void put_json_repeated(chunked<Out>& w, std::span<const field_node> all,
                       std::span<const std::uint32_t> picked, bool& first) {
  constexpr std::size_t most = 256;
  std::array<std::uint64_t, most> keys;
  std::array<std::uint16_t, most> first_of;  // the position of the name's first field
  std::array<bool, most> repeated;
  // The names so far by the top eight bits of their keys: a name whose bit is clear is new, so
  // most fields are not compared with the others at all.
  std::array<std::uint64_t, 4> seen{};
  const std::size_t n = picked.size();
  for (std::size_t k = 0; k < n; ++k) {
    const field_info* const info = all[picked[k]].info;
    keys[k] = info->key;
    first_of[k] = static_cast<std::uint16_t>(k);
    repeated[k] = false;
    const auto top = keys[k] >> 56;
    const std::uint64_t bit = std::uint64_t{1} << (top & 63);
    const bool maybe_seen = seen[top >> 6] & bit;
    seen[top >> 6] |= bit;
    for (std::size_t m = 0; maybe_seen && m < k; ++m) {
      if (keys[m] != keys[k] || first_of[m] != m) continue;
      const field_info* const other = all[picked[m]].info;
      if (other != info && other->filter != info->filter) continue;
      first_of[k] = static_cast<std::uint16_t>(m);
      repeated[m] = true;
      break;
    }
  }
  for (std::size_t k = 0; k < n; ++k) {
    const auto& f = all[picked[k]];
    if (first_of[k] != k || !shown_in_json(f)) continue;
    w.name(f.info->filter, first);
    first = false;
    if (!repeated[k]) {
      put_json_value(w, f);
      continue;
    }
    w.put('[');
    for (std::size_t m = k; m < n; ++m) {
      if (first_of[m] != k) continue;
      if (m != k) w.put(',');
      put_json_value(w, all[picked[m]]);
    }
    w.put(']');
  }
}

// Whether a name repeats among the fields at `picked`, by the names' keys: a bit each of
// 64 x Words first, so that most fields are compared with no other. One word for a command's
// few fields (a register: nothing to clear), 16 for a frame's own members (a bit each of 1024;
// cleared two words at a time, as `seen{}` became a `rep stos` whose start-up alone was 6 % of
// put_json_picked).
template <std::size_t Words>
bool names_repeat(std::span<const field_node> all, std::span<const std::uint32_t> picked) {
  constexpr unsigned shift = 64 - std::bit_width(Words * 64 - 1);
  std::array<std::uint64_t, Words> seen;
  for (std::size_t i = 0; i < Words; i += 2) {
    seen[i] = 0;
    if (i + 1 < Words) seen[i + 1] = 0;
  }
  for (std::size_t k = 0; k < picked.size(); ++k) {
    const field_info* const info = all[picked[k]].info;
    const auto h = static_cast<unsigned>(info->key >> shift);
    const std::uint64_t bit = std::uint64_t{1} << (h & 63);
    if (seen[h >> 6] & bit)
      for (std::size_t m = 0; m < k; ++m) {
        const field_info* const other = all[picked[m]].info;
        if (other->key == info->key && (other == info || other->filter == info->filter))
          return true;
      }
    seen[h >> 6] |= bit;
  }
  return false;
}

// The fields at `picked` (indices into `all`, in order) as `"filter":value` members; a name
// seen more than once among them holds an array (two VLAN tags). A name's first field decides
// whether it is shown; every field of the name gives a value.
template <class Out>
void put_json_picked(chunked<Out>& w, std::span<const field_node> all,
                     std::span<const std::uint32_t> picked, bool& first) {
  // A name that repeats (nearly never: two VLAN tags) takes the way that gathers its fields.
  const std::size_t n = picked.size();
  if (n <= 16 ? names_repeat<1>(all, picked) : names_repeat<16>(all, picked))
    return put_json_repeated(w, all, picked, first);
  // Members whose value is a number, the most, are written through a pointer held here (see
  // chunked::end()); any other member through the writer, which the pointer is handed back to.
  using writer = chunked<Out>;
  char* p = w.room(0);
  char* end = w.end();
  for (std::size_t k = 0; k < n; ++k) {
    const auto& f = all[picked[k]];
    if (!shown_in_json(f)) continue;
    const std::string_view name = f.info->filter;
    const std::size_t most = name.size() + 4 + writer::max_digits;
    if (json_number(f.info->type) && most <= writer::capacity) {
      if (static_cast<std::size_t>(end - p) < most) {
        w.commit(p);
        p = w.room(most);
        end = w.end();
      }
      p = writer::digits(writer::name_at(p, name, first), f.value);
    } else {
      w.commit(p);
      w.name(name, first);
      put_json_value(w, f);
      p = w.room(0);
      end = w.end();
    }
    first = false;
  }
  w.commit(p);
}

// Where each layer's fields lie (a command's are neighbours), found in one pass: a walk over
// one layer's fields then costs its own span, not the frame (walking the whole frame for each
// of its layers made a frame of many commands quadratic).
template <class Tree>
struct layer_spans {
  static constexpr std::size_t most =
      std::tuple_size_v<std::remove_cvref_t<decltype(std::declval<const Tree&>().layers)>>;
  std::array<std::uint32_t, most> lo, hi;  // [lo, hi) holds every field of the layer

  explicit layer_spans(const Tree& t) noexcept {
    const auto fields = t.field_list();
    std::fill_n(lo.begin(), t.layer_list().size(), std::uint32_t{0});
    std::fill_n(hi.begin(), t.layer_list().size(), std::uint32_t{0});
    for (std::size_t i = fields.size(); i-- > 0;)
      if (fields[i].layer < most) lo[fields[i].layer] = static_cast<std::uint32_t>(i);
    for (std::size_t i = 0; i < fields.size(); ++i)
      if (fields[i].layer < most) hi[fields[i].layer] = static_cast<std::uint32_t>(i + 1);
  }
};

// The members of the layers selected by `pick`, the fields in [lo, hi): indexed once and
// written by put_json_picked, or by put_json_members when there are too many to index.
template <class Out, class Tree, class Pick>
void put_json_range(chunked<Out>& w, const Tree& t, std::size_t lo, std::size_t hi, Pick&& pick,
                    bool& first) {
  const auto all = t.field_list();
  std::array<std::uint32_t, 256> picked;
  std::size_t n = 0;
  for (std::size_t i = lo; i < hi; ++i) {
    if (!pick(all[i])) continue;
    if (n == picked.size()) return put_json_members(w, t, pick, first);
    picked[n++] = static_cast<std::uint32_t>(i);
  }
  put_json_picked(w, all, std::span<const std::uint32_t>(picked.data(), n), first);
}

// A time as a JSON string: nine decimals do not survive a double, so the text is exact.
template <class Out>
void put_json_seconds(chunked<Out>& w, std::string_view key, std::int64_t ns, unsigned digits) {
  w.name(key, false);
  w.put('"');
  put_seconds(w, ns, digits);
  w.put('"');
}

// Whether two names are the same: at once when they are the same string (a list's name is one
// constant for all its layers).
inline bool same(std::string_view a, std::string_view b) noexcept {
  return (a.data() == b.data() && a.size() == b.size()) || a == b;
}

template <class Out, class Tree>
void put_json_frame(chunked<Out>& w, const Tree& t, std::uint64_t frame_number,
                    const frame_meta* meta = nullptr) {
  w("{\"frame\":");
  w.number(frame_number);
  w(",\"encap\":");
  w.quoted(t.encap);
  if (meta) {
    // The capture's own account of the frame, under tshark's names.
    put_json_seconds(w, "frame.time_epoch", static_cast<std::int64_t>(meta->time_ns), field_digits);
    put_json_seconds(w, "frame.time_relative", meta->relative_ns, field_digits);
    put_json_seconds(w, "frame.time_delta", meta->delta_ns, field_digits);
    w(",\"frame.len\":");
    w.number(meta->len);
    w(",\"frame.cap_len\":");
    w.number(meta->cap_len);
    if (meta->has_interface) {
      w(",\"frame.interface_id\":");
      w.number(meta->interface);
    }
  } else {
    // tshark's frame.len and frame.cap_len: the length on the wire, and what was captured when
    // that is less.
    w(",\"len\":");
    w.number(t.length_on_wire());
    if (t.length_on_wire() > t.frame_length) {
      w(",\"cap_len\":");
      w.number(t.frame_length);
    }
  }
  const auto fields = t.field_list();
  const auto layers = t.layer_list();
  // One pass over the fields: the frame's own members (the fields of layers in no list), and
  // where each listed layer's fields lie (a command's are neighbours).
  constexpr std::size_t most_layers = std::tuple_size_v<decltype(t.layers)>;
  std::array<std::uint32_t, 256> top;
  std::size_t n_top = 0;
  std::array<std::uint32_t, most_layers> lo, hi;  // [lo, hi) holds every field of a listed layer
  std::fill_n(hi.begin(), layers.size(), std::uint32_t{0});
  for (std::size_t i = 0; i < fields.size(); ++i) {
    const std::uint16_t l = fields[i].layer;
    if (l >= layers.size() || layers[l].list.empty()) {
      if (n_top < top.size()) top[n_top] = static_cast<std::uint32_t>(i);
      ++n_top;
      continue;
    }
    if (hi[l] == 0) lo[l] = static_cast<std::uint32_t>(i);
    hi[l] = static_cast<std::uint32_t>(i + 1);
  }
  bool first = false;
  const auto own = [&](const field_node& f) {
    return f.layer >= layers.size() || layers[f.layer].list.empty();
  };
  if (n_top <= top.size())
    put_json_picked(w, fields, std::span<const std::uint32_t>(top.data(), n_top), first);
  else
    put_json_members(w, t, own, first);
  // Each list once, in order of its first layer; each of its layers one object.
  std::array<std::string_view, 8> lists;  // the lists written (a frame has one: the commands)
  std::size_t n_lists = 0;
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const std::string_view list = layers[li].list;
    if (list.empty()) continue;
    bool listed_before = false;
    for (std::size_t k = 0; k < n_lists && !listed_before; ++k)
      listed_before = same(lists[k], list);
    if (!listed_before && n_lists == lists.size())  // more lists than kept: look back
      for (std::size_t k = 0; k < li && !listed_before; ++k)
        listed_before = same(layers[k].list, list);
    if (listed_before) continue;
    if (n_lists < lists.size()) lists[n_lists++] = list;
    w.name(list, false);
    w.put('[');
    for (std::size_t k = li; k < layers.size(); ++k) {
      if (!same(layers[k].list, list)) continue;
      if (k != li) w.put(',');
      w.put('{');
      bool first_member = true;
      if (hi[k] != 0)
        put_json_range(
            w, t, lo[k], hi[k], [k](const field_node& f) { return f.layer == k; }, first_member);
      w.put('}');
    }
    w.put(']');
  }
  w(",\"errors\":[");
  bool first_error = true;
  for (const auto& e : t.error_list()) {
    if (!first_error) w.put(',');
    first_error = false;
    put_json_error(w, e);
  }
  w("]}");
}

}  // namespace detail

// One JSON object (no newline): "frame", "encap", "len", every field under its filter name,
// repeated layers (the commands) as a list of objects under their list name ("sue.cmds"),
// then "errors".
template <class Out, class Tree>
void put_json(Out& out, const Tree& t, std::uint64_t frame_number) {
  detail::chunked<Out> w(out);
  detail::put_json_frame(w, t, frame_number);
}

// The same object with the frame's time and lengths from the capture (frame_meta) in place of
// "len" and "cap_len": "frame.time_epoch", "frame.time_relative", "frame.time_delta" (strings:
// exact decimals), "frame.len", "frame.cap_len" and, for pcapng, "frame.interface_id".
template <class Out, class Tree>
void put_json(Out& out, const Tree& t, const frame_meta& meta) {
  detail::chunked<Out> w(out);
  detail::put_json_frame(w, t, meta.number, &meta);
}

template <class Out>
void put_error_text(Out& out, const error& e) {
  out(wire::to_string(e.level));
  out(": ");
  out(e.layer);
  if (e.item) {
    out(" #");
    detail::put_uint(out, e.item);
  }
  out(" at byte ");
  detail::put_uint(out, e.offset);
  out(": ");
  out(wire::to_string(e.code));
  out(": ");
  out(e.what);
  if (e.needed || e.available) {
    out(" (needed ");
    detail::put_uint(out, e.needed);
    out(", available ");
    detail::put_uint(out, e.available);
    out(")");
  }
  if (!e.field.empty()) {
    out(" [");
    out(e.field);
    out(" = ");
    detail::put_uint(out, e.value);
    out("]");
  }
}

namespace detail {

// The protocol a summary line names: the innermost format the library reads, else the last
// layer found.
template <class Tree>
std::string_view summary_protocol(const Tree& t) {
  if (t.find("sue.rh.ver")) return "SUE";
  if (t.find("tofu.rh.one")) return t.find("tofu.slice.lane") ? "Tofu slice" : "Tofu frame";
  if (t.find("rdma.ftr.crc")) return "ExaJet";
  if (t.find("sue_lite.len")) return "SUE Lite";
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

// The bits of a sub-byte field drawn like tshark: "..01 0110 = name: value".
template <class Out>
void put_bit_pattern(Out& out, const field_node& f) {
  const std::uint32_t first = f.bit / 8 * 8;
  const std::uint32_t last = (f.bit + f.info->width + 7) / 8 * 8;
  for (std::uint32_t b = first; b < last; ++b) {
    if (b != first && (b - first) % 4 == 0) out(" ");
    if (b < f.bit || b >= f.bit + f.info->width) {
      out(".");
    } else {
      const auto shift = f.bit + f.info->width - 1 - b;
      out(((f.value >> shift) & 1) ? "1" : "0");
    }
  }
  out(" = ");
}

// A field's line in the field tree, without its filter name (the Wireshark plugin's item
// labels are these): bit pattern for a field that does not fill its bytes, name, value, and
// the value's name. A generated field has no bit pattern (it is not on the wire).
template <class Out>
void put_field_text(Out& out, const field_node& f) {
  const bool sub_byte = !f.generated && (f.bit % 8 || f.info->width % 8) && f.info->width <= 32;
  if (sub_byte) put_bit_pattern(out, f);
  out(f.info->name);
  out(": ");
  put_value(out, f);
  if (f.info->type != wire::kind::label && !f.value_name().empty()) {
    out(" (");
    out(f.value_name());
    out(")");
  }
}

// A field tree like `tshark -V`: a heading per layer, an indented line per field.
namespace detail {

template <class Out, class Tree>
void put_verbose_frame(chunked<Out>& out, const Tree& t, std::uint64_t frame_number,
                       const frame_meta* meta);

}  // namespace detail

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

// The JSON writer of everything the tools print besides the frames (statistics, manifests):
// the frames' own buffer and escaping (control characters as \u00XX), members written in order,
// objects and arrays nested up to 16 deep. Keys and strings are escaped; numbers are written as
// they are, or as the caller formatted them (number_text: a decimal such as "12.345").
template <class Out>
class json_writer {
 public:
  explicit json_writer(Out& out) : w_(out) {}

  // `{` or `[`, as a member named `key`, or as the next element when the key is empty.
  json_writer& object(std::string_view key = {}) { return open(key, '{', '}'); }
  json_writer& array(std::string_view key = {}) { return open(key, '[', ']'); }
  json_writer& end() {
    if (depth_ > 0) w_.put(close_[--depth_]);
    return *this;
  }

  template <class T>
  requires std::is_integral_v<T> json_writer& member(std::string_view key, T v) {
    name(key);
    if constexpr (std::is_signed_v<T>) {
      if (v < 0) {
        w_.put('-');
        w_.number(std::uint64_t{0} - static_cast<std::uint64_t>(v));
        return *this;
      }
    }
    w_.number(static_cast<std::uint64_t>(v));
    return *this;
  }
  json_writer& member(std::string_view key, std::string_view v) {
    name(key);
    w_.quoted(v);
    return *this;
  }
  json_writer& member(std::string_view key, const char* v) {
    return member(key, std::string_view(v));
  }
  json_writer& member_bool(std::string_view key, bool v) {
    name(key);
    w_(v ? "true" : "false");
    return *this;
  }
  // A number the caller formatted (JSON number syntax).
  json_writer& number_text(std::string_view key, std::string_view v) {
    name(key);
    w_(v);
    return *this;
  }
  // Text straight to the output, between values (a newline after an object).
  json_writer& raw(std::string_view s) {
    w_(s);
    return *this;
  }
  // Starts the next member or element on a new line indented so (after its comma): a file a
  // person edits.
  json_writer& line(std::string_view indent) {
    indent_ = indent;
    return *this;
  }
  void flush() { w_.flush(); }

 private:
  json_writer& open(std::string_view key, char open, char close) {
    name(key);
    w_.put(open);
    if (depth_ < close_.size()) {
      close_[depth_] = close;
      first_[depth_++] = true;
    }
    return *this;
  }
  // The comma before a member or element, and its key.
  void name(std::string_view key) {
    const bool first = depth_ == 0 || first_[depth_ - 1];
    if (depth_ > 0) first_[depth_ - 1] = false;
    if (!indent_.empty()) {
      if (!first) w_.put(',');
      w_.put('\n');
      w_(indent_);
      indent_ = {};
      if (!key.empty()) w_.key(key, true);
    } else if (!key.empty()) {
      w_.key(key, first);
    } else if (!first) {
      w_.put(',');
    }
  }

  detail::chunked<Out> w_;
  std::array<char, 16> close_{};
  std::array<bool, 16> first_{};
  std::size_t depth_ = 0;
  std::string_view indent_{};
};

}  // namespace scaleup::dissect
