#include "sue-port-owner.h"

#include <ns3/simulator.h>

#include <algorithm>

#include "sue-net-device.h"

namespace ns3 {

NS_OBJECT_ENSURE_REGISTERED(SuePortOwner);

TypeId SuePortOwner::GetTypeId() {
  static TypeId tid = TypeId("ns3::SuePortOwner").SetParent<Object>().SetGroupName("Sue");
  return tid;
}

std::uint32_t SuePortOwner::AddPort(Ptr<SueNetDevice> device) {
  const auto port = static_cast<std::uint32_t>(m_ports.size());
  m_ports.push_back(device);
  device->SetOwner(this, port);
  return port;
}

void SuePortOwner::Enqueue(Input in) {
  m_inputs.push_back(std::move(in));
  WakeNow();
}

void SuePortOwner::WakeNow() {
  if (m_wakePending) return;
  m_wakePending = true;
  Simulator::ScheduleNow(&SuePortOwner::RunWake, this);
}

std::uint64_t SuePortOwner::NowNs() {
  return static_cast<std::uint64_t>(Simulator::Now().GetNanoSeconds());
}

void SuePortOwner::WakeAt(std::uint64_t at) {
  const std::uint64_t now = NowNs();
  if (at <= now) {
    WakeNow();
    return;
  }
  if (!m_timer.IsExpired() && m_timerAt <= at) return;
  m_timer.Cancel();
  m_timerAt = at;
  m_timer = Simulator::Schedule(NanoSeconds(at - now), &SuePortOwner::Timer, this);
}

void SuePortOwner::Timer() { WakeNow(); }

void SuePortOwner::RunWake() {
  m_wakePending = false;
  // Ports in order; a port's inputs in the order they arrived (one link is FIFO each way).
  m_running.swap(m_inputs);
  std::stable_sort(m_running.begin(), m_running.end(),
                   [](const Input& a, const Input& b) { return a.port < b.port; });
  Wake(m_running);
  m_running.clear();
}

void SuePortOwner::DoDispose() {
  m_timer.Cancel();
  m_inputs.clear();
  m_ports.clear();
  Object::DoDispose();
}

}  // namespace ns3
