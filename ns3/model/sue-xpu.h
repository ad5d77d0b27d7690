// One XPU's SUE: the library's instance (transport::sue_instance: the packer and VC scheduler,
// go-back-N per {port, peer, VC} with piggybacked and stand-alone ACKs, CBFC and LLR per link,
// failover, unreachable peers) on the node's SueNetDevices, one per port. Commands go in with
// Command() or Write(); what arrives for the XPU comes out through the Delivered trace.
#ifndef SUE_XPU_H
#define SUE_XPU_H

#include <ns3/nstime.h>
#include <ns3/traced-callback.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "scaleup/transport/instance.hpp"
#include "sue-port-owner.h"

namespace ns3 {

class SueXpu : public SuePortOwner {
 public:
  using instance = scaleup::transport::sue_instance<scaleup::transport::fabric_sizing>;

  static TypeId GetTypeId();
  SueXpu();
  ~SueXpu() override;

  // Offers a command to `peer` on `vc` (control bytes, then data), in this order among the
  // XPU's commands; a command the instance has no room for waits, up to MaxWaiting of them.
  // false: refused (no control bytes, an unknown VC, MaxWaiting commands waiting already); one
  // the instance refuses for good (a peer declared unreachable) is reported by Failed.
  bool Command(std::uint16_t peer, std::uint8_t vc, std::vector<std::uint8_t> control,
               std::vector<std::uint8_t> data = {}, bool sendNow = false);
  // A full write (WR_FULL, or WR_FULL_P when posted) of `data` (1 to 256 bytes) at `address`.
  bool Write(std::uint16_t peer, std::uint8_t vc, std::uint64_t address,
             std::vector<std::uint8_t> data, bool posted = false);

  std::uint16_t GetXpuId() const { return m_xpuid; }
  const scaleup::transport::instance_stats& GetStats() const;
  // Commands waiting for room in the instance.
  std::size_t GetWaiting() const { return m_waiting.size(); }
  // The configuration's error, empty when the instance runs.
  std::string GetConfigError() const;

  // Delivered: (source XPU, VC, the PDU's payload: its commands, for pack::unpacker).
  using DeliveredCallback = void (*)(std::uint16_t src, std::uint8_t vc, Ptr<const Packet> payload);
  // Retransmit, Nack: (peer, VC, PSN); Failover: (port, to port, peer, PDUs moved);
  // CreditStall, LlrReplay: (port); XpuDrop: (port, peer, why); Failed: (peer, VC, commands).
  using PsnCallback = void (*)(std::uint16_t peer, std::uint8_t vc, std::uint16_t psn);

 protected:
  void DoInitialize() override;
  void DoDispose() override;
  void Wake(const std::vector<Input>& inputs) override;

 private:
  struct Waiting {
    std::uint16_t peer;
    std::uint8_t vc;
    bool sendNow;
    std::vector<std::uint8_t> control, data;
  };
  void Start();
  bool HandOver(const Waiting& w);
  void Transmit();
  void Registers();
  static void OnNote(void* self, const scaleup::transport::instance_note& n);

  // Attributes
  std::uint16_t m_xpuid = 0;
  std::uint8_t m_vcs = 2;
  std::uint32_t m_window = 256;
  Time m_rto, m_ackDelay;
  std::uint32_t m_maxRetries = 7, m_ackEvery = 8, m_packLimit = 0, m_cbfcCredits = 0;
  std::uint32_t m_maxWaiting = 1u << 20;
  bool m_llr = false, m_unordered = false;
  std::string m_encap = "udp4", m_profileFile;

  scaleup::transport::instance_config m_config{};
  std::unique_ptr<instance> m_sue;
  std::shared_ptr<const void> m_profileOwner;  // the file's profile, when one is loaded
  std::string m_error;
  std::deque<Waiting> m_waiting;
  std::vector<std::uint8_t> m_scratch, m_rx;
  std::vector<std::uint32_t> m_stalls, m_replays;
  std::uint8_t m_nextPort = 0;

  TracedCallback<std::uint16_t, std::uint8_t, Ptr<const Packet>> m_delivered;
  TracedCallback<std::uint16_t, std::uint8_t, std::uint16_t> m_retransmit, m_nack;
  TracedCallback<std::uint8_t, std::uint8_t, std::uint16_t, std::uint32_t> m_failover;
  TracedCallback<std::uint8_t> m_creditStall, m_llrReplay;
  TracedCallback<std::uint8_t, std::uint16_t, std::string> m_drop;
  TracedCallback<std::uint16_t, std::uint8_t, std::uint32_t> m_failed;
};

}  // namespace ns3

#endif
