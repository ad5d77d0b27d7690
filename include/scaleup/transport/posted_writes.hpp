// When a posted write gets its AXI B response.
//
// AXI wants a B for every write, and a posted write has no WR_RSP from the remote XPU. R2 3.2.2:
// "The write response is either an ACK or NACK carried in the header of packets flowing in the
// reverse direction"; R2 4.1: a one-sided memory transaction "is acknowledged by the receiver as
// having arrived there". So by default a posted write's B waits for the transport's ACK of the PDU
// that carried it: OKAY once an ACK covers that PDU's PSN, SLVERR when the peer is declared
// unreachable first. A NACK only makes the sender go back (the write is sent again), so it
// answers nothing. An XPU that wants fire-and-forget semantics can choose the other reading,
// B = OKAY as soon as the local SUE accepts the write (`posted_response::on_accept`), at the price
// the specification's reading avoids: a write later lost to an unreachable peer was already
// answered OKAY. docs/wire-format.md ("AXI mapping") argues both.
//
// The tracker is per connection (one go-back-N sender): fixed capacity, no heap. Writes are
// recorded in PSN order, as the sender assigns PSNs, so an ACK answers a prefix.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "scaleup/pack/axi.hpp"
#include "scaleup/transport/psn.hpp"
#include "scaleup/wire/error.hpp"

namespace scaleup::transport {

enum class posted_response : std::uint8_t {
  on_ack,     // R2 3.2.2, 4.1: the receiver's ACK answers the write (default)
  on_accept,  // the local SUE answers as soon as it accepts the write
};

template <std::size_t Capacity = 256, unsigned Bits = 16>
class posted_writes {
 public:
  constexpr explicit posted_writes(posted_response policy = posted_response::on_ack) noexcept
      : policy_(policy) {}

  constexpr posted_response policy() const noexcept { return policy_; }
  constexpr std::size_t pending() const noexcept { return count_; }

  // A posted write went out in the PDU numbered `carried_in`. With `on_accept` its B is written
  // to `out` at once (1 returned); with `on_ack` it waits (0 returned). Errors: not a posted
  // write, or the tracker is full (the XPU must hold the write back, as it would for credits).
  constexpr wire::result<std::size_t> accept(const pack::axi_aw& aw, psn<Bits> carried_in,
                                             std::span<pack::axi_b> out) noexcept {
    const auto b = pack::posted_write_response(aw);
    if (!b) return b.err;
    if (policy_ == posted_response::on_accept) {
      if (out.empty()) return no_room(1);
      out[0] = *b;
      return std::size_t{1};
    }
    if (count_ == Capacity)
      return wire::error{.code = wire::errc::no_space,
                         .layer = "axi",
                         .needed = 1,
                         .what = "posted-write tracker full: hold the write back"};
    entries_[(head_ + count_++) % Capacity] = entry{*b, carried_in};
    return std::size_t{0};
  }

  // An ACK with `apsn` (the highest PSN delivered in order) arrived on this connection: the B of
  // every write carried in a PDU up to it, OKAY, in order. Returns how many were written; the
  // rest wait for the next call if `out` is short.
  constexpr std::size_t acknowledged(psn<Bits> apsn, std::span<pack::axi_b> out) noexcept {
    std::size_t n = 0;
    while (count_ > 0 && n < out.size()) {
      const entry& e = entries_[head_];
      if (before(apsn, e.carried)) break;  // carried after what the ACK covers
      out[n++] = e.b;
      pop();
    }
    return n;
  }

  // The peer was declared unreachable (go-back-N's retry limit): every write still waiting is
  // answered SLVERR, in order. Failover that moves the work to another port keeps the writes
  // pending instead: call `moved` with the PSNs they were given there.
  constexpr std::size_t unreachable(std::span<pack::axi_b> out) noexcept {
    std::size_t n = 0;
    while (count_ > 0 && n < out.size()) {
      pack::axi_b b = entries_[head_].b;
      b.resp = pack::axi_resp_slverr;
      out[n++] = b;
      pop();
    }
    return n;
  }

  // Failover moved the outstanding PDUs to a new connection whose first moved PDU is `first`:
  // the writes keep their order and wait for that connection's ACKs.
  constexpr void moved(psn<Bits> first, psn<Bits> old_first) noexcept {
    for (std::size_t i = 0; i < count_; ++i) {
      entry& e = entries_[(head_ + i) % Capacity];
      e.carried = first + distance(old_first, e.carried);
    }
  }

 private:
  struct entry {
    pack::axi_b b{};
    psn<Bits> carried{};
  };
  static constexpr wire::error no_room(std::size_t needed) noexcept {
    return wire::error{.code = wire::errc::no_space,
                       .layer = "axi",
                       .needed = static_cast<std::uint32_t>(needed),
                       .what = "no room for the B response"};
  }
  constexpr void pop() noexcept {
    head_ = (head_ + 1) % Capacity;
    --count_;
  }

  posted_response policy_;
  std::array<entry, Capacity> entries_{};
  std::size_t head_ = 0;
  std::size_t count_ = 0;
};

}  // namespace scaleup::transport
