// What a capture file holds per packet, whichever format it is in, and the link types the
// project writes.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <cstdint>
#include <span>
#include <string_view>

namespace scaleup::pcap {

// LINKTYPE_ values as stored in a pcap file header or a pcapng Interface Description Block.
// The three user types keep our own frames distinguishable from Ethernet without registering
// a link type.
enum class link_type : std::uint32_t {
  ethernet = 1,  // LINKTYPE_ETHERNET
  afh2 = 147,    // LINKTYPE_USER0: bare AFH Gen 2 frames
  tofu = 148,    // LINKTYPE_USER1: Tofu-style slices
  rdma = 149,    // LINKTYPE_USER2: bare ExaJet packets of the RDMA engine
};

constexpr std::string_view to_string(link_type lt) noexcept {
  switch (lt) {
    case link_type::ethernet:
      return "ethernet";
    case link_type::afh2:
      return "afh2";
    case link_type::tofu:
      return "tofu";
    case link_type::rdma:
      return "rdma";
  }
  return "unknown";
}

// libpcap refuses to read packets longer than this (MAXIMUM_SNAPLEN), so the writer refuses to
// write files that promise more.
inline constexpr std::uint32_t max_snaplen = 262144;

// The reader's limit on one record or block: beyond it a length is taken for damage, not
// data, and reading stops with an error rather than trying to hold it. Far above any real
// packet (tshark's own limit is 256 KiB for most link types).
inline constexpr std::uint32_t max_record = 256u << 20;

// How many digits of a second a time stamp has: 6 for microseconds, 9 for nanoseconds; from a
// pcapng if_tsresol the power of 10 it gives (capped at 9, below which ts_ns cannot go) or,
// for a power of 2, the digits needed to tell its units apart.
using precision_digits = std::uint8_t;
inline constexpr precision_digits micro_digits = 6;
inline constexpr precision_digits nano_digits = 9;

struct packet {
  std::uint64_t number = 0;              // 1-based, as Wireshark numbers frames
  std::uint64_t ts_ns = 0;               // nanoseconds since 1970-01-01 00:00:00 UTC
  precision_digits precision = 0;        // of ts_ns as the file recorded it
  std::uint32_t link = 0;                // LINKTYPE_ of the packet's interface
  std::uint32_t interface = 0;           // counted over the file, as tshark's frame.interface_id
  std::uint32_t caplen = 0;              // bytes captured
  std::uint32_t len = 0;                 // original length on the wire; above caplen if cut
  std::span<const std::uint8_t> data{};  // caplen bytes, valid until the next read
};

}  // namespace scaleup::pcap
