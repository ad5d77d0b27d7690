// The baselines of the packer and unpacker rows (bench/baselines.cpp): the packing and unpacking
// of the default command profile written by hand for speed, the way an engineer would write them
// for this one job, with nothing of the library's but the types of its inputs.
//
// hand_packer keeps the packer's rules (docs/wire-format.md, "Packing and scheduling"): a FIFO
// of command bytes per {destination, VC}; a VC picked by smooth weighted round robin among the
// VCs with something queued (a VC that is not ready loses its credit; weight 0 is served only
// when no weighted VC is ready), then, within it, the queue whose oldest command arrived first;
// that queue's commands packed back to back up to the limit, a command that does not fit
// starting the next PDU and a send_now command closing its own; each command checked at push
// against the profile's framing (R2 4.2 step 2a), byte 1 set from the data's length. Every
// queue is eligible (no flow control hook) and no cookie comes back: the command's bytes are
// copied at push, so nothing is borrowed.
//
// It is written for speed, not generality: each queue is one ring of the commands' bytes as they
// will go on the wire, so a PDU is one copy out of the ring; beside it a ring of where each
// command ends (the one per-command fact packing needs: where a PDU may be cut); with several
// destinations, one ring per VC of queue numbers in arrival order, whose front names the queue
// with the oldest command (entries of commands already packed are skipped when they come to the
// front). hand_unpacker walks a payload's commands by the default profile's framing, read from
// one table.
//
// The framing table is written here from docs/wire-format.md's drawing of the default profile,
// not taken from pack::default_profile, so that checking one against the other (the benchmark
// does before timing) compares two readings.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

namespace scaleup::bench {

// By type code: the control's length in bytes, and bit 7 set when data follows (then byte 1 of
// the control is the data length - 1). 0: not a type of the default profile (0 is padding).
inline constexpr std::array<std::uint8_t, 256> hand_framing = [] {
  std::array<std::uint8_t, 256> t{};
  constexpr std::uint8_t data = 0x80;
  t[0x02] = 12 | data;  // write full, posted
  t[0x04] = 12 | data;  // write full
  t[0x06] = 16 | data;  // write partial, posted
  t[0x08] = 16 | data;  // write partial
  t[0x0A] = 12;         // read
  t[0x0C] = 6 | data;   // read response
  t[0x0E] = 6;          // write response
  t[0x10] = 6 | data;   // message
  t[0x12] = 4;          // barrier
  t[0x14] = 14 | data;  // atomic
  t[0x16] = 6 | data;   // atomic response
  return t;
}();

// Copies of at most a command's size, as two overlapping moves where they fit (the compiler
// turns a memcpy of a size known to be 8 or 16 into one load and one store).
[[gnu::always_inline]] inline void hand_copy(std::uint8_t* out, const std::uint8_t* in,
                                             std::size_t n) {
  if (n >= 16) {
    for (std::size_t i = 0; i + 16 < n; i += 16) std::memcpy(out + i, in + i, 16);
    std::memcpy(out + n - 16, in + n - 16, 16);
  } else if (n >= 8) {
    std::memcpy(out, in, 8);
    std::memcpy(out + n - 8, in + n - 8, 8);
  } else if (n >= 4) {
    std::memcpy(out, in, 4);
    std::memcpy(out + n - 4, in + n - 4, 4);
  } else {
    for (std::size_t i = 0; i < n; ++i) out[i] = in[i];
  }
}

struct hand_pdu {
  std::uint16_t destination = 0;
  std::uint8_t vc = 0;
  std::size_t bytes = 0;
  std::size_t commands = 0;  // 0: nothing queued
};

// RingBytes: each queue's bytes, a power of two. Every position below counts bytes (or commands)
// since the queue began, in 32 bits: differences are exact while a queue holds less than 4 GB.
// Borrow: the two designs an engineer would weigh. false: push copies the whole command into the
// queue's ring, and a PDU is one copy out of it (two copies of every byte, the second from the
// cache; the fewest steps per command). true: the ring holds the controls only, the data is
// borrowed (a pointer and a length per command, its cache lines asked for at push, as the
// library does), and packing copies each command's control and data (one copy of every byte,
// a few more steps per command). The benchmark times both and takes the faster as the baseline.
template <std::size_t Destinations, std::size_t VCs, std::size_t RingBytes = 16384,
          bool Borrow = false>
class hand_packer {
  static_assert((RingBytes & (RingBytes - 1)) == 0 && RingBytes >= 4096);
  static constexpr std::size_t slots = RingBytes / 4;  // the profile's smallest command: 4 bytes
  static constexpr std::size_t slack = 512;            // a command written past the ring's end

 public:
  explicit hand_packer(const std::array<std::uint16_t, VCs>& weights, std::size_t limit = 4096)
      : weights_(weights), limit_(limit), queues_(new queue[Destinations * VCs]) {
    if constexpr (Destinations > 1)
      for (auto& t : tokens_) t.ids.reset(new std::uint16_t[token_slots]);
  }

