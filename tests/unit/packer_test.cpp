// The packer and its scheduler (R2 4.2 steps 2-3, 4.3 step 2, 4.5 and Fig. 21): packing per
// {destination, VC} up to the limit without waiting, send_now, the eligibility (flow control)
// hook, weighted round robin across VCs, arrival order or round robin within a VC, push
// errors, and seeded random streams packed then unpacked.
//
// Packers hold a pool of Capacity commands: the tests put them on the heap.
#include <scaleup/pack/command.hpp>
#include <scaleup/pack/default_profile.hpp>
#include <scaleup/pack/packer.hpp>

#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "support.hpp"

namespace {

namespace pk = scaleup::pack;
namespace w = scaleup::wire;
using w::errc;

using scaleup::test::byte_vector;

// A command whose bytes the test owns for as long as the packer may look at them.
struct owned {
  byte_vector control;
  byte_vector data;
  std::uint16_t destination = 0;
  std::uint8_t vc = 0;
  bool send_now = false;
  std::uint64_t cookie = 0;

  pk::queued_command queued() const {
    return pk::queued_command{destination,      vc,       w::bytes(control),
                              pk::borrow(data), send_now, cookie};
  }
  std::size_t size() const { return control.size() + data.size(); }
  // What the packer writes: the control with byte 1 = data length - 1 (types with data), then
  // the data.
  byte_vector wire() const {
    byte_vector v = control;
    if (!data.empty()) v[1] = static_cast<std::uint8_t>(data.size() - 1);
    v.insert(v.end(), data.begin(), data.end());
    return v;
  }
};

// Addresses stay put: a deque never moves what it holds.
class command_store {
 public:
  // A command of the default profile's type `code` with `data_len` data bytes; the control's
  // bytes after the type come from `fill` (byte 1 deliberately wrong for data types).
  const owned& add(std::uint8_t code, std::size_t data_len, std::uint16_t destination,
                   std::uint8_t vc, std::uint64_t cookie, bool send_now = false,
                   std::uint8_t fill = 0x5C) {
    const pk::command_type* t = pk::default_profile.find(code);
    REQUIRE(t != nullptr);
    owned c;
    c.control.resize(t->control_bytes());
    for (std::size_t i = 0; i < c.control.size(); ++i)
      c.control[i] = static_cast<std::uint8_t>(fill + i);
    c.control[0] = code;
    c.data.resize(data_len);
    for (std::size_t i = 0; i < data_len; ++i)
      c.data[i] = static_cast<std::uint8_t>(cookie * 31 + i);
    c.destination = destination;
    c.vc = vc;
    c.send_now = send_now;
    c.cookie = cookie;
    const owned& r = items_.emplace_back(std::move(c));
    by_cookie_.emplace(cookie, &r);  // the first command with a cookie keeps it
    return r;
  }
  const owned& by_cookie(std::uint64_t cookie) const {
    const auto it = by_cookie_.find(cookie);
    REQUIRE(it != by_cookie_.end());
    return *it->second;
  }

 private:
  std::deque<owned> items_;
  std::unordered_map<std::uint64_t, const owned*> by_cookie_;
};

// A full write of exactly `total` bytes (12 bytes of control, then total - 12 of data).
const owned& write_of(command_store& s, std::size_t total, std::uint16_t d, std::uint8_t vc,
                      std::uint64_t cookie) {
  REQUIRE(total > 12);
  REQUIRE(total <= 12 + 256);
  return s.add(pk::code::write_full, total - 12, d, vc, cookie);
}

// One PDU taken from a packer, with its payload and cookies.
struct taken_pdu {
  pk::packed_pdu info;
  byte_vector payload;
  std::vector<std::uint64_t> cookies;
};

template <class Packer, class Eligible = pk::always_eligible>
taken_pdu take(Packer& p, Eligible&& eligible = {}) {
  byte_vector out(p.settings().limit, 0xEE);
  std::vector<std::uint64_t> cookies(4096, ~std::uint64_t{0});
  const auto r = p.next(w::mutable_bytes(out), eligible, std::span<std::uint64_t>(cookies));
  REQUIRE(r.ok());
  REQUIRE(r->bytes <= out.size());
  // Nothing past the payload is written.
  CHECK(std::all_of(out.begin() + static_cast<std::ptrdiff_t>(r->bytes), out.end(),
                    [](std::uint8_t b) { return b == 0xEE; }));
  taken_pdu x{*r, byte_vector(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(r->bytes)),
              std::vector<std::uint64_t>(
                  cookies.begin(), cookies.begin() + static_cast<std::ptrdiff_t>(r->commands))};
  return x;
}

byte_vector wire_of(const command_store& s, const std::vector<std::uint64_t>& cookies) {
  byte_vector v;
  for (const std::uint64_t c : cookies) {
    const byte_vector b = s.by_cookie(c).wire();
    v.insert(v.end(), b.begin(), b.end());
  }
  return v;
}

// The payload unpacks into exactly these commands, with no error and no padding.
void check_unpacks_to(const taken_pdu& x, const command_store& s) {
  pk::unpacker u(pk::default_profile, x.payload);
  pk::command_view v;
  std::size_t i = 0;
  while (u.next(v)) {
    REQUIRE(i < x.cookies.size());
    const owned& c = s.by_cookie(x.cookies[i]);
    const byte_vector want = c.wire();
    CHECK(v.index == i + 1);
    CHECK(v.type->code == c.control[0]);
    CHECK(byte_vector(v.control.begin(), v.control.end()) ==
          byte_vector(want.begin(), want.begin() + static_cast<std::ptrdiff_t>(v.control.size())));
    CHECK(byte_vector(v.data.begin(), v.data.end()) == c.data);
    ++i;
  }
  CHECK_FALSE(u.error_found());
  CHECK(u.padding() == 0);
  CHECK(i == x.cookies.size());
  CHECK(u.consumed() == x.payload.size());
}

template <std::size_t D, std::size_t V = 4, std::size_t C = 256, class S = pk::fixed_storage>
auto make_packer(const pk::packer_config<V>& cfg = {}) {
  return std::make_unique<pk::packer<D, V, C, S>>(pk::default_profile, cfg);
}

std::vector<std::uint64_t> cookies_of(std::initializer_list<std::uint64_t> l) { return l; }

}  // namespace

// ---- Fig. 21 ----------------------------------------------------------------------------------

namespace {

// A..E arrive in order: A to destination 1, B to 2, C to 3, D to 4, E to 3, all on VC0.
template <class Packer>
void push_fig21(Packer& p, command_store& s) {
  const std::uint16_t dest[] = {1, 2, 3, 4, 3};
  for (std::size_t i = 0; i < 5; ++i) {
    const owned& c = s.add(pk::code::write_full_posted, 8 + i, dest[i], 0, 'A' + i);
    REQUIRE_FALSE(p.push(c.queued()));
  }
}

template <class Packer>
void check_fig21_output(Packer& p, const command_store& s) {
  struct want {
    std::uint16_t destination;
    std::vector<std::uint64_t> cookies;
  };
  const want ws[] = {{1, {'A'}}, {2, {'B'}}, {3, {'C', 'E'}}, {4, {'D'}}};
  for (const want& x : ws) {
    CAPTURE(x.destination);
    const taken_pdu got = take(p);
    CHECK(got.info.destination == x.destination);
    CHECK(got.info.vc == 0);
    CHECK(got.info.commands == x.cookies.size());
    CHECK(got.cookies == x.cookies);
    CHECK(got.payload == wire_of(s, x.cookies));
    CHECK(got.info.bytes == got.payload.size());
    check_unpacks_to(got, s);
  }
  CHECK(take(p).info.commands == 0);
  CHECK(p.queued() == 0);
}

}  // namespace

TEST_CASE("packer: Fig. 21, A..E packed into A, B, C+E, D (arrival order)") {
  command_store s;
  auto p = make_packer<5>();
  push_fig21(*p, s);
  CHECK(p->queued() == 5);
  CHECK(p->queued(3, 0) == 2);
  check_fig21_output(*p, s);
}

TEST_CASE("packer: Fig. 21 under within_vc::round_robin gives the same PDUs") {
  // Round robin starts at destination 0 (empty) and then visits 1, 2, 3, 4: the queues happen
  // to be visited in the order their heads arrived, so the output is A, B, C+E, D again. E
  // still rides with C because packing takes the whole queue, whatever the policy.
  command_store s;
  pk::packer_config<4> cfg;
  cfg.order = pk::within_vc::round_robin;
  auto p = make_packer<5>(cfg);
  push_fig21(*p, s);
  check_fig21_output(*p, s);
}

