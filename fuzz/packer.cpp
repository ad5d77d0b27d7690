// The packer: the bytes become pushes of commands of the default profile (some malformed, some
// to a destination or VC that does not exist, some larger than the limit or beyond the pool),
// changes of which {destination, VC} queues flow control lets through, and PDUs pulled, some
// with a bounded cookie span or an output buffer too small. The first two bytes pick the
// packing limit, the order within a VC and the VC weights. At the end everything is drained.
//
// After every push: it is refused exactly when the model says so, with the model's error, and a
// refusal changes nothing. After every PDU: something is sent exactly when an eligible queue
// holds something; it comes from one eligible queue (in arrival order: the one whose head is
// oldest; in round robin: the next after the last served), and from a weighted VC when one is
// ready; its commands are that queue's oldest, in order, within the limit, packed as far as the
// limit, send_now or the cookie span allow; nothing is written past it; and the payload unpacks
// into exactly those commands, byte for byte. The queued counts match the model throughout,
// and at the end every command pushed came out exactly once.
#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "common.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"
#include "scaleup/pack/packer.hpp"

namespace {

using namespace scaleup;
namespace pk = scaleup::pack;

constexpr std::size_t D = 3;   // destinations
constexpr std::size_t V = 4;   // VCs
constexpr std::size_t C = 16;  // pool entries: small, so a full pool is reached
using packer_t = pk::packer<D, V, C>;

constexpr std::array<std::size_t, 8> limits{
    pk::sue_pack_limit, pk::lite_pack_limit, 300, 64, 24, 2048, 512, 128};
constexpr std::size_t out_size = pk::sue_pack_limit + 64;
constexpr std::uint8_t sentinel = 0xEE;

// A command the fuzzer made; its data must stay put while the packer may read it.
struct owned {
  std::array<std::uint8_t, pk::max_control_bytes> control_bytes;
  std::array<std::uint8_t, pk::max_data_bytes + 1> data_bytes;
  std::size_t control_len = 0, data_len = 0;
  std::uint16_t destination = 0;
  std::uint8_t vc = 0;
  bool send_now = false;

