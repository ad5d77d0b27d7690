// The whole dissection engine: the first byte picks the link type (Ethernet, AFH Gen 2, Tofu
// slices, ExaJet RDMA) and a few options; the rest is the frame. The tree is printed as JSON
// and verbose text into a sink that discards, so the printers are exercised too. The frame is
// dissected a second time for the PDU's summary only, as `stats` asks, which must give the
// sequence analysis the same facts as the whole tree. The custom
// mutator (selected_frame.hpp) keeps the frame a SUE frame with a good R-CRC, so that inputs
// reach the commands and the printers of a whole PDU.
#include <array>
#include <cstddef>
#include <cstdint>

#include "common.hpp"
#include "scaleup/dissect/analysis.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/field_tree.hpp"
#include "scaleup/dissect/frame_json.hpp"
#include "scaleup/dissect/summary.hpp"
#include "selected_frame.hpp"

namespace {

using namespace scaleup;

constexpr std::array<std::uint32_t, 4> links{dissect::link_ethernet, dissect::link_afh2,
                                             tofu::link_tofu, rdma::link_rdma};

dissect::options options_of(std::uint8_t sel) {
  dissect::options o;
  o.fcs = static_cast<dissect::fcs_mode>((sel >> 2) % 3);
  o.heuristics = (sel & 0x20) == 0;
  if (sel & 0x40) o.profile = nullptr;
  if (sel & 0x80) (void)o.add_udp_port(4791);
  // No port is SUE's by default; the seeds were written to 4793, named on this bit so that their
  // damaged PDUs still reach the SUE path (on the others only a plausible RH does).
  if (sel & 0x10) (void)o.add_udp_port(4793);
  return o;
}

bool same_facts(const dissect::frame_facts& a, const dissect::frame_facts& b) {
  return a.frame == b.frame && a.time_ns == b.time_ns && a.key == b.key && a.xpuid == b.xpuid &&
         a.op == b.op && a.npsn == b.npsn && a.apsn == b.apsn && a.data == b.data &&
         a.length == b.length;
}

}  // namespace

// The mutator reads frames as the target will.
fuzz::mutator_config fuzz::selected_frame_config(std::uint8_t sel) {
  const dissect::options o = options_of(sel);
  fuzz::mutator_config c;
  c.link = links[sel & 3];
  c.profile = o.profile;
  c.receive = o;
  c.fcs = o.fcs == wire::fcs_mode::present;
  return c;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t sel = data[0];
  const dissect::options o = options_of(sel);
  static dissect::large_tree tree;
  dissect::dissect_frame(tree, wire::bytes(data + 1, size - 1), links[sel & 3], o);
  dissect::options summary = o;
  summary.nodes = false;
  static dissect::large_tree light;
  dissect::dissect_frame(light, wire::bytes(data + 1, size - 1), links[sel & 3], summary);
  dissect::frame_facts a, b;
  const bool has = dissect::set_facts(tree, 1, 0, a);
  fuzz::check(dissect::set_facts(light, 1, 0, b) == has && (!has || same_facts(a, b)),
              "summary: the facts differ from the whole dissection's");
  fuzz::null_sink out;
  dissect::put_json(out, tree, 1);
  dissect::put_verbose(out, tree, 1);
  dissect::put_summary(out, tree, 1);
  return 0;
}
