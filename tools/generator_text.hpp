// Text the generators of scaleup_docgen write alike (the Lua dissector, the scapy module).
#pragma once

#include <cstdint>
#include <string>

namespace scaleup::docgen {

// `v` in upper-case hexadecimal after "0x", at least `digits` digits.
inline std::string hex(std::uint64_t v, int digits = 0) {
  static constexpr char d[] = "0123456789ABCDEF";
  std::string s;
  do {
    s.insert(s.begin(), d[v & 0xF]);
    v >>= 4;
  } while (v != 0 || static_cast<int>(s.size()) < digits);
  return "0x" + s;
}

}  // namespace scaleup::docgen
