// The scapy module the docs generator writes (python/scaleup_scapy.py): one scapy class per
// field table of the frames `scaleup dump` reads, bound to the Ethertypes, UDP ports and link
// types the dissector recognises.
#pragma once

#include <string>

namespace scaleup::docgen {

// The whole module, the same text on every machine and every run. Empty, with the reason on
// stderr, when a frame table of the registry has no class here (a new header must be placed).
std::string scapy_module();

}  // namespace scaleup::docgen
