// IP reassembly: fragments of IPv4 (RFC 791 3.2) and IPv6 (RFC 8200 4.5) datagrams, as
// read_frame reports them (received_frame::fragment), joined back into whole datagrams in
// bounded memory. No heap, no clock: the caller gives each fragment's time in nanoseconds.
//
// The rules (docs/wire-format.md, "IP reassembly"):
// - A datagram is keyed as its version says: IPv4 (source, destination, protocol, id), IPv6
//   (source, destination, id). Fragments may come in any order.
// - A fragment wholly inside bytes already held is a duplicate and ignored; one that overlaps
//   held bytes only in part abandons its datagram: RFC 5722 (errata 3089) for IPv6, and what
//   Linux does for both versions (inet_frag_queue_insert: IPFRAG_DUP, IPFRAG_OVERLAP).
// - A fragment other than the last must carry a multiple of 8 bytes (RFC 8200 4.5; RFC 791
//   offsets count 8-byte units); a datagram may not exceed 65535 bytes (IPv4 total length,
//   IPv6 payload length); a last fragment that disagrees with the length already known
//   abandons the datagram (Linux ip_frag_queue).
// - The reassembled datagram takes the unfragmentable part of the fragment at offset 0 (RFC 791
//   3.2, RFC 8200 4.5) with its fragment fields cleared and its lengths (and IPv4 checksum)
//   made right, then the payload: read it with read_frame on link_ipv4 or link_ipv6.
// - Limits (reassembly_limits): pending datagrams, bytes held, age since a datagram's first
//   fragment, fragments per datagram. A limit hit drops the oldest datagram (or, for the
//   fragment limit, the one that hit it); each drop is reported with the datagram it dropped,
//   and counted.
#pragma once

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "scaleup/wire/checksum.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"
#include "scaleup/wire/ip.hpp"
#include "scaleup/wire/ip_fragment.hpp"

namespace scaleup::wire {

// The largest datagram: IPv4 total length, IPv6 payload length (jumbograms not read).
inline constexpr std::size_t max_datagram = 65535;
// The longest unfragmentable part kept: an IPv4 header with 40 bytes of options.
inline constexpr std::size_t max_unfragmentable = 60;

struct reassembly_limits {
  std::size_t datagrams = 64;  // pending at once (the reassembler's capacity at most)
  std::size_t bytes = std::size_t{4}
                      << 20;  // fragment bytes held, all datagrams (Linux ipfrag_high_thresh)
  std::int64_t age_ns = 30'000'000'000;  // since a datagram's first fragment (Linux ipfrag_time)
};

// Why a datagram was given up.
enum class reassembly_drop : std::uint8_t {
  datagrams,  // the limit on pending datagrams: the oldest made room for a new one
  bytes,      // the limit on bytes held: the oldest made room for a fragment
  age,        // older than the age limit
  fragments,  // more fragments than a datagram may have
  overlap,    // a fragment overlapped held bytes in part
  length,     // the fragments disagree on the datagram's length, or it exceeds 65535 bytes
};

inline constexpr std::array<std::string_view, 6> reassembly_drop_names{
    "datagrams", "bytes", "age", "fragments", "overlap", "length"};

// The message of each, as the report's error says it.
inline constexpr std::array<std::string_view, reassembly_drop_names.size()> reassembly_drop_what{
    "reassembly limit on pending datagrams hit: the oldest datagram given up",
    "reassembly limit on bytes held hit: the oldest datagram given up",
    "reassembly age limit passed: datagram given up",
    "reassembly limit on fragments per datagram hit: datagram given up",
    "fragment overlaps held bytes in part: datagram given up (RFC 5722)",
    "fragments disagree on the datagram's length, or it exceeds 65535 bytes: datagram given up",
};

constexpr std::string_view to_string(reassembly_drop d) noexcept {
  return reassembly_drop_names[static_cast<std::size_t>(d)];
}

// A datagram given up, and why; `problem` is the same as an error value (layer "ip" or "ipv6",
// the id as the value).
struct reassembly_report {
  reassembly_drop why = reassembly_drop::datagrams;
  datagram_key key{};
  std::uint64_t first_frame = 0;  // the frame its first fragment came in
  std::size_t bytes = 0;          // fragment bytes it held
  error problem{};
};

// Running totals since construction.
struct reassembly_counters {
  std::uint64_t fragments = 0;   // pushed
  std::uint64_t completed = 0;   // datagrams reassembled
  std::uint64_t duplicates = 0;  // fragments ignored as duplicates
  std::uint64_t rejected = 0;    // fragments refused on their own (cut short, empty, misaligned)
  std::array<std::uint64_t, reassembly_drop_names.size()> dropped{};  // datagrams, by why
};

// Where a fragment of a datagram came from.
struct fragment_ref {
  std::uint64_t frame = 0;
  std::uint32_t offset = 0;  // in the datagram's payload
  std::uint32_t length = 0;
};

// What became of one fragment.
enum class fragment_state : std::uint8_t {
  held,       // kept: its datagram is not complete yet
  complete,   // it completed its datagram: see reassembly_result::datagram
  duplicate,  // its bytes were held already: ignored
  rejected,   // refused (cut short, empty, misaligned, or its datagram was given up)
};

struct reassembly_result {
  static constexpr std::size_t max_reports = 8;
  fragment_state state = fragment_state::held;
  // complete: the datagram, header first (valid until the next call), and where its pieces
  // came from, in offset order.
  bytes datagram{};
  bool v6 = false;
  std::span<const fragment_ref> fragments{};
  // held: how many fragments and bytes its datagram now has.
  std::size_t held_fragments = 0;
  std::size_t held_bytes = 0;
  // rejected on its own: why (the datagram, if given up, is in reports).
  error problem{};
  // Datagrams given up during this call (limits, overlap, length), the first max_reports;
  // `overflow`: more were (the counters have them all).
  std::array<reassembly_report, max_reports> reports{};
  std::size_t report_count = 0;
  bool overflow = false;

