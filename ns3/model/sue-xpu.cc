#include "sue-xpu.h"

#include <ns3/boolean.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/uinteger.h>

#include "scaleup/pack/default_profile.hpp"
#include "scaleup/wire/frame.hpp"
#include "sue-net-device.h"

#ifdef SCALEUP_SUE_PROFILE_FILES
#include "app/profile_file.hpp"
#endif

namespace ns3 {

NS_OBJECT_ENSURE_REGISTERED(SueXpu);

namespace st = scaleup::transport;
namespace sw = scaleup::wire;

namespace {

const char* drop_name(st::instance_drop why) {
  switch (why) {
    case st::instance_drop::none:
      return "none";
    case st::instance_drop::link_down:
      return "link-down";
    case st::instance_drop::link:
      return "link";
    case st::instance_drop::bad_rcrc:
      return "bad-rcrc";
    case st::instance_drop::misaddressed:
      return "misaddressed";
    case st::instance_drop::version:
      return "version";
    case st::instance_drop::partition:
      return "partition";
    case st::instance_drop::duplicate:
      return "duplicate";
    case st::instance_drop::gap:
      return "gap";
    case st::instance_drop::no_room:
      return "no-room";
    case st::instance_drop::management:
      return "management";
  }
  return "?";
}

}  // namespace

TypeId SueXpu::GetTypeId() {
  static TypeId tid =
      TypeId("ns3::SueXpu")
          .SetParent<SuePortOwner>()
          .SetGroupName("Sue")
          .AddConstructor<SueXpu>()
          .AddAttribute("XpuId", "This XPU's id (the RH's xpuid, 10 bits)", UintegerValue(0),
                        MakeUintegerAccessor(&SueXpu::m_xpuid),
                        MakeUintegerChecker<std::uint16_t>(0, 1022))
          .AddAttribute("Ports", "Ports (R2 Table 1: 1, 2 or 4): the devices added, one per plane",
                        TypeId::ATTR_GET, UintegerValue(0),
                        MakeUintegerAccessor(&SueXpu::GetNPorts),
                        MakeUintegerChecker<std::uint32_t>(1, 4))
          .AddAttribute("Vcs", "Virtual channels (R2 Table 1: 1 to 4)", UintegerValue(2),
                        MakeUintegerAccessor(&SueXpu::m_vcs),
                        MakeUintegerChecker<std::uint8_t>(1, 4))
          .AddAttribute("Window", "PDUs in flight per connection (go-back-N)", UintegerValue(256),
                        MakeUintegerAccessor(&SueXpu::m_window),
                        MakeUintegerChecker<std::uint32_t>(1, 32767))
          .AddAttribute("Rto", "Time without progress before going back to the oldest PDU",
                        TimeValue(NanoSeconds(8000)), MakeTimeAccessor(&SueXpu::m_rto),
                        MakeTimeChecker(NanoSeconds(1)))
          .AddAttribute("MaxRetries", "Timeouts in a row before a plane gives up on a peer",
                        UintegerValue(7), MakeUintegerAccessor(&SueXpu::m_maxRetries),
                        MakeUintegerChecker<std::uint32_t>(1))
          .AddAttribute("AckEvery", "A stand-alone ACK after this many PDUs not acknowledged",
                        UintegerValue(8), MakeUintegerAccessor(&SueXpu::m_ackEvery),
                        MakeUintegerChecker<std::uint32_t>(1))
          .AddAttribute("AckDelay", "...or this long after the first of them",
                        TimeValue(NanoSeconds(1000)), MakeTimeAccessor(&SueXpu::m_ackDelay),
                        MakeTimeChecker(Time(0)))
          .AddAttribute("MaxWaiting", "Commands that may wait for room in the instance",
                        UintegerValue(1u << 20), MakeUintegerAccessor(&SueXpu::m_maxWaiting),
                        MakeUintegerChecker<std::uint32_t>(1))
          .AddAttribute("Encapsulation",
                        "udp4, udp6, afh1, afh1-vlan, afh1-shim, afh1-vlan-shim, afh2 or afh2c",
                        StringValue("afh1-shim"), MakeStringAccessor(&SueXpu::m_encap),
                        MakeStringChecker())
          .AddAttribute("ProfileFile", "A command profile in JSON (empty: the default profile)",
                        StringValue(""), MakeStringAccessor(&SueXpu::m_profileFile),
                        MakeStringChecker())
          .AddAttribute("PackLimit", "Payload bytes per PDU (0: 4096, R2 3.3)", UintegerValue(0),
                        MakeUintegerAccessor(&SueXpu::m_packLimit),
                        MakeUintegerChecker<std::uint32_t>(0, 4096))
          .AddAttribute("CbfcCredits", "CBFC: credits per VC each link end grants (0: no CBFC)",
                        UintegerValue(0), MakeUintegerAccessor(&SueXpu::m_cbfcCredits),
                        MakeUintegerChecker<std::uint32_t>())
          .AddAttribute("Llr", "Link-level retry on every port", BooleanValue(false),
                        MakeBooleanAccessor(&SueXpu::m_llr), MakeBooleanChecker())
          .AddAttribute("Unordered", "Spread PDUs over ports (R2 4.4)", BooleanValue(false),
                        MakeBooleanAccessor(&SueXpu::m_unordered), MakeBooleanChecker())
          .AddTraceSource(
              "Delivered", "A PDU's commands delivered to this XPU (source, VC, payload)",
              MakeTraceSourceAccessor(&SueXpu::m_delivered), "ns3::SueXpu::DeliveredCallback")
          .AddTraceSource("Retransmit", "A PDU sent again by go-back-N (peer, VC, PSN)",
                          MakeTraceSourceAccessor(&SueXpu::m_retransmit),
                          "ns3::SueXpu::PsnCallback")
          .AddTraceSource("Nack", "A NACK sent for a gap (peer, VC, expected PSN)",
                          MakeTraceSourceAccessor(&SueXpu::m_nack), "ns3::SueXpu::PsnCallback")
          .AddTraceSource("Failover", "PDUs moved to another port (port, to port, peer, PDUs)",
                          MakeTraceSourceAccessor(&SueXpu::m_failover),
                          "ns3::SueXpu::FailoverCallback")
          .AddTraceSource("CreditStall", "A port waited for CBFC credits (port)",
                          MakeTraceSourceAccessor(&SueXpu::m_creditStall),
                          "ns3::SueXpu::PortCallback")
          .AddTraceSource("LlrReplay", "A frame sent again by LLR (port)",
                          MakeTraceSourceAccessor(&SueXpu::m_llrReplay),
                          "ns3::SueXpu::PortCallback")
          .AddTraceSource("Drop", "An arriving frame not delivered (port, peer, why)",
                          MakeTraceSourceAccessor(&SueXpu::m_drop), "ns3::SueXpu::DropCallback")
          .AddTraceSource("Failed", "Commands that will not be delivered (peer, VC, count)",
                          MakeTraceSourceAccessor(&SueXpu::m_failed),
                          "ns3::SueXpu::FailedCallback");
  return tid;
}

SueXpu::SueXpu() = default;
SueXpu::~SueXpu() = default;

void SueXpu::DoInitialize() {
  Start();
  SuePortOwner::DoInitialize();
}

void SueXpu::Start() {
  if (m_sue || !m_error.empty()) return;
  st::instance_config& c = m_config;
  c.xpuid = m_xpuid;
  c.ports = static_cast<std::uint8_t>(GetNPorts());
  c.vcs = m_vcs;
  c.unordered = m_unordered;
  const auto kind = sw::encap_from_string(m_encap);
  if (!kind || *kind == sw::encap::lite) {
    m_error = "Encapsulation: " + m_encap + " is not an SUE encapsulation over Ethernet";
    NS_FATAL_ERROR("SueXpu " << m_xpuid << ": " << m_error);
  }
  c.frame.kind = *kind;
  c.pack_limit = m_packLimit;
  c.gbn.window = m_window;
  c.gbn.rto = static_cast<std::uint64_t>(m_rto.GetNanoSeconds());
  c.gbn.max_retries = m_maxRetries;
  c.gbn.ack_every = m_ackEvery;
  c.gbn.ack_delay = static_cast<std::uint64_t>(m_ackDelay.GetNanoSeconds());
  c.link = st::link_config_of(m_llr, m_cbfcCredits);
  if (!m_profileFile.empty()) {
#ifdef SCALEUP_SUE_PROFILE_FILES
    std::string error;
    std::shared_ptr<scaleup::dissect::runtime_profile> p =
        scaleup::app::load_profile_file(m_profileFile, error);
    if (!p) NS_FATAL_ERROR("SueXpu " << m_xpuid << ": ProfileFile: " << error);
    c.profile = &p->profile();
    m_profileOwner = p;
#else
    NS_FATAL_ERROR("SueXpu: ProfileFile needs the module built with scaleup's application library");
#endif
  }
  m_sue = std::make_unique<instance>(c);
  if (const sw::error e = m_sue->config_error()) {
    m_error = std::string(e.what);
    NS_FATAL_ERROR("SueXpu " << m_xpuid << ": " << m_error);
  }
  m_sue->set_notes(st::note_sink{this, &SueXpu::OnNote});
  m_scratch.resize(64 + sw::pdu_size(sw::sue_max_payload));
  m_stalls.assign(GetNPorts(), 0);
  m_replays.assign(GetNPorts(), 0);
  WakeNow();
}

std::string SueXpu::GetConfigError() const { return m_error; }

const st::instance_stats& SueXpu::GetStats() const {
  static const st::instance_stats none{};
  return m_sue ? m_sue->stats() : none;
}

bool SueXpu::Command(std::uint16_t peer, std::uint8_t vc, std::vector<std::uint8_t> control,
                     std::vector<std::uint8_t> data, bool sendNow) {
  if (!m_sue) Start();
  if (control.empty() || vc >= m_vcs || m_waiting.size() >= m_maxWaiting) return false;
  m_waiting.push_back(Waiting{peer, vc, sendNow, std::move(control), std::move(data)});
  WakeNow();
  return true;
}

bool SueXpu::Write(std::uint16_t peer, std::uint8_t vc, std::uint64_t address,
                   std::vector<std::uint8_t> data, bool posted) {
  if (data.empty() || data.size() > 256) return false;
  namespace sp = scaleup::pack;
  std::vector<std::uint8_t> control(12);
  (void)sw::encode(
      sp::cmd_write{.type = posted ? sp::code::write_full_posted : sp::code::write_full,
                    .dlen = static_cast<std::uint8_t>(data.size() - 1),
                    .tag = 0,
                    .addr = address},
      sw::mutable_bytes(control.data(), control.size()));
  return Command(peer, vc, std::move(control), std::move(data));
}

bool SueXpu::HandOver(const Waiting& w) {
  const st::instance_actions a =
      m_sue->step(NowNs(), st::instance_event::command(w.peer, w.vc, w.control, w.data, w.sendNow));
  if (a.error.code == sw::errc::no_space) return false;  // no room yet: it waits, in order
  if (a.error) m_failed(w.peer, w.vc, 1);
  return true;
}

void SueXpu::Wake(const std::vector<Input>& inputs) {
  if (!m_sue) Start();
  const std::uint64_t now = NowNs();
  for (const Input& in : inputs) {
    switch (in.what) {
      case Input::FREE:
        break;
      case Input::MESSAGE:
        m_sue->step(now,
                    st::instance_event::message_in(static_cast<std::uint8_t>(in.port), in.message));
        break;
      case Input::FRAME: {
        m_rx.resize(in.packet->GetSize());
        in.packet->CopyData(m_rx.data(), m_rx.size());
        const st::instance_actions a = m_sue->step(
            now, st::instance_event::frame(static_cast<std::uint8_t>(in.port), m_rx, in.info));
        if (a.delivered.valid && !a.delivered.management) {
          m_delivered(a.delivered.src, a.delivered.vc,
                      Create<Packet>(a.delivered.payload.data(),
                                     static_cast<std::uint32_t>(a.delivered.payload.size())));
        }
        break;
      }
    }
  }
  while (!m_waiting.empty() && HandOver(m_waiting.front())) m_waiting.pop_front();
  if (m_sue->deadline() <= now) m_sue->step(now, st::instance_event::tick());
  Transmit();
  // Sending may have made room for commands that waited, and they may go on a free port.
  if (!m_waiting.empty()) {
    while (!m_waiting.empty() && HandOver(m_waiting.front())) m_waiting.pop_front();
    Transmit();
  }
  Registers();
  const std::uint64_t d = m_sue->deadline();
  if (d != st::link_never) WakeAt(d > now ? d : now + 1);
}

// Every free port takes the instance's next frame for it; unordered, the search starts at a
// port that turns, so that idle ports share the work (R2 4.4).
void SueXpu::Transmit() {
  const std::uint64_t now = NowNs();
  const std::uint32_t n = GetNPorts();
  const std::uint8_t first = m_nextPort;
  if (m_unordered && n > 0) m_nextPort = static_cast<std::uint8_t>((first + 1) % n);
  for (std::uint32_t k = 0; k < n; ++k) {
    const auto p = static_cast<std::uint8_t>((first + k) % n);
    Ptr<SueNetDevice> dev = m_ports[p];
    if (dev->IsBusy() || !m_sue->port_ready(p)) continue;
    const st::instance_actions a = m_sue->step(now, st::instance_event::transmit(p, m_scratch));
    const st::instance_frame& f = a.frame;
    if (f.size == 0) continue;
    if (f.kind == st::frame_kind::retransmission) m_retransmit(f.peer, f.vc, f.psn);
    if (f.op == sw::rh_op::nack) m_nack(f.peer, f.vc, f.apsn);
    if (f.kind == st::frame_kind::replay) m_llrReplay(p);
    dev->TransmitFrame(Create<Packet>(m_scratch.data(), static_cast<std::uint32_t>(f.size)),
                       f.link);
  }
}

// CBFC stalls are counted by each port's link layer: reported as they happen.
void SueXpu::Registers() {
  for (std::uint32_t p = 0; p < GetNPorts(); ++p) {
    const auto v = m_sue->read_register(st::reg::port_base + p * st::reg::port_stride +
                                        st::reg::credit_stalls);
    if (v && *v != m_stalls[p]) {
      for (std::uint32_t i = m_stalls[p]; i != *v; ++i) m_creditStall(static_cast<std::uint8_t>(p));
      m_stalls[p] = *v;
    }
  }
}

void SueXpu::OnNote(void* self, const st::instance_note& n) {
  auto* x = static_cast<SueXpu*>(self);
  switch (n.kind) {
    case st::note_kind::link_message:
      if (n.port < x->GetNPorts()) x->m_ports[n.port]->SendMessage(n.message);
      break;
    case st::note_kind::dropped:
      x->m_drop(n.port, n.peer, drop_name(n.why));
      break;
    case st::note_kind::failover:
      x->m_failover(n.port, n.to_port, n.peer, n.count);
      break;
    case st::note_kind::failed:
      x->m_failed(n.peer, n.vc, n.count);
      break;
    default:
      break;
  }
}

void SueXpu::DoDispose() {
  m_sue.reset();
  m_waiting.clear();
  SuePortOwner::DoDispose();
}

}  // namespace ns3
