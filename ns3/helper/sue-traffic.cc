#include "ns3/sue-traffic.h"

#include <ns3/callback.h>
#include <ns3/node.h>
#include <ns3/simulator.h>
#include <ns3/uinteger.h>

#include <random>

#include "scaleup/pack/command.hpp"
#include "scaleup/pack/default_profile.hpp"

#ifdef NS3_MPI
#include <ns3/mpi-interface.h>
#endif

namespace ns3 {

NS_OBJECT_ENSURE_REGISTERED(SueTraffic);

namespace sp = scaleup::pack;
namespace sw = scaleup::wire;

TypeId SueTraffic::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::SueTraffic")
          .SetParent<Object>()
          .SetGroupName("Sue")
          .AddConstructor<SueTraffic>()
          .AddAttribute("Commands", "Writes each XPU offers", UintegerValue(1000),
                        MakeUintegerAccessor(&SueTraffic::m_commands),
                        MakeUintegerChecker<std::uint32_t>())
          .AddAttribute("Bytes", "Data bytes per write (1-256)", UintegerValue(64),
                        MakeUintegerAccessor(&SueTraffic::m_bytes),
                        MakeUintegerChecker<std::uint32_t>(1, 256))
          .AddAttribute("Gap", "Mean time between an XPU's writes (exponential)",
                        TimeValue(NanoSeconds(100)), MakeTimeAccessor(&SueTraffic::m_gap),
                        MakeTimeChecker(Time(0)))
          .AddAttribute("Seed", "Seed of the plan", UintegerValue(1),
                        MakeUintegerAccessor(&SueTraffic::m_seed),
                        MakeUintegerChecker<std::uint32_t>());
  return tid;
}

SueTraffic::SueTraffic() = default;

bool SueTraffic::IsLocal(Ptr<Node> node) {
#ifdef NS3_MPI
  if (MpiInterface::IsEnabled()) return node->GetSystemId() == MpiInterface::GetSystemId();
#endif
  (void)node;
  return true;
}

std::vector<SueTraffic::Planned> SueTraffic::Plan(std::uint16_t src) const {
  std::mt19937_64 rng((std::uint64_t{m_seed} << 16) ^ src);
  std::exponential_distribution<double> gap(
      1.0 / std::max(1.0, static_cast<double>(m_gap.GetNanoSeconds())));
  const auto n = static_cast<std::uint16_t>(m_xpus.size());
  std::uniform_int_distribution<std::uint32_t> peer(0, n - 2u);
  std::vector<Planned> plan(m_commands);
  double at = 0;
  for (Planned& p : plan) {
    at += gap(rng);
    auto d = static_cast<std::uint16_t>(peer(rng));
    if (d >= src) ++d;
    p = Planned{static_cast<std::uint64_t>(at), d};
  }
  return plan;
}

void SueTraffic::Install(const std::vector<Ptr<SueXpu>>& xpus, const std::string& traceDir) {
  m_xpus = xpus;
  const std::size_t n = xpus.size();
  NS_ABORT_MSG_IF(n < 2, "SueTraffic: at least two XPUs");
  m_next.assign(n * n, 0);
  m_traces.resize(n);
  for (std::size_t x = 0; x < n; ++x) {
    NS_ABORT_MSG_IF(xpus[x]->GetXpuId() != x, "SueTraffic: XPUs in id order, from 0");
    Ptr<Node> node = xpus[x]->GetObject<Node>();
    const std::vector<Planned> plan = Plan(static_cast<std::uint16_t>(x));
    if (IsLocal(node)) {
      std::vector<std::uint64_t> seq(n, 0);
      for (const Planned& p : plan) {
        Simulator::ScheduleWithContext(node->GetId(), NanoSeconds(p.at), &SueTraffic::Offer, this,
                                       static_cast<std::uint32_t>(x), p.dst, seq[p.dst]++);
      }
      m_report.offered += plan.size();
      if (!traceDir.empty())
        m_traces[x] =
            std::make_unique<std::ofstream>(traceDir + "/xpu-" + std::to_string(x) + ".txt");
      xpus[x]->TraceConnectWithoutContext(
          "Delivered",
          MakeCallback(&SueTraffic::Delivered, this).Bind(static_cast<std::uint16_t>(x)));
      xpus[x]->TraceConnectWithoutContext(
          "Failed",
          MakeCallback(+[](std::uint64_t* f, std::uint16_t, std::uint8_t, std::uint32_t c) {
            *f += c;
          }).Bind(&m_report.failed));
    }
    for (const Planned& p : plan)
      if (IsLocal(xpus[p.dst]->GetObject<Node>())) ++m_report.expected;
  }
}

// A non-posted full write whose address is its source (bits 63-48) and its number on
// {source, destination}; its data a pattern of both.
void SueTraffic::Offer(std::uint32_t x, std::uint16_t dst, std::uint64_t seq) {
  std::vector<std::uint8_t> data(m_bytes);
  for (std::size_t i = 0; i < data.size(); ++i) data[i] = static_cast<std::uint8_t>(seq + i);
  if (!m_xpus[x]->Write(dst, 0, (std::uint64_t{x} << 48) | seq, std::move(data))) ++m_report.failed;
}

void SueTraffic::Delivered(std::uint16_t to, std::uint16_t src, std::uint8_t,
                           Ptr<const Packet> payload) {
  std::vector<std::uint8_t> b(payload->GetSize());
  payload->CopyData(b.data(), b.size());
  sp::unpacker u(sp::default_profile, sw::bytes(b.data(), b.size()));
  sp::command_view c;
  std::uint64_t first = 0, count = 0;
  while (u.next(c)) {
    const auto w = sw::decode<sp::cmd_write>(c.control);
    if (!w || (w->addr >> 48) != src || src >= m_xpus.size()) {
      ++m_report.outOfOrder;  // not a write of this traffic: counted as a fault
      continue;
    }
    const std::uint64_t seq = w->addr & 0xFFFFFFFFFFFFull;
    std::uint64_t& next = m_next[std::size_t{to} * m_xpus.size() + src];
    if (count++ == 0) first = seq;
    if (seq < next) {
      ++m_report.duplicates;
    } else {
      if (seq > next) ++m_report.outOfOrder;
      next = seq + 1;
      ++m_report.delivered;
    }
  }
  m_report.lastDelivery = static_cast<std::uint64_t>(Simulator::Now().GetNanoSeconds());
  if (m_traces[to])
    *m_traces[to] << Simulator::Now().GetNanoSeconds() << ' ' << src << ' ' << first << ' ' << count
                  << '\n';
}

void SueTraffic::DoDispose() {
  m_xpus.clear();
  m_traces.clear();
  Object::DoDispose();
}

}  // namespace ns3
