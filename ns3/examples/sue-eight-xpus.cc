// Eight XPUs on one switch over 800 Gb/s links that lose one frame in a thousand: each sends
// 1000 writes of 64 bytes to peers at random; every write arrives once and in order.
// README: begin
#include <ns3/command-line.h>
#include <ns3/simulator.h>
#include <ns3/string.h>
#include <ns3/sue-module.h>

#include <iostream>

using namespace ns3;

int main(int argc, char* argv[]) {
  std::string pcap = "sue";
  CommandLine cmd;
  cmd.AddValue("pcap", "pcap files' prefix", pcap);
  cmd.Parse(argc, argv);

  NodeContainer xpus(8), switches(1);
  SueHelper sue;
  sue.SetXpuAttribute("Encapsulation", StringValue("afh1-shim"));
  sue.SetChannelAttribute("Delay", TimeValue(NanoSeconds(200)));
  sue.SetLoss(0.001);
  NetDeviceContainer ports = sue.Install(xpus, switches);
  sue.EnablePcap(pcap, ports);

  Ptr<SueTraffic> traffic = CreateObject<SueTraffic>();
  traffic->Install(SueHelper::GetXpus(xpus));
  Simulator::Stop(MilliSeconds(1));
  Simulator::Run();
  const SueTraffic::Report r = traffic->GetReport();
  std::cout << r.offered << " writes offered, " << r.delivered << " delivered once, "
            << r.duplicates << " duplicates, " << r.outOfOrder << " out of order\n";
  Simulator::Destroy();
  return r.ExactlyOnce() && r.delivered == r.offered ? 0 : 1;
}
// README: end
