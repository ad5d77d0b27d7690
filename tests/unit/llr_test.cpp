// Link Layer Retransmission (transport/llr.hpp; R2 3.5.5, 2.1, 2.2): golden bytes of the LLR
// header and control frame, hand-worked sender/receiver exchanges (NACK and replay,
// duplicates, a lost ACK, back-pressure, the retry limit and link reset, wraparound), and a
// seeded property test over a link that corrupts, loses and duplicates frames in both
// directions.
//
// The golden bytes were worked out by hand from the field tables' bit positions; the CRC-32
// values in them come from an independent CRC-32/ISO-HDLC implementation, not from scaleup.
#include <scaleup/transport/llr.hpp>
#include <scaleup/wire/checksum.hpp>
#include <scaleup/wire/field.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <utility>
#include <vector>

namespace {

namespace t = scaleup::transport;
namespace w = scaleup::wire;
using w::errc;

using byte_vector = std::vector<std::uint8_t>;

template <unsigned B>
using llr_seq = t::llr_seq<B>;

template <std::size_t N>
byte_vector vec(const std::array<std::uint8_t, N>& a) {
  return byte_vector(a.begin(), a.end());
}

// The sequence numbers of a run, in iteration order.
template <unsigned B, std::size_t C>
std::vector<unsigned> seqs(const t::llr_run<B, C>& r) {
  std::vector<unsigned> out;
  for (const auto e : r) out.push_back(e.seq.value);
  return out;
}

template <unsigned B, std::size_t C>
std::vector<std::size_t> slots(const t::llr_run<B, C>& r) {
  std::vector<std::size_t> out;
  for (const auto e : r) out.push_back(e.slot);
  return out;
}

using uvec = std::vector<unsigned>;
using svec = std::vector<std::size_t>;

// ---- wire formats ------------------------------------------------------------------------

// ver 00, type 00 (data), rsvd 0000 0000 0000, seq 0x0ABC -> 00 00 0A BC.
TEST_CASE("llr: data header golden bytes and decode") {
  t::llr_header h;
  h.seq = 0x0ABC;
  const auto img = w::to_bytes(h);
  REQUIRE(img);
  CHECK(vec(*img) == byte_vector{0x00, 0x00, 0x0A, 0xBC});
  CHECK(t::llr_header_for(llr_seq<12>(0xABC)) == h);

  const auto back = w::decode<t::llr_header>(*img);
  REQUIRE(back);
  CHECK(*back == h);
  const auto s = t::llr_seq_of<12>(*back);
  REQUIRE(s);
  CHECK(s->value == 0xABC);

  // A sequence wider than the link's: refused, not masked.
  CHECK(t::llr_seq_of<8>(*back).err.code == errc::value_too_big);

  // 0x10 in the first byte is type 1: a control frame is not a data header.
  const std::array<std::uint8_t, 4> ctl{0x10, 0x00, 0x0A, 0xBC};
  CHECK(w::decode<t::llr_header>(ctl).err.code == errc::bad_value);
  CHECK(w::decode<t::llr_header>(ctl).err.field == "llr.type");
  // Version 1 (first byte 0x40) is refused both ways.
  const std::array<std::uint8_t, 4> v1{0x40, 0x00, 0x00, 0x01};
  CHECK(w::decode<t::llr_header>(v1).err.code == errc::bad_value);
  t::llr_header bad_ver;
  bad_ver.ver = 1;
  CHECK(w::to_bytes(bad_ver).err.code == errc::bad_value);
  // Reserved bits set: kept and not an error on decode (the dissector reports them).
  const std::array<std::uint8_t, 4> rsv{0x00, 0x01, 0x00, 0x07};
  const auto r = w::decode<t::llr_header>(rsv);
  REQUIRE(r);
  CHECK(r->rsvd == 1);
  CHECK(r->seq == 7);
  // Too short.
  const std::array<std::uint8_t, 3> short_buf{0, 0, 0};
  CHECK(w::decode<t::llr_header>(short_buf).err.code == errc::truncated);
}

// ACK 0x123: ver 00, type 01, rsvd 0 -> 0x10 0x00; seq 01 23; CRC-32 over 10 00 01 23 is
// 0xCA21C8B0, big-endian. NACK 0xFFF: type 10 -> 0x20 0x00 0F FF; CRC 0x2BEC8360.
TEST_CASE("llr: control frame golden bytes, CRC and checks") {
  const auto ack = t::llr_control_for(t::llr_control_msg<12>{t::llr_type::ack, llr_seq<12>(0x123)});
  const auto ack_img = w::to_bytes(ack);
  REQUIRE(ack_img);
  CHECK(vec(*ack_img) == byte_vector{0x10, 0x00, 0x01, 0x23, 0xCA, 0x21, 0xC8, 0xB0});

  const auto nack =
      t::llr_control_for(t::llr_control_msg<12>{t::llr_type::nack, llr_seq<12>(0xFFF)});
  const auto nack_img = w::to_bytes(nack);
  REQUIRE(nack_img);
  CHECK(vec(*nack_img) == byte_vector{0x20, 0x00, 0x0F, 0xFF, 0x2B, 0xEC, 0x83, 0x60});

  // The codec is constexpr end to end.
  static_assert(t::llr_control_crc(t::llr_control{0, 1, 0, 0x123, 0}) == 0xCA21C8B0u);
  static_assert(*w::to_bytes(t::llr_header{0, 0, 0, 0x0ABC}) ==
                std::array<std::uint8_t, 4>{0x00, 0x00, 0x0A, 0xBC});

  // Decoded back into sender events.
  const auto ack_back = w::decode<t::llr_control>(*ack_img);
  REQUIRE(ack_back);
  const auto ev = t::llr_event_of<12>(*ack_back);
  REQUIRE(ev);
  CHECK(ev->input == t::llr_sender_input::ack);
  CHECK(ev->seq.value == 0x123);
  const auto nev = t::llr_event_of<12>(*w::decode<t::llr_control>(*nack_img));
  REQUIRE(nev);
  CHECK(nev->input == t::llr_sender_input::nack);
  CHECK(nev->seq.value == 0xFFF);

  // Every single-bit error is caught: by the table (version), by the type check or by the CRC.
  for (std::size_t bit = 0; bit < 64; ++bit) {
    auto img = *ack_img;
    img[bit / 8] = static_cast<std::uint8_t>(img[bit / 8] ^ (0x80u >> (bit % 8)));
    const auto d = w::decode<t::llr_control>(img);
    const bool refused = !d || !t::llr_event_of<12>(*d);
    CAPTURE(bit);
    CHECK(refused);
  }

  // Type 0 (data) and 3 (reserved) are not control frames, whatever their CRC.
  for (std::uint8_t type : {std::uint8_t{0}, std::uint8_t{3}}) {
    t::llr_control c{0, type, 0, 5, 0};
    c.crc = t::llr_control_crc(c);
    CHECK(t::llr_check_control(c).code == errc::bad_value);
  }
  t::llr_control wrong_crc = ack;
  wrong_crc.crc ^= 1;
  CHECK(t::llr_check_control(wrong_crc).code == errc::bad_checksum);
  // A sequence wider than the link's.
  CHECK(t::llr_event_of<8>(nack).err.code == errc::value_too_big);
  // Too short.
  const std::array<std::uint8_t, 7> short_buf{};
  CHECK(w::decode<t::llr_control>(short_buf).err.code == errc::truncated);
}

TEST_CASE("llr: field tables") {
  CHECK(w::layout<t::llr_header>::size == 4);
  CHECK(w::layout<t::llr_control>::size == 8);
  // Both formats open with the same ver and type bits, so the first byte tells them apart.
  const auto& h = w::field_infos<t::llr_header>;
  const auto& c = w::field_infos<t::llr_control>;
  for (std::size_t i = 0; i < 4; ++i) {
    CHECK(h[i].bit == c[i].bit);
    CHECK(h[i].width == c[i].width);
  }
  CHECK(c[1].name_of(1) == "ACK");
  CHECK(c[1].name_of(2) == "NACK");
}

// ---- hand-worked exchanges ---------------------------------------------------------------

using S8 = t::llr_sender<12, 8>;
using R12 = t::llr_receiver<12>;

// Five frames 0..4; frame 2 is corrupted on the wire. The receiver delivers 0 and 1, NACKs 2
// once, drops 3 and 4 without a second NACK; the NACK frees 0 and 1 and replays 2, 3, 4, which
// are delivered: every frame exactly once, in order. A coalesced ACK then empties the buffer.
TEST_CASE("llr: corrupt frame 2 of 5 -> NACK 2 -> replay 2..4") {
  const t::llr_receiver_config rc{.ack_every = 8, .ack_delay = 200};
  const t::llr_sender_config sc{.replay_timeout = 1'500, .max_replays = 4};
  S8 s;
  R12 r;
  std::uint64_t now = 0;

  std::vector<unsigned> sent;
  for (int i = 0; i < 5; ++i) {
    auto [s2, a] = step(s, S8::event::send(), now, sc);
    s = s2;
    REQUIRE(a.transmit);
    CHECK(a.transmit->slot == static_cast<std::size_t>(i));
    sent.push_back(a.transmit->seq.value);
  }
  CHECK(sent == uvec{0, 1, 2, 3, 4});
  CHECK(s.in_flight == 5);
  CHECK(next_deadline(s) == 1'500);

  std::vector<unsigned> delivered;
  std::vector<t::llr_control_msg<12>> controls;
  const auto arrive = [&](std::optional<unsigned> sq) {
    const auto ev = sq ? R12::event::frame(llr_seq<12>(*sq)) : R12::event::corrupt();
    auto [r2, a] = step(r, ev, now, rc);
    r = r2;
    if (a.deliver) delivered.push_back(a.deliver->value);
    if (a.control) controls.push_back(*a.control);
    return a;
  };

  now = 300;
  CHECK(arrive(0).deliver);
  CHECK(arrive(1).deliver);
  const auto bad = arrive(std::nullopt);
  CHECK(bad.dropped == t::llr_drop::bad_fcs);
  REQUIRE(bad.control);
  CHECK(*bad.control == t::llr_control_msg<12>{t::llr_type::nack, llr_seq<12>(2)});
  const auto a3 = arrive(3);
  CHECK(a3.dropped == t::llr_drop::out_of_order);
  CHECK_FALSE(a3.control);  // one NACK per burst
  CHECK(arrive(4).dropped == t::llr_drop::out_of_order);
  CHECK(delivered == uvec{0, 1});
  CHECK(controls.size() == 1);
  CHECK(r.unacked == 0);  // the NACK said "0 and 1 arrived"

  now = 600;
  auto [s2, na] = step(s, S8::event::nack(llr_seq<12>(2)), now, sc);
  s = s2;
  CHECK(seqs(na.release) == uvec{0, 1});
  CHECK(slots(na.release) == svec{0, 1});
  CHECK(seqs(na.replay) == uvec{2, 3, 4});
  CHECK(slots(na.replay) == svec{2, 3, 4});
  CHECK(s.in_flight == 3);
  CHECK(s.replays == 1);
  CHECK(s.nacks == 1);
  CHECK(next_deadline(s) == 600 + 1'500);

  now = 900;
  for (const auto e : na.replay) CHECK(arrive(e.seq.value).deliver);
  CHECK(delivered == uvec{0, 1, 2, 3, 4});
  CHECK(controls.size() == 1);  // 3 < ack_every: the ACK waits for its delay
  CHECK(r.delivered == 5);
  CHECK(r.bad_fcs == 1);
  CHECK(r.out_of_order == 2);
  CHECK(r.nacks_sent == 1);
  CHECK(next_deadline(r) == 900 + 200);
}

// The machines are pure and constexpr: the exchange above, run by the compiler.
constexpr bool nack_replay_at_compile_time() {
  S8 s;
  R12 r;
  std::array<unsigned, 5> got{};
  std::size_t n = 0;
  for (int i = 0; i < 5; ++i) s = step(s, S8::event::send(), 0).first;
  std::optional<t::llr_control_msg<12>> nack;
  for (unsigned i = 0; i < 5; ++i) {
    const auto [r2, a] =
        step(r, i == 2 ? R12::event::corrupt() : R12::event::frame(llr_seq<12>(i)), 1);
    r = r2;
    if (a.deliver) got[n++] = a.deliver->value;
    if (a.control) nack = a.control;
  }
  if (!nack || nack->type != t::llr_type::nack) return false;
  const auto [s2, a] = step(s, S8::event::from(*nack), 2);
  for (const auto e : a.replay) {
    const auto d = step(r, R12::event::frame(e.seq), 3);
    r = d.first;
    if (d.second.deliver) got[n++] = d.second.deliver->value;
  }
  return n == 5 && got == std::array<unsigned, 5>{0, 1, 2, 3, 4} && s2.in_flight == 3;
}
static_assert(nack_replay_at_compile_time());

// The same exchange continued precisely: a coalesced ACK after the delay, and the sender empty.
TEST_CASE("llr: coalesced ACK after the delay empties the replay buffer") {
  const t::llr_receiver_config rc{.ack_every = 8, .ack_delay = 200};
  S8 s;
  R12 r;
  for (int i = 0; i < 3; ++i) s = step(s, S8::event::send(), 0).first;
  for (unsigned i = 0; i < 3; ++i) {
    const auto [r2, a] = step(r, R12::event::frame(llr_seq<12>(i)), 100, rc);
    r = r2;
    CHECK(a.deliver);
    CHECK_FALSE(a.control);
  }
  CHECK(next_deadline(r) == 300);
  CHECK_FALSE(step(r, R12::event::tick(), 299, rc).second.control);
  const auto [r2, ta] = step(r, R12::event::tick(), 300, rc);
  REQUIRE(ta.control);
  CHECK(*ta.control == t::llr_control_msg<12>{t::llr_type::ack, llr_seq<12>(2)});
  CHECK_FALSE(next_deadline(r2));

  const auto [s2, aa] = step(s, S8::event::ack(llr_seq<12>(2)), 400);
  CHECK(seqs(aa.release) == uvec{0, 1, 2});
  CHECK(s2.in_flight == 0);
  CHECK_FALSE(next_deadline(s2));
  // The same ACK again frees nothing and is not stale.
  const auto [s3, aa2] = step(s2, S8::event::ack(llr_seq<12>(2)), 500);
  CHECK(aa2.release.empty());
  CHECK(s3.stale == 0);
}

TEST_CASE("llr: ACK every K frames") {
  const t::llr_receiver_config rc{.ack_every = 3, .ack_delay = 1'000};
  R12 r;
  std::vector<unsigned> acks;
  for (unsigned i = 0; i < 9; ++i) {
    const auto [r2, a] = step(r, R12::event::frame(llr_seq<12>(i)), i, rc);
    r = r2;
    if (a.control) {
      CHECK(a.control->type == t::llr_type::ack);
      acks.push_back(a.control->seq.value);
    }
  }
  CHECK(acks == uvec{2, 5, 8});
  CHECK_FALSE(next_deadline(r));
  // ack_every 0 behaves as 1.
  const auto [r3, a] = step(R12{}, R12::event::frame(llr_seq<12>(0)), 0, {.ack_every = 0});
  REQUIRE(a.control);
  CHECK(a.control->seq.value == 0);
  CHECK(r3.acks_sent == 1);
}

TEST_CASE("llr: a new error burst after recovery gets its own NACK") {
  R12 r;
  auto a = step(r, R12::event::corrupt(), 0).second;
  r = step(r, R12::event::corrupt(), 0).first;
  REQUIRE(a.control);
  CHECK(a.control->type == t::llr_type::nack);
  CHECK(a.control->seq.value == 0);
  // More errors in the same burst: silent.
  const auto [r2, a2] = step(r, R12::event::corrupt(), 1);
  CHECK_FALSE(a2.control);
  // The expected frame arrives: the burst is over; the next error NACKs again.
  const auto [r3, a3] = step(r2, R12::event::frame(llr_seq<12>(0)), 2);
  CHECK(a3.deliver);
  const auto [r4, a4] = step(r3, R12::event::corrupt(), 3);
  REQUIRE(a4.control);
  CHECK(*a4.control == t::llr_control_msg<12>{t::llr_type::nack, llr_seq<12>(1)});
  CHECK(r4.nacks_sent == 2);
  CHECK(r4.bad_fcs == 3);
  // A good frame ahead of the expected one (an earlier frame was lost, not corrupted) NACKs too.
  const auto [r5, a5] = step(R12{}, R12::event::frame(llr_seq<12>(3)), 0);
  CHECK(a5.dropped == t::llr_drop::out_of_order);
  REQUIRE(a5.control);
  CHECK(*a5.control == t::llr_control_msg<12>{t::llr_type::nack, llr_seq<12>(0)});
  CHECK(r5.out_of_order == 1);
}

TEST_CASE("llr: duplicates are dropped and re-ACKed") {
  R12 r;
  for (unsigned i = 0; i < 4; ++i) r = step(r, R12::event::frame(llr_seq<12>(i)), 0).first;
  CHECK(r.expected.value == 4);
  for (unsigned d : {0u, 2u, 3u}) {
    const auto [r2, a] = step(r, R12::event::frame(llr_seq<12>(d)), 10);
    r = r2;
    CHECK_FALSE(a.deliver);
    CHECK(a.dropped == t::llr_drop::duplicate);
    REQUIRE(a.control);
    CHECK(*a.control == t::llr_control_msg<12>{t::llr_type::ack, llr_seq<12>(3)});
  }
  CHECK(r.duplicates == 3);
  CHECK(r.delivered == 4);
  CHECK(r.unacked == 0);
  // Behind across wraparound: 4094 is before 1 in a 12-bit space.
  R12 w;
  w.expected = llr_seq<12>(2);
  const auto [w2, wa] = step(w, R12::event::frame(llr_seq<12>(4094)), 0);
  CHECK(wa.dropped == t::llr_drop::duplicate);
  CHECK(wa.control->seq.value == 1);
}

// Three frames delivered, the ACK lost: the replay timer resends all three, the receiver drops
// them as duplicates and re-ACKs, and the sender is empty again.
TEST_CASE("llr: lost ACK recovered by the replay timer") {
  const t::llr_sender_config sc{.replay_timeout = 1'000, .max_replays = 4};
  const t::llr_receiver_config rc{.ack_every = 3, .ack_delay = 200};
  S8 s;
  R12 r;
  std::vector<unsigned> delivered;
  for (int i = 0; i < 3; ++i) s = step(s, S8::event::send(), 0, sc).first;
  std::optional<t::llr_control_msg<12>> lost_ack;
  for (unsigned i = 0; i < 3; ++i) {
    const auto [r2, a] = step(r, R12::event::frame(llr_seq<12>(i)), 250, rc);
    r = r2;
    delivered.push_back(a.deliver->value);
    if (a.control) lost_ack = a.control;
  }
  REQUIRE(lost_ack);  // ...and dropped by the link

  CHECK(step(s, S8::event::tick(), 999, sc).second.replay.empty());
  const auto [s2, ta] = step(s, S8::event::tick(), 1'000, sc);
  s = s2;
  CHECK(seqs(ta.replay) == uvec{0, 1, 2});
  CHECK(s.timeouts == 1);
  CHECK(s.resent == 3);
  CHECK(next_deadline(s) == 2'000);

  std::vector<t::llr_control_msg<12>> acks;
  for (const auto e : ta.replay) {
    const auto [r2, a] = step(r, R12::event::frame(e.seq), 1'250, rc);
    r = r2;
    CHECK(a.dropped == t::llr_drop::duplicate);
    acks.push_back(*a.control);
  }
  CHECK(delivered == uvec{0, 1, 2});
  CHECK(r.delivered == 3);
  REQUIRE(acks.size() == 3);
  for (const auto& m : acks) {
    const auto [s3, aa] = step(s, S8::event::from(m), 1'500, sc);
    s = s3;
  }
  CHECK(s.in_flight == 0);
  CHECK(s.replays == 0);
  CHECK_FALSE(next_deadline(s));
}

TEST_CASE("llr: replay buffer full -> back-pressure") {
  using S4 = t::llr_sender<12, 4>;
  S4 s;
  for (unsigned i = 0; i < 4; ++i) {
    const auto [s2, a] = step(s, S4::event::send(), 0);
    s = s2;
    REQUIRE(a.transmit);
    CHECK(a.transmit->seq.value == i);
  }
  CHECK(s.full());
  const auto [s_same, refused] = step(s, S4::event::send(), 5);
  CHECK_FALSE(refused.transmit);
  CHECK(refused.refused == t::llr_refusal::buffer_full);
  CHECK(s_same == s);  // a refusal changes nothing

  // ACK 1 frees two slots; the next frames reuse them, in ring order.
  const auto [s2, a] = step(s, S4::event::ack(llr_seq<12>(1)), 10);
  s = s2;
  CHECK(slots(a.release) == svec{0, 1});
  const auto [s3, t4] = step(s, S4::event::send(), 11);
  const auto [s4, t5] = step(s3, S4::event::send(), 12);
  const auto [s5, t6] = step(s4, S4::event::send(), 13);
  CHECK(*t4.transmit == t::llr_entry<12>{llr_seq<12>(4), 0});
  CHECK(*t5.transmit == t::llr_entry<12>{llr_seq<12>(5), 1});
  CHECK(t6.refused == t::llr_refusal::buffer_full);
  CHECK(s5.in_flight == 4);
  // A replay walks the ring from the oldest: seqs 2..5 in slots 2, 3, 0, 1.
  const auto [s6, ra] = step(s5, S4::event::nack(llr_seq<12>(2)), 14);
  CHECK(seqs(ra.replay) == uvec{2, 3, 4, 5});
  CHECK(slots(ra.replay) == svec{2, 3, 0, 1});
  CHECK(ra.release.empty());
  CHECK(s6.replays == 1);
}

TEST_CASE("llr: stale and impossible ACKs and NACKs change nothing") {
  S8 s;
  for (int i = 0; i < 3; ++i) s = step(s, S8::event::send(), 0).first;
  s = step(s, S8::event::ack(llr_seq<12>(0)), 1).first;  // oldest 1, next 3
  const S8 before = s;
  for (const auto& e : {S8::event::ack(llr_seq<12>(3)), S8::event::ack(llr_seq<12>(4000)),
                        S8::event::nack(llr_seq<12>(4)), S8::event::nack(llr_seq<12>(0))}) {
    const auto [s2, a] = step(s, e, 2);
    CHECK(a.release.empty());
    CHECK(a.replay.empty());
    CHECK(s2.stale == s.stale + 1);
    s = s2;
  }
  s.stale = before.stale;
  CHECK(s == before);
  // NACK for next (everything arrived): frees all, replays nothing.
  const auto [s2, a] = step(s, S8::event::nack(llr_seq<12>(3)), 3);
  CHECK(seqs(a.release) == uvec{1, 2});
  CHECK(a.replay.empty());
  CHECK(s2.in_flight == 0);
  CHECK_FALSE(next_deadline(s2));
}

TEST_CASE("llr: retry limit -> link failure; reset -> back at sequence 0") {
  const t::llr_sender_config sc{.replay_timeout = 100, .max_replays = 2};
  S8 s;
  for (int i = 0; i < 2; ++i) s = step(s, S8::event::send(), 0, sc).first;
  s = step(s, S8::event::ack(llr_seq<12>(0)), 10, sc).first;  // progress, then silence
  std::uint64_t now = 110;
  for (int k = 0; k < 2; ++k) {
    const auto [s2, a] = step(s, S8::event::tick(), now, sc);
    s = s2;
    CHECK(seqs(a.replay) == uvec{1});
    CHECK(a.failure == t::llr_failure::none);
    now += 100;
  }
  // A NACK that frees nothing is no progress either: it fails the link here.
  const auto [s2, fa] = step(s, S8::event::nack(llr_seq<12>(1)), now, sc);
  s = s2;
  CHECK(fa.replay.empty());
  CHECK(fa.failure == t::llr_failure::retry_limit);
  CHECK(seqs(fa.lost) == uvec{1});
  CHECK(slots(fa.lost) == svec{1});
  CHECK(s.down);
  CHECK(s.in_flight == 0);
  CHECK_FALSE(next_deadline(s));

  // Down: sends refused, control frames and ticks ignored.
  const auto [s3, ra] = step(s, S8::event::send(), now, sc);
  CHECK(ra.refused == t::llr_refusal::link_down);
  CHECK(s3 == s);
  CHECK(step(s, S8::event::ack(llr_seq<12>(1)), now, sc).first == s);
  CHECK(step(s, S8::event::tick(), now + 1'000, sc).first == s);

  // Reset: reported, nothing more lost, sequence 0 and slot 0 again, counters kept.
  const auto [s4, za] = step(s, S8::event::reset(), now, sc);
  CHECK(za.failure == t::llr_failure::link_reset);
  CHECK(za.lost.empty());
  CHECK_FALSE(s4.down);
  CHECK(s4.sent == 2);
  const auto [s5, ta] = step(s4, S8::event::send(), now, sc);
  CHECK(*ta.transmit == t::llr_entry<12>{llr_seq<12>(0), 0});

  // A reset while frames are held loses them, reported in order.
  S8 busy;
  for (int i = 0; i < 3; ++i) busy = step(busy, S8::event::send(), 0, sc).first;
  const auto [s6, ba] = step(busy, S8::event::reset(), 1, sc);
  CHECK(ba.failure == t::llr_failure::link_reset);
  CHECK(seqs(ba.lost) == uvec{0, 1, 2});
  CHECK(s6.in_flight == 0);
  CHECK(s6.next.value == 0);

  // The receiver restarts at 0 too.
  R12 r;
  for (unsigned i = 0; i < 5; ++i) r = step(r, R12::event::frame(llr_seq<12>(i)), 0).first;
  const auto [r2, rr] = step(r, R12::event::reset(), 1);
  CHECK(r2.expected.value == 0);
  CHECK(r2.delivered == 5);
  CHECK(step(r2, R12::event::frame(llr_seq<12>(0)), 2).second.deliver);
}

// 3-bit sequences (8 values, window 3) over 1000 frames on a link without delay: the space
// wraps 125 times, every 7th frame put on the link is corrupted, and after each wrap an ACK
// from the previous lap is thrown at the sender, which must see it as stale.
TEST_CASE("llr: sequence wraparound crossed many times") {
  using S = t::llr_sender<3, 3>;
  using R = t::llr_receiver<3>;
  const t::llr_receiver_config rc{.ack_every = 2, .ack_delay = 50};
  const t::llr_sender_config sc{.replay_timeout = 500, .max_replays = 4};
  S s;
  R r;
  std::deque<t::llr_entry<3>> link;
  std::array<unsigned, 3> store{};  // the caller's frames: app frame number per slot
  unsigned next_app = 0, delivered = 0, wraps = 0, put_on_link = 0;
  bool in_order = true, bounded = true, refusals_ok = true, stale_ok = true;
  std::uint64_t now = 0;

  const auto on_sender = [&](const S::actions& a) {
    for (const auto e : a.replay) link.push_back(e);
  };
  for (int it = 0; it < 10'000 && delivered < 1'000; ++it) {
    now += 10;
    while (next_app < 1'000) {
      const auto [s2, a] = step(s, S::event::send(), now, sc);
      s = s2;
      if (!a.transmit) {
        refusals_ok = refusals_ok && a.refused == t::llr_refusal::buffer_full && s.full();
        break;
      }
      store[a.transmit->slot] = next_app++;
      link.push_back(*a.transmit);
      if (a.transmit->seq.value == 7) {
        ++wraps;
        const auto [s3, sa] = step(s, S::event::ack(s.oldest - 2), now, sc);
        stale_ok = stale_ok && sa.release.empty() && s3.stale == s.stale + 1;
        s = s3;
      }
    }
    {
      const auto [s2, a] = step(s, S::event::tick(), now, sc);
      s = s2;
      on_sender(a);
    }
    while (!link.empty()) {
      const auto e = link.front();
      link.pop_front();
      const bool good = ++put_on_link % 7 != 0;
      const auto [r2, ra] = step(r, R::event::frame(e.seq, good), now, rc);
      r = r2;
      if (ra.deliver) {
        in_order = in_order && ra.deliver->value == e.seq.value && store[e.slot] == delivered;
        ++delivered;
      }
      if (ra.control) {
        const auto [s2, a] = step(s, S::event::from(*ra.control), now, sc);
        s = s2;
        on_sender(a);
      }
    }
    {
      const auto [r2, ra] = step(r, R::event::tick(), now, rc);
      r = r2;
      if (ra.control) s = step(s, S::event::from(*ra.control), now, sc).first;
    }
    bounded = bounded && s.in_flight <= 3 && !s.down;
  }
  CHECK(in_order);
  CHECK(bounded);
  CHECK(refusals_ok);
  CHECK(stale_ok);
  CHECK(delivered == 1'000);
  CHECK(r.delivered == 1'000);
  CHECK(wraps >= 120);
  CHECK(r.nacks_sent > 0);
}

// ---- property: a lossy, corrupting, duplicating link -------------------------------------

// One direction of a link: FIFO (links do not reorder), fixed latency; each frame put on it
// may be lost, duplicated (the copy right behind the original) and, copy by copy, corrupted
// by flipping 1 to 3 bits. Rates are per mille.
struct link_model {
  unsigned loss = 0, dup = 0, corrupt = 0;
  std::uint64_t latency = 250;
};

struct in_flight_frame {
  std::uint64_t at = 0;
  byte_vector bytes;
};

struct channel {
  link_model m;
  std::mt19937_64* rng = nullptr;
  std::deque<in_flight_frame> q;
  std::uint64_t corrupted = 0, lost = 0, duplicated = 0;

  bool roll(unsigned per_mille) { return (*rng)() % 1000 < per_mille; }

  void put(const byte_vector& b, std::uint64_t now) {
    if (roll(m.loss)) {
      ++lost;
      return;
    }
    const int copies = roll(m.dup) ? 2 : 1;
    duplicated += static_cast<std::uint64_t>(copies - 1);
    for (int k = 0; k < copies; ++k) {
      byte_vector c = b;
      if (roll(m.corrupt)) {
        ++corrupted;
        const auto flips = 1 + (*rng)() % 3;
        for (std::uint64_t f = 0; f < flips; ++f) {
          const auto bit = (*rng)() % (c.size() * 8);
          c[bit / 8] = static_cast<std::uint8_t>(c[bit / 8] ^ (0x80u >> (bit % 8)));
        }
      }
      q.push_back({now + m.latency, std::move(c)});
    }
  }

  std::optional<byte_vector> take(std::uint64_t now) {
    if (q.empty() || q.front().at > now) return std::nullopt;
    byte_vector b = std::move(q.front().bytes);
    q.pop_front();
    return b;
  }
};

struct run_stats {
  std::uint64_t steps = 0, delivered = 0, resent = 0, nacks = 0, timeouts = 0, duplicates = 0;
  std::uint64_t corrupted = 0, lost = 0, stale = 0;
};

// Sends `frames` application frames (payload: the frame's number) through sender, link and
// receiver, as a caller would: the frame store has Capacity slots, data frames are LLR header +
// payload + FCS (CRC-32), control frames are encoded and decoded through the field tables.
// Returns the first broken property, or an empty string.
template <unsigned B, std::size_t C>
std::string run_lossy_link(std::uint64_t seed, unsigned frames, link_model fwd_m, link_model rev_m,
                           const t::llr_sender_config& sc, const t::llr_receiver_config& rc,
                           std::uint64_t max_steps, run_stats& st) {
  using S = t::llr_sender<B, C>;
  using R = t::llr_receiver<B>;
  std::mt19937_64 rng(seed);
  channel fwd{fwd_m, &rng, {}};
  channel rev{rev_m, &rng, {}};
  S s;
  R r;
  std::array<byte_vector, C> store{};
  std::array<bool, C> used{};
  std::size_t used_count = 0;
  unsigned next_app = 0, delivered = 0;
  std::uint64_t now = 0;
  std::string fail;
  const auto broken = [&](const char* why) {
    if (fail.empty()) fail = why;
  };

  const auto frame_of = [](t::llr_seq<B> sq, unsigned app) {
    byte_vector f(12);
    const auto h = w::encode(t::llr_header_for(sq), std::span<std::uint8_t>(f.data(), 4));
    (void)h;
    for (int i = 0; i < 4; ++i) f[4 + i] = static_cast<std::uint8_t>(app >> (24 - 8 * i));
    const std::uint32_t fcs = w::crc32(w::bytes(f.data(), 8));
    for (int i = 0; i < 4; ++i) f[8 + i] = static_cast<std::uint8_t>(fcs >> (24 - 8 * i));
    return f;
  };
  const auto stored_seq = [&](std::size_t slot) {
    return static_cast<unsigned>((store[slot][2] << 8) | store[slot][3]);
  };
  const auto on_sender = [&](const typename S::actions& a) {
    for (const auto e : a.release) {
      if (!used[e.slot] || stored_seq(e.slot) != e.seq.value) broken("released a slot not held");
      used[e.slot] = false;
      --used_count;
    }
    for (const auto e : a.replay) {
      if (!used[e.slot] || stored_seq(e.slot) != e.seq.value) broken("replayed a slot not held");
      fwd.put(store[e.slot], now);
    }
    if (a.transmit) {
      const auto e = *a.transmit;
      if (used[e.slot]) broken("new frame given a slot in use");
      store[e.slot] = frame_of(e.seq, next_app++);
      used[e.slot] = true;
      ++used_count;
      fwd.put(store[e.slot], now);
    }
    for (const auto e : a.lost) {
      used[e.slot] = false;
      --used_count;
    }
    if (a.failure != t::llr_failure::none) broken("link failure");
  };
  const auto on_receiver = [&](const typename R::actions& a, const byte_vector* f) {
    if (a.deliver) {
      const unsigned app = (unsigned{(*f)[4]} << 24) | (unsigned{(*f)[5]} << 16) |
                           (unsigned{(*f)[6]} << 8) | unsigned{(*f)[7]};
      if (app != delivered) broken("delivered out of order, twice or corrupted");
      ++delivered;
    }
    if (a.control) {
      const auto img = w::to_bytes(t::llr_control_for(*a.control));
      rev.put(byte_vector(img->begin(), img->end()), now);
    }
  };

  for (st.steps = 0; st.steps < max_steps && fail.empty(); ++st.steps) {
    now += 10;
    if (next_app < frames) {
      const auto [s2, a] = step(s, S::event::send(), now, sc);
      if (a.refused != t::llr_refusal::none &&
          !(a.refused == t::llr_refusal::buffer_full && s.full()))
        broken("refused with room");
      s = s2;
      on_sender(a);
    }
    {
      const auto [s2, a] = step(s, S::event::tick(), now, sc);
      s = s2;
      on_sender(a);
    }
    while (auto f = fwd.take(now)) {
      const bool fcs_ok =
          f->size() == 12 && w::crc32(w::bytes(f->data(), 8)) ==
                                 ((unsigned{(*f)[8]} << 24) | (unsigned{(*f)[9]} << 16) |
                                  (unsigned{(*f)[10]} << 8) | unsigned{(*f)[11]});
      typename R::event ev = R::event::corrupt();
      if (fcs_ok) {
        // A good FCS with a header that does not decode would be a peer speaking another
        // format: treated as corrupt. It cannot happen here.
        const auto h = w::decode<t::llr_header>(w::bytes(f->data(), 4));
        const auto sq = h ? t::llr_seq_of<B>(*h) : w::result<t::llr_seq<B>>(h.err);
        if (sq)
          ev = R::event::frame(*sq);
        else
          broken("good FCS, bad header");
      }
      const auto [r2, a] = step(r, ev, now, rc);
      r = r2;
      on_receiver(a, &*f);
    }
    {
      const auto [r2, a] = step(r, R::event::tick(), now, rc);
      r = r2;
      on_receiver(a, nullptr);
    }
    while (auto f = rev.take(now)) {
      const auto c = w::decode<t::llr_control>(*f);
      if (!c) continue;  // corrupted: as good as lost
      const auto ev = t::llr_event_of<B>(*c);
      if (!ev) continue;
      const auto [s2, a] = step(s, *ev, now, sc);
      s = s2;
      on_sender(a);
    }
    if (s.in_flight > C || used_count != s.in_flight) broken("replay buffer over capacity");
    if (delivered == frames && s.in_flight == 0 && next_app == frames) break;
  }
  if (fail.empty() && (delivered != frames || s.in_flight != 0)) broken("no progress (deadlock)");
  st.delivered = delivered;
  st.resent = s.resent;
  st.nacks = s.nacks;
  st.timeouts = s.timeouts;
  st.duplicates = r.duplicates;
  st.stale = s.stale;
  st.corrupted = fwd.corrupted + rev.corrupted;
  st.lost = fwd.lost + rev.lost;
  return fail;
}

template <unsigned B, std::size_t C>
void sweep(unsigned seeds, unsigned frames, std::uint64_t max_steps, run_stats& total) {
  for (std::uint64_t seed = 1; seed <= seeds; ++seed) {
    std::mt19937_64 pick(seed * 7919 + B * 131 + C);
    const auto rate = [&](unsigned max) { return static_cast<unsigned>(pick() % (max + 1)); };
    const link_model fwd{rate(200), rate(200), rate(200), 250};
    const link_model rev{rate(200), rate(200), rate(200), 250};
    const std::array<std::uint32_t, 4> every{1, 2, 4, 8};
    const t::llr_receiver_config rc{.ack_every = every[pick() % 4], .ack_delay = 200};
    // The retry limit is out of the way: on a link this bad a real one would give up now and
    // then, which is the next test's business; here every frame must get through.
    const t::llr_sender_config sc{.replay_timeout = 1'500, .max_replays = 1'000'000};
    run_stats st;
    const std::string fail = run_lossy_link<B, C>(seed, frames, fwd, rev, sc, rc, max_steps, st);
    CAPTURE(B);
    CAPTURE(C);
    CAPTURE(seed);
    CAPTURE(fwd.loss);
    CAPTURE(fwd.dup);
    CAPTURE(fwd.corrupt);
    CAPTURE(rev.loss);
    CAPTURE(rev.dup);
    CAPTURE(rev.corrupt);
    CAPTURE(st.steps);
    CHECK(fail == "");
    total.steps = std::max(total.steps, st.steps);
    total.delivered += st.delivered;
    total.resent += st.resent;
    total.nacks += st.nacks;
    total.timeouts += st.timeouts;
    total.duplicates += st.duplicates;
    total.corrupted += st.corrupted;
    total.lost += st.lost;
    total.stale += st.stale;
  }
}

TEST_CASE("llr: property: exactly once, in order, bounded, over a lossy link") {
  run_stats total;
  // Narrow sequence spaces wrap hundreds of times; the default width with a wide window.
  sweep<4, 7>(100, 400, 400'000, total);
  sweep<5, 15>(100, 400, 400'000, total);
  sweep<12, 64>(40, 1'000, 400'000, total);
  CAPTURE(total.steps);
  CAPTURE(total.resent);
  CHECK(total.delivered == 100 * 400 * 2 + 40 * 1'000);
  // The link model reached every recovery path.
  CHECK(total.nacks > 0);
  CHECK(total.timeouts > 0);
  CHECK(total.duplicates > 0);
  CHECK(total.corrupted > 0);
  CHECK(total.lost > 0);
}

TEST_CASE("llr: property: a clean link never replays with the default timing") {
  run_stats st;
  const std::string fail = run_lossy_link<12, 256>(1, 5'000, {}, {}, {}, {}, 100'000, st);
  CHECK(fail == "");
  CHECK(st.delivered == 5'000);
  CHECK(st.resent == 0);
  CHECK(st.timeouts == 0);
  CHECK(st.duplicates == 0);
}

TEST_CASE("llr: property: a dead link fails at the retry limit") {
  run_stats st;
  const link_model dead{1'000, 0, 0, 250};
  const t::llr_sender_config sc{.replay_timeout = 1'500, .max_replays = 4};
  const std::string fail = run_lossy_link<12, 16>(3, 10, dead, {}, sc, {}, 100'000, st);
  CHECK(fail == "link failure");
  CHECK(st.delivered == 0);
  // Four replays, then the fifth timeout fails the link: 5 timer periods after the first send.
  CHECK(st.timeouts == 5);
  CHECK(st.steps <= 5 * 1'500 / 10 + 2);
}
}  // namespace
