// The printers' writer: a frame's many short pieces of text gathered on the stack, or written
// where a direct sink keeps its bytes, so that the sink sees a few large writes.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "scaleup/dissect/address_text.hpp"
#include "scaleup/dissect/text_format.hpp"
#include "scaleup/wire/bits.hpp"

namespace scaleup::dissect {

// A sink that the printers write into in place: reserve(n) gives room for n bytes, commit(end)
// says how far they were written. Text then goes once to where it is kept (the tools' output
// buffers are such sinks); any other sink gets it a few kilobytes at a time through a buffer of
// the printer's.
template <class Out>
concept direct_sink = requires(Out& o, std::size_t n, char* p) {
  { o.reserve(n) } -> std::same_as<char*>;
  o.commit(p);
};

namespace detail {

// Collects a frame's output in a local buffer: the many short pieces of a JSON object become
// copies, and the sink sees a few large writes (a frame of random commands is ~1.6 KB of JSON
// in hundreds of pieces). Into a direct_sink, the pieces are written where the sink keeps them.
template <class Out>
class chunked {
 public:
  static constexpr std::size_t capacity = 4096;

  // One byte stored, not 4 KB cleared: GCC 12 (-O1, sanitizers) otherwise warns that flush()
  // may pass the sink bytes never written, not seeing that p_ marks the written ones.
  explicit chunked(Out& out) noexcept : out_(out) { buf_[0] = '\0'; }
  chunked(const chunked&) = delete;
  chunked& operator=(const chunked&) = delete;
  ~chunked() { flush(); }

  void operator()(std::string_view s) {
    if constexpr (!direct_sink<Out>) {
      if (s.size() > capacity) {
        flush();
        out_(s);
        return;
      }
    }
    char* const p = room(s.size());
    copy(p, s.data(), s.size());
    commit(p + s.size());
  }

  void put(char c) {
    if (p_ == end_) refill(1);
    *p_++ = c;
  }

  SCALEUP_ALWAYS_INLINE void number(std::uint64_t v) {
    if (v < 10) return put(static_cast<char>('0' + v));  // flags and small counts: most fields
    commit(digits(room(max_digits), v));
  }

  // v in decimal at p (room for max_digits); returns the end.
  static constexpr std::size_t max_digits = 20;
  SCALEUP_ALWAYS_INLINE static char* digits(char* p, std::uint64_t v) noexcept {
    if (v < 10) {
      *p = static_cast<char>('0' + v);
      return p + 1;
    }
    if (v < 100'000'000) return short_digits(p, static_cast<std::uint32_t>(v));
    // Longer (a command's 64-bit address, a checksum): eight digits at a time from the right.
    constexpr std::uint64_t e8 = 100'000'000;
    const auto low = static_cast<std::uint32_t>(v % e8);
    v /= e8;
    if (v < e8) {
      p = short_digits(p, static_cast<std::uint32_t>(v));
    } else {
      p = short_digits(p, static_cast<std::uint32_t>(v / e8));
      p = eight_digits(p, static_cast<std::uint32_t>(v % e8));
    }
    return eight_digits(p, low);
  }

  // An IPv4 address and a MAC address as text, written in place (not piece by piece through
  // the sink): every frame over IP has four of them. ipv4_at stores one byte past its text.
  void ipv4(std::uint32_t a) { commit(ipv4_at(room(16), a)); }
  void mac(std::uint64_t v) { commit(mac_at(room(17), v)); }

  // `,"s":` (no comma when first) for a display-filter name (wire::is_filter_name), which has
  // nothing to escape: the name of a field's member, copied as it is.
  SCALEUP_ALWAYS_INLINE void name(std::string_view s, bool first) {
    if (s.size() + 4 > capacity) return key(s, first);  // no name is that long: a profile's could
    commit(name_at(room(s.size() + 4), s, first));
  }
  // The same at p (room for s.size() + 4); returns the end.
  SCALEUP_ALWAYS_INLINE static char* name_at(char* p, std::string_view s, bool first) noexcept {
    *p = ',';
    p += first ? 0 : 1;
    *p++ = '"';
    copy(p, s.data(), s.size());
    p += s.size();
    p[0] = '"';
    p[1] = ':';
    return p + 2;
  }

  // The write position and the end of the room, for a loop that writes many short pieces
  // through a pointer of its own (put_json_picked): kept in a register, where p_ is stored and
  // loaded again around every piece (the bytes are char stores, which may change any member),
  // a chain through memory of a few cycles a piece. room(k) and commit() as before; end() is
  // where the room given by the last room() ends.
  char* end() const noexcept { return end_; }

  // `s` in quotes; a string that needs escapes goes the general way.
  void quoted(std::string_view s) {
    if (s.size() + 2 <= capacity) {
      char* const p = room(s.size() + 2);
      *p = '"';
      if (copy_plain(p + 1, s)) {
        p[s.size() + 1] = '"';
        return commit(p + s.size() + 2);
      }
    }
    put_json_string(*this, s);
  }

