// The `scaleup` command: writes captures of every encapsulation and dissects captures with
// the library's dissection engine. It prints the engine's tree and knows no bit position.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/print.hpp"
#include "scaleup/pcap/capture.hpp"
#include "scaleup/wire/frame.hpp"

namespace {

using namespace scaleup;
namespace cap = scaleup::pcap;  // ::pcap is libpcap's struct

constexpr std::string_view version = "0.1.0";

constexpr std::string_view usage_text =
    R"(usage: scaleup <command> [options]

commands:
  gen basic -o FILE [--encap LIST] [--seed N] [--count N] [--link ethernet|afh2] [--json]
      Write a pcap of valid frames: RH-only ACK and NACK PDUs, PDUs with opaque payload,
      SUE Lite frames. LIST is one or more of udp4 udp6 afh1 afh1-vlan afh1-shim
      afh1-vlan-shim afh2 afh2c lite, comma-separated, or all (the default).
      --count N frames per encapsulation (default 4); --seed N (default 1) makes the
      file reproducible; --link afh2 writes bare AFH Gen 2 frames on link type 147
      (afh2, afh2c and lite only); --json prints what was written, one object a frame.

  dump FILE [-v] [--json] [--udp-port N]... [--no-heuristics] [--fcs auto|yes|no]
      Dissect a pcap or pcapng capture: one summary line per frame, a field tree with
      -v, JSON Lines with --json. SUE over UDP is found on port 4793, on every
      --udp-port, and elsewhere when the payload is a plausible RH (unless
      --no-heuristics). --fcs says whether Ethernet frames end in an FCS (default:
      detect).

  help | --help      this text
  --version          the version

exit status: 0 done, 1 a file could not be read or written, 2 usage error
)";

int fail_usage(const std::string& message) {
  std::fprintf(stderr, "scaleup: %s\n\n%.*s", message.c_str(), static_cast<int>(usage_text.size()),
               usage_text.data());
  return 2;
}

