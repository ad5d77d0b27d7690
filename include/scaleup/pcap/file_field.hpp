// The fixed parts of capture-file structures (pcap headers and records, pcapng blocks), one
// table per structure: name, byte offset, size, specification section. Every offset the reader
// uses comes from these tables, as every bit of a wire header comes from wire/field.hpp.
//
// They are not wire/field.hpp tables because a capture file is not big-endian: each pcap file
// and each pcapng section is in the byte order of the host that wrote it, told by its magic
// number, so a field is read with the order of its file, found at run time.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <boost/endian/conversion.hpp>

#include "scaleup/wire/bits.hpp"  // SCALEUP_ALWAYS_INLINE

namespace scaleup::pcap {

enum class byte_order : std::uint8_t { little, big };

struct file_field {
  std::string_view name;  // as the specification names it
  std::uint16_t offset;   // bytes from the start of the structure
  std::uint8_t size;      // 1, 2, 4 or 8 bytes, in the byte order of the file
  std::string_view spec;  // where the specification defines it
};

// True when the fields, in order, cover `size` bytes with no gap or overlap (a block's
// variable part starts at `size`).
template <std::size_t N>
constexpr bool tiles(const std::array<file_field, N>& fields, std::size_t size) noexcept {
  std::size_t next = 0;
  for (const auto& f : fields) {
    if (f.offset != next || (f.size != 1 && f.size != 2 && f.size != 4 && f.size != 8))
      return false;
    next += f.size;
  }
  return next == size;
}

// The value of `f` in the structure that starts at `at`; the caller has checked that the
// structure's bytes are there.
SCALEUP_ALWAYS_INLINE std::uint64_t load(const std::uint8_t* at, const file_field& f,
                                         byte_order o) noexcept {
  const std::uint8_t* p = at + f.offset;
  const bool big = o == byte_order::big;
  switch (f.size) {
    case 1:
      return *p;
    case 2:
      return big ? boost::endian::load_big_u16(p) : boost::endian::load_little_u16(p);
    case 4:
      return big ? boost::endian::load_big_u32(p) : boost::endian::load_little_u32(p);
    default:
      return big ? boost::endian::load_big_u64(p) : boost::endian::load_little_u64(p);
  }
}

SCALEUP_ALWAYS_INLINE std::uint32_t load32(const std::uint8_t* at, const file_field& f,
                                           byte_order o) noexcept {
  return static_cast<std::uint32_t>(load(at, f, o));
}

// Writes `v` into the field `f` of the structure that starts at `at` (load's inverse; a value
// wider than the field keeps its low bytes).
inline void store(std::uint8_t* at, const file_field& f, byte_order o, std::uint64_t v) noexcept {
  std::uint8_t* p = at + f.offset;
  const bool big = o == byte_order::big;
  switch (f.size) {
    case 1:
      *p = static_cast<std::uint8_t>(v);
      return;
    case 2:
      big ? boost::endian::store_big_u16(p, static_cast<std::uint16_t>(v))
          : boost::endian::store_little_u16(p, static_cast<std::uint16_t>(v));
      return;
    case 4:
      big ? boost::endian::store_big_u32(p, static_cast<std::uint32_t>(v))
          : boost::endian::store_little_u32(p, static_cast<std::uint32_t>(v));
      return;
    default:
      big ? boost::endian::store_big_u64(p, v) : boost::endian::store_little_u64(p, v);
  }
}

// The same for a 4-byte field (load32's inverse).
inline void store32(std::uint8_t* at, const file_field& f, byte_order o, std::uint32_t v) noexcept {
  store(at, f, o, v);
}

}  // namespace scaleup::pcap
