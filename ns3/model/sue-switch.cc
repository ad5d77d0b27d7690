#include "sue-switch.h"

#include <ns3/boolean.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

#include <algorithm>

#include "scaleup/transport/sue_frame.hpp"
#include "sue-net-device.h"

namespace ns3 {

NS_OBJECT_ENSURE_REGISTERED(SueSwitch);

namespace st = scaleup::transport;
namespace sw = scaleup::wire;

namespace {
constexpr std::uint8_t no_class = 0xFF;  // above CBFC's classes
}  // namespace

TypeId SueSwitch::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::SueSwitch")
          .SetParent<SuePortOwner>()
          .SetGroupName("Sue")
          .AddConstructor<SueSwitch>()
          .AddAttribute("Encapsulation", "The XPUs' encapsulation (SueXpu's attribute)",
                        StringValue("afh1-shim"), MakeStringAccessor(&SueSwitch::m_encap),
                        MakeStringChecker())
          .AddAttribute("Llr", "Link-level retry on every port (as the XPUs')", BooleanValue(false),
                        MakeBooleanAccessor(&SueSwitch::m_llr), MakeBooleanChecker())
          .AddAttribute("CbfcCredits",
                        "CBFC credits per VC each port grants (as the XPUs'; 0: none)",
                        UintegerValue(0), MakeUintegerAccessor(&SueSwitch::m_cbfcCredits),
                        MakeUintegerChecker<std::uint32_t>())
          .AddAttribute("Pfc", "Pause a port's XPU when its frames queued here pass PfcXoff bytes",
                        BooleanValue(false), MakeBooleanAccessor(&SueSwitch::m_pfc),
                        MakeBooleanChecker())
          .AddAttribute("PfcXoff", "Bytes queued from one port that pause it",
                        UintegerValue(64 * 1024), MakeUintegerAccessor(&SueSwitch::m_pfcXoff),
                        MakeUintegerChecker<std::uint32_t>(1))
          .AddAttribute("PfcXon", "...and that resume it", UintegerValue(32 * 1024),
                        MakeUintegerAccessor(&SueSwitch::m_pfcXon),
                        MakeUintegerChecker<std::uint32_t>(0))
          .AddAttribute("QueueFrames", "Frames an egress queue holds; more are dropped",
                        UintegerValue(4096), MakeUintegerAccessor(&SueSwitch::m_queueFrames),
                        MakeUintegerChecker<std::uint32_t>(1))
          .AddTraceSource(
              "Drop", "A frame dropped (port, why: link, no-route, queue-full, link-down)",
              MakeTraceSourceAccessor(&SueSwitch::m_drop), "ns3::SueSwitch::DropCallback")
          .AddTraceSource("LlrReplay", "A frame sent again by LLR (port)",
                          MakeTraceSourceAccessor(&SueSwitch::m_llrReplay),
                          "ns3::SueXpu::PortCallback");
  return tid;
}

SueSwitch::SueSwitch() = default;
SueSwitch::~SueSwitch() = default;

void SueSwitch::AddRoute(std::uint16_t xpu, std::uint32_t port) { m_routes[xpu] = port; }

void SueSwitch::DoInitialize() {
  Start();
  SuePortOwner::DoInitialize();
}

void SueSwitch::Start() {
  if (!m_state.empty() || GetNPorts() == 0) return;
  const auto kind = sw::encap_from_string(m_encap);
  if (!kind || *kind == sw::encap::lite)
    NS_FATAL_ERROR("SueSwitch: Encapsulation: " << m_encap
                                                << " is not an SUE encapsulation over Ethernet");
  m_kind = *kind;
  m_link = st::link_config_of(m_llr, m_cbfcCredits);
  // Pause times are read at the ports' rate.
  m_link.pfc.link_mbps =
      static_cast<std::uint32_t>(m_ports[0]->GetDataRate().GetBitRate() / 1000000);
  if (m_pfc) {
    m_link.pfc_send = true;
    m_link.pfc_rx.link = m_link.pfc;
    m_link.pfc_rx.xoff.fill(m_pfcXoff);
    m_link.pfc_rx.xon.fill(m_pfcXon);
    m_link.pfc_rx.capacity.fill(std::max<std::uint32_t>(2 * m_pfcXoff, m_pfcXoff + 64 * 1024));
  }
  m_receive = st::sue_receive_options();
  m_state.resize(GetNPorts());
  const std::uint64_t now = NowNs();
  for (std::uint32_t p = 0; p < GetNPorts(); ++p) {
    m_state[p].link = std::make_unique<link_t>(m_link);
    if (const sw::error e = m_state[p].link->config_error())
      NS_FATAL_ERROR("SueSwitch: " << std::string(e.what));
    m_state[p].link->start(now);  // CBFC advertises the port's buffer
    Messages(p);
  }
  m_buffer.resize(64 * 1024);
}

