// The `scaleup` command: writes captures of every encapsulation and of packed traffic, and
// dissects captures with the library's dissection engine.
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "cli.hpp"

namespace scaleup::cli {

constexpr std::string_view version = "0.1.0";

const std::string_view usage_text =
    R"(usage: scaleup <command> [options]

commands:
  gen basic -o FILE [--encap LIST] [--seed N] [--count N] [--link ethernet|afh2] [--json]
      Write a pcap of valid frames: RH-only ACK and NACK PDUs, PDUs of random commands (up
      to 4096 bytes), SUE Lite frames. LIST is one or more of udp4 udp6 afh1 afh1-vlan
      afh1-shim afh1-vlan-shim afh2 afh2c lite, comma-separated, or all (the default).
      --count N frames per encapsulation (default 4); --seed N (default 1) makes the file
      reproducible; --link afh2 writes bare AFH Gen 2 frames on link type 147 (afh2, afh2c
      and lite only); --json prints what was written, one object a frame.

  gen traffic -o FILE [--profile NAME] [--pattern uniform|incast|fig21] [--destinations N]
              [--vcs N] [--count N] [--seed N] [--encap LIST] [--link ethernet|afh2] [--json]
      Queue --count commands (default 64) per encapsulation, pack them per {destination, VC}
      with the packer and scheduler, and write the PDUs (RH, commands, R-CRC; SUE Lite:
      commands only). uniform: one XPU to --destinations XPUs (default 8) on --vcs VCs
      (default 2); incast: that many XPUs to one; fig21: R2 Fig. 21's five transactions.
      --encap defaults to udp4,lite.

  gen session -o FILE [--xpus N] [--ports 1|2|4] [--unordered] [--loss P] [--corrupt P]
              [--duplicate P] [--reorder P] [--fail-link XPU:PORT:DOWN_NS[:UP_NS]]...
              [--commands N] [--load F] [--seed N] [--encap NAME] [--misbehave RULE] [--json]
      Run the fabric harness: --xpus XPUs (default 8, up to 1024) on one switch, each with
      --ports ports (one plane each; strict mode pins a stream to a port, --unordered spreads
      PDUs), go-back-N over links that lose, corrupt, duplicate or reorder frames with the
      given probabilities, links failing at given times. --commands (default 10000) arrive
      at --load (default 0.5) of capacity. Writes every frame the switch receives
      (retransmissions included) and prints delivery statistics; --json prints them as one
      object: offered, delivered, duplicates, out_of_order, retransmissions, nacks,
      goodput_gbps, and more. --misbehave RULE makes one endpoint break a conformance rule
      once (ack.unsent, ack.monotonic, nack.once, gbn.resend), a capture for `scaleup
      check`.

  gen tofu -o FILE [--mode split|duplicate|adaptive] [--error-rate P] [--frames N] [--seed N]
           [--json]
      Simulate a dual-rail Tofu-style link: frames sliced over two lanes (split or duplicate,
      or adaptive: the lane-quality controller chooses), bit errors at rate P on each lane,
      replays of failed frames. Writes one record per slice on link type 148 and prints the
      statistics; --json: one object with frames, delivered, lost, split_frames,
      duplicate_frames, mode_switches.

  gen rdma -o FILE [--transfers N] [--loss P] [--seed N] [--json]
      Run transfers of every class through the RDMA QoS engine (seed 004) over links that
      lose packets with probability P, with selective retransmission; writes every ExaJet
      packet on link type 149 and prints how many transfers completed exactly once (a
      block is re-sent whole: at high loss a 64-packet block can exhaust its 15 retries).

