// Packing and scheduling (R2 4.2 steps 2-3, 4.5, Fig. 21; R1 for the round-robin option).
//
// Commands wait in one queue per {destination, VC}. The scheduler is work conserving: it picks
// a VC by weighted round robin among the VCs that have an eligible queue, then a queue in that
// VC by arrival order (R2: "arrival order-based scheduling within a VC") or, as R1 had it,
// round robin; it packs that queue's commands back to back up to the limit and sends. It never
// waits for more commands (R2 4.5: "SUE does not delay transactions for reasons of packing").
// Queues are linked lists in one pool, like the thesis's shared linked-list queues. Arrival order
// keeps each VC's non-empty queues in a heap by the arrival number of their oldest command, so
// choosing among a thousand destinations costs a few steps, not a look at each (round robin, R1's
// rule, still walks the destinations from the one after the last served).
//
// Storage (storage.hpp): fixed_storage keeps every table in the object, no heap; heap_storage
// grows the pool and the queues from the caller's allocator as they are used, up to the same
// bounds, for a simulation whose XPUs each address a few of 1023 peers.
//
// What the packer keeps of a command, and for how long (decisions.md practice 15):
//   - the control (at most 18 bytes, R2 Table 3's 144-bit tx_control) is copied into the pool
//     at push: it may be a temporary (`.control = wire::to_bytes(cmd).value`), or a typed
//     command (`push(queued<cmd_write>{...})`), encoded then copied;
//   - the data (up to 256 bytes) is not copied: it is a `borrowed` span, made with borrow()
//     from an lvalue or a view, never from a temporary container. The bytes must stay where
//     they are, unchanged, until next() has packed the command (its cookie comes back then).
#pragma once

#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ranges>
#include <span>
#include <type_traits>
#include <utility>

#include "scaleup/pack/binary_heap.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/pack/storage.hpp"
#include "scaleup/wire/field.hpp"

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

// What borrowing refuses: a container passed as a temporary (an rvalue that does not merely view
// bytes owned elsewhere, as a span does), gone before the bytes would be read.
template <class R>
concept temporary_container = !std::ranges::borrowed_range<R> && std::is_convertible_v<R, bytes>;

// A non-owning view of bytes that the caller keeps alive and unchanged until whoever holds it
// is done (the packer: until next() has packed the command). Made from an lvalue (an array, a
// vector) or from a view (a span): borrowing a temporary container does not compile, so
// `borrow(std::vector<std::uint8_t>{...})` or `borrow(wire::to_bytes(x).value)` is refused
// where it is written rather than read after its end.
class borrowed {
 public:
  constexpr borrowed() noexcept = default;
  constexpr explicit borrowed(bytes b) noexcept : bytes_(b) {}
  template <temporary_container R>
  borrowed(R&&) = delete;

  constexpr bytes span() const noexcept { return bytes_; }
  constexpr std::size_t size() const noexcept { return bytes_.size(); }
  constexpr bool empty() const noexcept { return bytes_.empty(); }

 private:
  bytes bytes_{};
};

// The one way to hand data by reference: `.data = pack::borrow(my_64_bytes)`.
constexpr borrowed borrow(bytes b) noexcept { return borrowed(b); }
template <temporary_container R>
borrowed borrow(R&&) = delete;

// A control the packer can encode itself: a struct with a field table (wire::layout), such as
// the default profile's cmd_write or a vendor profile's, no longer than a tx_control.
// (Without a layout, `layout<C>::size` does not substitute: the concept is false, not an error.)
template <class C>
concept typed_control = wire::layout<C>::size >= 2 && wire::layout<C>::size <= max_control_bytes;

// A command handed to the packer: its control as bytes (queued_command) or as a typed value
// (queued<cmd_write>, ...). The control is copied at push; the data is borrowed (see above).
template <class Control = bytes>
struct queued {
  std::uint16_t destination = 0;
  std::uint8_t vc = 0;
  Control control{};         // copied at push: a temporary is fine
  borrowed data{};           // kept by reference until packed; byte 1 of the control is set from it
  bool send_now = false;     // close the PDU after this command (R1 4.x; R2 4.3 step 2)
  std::uint64_t cookie = 0;  // the caller's handle, returned when the command is packed
};
using queued_command = queued<bytes>;

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

template <std::size_t Destinations, std::size_t VCs = 4, std::size_t Capacity = 1024,
          storage_kind Storage = fixed_storage>
class packer {
  static_assert(VCs >= 1 && VCs <= 4, "SUE has up to 4 VCs (R2 Table 1)");
  static_assert(Capacity + Destinations * VCs < 0xFFFF,
                "pool indices and the queues' head links are 16 bits");
  static constexpr bool grows = Storage::grows;

