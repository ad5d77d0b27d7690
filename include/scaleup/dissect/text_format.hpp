// Numbers, times and strings as text, for any sink: a callable taking std::string_view, so
// nothing here allocates and the caller decides where the bytes go.
#pragma once

#include <array>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "scaleup/wire/version.hpp"

namespace scaleup::dissect::detail {

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

// "00" to "99": decimal digits two at a time.
inline constexpr char digit_pairs[] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";

// x (below 10^4) in exactly four digits at p.
inline void four_digits(char* p, std::uint32_t x) noexcept {
  std::memcpy(p, digit_pairs + 2 * (x / 100), 2);
  std::memcpy(p + 2, digit_pairs + 2 * (x % 100), 2);
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
    if (digits == 9) {
      // Every frame's times have nine: in groups of four, which do not wait on each other (a
      // digit at a time is a chain of nine divisions).
      const std::uint32_t low = frac % 100'000'000;
      p[0] = static_cast<char>('0' + frac / 100'000'000);
      four_digits(p + 1, low / 10'000);
      four_digits(p + 5, low % 10'000);
      return p + 9;
    }
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

}  // namespace scaleup::dissect::detail
