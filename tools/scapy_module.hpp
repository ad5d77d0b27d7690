// The scapy module the docs generator writes (python/scaleup_scapy.py): one scapy class per
// field table of the frames `scaleup dump` reads, bound to the Ethertypes, UDP ports and link
// types the dissector recognises. The module's Python is its template (python/scaleup_scapy.py.in);
// the tables fill in the template's @@name@@ places.
#pragma once

#include <string>
#include <string_view>

namespace scaleup::docgen {

// The whole module: `template_text` with its places filled, the same text on every machine and
// every run. Empty, with the reason on stderr, when a frame table of the registry has no class
// here (a new header must be placed) or the template and the places filled here disagree.
std::string scapy_module(std::string_view template_text);

}  // namespace scaleup::docgen