// The priority a frame of CBFC class `cls` travels on: its VC's, or the acknowledgements'.
std::uint8_t SueSwitch::Priority(std::uint8_t cls) const {
  return cls < m_link.pfc.vc_priority.size() ? m_link.pfc.vc_priority[cls]
                                             : m_link.pfc.ack_priority;
}

void SueSwitch::Messages(std::uint32_t port) {
  link_t& l = *m_state[port].link;
  for (const st::link_message& m : l.messages()) m_ports[port]->SendMessage(m);
  l.clear_messages();
}

void SueSwitch::Touch(std::uint32_t port) {
  if (m_state[port].touched) return;
  m_state[port].touched = true;
  m_touched.push_back(port);
}

// Only the ports something happened to are looked at (a frame, a message, a port free again, a
// timer due), so that a wake-up costs what it does, not the switch's port count.
void SueSwitch::Wake(const std::vector<Input>& inputs) {
  Start();
  const std::uint64_t now = NowNs();
  for (const Input& in : inputs) {
    Touch(in.port);
    if (in.what == Input::MESSAGE) {
      m_state[in.port].link->message(in.message, now);
      Messages(in.port);
    } else if (in.what == Input::FRAME) {
      Arrive(in, now);
    }
  }
  while (!m_deadlines.empty() && m_deadlines.top().first <= now) {
    Touch(m_deadlines.top().second);
    m_deadlines.pop();
  }
  std::sort(m_touched.begin(), m_touched.end());
  // Egress may drain other ports' buffers (their credits go back): they join the list.
  for (std::size_t i = 0; i < m_touched.size(); ++i) {
    const std::uint32_t p = m_touched[i];
    link_t& l = *m_state[p].link;
    if (l.deadline() <= now) {
      l.tick(now);
      Messages(p);
    }
    Egress(p, now);
  }
  for (const std::uint32_t p : m_touched) {
    Port& s = m_state[p];
    s.touched = false;
    const std::uint64_t d = s.link->deadline();
    if (d != st::link_never && d != s.armed) {
      s.armed = d;
      m_deadlines.emplace(d > now ? d : now + 1, p);
    }
  }
  m_touched.clear();
  if (!m_deadlines.empty()) WakeAt(m_deadlines.top().first);
}

void SueSwitch::Arrive(const Input& in, std::uint64_t now) {
  link_t& ingress = *m_state[in.port].link;
  const std::uint32_t size = in.packet->GetSize();
  const std::uint8_t priority = Priority(in.info.cls);
  if (!ingress.arrived(in.info, size, priority, now)) {
    Messages(in.port);
    m_drop(in.port, "link");
    return;
  }
  Messages(in.port);
  if (size > m_buffer.size()) m_buffer.resize(size);
  in.packet->CopyData(m_buffer.data(), size);
  const sw::bytes frame(m_buffer.data(), size);
  // A pause from the XPU is for this port's egress: taken here, not forwarded.
  if (size >= 14 && sw::load_be16(frame.data() + 12) == st::mac_control_ethertype) {
    if (const auto pf = st::decode_pfc_frame(frame)) ingress.pfc_in(pf->pdu, now);
    ingress.drained(in.info, size, priority, now);
    return;
  }
  std::optional<std::uint32_t> dst = st::read_sue_frame(frame, m_receive).dst_xpu;
  // AFH Gen 1 frames the reader does not read as SUE (the failover exchange's control frames):
  // the destination's address bits (R2 3.5.3).
  if (!dst && m_kind != sw::encap::udp4 && m_kind != sw::encap::udp6 && size >= 6 &&
      sw::load_be32(frame.data()) == sw::afh1_default_prefix)
    dst = sw::load_be16(frame.data() + 4);
  const auto route = dst ? m_routes.find(static_cast<std::uint16_t>(*dst)) : m_routes.end();
  const char* why = route == m_routes.end()                                ? "no-route"
                    : m_state[route->second].link->down()                  ? "link-down"
                    : m_state[route->second].queue.size() >= m_queueFrames ? "queue-full"
                                                                           : nullptr;
  if (why) {
    ingress.drained(in.info, size, priority, now);
    Messages(in.port);
    m_drop(in.port, why);
    return;
  }
  m_state[route->second].queue.push_back(Queued{in.packet, in.port, in.info});
  Touch(route->second);
}

