// Header/data split (include/scaleup/pack/header_data_split.hpp; seed 002 FIG. 2-5, digest H).
//
// Every expected trace below is worked out by hand, cycle by cycle, from the scheduling rules
// documented in the header. Notation of a cycle: "<header> | <data>", where a header is WQ (write
// request), RS (read response), WS (write response) or RQ (read request) followed by the tag and,
// for data-carrying classes, "/beats"; a data flit is "<tag>.<beat>", with "!" on the last beat;
// "-" is an idle path. Beat values are tag * 16 + beat, so a data flit names its transaction
// without the model having to.
#include <scaleup/pack/header_data_split.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

namespace {

namespace sp = scaleup::pack::split;
using sp::tx_class;

constexpr std::size_t max_beats = 8;
using tx = sp::transaction<max_beats>;
using arr = sp::arrival<max_beats>;

constexpr tx make(tx_class c, std::uint16_t id, std::uint8_t beats = 0) {
  tx t{};
  t.cls = c;
  t.id = id;
  t.beats = beats;
  for (std::size_t k = 0; k < beats && k < max_beats; ++k) {
    t.data[k] = static_cast<sp::beat>(id * 16u + k);
  }
  return t;
}

constexpr arr at(std::uint64_t cycle, tx t) { return arr{cycle, t}; }
constexpr tx wq(std::uint16_t id, std::uint8_t beats) {
  return make(tx_class::write_request, id, beats);
}
constexpr tx rs(std::uint16_t id, std::uint8_t beats) {
  return make(tx_class::read_response, id, beats);
}
constexpr tx ws(std::uint16_t id) { return make(tx_class::write_response, id); }
constexpr tx rq(std::uint16_t id) { return make(tx_class::read_request, id); }

std::string describe(const sp::cycle_out& o) {
  std::string s;
  if (o.header) {
    switch (o.header->cls) {
      case tx_class::write_request:
        s += "WQ";
        break;
      case tx_class::read_response:
        s += "RS";
        break;
      case tx_class::write_response:
        s += "WS";
        break;
      case tx_class::read_request:
        s += "RQ";
        break;
    }
    s += std::to_string(o.header->id);
    if (sp::carries_data(o.header->cls)) s += "/" + std::to_string(o.header->beats);
  } else {
    s += "-";
  }
  s += " | ";
  if (o.data) {
    s += std::to_string(o.data->value / 16) + "." + std::to_string(o.data->value % 16);
    if (o.data->last) s += "!";
  } else {
    s += "-";
  }
  return s;
}

struct recording {
  std::vector<sp::cycle_out> cycles;
  void operator()(const sp::cycle_out& o) { cycles.push_back(o); }

  std::vector<std::string> rows() const {
    std::vector<std::string> r;
    for (const auto& o : cycles) r.push_back(describe(o));
    return r;
  }
  std::vector<sp::header_flit> headers() const {
    std::vector<sp::header_flit> h;
    for (const auto& o : cycles) {
      if (o.header) h.push_back(*o.header);
    }
    return h;
  }
  std::vector<sp::data_flit> data() const {
    std::vector<sp::data_flit> d;
    for (const auto& o : cycles) {
      if (o.data) d.push_back(*o.data);
    }
    return d;
  }
};

template <std::size_t Depth = 16>
std::vector<std::string> split_rows(const std::vector<arr>& w, sp::split_report* rep = nullptr) {
  recording r;
  const auto report = sp::run_split<Depth>(w, r);
  if (rep) *rep = report;
  // Every simulated cycle is consecutive here (no idle gaps in these workloads).
  for (std::size_t i = 0; i < r.cycles.size(); ++i) REQUIRE(r.cycles[i].cycle == i);
  return r.rows();
}

template <std::size_t Depth = 16>
std::vector<std::string> shared_rows(const std::vector<arr>& w, sp::shared_report* rep = nullptr) {
  recording r;
  const auto report = sp::run_shared<Depth>(w, r);
  if (rep) *rep = report;
  for (std::size_t i = 0; i < r.cycles.size(); ++i) REQUIRE(r.cycles[i].cycle == i);
  return r.rows();
}

using rows = std::vector<std::string>;

}  // namespace

// Lets a failing trace comparison print both traces.
template <>
struct doctest::StringMaker<std::vector<std::string>> {
  static doctest::String convert(const std::vector<std::string>& v) {
    std::string s = "\n";
    for (const auto& row : v) s += "  " + row + "\n";
    return s.c_str();
  }
};

