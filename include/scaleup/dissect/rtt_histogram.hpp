// A log-linear histogram of durations (HDR histogram style), for the ACK RTT percentiles of the
// sequence analysis (analysis.hpp): its size is fixed whatever the number of samples, so
// `scaleup stats` holds one per connection instead of every RTT of the capture, and its memory does
// not grow with the capture.
//
// Buckets: values below 2^(S+1) each have their own (exact); above, every power of two
// [2^e, 2^(e+1)) is cut into 2^S buckets of width 2^(e-S). A percentile is read as the middle of
// the bucket its rank falls in, so it is off by at most half a bucket width: at most 1/2^(S+1)
// of the true value (S = 7: 1/256, 0.39 %), exactly 0 below 2^(S+1) ns. The count, the minimum
// and the maximum are exact, and so are the lowest and the highest rank (p0 and p100).
// Two histograms merge exactly (bucket by bucket), which is how totals over connections are
// made. No heap: 2^S x (65 - S) counters in a std::array (S = 7: 7424 x 8 bytes, 58 KiB). An
// empty histogram is all zero bytes.
//
// The seeds say nothing of how a capture tool reports RTTs: this is the product's choice,
// recorded in docs/wire-format.md ("stats --json").
#pragma once

#include "scaleup/wire/version.hpp"  // first: stops an older standard with a clear message

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <utility>

namespace scaleup::dissect {

template <unsigned SubBits>
class sparse_log_linear_histogram;

template <unsigned SubBits>
class log_linear_histogram {
  static_assert(SubBits >= 1 && SubBits <= 16, "2 to 65536 buckets per power of two");

 public:
  static constexpr unsigned sub_bits = SubBits;
  static constexpr std::uint64_t sub_count = std::uint64_t{1} << SubBits;
  // Group 0 holds [0, 2^S) one value per bucket; group g >= 1 holds [2^(S+g-1), 2^(S+g)).
  static constexpr std::size_t bucket_count = (64 - SubBits + 1) * sub_count;
  // The largest error of a percentile, as a fraction of the true value.
  static constexpr double relative_error = 1.0 / static_cast<double>(2 * sub_count);

  static constexpr std::size_t bucket_of(std::uint64_t v) noexcept {
    if (v < sub_count) return static_cast<std::size_t>(v);
    const unsigned e = static_cast<unsigned>(std::bit_width(v)) - 1;  // e >= S
    const std::uint64_t mantissa = (v >> (e - SubBits)) - sub_count;  // [0, 2^S)
    return static_cast<std::size_t>((e - SubBits + 1) * sub_count + mantissa);
  }
  // The values bucket b holds: [lowest(b), lowest(b) + width(b)).
  static constexpr std::uint64_t lowest(std::size_t b) noexcept {
    const std::uint64_t group = b / sub_count, mantissa = b % sub_count;
    if (group == 0) return mantissa;
    return (sub_count + mantissa) << (group - 1);
  }
  static constexpr std::uint64_t width(std::size_t b) noexcept {
    const std::uint64_t group = b / sub_count;
    return group <= 1 ? 1 : std::uint64_t{1} << (group - 1);
  }

  // A negative duration (time stamps that go backwards) counts as 0 in the buckets; min() keeps
  // it as it was.
  constexpr void add(std::int64_t v) noexcept {
    const std::size_t b = bucket_of(v < 0 ? 0 : static_cast<std::uint64_t>(v));
    ++counts_[b];
    min_ = count_ == 0 ? v : std::min(min_, v);
    max_ = count_ == 0 ? v : std::max(max_, v);
    low_ = count_ == 0 ? b : std::min(low_, b);
    high_ = count_ == 0 ? b : std::max(high_, b);
    ++count_;
  }

