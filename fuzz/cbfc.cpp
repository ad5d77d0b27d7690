// Credit-based flow control: the bytes drive a CBFC sender and receiver. Data frames travel in
// order on the link; credit updates cross a small channel of slots that loses, duplicates and
// reorders them (each travels as its 4 encoded bytes). The first three bytes pick the cell size,
// the VC-to-class map, counters starting near the 2^24 wrap, the buffers and the update timing.
//
// After every step, for each class a VC uses (all 32 at the end): the sender's credit plus what
// is on the link plus what the receiver holds never exceeds the class's buffer (so credits never
// go negative and never pass the configured limit, and the receiver never overflows); what the
// sender consumed equals what the receiver freed plus what it holds plus what is on the link;
// the sender's limit never runs ahead of the receiver's. A send is accepted exactly when
// can_send said so and takes exactly its cost; a refusal, an impossible VC, class or limit, and
// a stale or repeated update change nothing; a true update is never refused; a rogue frame
// beyond the credits granted is dropped whole; an update due is never withheld and the tick
// asked for is never in the past; the counters add up. At the end, with the link drained and a
// refresh due, every class has its whole buffer as credit again.
#include <array>
#include <cstddef>
#include <cstdint>

#include "common.hpp"
#include "scaleup/transport/cbfc.hpp"
#include "scaleup/wire/field.hpp"

