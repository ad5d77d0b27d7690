// Header/data split of a fabric port: a cycle-level model of the logical scheduler that feeds one
// header path and one data path, the single shared path it replaces, and the far-side merge that
// re-associates headers with their data (header/data router patent, seed 002, FIG. 2-5; seed
// digest H). "002 FIG. n" below refers to the patent's description of that figure.
//
// Time is a cycle counter in each port's state; each path carries at most one flit per cycle.
// Everything lives in fixed-capacity arrays sized by template parameters: no heap, no
// exceptions, and the whole model runs in constant expressions.
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <ranges>
#include <span>
#include <string_view>
#include <type_traits>

namespace scaleup::pack::split {

// ---- transactions -----------------------------------------------------------------------------

// The four classes and which of them carry data are the patent's table (002 "A read request has a
// header portion but no data portion ..."; digest H). The values are indices into per-class
// arrays, not wire codes: the patent gives none.
enum class tx_class : std::uint8_t {
  read_request = 0,
  write_request = 1,
  read_response = 2,
  write_response = 3,
};
inline constexpr std::size_t class_count = 4;

constexpr std::size_t index(tx_class c) noexcept { return static_cast<std::size_t>(c); }

constexpr bool carries_data(tx_class c) noexcept {
  return c == tx_class::write_request || c == tx_class::read_response;
}

constexpr std::string_view to_string(tx_class c) noexcept {
  switch (c) {
    case tx_class::read_request:
      return "read_request";
    case tx_class::write_request:
      return "write_request";
    case tx_class::read_response:
      return "read_response";
    case tx_class::write_response:
      return "write_response";
  }
  return "unknown";
}

// The input stream of FIG. 3 that carries each class, so traces can be read against the figure.
constexpr std::string_view stream_name(tx_class c) noexcept {
  switch (c) {
    case tx_class::read_request:
      return "CMD REQ HEAD IS RD";
    case tx_class::write_request:
      return "REQ/ORIG DATA";
    case tx_class::read_response:
      return "RD RSP/DATA";
    case tx_class::write_response:
      return "WR RSP";
  }
  return "unknown";
}

// FIG. 3 draws the streams in this order; the shared-path baseline's round robin and the reset
// priorities of the split scheduler follow it, so neither model favours a class the patent does
// not.
inline constexpr std::array<tx_class, class_count> fig3_order{
    tx_class::write_request,
    tx_class::read_response,
    tx_class::write_response,
    tx_class::read_request,
};

// The arbitration partner inside each pair of FIG. 3: the two data-carrying streams share one
// round robin per segment, the two header-only streams share another.
constexpr tx_class partner(tx_class c) noexcept {
  switch (c) {
    case tx_class::write_request:
      return tx_class::read_response;
    case tx_class::read_response:
      return tx_class::write_request;
    case tx_class::write_response:
      return tx_class::read_request;
    case tx_class::read_request:
      return tx_class::write_response;
  }
  return c;
}

// One data beat: whatever one data-path flit carries in one cycle (002: a payload of "256 bytes,
// which can span several clock cycles"). The model never looks inside a beat, so a 32-bit token
// is enough to tell beats apart.
using beat = std::uint32_t;

// A transaction: its class, a tag, and 0 beats (header-only classes) or 1..MaxBeats beats (the
// data-carrying classes). Entries of `data` past `beats` are ignored by every function here.
template <std::size_t MaxBeats>
struct transaction {
  static_assert(MaxBeats >= 1 && MaxBeats <= 255, "a header carries the beat count in 8 bits");
  static constexpr std::size_t max_beats = MaxBeats;

  tx_class cls = tx_class::read_request;
  std::uint16_t id = 0;
  std::uint8_t beats = 0;
  std::array<beat, MaxBeats> data{};

  constexpr std::span<const beat> payload() const noexcept {
    return {data.data(), beats <= MaxBeats ? beats : MaxBeats};
  }

