// A connection's PSN trace for `stats --svg` (include/scaleup/dissect/psn_trace.hpp): events as
// they were up to its number of points, then time columns that keep, per kind, how many events
// fell in them and their lowest and highest PSN, never more columns than its bound.
#include <scaleup/dissect/psn_trace.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

namespace {

namespace d = scaleup::dissect;
using kind = d::psn_event::kind;

d::psn_event ev(std::int64_t t, std::int64_t psn, kind k = kind::first) {
  return {t, static_cast<std::uint64_t>(t), psn, k};
}

// Every event lies in the column its time names, within that column's PSNs of its kind, and
// the columns' counts add up to the events of each kind.
void check_folded(const d::psn_trace& t, const std::vector<d::psn_event>& all) {
  REQUIRE(t.folded());
  CHECK(t.events().empty());  // the events' memory is given back
  CHECK(t.columns().size() <= t.max_columns());
  CHECK(t.size() == all.size());
  const auto cols = t.columns();
  const std::int64_t origin = cols.front().start_ns;
  std::array<std::uint64_t, d::psn_event_kinds> want{}, got{};
  std::size_t outside = 0;  // events their column does not account for
  for (const auto& e : all) {
    ++want[static_cast<std::size_t>(e.what)];
    const auto i =
        static_cast<std::size_t>(std::max<std::int64_t>(0, e.time_ns - origin) / t.width_ns());
    if (i >= cols.size()) {
      ++outside;
      continue;
    }
    const auto& sp = cols[i].of(e.what);
    outside += sp.count == 0 || e.psn < sp.lowest || sp.highest < e.psn;
  }
  CHECK(outside == 0);
  for (std::size_t i = 0; i < cols.size(); ++i) {
    CHECK(cols[i].start_ns == origin + static_cast<std::int64_t>(i) * t.width_ns());
    for (std::size_t k = 0; k < d::psn_event_kinds; ++k) got[k] += cols[i].spans[k].count;
  }
  CHECK(got == want);
}

}  // namespace

TEST_CASE("psn trace: events as they were, up to its number of points") {
  d::psn_trace t(16);
  for (int i = 0; i < 16; ++i) t.add(ev(i * 10, 100 + i, i % 4 == 3 ? kind::ack : kind::first));
  CHECK_FALSE(t.folded());
  REQUIRE(t.events().size() == 16);
  CHECK(t.events()[3].what == kind::ack);
  CHECK(t.events()[15].psn == 115);
  CHECK(t.columns().empty());
  CHECK(t.size() == 16);
}

TEST_CASE("psn trace: beyond its points, columns keep counts and PSN extremes") {
  d::psn_trace t(8);  // 4 columns
  std::vector<d::psn_event> all;
  for (int i = 0; i < 17; ++i) all.push_back(ev(i, 1000 - i, kind::retransmission));  // 9 over
  for (const auto& e : all) t.add(e);
  check_folded(t, all);
  // Times 0..16 in 4 columns: 8 ns wide would hold 0..31; 4 ns wide 0..15 only.
  CHECK(t.width_ns() == 8);
  REQUIRE(t.columns().size() == 3);
  const auto& c0 = t.columns()[0].of(kind::retransmission);
  CHECK(c0.count == 8);
  CHECK(c0.lowest == 993);
  CHECK(c0.highest == 1000);
  CHECK(t.columns()[2].of(kind::retransmission).count == 1);  // time 16
  CHECK(t.columns()[2].of(kind::first).count == 0);
}

TEST_CASE("psn trace: a long capture stays within its columns") {
  d::psn_trace t;  // the default: what stats --svg uses
  std::vector<d::psn_event> all;
  std::int64_t psn = 0;
  for (std::int64_t i = 0; i < 300'000; ++i) {
    // A PDU every 100 ns, an ACK every 8, a NACK and a resend now and then.
    all.push_back(ev(i * 100, psn++));
    if (i % 8 == 7) all.push_back(ev(i * 100 + 50, psn - 1, kind::ack));
    if (i % 5000 == 4999) {
      all.push_back(ev(i * 100 + 60, psn - 3, kind::nack));
      all.push_back(ev(i * 100 + 70, psn - 3, kind::retransmission));
    }
  }
  for (const auto& e : all) t.add(e);
  check_folded(t, all);
  CHECK(t.max_columns() == d::psn_trace::default_points / 2);
  CHECK(t.columns().size() > t.max_columns() / 2);  // the widths double: at least half used
}

TEST_CASE("psn trace: time stamps that go backwards land in the first column") {
  d::psn_trace t(4);  // 2 columns
  std::vector<d::psn_event> all;
  for (int i = 0; i < 5; ++i) all.push_back(ev(100 + i, i));
  all.push_back(ev(5, 42, kind::nack));  // before the origin
  for (const auto& e : all) t.add(e);
  REQUIRE(t.folded());
  CHECK(t.columns()[0].of(kind::nack).count == 1);
  CHECK(t.columns()[0].of(kind::nack).lowest == 42);
  check_folded(t, all);
}
