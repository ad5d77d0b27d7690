// A fabric of XPUs with 1, 2 or 4 ports, each port on a switch of its own plane, links that
// lose frames; each XPU sends writes to peers at random and every write must arrive once and in
// order. With MPI (`mpirun -np N sue-fabric --mpi`) the XPUs run in blocks per rank (XPU x on
// rank x * N / xpus) and switch s on rank s % N; frames cross ranks through ns-3's MPI
// interface with the links' delay as the lookahead, and the run gives what one process gives.
//
//   sue-fabric [--xpus=64] [--ports=4] [--commands=200] [--loss=0.01] [--encap=afh1-shim]
//              [--llr] [--cbfc=CREDITS] [--pfc=XOFF] [--rate=800Gbps] [--seed=1]
//              [--dead=XPU] [--pcap=DIR] [--trace=DIR] [--mpi]
//
// Prints one line per rank: what its XPUs offered, were sent (expected) and delivered; exit
// status 0 when every write to this rank's XPUs arrived once and in order. --pcap writes a pcap
// per XPU port of this rank (DIR/xpu-<id>-<port>.pcap); --trace a file per XPU of what it
// received (DIR/xpu-<id>.txt). --dead makes one XPU's port 0 a link dead one way: every frame
// it receives there has a bad FCS (with --llr the switch's LLR gives up on the link).
#include <ns3/boolean.h>
#include <ns3/command-line.h>
#include <ns3/error-model.h>
#include <ns3/global-value.h>
#include <ns3/pointer.h>
#include <ns3/rng-seed-manager.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/sue-module.h>
#include <ns3/uinteger.h>

#include <chrono>
#include <cstdio>
#include <ctime>

#ifdef NS3_MPI
#include <ns3/mpi-interface.h>
#endif

using namespace ns3;

