// What happens to a frame on a link: the fabric asks its link model once per frame and link
// (the XPU's link up to the switch, then the switch's link down to the destination), and the
// model answers deliver at a time, drop, corrupt given bits, duplicate, or take the frame to
// carry it itself (a network simulator that owns the wire hands it back with
// fabric::receive_frame). The caller supplies the model; probabilistic_links, the default,
// draws loss, corruption, duplication and reordering per frame as the harness always has.
#pragma once

#include <array>
#include <cstdint>
#include <random>

#include "scaleup/wire/bits.hpp"

namespace scaleup::sim {

// Which commands a PDU carries, by the fabric's bookkeeping: `count` commands of stream
// `stream` from sequence `first_seq`. It travels with the frame like an ns-3 packet tag; a link
// model that takes a frame (link_verdict::fate::take) hands it back with fabric::receive_frame.
struct pdu_tag {
  std::uint32_t stream = 0xFFFFFFFFu;  // none: an RH-only PDU
  std::uint32_t count = 0;
  std::uint64_t first_seq = 0;
};

enum class hop : std::uint8_t {
  up,    // XPU port -> switch
  down,  // switch -> XPU port (the same plane)
};

// A frame entering a link, as the model sees it.
struct link_frame {
  std::uint64_t sent = 0;     // ns: its last bit leaves the sender
  std::uint64_t arrival = 0;  // ns: when a perfect link delivers it (sent + the link's delay)
  std::uint16_t xpu = 0;      // the XPU at this link's end: the sender (up), the receiver (down)
  std::uint8_t port = 0;      // that XPU's port, which is also the switch plane
  hop direction = hop::up;
  wire::bytes frame{};  // valid during the call only
  pdu_tag tag{};        // a model that takes the frame hands this back with it
};

struct link_verdict {
  enum class fate : std::uint8_t {
    deliver,  // arrives at `at`
    drop,     // lost on the link
    take,     // the model keeps it (copy frame's bytes): it calls fabric::receive_frame later
  };
  static constexpr std::size_t max_flips = 4;

  fate what = fate::deliver;
  std::uint64_t at = 0;  // ns; 0: link_frame::arrival. Earlier than now is now.
  // Bits to invert before it arrives, numbered from the frame's first bit (bit 0 is the most
  // significant bit of byte 0, as the field tables number them); out of range: ignored.
  std::array<std::uint32_t, max_flips> flip{};
  std::uint8_t flips = 0;
  bool duplicate = false;          // a second copy arrives too...
  std::uint64_t duplicate_at = 0;  // ...then (0: at + 1 ns)
};

class link_model {
 public:
  virtual ~link_model() = default;
  virtual link_verdict on_frame(const link_frame& f) = 0;
};

// Per frame on the switch's way out (hop::down), with independent probabilities: lost; else
// one random bit flipped (corrupt); held back `reorder_delay` ns (reorder, so later frames
// overtake it); and a second copy 1 ns later (duplicate). The way up is perfect, so a capture
// of what the switch receives holds every transmission intact. The draws, and their order, are
// the harness's from before links were pluggable: a seed means what it meant.
class probabilistic_links final : public link_model {
 public:
  probabilistic_links(double loss, double corrupt, double duplicate, double reorder,
                      std::uint64_t reorder_delay, std::uint64_t seed)
      : loss_(loss),
        corrupt_(corrupt),
        duplicate_(duplicate),
        reorder_(reorder),
        reorder_delay_(reorder_delay),
        rng_(seed) {}

  link_verdict on_frame(const link_frame& f) override {
    link_verdict v;
    if (f.direction == hop::up) return v;
    if (chance(loss_)) {
      v.what = link_verdict::fate::drop;
      return v;
    }
    if (chance(corrupt_) && !f.frame.empty()) {
      v.flip[0] = static_cast<std::uint32_t>(
          std::uniform_int_distribution<std::size_t>(0, f.frame.size() * 8 - 1)(rng_));
      v.flips = 1;
    }
    v.at = f.arrival;
    if (chance(reorder_)) v.at += reorder_delay_;
    v.duplicate = chance(duplicate_);
    return v;
  }

 private:
  bool chance(double p) { return p > 0 && std::uniform_real_distribution<double>(0, 1)(rng_) < p; }

  double loss_, corrupt_, duplicate_, reorder_;
  std::uint64_t reorder_delay_;
  std::mt19937_64 rng_;
};

}  // namespace scaleup::sim
