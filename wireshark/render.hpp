// Walks a dissection tree (dissect/tree.hpp) into Wireshark's protocol tree: a protocol item
// per run of layers of one of our protocols, a subtree per layer nested by byte range, an item
// per field with the text `scaleup dump -v` prints, and an expert info per error. Layers of
// protocols Wireshark dissects itself (eth, vlan, ip, udp) are left to it, except in a frame
// none of its dissectors saw, where they are shown as text.
#pragma once

#include <wireshark.h>

#include <epan/expert.h>
#include <epan/packet.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include "registry.hpp"
#include "scaleup/dissect/field_text.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/wire/reliability_header.hpp"

namespace scaleup::ws {

struct string_sink {
  std::string& s;
  void operator()(std::string_view v) { s.append(v); }
};

// Where the tree's byte offsets land: offset + base in `tvb`, clamped to the bytes captured.
// The engine only reports ranges inside the buffer it was given, and that buffer is the
// tvb's captured bytes (base 0) or a copy of them behind a made-up header (base < 0).
struct placement {
  tvbuff_t* tvb = nullptr;
  int base = 0;

  std::pair<int, int> range(std::uint32_t offset, std::uint32_t length) const {
    const long n = tvb_captured_length(tvb);
    const long start = std::clamp<long>(static_cast<long>(offset) + base, 0, n);
    const long end = std::clamp<long>(static_cast<long>(offset) + base + length, start, n);
    return {static_cast<int>(start), static_cast<int>(end - start)};
  }
};

struct rendered {
  proto_item* first_item = nullptr;  // our first protocol item
  proto_tree* first_tree = nullptr;
  proto_item* rh_item = nullptr;  // the protocol item holding the Reliability Header
  proto_tree* rh_tree = nullptr;
  const protocol* last = nullptr;  // the innermost of ours: what the Protocol column names
  bool any = false;
};

namespace detail {

inline std::string field_text(const dissect::field_node& f) {
  std::string text;
  string_sink out{text};
  dissect::put_field_text(out, f);
  return text;
}

// Writes into a Wireshark label; `full` when the text does not fit (it is then incomplete).
struct label_sink {
  char* text;
  std::size_t size = 0;
  bool full = false;
  void operator()(std::string_view v) {
    // `size` stays below the label's length, so the difference cannot wrap.
    if (v.size() < ITEM_LABEL_LENGTH - size) [[likely]] {
      std::memcpy(text + size, v.data(), v.size());
      size += v.size();
    } else {
      full = true;
      size = ITEM_LABEL_LENGTH - 1;  // nothing more goes in
    }
  }
};

// What proto_tree_add_*_format() does with its text, without formatting "%s" through
// printf, which cost more than adding the item (tshark's -T fields builds the visible tree):
// the label of a real item (not the parent handed back for a faked one) that is not hidden.
// The label is written in place when it is only the text, as in Wireshark 4.0; a label that
// holds more (later versions keep where the value starts) is left to Wireshark.
inline void set_label(proto_tree* tree, proto_item* item, const dissect::field_node& f) {
  if (!item || item == tree || proto_item_is_hidden(item)) return;
  if constexpr (sizeof(item_label_t) == ITEM_LABEL_LENGTH) {
    auto* rep = wmem_new(PNODE_POOL(item), item_label_t);
    label_sink out{rep->representation};
    dissect::put_field_text(out, f);
    if (!out.full) {
      rep->representation[out.size] = '\0';
      PITEM_FINFO(item)->rep = rep;
      return;
    }
  }
  proto_item_set_text(item, "%s", field_text(f).c_str());  // Wireshark's truncation mark
}

inline std::pair<int, int> field_range(const placement& at, const dissect::field_node& f,
                                       std::uint32_t layer_offset) {
  return f.generated ? at.range(layer_offset, 0)
                     : at.range(f.bit / 8, (f.bit + f.info->width + 7) / 8 - f.bit / 8);
}

inline void add_text(proto_tree* tree, const placement& at, int ett, const dissect::field_node& f,
                     std::uint32_t layer_offset) {
  const auto [start, length] = field_range(at, f, layer_offset);
  proto_item* item = nullptr;
  proto_tree_add_subtree_format(tree, at.tvb, start, length, ett, &item, "%s",
                                field_text(f).c_str());
  if (f.generated) proto_item_set_generated(item);
}

// The field's item with its value, unlabelled; nullptr when it cannot be shown.
inline proto_item* add_value(const field_spec& spec, proto_tree* tree, tvbuff_t* tvb, int start,
                             int length, packet_info* pinfo, const dissect::field_node& f) {
  const int hf = spec.hf;
  switch (spec.type) {
    case FT_STRING: {
      const std::string_view v = f.value_name();
      return proto_tree_add_string(tree, hf, tvb, start, length,
                                   wmem_strndup(pinfo->pool, v.data(), v.size()));
    }
    case FT_ETHER: {
      guint8 mac[6];
      for (int i = 0; i < 6; ++i) mac[i] = static_cast<guint8>(f.value >> (8 * (5 - i)));
      return proto_tree_add_ether(tree, hf, tvb, start, length, mac);
    }
    case FT_IPv4:
      return proto_tree_add_ipv4(tree, hf, tvb, start, length,
                                 g_htonl(static_cast<guint32>(f.value)));
    case FT_IPv6: {
      if (!f.raw) return nullptr;
      ws_in6_addr a;
      std::copy(f.raw, f.raw + 16, a.bytes);
      return proto_tree_add_ipv6(tree, hf, tvb, start, length, &a);
    }
    case FT_BOOLEAN:
      return proto_tree_add_boolean(tree, hf, tvb, start, length, static_cast<guint32>(f.value));
    case FT_UINT8:
    case FT_UINT16:
    case FT_UINT24:
    case FT_UINT32:
      // With a bitmask Wireshark takes the value where it lies in the item's bytes.
      return proto_tree_add_uint(tree, hf, tvb, start, length,
                                 static_cast<guint32>(f.value << spec.shift));
    default:
      return proto_tree_add_uint64(tree, hf, tvb, start, length, f.value);
  }
}

// A layer's subtree heading: "#2: <title>, 12 bytes" (the number only in a list).
template <class Sink>
void put_layer_title(Sink& out, const dissect::layer_node& l, std::size_t list_index) {
  if (!l.list.empty()) {
    out("#");
    dissect::detail::put_uint(out, list_index);
    out(": ");
  }
  out(l.title);
  out(", ");
  dissect::detail::put_uint(out, l.length);
  out(l.length == 1 ? " byte" : " bytes");
}

// The subtree of a layer; the heading built on the stack, not in strings on the heap.
inline proto_tree* add_layer_subtree(proto_tree* parent, tvbuff_t* tvb, int start, int length,
                                     int ett, const dissect::layer_node& l,
                                     std::size_t list_index) {
  char text[ITEM_LABEL_LENGTH];
  label_sink out{text};
  put_layer_title(out, l, list_index);
  if (out.full) {  // too long for a label: Wireshark truncates it
    std::string s;
    string_sink all{s};
    put_layer_title(all, l, list_index);
    return proto_tree_add_subtree_format(parent, tvb, start, length, ett, nullptr, "%s", s.c_str());
  }
  text[out.size] = '\0';
  return proto_tree_add_subtree_format(parent, tvb, start, length, ett, nullptr, "%s", text);
}

inline void add_field(registry& reg, proto_tree* tree, const placement& at, packet_info* pinfo,
                      const dissect::field_node& f, const dissect::layer_node& l) {
  if (!tree) return;  // no tree asked for: Wireshark would add nothing
  const field_use& use = reg.use_of(*f.info);
  const field_spec* spec = use.spec;
  if (!spec || spec->hf < 0) return;
  // An entry whose bits are not its filter's registered ones (a profile loaded later that puts
  // a field elsewhere): its value would be masked wrongly, so it is text.
  if (!use.fits) return add_text(tree, at, reg.ett_for(l.name), f, l.offset);
  const auto [start, length] = field_range(at, f, l.offset);
  proto_item* item = add_value(*spec, tree, at.tvb, start, length, pinfo, f);
  if (!item) return;
  // Wireshark writes a label only when one is shown or printed, and for most fields it is the
  // library's text; the plugin writes the others' for every item of every frame.
  if (!(f.generated ? use.wireshark_label_generated : use.wireshark_label))
    set_label(tree, item, f);
  if (f.generated) proto_item_set_generated(item);
}

// What render() works in.
struct render_scratch {
  std::vector<proto_tree*> layer_tree;
  std::vector<std::size_t> open, first, next;
  std::vector<const dissect::field_node*> by_layer;
  std::vector<const protocol*> protocol_at;
};

}  // namespace detail

// `fallback`: the protocol the hook expected at `fallback_offset`, which holds the errors when
// no layer of ours was decoded (a PDU too short for its header).
// `whole_frame`: no dissector of Wireshark's has shown any of this frame.
template <class Tree>
rendered render(registry& reg, const Tree& t, const placement& at, packet_info* pinfo,
                proto_tree* root, const protocol* fallback = nullptr,
                std::uint32_t fallback_offset = 0, bool whole_frame = false) {
  rendered r;
  const auto layers = t.layer_list();
  // The lists below, kept from frame to frame: a frame allocates none of them. Wireshark
  // dissects on one thread, as the plugin's other state assumes.
  static detail::render_scratch scratch;
  auto& layer_tree = scratch.layer_tree;
  layer_tree.assign(layers.size(), nullptr);
  const protocol* current = nullptr;
  proto_tree* current_tree = nullptr;
  proto_item* current_item = nullptr;
  auto& open = scratch.open;  // layers of the current protocol that may hold later ones
  open.clear();
  std::size_t list_index = 0;
  std::string_view list_name;
  const auto holds = [&](std::size_t outer, const dissect::layer_node& l) {
    const auto& o = layers[outer];
    return o.offset <= l.offset && l.offset < o.offset + o.length &&
           l.offset + l.length <= o.offset + o.length;
  };
  // Each layer's fields right after its heading, as `scaleup dump -v` prints them; generated
  // fields may come later in the tree than the layers after theirs.
  auto& first = scratch.first;
  first.assign(layers.size() + 1, 0);
  const auto fields = t.field_list();
  for (const auto& f : fields)
    if (f.layer < layers.size()) ++first[f.layer + 1];
  for (std::size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
  auto& by_layer = scratch.by_layer;
  by_layer.resize(first.back());
  {
    auto& next = scratch.next;
    next.assign(first.begin(), first.end() - 1);
    for (const auto& f : fields)
      if (f.layer < layers.size()) by_layer[next[f.layer]++] = &f;
  }
  // Each layer's protocol, once: a protocol item looks ahead over the run of its layers.
  auto& protocol_at = scratch.protocol_at;
  protocol_at.resize(layers.size());
  for (std::size_t li = 0; li < layers.size(); ++li)
    protocol_at[li] = reg.protocol_of(layers[li].name);
  for (std::size_t li = 0; li < layers.size(); ++li) {
    const auto& l = layers[li];
    const protocol* p = protocol_at[li];
    if (!p || p->id < 0) {
      current = nullptr;
      open.clear();
      // In a frame no Wireshark dissector has seen (AFH Gen 2 took it before Ethernet), a
      // layer of Wireshark's (the FCS) is shown as text: its field is Wireshark's to define.
      if (whole_frame) {
        const auto [start, length] = at.range(l.offset, l.length);
        proto_tree* tree =
            proto_tree_add_subtree_format(root, at.tvb, start, length, reg.ett_for(l.name), nullptr,
                                          "%s, %u bytes", std::string(l.title).c_str(), l.length);
        for (std::size_t k = first[li]; k < first[li + 1]; ++k)
          detail::add_text(tree, at, reg.ett_for(l.name), *by_layer[k], l.offset);
      }
      continue;
    }
    // Nested under the latest open layer whose bytes hold this one, whatever its protocol
    // (the commands of a SUE Lite payload stay under SUE Lite).
    while (!open.empty() && !holds(open.back(), l)) open.pop_back();
    if (p != current && open.empty()) {
      // One protocol item over the run of consecutive layers that belong to p.
      std::uint32_t lo = l.offset, hi = l.offset + l.length;
      for (std::size_t k = li + 1; k < layers.size() && protocol_at[k] == p; ++k) {
        lo = std::min(lo, layers[k].offset);
        hi = std::max(hi, layers[k].offset + layers[k].length);
      }
      const auto [start, length] = at.range(lo, hi - lo);
      proto_item* item = proto_tree_add_item(root, p->id, at.tvb, start, length, ENC_NA);
      current_tree = proto_item_add_subtree(item, p->ett);
      current = p;
      if (!r.first_item) r.first_item = item, r.first_tree = current_tree;
      r.any = true;
      r.last = p;
      current_item = item;
    }
    if (l.name == wire::layout<wire::reliability_header>::name && !r.rh_item) {
      r.rh_item = current_item;
      r.rh_tree = current_tree;
    }
    proto_tree* parent = open.empty() ? current_tree : layer_tree[open.back()];
    if (l.name == p->prefix && open.empty()) {
      layer_tree[li] = current_tree;  // the protocol's own header: its fields go on top
    } else {
      if (!l.list.empty()) {
        list_index = l.list == list_name ? list_index + 1 : 1;
        list_name = l.list;
      }
      const auto [start, length] = at.range(l.offset, l.length);
      layer_tree[li] = detail::add_layer_subtree(parent, at.tvb, start, length, reg.ett_for(l.name),
                                                 l, list_index);
    }
    for (std::size_t k = first[li]; k < first[li + 1]; ++k)
      detail::add_field(reg, layer_tree[li], at, pinfo, *by_layer[k], l);
    open.push_back(li);
  }

  // Every error the library reported, at the layer it names (else on our first protocol).
  for (const auto& e : t.error_list()) {
    proto_tree* where = nullptr;
    for (std::size_t li = layers.size(); li-- > 0 && !where;)
      if (layers[li].name == e.layer && layer_tree[li]) where = layer_tree[li];
    if (!where && !r.first_tree && fallback) {
      const auto [start, length] = at.range(fallback_offset, t.frame_length - fallback_offset);
      r.first_item = proto_tree_add_item(root, fallback->id, at.tvb, start, length, ENC_NA);
      r.first_tree = proto_item_add_subtree(r.first_item, fallback->ett);
      r.any = true;
      r.last = fallback;
    }
    if (!where) where = r.first_tree ? r.first_tree : root;
    expert_field* ei = reg.expert_for(e.code, e.level);
    if (!ei) continue;
    std::string text;
    string_sink out{text};
    dissect::put_error_text(out, e);
    const auto [start, length] = at.range(e.offset, 0);
    proto_tree_add_expert_format(where, pinfo, ei, at.tvb, start, length, "%s", text.c_str());
  }
  return r;
}

}  // namespace scaleup::ws
