// Uniform write traffic for an SUE fabric, checked at the receivers: each XPU offers Commands
// full writes of Bytes bytes on VC 0 to peers drawn at random, at random times; each write's
// address names its source and its number on {source, destination}, so each receiver checks
// that every write arrives once and in order. Every rank of a distributed run draws the whole
// plan (a generator per XPU, seeded with Seed and the XPU's id), offers only its own XPUs'
// writes and checks only what its own XPUs receive; the counts summed over ranks are an
// undivided run's.
#ifndef SUE_TRAFFIC_H
#define SUE_TRAFFIC_H

#include <ns3/node.h>
#include <ns3/nstime.h>
#include <ns3/object.h>

#include <cstdint>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ns3/sue-xpu.h"

namespace ns3 {

class SueTraffic : public Object {
 public:
  static TypeId GetTypeId();
  SueTraffic();

  struct Report {
    std::uint64_t offered = 0;       // by this rank's XPUs
    std::uint64_t expected = 0;      // to this rank's XPUs
    std::uint64_t delivered = 0;     // to this rank's XPUs, once each
    std::uint64_t duplicates = 0;    // delivered again
    std::uint64_t outOfOrder = 0;    // delivered before an earlier one
    std::uint64_t failed = 0;        // this rank's XPUs' commands that failed
    std::uint64_t lastDelivery = 0;  // ns
    bool ExactlyOnce() const {
      return delivered == expected && duplicates == 0 && outOfOrder == 0 && failed == 0;
    }
  };

  // The XPUs in id order (every rank passes all of them). With `traceDir`, each of this rank's
  // XPUs writes what it received to traceDir/xpu-<id>.txt: time, source, first write, count.
  void Install(const std::vector<Ptr<SueXpu>>& xpus, const std::string& traceDir = "");
  Report GetReport() const { return m_report; }

  // Whether a node runs on this rank (always, without MPI).
  static bool IsLocal(Ptr<Node> node);

 protected:
  void DoDispose() override;

 private:
  struct Planned {
    std::uint64_t at;
    std::uint16_t dst;
  };
  std::vector<Planned> Plan(std::uint16_t src) const;
  void Offer(std::uint32_t x, std::uint16_t dst, std::uint64_t seq);
  void Delivered(std::uint16_t to, std::uint16_t src, std::uint8_t vc, Ptr<const Packet> payload);

  std::uint32_t m_commands = 1000, m_bytes = 64, m_seed = 1;
  Time m_gap;
  std::vector<Ptr<SueXpu>> m_xpus;
  // Per {destination, source}: the next write expected.
  std::vector<std::uint64_t> m_next;
  std::vector<std::unique_ptr<std::ofstream>> m_traces;
  Report m_report;
};

}  // namespace ns3

#endif
