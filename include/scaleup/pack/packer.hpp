// Packing and scheduling (R2 4.2 steps 2-3, 4.5, Fig. 21; R1 for the round-robin option).
//
// Commands wait in one queue per {destination, VC}. The scheduler is work conserving: it picks
// a VC by weighted round robin among the VCs that have an eligible queue, then a queue in that
// VC by arrival order (R2: "arrival order-based scheduling within a VC") or, as R1 had it,
// round robin; it packs that queue's commands back to back up to the limit and sends. It never
// waits for more commands (R2 4.5: "SUE does not delay transactions for reasons of packing").
// No heap: queues are linked lists in a fixed pool, like the thesis's shared linked-list queues.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "scaleup/pack/command.hpp"

namespace scaleup::pack {

enum class within_vc : std::uint8_t {
  arrival_order,  // R2: the queue whose oldest command arrived first
  round_robin,    // R1: the next queue after the one served last
};

inline constexpr std::size_t sue_pack_limit = 4096;   // R2 3.3
inline constexpr std::size_t lite_pack_limit = 1024;  // R2 3.4

template <std::size_t VCs>
struct packer_config {
  std::array<std::uint16_t, VCs> weights = [] {
    std::array<std::uint16_t, VCs> w{};
    w.fill(1);
    return w;
  }();
  within_vc order = within_vc::arrival_order;
  std::size_t limit = sue_pack_limit;  // payload bytes per PDU: at least one largest command
};

// A command handed to the packer. The bytes stay the caller's until the command is packed.
struct queued_command {
  std::uint16_t destination = 0;
  std::uint8_t vc = 0;
  bytes control{};
  bytes data{};
  bool send_now = false;     // close the PDU after this command (R1 4.x; R2 4.3 step 2)
  std::uint64_t cookie = 0;  // the caller's handle, returned when the command is packed
};

// What one call to next() packed: a payload for one {destination, VC}.
struct packed_pdu {
  std::uint16_t destination = 0;
  std::uint8_t vc = 0;
  std::size_t bytes = 0;     // payload bytes written
  std::size_t commands = 0;  // 0: nothing was eligible
};

// Every queue eligible: no flow control.
struct always_eligible {
  constexpr bool operator()(std::uint16_t, std::uint8_t) const noexcept { return true; }
};

template <std::size_t Destinations, std::size_t VCs = 4, std::size_t Capacity = 1024>
class packer {
  static_assert(VCs >= 1 && VCs <= 4, "SUE has up to 4 VCs (R2 Table 1)");
  static_assert(Capacity < 0xFFFF, "pool indices are 16 bits");

 public:
  using config = packer_config<VCs>;

  constexpr explicit packer(const profile& prof, const config& c = {}) noexcept
      : prof_(&prof), cfg_(c) {
    for (std::size_t i = 0; i < Capacity; ++i)
      free_list_[i] = static_cast<std::uint16_t>(Capacity - 1 - i);
    for (auto& q : queues_) q = queue{};
  }

  constexpr const config& settings() const noexcept { return cfg_; }

  // Queues a command after checking it against the profile's framing, so that every command
  // the packer writes can be unpacked.
  constexpr error push(const queued_command& c) noexcept {
    if (c.destination >= Destinations || c.vc >= VCs)
      return error{errc::value_too_big,
                   "pack",
                   0,
                   0,
                   0,
                   c.vc >= VCs ? "VC out of range" : "destination out of range",
                   c.vc >= VCs ? "sue.rh.vc" : "",
                   static_cast<std::uint64_t>(c.vc >= VCs ? c.vc : c.destination)};
    if (const error e = check_command(*prof_, c.control, c.data)) return e;
    if (c.control.size() + c.data.size() > cfg_.limit)
      return error{errc::value_too_big,
                   "pack",
                   0,
                   static_cast<std::uint32_t>(cfg_.limit),
                   static_cast<std::uint32_t>(c.control.size() + c.data.size()),
                   "command larger than the packing limit"};
    if (free_count_ == 0) return error{errc::no_space, "pack", 0, 0, 0, "command pool full"};
    // Free entries are a stack of indices, not a list threaded through the entries: taking one
    // does not wait for a load from the entry taken before.
    const std::uint16_t e = free_list_[--free_count_];
    entry& en = pool_[e];
    // Field by field: the caller has usually just built `c`, and a block copy of it would read
    // its narrow fields back with wide loads (a store-forwarding stall per command).
    en.control = c.control.data();
    en.data = c.data.data();
    en.cookie = c.cookie;
    en.seq = seq_++;
    en.data_len = static_cast<std::uint16_t>(c.data.size());
    en.control_len = static_cast<std::uint16_t>(c.control.size());
    en.send_now = c.send_now;
    en.next = nil;
    queue& q = queues_[index(c.destination, c.vc)];
    if (q.tail == nil)
      q.head = e;
    else
      pool_[q.tail].next = e;
    q.tail = e;
    ++q.count;
    ++vc_count_[c.vc];
    return {};
  }

