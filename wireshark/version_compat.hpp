// What differs between the Wireshark versions the plugin is built against (4.0 to 4.6), in one
// place, so that the rest of the plugin is written once:
// - the symbols Wireshark's plugin loader looks up: every version takes plugin_version,
//   plugin_want_major and plugin_want_minor (it loads a plugin only into the major.minor it was
//   built for) and plugin_register; later versions also ask plugin_describe what the plugin
//   holds, and those define WS_PLUGIN_DESC_DISSECTOR for it;
// - the types of preference variables and of a heuristic's verdict, gboolean in 4.0 and bool
//   later: taken from the declarations of the version at hand, not from its number.
// Include it from one translation unit only (plugin.cpp): it defines the exported symbols.
#pragma once

#include <wireshark.h>

#include <epan/packet.h>
#include <epan/prefs.h>
#include <ws_version.h>
#if __has_include(<wsutil/plugins.h>)  // not in Debian's 4.0 headers, which need nothing of it
#include <wsutil/plugins.h>
#endif

#include <cstdint>
#include <tuple>
#include <type_traits>

#ifndef SCALEUP_PLUGIN_VERSION
#error "SCALEUP_PLUGIN_VERSION is set by wireshark/CMakeLists.txt"
#endif

// `extern "C"` on each, not a block: a const object in a linkage block would get internal
// linkage.
extern "C" WS_DLL_PUBLIC_DEF const char plugin_version[] = SCALEUP_PLUGIN_VERSION;
extern "C" WS_DLL_PUBLIC_DEF const int plugin_want_major = WIRESHARK_VERSION_MAJOR;
extern "C" WS_DLL_PUBLIC_DEF const int plugin_want_minor = WIRESHARK_VERSION_MINOR;
extern "C" {
WS_DLL_PUBLIC void plugin_register(void);
}

#ifdef WS_PLUGIN_DESC_DISSECTOR
extern "C" {
WS_DLL_PUBLIC std::uint32_t plugin_describe(void);
}
extern "C" std::uint32_t plugin_describe(void) { return WS_PLUGIN_DESC_DISSECTOR; }
#endif

namespace scaleup::ws {

namespace compat_detail {
template <class F>
struct last_parameter;
template <class R, class... A>
struct last_parameter<R (*)(A...)> {
  using type = std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>;
};
}  // namespace compat_detail

// What a boolean preference points to (gboolean in 4.0, bool from 4.2 on).
using pref_bool = std::remove_pointer_t<
    typename compat_detail::last_parameter<decltype(&prefs_register_bool_preference)>::type>;

// What a heuristic dissector returns (gboolean in 4.0, bool from 4.2 on).
using heur_result =
    std::invoke_result_t<heur_dissector_t, tvbuff_t*, packet_info*, proto_tree*, void*>;

}  // namespace scaleup::ws
