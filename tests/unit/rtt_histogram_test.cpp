// The log-linear RTT histogram (include/scaleup/dissect/rtt_histogram.hpp): its buckets tile the
// 64-bit range, percentiles of known distributions stay within the stated error of the exact
// nearest-rank ones (computed here by sorting), and the count, minimum and maximum are exact.
#include <scaleup/dissect/rtt_histogram.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

namespace {

namespace d = scaleup::dissect;
using hist = d::rtt_histogram;

// Exact nearest rank, written out: the sample of rank ceil(n x p / 100) of the sorted samples.
std::int64_t exact(const std::vector<std::int64_t>& sorted, unsigned p) {
  const std::size_t r = (sorted.size() * p + 99) / 100;
  return sorted[r == 0 ? 0 : r - 1];
}

// |estimate - truth| <= truth / 256 (S = 7: half a bucket is at most 1/2^8 of its lowest value).
bool within(std::int64_t estimate, std::int64_t truth) {
  const std::int64_t diff = estimate > truth ? estimate - truth : truth - estimate;
  return diff * 256 <= truth;
}

// A fixed sequence of pseudo-random numbers (an LCG: the test needs no quality, only spread).
struct lcg {
  std::uint64_t s = 42;
  std::uint64_t next() { return (s = s * 6364136223846793005ull + 1442695040888963407ull) >> 11; }
};

void check_distribution(const std::vector<std::int64_t>& v) {
  auto h = std::make_unique<hist>();
  for (const auto x : v) h->add(x);
  CHECK(h->count() == v.size());
  CHECK(h->min() == *std::min_element(v.begin(), v.end()));
  CHECK(h->max() == *std::max_element(v.begin(), v.end()));
  auto sorted = v;  // once for every percentile: a million samples sort slowly unoptimised
  std::sort(sorted.begin(), sorted.end());
  for (const unsigned p : {1u, 10u, 25u, 50u, 75u, 90u, 99u}) {
    const auto want = exact(sorted, p), got = h->percentile(p);
    INFO("p" << p << ": " << got << " for " << want);
    CHECK(within(got, want));
  }
  CHECK(h->percentile(100) == h->max());
  CHECK(h->percentile(0) == h->min());
}

}  // namespace

TEST_CASE("rtt histogram: buckets tile the 64-bit range, one value each below 2^8") {
  CHECK(hist::relative_error == 1.0 / 256);
  CHECK(hist::bucket_count == 58 * 128);
  for (std::uint64_t v = 0; v < 256; ++v) {
    CHECK(hist::bucket_of(v) == v);
    CHECK(hist::width(v) == 1);
  }
  CHECK(hist::bucket_of(256) == 256);  // [256, 258): the first bucket 2 wide
  CHECK(hist::bucket_of(257) == 256);
  CHECK(hist::bucket_of(258) == 257);
  CHECK(hist::width(256) == 2);
  CHECK(hist::bucket_of(511) == 383);
  CHECK(hist::bucket_of(512) == 384);
  CHECK(hist::width(384) == 4);
  CHECK(hist::bucket_of(std::numeric_limits<std::uint64_t>::max()) == hist::bucket_count - 1);
  // Each bucket starts where the one before ends, and holds what bucket_of puts in it.
  for (std::size_t b = 0; b + 1 < hist::bucket_count; ++b) {
    const auto lo = hist::lowest(b), w = hist::width(b);
    REQUIRE(hist::lowest(b + 1) == lo + w);
    REQUIRE(hist::bucket_of(lo) == b);
    REQUIRE(hist::bucket_of(lo + w - 1) == b);
    // The stated error: half a width against the lowest value of the bucket.
    if (lo) REQUIRE(static_cast<double>(w / 2) <= static_cast<double>(lo) * hist::relative_error);
  }
  CHECK(hist::lowest(hist::bucket_count - 1) + (hist::width(hist::bucket_count - 1) - 1) ==
        std::numeric_limits<std::uint64_t>::max());
}