  // Every pool entry not free holds a queued command.
  constexpr std::size_t queued() const noexcept { return Capacity - free_count_; }
  constexpr std::size_t queued(std::uint16_t destination, std::uint8_t vc) const noexcept {
    return queues_[index(destination, vc)].count;
  }

  // Picks a queue and packs it into `out` (at least `limit` bytes). `eligible(dest, vc)` is the
  // hook through which flow control (credits) holds a queue back. The cookies of the packed
  // commands go to `cookies`, in order; when it is given, it also bounds how many are packed.
  template <class Eligible = always_eligible>
  constexpr wire::result<packed_pdu> next(mutable_bytes out, Eligible&& eligible = {},
                                          std::span<std::uint64_t> cookies = {}) noexcept {
    if (out.size() < cfg_.limit)
      return error{errc::no_space,
                   "pack",
                   0,
                   static_cast<std::uint32_t>(cfg_.limit),
                   static_cast<std::uint32_t>(out.size()),
                   "output smaller than the limit"};
    std::array<std::uint16_t, VCs> pick{};
    std::array<bool, VCs> ready{};
    std::uint32_t total_weight = 0;
    for (std::size_t v = 0; v < VCs; ++v) {
      if (vc_count_[v] == 0) continue;
      const std::uint16_t d = choose_queue(static_cast<std::uint8_t>(v), eligible);
      if (d == nil) continue;
      pick[v] = d;
      ready[v] = true;
      total_weight += cfg_.weights[v];
    }
    if (total_weight == 0) {
      // Only zero-weight VCs (or none) are ready: serve them in VC order rather than starve.
      for (std::size_t v = 0; v < VCs; ++v)
        if (ready[v]) return pack_queue(pick[v], static_cast<std::uint8_t>(v), out, cookies);
      return packed_pdu{};
    }
    // Smooth weighted round robin: over any run, each backlogged VC gets its weight's share. A
    // VC that is not ready starts afresh when it is: an idle spell earns it neither credit nor
    // debt. Zero-weight VCs wait until no weighted VC is ready (handled above).
    std::size_t best = VCs;
    for (std::size_t v = 0; v < VCs; ++v) {
      if (!ready[v]) credit_[v] = 0;
      if (!ready[v] || cfg_.weights[v] == 0) continue;
      credit_[v] += cfg_.weights[v];
      if (best == VCs || credit_[v] > credit_[best]) best = v;
    }
    credit_[best] -= static_cast<std::int64_t>(total_weight);
    return pack_queue(pick[best], static_cast<std::uint8_t>(best), out, cookies);
  }

 private:
  static constexpr std::uint16_t nil = 0xFFFF;

  // A queued command: where its bytes are (checked at push: control 2..18 bytes, data up to
  // 256), its cookie, and its place in its queue. Destination and VC are the queue's.
  struct entry {
    const std::uint8_t* control = nullptr;
    const std::uint8_t* data = nullptr;
    std::uint64_t cookie = 0;
    std::uint64_t seq = 0;
    std::uint16_t data_len = 0;
    // 16 bits though 18 is the most: when the copy was a memcpy of this length, GCC 12 inlined
    // it for an 8-bit one as `rep movsq`, several times slower for a few bytes.
    std::uint16_t control_len = 0;
    bool send_now = false;
    std::uint16_t next = nil;
  };
  struct queue {
    std::uint16_t head = nil;
    std::uint16_t tail = nil;
    std::uint32_t count = 0;
  };