TEST_CASE("packer: Fig. 21 with arrivals interleaved with sending") {
  // The scheduler is work conserving: what is queued when it looks is what it sends.
  command_store s;
  auto p = make_packer<5>();
  const owned& a = s.add(pk::code::write_full_posted, 8, 1, 0, 'A');
  const owned& b = s.add(pk::code::write_full_posted, 9, 2, 0, 'B');
  const owned& c = s.add(pk::code::write_full_posted, 10, 3, 0, 'C');
  const owned& d = s.add(pk::code::write_full_posted, 11, 4, 0, 'D');
  const owned& e = s.add(pk::code::write_full_posted, 12, 3, 0, 'E');
  REQUIRE_FALSE(p->push(a.queued()));
  REQUIRE_FALSE(p->push(b.queued()));
  CHECK(take(*p).cookies == cookies_of({'A'}));
  REQUIRE_FALSE(p->push(c.queued()));
  REQUIRE_FALSE(p->push(d.queued()));
  CHECK(take(*p).cookies == cookies_of({'B'}));
  REQUIRE_FALSE(p->push(e.queued()));
  CHECK(take(*p).cookies == cookies_of({'C', 'E'}));
  CHECK(take(*p).cookies == cookies_of({'D'}));
  CHECK(take(*p).info.commands == 0);
}

// ---- no delay ---------------------------------------------------------------------------------

TEST_CASE("packer: no delay for packing") {
  command_store s;
  auto p = make_packer<2>();
  // Nothing queued: nothing sent.
  CHECK(take(*p).info.commands == 0);
  // A single command goes out on the first next().
  REQUIRE_FALSE(p->push(s.add(pk::code::read, 0, 1, 0, 1).queued()));
  const taken_pdu one = take(*p);
  CHECK(one.info.commands == 1);
  CHECK(one.info.destination == 1);
  CHECK(one.cookies == cookies_of({1}));
  CHECK(one.info.bytes == 12);
  // Whatever is queued is sent at once, never held back for more.
  std::uint64_t cookie = 100;
  for (std::size_t k = 1; k <= 20; ++k) {
    std::vector<std::uint64_t> want;
    for (std::size_t i = 0; i < k; ++i) {
      REQUIRE_FALSE(p->push(s.add(pk::code::message, 1 + i, 0, 0, cookie).queued()));
      want.push_back(cookie++);
    }
    const taken_pdu x = take(*p);
    CHECK(x.cookies == want);
    CHECK(p->queued() == 0);
  }
}

// ---- limits -----------------------------------------------------------------------------------

TEST_CASE("packer: a PDU filled exactly to the limit") {
  struct plan {
    std::size_t limit;
    std::size_t full;  // commands of 268 bytes (256 of data)
    std::size_t last;  // one more command of this size reaches the limit exactly
  };
  // 4096 = 15 x 268 + 76 (SUE, R2 3.3); 1024 = 3 x 268 + 220 (SUE Lite, R2 3.4);
  // 2048 = 7 x 268 + 172 (R2 4.5: "for example 2K").
  const plan plans[] = {
      {pk::sue_pack_limit, 15, 76}, {pk::lite_pack_limit, 3, 220}, {2048, 7, 172}};
  for (const plan& pl : plans) {
    CAPTURE(pl.limit);
    REQUIRE(pl.full * 268 + pl.last == pl.limit);
    command_store s;
    pk::packer_config<4> cfg;
    cfg.limit = pl.limit;
    auto p = make_packer<1>(cfg);
    std::vector<std::uint64_t> first;
    std::uint64_t cookie = 1;
    for (std::size_t i = 0; i < pl.full; ++i) {
      REQUIRE_FALSE(p->push(write_of(s, 268, 0, 0, cookie).queued()));
      first.push_back(cookie++);
    }
    REQUIRE_FALSE(p->push(write_of(s, pl.last, 0, 0, cookie).queued()));
    first.push_back(cookie++);
    // The smallest command of all (a 4-byte barrier) no longer fits.
    REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 0, 0, cookie).queued()));
    const taken_pdu a = take(*p);
    CHECK(a.info.bytes == pl.limit);
    CHECK(a.cookies == first);
    CHECK(a.payload == wire_of(s, first));
    check_unpacks_to(a, s);
    const taken_pdu b = take(*p);
    CHECK(b.cookies == cookies_of({cookie}));
    CHECK(b.info.bytes == 4);
    CHECK(take(*p).info.commands == 0);
  }
}

TEST_CASE("packer: a command that does not fit starts the next PDU") {
  command_store s;
  auto p = make_packer<1>();
  // 15 x 268 + 73 = 4093: three bytes left, a 4-byte barrier does not fit.
  for (std::uint64_t i = 1; i <= 15; ++i)
    REQUIRE_FALSE(p->push(write_of(s, 268, 0, 0, i).queued()));
  REQUIRE_FALSE(p->push(write_of(s, 73, 0, 0, 16).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 0, 0, 17).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 0, 0, 18).queued()));
  const taken_pdu a = take(*p);
  CHECK(a.info.bytes == 4093);
  CHECK(a.info.commands == 16);
  const taken_pdu b = take(*p);
  CHECK(b.cookies == cookies_of({17, 18}));  // the one that did not fit leads the next PDU
  CHECK(b.info.bytes == 8);
}

TEST_CASE("packer: 256-byte data commands") {
  command_store s;
  auto p = make_packer<1>();
  for (std::uint64_t i = 1; i <= 31; ++i)
    REQUIRE_FALSE(p->push(s.add(pk::code::write_full, 256, 0, 0, i).queued()));
  // 15 x 268 = 4020 fits, a 16th would make 4288: 15, 15, then 1.
  const taken_pdu a = take(*p);
  const taken_pdu b = take(*p);
  const taken_pdu c = take(*p);
  CHECK(a.info.commands == 15);
  CHECK(a.info.bytes == 4020);
  CHECK(b.info.commands == 15);
  CHECK(c.info.commands == 1);
  CHECK(c.cookies == cookies_of({31}));
  for (const taken_pdu* x : {&a, &b, &c}) {
    check_unpacks_to(*x, s);
    CHECK(x->payload[1] == 0xFF);  // data length - 1 of the first command
  }
}

TEST_CASE("packer: a command larger than the limit is refused at push") {
  command_store s;
  pk::packer_config<4> cfg;
  cfg.limit = 100;
  auto p = make_packer<1>(cfg);
  const w::error e = p->push(write_of(s, 101, 0, 0, 1).queued());
  CHECK(e.code == errc::value_too_big);
  CHECK(e.layer == "pack");
  CHECK(e.needed == 100);
  CHECK(e.available == 101);
  CHECK(p->queued() == 0);
  CHECK_FALSE(p->push(write_of(s, 100, 0, 0, 2).queued()));  // exactly the limit is fine
  const taken_pdu x = take(*p);
  CHECK(x.info.bytes == 100);
  CHECK(x.cookies == cookies_of({2}));
}

// push checks the framing and the limit with one table built from both (packer::admission):
// every type of the default profile, at every limit from 1 byte to past the largest command,
// with data lengths on both sides of each edge, is taken exactly when check_command passes and
// the command fits the limit; a refusal says which of the two it was.
TEST_CASE("packer: push takes exactly the commands that keep the framing and fit the limit") {
  command_store s;
  std::uint64_t cookie = 0;
  for (std::size_t limit = 1; limit <= 12 + 256 + 8; ++limit) {
    CAPTURE(limit);
    pk::packer_config<4> cfg;
    cfg.limit = limit;
    auto p = make_packer<1>(cfg);
    for (const pk::command_type& t : pk::default_profile.types()) {
      CAPTURE(t.name);
      const std::size_t ctrl = t.control_bytes();
      const std::size_t room = limit > ctrl ? limit - ctrl : 0;
      for (const std::size_t data :
           {std::size_t{0}, std::size_t{1}, std::size_t{2}, room - 1, room, room + 1,
            std::size_t{255}, std::size_t{256}, std::size_t{257}}) {
        if (data > 300) continue;  // room - 1 with no room
        CAPTURE(data);
        const owned& c = s.add(t.code, data, 0, 0, ++cookie);
        const bool framed =
            !pk::check_command(pk::default_profile, w::bytes(c.control), w::bytes(c.data));
        const bool fits = ctrl + data <= limit;
        const w::error e = p->push(c.queued());
        CHECK(!e == (framed && fits));
        if (!framed) {
          CHECK(e.layer == "sue.cmd");
        } else if (!fits) {
          CHECK(e.code == errc::value_too_big);
          CHECK(e.layer == "pack");
          CHECK(e.needed == limit);
          CHECK(e.available == ctrl + data);
        }
        if (!e) {
          const taken_pdu x = take(*p);
          CHECK(x.payload == c.wire());
          CHECK(x.cookies == cookies_of({cookie}));
        }
        CHECK(p->queued() == 0);
      }
    }
  }
}