TEST_CASE("rtt histogram: known distributions within the stated error") {
  std::vector<std::int64_t> v;
  SUBCASE("uniform 1 .. 1 000 000") {
    for (std::int64_t i = 1; i <= 1'000'000; ++i) v.push_back(i);
  }
  SUBCASE("constant") { v.assign(1000, 123'456'789); }
  SUBCASE("uniform, pseudo-random over 1 us .. 10 ms") {
    lcg r;
    for (int i = 0; i < 200'000; ++i)
      v.push_back(1000 + static_cast<std::int64_t>(r.next() % 10'000'000));
  }
  SUBCASE("log-uniform over 1 ns .. 2^40 ns (every power of two alike)") {
    lcg r;
    for (int i = 0; i < 200'000; ++i) {
      const unsigned e = static_cast<unsigned>(r.next() % 40);
      v.push_back(
          static_cast<std::int64_t>((std::uint64_t{1} << e) + r.next() % (std::uint64_t{1} << e)));
    }
  }
  SUBCASE("bimodal: 99 % near 2 us, 1 % near 5 ms (a retransmission timeout)") {
    lcg r;
    for (int i = 0; i < 100'000; ++i)
      v.push_back(i % 100 == 0 ? 5'000'000 + static_cast<std::int64_t>(r.next() % 100'000)
                               : 2000 + static_cast<std::int64_t>(r.next() % 300));
  }
  check_distribution(v);
}

TEST_CASE("rtt histogram: edge values") {
  auto h = std::make_unique<hist>();
  CHECK(h->count() == 0);
  CHECK(h->percentile(50) == 0);  // empty: nothing to report
  h->add(0);
  CHECK(h->percentile(50) == 0);
  CHECK(h->min() == 0);

  // The largest duration an int64 holds (in the last bucket but 128): exact as the maximum.
  auto big = std::make_unique<hist>();
  constexpr auto top = std::numeric_limits<std::int64_t>::max();
  big->add(top);
  big->add(top - 1);
  big->add(top);
  CHECK(big->max() == top);
  CHECK(big->min() == top - 1);
  CHECK(within(big->percentile(50), top));  // in [min, max], whatever the bucket's middle
  CHECK(big->percentile(50) >= top - 1);

  // Time stamps that go backwards: the minimum keeps the negative RTT, the buckets count 0.
  auto neg = std::make_unique<hist>();
  neg->add(-5);
  neg->add(10);
  neg->add(20);
  CHECK(neg->min() == -5);
  CHECK(neg->percentile(1) == -5);  // rank 1: the minimum, exact
  CHECK(neg->percentile(50) == 10);
  CHECK(neg->percentile(100) == 20);
}

TEST_CASE("rtt histogram: merging is adding every sample to one") {
  auto a = std::make_unique<hist>(), b = std::make_unique<hist>(), all = std::make_unique<hist>();
  lcg r;
  for (int i = 0; i < 10'000; ++i) {
    const auto x = static_cast<std::int64_t>(r.next() % 1'000'000);
    (i % 3 ? *a : *b).add(x);
    all->add(x);
  }
  auto m = std::make_unique<hist>();
  m->merge(*a);
  m->merge(*b);
  m->merge(hist{});  // an empty one changes nothing
  CHECK(m->count() == all->count());
  CHECK(m->min() == all->min());
  CHECK(m->max() == all->max());
  for (const unsigned p : {1u, 50u, 90u, 99u}) CHECK(m->percentile(p) == all->percentile(p));
}

TEST_CASE("rtt histogram: percentiles rounded to the capture's resolution") {
  // A microsecond capture: every RTT a multiple of 1000 ns, below 1000 x 2^7 ns: exact.
  auto h = std::make_unique<hist>();
  for (std::int64_t us = 1; us <= 100; ++us) h->add(us * 1000);
  const auto s = d::summarize(*h, 1000);
  CHECK(s.p50 == 50'000);
  CHECK(s.p90 == 90'000);
  CHECK(s.p99 == 99'000);
  CHECK(s.min == 1000);
  CHECK(s.max == 100'000);
  const auto raw = d::summarize(*h);  // without rounding: within the error, not exact
  CHECK(within(raw.p50, 50'000));
  CHECK(raw.p50 != 50'000);  // 50 000 lies in [49 920, 50 176): its middle is 50 048
  CHECK(raw.p50 == 50'048);
}

TEST_CASE("rtt histogram: usable in constant expressions") {
  constexpr auto median = [] {
    d::log_linear_histogram<2> h;  // 4 buckets per power of two: 1/8 off at most
    for (std::int64_t v : {3, 100, 1000, 7, 64}) h.add(v);
    return h.percentile(50);
  }();
  // Rank 3 of 3, 7, 64, 100, 1000 is 64, in the bucket [64, 80): read as its middle, 72, 1/8 off.
  static_assert(median == 72);
  CHECK(median == 72);
}

TEST_CASE("rtt_record: the sparse histogram answers as the dense one, in a few words") {
  lcg r;
  d::rtt_record sparse;
  auto dense = std::make_unique<hist>();
  CHECK(sparse.heap_bytes() == 0);  // nothing until the first sample
  CHECK(sparse.count() == 0);
  CHECK(d::summarize(sparse).p50 == 0);
  sparse.add(2000);
  dense->add(2000);
  CHECK(sparse.heap_bytes() == 0);  // a sole sample is kept in the record itself
  const auto same = [&] {
    CHECK(sparse.count() == dense->count());
    CHECK(sparse.min() == dense->min());
    CHECK(sparse.max() == dense->max());
    for (unsigned p = 0; p <= 100; ++p) {
      CAPTURE(p);
      CHECK(sparse.percentile(p) == dense->percentile(p));
    }
    // Merged into a dense one: the same as the dense one merged.
    auto a = std::make_unique<hist>(), b = std::make_unique<hist>();
    a->add(5);
    b->add(5);
    a->merge(sparse);
    b->merge(*dense);
    for (unsigned p = 0; p <= 100; p += 5) CHECK(a->percentile(p) == b->percentile(p));
    CHECK(a->count() == b->count());
  };
  same();
  // A second sample, the first's bucket: one block, 4 words of header and 1 bucket.
  sparse.add(2001);
  dense->add(2001);
  CHECK(sparse.heap_bytes() == 40);
  same();
  // Spread over a few hundred buckets (1 to 4 us), in no order: still sparse, still the same.
  for (int i = 0; i < 2000; ++i) {
    const auto v = static_cast<std::int64_t>(1000 + r.next() % 3000);
    sparse.add(v);
    dense->add(v);
  }
  CHECK(!sparse.is_dense());
  CHECK(sparse.heap_bytes() <= (4 + d::rtt_record::sparse_most) * 8);
  same();
  // Beyond sparse_most buckets it turns dense, and answers the same.
  for (std::int64_t v = 1; v < 1'000'000'000; v = v * 21 / 20 + 1) {
    sparse.add(v);
    dense->add(v);
  }
  CHECK(sparse.is_dense());
  same();
  sparse.add(-5);  // a negative duration counts as 0, min keeps it
  dense->add(-5);
  same();
}

TEST_CASE("rtt_record: a sole sample of any value, and moving one") {
  for (const std::int64_t v :
       {std::int64_t{0}, std::int64_t{-5}, std::int64_t{-1},
        std::numeric_limits<std::int64_t>::max(), std::numeric_limits<std::int64_t>::min()}) {
    CAPTURE(v);
    d::rtt_record r;
    r.add(v);
    auto dense = std::make_unique<hist>();
    dense->add(v);
    CHECK(r.count() == 1);
    CHECK(r.min() == v);
    CHECK(r.max() == v);
    CHECK(r.percentile(50) == dense->percentile(50));
    // The least value cannot be told from "none" in the record's word: it takes a block.
    CHECK(r.heap_bytes() == (v == std::numeric_limits<std::int64_t>::min() ? 40u : 0u));
    auto merged = std::make_unique<hist>();
    merged->merge(r);
    CHECK(merged->count() == 1);
    CHECK(merged->min() == v);
    d::rtt_record moved(std::move(r));
    CHECK(moved.count() == 1);
    CHECK(moved.max() == v);
    CHECK(r.count() == 0);  // NOLINT(bugprone-use-after-move): a moved-from record is empty
    d::rtt_record assigned;
    assigned.add(3);
    assigned = std::move(moved);
    CHECK(assigned.count() == 1);
    CHECK(assigned.min() == v);
    moved.add(7);  // NOLINT(bugprone-use-after-move): and usable again
    CHECK(moved.count() == 1);
    CHECK(moved.min() == 7);
  }
}