  constexpr void merge(const log_linear_histogram& o) noexcept {
    if (o.count_ == 0) return;
    for (std::size_t i = o.low_; i <= o.high_; ++i) counts_[i] += o.counts_[i];
    min_ = count_ == 0 ? o.min_ : std::min(min_, o.min_);
    max_ = count_ == 0 ? o.max_ : std::max(max_, o.max_);
    low_ = count_ == 0 ? o.low_ : std::min(low_, o.low_);
    high_ = count_ == 0 ? o.high_ : std::max(high_, o.high_);
    count_ += o.count_;
  }

  constexpr std::uint64_t count() const noexcept { return count_; }
  constexpr std::int64_t min() const noexcept { return min_; }  // 0 when empty
  constexpr std::int64_t max() const noexcept { return max_; }

  // The nearest-rank percentile `part` of `whole` (50 of 100: the median): the sample of rank
  // ceil(count x part / whole), as the middle of its bucket (within relative_error of it),
  // never outside [min, max]. 0 when empty.
  constexpr std::int64_t percentile(std::uint64_t part, std::uint64_t whole = 100) const noexcept {
    if (count_ == 0) return 0;
    const std::uint64_t want = std::max<std::uint64_t>(1, (count_ * part + whole - 1) / whole);
    if (want <= 1) return min_;
    if (want >= count_) return max_;
    std::uint64_t seen = 0;
    std::size_t b = low_;
    while (seen + counts_[b] < want) seen += counts_[b++];
    const std::uint64_t middle = lowest(b) + width(b) / 2;
    const auto mid = middle > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                         ? std::numeric_limits<std::int64_t>::max()
                         : static_cast<std::int64_t>(middle);
    return std::clamp(mid, min_, max_);
  }

  // A sparse histogram's samples (the same buckets), added exactly.
  constexpr void merge(const sparse_log_linear_histogram<SubBits>& o) noexcept {
    o.merge_into(*this);
  }

 private:
  friend class sparse_log_linear_histogram<SubBits>;
  std::array<std::uint64_t, bucket_count> counts_{};
  std::uint64_t count_ = 0;
  std::int64_t min_ = 0, max_ = 0;
  // Every sample is in buckets [low_, high_] (when count_ > 0): merging and reading walk only
  // those, so the buckets of a histogram never used are never touched, not even read.
  std::size_t low_ = 0, high_ = 0;
};

// The same histogram with only the buckets used kept, in one allocation: a connection's ACK RTTs
// (analysis.hpp). The dense one is 58 KiB, of which a single sample touches two pages (8 KiB of
// resident memory for a connection that saw one ACK: 8 GB for a million); this one keeps its
// first sample in a word of its own and costs no heap until the second, then 32 bytes and 8 a
// bucket used. The same buckets, so the same answers (percentiles, merge). Beyond sparse_most
// buckets it turns into the dense histogram (by then at most 116 bytes a sample): an insertion
// moves at most sparse_most entries, so a crafted series of RTTs costs at most that much per
// sample, never the square of the samples.
template <unsigned SubBits>
class sparse_log_linear_histogram {
  using dense_type = log_linear_histogram<SubBits>;

 public:
  static constexpr std::size_t sparse_most = 512;

  sparse_log_linear_histogram() = default;
  sparse_log_linear_histogram(sparse_log_linear_histogram&& o) noexcept
      : block_(std::move(o.block_)), one_(std::exchange(o.one_, 0)) {}
  sparse_log_linear_histogram& operator=(sparse_log_linear_histogram&& o) noexcept {
    if (this != &o) {
      delete dense();
      block_ = std::move(o.block_);
      one_ = std::exchange(o.one_, 0);
    }
    return *this;
  }
  ~sparse_log_linear_histogram() { delete dense(); }

  void add(std::int64_t v) {
    if (dense_type* d = dense()) return d->add(v);
    if (!block_) {
      if (one_ == 0 && v != std::numeric_limits<std::int64_t>::min()) {
        one_ = bits(v) ^ sign;
        return;
      }
      if (one_ != 0) add_to_block(sole());
      one_ = 0;
    }
    add_to_block(v);
  }

