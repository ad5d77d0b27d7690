// dissect::psn_ordered, the per-PSN store of the sequence analyses: checked against a std::map
// doing the same (what it replaced) on rising, out-of-order, repeated and wrapped-over PSNs and
// on ACKs before, inside and beyond what it holds.
#include <scaleup/dissect/psn_ordered.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <random>

namespace {

namespace d = scaleup::dissect;

TEST_CASE("psn_ordered: find, try_emplace, insert_or_assign and erase_through") {
  d::psn_ordered<int> s;
  CHECK(s.empty());
  CHECK(s.find(0) == nullptr);
  s.erase_through(100);  // nothing held: nothing happens
  CHECK(s.empty());

  CHECK(s.try_emplace(10, 1).second);
  CHECK(s.try_emplace(12, 2).second);
  CHECK(s.try_emplace(11, 3).second);  // out of order: between the two
  const auto again = s.try_emplace(11, 99);
  CHECK_FALSE(again.second);  // there already: kept as it was
  CHECK(*again.first == 3);
  s.insert_or_assign(12, 20);
  REQUIRE(s.find(12) != nullptr);
  CHECK(*s.find(12) == 20);
  CHECK(s.size() == 3);
  CHECK(s.find(13) == nullptr);

  s.erase_through(10);
  CHECK(s.find(10) == nullptr);
  CHECK(s.size() == 2);
  s.erase_through(9);  // below what is held: nothing
  CHECK(s.size() == 2);
  // A PSN below the front comes again (a retransmission of an acknowledged one): in front.
  CHECK(s.try_emplace(5, 7).second);
  REQUIRE(s.find(5) != nullptr);
  CHECK(*s.find(5) == 7);
  s.erase_through(11);
  CHECK(s.find(5) == nullptr);
  CHECK(s.find(11) == nullptr);
  CHECK(*s.find(12) == 20);
  s.erase_through(1000);
  CHECK(s.empty());
  CHECK(s.try_emplace(-3, 1).second);  // unwrapped PSNs may be negative
  CHECK(*s.find(-3) == 1);
}

TEST_CASE("psn_ordered: the same as a std::map over a long random run") {
  d::psn_ordered<std::int64_t> s;
  std::map<std::int64_t, std::int64_t> m;
  std::mt19937_64 rng(7);
  std::int64_t next = 0, acked = -1;
  for (int step = 0; step < 200000; ++step) {
    const auto r = rng() % 100;
    if (r < 60) {  // a new PSN, sometimes skipping some
      next += 1 + static_cast<std::int64_t>(rng() % 3 == 0 ? rng() % 4 : 0);
      const auto v = static_cast<std::int64_t>(rng());
      CHECK(s.try_emplace(next, v).second == m.try_emplace(next, v).second);
    } else if (r < 75) {  // a PSN at or below the highest: a resend or one out of order
      const std::int64_t p = next - static_cast<std::int64_t>(rng() % 40);
      const auto v = static_cast<std::int64_t>(rng());
      if (rng() % 2) {
        s.insert_or_assign(p, v);
        m.insert_or_assign(p, v);
      } else {
        const auto got = s.try_emplace(p, v);
        const auto want = m.try_emplace(p, v);
        CHECK(got.second == want.second);
        CHECK(*got.first == want.first->second);
      }
    } else if (r < 95) {  // an ACK, mostly forward, sometimes old
      const std::int64_t upto = rng() % 5 == 0 ? acked - static_cast<std::int64_t>(rng() % 10)
                                               : acked + static_cast<std::int64_t>(rng() % 30);
      acked = std::max(acked, upto);
      s.erase_through(upto);
      m.erase(m.begin(), m.upper_bound(upto));
    } else {  // a lookup anywhere near
      const std::int64_t p = next - static_cast<std::int64_t>(rng() % 80);
      const auto it = m.find(p);
      const std::int64_t* got = s.find(p);
      REQUIRE((got != nullptr) == (it != m.end()));
      if (got) CHECK(*got == it->second);
    }
    REQUIRE(s.size() == m.size());
  }
  for (const auto& [p, v] : m) {
    REQUIRE(s.find(p) != nullptr);
    CHECK(*s.find(p) == v);
  }
}

}  // namespace