TEST_CASE("packer: an output buffer smaller than the limit") {
  command_store s;
  auto p = make_packer<1>();
  REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 0, 0, 1).queued()));
  byte_vector small(pk::sue_pack_limit - 1);
  const auto r = p->next(w::mutable_bytes(small));
  CHECK(r.err.code == errc::no_space);
  CHECK(r.err.layer == "pack");
  CHECK(r.err.needed == pk::sue_pack_limit);
  CHECK(r.err.available == pk::sue_pack_limit - 1);
  // Nothing lost.
  CHECK(p->queued() == 1);
  CHECK(take(*p).cookies == cookies_of({1}));
}

TEST_CASE("packer: the cookie span bounds how many commands are packed") {
  command_store s;
  auto p = make_packer<1>();
  for (std::uint64_t i = 1; i <= 5; ++i)
    REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 0, 0, i).queued()));
  byte_vector out(pk::sue_pack_limit);
  std::array<std::uint64_t, 2> two{};
  const auto r = p->next(w::mutable_bytes(out), pk::always_eligible{}, std::span(two));
  REQUIRE(r.ok());
  CHECK(r->commands == 2);
  CHECK(r->bytes == 8);
  CHECK(two == std::array<std::uint64_t, 2>{1, 2});
  CHECK(take(*p).cookies == cookies_of({3, 4, 5}));
}

// ---- send_now ---------------------------------------------------------------------------------

TEST_CASE("packer: send_now closes its PDU") {
  command_store s;
  auto p = make_packer<2>();
  REQUIRE_FALSE(p->push(s.add(pk::code::message, 4, 1, 0, 1).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::message, 4, 1, 0, 2, true).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::message, 4, 1, 0, 3).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::message, 4, 1, 0, 4, true).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::message, 4, 1, 0, 5, true).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::message, 4, 1, 0, 6).queued()));
  CHECK(take(*p).cookies == cookies_of({1, 2}));
  CHECK(take(*p).cookies == cookies_of({3, 4}));
  CHECK(take(*p).cookies == cookies_of({5}));
  CHECK(take(*p).cookies == cookies_of({6}));
  CHECK(take(*p).info.commands == 0);
}

// ---- eligibility ------------------------------------------------------------------------------

TEST_CASE("packer: the eligibility hook holds a queue back, and nothing is lost") {
  command_store s;
  auto p = make_packer<3, 2>();
  // Destination 0 has the oldest commands on VC0 but no credit.
  REQUIRE_FALSE(p->push(s.add(pk::code::read, 0, 0, 0, 1).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::read, 0, 1, 0, 2).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::read, 0, 0, 0, 3).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::read, 0, 2, 0, 4).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::write_response, 0, 0, 1, 5).queued()));
  std::set<std::pair<std::uint16_t, std::uint8_t>> blocked{{0, 0}, {0, 1}};
  std::size_t asked_blocked = 0;
  const auto eligible = [&](std::uint16_t d, std::uint8_t vc) {
    const bool no = blocked.count({d, vc}) > 0;
    asked_blocked += no;
    return !no;
  };
  const taken_pdu a = take(*p, eligible);
  const taken_pdu b = take(*p, eligible);
  CHECK(a.cookies == cookies_of({2}));
  CHECK(b.cookies == cookies_of({4}));
  CHECK(asked_blocked > 0);
  // Nothing eligible: nothing sent, nothing lost.
  for (int i = 0; i < 3; ++i) {
    const taken_pdu none = take(*p, eligible);
    CHECK(none.info.commands == 0);
    CHECK(none.info.bytes == 0);
  }
  CHECK(p->queued() == 3);
  CHECK(p->queued(0, 0) == 2);
  CHECK(p->queued(0, 1) == 1);
  // Credit returns for VC1 only, then for VC0: served in order.
  blocked.erase({0, 1});
  const taken_pdu c = take(*p, eligible);
  CHECK(c.info.vc == 1);
  CHECK(c.cookies == cookies_of({5}));
  CHECK(take(*p, eligible).info.commands == 0);
  blocked.clear();
  const taken_pdu d = take(*p, eligible);
  CHECK(d.info.destination == 0);
  CHECK(d.cookies == cookies_of({1, 3}));
  CHECK(p->queued() == 0);
}

// ---- weighted round robin across VCs ---------------------------------------------------------

namespace {

// Keeps every VC in `busy` backlogged with single-command PDUs (a barrier with send_now) and
// takes `rounds` PDUs; checks after every PDU that each VC's count is within one PDU of its
// share, and exactly its share at the end of every round of sum(weights) PDUs.
void check_wrr(const std::array<std::uint16_t, 4>& weights, const std::array<bool, 4>& busy,
               std::size_t rounds) {
  pk::packer_config<4> cfg;
  cfg.weights = weights;
  auto p = make_packer<2, 4, 64>(cfg);
  command_store s;
  const owned& bar = s.add(pk::code::barrier, 0, 0, 0, 0, true);
  std::uint64_t cookie = 1;
  const auto push = [&](std::uint8_t vc) {
    pk::queued_command q = bar.queued();
    q.vc = vc;
    q.destination = static_cast<std::uint16_t>(cookie % 2);
    q.cookie = cookie++;
    REQUIRE_FALSE(p->push(q));
  };
  std::int64_t total = 0;
  for (std::uint8_t v = 0; v < 4; ++v)
    if (busy[v]) {
      total += weights[v];
      for (int i = 0; i < 8; ++i) push(v);
    }
  REQUIRE(total > 0);
  std::array<std::int64_t, 4> count{};
  std::int64_t worst = 0;  // in units of 1/total PDU
  const std::size_t n_pdus = rounds * static_cast<std::size_t>(total);
  for (std::size_t n = 1; n <= n_pdus; ++n) {
    const taken_pdu x = take(*p);
    REQUIRE(x.info.commands == 1);
    REQUIRE(busy[x.info.vc]);
    ++count[x.info.vc];
    push(x.info.vc);
    for (std::size_t v = 0; v < 4; ++v) {
      if (!busy[v]) continue;
      // |count - n * w / total| <= 1, in integers.
      const std::int64_t dev =
          count[v] * total - static_cast<std::int64_t>(n) * static_cast<std::int64_t>(weights[v]);
      worst = std::max(worst, dev < 0 ? -dev : dev);
      if (n % static_cast<std::size_t>(total) == 0) {
        CAPTURE(n);
        CAPTURE(v);
        REQUIRE(dev == 0);
      }
    }
  }
  CHECK(worst <= total);
  for (std::size_t v = 0; v < 4; ++v)
    CHECK(count[v] == (busy[v] ? static_cast<std::int64_t>(rounds) * weights[v] : 0));
}

}  // namespace

TEST_CASE("packer: WRR shares follow the weights") {
  SUBCASE("1, 2, 3, 4") { check_wrr({1, 2, 3, 4}, {true, true, true, true}, 1000); }
  SUBCASE("1, 1, 1, 1") { check_wrr({1, 1, 1, 1}, {true, true, true, true}, 2500); }
  SUBCASE("7, 1, 1, 3") { check_wrr({7, 1, 1, 3}, {true, true, true, true}, 800); }
  SUBCASE("a VC with no traffic takes no share (work conserving)") {
    check_wrr({1, 2, 3, 4}, {true, true, false, true}, 1400);
  }
  SUBCASE("a lone VC gets everything") {
    check_wrr({1, 2, 3, 4}, {false, false, true, false}, 100);
  }
}

TEST_CASE("packer: a zero-weight VC is served when it is the only one ready") {
  pk::packer_config<4> cfg;
  cfg.weights = {0, 1, 1, 1};
  auto p = make_packer<1>(cfg);
  command_store s;
  for (std::uint64_t i = 1; i <= 5; ++i)
    REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 0, 0, i, true).queued()));
  for (std::uint64_t i = 1; i <= 5; ++i) {
    const taken_pdu x = take(*p);
    CHECK(x.info.vc == 0);
    CHECK(x.cookies == cookies_of({i}));
  }
  // With a weighted VC ready as well, the weighted one goes first.
  for (std::uint64_t i = 10; i < 14; ++i) {
    REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 0, 0, i, true).queued()));
    REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 0, 3, 100 + i, true).queued()));
  }
  for (int i = 0; i < 4; ++i) CHECK(take(*p).info.vc == 3);
  for (int i = 0; i < 4; ++i) CHECK(take(*p).info.vc == 0);
  // All weights zero: VC order, nobody starves.
  pk::packer_config<4> zero;
  zero.weights = {0, 0, 0, 0};
  auto z = make_packer<1>(zero);
  REQUIRE_FALSE(z->push(s.add(pk::code::barrier, 0, 0, 2, 200, true).queued()));
  REQUIRE_FALSE(z->push(s.add(pk::code::barrier, 0, 0, 1, 201, true).queued()));
  CHECK(take(*z).info.vc == 1);
  CHECK(take(*z).info.vc == 2);
  CHECK(take(*z).info.commands == 0);
}