TEST_CASE("split: the patent's table of header and data portions") {
  CHECK_FALSE(sp::carries_data(tx_class::read_request));
  CHECK(sp::carries_data(tx_class::write_request));
  CHECK(sp::carries_data(tx_class::read_response));
  CHECK_FALSE(sp::carries_data(tx_class::write_response));

  CHECK(sp::stream_name(tx_class::write_request) == "REQ/ORIG DATA");
  CHECK(sp::stream_name(tx_class::read_response) == "RD RSP/DATA");
  CHECK(sp::stream_name(tx_class::write_response) == "WR RSP");
  CHECK(sp::stream_name(tx_class::read_request) == "CMD REQ HEAD IS RD");

  CHECK(sp::well_formed(rq(1)));
  CHECK(sp::well_formed(wq(1, 1)));
  CHECK(sp::well_formed(rs(1, 8)));
  CHECK_FALSE(sp::well_formed(wq(1, 0)));  // a write request always has data
  CHECK_FALSE(sp::well_formed(make(tx_class::write_response, 1, 1)));  // header only
  tx too_long = rs(1, 8);
  too_long.beats = 9;
  CHECK(sp::check(too_long) == sp::errc::bad_beats);
  tx bad_class = rq(1);
  bad_class.cls = static_cast<tx_class>(7);
  CHECK(sp::check(bad_class) == sp::errc::bad_class);
}

TEST_CASE("split: one 4-beat write request and 3 write responses arriving together") {
  const std::vector<arr> w{at(0, wq(1, 4)), at(0, ws(2)), at(0, ws(3)), at(0, ws(4))};

  // Cycle 0: the data path is free and the SOP side wins the reset tie, so the header of WQ1 and
  // its first beat leave together. Cycles 1-3: beats 2-4 hold the data path alone and the header
  // path serves the write responses.
  sp::split_report s{};
  CHECK(split_rows(w, &s) == rows{
                                 "WQ1/4 | 1.0",
                                 "WS2 | 1.1",
                                 "WS3 | 1.2",
                                 "WS4 | 1.3!",
                             });
  CHECK(s.error == sp::errc::none);
  CHECK(s.transactions == 4);
  CHECK(s.cycles == 4);
  CHECK(s.header_busy == 4);
  CHECK(s.data_busy == 4);
  CHECK(s.header_utilisation() == 1.0);
  CHECK(s.data_utilisation() == 1.0);
  CHECK(s.transactions_per_cycle() == 1.0);

  // Shared path: header then 4 beats, then the three write responses: 1 + 4 + 3 = 8 cycles.
  sp::shared_report b{};
  CHECK(shared_rows(w, &b) == rows{
                                  "WQ1/4 | -",
                                  "- | 1.0",
                                  "- | 1.1",
                                  "- | 1.2",
                                  "- | 1.3!",
                                  "WS2 | -",
                                  "WS3 | -",
                                  "WS4 | -",
                              });
  CHECK(b.cycles == 8);
  CHECK(b.busy == 8);
  CHECK(b.utilisation() == 1.0);
  CHECK(b.transactions_per_cycle() == 0.5);
}

TEST_CASE("split: the same trace as exact flit values") {
  recording r;
  sp::run_split<4>(std::vector<arr>{at(0, wq(1, 2)), at(0, ws(2))}, r);
  REQUIRE(r.cycles.size() == 2);
  CHECK(r.cycles[0] ==
        sp::cycle_out{0, sp::header_flit{tx_class::write_request, 1, 2}, sp::data_flit{16, false}});
  CHECK(r.cycles[1] ==
        sp::cycle_out{1, sp::header_flit{tx_class::write_response, 2, 0}, sp::data_flit{17, true}});
}

TEST_CASE("split: one read request") {
  const std::vector<arr> w{at(0, rq(7))};
  sp::split_report s{};
  CHECK(split_rows(w, &s) == rows{"RQ7 | -"});
  CHECK(s.cycles == 1);
  CHECK(s.header_busy == 1);
  CHECK(s.data_busy == 0);
  CHECK(s.data_utilisation() == 0.0);
  sp::shared_report b{};
  CHECK(shared_rows(w, &b) == rows{"RQ7 | -"});
  CHECK(b.cycles == 1);
}