  static constexpr std::size_t index(std::uint16_t d, std::uint8_t vc) noexcept {
    return std::size_t{d} * VCs + vc;
  }

  template <class Eligible>
  constexpr std::uint16_t choose_queue(std::uint8_t vc, Eligible& eligible) noexcept {
    std::uint16_t best = nil;
    std::uint64_t best_seq = ~std::uint64_t{0};
    for (std::size_t k = 0; k < Destinations; ++k) {
      // Round robin starts after the queue served last; arrival order looks at every queue.
      const std::size_t d =
          cfg_.order == within_vc::round_robin ? (rr_next_[vc] + k) % Destinations : k;
      const queue& q = queues_[index(static_cast<std::uint16_t>(d), vc)];
      if (q.count == 0 || !eligible(static_cast<std::uint16_t>(d), vc)) continue;
      if (cfg_.order == within_vc::round_robin) return static_cast<std::uint16_t>(d);
      if (pool_[q.head].seq < best_seq) {
        best_seq = pool_[q.head].seq;
        best = static_cast<std::uint16_t>(d);
      }
    }
    return best;
  }

  constexpr packed_pdu pack_queue(std::uint16_t d, std::uint8_t vc, mutable_bytes out,
                                  std::span<std::uint64_t> cookies) noexcept {
    queue& q = queues_[index(d, vc)];
    // q.count bounds the walk: the list holds exactly that many.
    const run r = cookies.empty()
                      ? copy_run<false>(q.head, q.count, out.data(), nullptr)
                      : copy_run<true>(q.head, cookies.size() < q.count ? cookies.size() : q.count,
                                       out.data(), cookies.data());
    if (r.commands > 0) {
      q.head = r.at;
      if (r.at == nil) q.tail = nil;
      q.count -= static_cast<std::uint32_t>(r.commands);
      vc_count_[vc] -= r.commands;
    }
    rr_next_[vc] = static_cast<std::uint16_t>((d + 1) % Destinations);
    return packed_pdu{d, vc, r.used, r.commands};
  }

  struct run {
    std::size_t used = 0;      // bytes written
    std::size_t commands = 0;  // commands packed
    std::uint16_t at = nil;    // the first command left in the queue
  };

  // Packs the queue from `at` (at most max_commands of it) into dst and frees their entries.
  // Separate loops with and without cookies, and locals rather than members: the loop's values
  // then fit in registers, not spilled around the copies.
  template <bool Cookies>
  constexpr run copy_run(std::uint16_t at, std::size_t max_commands, std::uint8_t* const dst,
                         std::uint64_t* const cookie_out) noexcept {
    const std::size_t limit = cfg_.limit;
    std::size_t used = 0;
    std::size_t commands = 0;
    std::size_t freed = free_count_;
    while (commands < max_commands) {
      const entry& e = pool_[at];
      const std::size_t control_len = e.control_len;
      const std::size_t data_len = e.data_len;
      const std::size_t n = control_len + data_len;
      if (used + n > limit) break;  // it starts the next PDU
      if constexpr (Cookies) cookie_out[commands] = e.cookie;
      // Framing was checked at push and the room just above: copy, with byte 1 made to agree.
      write_checked_command(bytes(e.control, control_len), bytes(e.data, data_len), dst + used);
      used += n;
      ++commands;
      free_list_[freed++] = at;
      const bool last = e.send_now;
      at = e.next;
      if (last) break;
    }
    free_count_ = freed;
    return run{used, commands, at};
  }

  const profile* prof_;
  config cfg_;
  std::array<entry, Capacity> pool_{};
  std::array<queue, Destinations * VCs> queues_{};
  std::array<std::int64_t, VCs> credit_{};
  std::array<std::size_t, VCs> vc_count_{};
  std::array<std::uint16_t, VCs> rr_next_{};
  std::array<std::uint16_t, Capacity> free_list_{};
  std::size_t free_count_ = Capacity;
  std::uint64_t seq_ = 0;
};

}  // namespace scaleup::pack