  // Queues a command: false when it breaks the framing or its queue is full.
  [[gnu::always_inline]] bool push(std::uint16_t destination, std::uint8_t vc,
                                   const std::uint8_t* control, std::size_t control_len,
                                   const std::uint8_t* data, std::size_t data_len,
                                   bool send_now = false) {
    if (destination >= Destinations || vc >= VCs || control_len == 0) return false;
    const std::uint8_t f = hand_framing[control[0]];
    if (control_len != (f & 0x7F) || f == 0) return false;
    if ((f & 0x80) ? data_len - 1 >= 256 : data_len != 0) return false;
    const std::size_t n = control_len + data_len;
    if (n > limit_) return false;
    queue& q = queues_[destination * VCs + vc];
    const std::size_t held = Borrow ? control_len : n;  // bytes the ring takes
    if (q.ring_tail - q.ring_head + held > RingBytes || q.last - q.first == slots) return false;
    if constexpr (Destinations > 1) {
      token_ring& t = tokens_[vc];
      if (t.last - t.first == token_slots) return false;
      t.ids[t.last++ & (token_slots - 1)] = static_cast<std::uint16_t>(destination);
    }
    std::uint8_t* at = q.ring.get() + (q.ring_tail & (RingBytes - 1));
    hand_copy(at, control, control_len);
    if (data_len) at[1] = static_cast<std::uint8_t>(data_len - 1);
    if constexpr (Borrow) {
      q.data[q.last & (slots - 1)] = data;
      q.sizes[q.last & (slots - 1)] = static_cast<std::uint16_t>(control_len | data_len << 5);
      if (data_len > 64)
        for (std::size_t i = 0; i < data_len; i += 64) __builtin_prefetch(data + i);
    } else if (data_len > 64) {
      std::memcpy(at + control_len, data, data_len);
    } else {
      hand_copy(at + control_len, data, data_len);
    }
    // Bytes written past the ring's end are copied to its start (and stay in the slack, where
    // a control is read back whole).
    const std::size_t past = (q.ring_tail & (RingBytes - 1)) + held;
    if (past > RingBytes) std::memcpy(q.ring.get(), q.ring.get() + RingBytes, past - RingBytes);
    q.ring_tail += static_cast<std::uint32_t>(held);
    q.tail += static_cast<std::uint32_t>(n);
    q.ends[q.last++ & (slots - 1)] = q.tail;
    if (send_now) q.urgent[q.urgent_last++ & (slots - 1)] = q.tail;
    ++vc_count_[vc];
    return true;
  }

  // Packs the chosen queue into `out` (room for the limit).
  hand_pdu next(std::uint8_t* out) {
    std::uint32_t total = 0;
    std::size_t first_ready = VCs;
    for (std::size_t v = 0; v < VCs; ++v) {
      if (vc_count_[v] == 0) continue;
      if (first_ready == VCs) first_ready = v;
      total += weights_[v];
    }
    if (first_ready == VCs) return {};
    std::size_t best = first_ready;  // only weight-0 VCs ready: the first of them
    if (total != 0) {
      best = VCs;
      for (std::size_t v = 0; v < VCs; ++v) {
        if (vc_count_[v] == 0) credit_[v] = 0;  // an idle spell earns neither credit nor debt
        if (vc_count_[v] == 0 || weights_[v] == 0) continue;
        credit_[v] += weights_[v];
        if (best == VCs || credit_[v] > credit_[best]) best = v;
      }
      credit_[best] -= total;
    }
    const auto vc = static_cast<std::uint8_t>(best);
    std::uint16_t d = 0;
    if constexpr (Destinations > 1) {
      token_ring& t = tokens_[vc];
      for (;;) {
        d = t.ids[t.first & (token_slots - 1)];
        queue& q = queues_[d * VCs + vc];
        if (q.stale == 0) break;
        --q.stale;
        ++t.first;
      }
      ++t.first;  // the chosen queue's oldest command, packed now
    }
    queue& q = queues_[d * VCs + vc];
    // The PDU ends at the last command end within the limit, or at the first send_now command.
    std::uint32_t bound = q.head + static_cast<std::uint32_t>(limit_);
    bool urgent = false;
    if (q.urgent_first != q.urgent_last) {
      const std::uint32_t u = q.urgent[q.urgent_first & (slots - 1)];
      if (u - q.head <= limit_) {
        bound = u;
        urgent = true;
      }
    }
    // Usually all that is queued fits (the scheduler never waits); else a binary search.
    std::uint32_t k = q.last - q.first;
    if (q.ends[(q.last - 1) & (slots - 1)] - q.head > bound - q.head) {
      std::uint32_t lo = 0, hi = k;  // ends[first + lo - 1] fits, ends[first + hi - 1] does not
      while (hi - lo > 1) {
        const std::uint32_t mid = lo + (hi - lo) / 2;
        if (q.ends[(q.first + mid - 1) & (slots - 1)] - q.head <= bound - q.head)
          lo = mid;
        else
          hi = mid;
      }
      k = lo;
    }
    const std::uint32_t cut = q.ends[(q.first + k - 1) & (slots - 1)];
    if (urgent && cut == bound) ++q.urgent_first;
    const std::size_t n = cut - q.head;
    if constexpr (Borrow) {
      std::uint8_t* o = out;
      std::uint32_t from = q.ring_head;
      for (std::uint32_t i = q.first, e = q.first + k; i != e; ++i) {
        const std::size_t size = q.sizes[i & (slots - 1)];
        const std::size_t control = size & 0x1F, data = size >> 5;
        hand_copy(o, q.ring.get() + (from & (RingBytes - 1)), control);
        hand_copy(o + control, q.data[i & (slots - 1)], data);
        o += control + data;
        from += static_cast<std::uint32_t>(control);
      }
      q.ring_head = from;
    } else {
      const std::size_t from = q.ring_head & (RingBytes - 1);
      if (from + n <= RingBytes) {
        std::memcpy(out, q.ring.get() + from, n);
      } else {
        std::memcpy(out, q.ring.get() + from, RingBytes - from);
        std::memcpy(out + (RingBytes - from), q.ring.get(), n - (RingBytes - from));
      }
      q.ring_head += static_cast<std::uint32_t>(n);
    }
    q.head = cut;
    q.first += k;
    vc_count_[vc] -= k;
    if constexpr (Destinations > 1) q.stale += k - 1;
    return {d, vc, n, k};
  }