TEST_CASE("split: alternating reads and writes from an originator") {
  SUBCASE("all queued at cycle 0") {
    const std::vector<arr> w{at(0, rq(1)), at(0, wq(2, 2)), at(0, rq(3)), at(0, wq(4, 2))};
    // Cycle 0: SOP side wins the reset tie (WQ2). Cycle 1: the header-only side has the next tie,
    // but nothing contends anyway: the data path is busy. Cycle 2: the data path is free again
    // and the SOP side has the tie.
    sp::split_report s{};
    CHECK(split_rows(w, &s) == rows{
                                   "WQ2/2 | 2.0",
                                   "RQ1 | 2.1!",
                                   "WQ4/2 | 4.0",
                                   "RQ3 | 4.1!",
                               });
    CHECK(s.cycles == 4);
    // Shared: the four-way round robin in FIG. 3 order starts at REQ/ORIG DATA, then moves to
    // the stream after the winner: WQ2, RQ1, WQ4, RQ3. 4 headers + 4 beats = 8 cycles.
    sp::shared_report b{};
    CHECK(shared_rows(w, &b) == rows{
                                    "WQ2/2 | -",
                                    "- | 2.0",
                                    "- | 2.1!",
                                    "RQ1 | -",
                                    "WQ4/2 | -",
                                    "- | 4.0",
                                    "- | 4.1!",
                                    "RQ3 | -",
                                });
    CHECK(b.cycles == 8);
  }
  SUBCASE("one per cycle") {
    const std::vector<arr> w{at(0, rq(1)), at(1, wq(2, 2)), at(2, rq(3)), at(3, wq(4, 2))};
    CHECK(split_rows(w) == rows{
                               "RQ1 | -",
                               "WQ2/2 | 2.0",
                               "RQ3 | 2.1!",
                               "WQ4/2 | 4.0",
                               "- | 4.1!",
                           });
    // Shared: RQ1 at 0; WQ2 header at 1, beats at 2-3; RQ3 (queued at 2) and WQ4 (queued at 3)
    // wait; the round robin, past REQ/ORIG DATA, reaches CMD REQ HEAD IS RD first.
    sp::shared_report b{};
    CHECK(shared_rows(w, &b) == rows{
                                    "RQ1 | -",
                                    "WQ2/2 | -",
                                    "- | 2.0",
                                    "- | 2.1!",
                                    "RQ3 | -",
                                    "WQ4/2 | -",
                                    "- | 4.0",
                                    "- | 4.1!",
                                });
    CHECK(b.cycles == 8);
  }
}

TEST_CASE("split: SOP rule, header and first data beat in the same cycle") {
  // Read responses and a write request each start with header and beat 0 together, never a
  // header alone and never a first beat alone. The SOP round robin starts at REQ/ORIG DATA, so
  // WQ2 goes first although RS1 was listed first.
  recording r;
  sp::run_split<16>(std::vector<arr>{at(0, rs(1, 3)), at(0, wq(2, 1)), at(0, rs(3, 2))}, r);
  CHECK(r.rows() == rows{
                        "WQ2/1 | 2.0!",
                        "RS1/3 | 1.0",
                        "- | 1.1",
                        "- | 1.2!",
                        "RS3/2 | 3.0",
                        "- | 3.1!",
                    });
  for (const auto& o : r.cycles) {
    if (o.header && sp::carries_data(o.header->cls)) {
      REQUIRE(o.data.has_value());
      CHECK(o.data->value == o.header->id * 16u);
    }
  }
}

TEST_CASE("split: round-robin fairness") {
  SUBCASE("between the data-carrying streams") {
    std::vector<arr> w;
    for (std::uint16_t i = 0; i < 4; ++i) {
      w.push_back(at(0, wq(static_cast<std::uint16_t>(10 + i), 1)));
    }
    for (std::uint16_t i = 0; i < 4; ++i) {
      w.push_back(at(0, rs(static_cast<std::uint16_t>(20 + i), 1)));
    }
    CHECK(split_rows(w) == rows{
                               "WQ10/1 | 10.0!",
                               "RS20/1 | 20.0!",
                               "WQ11/1 | 11.0!",
                               "RS21/1 | 21.0!",
                               "WQ12/1 | 12.0!",
                               "RS22/1 | 22.0!",
                               "WQ13/1 | 13.0!",
                               "RS23/1 | 23.0!",
                           });
  }
  SUBCASE("between the header-only streams") {
    std::vector<arr> w;
    for (std::uint16_t i = 0; i < 3; ++i) {
      w.push_back(at(0, rq(static_cast<std::uint16_t>(10 + i))));
    }
    for (std::uint16_t i = 0; i < 3; ++i) {
      w.push_back(at(0, ws(static_cast<std::uint16_t>(20 + i))));
    }
    CHECK(split_rows(w) == rows{
                               "WS20 | -",
                               "RQ10 | -",
                               "WS21 | -",
                               "RQ11 | -",
                               "WS22 | -",
                               "RQ12 | -",
                           });
  }
  SUBCASE("on the header path, between a new SOP and header-only traffic") {
    // Single-beat payloads free the data path every cycle, so every cycle is a tie and the header
    // path alternates. Without the final round robin, one side could hold the header path.
    std::vector<arr> w;
    for (std::uint16_t i = 0; i < 3; ++i) {
      w.push_back(at(0, wq(static_cast<std::uint16_t>(10 + i), 1)));
    }
    for (std::uint16_t i = 0; i < 3; ++i) {
      w.push_back(at(0, rq(static_cast<std::uint16_t>(20 + i))));
    }
    CHECK(split_rows(w) == rows{
                               "WQ10/1 | 10.0!",
                               "RQ20 | -",
                               "WQ11/1 | 11.0!",
                               "RQ21 | -",
                               "WQ12/1 | 12.0!",
                               "RQ22 | -",
                           });
  }
  SUBCASE("long backlogs: each stream's share stays within one grant of its partner") {
    std::vector<arr> w;
    for (std::uint16_t i = 0; i < 200; ++i) {
      w.push_back(at(0, wq(i, static_cast<std::uint8_t>(1 + i % 8))));
      w.push_back(at(0, rs(i, static_cast<std::uint8_t>(8 - i % 8))));
      w.push_back(at(0, ws(i)));
      w.push_back(at(0, rq(i)));
    }
    recording r;
    sp::run_split<4>(w, r);
    std::array<long, 4> seen{};
    for (const auto& o : r.cycles) {
      if (!o.header) continue;
      ++seen[sp::index(o.header->cls)];
      // While all four streams are backlogged, each pair's round robin alternates.
      if (seen[sp::index(tx_class::write_request)] < 200 &&
          seen[sp::index(tx_class::read_response)] < 200) {
        CHECK(std::abs(seen[sp::index(tx_class::write_request)] -
                       seen[sp::index(tx_class::read_response)]) <= 1);
      }
      if (seen[sp::index(tx_class::write_response)] < 200 &&
          seen[sp::index(tx_class::read_request)] < 200) {
        CHECK(std::abs(seen[sp::index(tx_class::write_response)] -
                       seen[sp::index(tx_class::read_request)]) <= 1);
      }
    }
  }
}

