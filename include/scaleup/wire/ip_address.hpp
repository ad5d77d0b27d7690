// An IPv4 or IPv6 address as one value: what a UDP flow and an XPU map are keyed on (the frame's
// endpoints over IP, R2 3.5.1), with the text forms a user writes them in (RFC 791 dotted quad,
// RFC 4291 section 2.2 hexadecimal groups with "::").
#pragma once

#include <array>
#include <bit>
#include <compare>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "scaleup/wire/bits.hpp"
#include "scaleup/wire/ip.hpp"

namespace scaleup::wire {

struct ip_address {
  std::uint8_t version = 4;  // 4 or 6
  ipv6_address bytes{};      // IPv4: the first four, the rest zero

  static constexpr ip_address v4(std::uint32_t a) noexcept { return {4, v4_bytes(a)}; }
  // An IPv4 address's sixteen bytes, as one value: built in registers and stored a word at a
  // time, so that the words raw_word() loads are read back from whole stores (byte stores made
  // each lookup of a flow wait for them).
  static constexpr ipv6_address v4_bytes(std::uint32_t a) noexcept {
    return {static_cast<std::uint8_t>(a >> 24), static_cast<std::uint8_t>(a >> 16),
            static_cast<std::uint8_t>(a >> 8), static_cast<std::uint8_t>(a)};
  }
  static constexpr ip_address v6(const ipv6_address& a) noexcept { return {6, a}; }
  constexpr std::uint32_t ipv4() const noexcept { return load_be32(bytes.data()); }
  // The address as two 64-bit words, big-endian: in the order of its bytes.
  constexpr std::uint64_t word(std::size_t i) const noexcept {
    return load_be64(bytes.data() + 8 * i);
  }

  // The address as two 64-bit words in the host's order: for equality and hashing, which need
  // no order (word() swaps each to big-endian, which only the order needs). The same words in a
  // constant expression as at run time (a hash worked out at compile time is the one a table
  // works out), and one load each at run time.
  constexpr std::uint64_t raw_word(std::size_t i) const noexcept {
    return std::bit_cast<std::array<std::uint64_t, 2>>(bytes)[i];
  }

  // The defaulted order (version, then the bytes in turn), compared two words at a time: the
  // defaulted one called memcmp for every flow looked up in a capture.
  friend constexpr bool operator==(const ip_address& x, const ip_address& y) noexcept {
    return x.version == y.version && x.raw_word(0) == y.raw_word(0) &&
           x.raw_word(1) == y.raw_word(1);
  }
  friend constexpr std::strong_ordering operator<=>(const ip_address& x,
                                                    const ip_address& y) noexcept {
    if (const auto c = x.version <=> y.version; c != 0) return c;
    if (const auto c = x.word(0) <=> y.word(0); c != 0) return c;
    return x.word(1) <=> y.word(1);
  }
};

namespace detail {

constexpr int hex_digit(char c) noexcept {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr std::optional<std::uint32_t> parse_ipv4_text(std::string_view s) noexcept {
  std::uint32_t out = 0;
  for (int part = 0; part < 4; ++part) {
    if (part) {
      if (s.empty() || s[0] != '.') return std::nullopt;
      s.remove_prefix(1);
    }
    std::size_t n = 0;
    unsigned v = 0;
    while (n < s.size() && n < 4 && s[n] >= '0' && s[n] <= '9') v = v * 10 + unsigned(s[n++] - '0');
    // No leading zeros: "010" is octal to some parsers and decimal to others.
    if (n == 0 || n > 3 || v > 255 || (n > 1 && s[0] == '0')) return std::nullopt;
    out = (out << 8) | v;
    s.remove_prefix(n);
  }
  if (!s.empty()) return std::nullopt;
  return out;
}

constexpr std::optional<ipv6_address> parse_ipv6_text(std::string_view s) noexcept {
  std::array<std::uint16_t, 8> head{}, tail{};
  std::size_t nh = 0, nt = 0;
  bool gap = false;
  if (s.starts_with("::")) {
    gap = true;
    s.remove_prefix(2);
  }
  while (!s.empty()) {
    std::size_t n = 0;
    unsigned v = 0;
    while (n < s.size() && n < 5 && hex_digit(s[n]) >= 0) v = v * 16 + unsigned(hex_digit(s[n++]));
    if (n == 0 || n > 4) return std::nullopt;
    if (nh + nt == 8) return std::nullopt;
    (gap ? tail[nt++] : head[nh++]) = static_cast<std::uint16_t>(v);
    s.remove_prefix(n);
    if (s.empty()) break;
    if (s[0] != ':') return std::nullopt;
    s.remove_prefix(1);
    if (!s.empty() && s[0] == ':') {
      if (gap) return std::nullopt;  // one "::" at most
      gap = true;
      s.remove_prefix(1);
    } else if (s.empty()) {
      return std::nullopt;  // a trailing single ':'
    }
  }
  if (gap ? nh + nt > 7 : nh != 8) return std::nullopt;
  ipv6_address out{};
  for (std::size_t i = 0; i < nh; ++i) store_be16(out.data() + 2 * i, head[i]);
  for (std::size_t i = 0; i < nt; ++i) store_be16(out.data() + 16 - 2 * (nt - i), tail[i]);
  return out;
}

}  // namespace detail

// "192.168.1.10" or "fd00::1" (no zone, no embedded IPv4); nullopt for anything else.
constexpr std::optional<ip_address> parse_ip_address(std::string_view s) noexcept {
  if (s.find(':') != std::string_view::npos) {
    const auto a = detail::parse_ipv6_text(s);
    if (!a) return std::nullopt;
    return ip_address::v6(*a);
  }
  const auto a = detail::parse_ipv4_text(s);
  if (!a) return std::nullopt;
  return ip_address::v4(*a);
}

}  // namespace scaleup::wire