 public:
  using config = packer_config<VCs>;
  using storage = Storage;

  // `mem`: where heap_storage takes its tables from (malloc and free when none is given);
  // fixed_storage ignores it.
  constexpr explicit packer(const profile& prof, const config& c = {},
                            const allocator& mem = {}) noexcept
      : prof_(&prof),
        cfg_(c),
        pool_(mem),
        queues_(mem),
        heaps_(make_heaps(mem)),
        free_list_(mem),
        next_(mem),
        heads_(mem) {
    if constexpr (!grows) {
      for (std::size_t i = 0; i < Capacity; ++i)
        free_list_[i] = static_cast<std::uint16_t>(Capacity - 1 - i);
      free_count_ = Capacity;
      for (std::size_t i = 0; i < Destinations * VCs; ++i) {
        queues_[i] = queue{head_link(i), 0};
        next_[head_link(i)] = nil;
      }
    }
    for (std::size_t code = 0; code < 256; ++code) {
      const admit a = admission(prof.framing(static_cast<std::uint8_t>(code)), cfg_.limit);
      admit_least_[code] = a.least;
      admit_more_[code] = a.more;
    }
  }
  packer(const packer&) = delete;
  packer& operator=(const packer&) = delete;

  constexpr const config& settings() const noexcept { return cfg_; }

  // Queues a command after checking it against the profile's framing, so that every command
  // the packer writes can be unpacked. The control is copied; the data stays borrowed.
  SCALEUP_ALWAYS_INLINE constexpr error push(const queued_command& c) noexcept {
    if (!admissible(c.destination, c.vc, c.control, c.data.span()) || !room_for(c.destination))
        [[unlikely]]
      return refusal(std::uint32_t{c.destination} << 8 | c.vc, c.control.data(), c.control.size(),
                     c.data.span().data(), c.data.size());
    const std::uint16_t e = free_list_[--free_count_];
    pool_[e].control.set(c.control.data(), c.control.size());
    prefetch(c.data.span());
    enqueue(e, c.destination, c.vc, c.control.size(), c.data.span(), c.send_now, c.cookie);
    return {};
  }

  // Queues a typed command (pack::queued<cmd_write>{...}; the qualification is only needed
  // here, where the name is also the member queued()): its control is encoded (an encode error,
  // such as a value too big for its field, is returned), then pushed as bytes. Byte 1, the data
  // length, is written from the data's size when the command is packed.
  template <typed_control Control>
  constexpr error push(const pack::queued<Control>& c) noexcept {
    std::array<std::uint8_t, wire::layout<Control>::size> control{};
    if (const auto r = wire::encode(c.control, control); !r) [[unlikely]]
      return r.err;
    return push(queued_command{c.destination, c.vc, control, c.data, c.send_now, c.cookie});
  }

  // Every pool entry not free holds a queued command.
  constexpr std::size_t queued() const noexcept { return pool_size() - free_count_; }
  constexpr std::size_t queued(std::uint16_t destination, std::uint8_t vc) const noexcept {
    if (destination >= Destinations || vc >= VCs || index(destination, vc) >= queues_size())
      return 0;
    return queues_[index(destination, vc)].count;
  }
  // Commands queued on a VC, every destination.
  constexpr std::size_t queued_vc(std::uint8_t vc) const noexcept {
    return vc < VCs ? vc_total(vc) : 0;
  }
  // Bytes the tables take: the object, plus what heap_storage took from the allocator.
  constexpr std::size_t memory() const noexcept {
    std::size_t n = sizeof(*this);
    if constexpr (grows) {
      n += pool_.bytes() + queues_.bytes() + free_list_.bytes() + next_.bytes() + heads_.bytes();
      for (const auto& h : heaps_) n += h.bytes();
    }
    return n;
  }

  // Picks a queue and packs it into `out` (at least `limit` bytes). `eligible(dest, vc)` is the
  // hook through which flow control (credits) holds a queue back. The cookies of the packed
  // commands go to `cookies`, in order; when it is given, it also bounds how many are packed.
  template <class Eligible = always_eligible>
  constexpr wire::result<packed_pdu> next(mutable_bytes out, Eligible&& eligible = {},
                                          std::span<std::uint64_t> cookies = {}) noexcept {
    return next_pdu(out, eligible, cookie_span{cookies});
  }