TEST_CASE("split: header-only traffic proceeds while the data path is busy") {
  std::vector<arr> w{at(0, wq(1, 8))};
  for (std::uint16_t i = 2; i <= 8; ++i) w.push_back(at(0, rq(i)));
  sp::split_report s{};
  CHECK(split_rows(w, &s) == rows{
                                 "WQ1/8 | 1.0",
                                 "RQ2 | 1.1",
                                 "RQ3 | 1.2",
                                 "RQ4 | 1.3",
                                 "RQ5 | 1.4",
                                 "RQ6 | 1.5",
                                 "RQ7 | 1.6",
                                 "RQ8 | 1.7!",
                             });
  CHECK(s.cycles == 8);
  CHECK(s.header_busy == 8);
  CHECK(s.data_busy == 8);
  sp::shared_report b{};
  shared_rows(w, &b);
  CHECK(b.cycles == 16);  // 1 + 8 + 7
}

TEST_CASE("split: responses are not blocked by requests, nor requests by responses") {
  SUBCASE("a request flood; a write response and a read response arrive at cycle 5") {
    std::vector<arr> w;
    for (std::uint16_t i = 0; i < 20; ++i) {
      w.push_back(at(0, wq(static_cast<std::uint16_t>(100 + i), 8)));
      w.push_back(at(0, rq(static_cast<std::uint16_t>(200 + i))));
    }
    w.push_back(at(5, rs(1, 4)));
    w.push_back(at(5, ws(2)));
    // 0: WQ100 takes both paths. 1-4: its beats; the header path serves read requests (the WR RSP
    // queue is empty, so CMD REQ HEAD IS RD wins every header-only grant and the tie pointer
    // keeps naming WR RSP). 5: WS2 arrives and wins at once. 8: the data path frees; the SOP
    // round robin last granted REQ/ORIG DATA, so RS1 goes ahead of 19 queued write requests.
    recording r;
    sp::run_split<32>(w, r);
    const auto rowv = r.rows();
    REQUIRE(rowv.size() >= 12);
    CHECK(rows(rowv.begin(), rowv.begin() + 12) == rows{
                                                       "WQ100/8 | 100.0",
                                                       "RQ200 | 100.1",
                                                       "RQ201 | 100.2",
                                                       "RQ202 | 100.3",
                                                       "RQ203 | 100.4",
                                                       "WS2 | 100.5",
                                                       "RQ204 | 100.6",
                                                       "RQ205 | 100.7!",
                                                       "RS1/4 | 1.0",
                                                       "RQ206 | 1.1",
                                                       "RQ207 | 1.2",
                                                       "RQ208 | 1.3!",
                                                   });
  }
  SUBCASE("a response flood; a read request and a write request arrive at cycle 5") {
    std::vector<arr> w;
    for (std::uint16_t i = 0; i < 20; ++i) {
      w.push_back(at(0, rs(static_cast<std::uint16_t>(100 + i), 8)));
      w.push_back(at(0, ws(static_cast<std::uint16_t>(200 + i))));
    }
    w.push_back(at(5, wq(1, 4)));
    w.push_back(at(5, rq(2)));
    // Mirror image: the reset tie goes to REQ/ORIG DATA but its queue is empty until cycle 5, so
    // RS100 starts; WS200-203 fill cycles 1-4 and hand the header-only tie to CMD REQ HEAD IS RD.
    recording r;
    sp::run_split<32>(w, r);
    const auto rowv = r.rows();
    REQUIRE(rowv.size() >= 12);
    CHECK(rows(rowv.begin(), rowv.begin() + 12) == rows{
                                                       "RS100/8 | 100.0",
                                                       "WS200 | 100.1",
                                                       "WS201 | 100.2",
                                                       "WS202 | 100.3",
                                                       "WS203 | 100.4",
                                                       "RQ2 | 100.5",
                                                       "WS204 | 100.6",
                                                       "WS205 | 100.7!",
                                                       "WQ1/4 | 1.0",
                                                       "WS206 | 1.1",
                                                       "WS207 | 1.2",
                                                       "WS208 | 1.3!",
                                                   });
  }
}