// A weighted VC that comes back from a busy period must still beat a zero-weight VC (once a
// bug: its negative credit from before lost to the zero-weight VC's 0).
TEST_CASE("packer: a zero-weight VC is not served while a weighted VC is ready") {
  pk::packer_config<4> cfg;
  cfg.weights = {0, 1, 5, 1};
  auto p = make_packer<1>(cfg);
  command_store s;
  std::uint64_t cookie = 1;
  const auto push = [&](std::uint8_t vc) {
    REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 0, vc, cookie++, true).queued()));
  };
  // VC1 and VC2 busy together (VC1 ends with credit -2), then VC0 and VC1.
  for (int i = 0; i < 3; ++i) push(2);
  for (int i = 0; i < 3; ++i) push(1);
  for (int i = 0; i < 6; ++i) REQUIRE(take(*p).info.commands == 1);
  for (int i = 0; i < 4; ++i) push(0);
  for (int i = 0; i < 4; ++i) push(1);
  for (int i = 0; i < 4; ++i) CHECK(take(*p).info.vc == 1);
}

// ---- within a VC ------------------------------------------------------------------------------

TEST_CASE("packer: within a VC, arrival order or round robin across destinations") {
  command_store s;
  const auto fill = [&](auto& p) {
    // Destination 2 first, then 0, then 1, then 2 again.
    REQUIRE_FALSE(p.push(s.add(pk::code::read, 0, 2, 0, 1).queued()));
    REQUIRE_FALSE(p.push(s.add(pk::code::read, 0, 0, 0, 2).queued()));
    REQUIRE_FALSE(p.push(s.add(pk::code::read, 0, 1, 0, 3).queued()));
    REQUIRE_FALSE(p.push(s.add(pk::code::read, 0, 2, 0, 4).queued()));
  };
  SUBCASE("arrival order: the queue whose head is oldest") {
    auto p = make_packer<3>();
    fill(*p);
    CHECK(take(*p).cookies == cookies_of({1, 4}));
    CHECK(take(*p).cookies == cookies_of({2}));
    CHECK(take(*p).cookies == cookies_of({3}));
  }
  SUBCASE("round robin: the next destination after the one served last") {
    pk::packer_config<4> cfg;
    cfg.order = pk::within_vc::round_robin;
    auto p = make_packer<3>(cfg);
    fill(*p);
    CHECK(take(*p).cookies == cookies_of({2}));
    CHECK(take(*p).cookies == cookies_of({3}));
    CHECK(take(*p).cookies == cookies_of({1, 4}));
  }
}

TEST_CASE("packer: arrival order stays on an old queue, round robin cycles") {
  // Three single-command PDUs (send_now) per destination, pushed destination by destination.
  const auto run = [](pk::within_vc order) {
    command_store s;
    pk::packer_config<4> cfg;
    cfg.order = order;
    auto p = make_packer<3>(cfg);
    std::uint64_t cookie = 1;
    for (std::uint16_t d = 0; d < 3; ++d)
      for (int i = 0; i < 3; ++i)
        REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, d, 0, cookie++, true).queued()));
    std::string seq;
    for (taken_pdu x = take(*p); x.info.commands > 0; x = take(*p))
      seq += static_cast<char>('0' + x.info.destination);
    return seq;
  };
  CHECK(run(pk::within_vc::arrival_order) == "000111222");
  CHECK(run(pk::within_vc::round_robin) == "012012012");
}

TEST_CASE("packer: round robin skips empty and held-back destinations") {
  command_store s;
  pk::packer_config<4> cfg;
  cfg.order = pk::within_vc::round_robin;
  auto p = make_packer<5>(cfg);
  std::uint64_t cookie = 1;
  for (const std::uint16_t d : {4, 1, 3, 1, 4, 3})
    REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, d, 0, cookie++, true).queued()));
  const auto not3 = [](std::uint16_t d, std::uint8_t) { return d != 3; };
  std::string seq;
  for (int i = 0; i < 4; ++i) seq += static_cast<char>('0' + take(*p, not3).info.destination);
  CHECK(seq == "1414");
  CHECK(take(*p, not3).info.commands == 0);
  CHECK(take(*p).info.destination == 3);
  CHECK(take(*p).info.destination == 3);
}

// ---- push errors ------------------------------------------------------------------------------

TEST_CASE("packer: push errors leave the packer unchanged") {
  command_store s;
  // `p` sees every push, `ref` only the good ones: they must then send the same PDUs.
  auto p = make_packer<3, 2, 6>();
  auto ref = make_packer<3, 2, 6>();
  const auto good = [&](const owned& c) {
    REQUIRE_FALSE(p->push(c.queued()));
    REQUIRE_FALSE(ref->push(c.queued()));
  };
  const auto bad = [&](const pk::queued_command& q) {
    const std::size_t before = p->queued();
    const w::error e = p->push(q);
    CHECK(p->queued() == before);
    return e;
  };
  good(s.add(pk::code::write_full, 10, 1, 0, 1));
  good(s.add(pk::code::read, 0, 2, 1, 2));

  pk::queued_command q = s.add(pk::code::barrier, 0, 0, 0, 90).queued();
  q.destination = 3;
  w::error e = bad(q);
  CHECK(e.code == errc::value_too_big);
  CHECK(e.layer == "pack");
  CHECK(e.value == 3);

  q = s.add(pk::code::barrier, 0, 0, 0, 91).queued();
  q.vc = 2;
  e = bad(q);
  CHECK(e.code == errc::value_too_big);
  CHECK(e.field == "sue.rh.vc");
  CHECK(e.value == 2);

  owned unknown = s.add(pk::code::barrier, 0, 0, 0, 92);
  unknown.control[0] = 0x7E;
  e = bad(unknown.queued());
  CHECK(e.code == errc::bad_value);
  CHECK(e.layer == "sue.cmd");
  CHECK(e.field == "sue.cmd.type");
  CHECK(e.value == 0x7E);

  owned zero = s.add(pk::code::barrier, 0, 0, 0, 93);
  zero.control[0] = 0;
  CHECK(bad(zero.queued()).code == errc::bad_value);

  owned short_ctrl = s.add(pk::code::write_full, 4, 0, 0, 94);
  short_ctrl.control.resize(10);
  e = bad(short_ctrl.queued());
  CHECK(e.code == errc::bad_length);
  CHECK(e.layer == "sue.cmd");
  CHECK(e.needed == 12);
  CHECK(e.available == 10);

  q = s.add(pk::code::write_full, 4, 0, 0, 95).queued();
  q.control = {};
  CHECK(bad(q).code == errc::truncated);

  const owned& rd_data = s.add(pk::code::read, 3, 0, 0, 96);  // a read carries no data
  CHECK(bad(rd_data.queued()).code == errc::bad_length);
  const owned& wr_none = s.add(pk::code::write_full, 0, 0, 0, 97);  // a write must
  CHECK(bad(wr_none.queued()).code == errc::bad_length);
  const owned& wr_257 = s.add(pk::code::write_full, 257, 0, 0, 98);
  CHECK(bad(wr_257.queued()).code == errc::bad_length);

  // Pool full: 6 entries.
  for (std::uint64_t i = 3; i <= 6; ++i) good(s.add(pk::code::message, i, i % 3, 0, i));
  CHECK(p->queued() == 6);
  e = bad(s.add(pk::code::barrier, 0, 0, 0, 99).queued());
  CHECK(e.code == errc::no_space);
  CHECK(e.layer == "pack");

  // Both send the same PDUs.
  bool refilled = false;
  for (;;) {
    const taken_pdu a = take(*p);
    const taken_pdu b = take(*ref);
    CHECK(a.info.destination == b.info.destination);
    CHECK(a.info.vc == b.info.vc);
    CHECK(a.cookies == b.cookies);
    CHECK(a.payload == b.payload);
    if (a.info.commands == 0 || b.info.commands == 0) {
      CHECK(a.info.commands == b.info.commands);
      break;
    }
    // Room again after a PDU went out.
    if (!refilled && p->queued() == 5) {
      refilled = true;
      good(s.add(pk::code::barrier, 0, 2, 1, 50));
      CHECK(p->queued() == 6);
    }
  }
}

// ---- random streams ---------------------------------------------------------------------------

