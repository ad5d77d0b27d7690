// What the plugin registers with Wireshark, built from the library's field tables: a protocol
// per filter prefix, one hf per filter name, subtree indices, and expert infos for every error
// the library can report, every sequence-analysis flag and every conformance rule. Nothing here
// writes a bit position: a field's bits, where Wireshark draws them, are its table's.
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
#include "scaleup/dissect/registered_fields.hpp"
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
  std::string name;    // the hf's: the first table's name for the filter
  bool named = false;  // value names registered: Wireshark labels a value "name (value)"
  // A field that does not fill its bytes, registered with its bits (every entry of the filter a
  // header's, at one place in its first byte): Wireshark draws the bits itself. It takes the
  // value as it lies in the item's bytes (shifted left by `shift`), and masks and shifts back.
  std::uint32_t bitmask = 0;
  unsigned shift = 0;
  unsigned bit_in_byte = 0;
};

// How one table entry's nodes are shown: the spec of its filter, and whether the label
// Wireshark makes from the hf (when it needs one: a tree shown or printed) is the library's
// text for the entry, so that the plugin need not write it for every item of every frame.
struct field_use {
  const field_spec* spec = nullptr;
  bool fits = true;              // false: the entry's bits are not the hf's bitmask (shown as text)
  bool wireshark_label = false;  // for the entry's nodes read from the frame
  bool wireshark_label_generated = false;  // for its computed nodes
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
  // The same for a table entry, with how its nodes are shown, remembered by the entry's
  // address: every field of every frame comes here, and the search by name costs more than the
  // item it is for.
  const field_use& use_of(const wire::field_info& info);

  // A subtree index per layer name, handed out on first use from a pool.
  int ett_for(std::string_view layer_name);

  expert_field* expert_for(wire::errc code, wire::severity level);
  expert_field* expert_for(dissect::flag f);
  expert_field* expert_for(dissect::rule r);

  int hf_analysis = -1;
  std::vector<int> hf_values;  // parallel to dissect::analysis_values
  int ett_analysis = -1;

 private:
  int* hf_into(std::map<int, std::vector<hf_register_info>>& by_protocol, int proto,
               const char* name, const char* abbrev, ftenum type, int display, const void* strings,
               const char* blurb, std::uint64_t bitmask = 0);
  std::vector<std::pair<std::string, int*>> field_hfs(
      std::map<int, std::vector<hf_register_info>>& by_protocol);
  void register_hfs(std::map<int, std::vector<hf_register_info>>& by_protocol,
                    const std::vector<std::pair<std::string, int*>>& ids);
  const char* keep(std::string_view s);
  int protocol_for_prefix(std::string_view prefix, std::string_view title);

  std::deque<std::string> strings_;
  std::deque<protocol> protocols_;
  dissect::registered_fields collected_;
  std::map<std::string, field_spec, std::less<>> fields_;
  // Open addressing on the entry's address, a power-of-two table at most half full: cheaper
  // than a std::unordered_map, whose bucket index is a division.
  struct known_field {
    const wire::field_info* info = nullptr;
    // The entry's filter, bit and width when it was looked up: an entry at an address once
    // another's (a table built at run time) is looked up again.
    std::string_view filter;
    std::uint16_t bit = 0, width = 0;
    field_use use;
  };
  field_use use_for(const wire::field_info& info) const;
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
