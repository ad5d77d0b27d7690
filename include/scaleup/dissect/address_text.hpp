// MAC, IPv4 and IPv6 addresses as text: the one set of address formatters. The `_at` forms write
// at a pointer and return the end, for a writer that has the room already (detail::chunked);
// put_mac, put_ipv4 and put_ipv6 hand the text to any sink in one piece.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "scaleup/wire/bits.hpp"

namespace scaleup::dissect::detail {

// The low 48 bits of v as xx:xx:xx:xx:xx:xx, lowercase: 17 characters at p.
SCALEUP_ALWAYS_INLINE char* mac_at(char* p, std::uint64_t v) noexcept {
  static constexpr char hexd[] = "0123456789abcdef";
  for (int i = 0; i < 6; ++i) {
    const auto b = static_cast<unsigned>(v >> (8 * (5 - i))) & 0xFF;
    p[3 * i] = hexd[b >> 4];
    p[3 * i + 1] = hexd[b & 0xF];
    if (i < 5) p[3 * i + 2] = ':';
  }
  return p + 17;
}

// Dotted decimal: at most 15 characters at p, and room for 16 needed: the dot after each byte is
// stored without a branch and kept only between bytes, so the last one lands past the end.
SCALEUP_ALWAYS_INLINE char* ipv4_at(char* p, std::uint32_t a) noexcept {
  for (int i = 3; i >= 0; --i) {
    const unsigned b = (a >> (8 * i)) & 0xFF;
    if (b >= 100) *p++ = static_cast<char>('0' + b / 100);
    if (b >= 10) *p++ = static_cast<char>('0' + b / 10 % 10);
    *p++ = static_cast<char>('0' + b % 10);
    *p = '.';
    p += i ? 1 : 0;
  }
  return p;
}

// RFC 5952: lowercase, the longest run (two groups or more) of zero groups shown as "::". At
// most 39 characters at p.
inline char* ipv6_at(char* p, const std::uint8_t* a) noexcept {
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
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      *p++ = ':';
      *p++ = ':';
      i += best_len - 1;
      continue;
    }
    if (i && i != best + best_len) *p++ = ':';
    bool lead = true;
    for (int s = 12; s >= 0; s -= 4) {
      const unsigned d = (g[i] >> s) & 0xF;
      if (lead && d == 0 && s) continue;
      lead = false;
      *p++ = hexd[d];
    }
  }
  return p;
}

template <class Out>
void put_mac(Out& out, std::uint64_t v) {
  std::array<char, 17> b{};
  out(std::string_view(b.data(), static_cast<std::size_t>(mac_at(b.data(), v) - b.data())));
}

template <class Out>
void put_ipv4(Out& out, std::uint64_t v) {
  std::array<char, 16> b{};
  const char* const end = ipv4_at(b.data(), static_cast<std::uint32_t>(v));
  out(std::string_view(b.data(), static_cast<std::size_t>(end - b.data())));
}

// `a`: the address's 16 bytes.
template <class Out>
void put_ipv6(Out& out, const std::uint8_t* a) {
  std::array<char, 40> b{};  // the longest text is 39 characters: written once
  const char* const end = ipv6_at(b.data(), a);
  out(std::string_view(b.data(), static_cast<std::size_t>(end - b.data())));
}

}  // namespace scaleup::dissect::detail
