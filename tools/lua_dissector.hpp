// The Lua dissector the docs generator writes (wireshark/scaleup.lua): a template of Lua
// (wireshark/scaleup.lua.in) with the library's field tables, command profiles, constants and
// expert names put in where it says, so that Wireshark builds without the plugin read the
// formats with the same filter names, value names and bit positions.
#pragma once

#include <string>
#include <string_view>

namespace scaleup::docgen {

// The template's line the generated tables take the place of.
inline constexpr std::string_view lua_marker = "--@@ generated tables @@";

// The dissector: `template_text` with its marker line replaced, the same text on every machine
// and every run. Empty, with the reason on stderr, when the template has no marker line or more
// than one.
std::string lua_dissector(std::string_view template_text);

}  // namespace scaleup::docgen