namespace {

struct random_run {
  pk::within_vc order;
  std::size_t limit;
  std::array<std::uint16_t, 4> weights;
  std::uint32_t seed;
};

// D destinations; S: where the packer keeps its tables (heap_storage grows them as used).
template <std::size_t D = 5, class S = pk::fixed_storage>
void run_random(const random_run& rr) {
  constexpr std::size_t V = 4;
  constexpr std::size_t C = 300;
  pk::packer_config<V> cfg;
  cfg.order = rr.order;
  cfg.limit = rr.limit;
  cfg.weights = rr.weights;
  auto p = make_packer<D, V, C, S>(cfg);
  std::mt19937 rng(rr.seed);
  const auto uniform = [&](std::size_t lo, std::size_t hi) {
    return std::uniform_int_distribution<std::size_t>(lo, hi)(rng);
  };
  command_store s;
  // The model: cookies waiting per {destination, VC}, oldest first, with their arrival number.
  std::array<std::deque<std::uint64_t>, D * V> model;
  std::array<std::uint16_t, V> rr_next{};
  std::set<std::uint64_t> out_once;
  std::uint64_t cookie = 1;
  std::size_t pushed = 0;
  std::size_t sent_pdus = 0;
  const auto types = pk::default_profile.types();

  const auto push_random = [&] {
    const pk::command_type& t = types[uniform(0, types.size() - 1)];
    const std::size_t len = t.has_data ? uniform(1, 256) : 0;
    const auto d = static_cast<std::uint16_t>(uniform(0, D - 1));
    const auto vc = static_cast<std::uint8_t>(uniform(0, V - 1));
    // One draw per statement: the same stream whatever order a compiler evaluates arguments in.
    const bool send_now = uniform(0, 9) == 0;
    const auto fill = static_cast<std::uint8_t>(uniform(0, 255));
    const owned& c = s.add(t.code, len, d, vc, cookie++, send_now, fill);
    if (c.size() > rr.limit) {
      CHECK(p->push(c.queued()).code == errc::value_too_big);
      return;
    }
    const w::error e = p->push(c.queued());
    if (p->queued() == C && e) {
      CHECK(e.code == errc::no_space);
      return;
    }
    REQUIRE_FALSE(e);
    model[d * V + vc].push_back(c.cookie);
    ++pushed;
  };

  const auto step = [&](bool all_eligible) {
    // Mostly some queues held back, now and then all of them.
    const bool blackout = !all_eligible && uniform(0, 9) == 0;
    std::array<bool, D * V> mask{};
    for (auto& m : mask) m = all_eligible || (!blackout && uniform(0, 3) != 0);
    const auto eligible = [&](std::uint16_t d, std::uint8_t vc) { return mask[d * V + vc]; };
    const taken_pdu x = take(*p, eligible);
    bool any = false;
    for (std::size_t i = 0; i < D * V; ++i) any = any || (mask[i] && !model[i].empty());
    // Work conserving: something eligible is always sent; nothing eligible, nothing sent.
    REQUIRE((x.info.commands > 0) == any);
    if (!any) return;
    ++sent_pdus;
    const std::size_t d = x.info.destination;
    const std::size_t vc = x.info.vc;
    REQUIRE(d < D);
    REQUIRE(vc < V);
    REQUIRE(mask[d * V + vc]);
    auto& q = model[d * V + vc];
    // Which queue within the VC.
    if (rr.order == pk::within_vc::arrival_order) {
      for (std::size_t o = 0; o < D; ++o)
        if (mask[o * V + vc] && !model[o * V + vc].empty())
          CHECK(model[o * V + vc].front() >= q.front());
    } else {
      for (std::size_t k = 0; k < D; ++k) {
        const std::size_t o = (rr_next[vc] + k) % D;
        if (mask[o * V + vc] && !model[o * V + vc].empty()) {
          CHECK(o == d);
          break;
        }
      }
      rr_next[vc] = static_cast<std::uint16_t>((d + 1) % D);
    }
    // The commands are the queue's oldest, in order: one destination, one VC.
    REQUIRE(x.cookies.size() <= q.size());
    std::size_t bytes = 0;
    for (std::size_t i = 0; i < x.cookies.size(); ++i) {
      REQUIRE(x.cookies[i] == q[i]);
      const owned& c = s.by_cookie(q[i]);
      CHECK(c.destination == d);
      CHECK(c.vc == vc);
      if (i + 1 < x.cookies.size()) CHECK_FALSE(c.send_now);
      bytes += c.size();
      CHECK(out_once.insert(q[i]).second);
    }
    CHECK(x.info.bytes == bytes);
    CHECK(x.info.bytes <= rr.limit);
    // Packed as far as the limit allows: the next one would not fit, or send_now closed it.
    if (x.cookies.size() < q.size() && !s.by_cookie(x.cookies.back()).send_now)
      CHECK(bytes + s.by_cookie(q[x.cookies.size()]).size() > rr.limit);
    CHECK(x.payload == wire_of(s, x.cookies));
    check_unpacks_to(x, s);
    q.erase(q.begin(), q.begin() + static_cast<std::ptrdiff_t>(x.cookies.size()));
  };

  for (int round = 0; round < 400; ++round) {
    const std::size_t arrivals = uniform(0, 12);
    for (std::size_t i = 0; i < arrivals; ++i) push_random();
    const std::size_t sends = uniform(0, 4);
    for (std::size_t i = 0; i < sends; ++i) step(false);
  }
  // Drain with everything eligible.
  while (p->queued() > 0) step(true);
  const taken_pdu last = take(*p);
  CHECK(last.info.commands == 0);
  for (const auto& q : model) CHECK(q.empty());
  CHECK(out_once.size() == pushed);
  CHECK(pushed > 1000);
  CHECK(sent_pdus > 100);
}

}  // namespace

TEST_CASE("packer: random streams pack and unpack exactly once, in order, within the limit") {
  SUBCASE("arrival order, 4096") {
    run_random({pk::within_vc::arrival_order, pk::sue_pack_limit, {1, 1, 1, 1}, 1});
  }
  SUBCASE("round robin, 1024") {
    run_random({pk::within_vc::round_robin, pk::lite_pack_limit, {1, 2, 3, 4}, 2});
  }
  SUBCASE("arrival order, 2048, skewed weights") {
    run_random({pk::within_vc::arrival_order, 2048, {5, 0, 1, 2}, 3});
  }
  SUBCASE("round robin, 300: some commands larger than the limit") {
    run_random({pk::within_vc::round_robin, 300, {1, 1, 1, 1}, 4});
  }
  SUBCASE("arrival order, 200") {
    run_random({pk::within_vc::arrival_order, 200, {2, 1, 2, 1}, 5});
  }
  // Many destinations: arrival order is kept by a heap per VC, searched past held-back queues.
  SUBCASE("arrival order, 40 destinations") {
    run_random<40>({pk::within_vc::arrival_order, pk::sue_pack_limit, {1, 1, 1, 1}, 6});
  }
  SUBCASE("arrival order, 40 destinations, tables grown from the heap") {
    run_random<40, pk::heap_storage>({pk::within_vc::arrival_order, 1024, {1, 3, 1, 1}, 7});
  }
  SUBCASE("round robin, 40 destinations, tables grown from the heap") {
    run_random<40, pk::heap_storage>({pk::within_vc::round_robin, 2048, {1, 1, 2, 1}, 8});
  }
}

// ---- malformed PDUs ---------------------------------------------------------------------------

TEST_CASE("packer: a packed PDU cut or corrupted is caught by the unpacker") {
  command_store s;
  auto p = make_packer<1>();
  REQUIRE_FALSE(p->push(s.add(pk::code::read, 0, 0, 0, 1).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::write_full, 40, 0, 0, 2).queued()));
  REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 0, 0, 3).queued()));
  const taken_pdu x = take(*p);
  REQUIRE(x.info.bytes == 12 + 52 + 4);
  const auto walk_err = [](const byte_vector& b, std::size_t& delivered) {
    pk::unpacker u(pk::default_profile, b);
    pk::command_view v;
    delivered = 0;
    while (u.next(v)) ++delivered;
    return u.error_found();
  };
  std::size_t n = 0;
  SUBCASE("truncated control") {
    const byte_vector b(x.payload.begin(), x.payload.begin() + 12 + 11);
    const w::error e = walk_err(b, n);
    CHECK(n == 1);
    CHECK(e.code == errc::truncated);
    CHECK(e.item == 2);
    CHECK(e.needed == 12);
    CHECK(e.available == 11);
  }
  SUBCASE("truncated data") {
    const byte_vector b(x.payload.begin(), x.payload.begin() + 12 + 51);
    const w::error e = walk_err(b, n);
    CHECK(n == 1);
    CHECK(e.code == errc::truncated);
    CHECK(e.item == 2);
    CHECK(e.needed == 52);
    CHECK(e.available == 51);
  }
  SUBCASE("unknown type") {
    byte_vector b = x.payload;
    b[12 + 52] = 0xC3;
    const w::error e = walk_err(b, n);
    CHECK(n == 2);
    CHECK(e.code == errc::bad_value);
    CHECK(e.item == 3);
    CHECK(e.offset == 64);
  }
  SUBCASE("a wrong data length shifts the framing") {
    byte_vector b = x.payload;
    b[13] = 60;  // 61 bytes announced, 52 - 12 = 40 there
    const w::error e = walk_err(b, n);
    CHECK(n == 1);
    CHECK(e.code == errc::truncated);
    CHECK(e.item == 2);
  }
  SUBCASE("padding with garbage") {
    byte_vector b = x.payload;
    b.insert(b.end(), {0, 0, 0, 0, 0, 0, 0, 0x01, 0, 0});
    const w::error e = walk_err(b, n);
    CHECK(n == 3);
    CHECK(e.code == errc::bad_value);
    CHECK(e.item == 4);
    CHECK(e.offset == 68);
  }
  SUBCASE("clean padding is fine") {
    byte_vector b = x.payload;
    b.resize(b.size() + 10, 0);
    CHECK_FALSE(walk_err(b, n));
    CHECK(n == 3);
  }
}