TEST_CASE("split: the worst waits at the head of a queue are reached and no worse") {
  SUBCASE("header-only: 3 cycles") {
    // RQ4 is at its queue head in cycle 0 and loses to an SOP, its partner WS3, another SOP.
    CHECK(split_rows(std::vector<arr>{at(0, wq(1, 1)), at(0, rs(2, 1)), at(0, ws(3)),
                                      at(0, rq(4))}) == rows{
                                                            "WQ1/1 | 1.0!",
                                                            "WS3 | -",
                                                            "RS2/1 | 2.0!",
                                                            "RQ4 | -",
                                                        });
  }
  SUBCASE("data-carrying: MaxBeats + 2 cycles") {
    // WQ3 is at its queue head in cycle 1. It loses the header path to WS5 (the header-only side
    // holds the tie after WQ1), the SOP round robin to RS4 (it holds that tie after WQ1), and, with
    // no header-only grant during RS4's beats to move the tie back, the header path to WS6 again.
    const std::vector<arr> w{at(0, wq(1, 1)), at(1, wq(3, 1)), at(1, rs(4, 8)), at(1, ws(5)),
                             at(10, ws(6))};
    CHECK(split_rows(w) == rows{
                               "WQ1/1 | 1.0!",
                               "WS5 | -",
                               "RS4/8 | 4.0",
                               "- | 4.1",
                               "- | 4.2",
                               "- | 4.3",
                               "- | 4.4",
                               "- | 4.5",
                               "- | 4.6",
                               "- | 4.7!",
                               "WS6 | -",
                               "WQ3/1 | 3.0!",
                           });
  }
}