  std::uint64_t count() const noexcept {
    if (const dense_type* d = dense()) return d->count();
    return block_ ? block_[1] : static_cast<std::uint64_t>(one_ != 0);
  }
  std::int64_t min() const noexcept {
    if (const dense_type* d = dense()) return d->min();
    return block_ ? value(block_[2]) : one_ != 0 ? sole() : 0;
  }
  std::int64_t max() const noexcept {
    if (const dense_type* d = dense()) return d->max();
    return block_ ? value(block_[3]) : one_ != 0 ? sole() : 0;
  }

  // As log_linear_histogram::percentile, from the same buckets: the same value.
  std::int64_t percentile(std::uint64_t part, std::uint64_t whole = 100) const noexcept {
    if (const dense_type* d = dense()) return d->percentile(part, whole);
    const std::uint64_t n = count();
    if (n == 0) return 0;
    const std::uint64_t want = std::max<std::uint64_t>(1, (n * part + whole - 1) / whole);
    if (want <= 1) return min();
    if (want >= n) return max();
    std::uint64_t seen = 0;
    for (const std::uint64_t e : std::span(entries(), used())) {
      if (seen + (e & count_mask) < want) {
        seen += e & count_mask;
        continue;
      }
      const auto b = static_cast<std::size_t>(e >> count_bits);
      const std::uint64_t middle = dense_type::lowest(b) + dense_type::width(b) / 2;
      const auto mid = middle > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())
                           ? std::numeric_limits<std::int64_t>::max()
                           : static_cast<std::int64_t>(middle);
      return std::clamp(mid, min(), max());
    }
    return max();
  }

  // The heap it holds, in bytes (what a connection's RTTs cost: docs/robustness.md, "Limits").
  std::size_t heap_bytes() const noexcept {
    if (dense()) return 2 * sizeof(std::uint64_t) + sizeof(dense_type);
    return block_ ? (header + capacity()) * sizeof(std::uint64_t) : 0;
  }
  bool is_dense() const noexcept { return dense() != nullptr; }

 private:
  friend class log_linear_histogram<SubBits>;
  // One allocation: [0] entries used | capacity << 32 (capacity 0: dense, and [1] points to
  // it), [1] count, [2] min, [3] max, then the entries: bucket << count_bits | samples in it.
  static constexpr std::size_t header = 4;
  static constexpr unsigned count_bits = 48;
  static constexpr std::uint64_t count_mask = (std::uint64_t{1} << count_bits) - 1;
  static_assert(dense_type::bucket_count <= (std::uint64_t{1} << (64 - count_bits)));
  static constexpr std::uint64_t sign = std::uint64_t{1} << 63;
  std::unique_ptr<std::uint64_t[]> block_;
  // A sole sample, before there is a block: its bits with the sign bit flipped, 0 for none (the
  // one value that would map to 0, the least int64, goes to the block). Most connections of a
  // short capture see one ACK: a block for it was 48 bytes of heap each.
  std::uint64_t one_ = 0;

  std::int64_t sole() const noexcept { return value(one_ ^ sign); }

  void add_to_block(std::int64_t v) {
    const std::uint64_t b = dense_type::bucket_of(v < 0 ? 0 : static_cast<std::uint64_t>(v));
    if (!block_) grow(1);
    std::uint64_t* e = entries();
    const std::size_t n = used();
    // Entries are sorted by bucket; most samples fall in a bucket already used.
    const std::size_t i = static_cast<std::size_t>(std::lower_bound(e, e + n, b << count_bits) - e);
    if (i == n || (e[i] >> count_bits) != b) {
      if (n == sparse_most) {
        to_dense();
        return dense()->add(v);
      }
      if (n == capacity()) {
        grow(std::min(2 * capacity(), sparse_most));
        e = entries();
      }
      std::copy_backward(e + i, e + n, e + n + 1);
      e[i] = b << count_bits;
      set_used(n + 1);
    }
    ++e[i];
    const std::uint64_t c = block_[1];
    block_[2] = bits(c == 0 ? v : std::min(value(block_[2]), v));
    block_[3] = bits(c == 0 ? v : std::max(value(block_[3]), v));
    block_[1] = c + 1;
  }