// ---- what the packer keeps: the control copied, the data borrowed ----------------------------

namespace {

// A vendor's command: a field narrower than its member, so encode can refuse a value.
struct vendor_cmd {
  std::uint8_t type = 0x40;
  std::uint8_t dlen = 0;
  std::uint8_t prio = 0;    // 4 bits
  std::uint16_t flags = 0;  // 12 bits
};

}  // namespace

template <>
struct scaleup::wire::layout<vendor_cmd> {
  using T = vendor_cmd;
  static constexpr std::string_view name = "sue.cmd";
  static constexpr std::string_view title = "Command: a vendor's";
  static constexpr std::string_view seed = "test";
  static constexpr std::size_t size = 4;
  static constexpr auto fields = std::tuple{
      member(&T::type, {.name = "type", .filter = "sue.cmd.type", .bit = 0, .width = 8}),
      member(&T::dlen, {.name = "data length - 1", .filter = "sue.cmd.dlen", .bit = 8, .width = 8}),
      member(&T::prio, {.name = "priority", .filter = "vendor.prio", .bit = 16, .width = 4}),
      member(&T::flags, {.name = "flags", .filter = "vendor.flags", .bit = 20, .width = 12}),
  };
};
static_assert(scaleup::wire::tiles<vendor_cmd>());

namespace {

constexpr std::array<pk::command_type, 1> vendor_types{
    {{0x40, "VENDOR", 2, true, scaleup::wire::field_infos<vendor_cmd>, "a vendor's write"}}};
constexpr pk::profile vendor_profile{"vendor", vendor_types};
static_assert(vendor_profile.check().empty());

// Which data can be borrowed: lvalues and views, never a temporary container.
template <class V>
concept borrowable = requires {
  pk::borrow(std::declval<V>());
};
static_assert(!borrowable<std::vector<std::uint8_t>>);  // borrow(std::vector<uint8_t>{...})
static_assert(!borrowable<std::array<std::uint8_t, 4>>);
static_assert(!borrowable<const std::vector<std::uint8_t>>);
static_assert(borrowable<std::vector<std::uint8_t>&>);
static_assert(borrowable<const std::array<std::uint8_t, 4>&>);
static_assert(borrowable<w::bytes>);  // a span is a view: the caller has said whose bytes
static_assert(!std::is_constructible_v<pk::borrowed, std::vector<std::uint8_t>>);
static_assert(std::is_constructible_v<pk::borrowed, const std::vector<std::uint8_t>&>);
static_assert(!std::is_convertible_v<w::bytes, pk::borrowed>);  // never borrowed unawares
static_assert(!std::is_convertible_v<std::vector<std::uint8_t>&, pk::borrowed>);

// Which controls the packer encodes itself.
static_assert(pk::typed_control<pk::cmd_write> && pk::typed_control<pk::cmd_barrier>);
static_assert(pk::typed_control<vendor_cmd>);
static_assert(!pk::typed_control<w::bytes> && !pk::typed_control<int>);

// The whole path in a constant expression: a typed push, byte 1 set from the data, next().
static_assert([] {
  pk::packer<1, 1, 4> p(pk::default_profile);
  const std::array<std::uint8_t, 2> d{0xD0, 0xD1};
  if (p.push(pk::queued<pk::cmd_write>{.control = {.tag = 0x0102, .addr = 0x0304},
                                       .data = pk::borrow(d)}))
    return false;
  std::array<std::uint8_t, pk::sue_pack_limit> out{};
  const auto r = p.next(out);
  const std::array<std::uint8_t, 14> want{0x04, 0x01, 0x01, 0x02, 0,    0,    0,
                                          0,    0,    0,    0x03, 0x04, 0xD0, 0xD1};
  for (std::size_t i = 0; i < want.size(); ++i)
    if (out[i] != want[i]) return false;
  return r.ok() && r->bytes == 14 && r->commands == 1;
}());

// One command's control decoded back, with the data that followed it.
template <class T>
std::pair<T, byte_vector> read_back(const pk::command_view& v) {
  const auto c = w::decode<T>(v.control);
  REQUIRE(c.ok());
  return {c.value, scaleup::test::bytes_of(v.data)};
}

}  // namespace

TEST_CASE("packer: controls pushed from temporaries come out intact") {
  // Each control is a temporary that ends with its push: a packer that kept a pointer to it
  // would send every command with whatever the stack holds last (ASan: stack-use-after-scope).
  auto p = make_packer<2>();
  std::array<byte_vector, 24> data;  // borrowed: each stays put until packed
  for (std::uint16_t i = 0; i < data.size(); ++i) {
    data[i] = scaleup::test::ramp(1 + 5 * i, static_cast<std::uint8_t>(0x10 * i));
    REQUIRE_FALSE(
        p->push({.destination = static_cast<std::uint16_t>(i % 2),
                 .control = w::to_bytes(pk::cmd_write{.tag = static_cast<std::uint16_t>(0x100 + i),
                                                      .addr = 0xA000u + i})
                                .value,
                 .data = pk::borrow(data[i]),
                 .cookie = i}));
  }
  std::size_t seen = 0;
  for (int k = 0; k < 2; ++k) {
    const taken_pdu got = take(*p);
    REQUIRE(got.info.commands == data.size() / 2);
    pk::unpacker u(pk::default_profile, got.payload);
    for (pk::command_view v; u.next(v); ++seen) {
      const std::uint64_t i = got.cookies[v.index - 1];
      CAPTURE(i);
      CHECK(i % 2 == got.info.destination);
      const auto [c, d] = read_back<pk::cmd_write>(v);
      CHECK(c == pk::cmd_write{.dlen = static_cast<std::uint8_t>(data[i].size() - 1),
                               .tag = static_cast<std::uint16_t>(0x100 + i),
                               .addr = 0xA000u + i});
      CHECK(d == data[i]);
    }
    CHECK_FALSE(u.error_found());
  }
  CHECK(seen == data.size());
}

TEST_CASE("packer: a control's bytes may change after push; data may not, and is read at next") {
  auto p = make_packer<1>();
  std::array<std::uint8_t, 12> ctrl = w::to_bytes(pk::cmd_write{.tag = 0x0A0B}).value;
  std::array<std::uint8_t, 3> data{1, 2, 3};
  REQUIRE_FALSE(p->push({.control = ctrl, .data = pk::borrow(data)}));
  ctrl.fill(0xEE);  // the packer has its copy
  data[2] = 9;      // borrowed: the packer reads it when it packs
  const taken_pdu got = take(*p);
  // Written by hand: WR_FULL, data length - 1 = 2, tag 0A0B, address 0, then the data.
  CHECK(got.payload == byte_vector{0x04, 0x02, 0x0A, 0x0B, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 9});
}