  // The same, handing each packed command's cookie to `on_packed(cookie)` as it is packed, in
  // order, with no bound on how many (a caller that frees what the command borrowed).
  template <class Eligible, class OnPacked>
  requires std::invocable<OnPacked&, std::uint64_t>
  constexpr wire::result<packed_pdu> next(mutable_bytes out, Eligible&& eligible,
                                          OnPacked&& on_packed) noexcept {
    return next_pdu(out, eligible, cookie_call<std::remove_reference_t<OnPacked>>{&on_packed});
  }

  // Takes every command of queue {destination, vc} out, oldest first, unpacked: `take(c)` gets
  // each as a queued_command (its control rebuilt from the pool, its data as borrowed), for a
  // caller that moves a queue elsewhere (to another port's packer when a stream is re-pinned).
  // Returns how many were taken.
  template <class Take>
  constexpr std::size_t drain(std::uint16_t destination, std::uint8_t vc, Take&& take) noexcept {
    if (destination >= Destinations || vc >= VCs || index(destination, vc) >= queues_size())
      return 0;
    const std::size_t qi = index(destination, vc);
    queue& q = queues_[qi];
    const std::size_t n = q.count;
    if (n == 0) return 0;
    if constexpr (Destinations > 1) heap_remove(vc, static_cast<std::uint16_t>(qi));
    std::uint16_t at = head_of(qi);
    for (std::size_t i = 0; i < n; ++i) {
      const entry& e = pool_[at];
      std::array<std::uint8_t, max_control_bytes + 8> control{};
      e.control.write(control.data(), e.control_len());
      take(queued_command{destination, vc, bytes(control.data(), e.control_len()),
                          borrowed(bytes(e.data, e.data_len())), e.send_now(), e.cookie});
      free_list_[free_count_++] = at;
      at = next_[at];
    }
    q.count = 0;
    set_empty(qi);
    if constexpr (Destinations > 1) vc_count_[vc] -= n;
    return n;
  }

 private:
  // Where packed commands' cookies go: a span (bounding the count) or a call per command.
  struct cookie_span {
    std::span<std::uint64_t> out;
  };
  template <class F>
  struct cookie_call {
    F* f;
  };