  friend constexpr bool operator==(const transaction& a, const transaction& b) noexcept {
    if (a.cls != b.cls || a.id != b.id || a.beats != b.beats) return false;
    const auto pa = a.payload();
    const auto pb = b.payload();
    for (std::size_t i = 0; i < pa.size(); ++i) {
      if (pa[i] != pb[i]) return false;
    }
    return true;
  }
};

// ---- flits ------------------------------------------------------------------------------------

// The header flit is the command portion (002 FIG. 3 "CMD"): it names the class, the tag and how
// many data beats follow, which is all the far side needs to claim the data (FIG. 5).
struct header_flit {
  tx_class cls = tx_class::read_request;
  std::uint16_t id = 0;
  std::uint8_t beats = 0;
  friend constexpr bool operator==(const header_flit&, const header_flit&) = default;
};

// A data flit carries no tag: the far side pairs data with headers by order (see merge). `last`
// marks the final beat so a receiver can check the header's count, as AXI's xLAST does.
struct data_flit {
  beat value = 0;
  bool last = false;
  friend constexpr bool operator==(const data_flit&, const data_flit&) = default;
};

// What one cycle put on the paths. The shared-path baseline sets at most one of the two.
struct cycle_out {
  std::uint64_t cycle = 0;
  std::optional<header_flit> header{};
  std::optional<data_flit> data{};
  friend constexpr bool operator==(const cycle_out&, const cycle_out&) = default;
};

template <std::size_t MaxBeats>
constexpr header_flit header_of(const transaction<MaxBeats>& t) noexcept {
  return header_flit{t.cls, t.id, t.beats};
}

// ---- errors -----------------------------------------------------------------------------------

enum class errc : std::uint8_t {
  none = 0,
  bad_class,     // a class value outside tx_class
  bad_beats,     // beat count wrong for the class, or more than MaxBeats
  queue_full,    // offer: the class's input queue has no room (back-pressure, not loss)
  unsorted,      // run: arrival cycles go backwards
  missing_data,  // merge: a header announces more beats than the data stream still holds
  bad_length,    // merge: a `last` flag disagrees with the header's beat count
  stray_data,    // merge: data flits left over after the last header
  no_space,      // merge: more transactions of one class than the output holds
};

constexpr std::string_view to_string(errc e) noexcept {
  switch (e) {
    case errc::none:
      return "none";
    case errc::bad_class:
      return "bad_class";
    case errc::bad_beats:
      return "bad_beats";
    case errc::queue_full:
      return "queue_full";
    case errc::unsorted:
      return "unsorted";
    case errc::missing_data:
      return "missing_data";
    case errc::bad_length:
      return "bad_length";
    case errc::stray_data:
      return "stray_data";
    case errc::no_space:
      return "no_space";
  }
  return "unknown";
}

template <std::size_t MaxBeats>
constexpr errc check(const transaction<MaxBeats>& t) noexcept {
  if (index(t.cls) >= class_count) return errc::bad_class;
  const bool ok = carries_data(t.cls) ? (t.beats >= 1 && t.beats <= MaxBeats) : t.beats == 0;
  return ok ? errc::none : errc::bad_beats;
}

template <std::size_t MaxBeats>
constexpr bool well_formed(const transaction<MaxBeats>& t) noexcept {
  return check(t) == errc::none;
}

// ---- input queues -----------------------------------------------------------------------------

// A fixed ring buffer. Each class has its own (002 FIG. 4: one receive buffer per channel), so a
// backlog of one class never sits in front of another class's head.
template <class T, std::size_t Depth>
struct fifo {
  static_assert(Depth >= 1);
  std::array<T, Depth> slot{};
  std::size_t head = 0;
  std::size_t size = 0;

  constexpr bool empty() const noexcept { return size == 0; }
  constexpr bool full() const noexcept { return size == Depth; }
  constexpr const T& front() const noexcept { return slot[head]; }
  constexpr bool push(const T& v) noexcept {
    if (full()) return false;
    slot[(head + size) % Depth] = v;
    ++size;
    return true;
  }
  constexpr void pop() noexcept {
    if (empty()) return;
    head = (head + 1) % Depth;
    --size;
  }
};

template <std::size_t MaxBeats, std::size_t Depth>
struct input_queues {
  std::array<fifo<transaction<MaxBeats>, Depth>, class_count> q{};

