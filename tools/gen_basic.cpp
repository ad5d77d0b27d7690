// `scaleup gen basic`: every encapsulation, with RH-only ACK and NACK PDUs, PDUs of random
// commands and SUE Lite frames.
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "cli.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/pack/random_command.hpp"

namespace scaleup::cli {

namespace {

bool afh2_family(wire::encap e) {
  return e == wire::encap::afh2 || e == wire::encap::afh2c || e == wire::encap::lite;
}

// Random commands filling about `target` bytes (never more than `limit`).
void fill_commands(std::mt19937_64& rng, std::size_t target, std::size_t limit,
                   std::vector<std::uint8_t>& payload, std::vector<command_note>& notes) {
  payload.assign(limit, 0);
  notes.clear();
  std::size_t used = 0;
  while (used < target) {
    const auto r = pack::random_command(pack::default_profile, rng, limit - used,
                                        std::span<std::uint8_t>(payload).subspan(used));
    if (!r || r.value == 0) break;
    notes.push_back(note_of(pack::default_profile,
                            std::span<const std::uint8_t>(payload.data() + used, r.value)));
    used += r.value;
  }
  payload.resize(used);
}

// A SUE Lite payload must not make the frame read as something else on an Ethernet link
// (docs/wire-format.md): the SUE Ethertype first, or a common Ethertype at frame bytes 12-13.
bool lite_payload_reads_back(const std::vector<std::uint8_t>& p) {
  if (p.size() >= 2 && p[0] == 0x88 && p[1] == 0xB5) return false;
  return p.size() < 8 ||
         !wire::is_common_ethertype(static_cast<std::uint16_t>((p[6] << 8) | p[7]),
                                    wire::ethertype::sue, wire::ethertype::afh1_shim);
}

struct basic_settings {
  gen_settings gen;
  std::string encaps = "all";
  std::uint32_t count = 4;
  std::uint32_t link = dissect::link_ethernet;
};

int run_gen_basic(const CLI::App& app, const basic_settings& s) {
  const std::string& out = s.gen.out;
  const std::uint64_t seed = s.gen.seed;
  const bool json = s.gen.json;
  const auto link = s.link;
  const auto count = s.count;
  std::vector<wire::encap> list;
  const auto allowed = [&](wire::encap e) {
    return link == dissect::link_ethernet || afh2_family(e);
  };
  if (const auto bad = parse_encaps(s.encaps, allowed, list))
    return fail_usage(
        app,
        "--encap: " + *bad +
            (link == dissect::link_afh2 ? " (--link afh2 carries only afh2, afh2c and lite)" : ""));

  capture_out cap(out, link, json);
  if (!cap.open()) return 1;
  std::mt19937_64 rng(seed);
  const auto pick = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  std::vector<std::uint8_t> payload;
  std::vector<command_note> notes;
  // One connection per encapsulation: PSNs run on, and the ACK/NACK PDUs refer to them.
  for (const wire::encap e : list) {
    wire::frame_params p;
    p.kind = e;
    p.src_xpu = static_cast<std::uint32_t>(pick(0, 1023));
    p.dst_xpu = static_cast<std::uint32_t>(pick(0, 1023));
    const auto vc = static_cast<std::uint8_t>(pick(0, 3));
    p.tc = e == wire::encap::afh1 ? 0 : vc;  // plain AFH Gen 1 has nowhere to carry a class
    p.entropy = static_cast<std::uint32_t>(pick(0, 0xFFFFF));
    auto npsn = static_cast<std::uint16_t>(pick(0, 0xFFFF));
    const auto partition = static_cast<std::uint16_t>(pick(0, 1023));
    for (std::uint32_t i = 0; i < count; ++i) {
      if (e == wire::encap::lite) {
        do {
          fill_commands(rng, pick(1, i % 4 == 3 ? wire::sue_lite_max_payload : 64),
                        wire::sue_lite_max_payload, payload, notes);
        } while (link == dissect::link_ethernet && !lite_payload_reads_back(payload));
        if (!cap.write(p, nullptr, payload, notes)) return 1;
        continue;
      }
      wire::reliability_header rh{};
      rh.xpuid = static_cast<std::uint16_t>(p.src_xpu);
      rh.vc = vc;
      rh.partition = partition;
      rh.npsn = npsn++;
      payload.clear();
      notes.clear();
      switch (i % 4) {
        case 0:  // stand-alone ACK: RH only
          rh.op = static_cast<std::uint8_t>(wire::rh_op::ack);
          rh.apsn = static_cast<std::uint16_t>(pick(0, 0xFFFF));
          break;
        case 1:  // stand-alone NACK: RH only
          rh.op = static_cast<std::uint8_t>(wire::rh_op::nack);
          rh.apsn = static_cast<std::uint16_t>(pick(0, 0xFFFF));
          break;
        case 2:  // commands, no acknowledgement carried
          rh.op = static_cast<std::uint8_t>(wire::rh_op::none);
          fill_commands(rng, pick(1, 256), wire::sue_max_payload, payload, notes);
          break;
        default:  // commands with a piggybacked ACK, up to the full 4096 bytes
          rh.op = static_cast<std::uint8_t>(wire::rh_op::ack);
          rh.apsn = static_cast<std::uint16_t>(pick(0, 0xFFFF));
          fill_commands(rng, pick(257, wire::sue_max_payload), wire::sue_max_payload, payload,
                        notes);
      }
      if (!cap.write(p, &rh, payload, notes)) return 1;
    }
  }
  return cap.close() ? 0 : 1;
}

}  // namespace

void add_gen_basic(CLI::App& parent, commands& out) {
  auto s = std::make_shared<basic_settings>();
  CLI::App* app = parent.add_subcommand(
      "basic",
      "Write a pcap of valid frames: RH-only ACK and NACK PDUs, PDUs of random commands (up to "
      "4096 bytes), SUE Lite frames.");
  add_gen_options(app, s->gen);
  app->add_option("--encap", s->encaps,
                  "udp4 udp6 afh1 afh1-vlan afh1-shim afh1-vlan-shim afh2 afh2c lite, "
                  "comma-separated, or all")
      ->capture_default_str();
  app->add_option("--count", s->count, "frames per encapsulation")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  add_link_option(app, s->link);
  out.push_back({app, [app, s] { return run_gen_basic(*app, *s); }});
}

}  // namespace scaleup::cli