  constexpr std::span<const reassembly_report> report_list() const noexcept {
    return {reports.data(), report_count};
  }
};

// Up to `Slots` datagrams pending, each of up to `MaxFragments` fragments. All storage is in the
// object (about Slots x 64 KiB): give it static storage.
template <std::size_t Slots = 64, std::size_t MaxFragments = 64>
class ip_reassembler {
 public:
  using result = reassembly_result;

  constexpr explicit ip_reassembler(reassembly_limits l = {}) noexcept : limits_(l) {
    limits_.datagrams = std::clamp<std::size_t>(limits_.datagrams, 1, Slots);
  }

  constexpr const reassembly_limits& limits() const noexcept { return limits_; }
  constexpr const reassembly_counters& counters() const noexcept { return counters_; }
  constexpr std::size_t pending() const noexcept {
    std::size_t n = 0;
    for (const auto& s : slots_) n += s.used;
    return n;
  }
  constexpr std::size_t bytes_held() const noexcept { return held_; }

  // As built, in place (a reassembler is large: kept static, it is reset rather than replaced
  // when a tool reads a capture a second time).
  constexpr void reset() noexcept {
    for (auto& s : slots_) release(s);
    counters_ = {};
  }

  // One fragment, from frame `frame` at time `now_ns`. Datagrams older than the age limit are
  // given up first.
  constexpr const result& push(const ip_fragment& f, std::uint64_t frame,
                               std::int64_t now_ns) noexcept {
    r_ = result{};
    r_.v6 = f.key.v6;
    ++counters_.fragments;
    expire_old(now_ns);
    const std::string_view layer = f.key.v6 ? "ipv6" : "ip";
    const std::string_view id_field = f.key.v6 ? "ipv6.fraghdr.ident" : "ip.id";
    const auto reject = [&](std::string_view what) -> const result& {
      ++counters_.rejected;
      r_.state = fragment_state::rejected;
      r_.problem = error{.code = errc::bad_length,
                         .layer = layer,
                         .what = what,
                         .field = id_field,
                         .value = f.key.id};
      return r_;
    };
    if (!f.whole) return reject("fragment cut short by the capture: not reassembled");
    if (f.data.empty()) return reject("fragment without data: ignored");
    if (f.more && f.data.size() % 8 != 0)
      return reject("fragment other than the last not a multiple of 8 bytes: ignored");
    const std::size_t end = f.offset + f.data.size();

    slot* s = find(f.key);
    if (s) {
      // Bytes already held: wholly (a duplicate) or in part (an overlap).
      std::size_t covered = 0;
      for (std::size_t i = 0; i < s->count; ++i) {
        const std::size_t lo = std::max<std::size_t>(s->frags[i].offset, f.offset);
        const std::size_t hi = std::min<std::size_t>(s->frags[i].offset + s->frags[i].length, end);
        if (lo < hi) covered += hi - lo;
      }
      if (covered == f.data.size()) {
        ++counters_.duplicates;
        r_.state = fragment_state::duplicate;
        r_.held_fragments = s->count;
        r_.held_bytes = s->bytes;
        return r_;
      }
      if (covered > 0) return give_up_now(*s, reassembly_drop::overlap);
    }
    // The datagram's length: what the last fragment says, never over 65535 bytes.
    const std::size_t header = f.key.v6 ? 0 : f.header.size();
    if (header + end > max_datagram || f.header.size() > max_unfragmentable) {
      if (s) return give_up_now(*s, reassembly_drop::length);
      return reject("fragment past the largest datagram (65535 bytes): ignored");
    }
    if (s && ((s->total && (end > s->total || (!f.more && end != s->total))) ||
              (!f.more && end < s->highest))) {
      return give_up_now(*s, reassembly_drop::length);
    }
    if (!s) {
      if (pending() == limits_.datagrams) drop_oldest(reassembly_drop::datagrams, nullptr);
      s = take_free();
      s->used = true;
      s->key = f.key;
      s->first_frame = frame;
      s->first_ns = now_ns;
    }
    if (s->count == MaxFragments) return give_up_now(*s, reassembly_drop::fragments);
    // Room for its bytes: the oldest other datagrams go first, then its own.
    while (held_ + f.data.size() > limits_.bytes) {
      if (!drop_oldest(reassembly_drop::bytes, s)) return give_up_now(*s, reassembly_drop::bytes);
    }
    insert(*s, f, frame);
    if (!f.more) s->total = end;
    s->highest = std::max(s->highest, end);
    // Complete: the last fragment and the first are in, and (no overlaps) every byte between.
    if (!s->has_first || s->total == 0 || s->bytes != s->total) {
      r_.held_fragments = s->count;
      r_.held_bytes = s->bytes;
      return r_;
    }
    // The first fragment's header (options and all) decides the IPv4 total length.
    if (!s->key.v6 && s->header_size + s->total > max_datagram)
      return give_up_now(*s, reassembly_drop::length);
    complete(*s);
    return r_;
  }