TEST_CASE("packer: typed commands of every shape are encoded into the pool") {
  auto p = make_packer<1>();
  const byte_vector d4{0xD0, 0xD1, 0xD2, 0xD3};
  const byte_vector d8 = scaleup::test::ramp(8, 0x80);
  REQUIRE_FALSE(p->push(pk::queued<pk::cmd_write>{
      .control = {.tag = 0x1234, .addr = 0x1000}, .data = pk::borrow(d4), .cookie = 1}));
  REQUIRE_FALSE(p->push(
      pk::queued<pk::cmd_read>{.control = {.dlen = 63, .tag = 2, .addr = 0x40}, .cookie = 2}));
  REQUIRE_FALSE(p->push(pk::queued<pk::cmd_write_partial>{
      .control = {.tag = 3, .addr = 0x2000, .be_first = 0x0F, .be_last = 0xF0},
      .data = pk::borrow(d8),
      .cookie = 3}));
  REQUIRE_FALSE(
      p->push(pk::queued<pk::cmd_response>{.control = {.tag = 4, .status = 2}, .cookie = 4}));
  REQUIRE_FALSE(p->push(pk::queued<pk::cmd_message>{
      .control = {.tag = 5, .queue = 0x77}, .data = pk::borrow(d4), .cookie = 5}));
  REQUIRE_FALSE(p->push(pk::queued<pk::cmd_barrier>{.control = {.tag = 6}, .cookie = 6}));
  REQUIRE_FALSE(p->push(pk::queued<pk::cmd_atomic>{
      .control = {.tag = 7, .op = 2, .addr = 0x3000}, .data = pk::borrow(d8), .cookie = 7}));
  CHECK(p->queued() == 7);

  const taken_pdu got = take(*p);
  CHECK(got.cookies == cookies_of({1, 2, 3, 4, 5, 6, 7}));
  // The first command by hand: type 04, data length - 1 = 3 (from the data, not the struct),
  // tag 12 34, address 00 00 00 00 00 00 10 00, then the data.
  REQUIRE(got.payload.size() > 16);
  CHECK(byte_vector(got.payload.begin(), got.payload.begin() + 16) ==
        byte_vector{0x04, 0x03, 0x12, 0x34, 0, 0, 0, 0, 0, 0, 0x10, 0, 0xD0, 0xD1, 0xD2, 0xD3});
  pk::unpacker u(pk::default_profile, got.payload);
  pk::command_view v;
  REQUIRE(u.next(v));
  CHECK(read_back<pk::cmd_write>(v) ==
        std::pair{pk::cmd_write{.dlen = 3, .tag = 0x1234, .addr = 0x1000}, d4});
  REQUIRE(u.next(v));
  CHECK(read_back<pk::cmd_read>(v) ==
        std::pair{pk::cmd_read{.dlen = 63, .tag = 2, .addr = 0x40}, byte_vector{}});
  REQUIRE(u.next(v));
  CHECK(read_back<pk::cmd_write_partial>(v) ==
        std::pair{pk::cmd_write_partial{
                      .dlen = 7, .tag = 3, .addr = 0x2000, .be_first = 0x0F, .be_last = 0xF0},
                  d8});
  REQUIRE(u.next(v));
  CHECK(read_back<pk::cmd_response>(v) ==
        std::pair{pk::cmd_response{.tag = 4, .status = 2}, byte_vector{}});
  REQUIRE(u.next(v));
  CHECK(read_back<pk::cmd_message>(v) ==
        std::pair{pk::cmd_message{.dlen = 3, .tag = 5, .queue = 0x77}, d4});
  REQUIRE(u.next(v));
  CHECK(read_back<pk::cmd_barrier>(v) == std::pair{pk::cmd_barrier{.tag = 6}, byte_vector{}});
  REQUIRE(u.next(v));
  CHECK(read_back<pk::cmd_atomic>(v) ==
        std::pair{pk::cmd_atomic{.dlen = 7, .tag = 7, .op = 2, .addr = 0x3000}, d8});
  CHECK_FALSE(u.next(v));
  CHECK_FALSE(u.error_found());
}

TEST_CASE("packer: a typed push and a push of its bytes pack the same") {
  auto typed = make_packer<1>();
  auto raw = make_packer<1>();
  const byte_vector d = scaleup::test::ramp(200, 3);
  for (std::uint16_t i = 0; i < 30; ++i) {
    const pk::cmd_atomic c{.tag = i, .op = static_cast<std::uint8_t>(i % 8), .addr = i * 8u};
    const pk::borrowed data = pk::borrow(w::bytes(d).first(1 + i));
    REQUIRE_FALSE(typed->push(pk::queued<pk::cmd_atomic>{.control = c, .data = data}));
    REQUIRE_FALSE(raw->push({.control = w::to_bytes(c).value, .data = data}));
  }
  for (;;) {
    const taken_pdu a = take(*typed);
    const taken_pdu b = take(*raw);
    CHECK(a.payload == b.payload);
    CHECK(a.info.commands == b.info.commands);
    if (a.info.commands == 0) break;
  }
}

TEST_CASE("packer: typed push errors, in the order of a push of bytes") {
  auto p = std::make_unique<pk::packer<2, 2, 3>>(vendor_profile);
  const byte_vector d{1, 2};
  const auto q = [&](vendor_cmd c) {
    return pk::queued<vendor_cmd>{.control = c, .data = pk::borrow(d)};
  };

  // A value too big for its 4-bit field: encode's error, naming the field.
  w::error e = p->push(q({.prio = 16}));
  CHECK(e.code == errc::value_too_big);
  CHECK(e.field == "vendor.prio");
  CHECK(e.value == 16);
  CHECK(p->queued() == 0);
  // Not in the profile.
  e = p->push(q({.type = 0x41}));
  CHECK(e.code == errc::bad_value);
  CHECK(e.field == "sue.cmd.type");
  // The type carries data: none is refused.
  e = p->push(pk::queued<vendor_cmd>{});
  CHECK(e.code == errc::bad_length);
  CHECK(e.field == "sue.cmd.data_len");
  // No such destination or VC.
  auto bad_queue = q({});
  bad_queue.destination = 2;
  CHECK(p->push(bad_queue).code == errc::value_too_big);
  bad_queue.destination = 0;
  bad_queue.vc = 2;
  CHECK(p->push(bad_queue).field == "sue.rh.vc");
  CHECK(p->queued() == 0);

  // The pool (3 entries) fills: then a good command is refused for room, a bad one for what is
  // wrong with it, as if there were room.
  for (std::uint8_t i = 0; i < 3; ++i) REQUIRE_FALSE(p->push(q({.prio = i})));
  e = p->push(q({.prio = 3}));
  CHECK(e.code == errc::no_space);
  CHECK(e.layer == "pack");
  e = p->push(q({.prio = 16}));
  CHECK(e.code == errc::value_too_big);
  CHECK(e.field == "vendor.prio");
  CHECK(p->push(q({.type = 0x41})).code == errc::bad_value);
  CHECK(p->push(bad_queue).field == "sue.rh.vc");
  CHECK(p->queued() == 3);

  // What went in comes out: the vendor's layout, priorities 0, 1, 2.
  const taken_pdu got = take(*p);
  CHECK(got.payload == byte_vector{0x40, 0x01, 0x00, 0x00, 1, 2, 0x40, 0x01, 0x10, 0x00, 1, 2, 0x40,
                                   0x01, 0x20, 0x00, 1, 2});
}

TEST_CASE("packer: a control longer than a tx_control is refused, even from a broken profile") {
  // 10 units break the framing rules (check() says so); the packer's copy holds 18 bytes.
  static constexpr std::array<pk::command_type, 1> wide{{{0x41, "WIDE", 10, false}}};
  static constexpr pk::profile broken{"broken", wide};
  static_assert(!broken.check().empty());
  auto p = std::make_unique<pk::packer<1, 1, 4>>(broken);
  byte_vector ctrl(20, 0);
  ctrl[0] = 0x41;
  const w::error e = p->push({.control = ctrl});
  CHECK(e.code == errc::bad_length);
  CHECK(e.needed == pk::max_control_bytes);
  CHECK(e.available == 20);
  CHECK(p->queued() == 0);
}