// The port's next frame leaves if the port is free: LLR's replays first, then the queue's
// head once its link layer lets it (credits, no pause, room in the replay store).
void SueSwitch::Egress(std::uint32_t port, std::uint64_t now) {
  Port& s = m_state[port];
  if (s.link->down()) {
    DropQueue(port, now);
    return;
  }
  Ptr<SueNetDevice> dev = m_ports[port];
  if (dev->IsBusy()) return;
  // A pause goes first. It crosses the link as any frame does (numbered by LLR, which the XPU's
  // end applies to every frame) in a class of no VC's, so that CBFC does not count it.
  if (const auto pause = s.link->pfc_out()) {
    std::array<std::uint8_t, 6> mac{};
    Mac48Address::ConvertFrom(dev->GetAddress()).CopyTo(mac.data());
    std::uint64_t src = 0;
    for (const std::uint8_t b : mac) src = src << 8 | b;
    if (st::encode_pfc_frame(st::pfc_frame{.src = src, .pdu = *pause}, m_buffer)) {
      const sw::bytes f(m_buffer.data(), st::pfc_frame_size);
      const st::link_info info = s.link->sent(f, no_class, now);
      dev->TransmitFrame(Create<Packet>(f.data(), static_cast<std::uint32_t>(f.size())), info);
      return;
    }
  }
  if (s.link->replay_pending()) {
    st::link_info info{};
    const std::size_t n = s.link->replay(m_buffer, info);
    if (n > 0) {
      m_llrReplay(static_cast<std::uint8_t>(port));
      dev->TransmitFrame(Create<Packet>(m_buffer.data(), static_cast<std::uint32_t>(n)), info);
    }
    return;
  }
  if (s.queue.empty()) return;
  Queued& q = s.queue.front();
  const std::uint32_t size = q.frame->GetSize();
  const std::uint8_t priority = Priority(q.info.cls);
  if (!s.link->can_send(q.info.cls, priority, size, now)) return;
  m_state[q.ingress].link->drained(q.info, size, priority, now);
  Messages(q.ingress);
  Touch(q.ingress);
  q.frame->CopyData(m_buffer.data(), size);
  const st::link_info info = s.link->sent(sw::bytes(m_buffer.data(), size), q.info.cls, now);
  Ptr<Packet> frame = q.frame;
  s.queue.pop_front();
  dev->TransmitFrame(frame, info);
}

// LLR gave up on the port's link (its retry limit, R2 3.5.5): nothing leaves it again, as this
// model has no link status to bring it back. The frames waiting for it are dropped, and give the
// credits they hold back to the ports they came in on: kept, they would stall those ports' XPUs
// towards every destination of the plane. Frames for it are dropped as they arrive (Arrive).
void SueSwitch::DropQueue(std::uint32_t port, std::uint64_t now) {
  std::deque<Queued>& queue = m_state[port].queue;
  while (!queue.empty()) {
    const Queued q = std::move(queue.front());
    queue.pop_front();
    m_state[q.ingress].link->drained(q.info, q.frame->GetSize(), Priority(q.info.cls), now);
    Messages(q.ingress);
    Touch(q.ingress);
    m_drop(port, "link-down");
  }
}

void SueSwitch::DoDispose() {
  m_state.clear();
  SuePortOwner::DoDispose();
}

}  // namespace ns3
