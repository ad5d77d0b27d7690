// An XPU map read from text (wire/xpu_map.hpp): which XPU each IP address belongs to, for
// captures over IP, which carry no destination XPU id (R2 3.5.1). One line per address:
//
//   # comment, and blank lines, ignored
//   192.168.1.10   7       address, then the XPU id (decimal, or hexadecimal after 0x)
//   fd00::14       0x14    IPv6 as RFC 4291 writes it
//
// An XPU may have several addresses (one per port); an address has one XPU. `scaleup dump` and
// `scaleup stats` take the file as --xpu-map, the Wireshark plugin as a preference. Errors are
// values: the line (error::item), what is wrong, and the offending number where there is one.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "scaleup/wire/error.hpp"
#include "scaleup/wire/ip_address.hpp"
#include "scaleup/wire/xpu_map.hpp"

namespace scaleup::dissect {

class xpu_table final : public wire::xpu_map {
 public:
  std::optional<std::uint32_t> xpu_of(const wire::ip_address& a) const noexcept override {
    const auto it = map_.find(a);
    if (it == map_.end()) return std::nullopt;
    return it->second;
  }
  // False when the address is mapped to another XPU already.
  bool add(const wire::ip_address& a, std::uint32_t xpu) {
    const auto [it, fresh] = map_.try_emplace(a, xpu);
    return fresh || it->second == xpu;
  }
  std::size_t size() const noexcept { return map_.size(); }

 private:
  std::map<wire::ip_address, std::uint32_t> map_;
};

inline constexpr std::string_view xpu_map_layer = "xpu_map";

namespace detail {

constexpr std::optional<std::uint32_t> parse_xpu_id(std::string_view s) noexcept {
  unsigned base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (const char c : s) {
    const int d = wire::detail::hex_digit(c);
    if (d < 0 || static_cast<unsigned>(d) >= base) return std::nullopt;
    v = v * base + static_cast<unsigned>(d);
    if (v > 0xFFFFFFFFu) return std::nullopt;
  }
  return static_cast<std::uint32_t>(v);
}

constexpr bool is_space(char c) noexcept { return c == ' ' || c == '\t' || c == '\r'; }

// The next whitespace-separated word of `s`, removed from it.
constexpr std::string_view next_word(std::string_view& s) noexcept {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  std::size_t n = 0;
  while (n < s.size() && !is_space(s[n])) ++n;
  const std::string_view w = s.substr(0, n);
  s.remove_prefix(n);
  return w;
}

}  // namespace detail

// The map written in `text`; on an error, the lines before it and the error.
inline wire::result<xpu_table> parse_xpu_map(std::string_view text) {
  xpu_table t;
  std::uint32_t line = 0;
  const auto fail = [&](std::string_view what, std::uint64_t value = 0) {
    return wire::result<xpu_table>(t, wire::error{.code = wire::errc::bad_value,
                                                  .layer = xpu_map_layer,
                                                  .what = what,
                                                  .value = value,
                                                  .item = line});
  };
  while (!text.empty()) {
    ++line;
    const std::size_t nl = text.find('\n');
    std::string_view s = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    s = s.substr(0, s.find('#'));
    const std::string_view address = detail::next_word(s);
    if (address.empty()) continue;
    const std::string_view id = detail::next_word(s);
    const auto a = wire::parse_ip_address(address);
    if (!a) return fail("not an IPv4 or IPv6 address");
    if (id.empty()) return fail("an address without an XPU id");
    const auto x = detail::parse_xpu_id(id);
    if (!x) return fail("XPU id is not a number from 0 to 4294967295");
    if (!detail::next_word(s).empty()) return fail("more than an address and an XPU id");
    if (!t.add(*a, *x)) return fail("address mapped to another XPU on an earlier line", *x);
  }
  return t;
}

// The map in file `path`; a file that cannot be read is an error of line 0.
inline wire::result<xpu_table> read_xpu_map(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f)
    return wire::error{
        .code = wire::errc::unsupported, .layer = xpu_map_layer, .what = "cannot open the file"};
  std::string text;
  char buf[4096];
  for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, n);
  const bool bad = std::ferror(f) != 0;
  std::fclose(f);
  if (bad)
    return wire::error{
        .code = wire::errc::unsupported, .layer = xpu_map_layer, .what = "cannot read the file"};
  return parse_xpu_map(text);
}

}  // namespace scaleup::dissect