  wire::bytes control() const { return {control_bytes.data(), control_len}; }
  wire::bytes data() const { return {data_bytes.data(), data_len}; }
  std::size_t size() const { return control_len + data_len; }
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* bytes, std::size_t size) {
  if (size < 2) return 0;
  fuzz::reader in{bytes, size, 2};

  pk::packer_config<V> cfg;
  cfg.limit = limits[bytes[0] & 7];
  cfg.order = (bytes[0] & 8) ? pk::within_vc::round_robin : pk::within_vc::arrival_order;
  for (std::size_t v = 0; v < V; ++v) cfg.weights[v] = (bytes[1] >> (2 * v)) & 3;
  const auto types = pk::default_profile.types();

  packer_t p(pk::default_profile, cfg);
  // By cookie. One push takes at least one byte, so `size` entries never reallocate: what the
  // packer points into stays put. Kept between inputs so that it is not allocated for each.
  static std::vector<owned> store;
  store.clear();
  store.reserve(size);
  std::array<fuzz::ring<std::uint64_t, C>, D * V> model;  // cookies queued, oldest first
  std::array<std::uint16_t, V> rr_next{};
  std::size_t queued = 0;
  std::uint16_t mask = 0xFFF;  // bit d * V + vc: that queue may send
  std::array<std::uint8_t, out_size> out;
  const std::size_t out_len = cfg.limit + 64;  // the limit and a margin that must stay untouched
  std::array<std::uint64_t, C> cookies{};

  const auto push = [&](std::uint8_t b) {
    const std::uint8_t p1 = in.byte();
    const std::uint8_t p2 = in.byte();
    const std::uint8_t fill = in.byte();
    owned& c = store.emplace_back();
    c.destination = static_cast<std::uint16_t>((p1 >> 4) & 3);  // 3: no such destination
    c.vc = (b >> 3) & 3;
    c.send_now = (b & 0x20) != 0;
    const std::size_t ti = p1 & 15;
    const pk::command_type* t = ti < types.size() ? &types[ti] : nullptr;
    const std::uint8_t code = t ? t->code : ti == 11 ? pk::padding_type : std::uint8_t{0x7E};
    const std::size_t ctrl = t ? t->control_bytes() : 2 + (p2 & 7) * 2;
    std::size_t len = t && t->has_data ? std::size_t{p2} + 1 : 0;
    const bool bad = (b >> 6) == 3;  // break one rule, by p2's low bits
    std::size_t ctrl_len = ctrl;
    if (bad) switch (p2 & 3) {
        case 0:
          len = t && t->has_data ? 0 : 1 + (p2 >> 2);  // no data where needed, or data where not
          break;
        case 1:
          len = t && t->has_data ? pk::max_data_bytes + 1 : len;
          break;
        case 2:
          ctrl_len = (p2 & 0x80) ? 0 : ctrl - 1;  // a control empty or cut short
          break;
        default:
          c.vc = static_cast<std::uint8_t>(V + (p2 >> 2) % 4);
          break;
      }
    c.control_len = ctrl_len;
    for (std::size_t i = 0; i < ctrl_len; ++i)
      c.control_bytes[i] = static_cast<std::uint8_t>(fill + i * (fill | 1));
    if (ctrl_len > 0) c.control_bytes[0] = code;
    c.data_len = len;
    for (std::size_t i = 0; i < len; ++i)
      c.data_bytes[i] = static_cast<std::uint8_t>(fill ^ (store.size() + i));

    // What push must say, in the order it checks.
    wire::errc want = wire::errc::none;
    if (c.destination >= D || c.vc >= V)
      want = wire::errc::value_too_big;
    else if (ctrl_len == 0)
      want = wire::errc::truncated;
    else if (!t)
      want = wire::errc::bad_value;
    else if (ctrl_len != t->control_bytes() ||
             (t->has_data ? (len == 0 || len > pk::max_data_bytes) : len != 0))
      want = wire::errc::bad_length;
    else if (c.size() > cfg.limit)
      want = wire::errc::value_too_big;
    else if (queued == C)
      want = wire::errc::no_space;

    const std::uint64_t cookie = store.size() - 1;
    // The packer copies the control: push it from a copy that is overwritten right after.
    std::array<std::uint8_t, pk::max_control_bytes> passing = c.control_bytes;
    const wire::error e =
        p.push(pk::queued_command{c.destination, c.vc, wire::bytes(passing.data(), c.control_len),
                                  pk::borrow(c.data()), c.send_now, cookie});
    passing.fill(sentinel);
    fuzz::check(e.code == want, "packer: push said other than the model");
    if (e) {
      fuzz::check(p.queued() == queued, "packer: a refused push changed the count");
      return;
    }
    fuzz::check(model[c.destination * V + c.vc].push_back(cookie), "packer: more than the pool");
    ++queued;
  };

  // Pulls one PDU; `cap` bounds the cookies (0: a span as large as the pool).
  const auto pull = [&](std::uint16_t eligible, std::size_t cap) {
    const wire::mutable_bytes buf(out.data(), out_len);
    std::fill(buf.begin(), buf.end(), sentinel);
    const std::span<std::uint64_t> span(cookies.data(), cap == 0 ? C : cap);
    const auto r = p.next(
        buf,
        [&](std::uint16_t d, std::uint8_t vc) {
          fuzz::check(d < D && vc < V, "packer: asked about a queue that does not exist");
          return ((eligible >> (d * V + vc)) & 1) != 0;
        },
        span);
    fuzz::check(r.ok(), "packer: next failed with room");
    std::array<bool, V> ready{};
    bool any = false, weighted = false;
    for (std::size_t i = 0; i < D * V; ++i)
      if (((eligible >> i) & 1) && !model[i].empty()) ready[i % V] = any = true;
    for (std::size_t v = 0; v < V; ++v) weighted = weighted || (ready[v] && cfg.weights[v] > 0);
    fuzz::check((r->commands > 0) == any, "packer: not work conserving");
    fuzz::check(r->bytes <= cfg.limit, "packer: a PDU over the limit");
    for (std::size_t i = r->bytes; i < out_len; ++i)
      fuzz::check(out[i] == sentinel, "packer: wrote past the PDU");
    if (!any) {
      fuzz::check(r->bytes == 0, "packer: bytes with nothing to send");
      return;
    }
    const std::size_t d = r->destination, vc = r->vc;
    fuzz::check(d < D && vc < V, "packer: a PDU for a queue that does not exist");
    fuzz::check(((eligible >> (d * V + vc)) & 1) != 0, "packer: served a queue held back");
    fuzz::check(!weighted || cfg.weights[vc] > 0, "packer: a zero-weight VC served first");
    if (!weighted)  // only zero-weight VCs ready: the lowest goes
      for (std::size_t v = 0; v < vc; ++v) fuzz::check(!ready[v], "packer: not in VC order");
    auto& q = model[d * V + vc];
    fuzz::check(!q.empty(), "packer: served an empty queue");
    if (cfg.order == pk::within_vc::arrival_order) {
      for (std::size_t o = 0; o < D; ++o)
        if (((eligible >> (o * V + vc)) & 1) && !model[o * V + vc].empty())
          fuzz::check(model[o * V + vc].front() >= q.front(), "packer: not the oldest queue");
    } else {
      for (std::size_t k = 0; k < D; ++k) {
        const std::size_t o = (rr_next[vc] + k) % D;
        if (((eligible >> (o * V + vc)) & 1) && !model[o * V + vc].empty()) {
          fuzz::check(o == d, "packer: round robin skipped a queue");
          break;
        }
      }
    }
    rr_next[vc] = static_cast<std::uint16_t>((d + 1) % D);

    fuzz::check(r->commands <= q.size() && r->commands <= span.size(),
                "packer: more commands than queued or than cookies");
    std::size_t total = 0;
    for (std::size_t i = 0; i < r->commands; ++i) {
      fuzz::check(cookies[i] == q[i], "packer: not the queue's oldest, in order");
      const owned& c = store[q[i]];
      fuzz::check(c.destination == d && c.vc == vc, "packer: a command on another queue");
      fuzz::check(i + 1 == r->commands || !c.send_now, "packer: packed past send_now");
      total += c.size();
    }
    fuzz::check(r->bytes == total && total <= cfg.limit, "packer: PDU size wrong or over limit");
    if (r->commands < q.size() && r->commands < span.size() && !store[q[r->commands - 1]].send_now)
      fuzz::check(total + store[q[r->commands]].size() > cfg.limit,
                  "packer: stopped with room for the next command");

    // Round trip: the payload unpacks into exactly the commands pushed.
    pk::unpacker u(pk::default_profile, wire::bytes(out.data(), r->bytes));
    pk::command_view v{};
    std::size_t i = 0;
    while (u.next(v)) {
      fuzz::check(i < r->commands, "packer: unpacked more commands than packed");
      const owned& c = store[q[i]];
      fuzz::check(v.control.size() == c.control_len && v.data.size() == c.data_len,
                  "packer: a command unpacked with other lengths");
      for (std::size_t k = 0; k < c.control_len; ++k) {
        // Byte 1 of a type with data is the data length - 1, whatever the caller put there.
        const std::uint8_t want = k == 1 && v.type->has_data
                                      ? static_cast<std::uint8_t>(c.data_len - 1)
                                      : c.control_bytes[k];
        fuzz::check(v.control[k] == want, "packer: a control byte changed");
      }
      for (std::size_t k = 0; k < c.data_len; ++k)
        fuzz::check(v.data[k] == c.data_bytes[k], "packer: a data byte changed");
      ++i;
    }
    fuzz::check(
        !u.error_found() && u.padding() == 0 && i == r->commands && u.consumed() == r->bytes,
        "packer: the payload does not unpack into what was packed");
    for (std::size_t k = 0; k < r->commands; ++k) q.pop_front();
    queued -= r->commands;
  };

  const auto invariants = [&] {
    fuzz::check(p.queued() == queued, "packer: queued count disagrees");
    for (std::uint16_t d = 0; d < D; ++d)
      for (std::uint8_t vc = 0; vc < V; ++vc)
        fuzz::check(p.queued(d, vc) == model[d * V + vc].size(), "packer: a queue's count");
  };

  while (in.more()) {
    const std::uint8_t b = in.byte();
    switch (b & 7) {
      case 0:
      case 1:
      case 2:
        push(b);
        break;
      case 3:  // eligibility changes: one queue toggled, or all let through, or all held
        if ((b >> 3) < D * V)
          mask = static_cast<std::uint16_t>(mask ^ (1u << (b >> 3)));
        else
          mask = (b >> 3) < 22 ? 0xFFF : 0;
        break;
      case 4: {  // an output buffer smaller than the limit: refused, nothing lost
        const auto r = p.next(wire::mutable_bytes(out.data(), cfg.limit - 1 - (b >> 3) % 8));
        fuzz::check(r.err.code == wire::errc::no_space, "packer: packed into too small a buffer");
        break;
      }
      case 5:  // a PDU with the cookies bounded to 1..3
        pull(mask, 1 + (b >> 3) % 3);
        break;
      default:  // a PDU
        pull(mask, 0);
        break;
    }
    invariants();
  }
  while (queued > 0) {
    pull(0xFFF, 0);
    invariants();
  }
  pull(0xFFF, 0);  // nothing left: nothing sent
  for (const auto& q : model) fuzz::check(q.empty(), "packer: a command never came out");
  return 0;
}