  template <class Eligible, class Cookies>
  constexpr wire::result<packed_pdu> next_pdu(mutable_bytes out, Eligible& eligible,
                                              Cookies cookies) noexcept {
    if (out.size() < cfg_.limit)
      return error{errc::no_space,
                   "pack",
                   0,
                   static_cast<std::uint32_t>(cfg_.limit),
                   static_cast<std::uint32_t>(out.size()),
                   "output smaller than the limit"};
    std::array<choice, VCs> pick{};
    std::array<bool, VCs> ready{};
    std::uint32_t total_weight = 0;
    for (std::size_t v = 0; v < VCs; ++v) {
      if (vc_total(v) == 0) continue;
      if constexpr (requires { eligible.vc_eligible(std::uint8_t{}); })
        if (!eligible.vc_eligible(static_cast<std::uint8_t>(v))) continue;
      const choice d = choose_queue(static_cast<std::uint8_t>(v), eligible);
      if (d.destination == nil) continue;
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

  static constexpr std::uint16_t nil = 0xFFFF;

  // A control as the pool keeps it: 64-bit words, not bytes. Bytes would be stored through
  // char-typed moves, which the compiler must assume can change any member, so every push read
  // the profile pointer again from memory; words cannot alias it.
  // `head` holds bytes [0, 8) (a shorter control: its bytes, then zeros), `tail` bytes [n - 8, n)
  // and `mid` bytes [8, 16) of a control longer than 16: two loads and two stores for the usual
  // 8 to 16 bytes (the default profile's 12), overlapping where the control is shorter than 16.
  // set() writes only the words write() will read for that length (the others keep what an
  // earlier command left): push is bound by its stores (see entry::shape).
  struct control_words {
    std::uint64_t head = 0, mid = 0, tail = 0;

    SCALEUP_ALWAYS_INLINE constexpr void set(const std::uint8_t* in, std::size_t n) noexcept {
      if (n >= 8) {
        head = load(in);
        tail = load(in + n - 8);
        if (n > 16) mid = load(in + 8);
      } else {
        std::array<std::uint8_t, 8> b{};
        wire::copy_short(b.data(), in, n);
        head = std::bit_cast<std::uint64_t>(b);
      }
    }
    SCALEUP_ALWAYS_INLINE constexpr void write(std::uint8_t* out, std::size_t n) const noexcept {
      if (n >= 8) {
        store(out, head);
        if (n > 16) store(out + 8, mid);
        store(out + n - 8, tail);
      } else {
        const auto b = std::bit_cast<std::array<std::uint8_t, 8>>(head);
        wire::copy_short(out, b.data(), n);
      }
    }

   private:
    // Eight bytes as a word in the host's order and back: the order does not matter, only that
    // store undoes load (the same in a constant expression as at run time).
    SCALEUP_ALWAYS_INLINE static constexpr std::uint64_t load(const std::uint8_t* p) noexcept {
      std::array<std::uint8_t, 8> b{};
      wire::copy_short(b.data(), p, 8);
      return std::bit_cast<std::uint64_t>(b);
    }
    SCALEUP_ALWAYS_INLINE static constexpr void store(std::uint8_t* p, std::uint64_t w) noexcept {
      const auto b = std::bit_cast<std::array<std::uint8_t, 8>>(w);
      wire::copy_short(p, b.data(), 8);
    }
  };

  // A queued command: its control (copied at push, 1..18 bytes), where its data is (borrowed,
  // up to 256 bytes) and its cookie. Destination and VC are the queue's; its place in the queue
  // is in next_. No field is a byte (a char-typed store, see control_words). 64 bytes,
  // aligned: one cache line each.
  struct alignas(64) entry {
    control_words control{};
    const std::uint8_t* data = nullptr;
    std::uint64_t cookie = 0;
    std::uint64_t seq = 0;  // arrival number, to order queues (none with one destination)
    // The data's length (bits 0-14), send_now (bit 15) and the control's length (bits 16-31), in
    // one word: one store at push where three fields took three. Push is bound by its stores
    // (16-byte commands, cache-resident: each store taken out of it took 0.2-0.3 ns off a push
    // of about 2.3), not by its instructions; packing takes the word apart in registers.
    std::uint32_t shape = 0;

    static constexpr std::uint32_t shape_of(std::size_t control_len, std::size_t data_len,
                                            bool send_now) noexcept {
      return static_cast<std::uint32_t>(data_len | std::size_t{send_now} << 15 | control_len << 16);
    }
    // The fields of a shape word (packing reads the word once and takes it apart in registers).
    static constexpr std::size_t data_len_of(std::uint32_t s) noexcept { return s & 0x7FFF; }
    static constexpr bool send_now_of(std::uint32_t s) noexcept { return (s & 0x8000) != 0; }
    static constexpr std::size_t control_len_of(std::uint32_t s) noexcept { return s >> 16; }
    constexpr std::size_t data_len() const noexcept { return data_len_of(shape); }
    constexpr bool send_now() const noexcept { return send_now_of(shape); }
    constexpr std::size_t control_len() const noexcept { return control_len_of(shape); }
  };
  static_assert(max_data_bytes < 0x8000 && max_control_bytes <= 0xFFFF, "the fields of shape");
  static_assert(sizeof(entry) == 64, "a pool entry is a cache line");
  // A queue's first command is next_[head_link(its index)], after the pool's own links; its
  // last is `tail`, or the head link itself while the queue is empty: push appends with one
  // store, `next_[tail] = e`, with no test for an empty queue.
  struct queue {
    std::uint16_t tail = nil;  // the constructor points it at the head link
    std::uint32_t count = 0;
  };
  static constexpr std::uint16_t head_link(std::size_t qi) noexcept {
    return static_cast<std::uint16_t>(Capacity + qi);
  }

  static constexpr std::size_t index(std::uint16_t d, std::uint8_t vc) noexcept {
    return std::size_t{d} * VCs + vc;
  }

  // Whether push takes a command: what check() checks, as tests only, for the hot path; the
  // error that explains a refusal is built out of line, by refusal() (encode does the same).
  SCALEUP_ALWAYS_INLINE constexpr bool admissible(std::uint16_t destination, std::uint8_t vc,
                                                  bytes control, bytes data) const noexcept {
    // 1 to 18 control bytes (one test): a byte to read the type from, and room in the pool.
    if (destination >= Destinations || vc >= VCs || control.size() - 1 >= max_control_bytes)
      return false;
    // One subtraction and one compare (see admission).
    const std::uint8_t code = control[0];
    const std::uint64_t key = std::uint64_t{data.size()} << 5 | control.size();
    return std::rotr(key - admit_least_[code], 5) <= admit_more_[code];
  }

  // What push admits of a type, from the profile's framing (R2 4.2 step 2a) and the limit: a
  // command of c control bytes (1 to 18, tested first) and d data bytes, as the key d << 5 | c,
  // passes when rotr(key - least, 5) <= more, where least is the type's smallest command (its
  // control length, plus 1 << 5 for a type with data) and more how many data bytes it may have
  // beyond the least (fewer where the limit says so). A control length that differs leaves low
  // bits that are not 0 (both lengths are under 32), which the rotation makes the top bits: too
  // big; data shorter than the least wraps around: too big. An unknown type (or one of which no
  // command fits the limit) has least 0 and more 0, and every control length then leaves its
  // low bits. The check was a 16-bit word of bit fields, taken apart with shifts and masks at
  // each push; this is two byte loads, a shift, an or, a subtraction, a rotation and a compare
  // (16-byte commands: 7 instructions fewer a push), in two tables of 256 bytes (the one word
  // per type took 512: the firmware's packer has SCALEUP_PACKER_FIRMWARE_SIZE bytes).
  struct admit {
    std::uint8_t least = 0;
    std::uint8_t more = 0;
  };
  static_assert(max_control_bytes < 32 && max_data_bytes <= 256, "the fields of admission()");
  static constexpr admit admission(std::uint16_t framing, std::size_t limit) noexcept {
    const std::size_t control = framing & profile::control_mask;
    if (framing == 0 || control > max_control_bytes || control > limit) return {};
    if ((framing & profile::carries_data) == 0) return {static_cast<std::uint8_t>(control), 0};
    const std::size_t room = limit - control < max_data_bytes ? limit - control : max_data_bytes;
    if (room == 0) return {};
    return {static_cast<std::uint8_t>(control | 1u << 5), static_cast<std::uint8_t>(room - 1)};
  }

  // Why push refused: check()'s error, else the pool is full.
  // Its arguments in six registers, `this` with them: the command's destination and VC in one,
  // its spans taken apart. Passed as two spans (seven registers' worth), one went to the stack,
  // and GCC then kept the caller's whole queued_command in memory, zeroing it at every push:
  // four stores more a push, on a path bound by its stores (16-byte commands, cache-resident:
  // push 1.95 -> 1.65 ns).
  SCALEUP_COLD constexpr error refusal(std::uint32_t destination_vc, const std::uint8_t* control,
                                       std::size_t control_len, const std::uint8_t* data,
                                       std::size_t data_len) const noexcept {
    const auto destination = static_cast<std::uint16_t>(destination_vc >> 8);
    const auto vc = static_cast<std::uint8_t>(destination_vc);
    if (const error e = check(destination, vc, bytes(control, control_len), bytes(data, data_len)))
      return e;
    return pool_full();
  }

  // Everything push checks but the pool's room, with the error that says what is wrong: the
  // queue exists, the command keeps the profile's framing, and it fits a PDU.
  constexpr error check(std::uint16_t destination, std::uint8_t vc, bytes control,
                        bytes data) const noexcept {
    if (destination >= Destinations || vc >= VCs)
      return error{errc::value_too_big,
                   "pack",
                   0,
                   0,
                   0,
                   vc >= VCs ? "VC out of range" : "destination out of range",
                   vc >= VCs ? "sue.rh.vc" : "",
                   static_cast<std::uint64_t>(vc >= VCs ? vc : destination)};
    if (const error e = check_command(*prof_, control, data)) return e;
    // Only a profile that fails check() (a control over 9 units) gets here: the pool's copy
    // holds a tx_control's 18 bytes.
    if (control.size() > max_control_bytes)
      return error{errc::bad_length,
                   "sue.cmd",
                   0,
                   static_cast<std::uint32_t>(max_control_bytes),
                   static_cast<std::uint32_t>(control.size()),
                   "control longer than 18 bytes",
                   "sue.cmd.control_len",
                   control.size()};
    if (control.size() + data.size() > cfg_.limit)
      return error{errc::value_too_big,
                   "pack",
                   0,
                   static_cast<std::uint32_t>(cfg_.limit),
                   static_cast<std::uint32_t>(control.size() + data.size()),
                   "command larger than the packing limit"};
    return {};
  }

  // The data is read when the command is packed, a PDU's worth of pushes later: asking for its
  // cache lines now hides the wait for them then (a hint, nothing is read). With 256-byte
  // commands from a buffer beyond the caches, the copy at packing time waited for three lines
  // of each (0.49 -> 0.67 x memcpy). Data of a line or less is most often in the control's line,
  // which push has just read: a hint for it cost more than it saved (0.74 -> 0.70 with 16-byte
  // commands), so it gets none.
  SCALEUP_ALWAYS_INLINE static constexpr void prefetch(bytes data) noexcept {
#if defined(__GNUC__) || defined(__clang__)
    if (!std::is_constant_evaluated() && data.size() > 64)
      for (std::size_t i = 0; i < data.size(); i += 64) __builtin_prefetch(data.data() + i);
#else
    (void)data;
#endif
  }

  static constexpr error pool_full() noexcept {
    return error{errc::no_space, "pack", 0, 0, 0, "command pool full"};
  }

  // Room for one more command, destination checked: with heap_storage the pool and the
  // destination's queues grow here (false: a bound reached or the allocator out of memory).
  SCALEUP_ALWAYS_INLINE constexpr bool room_for(std::uint16_t destination) noexcept {
    if constexpr (grows) {
      if (free_count_ == 0 && !grow_pool()) return false;
      const std::size_t need = (std::size_t{destination} + 1) * VCs;
      if (need > queues_.size() && !grow_queues(need)) return false;
      return true;
    } else {
      (void)destination;
      return free_count_ != 0;
    }
  }

  constexpr bool grow_pool() noexcept {
    const std::size_t old = pool_.size();
    if (!pool_.reserve(old + 1)) return false;
    const std::size_t now = pool_.size();
    if (!free_list_.reserve(now) || !next_.reserve(now)) return false;
    for (std::size_t i = now; i > old; --i)
      free_list_[free_count_++] = static_cast<std::uint16_t>(i - 1);
    return true;
  }
  constexpr bool grow_queues(std::size_t need) noexcept {
    if (!queues_.reserve(need) || !heads_.reserve(queues_.size())) return false;
    if constexpr (Destinations > 1)
      for (auto& h : heaps_)
        if (!h.reserve(queues_.size() / VCs)) return false;
    return true;
  }

  // Fills entry e, just taken from the free stack with its control written, and appends it to
  // its queue. (Free entries are a stack of indices, not a list threaded through the entries:
  // taking one does not wait for a load from the entry taken before.)
  SCALEUP_ALWAYS_INLINE constexpr void enqueue(std::uint16_t e, std::uint16_t destination,
                                               std::uint8_t vc, std::size_t control_len, bytes data,
                                               bool send_now, std::uint64_t cookie) noexcept {
    entry& en = pool_[e];
    // Field by field: the caller has usually just built its command, and a block copy of it
    // would read its narrow fields back with wide loads (a store-forwarding stall per command).
    // Only what packing reads: next_[e] is left as it is (the queue's count says where the queue
    // ends), and with one destination, where each VC has one queue, neither the arrival number
    // (nothing to order) nor the VC's count (the queue's) is kept.
    en.data = data.data();
    en.cookie = cookie;
    if constexpr (Destinations > 1) en.seq = seq_++;
    en.shape = entry::shape_of(control_len, data.size(), send_now);
    const std::size_t qi = index(destination, vc);
    queue& q = queues_[qi];
    if constexpr (grows) {
      // Heads in a table of their own: the pool grows, so no head link can follow it.
      if (q.count == 0)
        heads_[qi] = e;
      else
        next_[q.tail] = e;
    } else {
      next_[q.tail] = e;
    }
    q.tail = e;
    // A queue that was empty joins its VC's heap, keyed by this, its oldest command.
    if constexpr (Destinations > 1)
      if (q.count == 0) heap_push(vc, heap_entry{en.seq, static_cast<std::uint16_t>(qi)});
    ++q.count;
    if constexpr (Destinations > 1) ++vc_count_[vc];
  }

  // The first command of queue qi, and the state of an empty queue.
  constexpr std::uint16_t& head_of(std::size_t qi) noexcept {
    if constexpr (grows)
      return heads_[qi];
    else
      return next_[head_link(qi)];
  }
  constexpr void set_empty(std::size_t qi) noexcept {
    if constexpr (!grows) queues_[qi].tail = head_link(qi);
  }
  constexpr std::size_t pool_size() const noexcept {
    if constexpr (grows)
      return pool_.size();
    else
      return Capacity;
  }
  constexpr std::size_t queues_size() const noexcept {
    if constexpr (grows)
      return queues_.size();
    else
      return Destinations * VCs;
  }

  // Commands queued for a VC.
  constexpr std::size_t vc_total(std::size_t vc) const noexcept {
    if constexpr (Destinations > 1)
      return vc_count_[vc];
    else
      return vc < queues_size() ? queues_[vc].count : 0;
  }

  // ---- each VC's non-empty queues, by the arrival of their oldest command ----
  // A binary min-heap of (arrival number of the queue's head, queue). A queue joins it when its
  // first command comes, its key grows when commands are packed from it, and it leaves when it
  // is empty.
  struct heap_entry {
    std::uint64_t seq = 0;
    std::uint16_t queue = 0;
  };
  using heap_table = table<heap_entry, (Destinations > 1 ? Destinations : 1), Storage>;

  static constexpr std::array<heap_table, VCs> make_heaps(const allocator& mem) noexcept {
    return make_heaps(mem, std::make_index_sequence<VCs>{});
  }
  template <std::size_t... I>
  static constexpr std::array<heap_table, VCs> make_heaps(const allocator& mem,
                                                          std::index_sequence<I...>) noexcept {
    return {{(static_cast<void>(I), heap_table(mem))...}};
  }

  static constexpr std::uint64_t seq_of(const heap_entry& e) noexcept { return e.seq; }
  constexpr void heap_push(std::uint8_t vc, heap_entry x) noexcept {
    heap_sift_up(heaps_[vc], heap_size_[vc]++, x, seq_of);
  }
  // The entry at i got a later key: it moves down.
  constexpr void heap_down(std::uint8_t vc, std::size_t i, heap_entry x) noexcept {
    heap_sift_down(heaps_[vc], heap_size_[vc], i, x, seq_of);
  }
  constexpr void heap_erase(std::uint8_t vc, std::size_t i) noexcept {
    heap_table& h = heaps_[vc];
    const std::size_t last = --heap_size_[vc];
    if (i == last) return;
    const heap_entry x = h[last];
    // The last entry takes the hole: up if it is older than the hole's parent, else down.
    if (i > 0 && x.seq < h[(i - 1) / 2].seq) return heap_sift_up(h, i, x, seq_of);
    heap_down(vc, i, x);
  }
  constexpr void heap_remove(std::uint8_t vc, std::uint16_t qi) noexcept {
    for (std::size_t i = 0; i < heap_size_[vc]; ++i)
      if (heaps_[vc][i].queue == qi) return heap_erase(vc, i);
  }

  // The queue chosen on a VC, and where it sits in the VC's heap (arrival order).
  struct choice {
    std::uint16_t destination = nil;
    std::size_t place = 0;
  };

  template <class Eligible>
  constexpr choice choose_queue(std::uint8_t vc, Eligible& eligible) noexcept {
    if constexpr (Destinations == 1) {
      // One queue per VC: it is the one, if it may go.
      return eligible(std::uint16_t{0}, vc) ? choice{0, 0} : choice{};
    } else if (cfg_.order == within_vc::round_robin) {
      // R1: the first eligible queue after the one served last.
      const std::size_t known = queues_size() / VCs;
      for (std::size_t k = 0; k < Destinations; ++k) {
        const std::size_t d = (rr_next_[vc] + k) % Destinations;
        if (d >= known) continue;
        const queue& q = queues_[index(static_cast<std::uint16_t>(d), vc)];
        if (q.count != 0 && eligible(static_cast<std::uint16_t>(d), vc))
          return choice{static_cast<std::uint16_t>(d), 0};
      }
      return {};
    } else {
      // R2: the eligible queue whose oldest command arrived first. The heap's top when it may
      // go; else a walk from the top that stops at each eligible entry (nothing below it is
      // older) and looks beneath each held-back one, so held-back queues cost a step each.
      const heap_table& h = heaps_[vc];
      const std::size_t n = heap_size_[vc];
      if (n == 0) return {};
      const auto dest = [](std::uint16_t qi) { return static_cast<std::uint16_t>(qi / VCs); };
      if (eligible(dest(h[0].queue), vc)) return choice{dest(h[0].queue), 0};
      std::array<std::uint16_t, Destinations> todo{};
      std::size_t top = 0;
      choice best{};
      std::uint64_t best_seq = ~std::uint64_t{0};
      for (std::size_t c = 1; c <= 2 && c < n; ++c) todo[top++] = static_cast<std::uint16_t>(c);
      while (top > 0) {
        const std::size_t i = todo[--top];
        if (h[i].seq >= best_seq) continue;  // an older eligible queue is known
        if (eligible(dest(h[i].queue), vc)) {
          best = choice{dest(h[i].queue), i};
          best_seq = h[i].seq;
          continue;
        }
        for (std::size_t c = 2 * i + 1; c <= 2 * i + 2 && c < n; ++c)
          todo[top++] = static_cast<std::uint16_t>(c);
      }
      return best;
    }
  }

  template <class Cookies>
  constexpr packed_pdu pack_queue(choice pick, std::uint8_t vc, mutable_bytes out,
                                  Cookies cookies) noexcept {
    const std::uint16_t d = pick.destination;
    const std::size_t qi = index(d, vc);
    queue& q = queues_[qi];
    std::uint16_t& head = head_of(qi);
    // q.count bounds the walk: the list holds exactly that many.
    run r;
    if constexpr (std::is_same_v<Cookies, cookie_span>) {
      r = cookies.out.empty()
              ? copy_run<false>(head, q.count, out.data(), cookies)
              : copy_run<true>(head, cookies.out.size() < q.count ? cookies.out.size() : q.count,
                               out.data(), cookies);
    } else {
      r = copy_run<true>(head, q.count, out.data(), cookies);
    }
    if (r.commands > 0) {
      q.count -= static_cast<std::uint32_t>(r.commands);
      head = r.at;  // past the last command, next_ is stale: the count says where the queue ends
      if (q.count == 0) set_empty(qi);
      if constexpr (Destinations > 1) {
        vc_count_[vc] -= r.commands;
        // Its place in the heap: found there by arrival order, looked up by round robin.
        std::size_t at = pick.place;
        if (cfg_.order == within_vc::round_robin || heaps_[vc][at].queue != qi) {
          for (at = 0; at < heap_size_[vc] && heaps_[vc][at].queue != qi; ++at) {
          }
        }
        if (q.count == 0)
          heap_erase(vc, at);
        else
          heap_down(vc, at, heap_entry{pool_[head].seq, static_cast<std::uint16_t>(qi)});
      }
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
  template <bool WithCookies, class Cookies>
  constexpr run copy_run(std::uint16_t first, std::size_t max_commands, std::uint8_t* const dst,
                         Cookies cookies) noexcept {
    // Where the PDU must end, and the free stack's top, as pointers: fewer values live across
    // the copies than a used count, a limit and a second counter (GCC kept the limit on the
    // stack; a little faster, one instruction fewer a command).
    std::uint8_t* out = dst;
    std::uint8_t* const end = dst + cfg_.limit;
    std::uint16_t* const freed = &free_list_[free_count_];
    std::size_t at = first;  // a word: the link loaded is an index with no widening
    std::size_t commands = 0;
    while (commands < max_commands) {
      const entry& e = pool_[at];
      const std::uint32_t shape = e.shape;
      const std::size_t control_len = entry::control_len_of(shape);
      const std::size_t data_len = entry::data_len_of(shape);
      if (static_cast<std::size_t>(end - out) < control_len + data_len)
        break;  // it starts the next PDU
      if constexpr (WithCookies) {
        if constexpr (std::is_same_v<Cookies, cookie_span>)
          cookies.out[commands] = e.cookie;
        else
          (*cookies.f)(e.cookie);
      }
      // Framing was checked at push and the room just above: copy, with byte 1 made to agree.
      e.control.write(out, control_len);
      write_checked_data(bytes(e.data, data_len), out, control_len);
      out += control_len + data_len;
      freed[commands++] = static_cast<std::uint16_t>(at);
      at = next_[at];
      if (entry::send_now_of(shape)) break;  // it closes the PDU
    }
    free_count_ += commands;
    return run{static_cast<std::size_t>(out - dst), commands, static_cast<std::uint16_t>(at)};
  }

  const profile* prof_;
  config cfg_;
  table<entry, Capacity, Storage> pool_;
  table<queue, Destinations * VCs, Storage> queues_;
  std::array<heap_table, VCs> heaps_;
  std::array<std::size_t, VCs> heap_size_{};
  std::array<std::int64_t, VCs> credit_{};
  std::array<std::size_t, VCs> vc_count_{};
  std::array<std::uint16_t, VCs> rr_next_{};
  table<std::uint16_t, Capacity, Storage> free_list_;
  // The queues' links: next_[e] follows entry e in its queue. An array of their own rather than
  // a field of the entry: the walk in copy_run is a chain of these loads, one per command, and
  // an index loaded from here is an address at once (next_[at], a scaled load), where a field
  // at pool_[at] took a shift and an add more each step (16-byte commands, cache-resident:
  // 5.2 -> 4.3 ns a command; from memory 6.2 -> 5.0 ns).
  // With fixed_storage, after the pool's links, one head link per queue (see queue); with
  // heap_storage the heads are in heads_.
  table<std::uint16_t, (grows ? Capacity : Capacity + Destinations * VCs), Storage> next_;
  table<std::uint16_t, (grows ? Destinations * VCs : 1), Storage> heads_;
  // By type code: see admission(). Two tables, not one of pairs: GCC loaded a pair as one word
  // and took it apart, two instructions more a push.
  std::array<std::uint8_t, 256> admit_least_{};
  std::array<std::uint8_t, 256> admit_more_{};
  std::size_t free_count_ = 0;
  std::uint64_t seq_ = 0;
};

}  // namespace scaleup::pack