  // Gives up every datagram older than the age limit at `now_ns` (push does this first);
  // reported in the returned result.
  constexpr const result& expire(std::int64_t now_ns) noexcept {
    r_ = result{};
    expire_old(now_ns);
    return r_;
  }

 private:
  struct slot {
    bool used = false;
    bool has_first = false;  // the fragment at offset 0 is in: the header is known
    datagram_key key{};
    std::uint64_t first_frame = 0;
    std::int64_t first_ns = 0;
    std::size_t total = 0;    // payload length, once the last fragment is in
    std::size_t highest = 0;  // the end of the furthest fragment
    std::size_t bytes = 0;    // held
    std::size_t count = 0;
    std::array<fragment_ref, MaxFragments> frags{};  // by offset, no overlap
    std::size_t header_size = 0;
    std::uint8_t next_header = 0;
    std::array<std::uint8_t, max_unfragmentable> header{};
    std::array<std::uint8_t, max_datagram> data{};
  };

  constexpr slot* find(const datagram_key& k) noexcept {
    for (auto& s : slots_)
      if (s.used && s.key == k) return &s;
    return nullptr;
  }

  constexpr slot* take_free() noexcept {
    for (auto& s : slots_)
      if (!s.used) return &s;
    return nullptr;  // not reached: a slot was freed when all were in use
  }

  constexpr void report(const slot& s, reassembly_drop why) noexcept {
    ++counters_.dropped[static_cast<std::size_t>(why)];
    if (r_.report_count == r_.reports.size()) {
      r_.overflow = true;
      return;
    }
    r_.reports[r_.report_count++] = reassembly_report{
        .why = why,
        .key = s.key,
        .first_frame = s.first_frame,
        .bytes = s.bytes,
        .problem = error{.code = why == reassembly_drop::overlap || why == reassembly_drop::length
                                     ? errc::bad_value
                                     : errc::no_space,
                         .layer = s.key.v6 ? "ipv6" : "ip",
                         .what = reassembly_drop_what[static_cast<std::size_t>(why)],
                         .field = s.key.v6 ? "ipv6.fraghdr.ident" : "ip.id",
                         .value = s.key.id,
                         .level = severity::warning}};
  }