TEST_CASE("split: a 50% header-only mix finishes in fewer cycles than the shared path") {
  SUBCASE("4-beat payloads: the data path is the bottleneck") {
    const std::vector<arr> w{at(0, wq(1, 4)), at(0, wq(2, 4)), at(0, rs(3, 4)), at(0, rs(4, 4)),
                             at(0, ws(5)),    at(0, ws(6)),    at(0, rq(7)),    at(0, rq(8))};
    // Header-only transactions ride in the cycles after each SOP; at every free data cycle the SOP
    // side holds the tie, so the data path never idles: 16 beats, 16 cycles.
    sp::split_report s{};
    CHECK(split_rows(w, &s) == rows{
                                   "WQ1/4 | 1.0",
                                   "WS5 | 1.1",
                                   "RQ7 | 1.2",
                                   "WS6 | 1.3!",
                                   "RS3/4 | 3.0",
                                   "RQ8 | 3.1",
                                   "- | 3.2",
                                   "- | 3.3!",
                                   "WQ2/4 | 2.0",
                                   "- | 2.1",
                                   "- | 2.2",
                                   "- | 2.3!",
                                   "RS4/4 | 4.0",
                                   "- | 4.1",
                                   "- | 4.2",
                                   "- | 4.3!",
                               });
    CHECK(s.cycles == 16);
    CHECK(s.header_busy == 8);
    CHECK(s.data_busy == 16);
    CHECK(s.header_utilisation() == 0.5);
    CHECK(s.data_utilisation() == 1.0);
    CHECK(s.transactions_per_cycle() == 0.5);

    // Shared: the four-way round robin visits WQ, RS, WS, RQ in turn; 8 headers + 16 beats.
    sp::shared_report b{};
    CHECK(shared_rows(w, &b) == rows{
                                    "WQ1/4 | -", "- | 1.0",  "- | 1.1",   "- | 1.2", "- | 1.3!",
                                    "RS3/4 | -", "- | 3.0",  "- | 3.1",   "- | 3.2", "- | 3.3!",
                                    "WS5 | -",   "RQ7 | -",  "WQ2/4 | -", "- | 2.0", "- | 2.1",
                                    "- | 2.2",   "- | 2.3!", "RS4/4 | -", "- | 4.0", "- | 4.1",
                                    "- | 4.2",   "- | 4.3!", "WS6 | -",   "RQ8 | -",
                                });
    CHECK(b.cycles == 24);
    CHECK(b.busy == 24);
    CHECK(b.transactions_per_cycle() == doctest::Approx(1.0 / 3.0));

    const auto c = sp::compare<16>(w);
    CHECK(c.split.cycles == 16);
    CHECK(c.shared.cycles == 24);
    CHECK(c.speedup() == 1.5);
  }
  SUBCASE("2-beat payloads: both paths full every cycle") {
    const std::vector<arr> w{at(0, wq(1, 2)), at(0, wq(2, 2)), at(0, rs(3, 2)), at(0, rs(4, 2)),
                             at(0, ws(5)),    at(0, ws(6)),    at(0, rq(7)),    at(0, rq(8))};
    // Free data cycles (0, 2, 4, 6) are ties won by the SOP side; the cycles between go to the
    // header-only round robin, which alternates WS and RQ.
    sp::split_report s{};
    CHECK(split_rows(w, &s) == rows{
                                   "WQ1/2 | 1.0",
                                   "WS5 | 1.1!",
                                   "RS3/2 | 3.0",
                                   "RQ7 | 3.1!",
                                   "WQ2/2 | 2.0",
                                   "WS6 | 2.1!",
                                   "RS4/2 | 4.0",
                                   "RQ8 | 4.1!",
                               });
    CHECK(s.cycles == 8);
    CHECK(s.header_utilisation() == 1.0);
    CHECK(s.data_utilisation() == 1.0);
    const auto c = sp::compare<16>(w);
    CHECK(c.shared.cycles == 16);  // 8 headers + 8 beats
    CHECK(c.speedup() == 2.0);
  }
  SUBCASE("400 transactions, 4-beat payloads") {
    std::vector<arr> w;
    for (std::uint16_t i = 0; i < 100; ++i) {
      w.push_back(at(0, wq(i, 4)));
      w.push_back(at(0, rs(i, 4)));
      w.push_back(at(0, ws(i)));
      w.push_back(at(0, rq(i)));
    }
    // 800 beats keep the data path busy from cycle 0 to 799; the 200 header-only transactions
    // fit in the 600 header cycles that follow SOPs. Shared: 400 headers + 800 beats.
    const auto c = sp::compare<16>(w);
    CHECK(c.split.cycles == 800);
    CHECK(c.split.data_busy == 800);
    CHECK(c.split.header_busy == 400);
    CHECK(c.shared.cycles == 1200);
    CHECK(c.speedup() == 1.5);
  }
}

TEST_CASE("split: idle stretches between arrivals") {
  const std::vector<arr> w{at(0, rq(1)), at(10, rq(2))};
  recording r;
  const auto s = sp::run_split<4>(w, r);
  CHECK(s.cycles == 11);
  CHECK(s.header_busy == 2);
  REQUIRE(r.cycles.size() == 2);
  CHECK(r.cycles[0].cycle == 0);
  CHECK(r.cycles[1].cycle == 10);
  CHECK(sp::run_shared<4>(w).cycles == 11);
}

TEST_CASE("split: offer, back-pressure and step on their own") {
  sp::split_port<max_beats, 2> p{};
  auto o = sp::offer(p, rq(1));
  CHECK(o.error == sp::errc::none);
  o = sp::offer(o.port, rq(2));
  CHECK(o.error == sp::errc::none);
  const auto full = sp::offer(o.port, rq(3));
  CHECK(full.error == sp::errc::queue_full);
  CHECK(full.port.in[tx_class::read_request].size == 2);  // refused, not dropped in
  CHECK(sp::offer(o.port, wq(4, 0)).error == sp::errc::bad_beats);
  CHECK(sp::offer(o.port, wq(4, 1)).error == sp::errc::none);  // other classes still have room

  auto s = sp::step(o.port);
  CHECK(describe(s.out) == "RQ1 | -");
  CHECK(s.port.cycle == 1);
  s = sp::step(s.port);
  CHECK(describe(s.out) == "RQ2 | -");
  CHECK(sp::idle(s.port));
  s = sp::step(s.port);
  CHECK(s.out == sp::cycle_out{2, std::nullopt, std::nullopt});

  // Back-pressure in a run: with one-entry queues the write responses enter one at a time and
  // the trace is the same as with deep queues.
  const std::vector<arr> w{at(0, wq(1, 4)), at(0, ws(2)), at(0, ws(3)), at(0, ws(4))};
  CHECK(split_rows<1>(w) == split_rows<16>(w));
}