 private:
  struct queue {
    std::unique_ptr<std::uint8_t[]> ring{new std::uint8_t[RingBytes + slack]};
    std::unique_ptr<std::uint32_t[]> ends{new std::uint32_t[slots]};
    std::unique_ptr<std::uint32_t[]> urgent{new std::uint32_t[slots]};  // send_now ends
    // Borrow: each command's data, and its control and data lengths (5 and 9 bits).
    std::unique_ptr<const std::uint8_t* []> data {
      Borrow ? new const std::uint8_t*[slots] : nullptr
    };
    std::unique_ptr<std::uint16_t[]> sizes{Borrow ? new std::uint16_t[slots] : nullptr};
    std::uint32_t head = 0, tail = 0;            // bytes of commands
    std::uint32_t ring_head = 0, ring_tail = 0;  // bytes in the ring (Borrow: of controls)
    std::uint32_t first = 0, last = 0;           // commands
    std::uint32_t urgent_first = 0, urgent_last = 0;
    std::uint32_t stale = 0;  // packed commands whose entries are still in the VC's ring
  };
  static constexpr std::size_t token_slots = 1u << 16;
  struct token_ring {
    std::unique_ptr<std::uint16_t[]> ids;
    std::uint32_t first = 0, last = 0;
  };

  std::array<std::uint16_t, VCs> weights_;
  std::size_t limit_;
  std::unique_ptr<queue[]> queues_;
  std::array<token_ring, (Destinations > 1 ? VCs : 0)> tokens_{};
  std::array<std::int64_t, VCs> credit_{};
  std::array<std::uint32_t, VCs> vc_count_{};
};

// One command of a payload, as hand_unpacker finds it.
struct hand_command {
  std::uint32_t offset = 0;
  std::uint8_t control_len = 0;
  std::uint16_t data_len = 0;
};

// Walks a payload's commands, calling on(command) for each: true at the end of the payload (or
// at padding: zeros to the end), false at a malformed command (unknown type, cut off, garbage
// after a zero type), nothing after it delivered. `at_error` says where it stopped.
template <class On>
[[gnu::always_inline]] inline bool hand_unpack(const std::uint8_t* p, std::size_t size, On&& on,
                                               std::size_t& at_error) {
  std::size_t pos = 0;
  while (pos < size) {
    const std::uint8_t f = hand_framing[p[pos]];
    if (f == 0) {
      if (p[pos] == 0) {
        for (std::size_t i = pos + 1; i < size; ++i)
          if (p[i] != 0) {
            at_error = pos;
            return false;
          }
        return true;
      }
      at_error = pos;
      return false;
    }
    const std::size_t control = f & 0x7F;
    if (size - pos < control) {
      at_error = pos;
      return false;
    }
    const std::size_t data = (f & 0x80) ? std::size_t{p[pos + 1]} + 1 : 0;
    if (size - pos < control + data) {
      at_error = pos;
      return false;
    }
    on(hand_command{static_cast<std::uint32_t>(pos), static_cast<std::uint8_t>(control),
                    static_cast<std::uint16_t>(data)});
    pos += control + data;
  }
  return true;
}

}  // namespace scaleup::bench