namespace {

// A type for each control length a tx_control allows, 2 to 18 bytes (1 to 9 units), the odd
// ones with data: the packer copies controls of 8 to 16 bytes as two 8-byte moves at run time and
// byte by byte in a constant expression, the others piece by piece; every length must come out
// as it went in, either way.
constexpr std::array<pk::command_type, 9> every_length_types{{
    {0x51, "L2", 1, true},
    {0x52, "L4", 2, false},
    {0x53, "L6", 3, true},
    {0x54, "L8", 4, false},
    {0x55, "L10", 5, true},
    {0x56, "L12", 6, false},
    {0x57, "L14", 7, true},
    {0x58, "L16", 8, false},
    {0x59, "L18", 9, true},
}};
constexpr pk::profile every_length{"every length", every_length_types};

// Control k (k = 0..8): type 0x51 + k, then bytes 0x10 * (k + 1) + i; data of k + 1 bytes for
// the types with data. The bytes expected are built by hand: each control with byte 1 the data
// length - 1, then its data (0xA0 + i).
constexpr std::array<std::uint8_t, 32> every_length_data = [] {
  std::array<std::uint8_t, 32> d{};
  for (std::size_t i = 0; i < d.size(); ++i) d[i] = static_cast<std::uint8_t>(0xA0 + i);
  return d;
}();
constexpr std::array<std::uint8_t, 18> every_length_control(std::size_t k) {
  std::array<std::uint8_t, 18> c{};
  for (std::size_t i = 0; i < c.size(); ++i) c[i] = static_cast<std::uint8_t>(0x10 * (k + 1) + i);
  c[0] = static_cast<std::uint8_t>(0x51 + k);
  return c;
}
struct packed_every_length {
  std::array<std::uint8_t, 512> payload{};
  std::size_t bytes = 0, commands = 0;
  friend constexpr bool operator==(const packed_every_length&,
                                   const packed_every_length&) = default;
};
constexpr packed_every_length pack_every_length(pk::packer<1, 1, 16>& p) {
  std::array<std::array<std::uint8_t, 18>, 9> controls{};
  for (std::size_t k = 0; k < 9; ++k) {
    controls[k] = every_length_control(k);
    const std::size_t n = 2 * (k + 1);
    const bool data = k % 2 == 0;
    if (p.push({.control = w::bytes(controls[k].data(), n),
                .data = pk::borrow(w::bytes(every_length_data.data(), data ? k + 1 : 0))}))
      return {};
    controls[k].fill(0);  // the pool holds its own copy
  }
  std::array<std::uint8_t, 4096> out{};
  const auto r = p.next(out);
  packed_every_length x;
  if (!r) return x;
  for (std::size_t i = 0; i < r->bytes && i < x.payload.size(); ++i) x.payload[i] = out[i];
  x.bytes = r->bytes;
  x.commands = r->commands;
  return x;
}
constexpr packed_every_length expected_every_length() {
  packed_every_length x;
  for (std::size_t k = 0; k < 9; ++k) {
    const auto c = every_length_control(k);
    const std::size_t n = 2 * (k + 1), d = k % 2 == 0 ? k + 1 : 0;
    for (std::size_t i = 0; i < n; ++i) x.payload[x.bytes + i] = c[i];
    if (d) x.payload[x.bytes + 1] = static_cast<std::uint8_t>(d - 1);
    for (std::size_t i = 0; i < d; ++i) x.payload[x.bytes + n + i] = every_length_data[i];
    x.bytes += n + d;
    ++x.commands;
  }
  return x;
}
}  // namespace

static_assert(every_length.check().empty());
static_assert([] {
  pk::packer<1, 1, 16> p(every_length);
  return pack_every_length(p);
}() == expected_every_length());

TEST_CASE("packer: controls of every length from 2 to 18 bytes come out as they went in") {
  // At run time (the same at compile time above).
  auto p = std::make_unique<pk::packer<1, 1, 16>>(every_length);
  const packed_every_length got = pack_every_length(*p);
  const packed_every_length want = expected_every_length();
  CHECK(want.commands == 9);
  CHECK(want.bytes == 2 + 4 + 6 + 8 + 10 + 12 + 14 + 16 + 18 + 1 + 3 + 5 + 7 + 9);
  CHECK(got.commands == want.commands);
  CHECK(got.bytes == want.bytes);
  CHECK(got.payload == want.payload);
  // And a typed control of 12 bytes, encoded into the pool.
  auto typed = make_packer<1>();
  const byte_vector d{1, 2, 3};
  REQUIRE_FALSE(typed->push(pk::queued<pk::cmd_write>{
      .control = {.tag = 0xBEEF, .addr = 0x0102030405060708}, .data = pk::borrow(d)}));
  CHECK(take(*typed).payload ==
        byte_vector{0x04, 0x02, 0xBE, 0xEF, 1, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3});
}

// ---- storage, the packed-command callback, taking a queue out ---------------------------------

TEST_CASE("packer: heap storage grows with the destinations used, not the bound") {
  // 1023 destinations allowed, 3 used: the tables hold those three (and the pool what is queued).
  using wide = pk::packer<1023, 4, 4096, pk::heap_storage>;
  using fixed = pk::packer<1023, 4, 4096>;
  command_store s;
  auto p = std::make_unique<wide>(pk::default_profile);
  const std::size_t empty = p->memory();
  for (std::uint64_t i = 0; i < 30; ++i)
    REQUIRE_FALSE(
        p->push(s.add(pk::code::barrier, 0, static_cast<std::uint16_t>(i % 3), 0, i).queued()));
  CHECK(p->queued() == 30);
  CHECK(p->memory() > empty);
  CHECK(p->memory() < 16 * 1024);
  CHECK(p->memory() * 40 < sizeof(fixed));  // the fixed tables: every queue, the whole pool
  // A destination far up the range grows the queue table up to it, and no further.
  REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 1022, 1, 99).queued()));
  CHECK(p->queued(1022, 1) == 1);
  CHECK(p->queued(1022, 0) == 0);
  CHECK(p->queued(1023, 0) == 0);  // out of range: nothing, not a read past the table
  std::size_t n = 0;
  for (taken_pdu x = take(*p); x.info.commands > 0; x = take(*p)) n += x.info.commands;
  CHECK(n == 31);
}

TEST_CASE("packer: heap storage refuses a command when the allocator has nothing left") {
  // An allocator that gives out a fixed budget, then null.
  struct budget {
    std::size_t left;
  } b{3000};
  const pk::allocator a{&b,
                        [](void* c, std::size_t n) -> void* {
                          auto* bb = static_cast<budget*>(c);
                          if (n > bb->left) return nullptr;
                          bb->left -= n;
                          return std::malloc(n);
                        },
                        [](void*, void* p, std::size_t) { std::free(p); }};
  command_store s;
  pk::packer<64, 4, 4096, pk::heap_storage> p(pk::default_profile, {}, a);
  std::size_t taken = 0;
  w::error e{};
  for (std::uint64_t i = 0; i < 1000 && !e; ++i) {
    e = p.push(s.add(pk::code::barrier, 0, static_cast<std::uint16_t>(i % 64), 0, i).queued());
    taken += !e;
  }
  CHECK(e.code == errc::no_space);
  CHECK(taken > 0);
  CHECK(p.queued() == taken);
  std::size_t n = 0;
  for (taken_pdu x = take(p); x.info.commands > 0; x = take(p)) n += x.info.commands;
  CHECK(n == taken);  // what was taken is all there
}

TEST_CASE("packer: packed cookies can go to a call, without a bound on their count") {
  command_store s;
  auto p = make_packer<2, 1, 2048>();
  for (std::uint64_t i = 1; i <= 1100; ++i)
    REQUIRE_FALSE(p->push(s.add(pk::code::barrier, 0, 1, 0, i).queued()));
  std::array<std::uint8_t, pk::sue_pack_limit> out{};
  std::vector<std::uint64_t> got;
  const auto r = p->next(out, pk::always_eligible{}, [&](std::uint64_t c) { got.push_back(c); });
  REQUIRE(r);
  CHECK(r->commands == pk::sue_pack_limit / 4);  // 1024 barriers of 4 bytes fill the PDU
  REQUIRE(got.size() == r->commands);
  for (std::size_t i = 0; i < got.size(); ++i) CHECK(got[i] == i + 1);
}

TEST_CASE("packer: a queue taken out comes out whole and in order, and the rest is untouched") {
  command_store s;
  auto p = make_packer<3, 2, 64>();
  auto q = make_packer<3, 2, 64>();
  for (std::uint64_t i = 1; i <= 9; ++i)
    REQUIRE_FALSE(p->push(s.add(pk::code::write_full, i, static_cast<std::uint16_t>(i % 3),
                                static_cast<std::uint8_t>(i % 2), i)
                              .queued()));
  // {1, 1}: cookies 1 and 7; moved to q, as a caller re-pinning a stream would.
  std::vector<std::uint64_t> moved;
  const std::size_t n = p->drain(1, 1, [&](const pk::queued_command& c) {
    moved.push_back(c.cookie);
    CHECK(c.destination == 1);
    CHECK(c.vc == 1);
    REQUIRE_FALSE(q->push(c));
  });
  CHECK(n == 2);
  CHECK(moved == std::vector<std::uint64_t>{1, 7});
  CHECK(p->queued() == 7);
  CHECK(p->queued(1, 1) == 0);
  CHECK(p->drain(1, 1, [](const pk::queued_command&) { FAIL("empty"); }) == 0);
  const taken_pdu x = take(*q);
  CHECK(x.cookies == cookies_of({1, 7}));
  CHECK(x.payload == wire_of(s, x.cookies));  // controls rebuilt byte for byte
  std::size_t left = 0;
  for (taken_pdu y = take(*p); y.info.commands > 0; y = take(*p)) {
    CHECK(!(y.info.destination == 1 && y.info.vc == 1));
    left += y.info.commands;
  }
  CHECK(left == 7);
}
