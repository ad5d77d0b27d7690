// SUE Reliability Header (RH): 8 bytes in front of every SUE PDU (R2 3.3, Table 5, Fig. 9).
#pragma once

#include <array>
#include <cstdint>

#include "scaleup/wire/field.hpp"

namespace scaleup::wire {

// op codes (decisions.md "SUE Reliability Header"): the seeds say only "ACK, NACK or invalid".
enum class rh_op : std::uint8_t { ack = 0, nack = 1, none = 2, none_alt = 3 };

inline constexpr std::array<value_name, 4> rh_op_names{{
    {0, "ACK"},
    {1, "NACK"},
    {2, "none"},
    {3, "none"},
}};

struct reliability_header {
  std::uint8_t ver = 0;
  std::uint8_t op = static_cast<std::uint8_t>(rh_op::none);
  std::uint8_t rsv = 0;
  std::uint16_t xpuid = 0;  // the SOURCE XPU (decisions.md)
  std::uint16_t npsn = 0;
  std::uint8_t vc = 0;
  std::uint8_t rsvd = 0;
  std::uint16_t partition = 0;
  std::uint16_t apsn = 0;

  constexpr bool carries_ack() const noexcept { return op == 0; }
  constexpr bool carries_nack() const noexcept { return op == 1; }
  friend constexpr bool operator==(const reliability_header&, const reliability_header&) = default;
};

template <>
struct layout<reliability_header> {
  using T = reliability_header;
  static constexpr std::string_view name = "sue.rh";
  static constexpr std::string_view title = "SUE Reliability Header";
  static constexpr std::string_view seed = "R2 3.3, Table 5, Fig. 9";
  static constexpr std::size_t size = 8;
  // clang-format off
  static constexpr auto fields = std::tuple{
      member(&T::ver, {.name = "ver", .filter = "sue.rh.ver", .bit = 0, .width = 2,
                     .description = "Version; 0 today", .seed = "R2 Table 5"}),
      member(&T::op, {.name = "op", .filter = "sue.rh.op", .bit = 2, .width = 2,
                    .names = rh_op_names,
                    .description = "Whether apsn carries an ACK, a NACK or nothing",
                    .seed = "R2 Table 5; codes: decisions.md"}),
      member(&T::rsv, {.name = "rsv", .filter = "sue.rh.rsv", .bit = 4, .width = 2,
                     .description = "Reserved", .seed = "R2 Table 5",
                     .check = rule::reserved}),
      member(&T::xpuid, {.name = "xpuid", .filter = "sue.rh.xpuid", .bit = 6, .width = 10,
                       .description = "Source XPU identifier",
                       .seed = "R2 Table 5; source: decisions.md"}),
      member(&T::npsn, {.name = "npsn", .filter = "sue.rh.npsn", .bit = 16, .width = 16,
                      .description = "Packet sequence number of this PDU",
                      .seed = "R2 Table 5 (R1: psn)"}),
      member(&T::vc, {.name = "vc", .filter = "sue.rh.vc", .bit = 32, .width = 2,
                    .description = "Virtual channel, maps to a traffic class",
                    .seed = "R2 Table 5"}),
      member(&T::rsvd, {.name = "rsvd", .filter = "sue.rh.rsvd", .bit = 34, .width = 4,
                      .description = "Reserved", .seed = "R2 Table 5",
                      .check = rule::reserved}),
      member(&T::partition,
           {.name = "partition", .filter = "sue.rh.partition", .bit = 38, .width = 10,
            .description = "Partition for multi-tenant isolation", .seed = "R2 Table 5, 4.1"}),
      member(&T::apsn, {.name = "apsn", .filter = "sue.rh.apsn", .bit = 48, .width = 16,
                      .description = "ACK: highest PSN delivered in order; NACK: PSN expected",
                      .seed = "R2 Table 5 (R1: rpsn); meaning: decisions.md"}),
  };
  // clang-format on
};

static_assert(tiles<reliability_header>());

}  // namespace scaleup::wire