TEST_CASE("split: run rejects malformed workloads") {
  CHECK(sp::run_split<4>(std::vector<arr>{at(3, rq(1)), at(2, rq(2))}).error == sp::errc::unsorted);
  CHECK(sp::run_shared<4>(std::vector<arr>{at(0, rs(1, 0))}).error == sp::errc::bad_beats);
  CHECK(sp::run_split<4>(std::vector<arr>{}).cycles == 0);
}

TEST_CASE("split: merge reports what it cannot re-associate") {
  using m8 = sp::merged<max_beats, 4>;
  const std::vector<sp::header_flit> wq2{{tx_class::write_request, 1, 2}};
  const std::vector<sp::header_flit> rq1{{tx_class::read_request, 1, 0}};

  const m8 missing = sp::merge<max_beats, 4>(wq2, std::vector<sp::data_flit>{{16, false}});
  CHECK(missing.error == sp::errc::missing_data);
  CHECK(missing.header_index == 0);

  const m8 early_last =
      sp::merge<max_beats, 4>(wq2, std::vector<sp::data_flit>{{16, true}, {17, true}});
  CHECK(early_last.error == sp::errc::bad_length);

  const m8 stray = sp::merge<max_beats, 4>(rq1, std::vector<sp::data_flit>{{0, true}});
  CHECK(stray.error == sp::errc::stray_data);
  CHECK(stray.header_index == 1);
  CHECK(stray.of(tx_class::read_request).size() == 1);

  const auto no_room = sp::merge<max_beats, 1>(
      std::vector<sp::header_flit>{{tx_class::read_request, 1, 0}, {tx_class::read_request, 2, 0}},
      {});
  CHECK(no_room.error == sp::errc::no_space);
  CHECK(no_room.header_index == 1);

  const auto bad =
      sp::merge<max_beats, 4>(std::vector<sp::header_flit>{{tx_class::write_response, 1, 1}}, {});
  CHECK(bad.error == sp::errc::bad_beats);

  // Pairing is by order, not by cycle: all headers first, then all data, still merges.
  const std::vector<sp::header_flit> hs{{tx_class::read_response, 5, 2},
                                        {tx_class::write_response, 6, 0},
                                        {tx_class::write_request, 7, 1}};
  const std::vector<sp::data_flit> ds{{80, false}, {81, true}, {112, true}};
  const auto ok = sp::merge<max_beats, 4>(hs, ds);
  CHECK(ok.error == sp::errc::none);
  REQUIRE(ok.of(tx_class::read_response).size() == 1);
  CHECK(ok.of(tx_class::read_response)[0] == rs(5, 2));
  CHECK(ok.of(tx_class::write_response)[0] == ws(6));
  CHECK(ok.of(tx_class::write_request)[0] == wq(7, 1));
}

namespace {

// Runs one random workload through both ports and checks the scheduling rules flit by flit, the
// path bounds, and that merging each trace gives every class back in order.
template <std::size_t Depth>
void random_round_trip(std::uint32_t seed) {
  std::mt19937 rng(seed);
  const bool all_at_zero = rng() % 2 == 0;
  const std::size_t n = 1 + rng() % 150;
  std::vector<arr> w;
  std::uint64_t now = 0;
  std::uint64_t headers = 0;
  std::uint64_t beats = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<tx_class>(rng() % 4);
    const auto b = sp::carries_data(c) ? static_cast<std::uint8_t>(1 + rng() % max_beats) : 0;
    if (!all_at_zero && rng() % 3 == 0) now += rng() % 6;
    w.push_back(at(now, make(c, static_cast<std::uint16_t>(i), b)));
    ++headers;
    beats += b;
  }

  recording split_trace;
  const auto s = sp::run_split<Depth>(w, split_trace);
  recording shared_trace;
  const auto b = sp::run_shared<Depth>(w, shared_trace);
  REQUIRE(s.error == sp::errc::none);
  REQUIRE(b.error == sp::errc::none);

  // Split: SOP rule; no second SOP while a payload holds the data path; a payload's beats are
  // back to back; at least one flit in every simulated cycle.
  std::uint8_t left = 0;  // beats still to come of the payload in flight
  std::uint64_t prev = 0;
  for (std::size_t i = 0; i < split_trace.cycles.size(); ++i) {
    const auto& o = split_trace.cycles[i];
    if (i > 0) REQUIRE(o.cycle > prev);
    prev = o.cycle;
    REQUIRE((o.header || o.data));
    if (left > 0) {
      REQUIRE(o.data.has_value());
      if (o.header) REQUIRE_FALSE(sp::carries_data(o.header->cls));
      --left;
      REQUIRE(o.data->last == (left == 0));
    } else if (o.header && sp::carries_data(o.header->cls)) {
      REQUIRE(o.data.has_value());
      REQUIRE(o.data->value == o.header->id * 16u);
      left = static_cast<std::uint8_t>(o.header->beats - 1);
      REQUIRE(o.data->last == (left == 0));
    } else {
      REQUIRE_FALSE(o.data.has_value());
    }
  }
  REQUIRE(left == 0);