  constexpr fifo<transaction<MaxBeats>, Depth>& operator[](tx_class c) noexcept {
    return q[index(c)];
  }
  constexpr const fifo<transaction<MaxBeats>, Depth>& operator[](tx_class c) const noexcept {
    return q[index(c)];
  }
  constexpr bool empty() const noexcept {
    for (const auto& f : q) {
      if (!f.empty()) return false;
    }
    return true;
  }
  constexpr errc push(const transaction<MaxBeats>& t) noexcept {
    if (const errc e = check(t); e != errc::none) return e;
    return (*this)[t.cls].push(t) ? errc::none : errc::queue_full;
  }
};

// ---- the split port: logical scheduler of FIG. 3 ----------------------------------------------

// Which side of the header path's final two-way round robin goes first.
enum class header_group : std::uint8_t { data_sop, header_only };

// State of one port's logical scheduler (002 FIG. 3).
//
// The data path is held by one transaction from its SOP to its last beat (`in_burst`, with
// `burst` naming its stream): the patent frees the header path during later beats "for other
// header-only transactions" (002 FIG. 3), i.e. no second SOP starts while a payload is in
// flight. The transaction in flight stays at the head of its queue until its last beat leaves.
//
// Three two-way round robins, as FIG. 3 draws them, each pointer naming who wins the next tie:
// - `sop_first`: header segments of REQ/ORIG DATA and RD RSP/DATA. Its winner's first beat takes
//   the data path in the same cycle, so the data-segment round robin of FIG. 3 follows it at SOP
//   and is locked to the burst in flight otherwise.
// - `header_only_first`: WR RSP and CMD REQ HEAD IS RD.
// - `header_first`: the header path itself, between the SOP winner (eligible only when the data
//   path is free this cycle) and the header-only winner.
// Every pointer moves past the winner on each grant, contended or not. So while a burst holds the
// data path the header-only side wins unopposed and hands the next tie to the SOP side: a new
// payload starts as soon as the data path frees, and header-only traffic fills the cycles in
// between. At reset the SOP side goes first: the data path is the full-bandwidth resource (002
// FIG. 2: "the data router is capable of supporting full bandwidth").
//
// No class waits behind another for more than a bounded number of cycles, which is how this
// model keeps "request traffic does not block response traffic (and vice versa)" (002, detailed
// description ahead of FIG. 1). Counted from the cycle a transaction reaches the head of its
// queue, a header-only one waits at most 3 cycles (an SOP, its partner, another SOP) and a
// data-carrying one at most MaxBeats + 2 (a header-only grant, a payload of its partner, another
// header-only grant; a partner payload already in flight hands the SOP tie to it, so it costs no
// more).
template <std::size_t MaxBeats, std::size_t Depth>
struct split_port {
  input_queues<MaxBeats, Depth> in{};
  std::uint64_t cycle = 0;
  bool in_burst = false;
  tx_class burst = tx_class::write_request;  // meaningful only while in_burst
  std::uint8_t next_beat = 0;
  tx_class sop_first = fig3_order[0];
  tx_class header_only_first = fig3_order[2];
  header_group header_first = header_group::data_sop;
};

// The baseline: one path, one flit per cycle, each transaction's header followed by its beats
// with nothing in between ("forced to share a single path sequentially", 002 FIG. 3). A four-way
// round robin in FIG. 3 order picks the next transaction. Any work-conserving order drains at the
// same cycle, so the choice only shapes the trace, not the cycle count.
template <std::size_t MaxBeats, std::size_t Depth>
struct shared_port {
  input_queues<MaxBeats, Depth> in{};
  std::uint64_t cycle = 0;
  bool in_burst = false;
  tx_class burst = tx_class::write_request;  // meaningful only while in_burst
  std::uint8_t next_beat = 0;
  std::uint8_t rr_first = 0;  // position in fig3_order that wins the next pick
};

template <class Port>
struct offered {
  Port port{};
  errc error = errc::none;
};

template <class Port>
struct stepped {
  Port port{};
  cycle_out out{};
};

// Arrivals are offered before the cycle's arbitration, so a transaction offered at cycle c can
// leave in cycle c. A full queue refuses (queue_full) and the caller holds the transaction: the
// model back-pressures, it never drops.
template <std::size_t MaxBeats, std::size_t Depth>
constexpr offered<split_port<MaxBeats, Depth>> offer(split_port<MaxBeats, Depth> p,
                                                     const transaction<MaxBeats>& t) noexcept {
  const errc e = p.in.push(t);
  return {p, e};
}

template <std::size_t MaxBeats, std::size_t Depth>
constexpr offered<shared_port<MaxBeats, Depth>> offer(shared_port<MaxBeats, Depth> p,
                                                      const transaction<MaxBeats>& t) noexcept {
  const errc e = p.in.push(t);
  return {p, e};
}

template <std::size_t MaxBeats, std::size_t Depth>
constexpr bool idle(const split_port<MaxBeats, Depth>& p) noexcept {
  return !p.in_burst && p.in.empty();
}

template <std::size_t MaxBeats, std::size_t Depth>
constexpr bool idle(const shared_port<MaxBeats, Depth>& p) noexcept {
  return !p.in_burst && p.in.empty();
}

namespace detail {

struct pick {
  bool any = false;
  tx_class cls = tx_class::read_request;
};

template <std::size_t MaxBeats, std::size_t Depth>
constexpr pick pick2(const input_queues<MaxBeats, Depth>& in, tx_class first) noexcept {
  if (!in[first].empty()) return {true, first};
  if (!in[partner(first)].empty()) return {true, partner(first)};
  return {};
}

// Emits the next beat of the payload in flight and frees the data path after its last beat.
template <class Port>
constexpr void continue_burst(Port& p, cycle_out& out) noexcept {
  auto& q = p.in[p.burst];
  const auto& t = q.front();
  const bool last = p.next_beat + 1u == t.beats;
  out.data = data_flit{t.data[p.next_beat], last};
  ++p.next_beat;
  if (last) {
    q.pop();
    p.in_burst = false;
    p.next_beat = 0;
  }
}

}  // namespace detail

// One cycle of the split port (002 FIG. 3). At SOP the header flit and the first data flit leave
// together; later beats leave on the data path alone while the header path serves header-only
// transactions.
template <std::size_t MaxBeats, std::size_t Depth>
constexpr stepped<split_port<MaxBeats, Depth>> step(split_port<MaxBeats, Depth> p) noexcept {
  cycle_out out{};
  out.cycle = p.cycle;

  // A burst that ends this cycle still holds the data path for this cycle: the freed path is only
  // seen by the next cycle's arbitration.
  const bool data_free = !p.in_burst;
  if (!data_free) detail::continue_burst(p, out);

  const auto sop = data_free ? detail::pick2(p.in, p.sop_first) : detail::pick{};
  const auto only = detail::pick2(p.in, p.header_only_first);
  const bool to_sop = sop.any && (!only.any || p.header_first == header_group::data_sop);

  if (to_sop) {
    auto& q = p.in[sop.cls];
    const auto& t = q.front();
    out.header = header_of(t);
    out.data = data_flit{t.data[0], t.beats == 1};
    if (t.beats == 1) {
      q.pop();
    } else {
      p.in_burst = true;
      p.burst = sop.cls;
      p.next_beat = 1;
    }
    p.sop_first = partner(sop.cls);
    p.header_first = header_group::header_only;
  } else if (only.any) {
    auto& q = p.in[only.cls];
    out.header = header_of(q.front());
    q.pop();
    p.header_only_first = partner(only.cls);
    p.header_first = header_group::data_sop;
  }

  ++p.cycle;
  return {p, out};
}

// One cycle of the shared-path baseline.
template <std::size_t MaxBeats, std::size_t Depth>
constexpr stepped<shared_port<MaxBeats, Depth>> step(shared_port<MaxBeats, Depth> p) noexcept {
  cycle_out out{};
  out.cycle = p.cycle;
  if (p.in_burst) {
    detail::continue_burst(p, out);
  } else {
    for (std::size_t k = 0; k < class_count; ++k) {
      const std::size_t pos = (p.rr_first + k) % class_count;
      const tx_class c = fig3_order[pos];
      auto& q = p.in[c];
      if (q.empty()) continue;
      out.header = header_of(q.front());
      if (q.front().beats > 0) {
        p.in_burst = true;
        p.burst = c;
        p.next_beat = 0;
      } else {
        q.pop();
      }
      p.rr_first = static_cast<std::uint8_t>((pos + 1) % class_count);
      break;
    }
  }
  ++p.cycle;
  return {p, out};
}

// ---- running a workload -----------------------------------------------------------------------

template <std::size_t MaxBeats>
struct arrival {
  static constexpr std::size_t max_beats = MaxBeats;
  std::uint64_t cycle = 0;  // first cycle in which the transaction may be offered
  transaction<MaxBeats> tx{};
};

template <class T>
struct is_arrival : std::false_type {};
template <std::size_t N>
struct is_arrival<arrival<N>> : std::true_type {};

// A contiguous sequence of arrivals, sorted by cycle; within a class, its order is the order the
// transactions enter that class's queue.
template <class R>
concept arrival_range = std::ranges::contiguous_range<R> && std::ranges::sized_range<R> &&
    is_arrival<std::remove_cv_t<std::ranges::range_value_t<R>>>::value;

struct no_sink {
  constexpr void operator()(const cycle_out&) const noexcept {}
};

// Records up to N cycles of a run; `overflow` says cycles were lost.
template <std::size_t N>
struct trace {
  std::array<cycle_out, N> cycles{};
  std::size_t size = 0;
  bool overflow = false;