template <class T>
std::optional<T> parse_number(std::string_view s) {
  T v{};
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc{} || r.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Buffered stdout; the printers write through it.
struct stdout_sink {
  std::string buf;
  void operator()(std::string_view s) {
    buf.append(s);
    if (buf.size() > (1u << 16)) flush();
  }
  void flush() {
    std::fwrite(buf.data(), 1, buf.size(), stdout);
    buf.clear();
  }
  ~stdout_sink() {
    flush();
    std::fflush(stdout);
  }
};

// ---- gen basic ------------------------------------------------------------------------------

struct gen_options {
  std::string out;
  std::vector<wire::encap> encaps;
  std::uint64_t seed = 1;
  std::uint32_t count = 4;
  std::uint32_t link = dissect::link_ethernet;
  bool json = false;
};

bool is_afh2_family(wire::encap e) {
  return e == wire::encap::afh2 || e == wire::encap::afh2c || e == wire::encap::lite;
}

// What gen wrote, as JSON, from the values it used (not from dissecting its own output), so a
// test can compare it with `dump --json`.
void put_manifest(stdout_sink& out, std::uint64_t frame, wire::encap e,
                  const wire::reliability_header* rh, std::size_t payload,
                  const wire::frame_params& p) {
  std::string s = "{\"frame\":" + std::to_string(frame) + ",\"encap\":\"" +
                  std::string(wire::to_string(e)) + "\"";
  const auto num = [&](std::string_view key, std::uint64_t v) {
    s += ",\"" + std::string(key) + "\":" + std::to_string(v);
  };
  if (rh) {
    num("sue.rh.ver", rh->ver);
    num("sue.rh.op", rh->op);
    num("sue.rh.xpuid", rh->xpuid);
    num("sue.rh.npsn", rh->npsn);
    num("sue.rh.vc", rh->vc);
    num("sue.rh.partition", rh->partition);
    num("sue.rh.apsn", rh->apsn);
    num("sue.payload.len", payload);
    s += ",\"sue.rcrc.status\":\"good\"";
  } else {
    num("sue_lite.len", payload);
  }
  num("src_xpu", p.src_xpu);
  num("dst_xpu", p.dst_xpu);
  num("tc", p.tc);
  s += "}\n";
  out(s);
}

int run_gen(const gen_options& o) {
  std::string err;
  auto w = cap::writer::create(o.out, static_cast<cap::link_type>(o.link), 65535, err);
  if (!w) {
    std::fprintf(stderr, "scaleup: %s\n", err.c_str());
    return 1;
  }
  std::mt19937_64 rng(o.seed);
  const auto pick = [&](std::uint64_t lo, std::uint64_t hi) {
    return std::uniform_int_distribution<std::uint64_t>(lo, hi)(rng);
  };
  stdout_sink out;
  std::vector<std::uint8_t> frame(8192), payload;
  std::uint64_t number = 0;
  // One connection per encapsulation: PSNs run on, and the ACK/NACK PDUs refer to them.
  for (const wire::encap e : o.encaps) {
    wire::frame_params p;
    p.kind = e;
    p.src_xpu = static_cast<std::uint32_t>(pick(0, 1023));
    p.dst_xpu = static_cast<std::uint32_t>(pick(0, 1023));
    const auto vc = static_cast<std::uint8_t>(pick(0, 3));
    p.tc = e == wire::encap::afh1 ? 0 : vc;  // plain AFH Gen 1 has nowhere to carry a class
    p.entropy = static_cast<std::uint32_t>(pick(0, 0xFFFFF));
    auto npsn = static_cast<std::uint16_t>(pick(0, 0xFFFF));
    const auto partition = static_cast<std::uint16_t>(pick(0, 1023));
    for (std::uint32_t i = 0; i < o.count; ++i) {
      ++number;
      wire::result<std::size_t> r;
      std::size_t payload_len = 0;
      wire::reliability_header rh{};
      if (e == wire::encap::lite) {
        // Opaque payload cannot be told from Ethernet padding, so frames on the Ethernet link
        // are kept at the minimum size without it (the command layer delimits real payloads).
        const std::size_t min_len =
            o.link == dissect::link_ethernet ? wire::ethernet_min_frame - wire::header_size(e) : 1;
        payload_len = pick(min_len, i % 4 == 3 ? wire::sue_lite_max_payload : 64 + min_len);
        payload.resize(payload_len);
        for (auto& b : payload) b = static_cast<std::uint8_t>(pick(0, 255));
        // Bytes that would make the frame read as something else (docs/wire-format.md): the
        // SUE Ethertype first, or a common Ethertype at frame bytes 12-13.
        if (payload_len >= 2 && payload[0] == 0x88) payload[0] = 0x80;
        if (payload_len >= 8 && dissect::is_common_ethertype(
                                    static_cast<std::uint16_t>((payload[6] << 8) | payload[7]), {}))
          payload[6] = 0;
        r = wire::emit_frame(p, payload, frame);
      } else {
        rh.xpuid = static_cast<std::uint16_t>(p.src_xpu);
        rh.vc = vc;
        rh.partition = partition;
        rh.npsn = npsn++;
        switch (i % 4) {
          case 0:  // stand-alone ACK: RH only
            rh.op = static_cast<std::uint8_t>(wire::rh_op::ack);
            rh.apsn = static_cast<std::uint16_t>(pick(0, 0xFFFF));
            break;
          case 1:  // stand-alone NACK: RH only
            rh.op = static_cast<std::uint8_t>(wire::rh_op::nack);
            rh.apsn = static_cast<std::uint16_t>(pick(0, 0xFFFF));
            break;
          case 2:  // data, no acknowledgement carried
            rh.op = static_cast<std::uint8_t>(wire::rh_op::none);
            payload_len = pick(1, 256);
            break;
          default:  // data with a piggybacked ACK, up to the full 4096 bytes
            rh.op = static_cast<std::uint8_t>(wire::rh_op::ack);
            rh.apsn = static_cast<std::uint16_t>(pick(0, 0xFFFF));
            payload_len = pick(257, wire::sue_max_payload);
        }
        payload.resize(payload_len);
        for (auto& b : payload) b = static_cast<std::uint8_t>(pick(0, 255));
        r = wire::emit_sue_frame(p, rh, payload, frame);
      }
      if (!r) {
        std::fprintf(stderr, "scaleup: frame %llu: %.*s\n", static_cast<unsigned long long>(number),
                     static_cast<int>(r.err.what.size()), r.err.what.data());
        return 1;
      }
      // Bare AFH Gen 2 frames on their own link type have no minimum size.
      std::size_t len = r.value;
      if (o.link == dissect::link_afh2)
        len = wire::header_size(e) +
              (e == wire::encap::lite ? payload_len : wire::pdu_size(payload_len));
      const std::int64_t sec = 1'700'000'000 + static_cast<std::int64_t>(number / 1000);
      const auto usec = static_cast<std::uint32_t>((number % 1000) * 1000);
      if (!w->write(std::span<const std::uint8_t>(frame.data(), len), sec, usec)) {
        std::fprintf(stderr, "scaleup: %s\n", w->error().c_str());
        return 1;
      }
      if (o.json)
        put_manifest(out, number, e, e == wire::encap::lite ? nullptr : &rh, payload_len, p);
    }
  }
  if (!w->close()) {
    std::fprintf(stderr, "scaleup: %s\n", w->error().c_str());
    return 1;
  }
  if (!o.json)
    std::fprintf(stderr, "scaleup: wrote %llu frame%s to %s\n",
                 static_cast<unsigned long long>(number), number == 1 ? "" : "s", o.out.c_str());
  return 0;
}

int cmd_gen(const std::vector<std::string_view>& args) {
  if (args.empty()) return fail_usage("gen: which scenario? (basic)");
  if (args[0] != "basic") return fail_usage("gen: unknown scenario '" + std::string(args[0]) + "'");
  gen_options o;
  std::string_view encaps = "all";
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string_view a = args[i];
    const auto value = [&]() -> std::optional<std::string_view> {
      if (i + 1 >= args.size()) return std::nullopt;
      return args[++i];
    };
    if (a == "-o" || a == "--output") {
      const auto v = value();
      if (!v) return fail_usage("gen: -o needs a file name");
      o.out = std::string(*v);
    } else if (a == "--encap") {
      const auto v = value();
      if (!v) return fail_usage("gen: --encap needs a value");
      encaps = *v;
    } else if (a == "--seed") {
      const auto v = value();
      const auto n = v ? parse_number<std::uint64_t>(*v) : std::nullopt;
      if (!n) return fail_usage("gen: --seed needs a whole number");
      o.seed = *n;
    } else if (a == "--count") {
      const auto v = value();
      const auto n = v ? parse_number<std::uint32_t>(*v) : std::nullopt;
      if (!n || *n == 0 || *n > 1'000'000)
        return fail_usage("gen: --count needs a whole number from 1 to 1000000");
      o.count = *n;
    } else if (a == "--link") {
      const auto v = value();
      if (v && *v == "ethernet")
        o.link = dissect::link_ethernet;
      else if (v && *v == "afh2")
        o.link = dissect::link_afh2;
      else
        return fail_usage("gen: --link takes ethernet or afh2");
    } else if (a == "--json") {
      o.json = true;
    } else {
      return fail_usage("gen: unknown option '" + std::string(a) + "'");
    }
  }
  if (o.out.empty()) return fail_usage("gen: -o FILE is required");
  for (std::size_t start = 0; start <= encaps.size();) {
    const std::size_t comma = std::min(encaps.find(',', start), encaps.size());
    const std::string_view name = encaps.substr(start, comma - start);
    if (name == "all") {
      for (std::size_t k = 0; k < wire::encap_names.size(); ++k) {
        const auto e = static_cast<wire::encap>(k);
        if (o.link == dissect::link_ethernet || is_afh2_family(e)) o.encaps.push_back(e);
      }
    } else if (const auto e = wire::encap_from_string(name)) {
      if (o.link == dissect::link_afh2 && !is_afh2_family(*e))
        return fail_usage("gen: --link afh2 carries only afh2, afh2c and lite");
      o.encaps.push_back(*e);
    } else {
      return fail_usage("gen: unknown encapsulation '" + std::string(name) + "'");
    }
    start = comma + 1;
  }
  return run_gen(o);
}