  static constexpr std::uint64_t bits(std::int64_t v) noexcept {
    return static_cast<std::uint64_t>(v);
  }
  static constexpr std::int64_t value(std::uint64_t u) noexcept {
    return static_cast<std::int64_t>(u);
  }
  std::size_t used() const noexcept { return static_cast<std::size_t>(block_[0] & 0xFFFFFFFFu); }
  std::size_t capacity() const noexcept { return static_cast<std::size_t>(block_[0] >> 32); }
  void set_used(std::size_t n) noexcept {
    block_[0] = (block_[0] & ~std::uint64_t{0xFFFFFFFFu}) | n;
  }
  std::uint64_t* entries() const noexcept { return block_.get() + header; }
  dense_type* dense() const noexcept {
    if (!block_ || capacity() != 0) return nullptr;
    return std::bit_cast<dense_type*>(block_[1]);
  }

  void grow(std::size_t cap) {
    auto fresh = std::make_unique<std::uint64_t[]>(header + cap);
    if (block_) std::copy(block_.get(), block_.get() + header + used(), fresh.get());
    fresh[0] = (fresh[0] & 0xFFFFFFFFu) | (std::uint64_t{cap} << 32);
    block_ = std::move(fresh);
  }

  void to_dense() {
    auto d = std::make_unique<dense_type>();
    merge_into(*d);
    auto fresh = std::make_unique<std::uint64_t[]>(2);
    fresh[0] = 0;  // capacity 0: dense
    fresh[1] = std::bit_cast<std::uint64_t>(d.release());
    block_ = std::move(fresh);
  }

  void merge_into(dense_type& d) const noexcept {
    if (const dense_type* self = dense()) return d.merge(*self);
    if (!block_) {
      if (one_ != 0) d.add(sole());  // what merging a histogram of it would do
      return;
    }
    const std::uint64_t n = count();
    if (n == 0) return;
    const std::span<const std::uint64_t> es(entries(), used());
    for (const std::uint64_t e : es)
      d.counts_[static_cast<std::size_t>(e >> count_bits)] += e & count_mask;
    const auto lo = static_cast<std::size_t>(es.front() >> count_bits);
    const auto hi = static_cast<std::size_t>(es.back() >> count_bits);
    d.min_ = d.count_ == 0 ? min() : std::min(d.min_, min());
    d.max_ = d.count_ == 0 ? max() : std::max(d.max_, max());
    d.low_ = d.count_ == 0 ? lo : std::min(d.low_, lo);
    d.high_ = d.count_ == 0 ? hi : std::max(d.high_, hi);
    d.count_ += n;
  }
};

// ACK RTTs in nanoseconds, within 0.39 % (see the top of this file).
using rtt_histogram = log_linear_histogram<7>;
// One connection's: the same buckets, kept sparse.
using rtt_record = sparse_log_linear_histogram<7>;

// What `scaleup stats` prints of a histogram. `quantum`: the capture's time resolution in ns
// (1000 for a microsecond capture): percentiles are rounded to a multiple of it, so that no digit
// is shown that the file did not record; a sample that is itself a multiple comes back exact
// when it is below quantum x 2^S (the bucket's half width is then under quantum / 2).
struct rtt_summary {
  std::uint64_t count = 0;
  std::int64_t min = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};

template <class Histogram>
constexpr rtt_summary summarize(const Histogram& h, std::int64_t quantum = 1) noexcept {
  const auto round = [&](std::int64_t v) {
    if (quantum <= 1) return v;
    const std::int64_t r = v >= 0 ? (v + quantum / 2) / quantum : -((-v + quantum / 2) / quantum);
    return std::clamp(r * quantum, h.min(), h.max());
  };
  return {
      h.count(), h.min(), round(h.percentile(50)), round(h.percentile(90)), round(h.percentile(99)),
      h.max()};
}

}  // namespace scaleup::dissect