  constexpr void operator()(const cycle_out& o) noexcept {
    if (size < N) {
      cycles[size++] = o;
    } else {
      overflow = true;
    }
  }
  constexpr std::span<const cycle_out> view() const noexcept { return {cycles.data(), size}; }
};

constexpr double ratio(std::uint64_t num, std::uint64_t den) noexcept {
  return den == 0 ? 0.0 : static_cast<double>(num) / static_cast<double>(den);
}

// `cycles` is the time to drain: the run starts at cycle 0 and the last flit leaves in cycle
// `cycles - 1`. Utilisation is busy cycles over that span.
struct split_report {
  errc error = errc::none;
  std::size_t transactions = 0;
  std::uint64_t cycles = 0;
  std::uint64_t header_busy = 0;
  std::uint64_t data_busy = 0;

  constexpr double header_utilisation() const noexcept { return ratio(header_busy, cycles); }
  constexpr double data_utilisation() const noexcept { return ratio(data_busy, cycles); }
  constexpr double transactions_per_cycle() const noexcept { return ratio(transactions, cycles); }
};

struct shared_report {
  errc error = errc::none;
  std::size_t transactions = 0;
  std::uint64_t cycles = 0;
  std::uint64_t busy = 0;

  constexpr double utilisation() const noexcept { return ratio(busy, cycles); }
  constexpr double transactions_per_cycle() const noexcept { return ratio(transactions, cycles); }
};

namespace detail {

struct totals {
  errc error = errc::none;
  std::size_t transactions = 0;
  std::uint64_t cycles = 0;
  std::uint64_t header = 0;
  std::uint64_t data = 0;
};

template <class A>
constexpr std::size_t next_of(std::span<const A> a, tx_class c, std::size_t from) noexcept {
  while (from < a.size() && a[from].tx.cls != c) ++from;
  return from;
}

// Feeds each class's arrivals into its queue as soon as they are due and there is room, then
// steps the port; idle stretches before the next arrival are skipped, not simulated. A port that
// holds work emits at least one flit every cycle, so the loop always ends.
template <class Port, class A, class Sink>
constexpr totals drive(Port p, std::span<const A> a,
                       Sink& sink) noexcept(std::is_nothrow_invocable_v<Sink&, const cycle_out&>) {
  totals t{};
  t.transactions = a.size();
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (const errc e = check(a[i].tx); e != errc::none) {
      t.error = e;
      return t;
    }
    if (i > 0 && a[i].cycle < a[i - 1].cycle) {
      t.error = errc::unsorted;
      return t;
    }
  }
  std::array<std::size_t, class_count> next{};
  for (std::size_t c = 0; c < class_count; ++c) {
    next[c] = next_of(a, static_cast<tx_class>(c), 0);
  }
  std::size_t pending = a.size();
  while (pending > 0 || !idle(p)) {
    if (idle(p)) {
      std::uint64_t due = p.cycle;
      bool any = false;
      for (std::size_t c = 0; c < class_count; ++c) {
        if (next[c] < a.size() && (!any || a[next[c]].cycle < due)) {
          due = a[next[c]].cycle;
          any = true;
        }
      }
      if (due > p.cycle) p.cycle = due;
    }
    for (std::size_t c = 0; c < class_count; ++c) {
      while (next[c] < a.size() && a[next[c]].cycle <= p.cycle) {
        if (p.in.push(a[next[c]].tx) != errc::none) break;
        --pending;
        next[c] = next_of(a, static_cast<tx_class>(c), next[c] + 1);
      }
    }
    const auto s = step(p);
    p = s.port;
    if (s.out.header) ++t.header;
    if (s.out.data) ++t.data;
    if (s.out.header || s.out.data) t.cycles = s.out.cycle + 1;
    sink(s.out);
  }
  return t;
}

template <arrival_range R>
constexpr auto as_span(const R& r) noexcept {
  using A = std::remove_cv_t<std::ranges::range_value_t<R>>;
  return std::span<const A>(std::ranges::data(r), std::ranges::size(r));
}

}  // namespace detail