  constexpr void release(slot& s) noexcept {
    held_ -= s.bytes;
    s.used = false;
    s.has_first = false;
    s.total = s.highest = s.bytes = s.count = s.header_size = 0;
  }

  constexpr const result& give_up_now(slot& s, reassembly_drop why) noexcept {
    report(s, why);
    release(s);
    r_.state = fragment_state::rejected;
    if (r_.report_count) r_.problem = r_.reports[r_.report_count - 1].problem;
    return r_;
  }

  // The oldest pending datagram other than `keep`, given up; false when there is none.
  constexpr bool drop_oldest(reassembly_drop why, const slot* keep) noexcept {
    slot* oldest = nullptr;
    for (auto& s : slots_)
      if (s.used && &s != keep &&
          (!oldest || s.first_ns < oldest->first_ns ||
           (s.first_ns == oldest->first_ns && s.first_frame < oldest->first_frame)))
        oldest = &s;
    if (!oldest) return false;
    report(*oldest, why);
    release(*oldest);
    return true;
  }

  constexpr void expire_old(std::int64_t now_ns) noexcept {
    for (auto& s : slots_)
      if (s.used && now_ns - s.first_ns > limits_.age_ns) {
        report(s, reassembly_drop::age);
        release(s);
      }
  }

  constexpr void insert(slot& s, const ip_fragment& f, std::uint64_t frame) noexcept {
    std::size_t at = 0;
    while (at < s.count && s.frags[at].offset < f.offset) ++at;
    for (std::size_t i = s.count; i > at; --i) s.frags[i] = s.frags[i - 1];
    s.frags[at] = fragment_ref{frame, static_cast<std::uint32_t>(f.offset),
                               static_cast<std::uint32_t>(f.data.size())};
    ++s.count;
    std::copy(f.data.begin(), f.data.end(), s.data.begin() + static_cast<std::ptrdiff_t>(f.offset));
    s.bytes += f.data.size();
    held_ += f.data.size();
    if (f.offset == 0) {
      s.has_first = true;
      s.header_size = f.header.size();
      s.next_header = f.next_header;
      std::copy(f.header.begin(), f.header.end(), s.header.begin());
    }
  }

  // The whole datagram into out_: the first fragment's header, fragment fields cleared and
  // lengths set, then the payload.
  constexpr void complete(slot& s) noexcept {
    const std::size_t h = s.header_size;
    std::copy_n(s.header.begin(), h, out_.begin());
    const auto put16 = [&](std::size_t at, std::size_t v) {
      out_[at] = static_cast<std::uint8_t>(v >> 8);
      out_[at + 1] = static_cast<std::uint8_t>(v);
    };
    if (s.key.v6) {
      put16(4, s.total);        // payload length (RFC 8200 3)
      out_[6] = s.next_header;  // the Fragment header's next header takes its place
    } else {
      put16(2, h + s.total);  // total length (RFC 791)
      out_[6] = static_cast<std::uint8_t>(out_[6] & 0x40 /* DF kept; MF and offset cleared */);
      out_[7] = 0;
      put16(10, 0);
      put16(10, ones_sum{}.add(bytes(out_.data(), h)).checksum());
    }
    std::copy_n(s.data.begin(), s.total, out_.begin() + static_cast<std::ptrdiff_t>(h));
    std::copy_n(s.frags.begin(), s.count, done_.begin());
    r_.state = fragment_state::complete;
    r_.datagram = bytes(out_.data(), h + s.total);
    r_.fragments = std::span<const fragment_ref>(done_.data(), s.count);
    ++counters_.completed;
    release(s);
  }

  reassembly_limits limits_;
  reassembly_counters counters_{};
  std::size_t held_ = 0;
  std::array<slot, Slots> slots_{};
  std::array<std::uint8_t, max_unfragmentable + max_datagram> out_{};
  std::array<fragment_ref, MaxFragments> done_{};
  result r_{};
};

}  // namespace scaleup::wire
