// The classic pcap file format (draft-ietf-opsawg-pcap, "PCAP Capture File Format"): a 24-byte
// file header, then records of a 16-byte header and the captured bytes, all in the byte order
// of the host that wrote the file, told by the magic number.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "scaleup/pcap/file_field.hpp"
#include "scaleup/pcap/packet.hpp"

namespace scaleup::pcap::pcap_file {

// ---- file header (section 4) ---------------------------------------------------------------

inline constexpr file_field magic{"Magic Number", 0, 4, "draft-ietf-opsawg-pcap 4"};
inline constexpr file_field major_version{"Major Version", 4, 2, "draft-ietf-opsawg-pcap 4"};
inline constexpr file_field minor_version{"Minor Version", 6, 2, "draft-ietf-opsawg-pcap 4"};
inline constexpr file_field reserved1{"Reserved1 (thiszone, ignored)", 8, 4,
                                      "draft-ietf-opsawg-pcap 4"};
inline constexpr file_field reserved2{"Reserved2 (sigfigs, ignored)", 12, 4,
                                      "draft-ietf-opsawg-pcap 4"};
inline constexpr file_field snaplen{"SnapLen", 16, 4, "draft-ietf-opsawg-pcap 4"};
inline constexpr file_field link_type{"LinkType and additional information", 20, 4,
                                      "draft-ietf-opsawg-pcap 4, 4.1"};
inline constexpr std::array header_fields{magic,     major_version, minor_version, reserved1,
                                          reserved2, snaplen,       link_type};
inline constexpr std::size_t header_size = 24;
static_assert(tiles(header_fields, header_size));

// The link type is the low 16 bits; above them the field may say how long an FCS the frames
// carry (draft-ietf-opsawg-pcap 4.1), which is not part of the type (libpcap's LT_LINKTYPE).
inline constexpr std::uint32_t link_type_mask = 0xffff;

// ---- packet record (section 5) -------------------------------------------------------------

inline constexpr file_field ts_seconds{"Timestamp (Seconds)", 0, 4, "draft-ietf-opsawg-pcap 5"};
inline constexpr file_field ts_fraction{"Timestamp (Microseconds or nanoseconds)", 4, 4,
                                        "draft-ietf-opsawg-pcap 5"};
inline constexpr file_field captured_length{"Captured Packet Length", 8, 4,
                                            "draft-ietf-opsawg-pcap 5"};
inline constexpr file_field original_length{"Original Packet Length", 12, 4,
                                            "draft-ietf-opsawg-pcap 5"};
inline constexpr std::array record_fields{ts_seconds, ts_fraction, captured_length,
                                          original_length};
inline constexpr std::size_t record_size = 16;
static_assert(tiles(record_fields, record_size));

// Alexey Kuznetzov's patched libpcap (magic 0xa1b2cd34, "modified" in libpcap and tshark)
// appends 8 bytes to each record header; libpcap and tshark both read it.
inline constexpr file_field if_index{"ifindex", 16, 4, "libpcap sf-pcap.c (patched format)"};
inline constexpr file_field protocol{"protocol", 20, 2, "libpcap sf-pcap.c (patched format)"};
inline constexpr file_field pkt_type{"pkt_type", 22, 1, "libpcap sf-pcap.c (patched format)"};
inline constexpr file_field pad{"pad", 23, 1, "libpcap sf-pcap.c (patched format)"};
inline constexpr std::array patched_record_fields{
    ts_seconds, ts_fraction, captured_length, original_length, if_index, protocol, pkt_type, pad};
inline constexpr std::size_t patched_record_size = 24;
static_assert(tiles(patched_record_fields, patched_record_size));

// ---- magic numbers -------------------------------------------------------------------------

struct variant {
  std::uint32_t magic;
  precision_digits precision;  // of the record's fraction field
  std::uint8_t record_size;
  std::string_view name;
};

inline constexpr std::array<variant, 3> variants{{
    {0xa1b2c3d4, micro_digits, record_size, "pcap"},
    {0xa1b23c4d, nano_digits, record_size, "nanosecond pcap"},
    {0xa1b2cd34, micro_digits, patched_record_size, "patched pcap"},
}};

struct recognised {
  variant kind;
  byte_order order;
};

// The variant and byte order the first four bytes of a file announce, if they are a pcap
// magic number in either byte order.
inline std::optional<recognised> recognise(const std::uint8_t* first4) noexcept {
  for (const byte_order o : {byte_order::little, byte_order::big}) {
    const std::uint32_t m = load32(first4, magic, o);
    for (const variant& v : variants)
      if (m == v.magic) return recognised{v, o};
  }
  return std::nullopt;
}

// Versions before 2.3 wrote the two lengths in the other order, and 2.3 did on some hosts
// (libpcap's and tshark's "swapped lengths"): there a captured length above the original
// one means the two are swapped.
enum class length_order : std::uint8_t { as_specified, swapped, maybe_swapped };

constexpr length_order length_order_of(std::uint16_t major, std::uint16_t minor) noexcept {
  if (major == 2 && minor < 3) return length_order::swapped;
  if (major == 2 && minor == 3) return length_order::maybe_swapped;
  return length_order::as_specified;
}

// A record's time in nanoseconds since the epoch. The seconds are unsigned (times up to 2106)
// and the sum cannot overflow 64 bits; a fraction of a second or more is added as it is, as
// tshark does.
constexpr std::uint64_t time_ns(std::uint32_t seconds, std::uint32_t fraction,
                                precision_digits precision) noexcept {
  return std::uint64_t{seconds} * 1'000'000'000u +
         std::uint64_t{fraction} * (precision == nano_digits ? 1u : 1000u);
}

}  // namespace scaleup::pcap::pcap_file