// ---- dump -----------------------------------------------------------------------------------

struct dump_options {
  std::string file;
  bool verbose = false;
  bool json = false;
  dissect::options engine;
};

int run_dump(const dump_options& o) {
  std::string err;
  auto r = cap::reader::open(o.file, err);
  if (!r) {
    std::fprintf(stderr, "scaleup: %s\n", err.c_str());
    return 1;
  }
  stdout_sink out;
  static dissect::basic_tree<32, 512, 32> tree;  // large: kept off the stack
  cap::packet pkt{};
  for (;;) {
    const auto st = r->next(pkt);
    if (st == cap::reader::status::end) break;
    if (st == cap::reader::status::error) {
      out.flush();
      std::fflush(stdout);
      std::fprintf(stderr, "scaleup: %s\n", r->error().c_str());
      return 1;
    }
    dissect::dissect_frame(tree, pkt.data, r->link(), o.engine);
    if (pkt.caplen < pkt.len)
      tree.add_error(wire::error{wire::errc::truncated, "frame", pkt.caplen, pkt.len, pkt.caplen,
                                 "frame cut short by the capture's snapshot length"});
    if (o.json) {
      dissect::put_json(out, tree, pkt.number);
      out("\n");
    } else if (o.verbose) {
      dissect::put_verbose(out, tree, pkt.number);
      out("\n");
    } else {
      dissect::put_summary(out, tree, pkt.number);
      out("\n");
    }
  }
  return 0;
}