// Runs a workload through one split port with Depth-entry queues per class. `sink` sees every
// simulated cycle in order (a `trace<N>`, or any callable taking `const cycle_out&`); the run is
// noexcept when the sink is.
template <std::size_t Depth, arrival_range R, class Sink = no_sink>
constexpr split_report run_split(const R& arrivals, Sink&& sink = Sink{}) noexcept(
    std::is_nothrow_invocable_v<Sink&, const cycle_out&>) {
  using A = std::remove_cv_t<std::ranges::range_value_t<R>>;
  constexpr std::size_t max_beats = A::max_beats;
  const auto t = detail::drive(split_port<max_beats, Depth>{}, detail::as_span(arrivals), sink);
  return split_report{t.error, t.transactions, t.cycles, t.header, t.data};
}

// The same workload on the shared-path baseline.
template <std::size_t Depth, arrival_range R, class Sink = no_sink>
constexpr shared_report run_shared(const R& arrivals, Sink&& sink = Sink{}) noexcept(
    std::is_nothrow_invocable_v<Sink&, const cycle_out&>) {
  using A = std::remove_cv_t<std::ranges::range_value_t<R>>;
  constexpr std::size_t max_beats = A::max_beats;
  const auto t = detail::drive(shared_port<max_beats, Depth>{}, detail::as_span(arrivals), sink);
  return shared_report{t.error, t.transactions, t.cycles, t.header + t.data};
}