namespace {

using namespace scaleup;
using namespace scaleup::transport;

struct frame {
  std::uint8_t cls = 0;
  std::size_t bytes = 0;
};

struct update_slot {
  bool used = false;
  std::array<std::uint8_t, 4> bytes{};  // the encoded update
  std::uint64_t born = 0;               // the class's credits freed (absolute) when it was sent
};

// An update older than this many freed credits has left the network: absolute limits are
// compared modulo 2^24, so they are only unambiguous within half of that.
constexpr std::uint64_t max_update_age = std::uint64_t{1} << 22;

constexpr std::array<std::array<std::uint8_t, cbfc_vcs>, 4> vc_classes{{
    {0, 1, 2, 3},
    {7, 7, 20, 31},  // two VCs share a class
    {0, 0, 1, 1},
    {31, 0, 31, 5},
}};
constexpr std::array<std::uint32_t, 4> cells{64, 1, 256, 0};  // 0 counts bytes, as 1
constexpr std::array<std::uint32_t, 4> starts{0, 0xFFFF00, 0x7FFFF0, 0xFFFFFF};
constexpr std::array<std::uint64_t, 4> refreshes{0, 100, 400, 2'000};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  fuzz::reader in{data, size, 3};

  cbfc_receiver_config rc;
  rc.link.cell_bytes = cells[data[0] & 3];
  rc.link.vc_class = vc_classes[(data[0] >> 2) & 3];
  const std::uint32_t start = starts[(data[0] >> 4) & 3];
  rc.refresh = refreshes[data[0] >> 6];
  const std::uint32_t per_cell = rc.link.cell_bytes == 1 || rc.link.cell_bytes == 0 ? 64 : 1;
  rc.capacity = {};
  for (std::size_t v = 0; v < cbfc_vcs; ++v)
    rc.capacity[rc.link.vc_class[v]] =
        (1 + (data[1] & 0x3f) + 7 * static_cast<std::uint32_t>(v)) * per_cell;
  rc.threshold = (data[2] & 0x1f) * per_cell;
  rc.max_delay = (data[2] >> 5) * 25;
  fuzz::check(!rc.check(), "cbfc: a configuration the fuzzer built is refused");

  cbfc_sender s;
  s.cfg = rc.link;
  cbfc_receiver r;
  r.cfg = rc;
  for (std::size_t c = 0; c < cbfc_classes; ++c) {
    s.consumed[c] = s.limit[c] = start;
    r.freed[c] = start;
  }

  // The classes the VCs map to; the others are checked at the end (nothing may touch them).
  std::array<std::uint8_t, cbfc_vcs> used{};
  std::size_t n_used = 0;
  for (const std::uint8_t c : rc.link.vc_class) {
    bool seen = false;
    for (std::size_t i = 0; i < n_used; ++i) seen = seen || used[i] == c;
    if (!seen) used[n_used++] = c;
  }

  fuzz::ring<frame, 64> link;                         // data frames on their way, in order
  std::array<std::uint32_t, cbfc_classes> on_link{};  // their credits, per class
  std::array<fuzz::ring<std::size_t, 128>, cbfc_vcs> buffered;  // frames held, per VC
  std::array<std::uint64_t, cbfc_classes> freed_abs{};
  std::array<update_slot, 8> channel{};
  std::size_t put_at = 0;
  std::uint64_t now = 0;
  std::uint64_t accepted = 0, refused = 0, bad = 0, arrived = 0, overflows = 0;

  const auto on_receiver = [&](const cbfc_receiver_actions& a) {
    fuzz::check(a.update_count <= cbfc_classes, "cbfc: more updates than classes");
    for (std::size_t k = 0; k < a.update_count; ++k) {
      const cbfc_update& u = a.updates[k];
      fuzz::check(u.cls < cbfc_classes && rc.capacity[u.cls] != 0,
                  "cbfc: an update for a class without a buffer");
      fuzz::check(u.limit == r.limit(u.cls), "cbfc: an update other than the current limit");
      const auto img = wire::to_bytes(u);
      fuzz::check(img.ok(), "cbfc: an update does not encode");
      channel[put_at++ % channel.size()] = update_slot{true, *img, freed_abs[u.cls]};
    }
    fuzz::check(a.next_deadline == cbfc_never || a.next_deadline > now,
                "cbfc: the receiver asks for a tick in the past");
    for (std::size_t i = 0; i < n_used; ++i) {
      const std::uint8_t c = used[i];
      const std::uint32_t pending = r.unsent(c);
      fuzz::check(pending == 0 || pending < rc.threshold, "cbfc: an update withheld");
      if (pending > 0)
        fuzz::check(a.next_deadline <= r.sent_at[c] + rc.max_delay,
                    "cbfc: no tick asked for freed credits");
    }
  };

  const auto receive = [&](const cbfc_receiver_event& e) {
    const auto [r2, a] = step(r, e, now);
    r = r2;
    on_receiver(a);
    return a;
  };

  const auto send = [&](std::uint8_t vc, std::size_t bytes) {
    std::size_t frames = link.size();  // every frame must fit in `buffered` once it arrives
    for (const auto& q : buffered) frames += q.size();
    if (link.full() || frames >= 128) return;
    const cbfc_sender prev = s;
    const bool could = s.can_send(vc, bytes);
    const auto [s2, a] = step(s, cbfc_send(vc, bytes), now);
    s = s2;
    fuzz::check(could == !a.err, "cbfc: a send disagrees with can_send");
    if (a.err) {
      fuzz::check(a.err.code == wire::errc::no_space, "cbfc: a send refused for another reason");
      fuzz::check(s.consumed == prev.consumed && s.limit == prev.limit,
                  "cbfc: a refused send changed the credits");
      ++refused;
      return;
    }
    const std::uint64_t cost = rc.link.cost(bytes);
    fuzz::check(a.credits == cost && a.cls == rc.link.vc_class[vc],
                "cbfc: a send took other credits");
    fuzz::check(prev.available(a.cls) >= cost, "cbfc: a send without credit");
    fuzz::check(s.available(a.cls) == prev.available(a.cls) - cost,
                "cbfc: credits not taken exactly");
    ++accepted;
    on_link[a.cls] += a.credits;
    (void)link.push_back(frame{a.cls, bytes});
  };

  const auto deliver_update = [&](const std::array<std::uint8_t, 4>& img) {
    const auto u = wire::decode<cbfc_update>(wire::bytes(img));
    fuzz::check(u.ok(), "cbfc: an update does not decode");
    const cbfc_sender prev = s;
    const auto [s2, a] = step(s, cbfc_credit(*u), now);
    s = s2;
    fuzz::check(!a.err, "cbfc: a true update refused");
    fuzz::check(s.available(u->cls) == prev.available(u->cls) + a.credits,
                "cbfc: an update gained other than it said");
    if (a.stale || a.credits == 0)
      fuzz::check(s.limit == prev.limit, "cbfc: a stale or repeated update changed the limit");
  };

  const auto check_class = [&](std::uint8_t c) {
    const std::uint64_t avail = s.available(c);
    fuzz::check(r.occupied[c] <= rc.capacity[c], "cbfc: the receiver holds more than its buffer");
    fuzz::check(avail + on_link[c] + r.occupied[c] <= rc.capacity[c],
                "cbfc: credits beyond the free buffer");
    fuzz::check(cbfc_distance(r.freed[c], s.consumed[c]) == r.occupied[c] + on_link[c],
                "cbfc: credits consumed differ from held plus freed plus on the link");
    fuzz::check(cbfc_distance(s.limit[c], r.limit(c)) < cbfc_counter_half,
                "cbfc: the sender's limit ahead of the receiver's");
  };
  const auto invariants = [&] {
    for (std::size_t i = 0; i < n_used; ++i) check_class(used[i]);
    fuzz::check(s.frames == accepted && s.refused == refused && s.bad == bad,
                "cbfc: sender counters disagree");
    fuzz::check(r.frames == arrived && r.overflows == overflows,
                "cbfc: receiver counters disagree");
  };

  while (in.more()) {
    const std::uint8_t b = in.byte();
    switch (b & 7) {
      case 0:  // a frame of whole 64-byte units on a VC
        send((b >> 3) & 3, 64u * (b >> 5));
        break;
      case 1: {  // a frame of any size up to 4 KiB on a VC; or of exactly the credit left (6),
                 // or a byte more (7), where an off-by-one would show
        const std::uint8_t vc = (b >> 3) & 3;
        const std::uint8_t x = in.byte();
        const std::size_t cell = rc.link.cell_bytes == 0 ? 1 : rc.link.cell_bytes;
        const std::size_t all = std::size_t{s.available_vc(vc)} * cell;
        const std::uint32_t k = b >> 5;
        send(vc, k < 6 ? std::size_t{x} * 16 + (x >> 4) + k : all + (k == 7 ? 1 : 0));
        break;
      }
      case 2: {  // the next frame on the link arrives
        if (link.empty()) break;
        const frame f = link.front();
        link.pop_front();
        on_link[f.cls] -= static_cast<std::uint32_t>(rc.link.cost(f.bytes));
        const auto a = receive(cbfc_arrive(f.cls, f.bytes));
        fuzz::check(!a.err && !a.dropped, "cbfc: a frame sent with credit overflowed");
        ++arrived;
        std::size_t vc = 0;
        while (rc.link.vc_class[vc] != f.cls) ++vc;  // any VC of the class: drained per class
        fuzz::check(buffered[vc].push_back(f.bytes), "cbfc: more frames held than sent");
        break;
      }
      case 3: {  // the XPU drains a frame of a VC's class; none held: drains too much
        const std::uint8_t vc = (b >> 3) & 3;
        const std::uint8_t cls = rc.link.vc_class[vc];
        if (!buffered[vc].empty()) {
          const std::size_t bytes = buffered[vc].front();
          buffered[vc].pop_front();
          const auto a = receive(cbfc_drain(cls, bytes));
          fuzz::check(!a.err, "cbfc: a drain of a frame held refused");
          freed_abs[cls] += rc.link.cost(bytes);
        } else if (b & 0x20) {
          const std::uint32_t held = r.occupied[cls];
          const std::size_t cell = rc.link.cell_bytes == 0 ? 1 : rc.link.cell_bytes;
          const auto a = receive(cbfc_drain(cls, (std::size_t{held} + 1) * cell));
          fuzz::check(a.err.code == wire::errc::bad_value && r.occupied[cls] == held,
                      "cbfc: drained more than held");
        }
        break;
      }
      case 4: {  // a credit update arrives; bit 5: a copy stays behind (a duplicate)
        update_slot& u = channel[(b >> 3) & 7];
        if (!u.used) break;
        const auto cls = static_cast<std::uint8_t>(u.bytes[0] >> 3);
        if (freed_abs[cls] - u.born > max_update_age) {
          u.used = false;
          break;
        }
        if (!(b & 0x40)) u.used = false;
        deliver_update(u.bytes);
        break;
      }
      case 5:  // time passes; the receiver may send coalesced updates or refreshes
        now += 1 + (b >> 3) * 16u;
        receive(cbfc_tick());
        break;
      case 6:  // an update lost
        channel[(b >> 3) & 7].used = false;
        break;
      default: {
        const std::uint8_t x = in.byte();
        if ((b >> 5) == 7) {  // a rogue frame, beyond the credits granted: dropped, nothing held
          const std::uint8_t cls = rc.link.vc_class[(b >> 3) & 3];
          const std::uint32_t room = rc.capacity[cls] - r.occupied[cls];
          const std::size_t cell = rc.link.cell_bytes == 0 ? 1 : rc.link.cell_bytes;
          const std::uint32_t held = r.occupied[cls];
          const auto a = receive(cbfc_arrive(cls, (std::size_t{room} + 1 + x % 4) * cell));
          fuzz::check(a.dropped && a.err.code == wire::errc::no_space && r.occupied[cls] == held,
                      "cbfc: a frame beyond the buffer kept");
          ++overflows;
          break;
        }
        // Nonsense for the sender: a VC above 3, a class above 31 or a limit over 24 bits.
        const cbfc_sender prev = s;
        const auto [s2, a] =
            (b & 8) ? step(s, cbfc_send(static_cast<std::uint8_t>(4 + x % 252), 64), now)
            : (b & 16)
                ? step(s, cbfc_credit({static_cast<std::uint8_t>(32 + x % 224), 0, x}), now)
                : step(s, cbfc_credit({static_cast<std::uint8_t>(x & 31), 0, 0x1000000u + x}), now);
        s = s2;
        fuzz::check(a.err.code == wire::errc::value_too_big, "cbfc: nonsense accepted");
        fuzz::check(
            s.consumed == prev.consumed && s.limit == prev.limit && s.heard_at == prev.heard_at,
            "cbfc: nonsense changed the credits");
        if (b & 8)
          ++refused;
        else
          ++bad;
        break;
      }
    }
    invariants();
  }

  for (std::uint8_t c = 0; c < cbfc_classes; ++c) check_class(c);  // the unused ones too

  // Everything arrives and is drained, then a refresh is due: a lost update is repaired, and
  // every class the VCs use has its whole buffer as credit again.
  if (rc.refresh == 0) return 0;
  while (!link.empty()) {
    const frame f = link.front();
    link.pop_front();
    on_link[f.cls] -= static_cast<std::uint32_t>(rc.link.cost(f.bytes));
    receive(cbfc_arrive(f.cls, f.bytes));
    ++arrived;
    std::size_t vc = 0;
    while (rc.link.vc_class[vc] != f.cls) ++vc;
    fuzz::check(buffered[vc].push_back(f.bytes), "cbfc: more frames held than sent");
  }
  for (std::uint8_t vc = 0; vc < cbfc_vcs; ++vc)
    for (; !buffered[vc].empty(); buffered[vc].pop_front())
      receive(cbfc_drain(rc.link.vc_class[vc], buffered[vc].front()));
  now += rc.refresh + rc.max_delay + 1;
  const auto [r2, a] = step(r, cbfc_tick(), now);
  r = r2;
  for (std::size_t k = 0; k < a.update_count; ++k)
    deliver_update(wire::to_bytes(a.updates[k]).value);
  invariants();
  for (std::uint8_t c = 0; c < cbfc_classes; ++c)
    fuzz::check(s.available(c) == rc.capacity[c], "cbfc: credits not all returned at the end");
  return 0;
}
