// The pcapng file format (draft-ietf-opsawg-pcapng, "PCAP Next Generation (pcapng) Capture File
// Format"): a sequence of blocks, each `type, total length, body, total length again`, in
// sections that each start with a Section Header Block and may each have their own byte order.
// Interfaces are described per section; each packet names its interface, which gives its link
// type, snapshot length and time stamp resolution.
#pragma once

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string_view>

#include "scaleup/pcap/file_field.hpp"
#include "scaleup/pcap/packet.hpp"

namespace scaleup::pcap::pcapng_file {

// ---- every block (section 3.1) -------------------------------------------------------------

inline constexpr file_field block_type{"Block Type", 0, 4, "draft-ietf-opsawg-pcapng 3.1"};
inline constexpr file_field block_total_length{"Block Total Length", 4, 4,
                                               "draft-ietf-opsawg-pcapng 3.1"};
inline constexpr std::size_t block_header_size = 8;
// The Block Total Length again after the body, so that a file can be walked backwards; its
// offset is counted from the last 4 bytes of the block.
inline constexpr file_field trailing_total_length{"Block Total Length", 0, 4,
                                                  "draft-ietf-opsawg-pcapng 3.1"};
inline constexpr std::size_t block_trailer_size = 4;
inline constexpr std::size_t min_block_size = block_header_size + block_trailer_size;
// A block holds one packet at most, plus fixed fields and options.
inline constexpr std::uint32_t max_block_size = max_record + (1u << 16);

enum class block : std::uint32_t {
  section_header = 0x0a0d0d0a,  // 4.1; a palindrome, so it reads the same in either order
  interface_description = 1,    // 4.2
  packet = 2,                   // Appendix A (obsolete)
  simple_packet = 3,            // 4.4
  name_resolution = 4,          // 4.5
  interface_statistics = 5,     // 4.6
  enhanced_packet = 6,          // 4.3
  decryption_secrets = 0x0a,    // 4.7
};

constexpr std::string_view name_of(std::uint32_t type) noexcept {
  switch (static_cast<block>(type)) {
    case block::section_header:
      return "section header block";
    case block::interface_description:
      return "interface description block";
    case block::packet:
      return "packet block";
    case block::simple_packet:
      return "simple packet block";
    case block::name_resolution:
      return "name resolution block";
    case block::interface_statistics:
      return "interface statistics block";
    case block::enhanced_packet:
      return "enhanced packet block";
    case block::decryption_secrets:
      return "decryption secrets block";
  }
  return "block";
}

// ---- Section Header Block (4.1) ------------------------------------------------------------

inline constexpr file_field byte_order_magic{"Byte-Order Magic", 8, 4,
                                             "draft-ietf-opsawg-pcapng 4.1"};
inline constexpr file_field major_version{"Major Version", 12, 2, "draft-ietf-opsawg-pcapng 4.1"};
inline constexpr file_field minor_version{"Minor Version", 14, 2, "draft-ietf-opsawg-pcapng 4.1"};
inline constexpr file_field section_length{"Section Length", 16, 8, "draft-ietf-opsawg-pcapng 4.1"};
inline constexpr std::array section_header_fields{
    block_type, block_total_length, byte_order_magic, major_version, minor_version, section_length};
inline constexpr std::size_t section_header_size = 24;  // options follow
static_assert(tiles(section_header_fields, section_header_size));
inline constexpr std::uint32_t byte_order_value = 0x1a2b3c4d;
inline constexpr std::uint16_t supported_major = 1;

// ---- Interface Description Block (4.2) -----------------------------------------------------

inline constexpr file_field idb_link_type{"LinkType", 8, 2, "draft-ietf-opsawg-pcapng 4.2"};
inline constexpr file_field idb_reserved{"Reserved", 10, 2, "draft-ietf-opsawg-pcapng 4.2"};
inline constexpr file_field idb_snaplen{"SnapLen", 12, 4, "draft-ietf-opsawg-pcapng 4.2"};
inline constexpr std::array interface_description_fields{block_type, block_total_length,
                                                         idb_link_type, idb_reserved, idb_snaplen};
inline constexpr std::size_t interface_description_size = 16;  // options follow
static_assert(tiles(interface_description_fields, interface_description_size));

// Interface options read (4.2): the rest are skipped.
inline constexpr std::uint16_t if_name = 2;
inline constexpr std::uint16_t if_tsresol = 9;
inline constexpr std::uint16_t if_tsoffset = 14;
// Their values, from the first byte after the option header.
inline constexpr file_field if_tsresol_value{"if_tsresol", 0, 1, "draft-ietf-opsawg-pcapng 4.2"};
inline constexpr file_field if_tsoffset_value{"if_tsoffset", 0, 8, "draft-ietf-opsawg-pcapng 4.2"};

// ---- Enhanced Packet Block (4.3) -----------------------------------------------------------

inline constexpr file_field epb_interface_id{"Interface ID", 8, 4, "draft-ietf-opsawg-pcapng 4.3"};
inline constexpr file_field epb_ts_upper{"Timestamp (Upper)", 12, 4,
                                         "draft-ietf-opsawg-pcapng 4.3"};
inline constexpr file_field epb_ts_lower{"Timestamp (Lower)", 16, 4,
                                         "draft-ietf-opsawg-pcapng 4.3"};
inline constexpr file_field epb_captured_length{"Captured Packet Length", 20, 4,
                                                "draft-ietf-opsawg-pcapng 4.3"};
inline constexpr file_field epb_original_length{"Original Packet Length", 24, 4,
                                                "draft-ietf-opsawg-pcapng 4.3"};
inline constexpr std::array enhanced_packet_fields{
    block_type,   block_total_length,  epb_interface_id,   epb_ts_upper,
    epb_ts_lower, epb_captured_length, epb_original_length};
inline constexpr std::size_t enhanced_packet_size = 28;  // packet data follows
static_assert(tiles(enhanced_packet_fields, enhanced_packet_size));

// ---- Simple Packet Block (4.4): interface 0, no time stamp, no captured length ---------------

inline constexpr file_field spb_original_length{"Original Packet Len", 8, 4,
                                                "draft-ietf-opsawg-pcapng 4.4"};
inline constexpr std::array simple_packet_fields{block_type, block_total_length,
                                                 spb_original_length};
inline constexpr std::size_t simple_packet_size = 12;  // packet data follows
static_assert(tiles(simple_packet_fields, simple_packet_size));

// ---- Packet Block (Appendix A, obsolete; still written by old tools) -------------------------

inline constexpr file_field pb_interface_id{"Interface ID", 8, 2,
                                            "draft-ietf-opsawg-pcapng Appendix A"};
inline constexpr file_field pb_drops_count{"Drops Count", 10, 2,
                                           "draft-ietf-opsawg-pcapng Appendix A"};
inline constexpr file_field pb_ts_upper{"Timestamp (High)", 12, 4,
                                        "draft-ietf-opsawg-pcapng Appendix A"};
inline constexpr file_field pb_ts_lower{"Timestamp (Low)", 16, 4,
                                        "draft-ietf-opsawg-pcapng Appendix A"};
inline constexpr file_field pb_captured_length{"Captured Len", 20, 4,
                                               "draft-ietf-opsawg-pcapng Appendix A"};
inline constexpr file_field pb_original_length{"Packet Len", 24, 4,
                                               "draft-ietf-opsawg-pcapng Appendix A"};
inline constexpr std::array packet_fields{block_type,         block_total_length, pb_interface_id,
                                          pb_drops_count,     pb_ts_upper,        pb_ts_lower,
                                          pb_captured_length, pb_original_length};
inline constexpr std::size_t packet_size = 28;  // packet data follows
static_assert(tiles(packet_fields, packet_size));

// ---- options (3.5) -------------------------------------------------------------------------

inline constexpr file_field option_code{"Option Code", 0, 2, "draft-ietf-opsawg-pcapng 3.5"};
inline constexpr file_field option_length{"Option Length", 2, 2, "draft-ietf-opsawg-pcapng 3.5"};
inline constexpr std::array option_fields{option_code, option_length};
inline constexpr std::size_t option_header_size = 4;  // the value follows, padded to 32 bits
static_assert(tiles(option_fields, option_header_size));
inline constexpr std::uint16_t opt_endofopt = 0;

constexpr std::size_t padded(std::size_t n) noexcept { return (n + 3) & ~std::size_t{3}; }

// ---- time stamps (4.2 if_tsresol, if_tsoffset; 4.3) ------------------------------------------

// Units per second: 10^exponent, or 2^exponent when `binary`. Without if_tsresol, microseconds.
struct ts_resolution {
  std::uint8_t exponent = 6;
  bool binary = false;
  constexpr bool operator==(const ts_resolution&) const = default;
};

// An if_tsresol value, or nothing when its units could not be counted in the 64-bit time stamp
// (10^-20 and finer, 2^-64 and finer): tshark then keeps microseconds, and so does the reader.
constexpr std::optional<ts_resolution> resolution_of(std::uint8_t if_tsresol_value) noexcept {
  const bool binary = (if_tsresol_value & 0x80) != 0;
  const auto exponent = static_cast<std::uint8_t>(if_tsresol_value & 0x7f);
  if (binary ? exponent > 63 : exponent > 19) return std::nullopt;
  return ts_resolution{exponent, binary};
}

// Digits of a second that the resolution can tell apart, at most 9 (what nanoseconds hold):
// 10^-n gives n; 2^-n the fewest digits d with 10^d >= 2^n, as tshark shows such times.
constexpr precision_digits digits_of(ts_resolution r) noexcept {
  if (!r.binary) return static_cast<precision_digits>(r.exponent < 9 ? r.exponent : 9);
  precision_digits d = 0;
  for (std::uint64_t p = 1; d < 9 && p < (std::uint64_t{1} << r.exponent); p *= 10) ++d;
  return d;
}

// A pcapng time stamp (units since the epoch, plus if_tsoffset seconds) in nanoseconds since the
// epoch. Finer units are cut to the nanosecond (toward earlier). A time before 1970 is 0 and
// one past 2554 is the largest value: neither fits an unsigned 64-bit count of nanoseconds.
constexpr std::uint64_t time_ns(std::uint64_t units, ts_resolution r,
                                std::int64_t offset_s) noexcept {
  std::uint64_t seconds = 0, frac_ns = 0;
  if (!r.binary && r.exponent == 6) {  // microseconds, the default: divisions by constants
    seconds = units / 1'000'000u;
    frac_ns = units % 1'000'000u * 1'000u;
  } else if (!r.binary && r.exponent == 9) {  // nanoseconds
    seconds = units / 1'000'000'000u;
    frac_ns = units % 1'000'000'000u;
  } else if (!r.binary) {
    std::uint64_t per_second = 1;
    for (std::uint8_t i = 0; i < r.exponent; ++i) per_second *= 10;
    seconds = units / per_second;
    const std::uint64_t frac = units % per_second;
    // To nanoseconds: times 10^(9 - exponent) for coarser units, divided by 10^(exponent - 9)
    // for finer ones.
    std::uint64_t scale = 1;
    const auto apart = static_cast<std::uint8_t>(r.exponent <= 9 ? 9 - r.exponent : r.exponent - 9);
    for (std::uint8_t i = 0; i < apart; ++i) scale *= 10;
    frac_ns = r.exponent <= 9 ? frac * scale : frac / scale;
  } else {
    const unsigned n = r.exponent;
    seconds = n == 0 ? units : units >> n;
    std::uint64_t frac = n == 0 ? 0 : units & ((std::uint64_t{1} << n) - 1);
    unsigned shift = n;
    // frac * 10^9 must fit 64 bits: below 2^34 it does; finer bits are below a nanosecond.
    if (shift > 34) {
      frac >>= shift - 34;
      shift = 34;
    }
    frac_ns = (frac * 1'000'000'000u) >> shift;
  }
  constexpr std::uint64_t max = std::numeric_limits<std::uint64_t>::max();
  constexpr std::uint64_t max_seconds = max / 1'000'000'000u - 1;
  if (offset_s < 0) {
    const std::uint64_t back = 0 - static_cast<std::uint64_t>(offset_s);
    if (back > seconds) return 0;
    seconds -= back;
  } else {
    const auto forward = static_cast<std::uint64_t>(offset_s);
    if (forward > max_seconds || seconds > max_seconds - forward) return max;
    seconds += forward;
  }
  if (seconds > max_seconds) return max;
  return seconds * 1'000'000'000u + frac_ns;
}

}  // namespace scaleup::pcap::pcapng_file