int cmd_dump(const std::vector<std::string_view>& args) {
  dump_options o;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string_view a = args[i];
    if (a == "-v" || a == "--verbose") {
      o.verbose = true;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--no-heuristics") {
      o.engine.heuristics = false;
    } else if (a == "--udp-port") {
      const auto n = i + 1 < args.size() ? parse_number<std::uint16_t>(args[++i]) : std::nullopt;
      if (!n || *n == 0) return fail_usage("dump: --udp-port needs a port number from 1 to 65535");
      if (!o.engine.add_udp_port(*n)) return fail_usage("dump: too many --udp-port options");
    } else if (a == "--fcs") {
      const std::string_view v = i + 1 < args.size() ? args[++i] : "";
      if (v == "auto")
        o.engine.fcs = dissect::fcs_mode::detect;
      else if (v == "yes")
        o.engine.fcs = dissect::fcs_mode::present;
      else if (v == "no")
        o.engine.fcs = dissect::fcs_mode::absent;
      else
        return fail_usage("dump: --fcs takes auto, yes or no");
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      return fail_usage("dump: unknown option '" + std::string(a) + "'");
    } else if (o.file.empty()) {
      o.file = std::string(a);
    } else {
      return fail_usage("dump: one capture file at a time");
    }
  }
  if (o.file.empty()) return fail_usage("dump: which capture file?");
  return run_dump(o);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> args(argv + 1, argv + argc);
  if (args.empty()) return fail_usage("a command is needed");
  const std::string_view cmd = args[0];
  args.erase(args.begin());
  if (cmd == "help" || cmd == "--help" || cmd == "-h") {
    std::fwrite(usage_text.data(), 1, usage_text.size(), stdout);
    return 0;
  }
  if (cmd == "--version") {
    std::printf("scaleup %.*s\n", static_cast<int>(version.size()), version.data());
    return 0;
  }
  if (cmd == "gen") return cmd_gen(args);
  if (cmd == "dump") return cmd_dump(args);
  return fail_usage("unknown command '" + std::string(cmd) + "'");
}