struct comparison {
  split_report split{};
  shared_report shared{};

  // How many times faster the split port drains the workload (002 "improving throughput and
  // avoiding additional clock cycles").
  constexpr double speedup() const noexcept { return ratio(shared.cycles, split.cycles); }
};

template <std::size_t Depth, arrival_range R>
constexpr comparison compare(const R& arrivals) noexcept {
  return comparison{run_split<Depth>(arrivals), run_shared<Depth>(arrivals)};
}

// ---- far side: merge --------------------------------------------------------------------------

// Per-class transaction lists, as the transmit buffers of FIG. 5 hold them (Tx Req Buf holds
// both request classes; here each class keeps its own list so order per class can be checked).
template <std::size_t MaxBeats, std::size_t Capacity>
struct merged {
  errc error = errc::none;
  std::size_t header_index = 0;  // header flit where merging stopped; all of them on success
  std::array<std::array<transaction<MaxBeats>, Capacity>, class_count> tx{};
  std::array<std::size_t, class_count> count{};

  constexpr std::span<const transaction<MaxBeats>> of(tx_class c) const noexcept {
    return {tx[index(c)].data(), count[index(c)]};
  }
};

// Re-associates headers with data at the receiving port (002 FIG. 5, fabric demux: "combines the
// header information with the data"). Because a payload holds the data path from its SOP to its
// last beat and its SOP leaves with its header, the data path carries whole payloads in the order
// of the data-carrying headers: the k-th such header owns the k-th run of beats, whatever the
// cycle alignment of the two streams. Works equally on the shared path's flits.
template <std::size_t MaxBeats, std::size_t Capacity>
constexpr merged<MaxBeats, Capacity> merge(std::span<const header_flit> headers,
                                           std::span<const data_flit> data) noexcept {
  merged<MaxBeats, Capacity> m{};
  std::size_t d = 0;
  for (std::size_t h = 0; h < headers.size(); ++h) {
    m.header_index = h;
    const header_flit& hf = headers[h];
    transaction<MaxBeats> t{};
    t.cls = hf.cls;
    t.id = hf.id;
    t.beats = hf.beats;
    if (const errc e = check(t); e != errc::none) {
      m.error = e;
      return m;
    }
    auto& n = m.count[index(hf.cls)];
    if (n == Capacity) {
      m.error = errc::no_space;
      return m;
    }
    for (std::size_t k = 0; k < hf.beats; ++k) {
      if (d == data.size()) {
        m.error = errc::missing_data;
        return m;
      }
      const data_flit& df = data[d++];
      if (df.last != (k + 1 == hf.beats)) {
        m.error = errc::bad_length;
        return m;
      }
      t.data[k] = df.value;
    }
    m.tx[index(hf.cls)][n++] = t;
  }
  m.header_index = headers.size();
  if (d != data.size()) m.error = errc::stray_data;
  return m;
}

}  // namespace scaleup::pack::split