int main(int argc, char* argv[]) {
  std::uint32_t xpus = 64, ports = 4, commands = 200, cbfc = 0, pfc = 0, seed = 1;
  std::int64_t dead = -1;
  double loss = 0.01;
  bool llr = false, mpi = false;
  std::string encap = "afh1-shim", rate = "800Gbps", pcap, trace;
  CommandLine cmd;
  cmd.AddValue("xpus", "XPUs (2-1023)", xpus);
  cmd.AddValue("ports", "ports per XPU, one switch each (1, 2 or 4)", ports);
  cmd.AddValue("commands", "writes each XPU sends", commands);
  cmd.AddValue("loss", "share of frames every port receives with a bad FCS", loss);
  cmd.AddValue("encap", "the XPUs' encapsulation", encap);
  cmd.AddValue("llr", "link-level retry on every link", llr);
  cmd.AddValue("cbfc", "CBFC credits per VC (0: none)", cbfc);
  cmd.AddValue("pfc", "switches pause an XPU past this many bytes queued from it (0: no PFC)", pfc);
  cmd.AddValue("rate", "every port's line rate", rate);
  cmd.AddValue("seed", "seed of the traffic and the losses", seed);
  cmd.AddValue("dead", "this XPU receives every frame on its port 0 with a bad FCS", dead);
  cmd.AddValue("pcap", "directory for a pcap per XPU port", pcap);
  cmd.AddValue("trace", "directory for a file per XPU of what it received", trace);
  cmd.AddValue("mpi", "run on ns-3's distributed simulator (under mpirun)", mpi);
  cmd.Parse(argc, argv);
  if (xpus < 2 || xpus > 1023 || (ports != 1 && ports != 2 && ports != 4) || loss < 0 ||
      loss >= 1 || dead >= std::int64_t{xpus}) {
    std::fprintf(stderr,
                 "--xpus 2-1023, --ports 1, 2 or 4, --loss in [0, 1), --dead below --xpus\n");
    return 2;
  }
  if (cbfc > 0 && loss > 0 && !llr) {
    // A frame lost on a link never gives its credits back: only LLR's replays make CBFC and
    // losses go together.
    std::fprintf(stderr,
                 "--cbfc with --loss needs --llr: a lost frame's credits never come back\n");
    return 2;
  }

  std::uint32_t rank = 0, ranks = 1;
  if (mpi) {
#ifdef NS3_MPI
    GlobalValue::Bind("SimulatorImplementationType", StringValue("ns3::DistributedSimulatorImpl"));
    MpiInterface::Enable(&argc, &argv);
    rank = MpiInterface::GetSystemId();
    ranks = MpiInterface::GetSize();
#else
    std::fprintf(stderr, "--mpi: this build has no MPI (ns-3's mpi module was not built)\n");
    return 2;
#endif
  }
  RngSeedManager::SetSeed(seed);

  // Every rank makes every node, each on its rank: XPUs in blocks, switches in turn.
  NodeContainer xpuNodes, switches;
  for (std::uint32_t x = 0; x < xpus; ++x)
    xpuNodes.Create(1, static_cast<std::uint32_t>(std::uint64_t{x} * ranks / xpus));
  for (std::uint32_t s = 0; s < ports; ++s) switches.Create(1, s % ranks);

  SueHelper sue;
  sue.SetXpuAttribute("Encapsulation", StringValue(encap));
  sue.SetXpuAttribute("Llr", BooleanValue(llr));
  sue.SetXpuAttribute("CbfcCredits", UintegerValue(cbfc));
  sue.SetChannelAttribute("Delay", TimeValue(NanoSeconds(500)));
  sue.SetDeviceAttribute("DataRate", StringValue(rate));
  if (pfc > 0) {
    sue.SetSwitchAttribute("Pfc", BooleanValue(true));
    sue.SetSwitchAttribute("PfcXoff", UintegerValue(pfc));
    sue.SetSwitchAttribute("PfcXon", UintegerValue(pfc / 2));
  }
  sue.SetLoss(loss);
  NetDeviceContainer xpuPorts = sue.Install(xpuNodes, switches);
  if (dead >= 0) {
    Ptr<RateErrorModel> all = CreateObject<RateErrorModel>();
    all->SetUnit(RateErrorModel::ERROR_UNIT_PACKET);
    all->SetRate(1.0);
    xpuPorts.Get(static_cast<std::uint32_t>(dead) * ports)
        ->SetAttribute("ReceiveErrorModel", PointerValue(all));
  }
  if (!pcap.empty()) {
    for (std::uint32_t i = 0; i < xpuPorts.GetN(); ++i) {
      Ptr<NetDevice> d = xpuPorts.Get(i);
      if (!SueTraffic::IsLocal(d->GetNode())) continue;
      sue.EnablePcap(
          pcap + "/xpu-" + std::to_string(i / ports) + "-" + std::to_string(i % ports) + ".pcap", d,
          false, true);
    }
  }
  std::uint64_t replays = 0, stalls = 0;
  for (const Ptr<SueXpu>& x : SueHelper::GetXpus(xpuNodes)) {
    x->TraceConnectWithoutContext("LlrReplay",
                                  MakeBoundCallback(
                                      +[](std::uint64_t* n, std::uint8_t) { ++*n; }, &replays));
    x->TraceConnectWithoutContext("CreditStall",
                                  MakeBoundCallback(
                                      +[](std::uint64_t* n, std::uint8_t) { ++*n; }, &stalls));
  }
  for (std::uint32_t i = 0; i < switches.GetN(); ++i) {
    if (SueTraffic::IsLocal(switches.Get(i)))
      SueHelper::GetSwitch(switches.Get(i))
          ->TraceConnectWithoutContext(
              "LlrReplay", MakeBoundCallback(
                               +[](std::uint64_t* n, std::uint8_t) { ++*n; }, &replays));
  }
  Ptr<SueTraffic> traffic = CreateObject<SueTraffic>();
  traffic->SetAttribute("Commands", UintegerValue(commands));
  traffic->SetAttribute("Seed", UintegerValue(seed));
  traffic->Install(SueHelper::GetXpus(xpuNodes), trace);

  const std::clock_t cpu = std::clock();
  // Long enough for the writes (one per 100 ns per XPU) and their repair.
  Simulator::Stop(MilliSeconds(2) + MicroSeconds(commands));
  Simulator::Run();
  const double seconds = static_cast<double>(std::clock() - cpu) / CLOCKS_PER_SEC;
  const SueTraffic::Report r = traffic->GetReport();
  std::uint64_t frames = 0, pdus = 0, retransmissions = 0;
  for (const Ptr<SueXpu>& x : SueHelper::GetXpus(xpuNodes)) {
    if (!SueTraffic::IsLocal(x->GetObject<Node>())) continue;
    frames += x->GetStats().frames;
    pdus += x->GetStats().pdus;
    retransmissions += x->GetStats().retransmissions;
  }
  std::printf(
      "rank %u of %u: offered %llu expected %llu delivered %llu duplicates %llu "
      "out-of-order %llu failed %llu; frames %llu pdus %llu retransmissions %llu; "
      "llr-replays %llu credit-stalls %llu; last delivery %.3f us; cpu %.3f s\n",
      rank, ranks, (unsigned long long)r.offered, (unsigned long long)r.expected,
      (unsigned long long)r.delivered, (unsigned long long)r.duplicates,
      (unsigned long long)r.outOfOrder, (unsigned long long)r.failed, (unsigned long long)frames,
      (unsigned long long)pdus, (unsigned long long)retransmissions, (unsigned long long)replays,
      (unsigned long long)stalls, static_cast<double>(r.lastDelivery) / 1e3, seconds);
  Simulator::Destroy();
#ifdef NS3_MPI
  if (mpi) MpiInterface::Disable();
#endif
  return r.ExactlyOnce() ? 0 : 1;
}