  dump FILE [-v] [--json] [--profile NAME|none] [--udp-port N]... [--no-heuristics]
            [--xpu-map FILE] [--check-checksums] [--fcs auto|yes|no]
      Dissect a pcap or pcapng capture: one summary line per frame (and one per packed
      command), a field tree with -v, JSON Lines with --json. Commands are read with the
      profile (default: default; none leaves payloads opaque). No UDP port is SUE's: SUE
      over UDP is found on every --udp-port, and elsewhere when the payload is a plausible
      RH (unless --no-heuristics), after which its flow stays SUE. --xpu-map FILE (lines
      ADDRESS XPU, # comments) names the XPU of each IP address: a frame over IP carries
      none. --fcs says whether Ethernet frames end in an FCS (default: detect). IP and UDP
      checksums are checked only with --check-checksums, and a mismatch is a warning (a
      sending host's capture holds checksums left to the NIC); the R-CRC is always checked.
      A frame cut by the capture's snapshot length is read against its length on the wire:
      what was not captured is marked so (one note), not an error.

  stats FILE [--json] [--svg OUT] [--window N] [--profile NAME|none] [--udp-port N]...
            [--no-heuristics] [--xpu-map FILE] [--check-checksums]
      Go-back-N sequence analysis, the one the Wireshark plugin shows, per connection
      {source, destination, port, VC}, the ends XPU ids where the frames or the XPU map
      name them, else IP addresses (with the RH's xpuid as source XPU): PDUs, retransmissions, duplicates (PSNs
      already acknowledged), out-of-order PDUs, gaps and missing PSNs, NACKs, ACKs, window-
      full events (--window, default 256) and ACK RTT percentiles. --json prints one object;
      --svg OUT draws PSN over time per connection (first transmissions, retransmissions,
      NACKs, ACKs). Every PDU whose RH was captured counts, unless a receiver would drop it
      (a bad R-CRC or FCS, an error in its network headers or RH): not for the snapshot
      length, IP/UDP checksums or a payload the profile cannot parse.

  check FILE [--json] [--rules LIST] [--max-pdu N] [--max-lite N] [--vcs N] [--ports N]
             [--rto NS] [--partitions FILE] [--profile NAME|none] [--udp-port N]... [--no-heuristics]
             [--xpu-map FILE] [--check-checksums]
      Does the capture conform to SUE? Checks every rule of docs/conformance.md that the
      wire shows (PSNs, go-back-N, NACKs and ACKs, the PDU, its R-CRC and padding, reserved
      bits, partitions, SUE Lite) and prints per rule what was examined, what the capture
      could not show (its snapshot length, the port of a fabric of --ports N), the
      violations and the first violating frames with what was expected and what was seen;
      --json prints one object. --rules selects rules by id (a prefix ending in '.', such as
      ack., selects a family). --max-pdu (default 4096) and --max-lite (1024) are the
      packing limits, --vcs (4) the VCs configured, --rto (8000 ns) the longest a PDU may
      take from the capture point to its receiver, --partitions FILE (lines XPU
      PARTITION...) the partitions each source may use. Exit status 3 when a rule is
      violated.

  help | --help      this text
  --version          the version

exit status: 0 done, 1 a file could not be read or written, 2 usage error, 3 (check) a rule
is violated
)";

}  // namespace scaleup::cli

int main(int argc, char** argv) {
  using namespace scaleup::cli;
  const std::vector<std::string_view> all(argv + 1, argv + argc);
  if (all.empty()) return fail_usage("a command is needed");
  const std::string_view cmd = all[0];
  const std::span<const std::string_view> rest(all.data() + 1, all.size() - 1);
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fwrite(usage_text.data(), 1, usage_text.size(), stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("scaleup %.*s\n", static_cast<int>(version.size()), version.data());
    return 0;
  }
  if (cmd == "dump") return dump(rest);
  if (cmd == "stats") return stats(rest);
  if (cmd == "check") return check(rest);
  if (cmd == "gen") {
    if (rest.empty())
      return fail_usage("gen: which scenario? (basic, traffic, session, tofu, rdma)");
    if (rest[0] == "basic") return gen_basic(rest.subspan(1));
    if (rest[0] == "traffic") return gen_traffic(rest.subspan(1));
    if (rest[0] == "session") return gen_session(rest.subspan(1));
    if (rest[0] == "tofu") return gen_tofu(rest.subspan(1));
    if (rest[0] == "rdma") return gen_rdma(rest.subspan(1));
    return fail_usage("gen: unknown scenario '" + std::string(rest[0]) + "'");
  }
  return fail_usage("unknown command '" + std::string(cmd) + "'");
}