  // Non-blocking bound documented on split_port: counted from the cycle a transaction reaches the
  // head of its class's queue (its arrival, or the cycle after its predecessor's last flit), a
  // header-only transaction waits at most 3 cycles, a data-carrying one at most MaxBeats + 2.
  std::vector<std::uint64_t> header_cycle(n);
  for (const auto& o : split_trace.cycles) {
    if (o.header) header_cycle[o.header->id] = o.cycle;
  }
  for (const tx_class c : sp::fig3_order) {
    std::uint64_t free_from = 0;
    for (const auto& a : w) {
      if (a.tx.cls != c) continue;
      const std::uint64_t head = std::max(a.cycle, free_from);
      const std::uint64_t sent = header_cycle[a.tx.id];
      REQUIRE(sent >= head);
      CHECK(sent - head <= (sp::carries_data(c) ? max_beats + 2 : 3));
      free_from = sent + (a.tx.beats > 0 ? a.tx.beats : 1);
    }
  }

  for (const auto& o : shared_trace.cycles) REQUIRE((o.header.has_value() != o.data.has_value()));

  // Bounds: each path carries one flit per cycle; the split port drains no later than the
  // shared path (it moves at least one flit in every cycle the shared path does).
  CHECK(s.header_busy == headers);
  CHECK(s.data_busy == beats);
  CHECK(b.busy == headers + beats);
  CHECK(s.cycles >= std::max(headers, beats));
  CHECK(s.cycles >= w.back().cycle + 1);
  CHECK(s.cycles <= b.cycles);
  if (all_at_zero) CHECK(b.cycles == headers + beats);

  // merge(split(x)) == x and merge(shared(x)) == x, per class and in order.
  const auto ms = sp::merge<max_beats, 256>(split_trace.headers(), split_trace.data());
  const auto mb = sp::merge<max_beats, 256>(shared_trace.headers(), shared_trace.data());
  REQUIRE(ms.error == sp::errc::none);
  REQUIRE(mb.error == sp::errc::none);
  for (const tx_class c : sp::fig3_order) {
    std::vector<tx> want;
    for (const auto& a : w) {
      if (a.tx.cls == c) want.push_back(a.tx);
    }
    const auto got_split = ms.of(c);
    const auto got_shared = mb.of(c);
    REQUIRE(got_split.size() == want.size());
    REQUIRE(got_shared.size() == want.size());
    CHECK(std::equal(want.begin(), want.end(), got_split.begin()));
    CHECK(std::equal(want.begin(), want.end(), got_shared.begin()));
  }
}

}  // namespace

TEST_CASE("split: merge(split(x)) == x for random traffic") {
  for (std::uint32_t seed = 1; seed <= 300; ++seed) {
    CAPTURE(seed);
    random_round_trip<1>(seed);
    random_round_trip<4>(seed + 100000);
    random_round_trip<64>(seed + 200000);
  }
}

namespace {

constexpr auto constexpr_trace() {
  const std::array<arr, 4> w{at(0, wq(1, 4)), at(0, ws(2)), at(0, ws(3)), at(0, ws(4))};
  sp::trace<8> t{};
  sp::run_split<4>(w, t);
  return t;
}

constexpr auto constexpr_compare() {
  const std::array<arr, 4> w{at(0, wq(1, 4)), at(0, ws(2)), at(0, ws(3)), at(0, ws(4))};
  return sp::compare<4>(w);
}

static_assert(constexpr_trace().size == 4);
static_assert(constexpr_trace().cycles[1].header->cls == tx_class::write_response);
static_assert(constexpr_trace().cycles[3].data->last);
static_assert(constexpr_compare().split.cycles == 4);
static_assert(constexpr_compare().shared.cycles == 8);

}  // namespace

TEST_CASE("split: the model runs in constant expressions") {
  constexpr auto t = constexpr_trace();
  CHECK_FALSE(t.overflow);
  CHECK(describe(t.cycles[0]) == "WQ1/4 | 1.0");
  sp::trace<2> small{};
  sp::run_split<4>(std::array<arr, 3>{at(0, rq(1)), at(0, rq(2)), at(0, rq(3))}, small);
  CHECK(small.overflow);
  CHECK(small.view().size() == 2);
}
