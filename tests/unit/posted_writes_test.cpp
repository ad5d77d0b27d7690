// A posted write's B waits for the receiver's ACK (R2 3.2.2, 4.1), or reports SLVERR when the
// peer turns out unreachable; the fire-and-forget reading is an option.
#include <doctest/doctest.h>

#include <array>

#include "scaleup/transport/go_back_n.hpp"
#include "scaleup/transport/posted_writes.hpp"

namespace p = scaleup::pack;
namespace t = scaleup::transport;
using P = t::psn<16>;

namespace {
// WR_FULL_P (code 2 << 10) to XPU 5, 64 bytes (63 << 18).
p::axi_aw posted_aw(std::uint16_t id) {
  return p::axi_aw{.id = id, .addr = 0x1000, .len = 3, .size = 4, .user = 0x00FC0805};
}
}  // namespace

TEST_CASE("posted writes: B = OKAY only once an ACK covers the PDU that carried it") {
  t::posted_writes<8> w;
  std::array<p::axi_b, 8> out{};
  // Two writes in PDU 10, one in PDU 11.
  CHECK(w.accept(posted_aw(1), P(10), out).value == 0);
  CHECK(w.accept(posted_aw(2), P(10), out).value == 0);
  CHECK(w.accept(posted_aw(3), P(11), out).value == 0);
  CHECK(w.pending() == 3);
  // Nothing is answered before the receiver acknowledges (the old behaviour answered at once).
  CHECK(w.acknowledged(P(9), out) == 0);
  CHECK(w.acknowledged(P(10), out) == 2);
  CHECK(out[0] == p::axi_b{.id = 1, .resp = p::axi_resp_okay, .user = 0x3805});
  CHECK(out[1].id == 2);
  CHECK(w.pending() == 1);
  // A cumulative ACK far ahead answers the rest; a stale one answers nothing more.
  CHECK(w.acknowledged(P(40), out) == 1);
  CHECK(out[0].id == 3);
  CHECK(w.acknowledged(P(41), out) == 0);
}

TEST_CASE("posted writes: a write lost to an unreachable peer is never answered OKAY") {
  // The go-back-N sender carries the write in PDU 0; the PDU and every resend are lost.
  t::gbn_config cfg{.window = 4, .rto = 100, .max_retries = 2};
  t::gbn_sender<16> tx;
  auto [s, a] = step(tx, t::sender_event<16>{t::sender_input::send, {}}, 0, cfg);
  tx = s;
  REQUIRE(a.assigned);
  t::posted_writes<8> w;
  std::array<p::axi_b, 8> out{};
  REQUIRE(w.accept(posted_aw(7), a.psn_assigned, out).value == 0);
  std::uint64_t now = 0;
  bool unreachable = false;
  while (!unreachable) {
    now += cfg.rto;
    auto [s2, a2] = step(tx, t::sender_event<16>{t::sender_input::tick, {}}, now, cfg);
    tx = s2;
    unreachable = a2.unreachable;
    CHECK(w.pending() == 1);  // no B while the transport is still trying
  }
  REQUIRE(w.unreachable(out) == 1);
  CHECK(out[0].id == 7);
  CHECK(out[0].resp == p::axi_resp_slverr);
  CHECK(w.pending() == 0);
}

TEST_CASE("posted writes: failover keeps the writes waiting under their new PSNs") {
  t::posted_writes<8> w;
  std::array<p::axi_b, 8> out{};
  (void)w.accept(posted_aw(1), P(65534), out);
  (void)w.accept(posted_aw(2), P(65535), out);
  (void)w.accept(posted_aw(3), P(0), out);    // across the wrap
  w.moved(P(500), P(65534));                  // moved to a connection that starts at 500
  CHECK(w.acknowledged(P(65535), out) == 0);  // the old connection's PSNs mean nothing now
  CHECK(w.acknowledged(P(501), out) == 2);
  CHECK(w.acknowledged(P(502), out) == 1);
  CHECK(out[0].id == 3);
}

TEST_CASE("posted writes: the fire-and-forget option, and the errors") {
  t::posted_writes<2> early(t::posted_response::on_accept);
  std::array<p::axi_b, 2> out{};
  const auto r = early.accept(posted_aw(9), P(0), out);
  REQUIRE(r.ok());
  CHECK(r.value == 1);
  CHECK(out[0] == p::axi_b{.id = 9, .resp = p::axi_resp_okay, .user = 0x3805});
  CHECK(early.pending() == 0);
  CHECK(early.accept(posted_aw(9), P(0), {}).err.code == scaleup::wire::errc::no_space);

  t::posted_writes<2> w;
  p::axi_aw non_posted = posted_aw(1);
  non_posted.user = 0x00FC1005;  // WR_FULL: its B is the remote WR_RSP
  CHECK(w.accept(non_posted, P(0), out).err.code == scaleup::wire::errc::bad_value);
  REQUIRE(w.accept(posted_aw(1), P(0), out).ok());
  REQUIRE(w.accept(posted_aw(2), P(1), out).ok());
  const auto full = w.accept(posted_aw(3), P(2), out);
  CHECK(full.err.code == scaleup::wire::errc::no_space);
  // A short output answers what fits; the rest waits.
  CHECK(w.acknowledged(P(5), std::span(out).first(1)) == 1);
  CHECK(w.pending() == 1);
}
