// What the plugin registers with Wireshark, built from the library's field tables: a protocol
// per filter prefix, one hf per filter name, subtree indices, and expert infos for every error
// the library can report, every sequence-analysis flag and every conformance rule. Nothing here
// knows a bit position.
#pragma once

#include <wireshark.h>

#include <epan/expert.h>
#include <epan/proto.h>

#include <cstdint>
#include <deque>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scaleup/dissect/analysis.hpp"
#include "scaleup/dissect/conformance.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/wire/error.hpp"
#include "scaleup/wire/field.hpp"

namespace scaleup::ws {

struct protocol {
  std::string prefix;  // filter name: "sue", "afh2c"
  int id = -1;
  int ett = -1;
};

// How one filter name is shown; several tables may share a name (the first octet of both
// AFH Gen 2 formats, sue.cmd.* across command shapes): one hf for all of them.
struct field_spec {
  int hf = -1;
  wire::kind kind = wire::kind::uint;
  unsigned width = 0;
  ftenum type = FT_NONE;
};

class registry {
 public:
  // Registers every protocol, field, subtree and expert info; call once, from the plugin's
  // protocol registration. Returns the id of the "sue" protocol, which owns the preferences.
  int register_all();
  // Registers the fields of a profile loaded after the start (a profile file preference) that
  // are not registered yet; fields of a prefix no protocol has are left to the tree's text.
  void register_profile(const pack::profile& prof);

  // The protocol a layer ("sue.rh", "afh2.etype") belongs to; nullptr for layers of protocols
  // Wireshark dissects itself (eth, vlan, ip, ipv6, udp).
  const protocol* protocol_of(std::string_view layer_name) const;
  const protocol* protocol_named(std::string_view prefix) const;

  // The field registered for a filter name; nullptr when it belongs to Wireshark.
  const field_spec* field(std::string_view filter) const;
  // The same for a table entry, remembered by its address: every field of every frame comes
  // here, and the search by name costs more than the item it is for.
  const field_spec* field(const wire::field_info& info);

  // A subtree index per layer name, handed out on first use from a pool.
  int ett_for(std::string_view layer_name);

  expert_field* expert_for(wire::errc code, wire::severity level);
  expert_field* expert_for(dissect::flag f);
  expert_field* expert_for(dissect::rule r);

  int hf_analysis = -1;
  std::vector<int> hf_values;  // parallel to dissect::analysis_values
  int ett_analysis = -1;

 private:
  struct pending {
    std::string filter, name, blurb;
    wire::kind kind = wire::kind::uint;
    unsigned width = 0;
    std::vector<wire::value_name> names;
  };
  void collect(const wire::field_info& f);
  int* hf_into(std::map<int, std::vector<hf_register_info>>& by_protocol, int proto,
               const char* name, const char* abbrev, ftenum type, int display, const void* strings,
               const char* blurb);
  std::vector<std::pair<std::string, int*>> field_hfs(
      std::map<int, std::vector<hf_register_info>>& by_protocol);
  void register_hfs(std::map<int, std::vector<hf_register_info>>& by_protocol,
                    const std::vector<std::pair<std::string, int*>>& ids);
  const char* keep(std::string_view s);
  int protocol_for_prefix(std::string_view prefix, std::string_view title);

  std::deque<std::string> strings_;
  std::deque<protocol> protocols_;
  std::map<std::string, pending, std::less<>> pending_;
  std::vector<std::string> pending_order_;
  std::map<std::string, field_spec, std::less<>> fields_;
  // Open addressing on the entry's address, a power-of-two table at most half full: cheaper
  // than a std::unordered_map, whose bucket index is a division.
  struct known_field {
    const wire::field_info* info = nullptr;
    std::string_view filter;  // the entry's name when it was looked up
    const field_spec* spec = nullptr;
  };
  std::vector<known_field> by_info_;
  std::size_t known_ = 0;
  known_field& slot_for(const wire::field_info* info);
  std::deque<int> ids_;
  std::deque<std::vector<hf_register_info>> hf_arrays_;  // Wireshark keeps pointers into them
  std::deque<std::vector<value_string>> vals_;
  std::deque<std::vector<val64_string>> vals64_;
  std::deque<true_false_string> tfs_;
  std::vector<gint*> etts_;
  std::deque<gint> ett_pool_;
  std::map<std::string, int, std::less<>> ett_by_layer_;
  std::size_t ett_next_ = 0;
  std::deque<expert_field> experts_;
  std::vector<ei_register_info> ei_;  // registered once, never resized afterwards
  std::map<std::pair<int, int>, expert_field*> error_experts_;
  std::map<std::uint16_t, expert_field*> flag_experts_;
  std::array<expert_field*, dissect::rules.size()> rule_experts_{};  // sue.check.<id>
};

}  // namespace scaleup::ws