  // `,"s":` (no comma when first): the name of a member.
  void key(std::string_view s, bool first) {
    if (s.size() + 4 <= capacity) {
      char* p = room(s.size() + 4);
      if (!first) *p++ = ',';
      *p++ = '"';
      if (copy_plain(p, s)) {
        p += s.size();
        p[0] = '"';
        p[1] = ':';
        return commit(p + 2);
      }
    }
    if (!first) put(',');
    put_json_string(*this, s);
    put(':');
  }

  // Hands what is written to the sink (a direct one has it already: this says how far).
  void flush() {
    if constexpr (direct_sink<Out>) {
      if (p_) out_.commit(p_);
      p_ = end_ = nullptr;
    } else {
      if (p_ != buf_.data())
        out_(std::string_view(buf_.data(), static_cast<std::size_t>(p_ - buf_.data())));
      p_ = buf_.data();
    }
  }

  // Room for k bytes at the write position: the window [p_, end_) of the buffer, or of the
  // direct sink's own memory, a block at a time; commit(end) after writing them. k is at most
  // `capacity` (the callers see to it).
  SCALEUP_ALWAYS_INLINE char* room(std::size_t k) {
    if (static_cast<std::size_t>(end_ - p_) < k) refill(k);
    return p_;
  }
  SCALEUP_ALWAYS_INLINE void commit(char* end) { p_ = end; }

 private:
  SCALEUP_COLD void refill(std::size_t k) {
    flush();
    if constexpr (direct_sink<Out>) {
      const std::size_t block = k > capacity ? k : capacity;
      p_ = out_.reserve(block);
      end_ = p_ + block;
    } else {
      end_ = buf_.data() + capacity;
    }
  }

  // n bytes from q to p, without a call for the short pieces a frame is made of.
  SCALEUP_ALWAYS_INLINE static void copy(char* p, const char* q, std::size_t n) noexcept {
    wire::copy_short(p, q, n);
  }

  // Copies `s` to `p`, or returns false when it needs an escape (a control character, '"' or
  // '\\'). Eight bytes at a time: the names are mostly longer than that, and checking them a
  // byte at a time cost more than the rest of a member.
  static bool copy_plain(char* p, std::string_view s) noexcept {
    const char* const q = s.data();
    const std::size_t n = s.size();
    if (n < 8) {
      if (n >= 4) {  // a command's name: the first four bytes and the last four, tested at once
        std::uint32_t a, b;
        std::memcpy(&a, q, 4);
        std::memcpy(&b, q + n - 4, 4);
        if (any_json_special(a | std::uint64_t{b} << 32)) return false;
        std::memcpy(p, &a, 4);
        std::memcpy(p + n - 4, &b, 4);
        return true;
      }
      for (std::size_t i = 0; i < n; ++i) {
        const auto c = static_cast<unsigned char>(q[i]);
        if (c < 0x20 || c == '"' || c == '\\') return false;
        p[i] = q[i];
      }
      return true;
    }
    std::uint64_t w = 0;
    for (std::size_t i = 0; i + 8 < n; i += 8) {
      std::memcpy(&w, q + i, 8);
      if (any_json_special(w)) return false;
      std::memcpy(p + i, &w, 8);
    }
    std::memcpy(&w, q + n - 8, 8);  // the last eight, overlapping the words before
    if (any_json_special(w)) return false;
    std::memcpy(p + n - 8, &w, 8);
    return true;
  }

  // x (below 10^8) in as many digits as it takes; returns their end. The length by compares,
  // then two digits at a time from the right.
  SCALEUP_ALWAYS_INLINE static char* short_digits(char* p, std::uint32_t x) noexcept {
    const std::size_t n = x < 10           ? 1
                          : x < 100        ? 2
                          : x < 1'000      ? 3
                          : x < 10'000     ? 4
                          : x < 100'000    ? 5
                          : x < 1'000'000  ? 6
                          : x < 10'000'000 ? 7
                                           : 8;
    std::size_t i = n;
    for (; x >= 100; x /= 100, i -= 2) std::memcpy(p + i - 2, pairs + 2 * (x % 100), 2);
    if (x >= 10)
      std::memcpy(p, pairs + 2 * x, 2);
    else
      p[0] = static_cast<char>('0' + x);
    return p + n;
  }
  // x (below 10^8) in exactly eight digits: two groups of four, which do not wait on each other.
  static char* eight_digits(char* p, std::uint32_t x) noexcept {
    four_digits(p, x / 10'000);
    four_digits(p + 4, x % 10'000);
    return p + 8;
  }

  static constexpr const char* pairs = digit_pairs;

  Out& out_;
  std::array<char, capacity> buf_;  // for a sink that is not direct
  char* p_ = direct_sink<Out> ? nullptr : buf_.data();
  char* end_ = direct_sink<Out> ? nullptr : buf_.data() + capacity;
};

// The number and time writers of text_format.hpp, straight into a frame's buffer.
template <class Out>
void put_uint(chunked<Out>& w, std::uint64_t v) {
  w.number(v);
}
template <class Out>
void put_seconds(chunked<Out>& w, std::int64_t ns, unsigned digits) {
  w.commit(seconds_text(w.room(32), ns, digits));
}

}  // namespace detail
}  // namespace scaleup::dissect
