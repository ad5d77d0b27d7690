// The `scaleup` module's builders: frames of every encapsulation, PDUs and packed commands,
// written by the library's own emitters (wire::emit_sue_frame, wire::emit_frame, wire::emit_pdu,
// pack::emit_command) and pcap files by its writer. Fields are named as `scaleup dump --json`
// names them, without the layer's prefix ("npsn" for sue.rh.npsn, "addr" for sue.cmd.addr), and
// found through the field tables, so a field added to a table is a keyword here with no change.
// A value the library refuses raises ValueError with its error text (layer, byte offset, code,
// what).
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <vector>

#include "app/profile_file.hpp"
#include "builders.hpp"
#include "scaleup/dissect/field_text.hpp"
#include "scaleup/pack/command.hpp"
#include "scaleup/pcap/capture_file.hpp"
#include "scaleup/wire/frame.hpp"

namespace py = pybind11;
namespace wire = scaleup::wire;
namespace pack = scaleup::pack;

namespace {

constexpr std::string_view rh_prefix = "sue.rh.";
constexpr std::string_view cmd_prefix = "sue.cmd.";

// The library's error as ValueError, in the words dump prints errors with.
[[noreturn]] void raise(const wire::error& e) {
  std::string text;
  auto sink = [&text](std::string_view s) { text.append(s); };
  scaleup::dissect::put_error_text(sink, e);
  throw py::value_error(text);
}

// A field's keyword: its filter name without the layer's prefix.
std::string_view keyword(std::string_view filter, std::string_view prefix) {
  return filter.starts_with(prefix) ? filter.substr(prefix.size()) : filter;
}

std::string keywords(std::span<const wire::field_info> fields, std::string_view prefix) {
  std::string s;
  for (const auto& f : fields) s.append(s.empty() ? "" : ", ").append(keyword(f.filter, prefix));
  return s;
}

// A field's value from Python: an int, or for a field with value names (sue.rh.op, a command's
// status) one of the names. The value must fit the field's width: nothing is cut.
std::uint64_t field_value(const wire::field_info& f, py::handle v, std::string_view layer,
                          std::uint32_t item = 0) {
  if (py::isinstance<py::str>(v)) {
    const auto name = py::cast<std::string>(v);
    for (const auto& n : f.names)
      if (n.name == name) return n.value;
    throw py::value_error(std::string(f.filter) + ": '" + name + "' is not one of its value names");
  }
  if (!PyIndex_Check(v.ptr()))  // an int, or a numpy integer (what columns() gives)
    throw py::type_error(std::string(f.filter) + ": an int is wanted, not " +
                         py::cast<std::string>(py::str(v.get_type().attr("__name__"))));
  std::uint64_t x = 0;
  try {
    x = py::cast<std::uint64_t>(py::int_(py::reinterpret_borrow<py::object>(v)));
  } catch (const py::cast_error&) {
    throw py::value_error(std::string(f.filter) + ": " + py::cast<std::string>(py::str(v)) +
                          " is not a 64-bit unsigned value");
  }
  if (x > wire::max_value(f.width))
    raise(wire::error{.code = wire::errc::value_too_big,
                      .layer = layer,
                      .what = "value does not fit the field",
                      .field = f.filter,
                      .value = x,
                      .item = item});
  return x;
}

[[noreturn]] void raise_unknown(std::string_view layer, const std::string& key,
                                std::span<const wire::field_info> fields, std::string_view prefix,
                                std::string_view more = {}) {
  throw py::value_error(std::string(layer) + ": no field is named '" + key +
                        "' (fields: " + keywords(fields, prefix) + std::string(more) + ")");
}

// A dict's key, which names a field: a str, else TypeError (not pybind11's cast error).
std::string key_of(py::handle k, std::string_view where) {
  if (!py::isinstance<py::str>(k))
    throw py::type_error(std::string(where) + ": a key is a field's name (str), not " +
                         py::cast<std::string>(py::str(k.get_type().attr("__name__"))));
  return py::cast<std::string>(k);
}

// A header struct from {keyword: value}, through its layout's member pointers; what is not
// given keeps the struct's default.
template <class T>
T header_from(const py::dict& d, std::string_view prefix) {
  T h{};
  constexpr auto& fields = wire::field_infos<T>;
  for (const auto& [k, v] : d) {
    const auto key = key_of(k, wire::layout<T>::name);
    bool found = false;
    std::apply(
        [&](const auto&... f) {
          const auto assign = [&](const auto& field) {
            using M = std::remove_cvref_t<decltype(h.*field.member)>;
            if constexpr (std::is_integral_v<M>) {
              if (found || keyword(field.filter, prefix) != key) return;
              h.*field.member = static_cast<M>(field_value(field, v, wire::layout<T>::name));
              found = true;
            }
          };
          (assign(f), ...);
        },
        wire::layout<T>::fields);
    if (!found) raise_unknown(wire::layout<T>::name, key, fields, prefix);
  }
  return h;
}

// The RH: its XPU id is the source's (decisions.md) unless the dict says otherwise.
wire::reliability_header rh_from(const std::optional<py::dict>& d, std::uint32_t src_xpu) {
  py::dict given = d ? *d : py::dict();
  if (!given.contains("xpuid")) {
    given = py::dict(given);
    given["xpuid"] = src_xpu;
  }
  return header_from<wire::reliability_header>(given, rh_prefix);
}

// The profile a name or a file stands for, as read()'s profile= (kept loaded by `choice`).
const pack::profile& profile_of(const std::string& name, scaleup::app::profile_choice& choice) {
  if (const auto bad = choice.resolve(name, false)) throw py::value_error("profile: " + *bad);
  return *choice.profile();
}

std::vector<std::uint8_t> bytes_of(py::handle b) {
  const py::buffer_info info = py::buffer(py::reinterpret_borrow<py::object>(b)).request();
  std::vector<std::uint8_t> out(static_cast<std::size_t>(info.size * info.itemsize));
  // Its elements in order, as bytes(b) gives them: a strided buffer (memoryview(x)[::2], a
  // numpy slice) does not hold them one after the other from its first.
  if (!out.empty() &&
      PyBuffer_ToContiguous(out.data(), info.view(), static_cast<Py_ssize_t>(out.size()), 'C') != 0)
    throw py::error_already_set();
  return out;
}

// One command of `prof` from {"type": code or name, "data": bytes, keyword: value, ...},
// appended to `out` by pack::emit_command. `index` (from 1) and the command's offset name it in
// an error.
void put_command(const pack::profile& prof, const py::dict& d, std::uint32_t index,
                 std::vector<std::uint8_t>& out) {
  const wire::field_info& name_field = prof.name_field();
  const std::size_t at = out.size();
  const auto located = [&](wire::error e) {
    e.item = index;
    e.offset = static_cast<std::uint32_t>(at);
    return e;
  };
  if (!d.contains("type"))
    throw py::value_error("sue.cmd #" + std::to_string(index) + ": no \"type\"");
  const py::handle t = d["type"];
  const std::uint64_t code = py::isinstance<py::str>(t)
                                 ? field_value(name_field, t, "sue.cmd", index)
                                 : field_value(pack::type_field, t, "sue.cmd", index);
  const pack::command_type* type = prof.find(static_cast<std::uint8_t>(code));
  if (!type)
    raise(located(wire::error{.code = wire::errc::bad_value,
                              .layer = "sue.cmd",
                              .what = "command type not in the profile",
                              .field = pack::type_field.filter,
                              .value = code}));
  std::array<std::uint8_t, pack::max_control_bytes> control{};
  control[0] = static_cast<std::uint8_t>(code);
  std::vector<std::uint8_t> data;
  std::vector<std::pair<const wire::field_info*, std::uint64_t>> given;
  for (const auto& [k, v] : d) {
    const auto key = key_of(k, "sue.cmd #" + std::to_string(index));
    if (key == "type") continue;
    if (key == "data") {
      data = bytes_of(v);
      continue;
    }
    const wire::field_info* f = nullptr;
    for (const auto& candidate : type->fields)
      if (keyword(candidate.filter, cmd_prefix) == key) f = &candidate;
    if (!f || f->bit == 0)
      raise_unknown("sue.cmd #" + std::to_string(index) + " (" + std::string(type->name) + ")", key,
                    type->fields.subspan(type->fields.empty() ? 0 : 1), cmd_prefix, ", data");
    const std::uint64_t x = field_value(*f, v, "sue.cmd", index);
    wire::put_bits(control.data(), f->bit, f->width, x);
    given.emplace_back(f, x);
  }
  out.resize(at + pack::max_command_bytes);
  const auto r = pack::emit_command(prof, wire::bytes(control.data(), type->control_bytes()), data,
                                    wire::mutable_bytes(out).subspan(at));
  if (!r) raise(located(r.err));
  out.resize(at + r.value);
  // emit_command sets byte 1 from the data's length: a different value given is refused, not
  // dropped.
  for (const auto& [f, x] : given)
    if (wire::get_bits(out.data() + at, f->bit, f->width) != x)
      raise(located(wire::error{.code = wire::errc::bad_length,
                                .layer = "sue.cmd",
                                .what = "the data's length decides this field",
                                .field = f->filter,
                                .value = x}));
}

std::vector<std::uint8_t> packed(const py::iterable& commands, const std::string& profile) {
  scaleup::app::profile_choice choice;
  const pack::profile& prof = profile_of(profile, choice);
  std::vector<std::uint8_t> out;
  std::uint32_t index = 0;
  for (const py::handle c : commands) {
    if (!py::isinstance<py::dict>(c))
      throw py::type_error("sue.cmd #" + std::to_string(index + 1) + ": a dict is wanted");
    put_command(prof, py::reinterpret_borrow<py::dict>(c), ++index, out);
  }
  return out;
}

// A PDU's or a SUE Lite frame's payload: bytes, or commands packed with the profile.
std::vector<std::uint8_t> payload_of(const std::optional<py::object>& payload,
                                     const std::optional<py::iterable>& commands,
                                     const std::string& profile) {
  if (payload && commands) throw py::value_error("give payload= or commands=, not both");
  if (commands) return packed(*commands, profile);
  return payload ? bytes_of(*payload) : std::vector<std::uint8_t>{};
}

py::bytes as_bytes(const std::vector<std::uint8_t>& v, std::size_t n) {
  return py::bytes(reinterpret_cast<const char*>(v.data()), n);
}

// frame_params' members as keywords, each left at the library's default when not given.
struct param {
  const char* name;
  std::uint64_t max;
  void (*set)(wire::frame_params&, std::uint64_t);
  std::uint64_t (*get)(const wire::frame_params&);
};
template <auto Member>
constexpr param member_param(const char* name) {
  using M = std::remove_cvref_t<decltype(std::declval<wire::frame_params>().*Member)>;
  return {name, static_cast<std::uint64_t>(std::numeric_limits<M>::max()),
          [](wire::frame_params& p, std::uint64_t v) { p.*Member = static_cast<M>(v); },
          [](const wire::frame_params& p) { return static_cast<std::uint64_t>(p.*Member); }};
}
using given_params = std::vector<std::pair<const param*, std::uint64_t>>;
const std::array<param, 15> frame_params_table{{
    member_param<&wire::frame_params::src_xpu>("src_xpu"),
    member_param<&wire::frame_params::dst_xpu>("dst_xpu"),
    member_param<&wire::frame_params::tc>("tc"),
    member_param<&wire::frame_params::udp_src_port>("udp_src_port"),
    member_param<&wire::frame_params::udp_dst_port>("udp_dst_port"),
    member_param<&wire::frame_params::udp4_checksum>("udp4_checksum"),
    member_param<&wire::frame_params::hop_limit>("hop_limit"),
    member_param<&wire::frame_params::vlan_id>("vlan_id"),
    member_param<&wire::frame_params::entropy>("entropy"),
    member_param<&wire::frame_params::multicast>("multicast"),
    member_param<&wire::frame_params::afh1_prefix>("afh1_prefix"),
    member_param<&wire::frame_params::sue_ethertype>("sue_ethertype"),
    member_param<&wire::frame_params::shim_ethertype>("shim_ethertype"),
    member_param<&wire::frame_params::shim_next_header>("shim_next_header"),
    member_param<&wire::frame_params::pad>("pad"),
}};

wire::frame_params params_from(const std::string& encap, const py::kwargs& kw,
                               given_params& given) {
  wire::frame_params p;
  const auto kind = wire::encap_from_string(encap);
  if (!kind) {
    std::string names;
    for (const auto n : wire::encap_names) names.append(names.empty() ? "" : ", ").append(n);
    throw py::value_error("encap: '" + encap + "' is not one of " + names);
  }
  p.kind = *kind;
  for (const auto& [k, v] : kw) {
    const auto key = py::cast<std::string>(k);
    const param* found = nullptr;
    for (const auto& q : frame_params_table)
      if (key == q.name) found = &q;
    if (!found) {
      std::string names;
      for (const auto& q : frame_params_table) names.append(", ").append(q.name);
      throw py::type_error("frame() got an unexpected keyword argument '" + key +
                           "' (encap, rh, payload, commands, pdu, profile" + names + ")");
    }
    const wire::field_info f{.name = found->name,
                             .filter = found->name,
                             .width = static_cast<std::uint16_t>(std::bit_width(found->max))};
    const std::uint64_t x = field_value(f, v, "frame");
    found->set(p, x);
    given.emplace_back(found, x);
  }
  return p;
}

// The library's policy is that nothing the caller asks for is dropped (wrap_in_place refuses a
// multicast bit or a traffic class with no place), but frame_params cannot tell a value given
// from its default; here a keyword is given. One the encapsulation has no field for (vlan_id
// without a tag, hop_limit in plain AFH Gen 1, entropy over IPv4, udp_* outside UDP) leaves the
// headers as its default would: refused. The headers themselves say so, no table of which
// encapsulation uses what. pad is not a header value: no padding to do is no error.
void refuse_unused(const wire::frame_params& p, const given_params& given) {
  std::array<std::uint8_t, 128> with{}, without{};
  const auto r = wire::emit_frame(p, {}, with);
  for (const auto& [q, x] : given) {
    const std::uint64_t fallback = q->get(wire::frame_params{});
    if (std::string_view(q->name) == "pad" || x == fallback) continue;
    wire::frame_params d = p;
    q->set(d, fallback);
    const auto r2 = wire::emit_frame(d, {}, without);
    if (r && r2 && r.value == r2.value &&
        std::equal(with.begin(), with.begin() + r.value, without.begin()))
      raise(wire::error{.code = wire::errc::unsupported,
                        .layer = "frame",
                        .what = "this encapsulation has no field for it",
                        .field = q->name,
                        .value = x});
  }
}

py::bytes frame(const std::string& encap, const std::optional<py::dict>& rh,
                const std::optional<py::object>& payload,
                const std::optional<py::iterable>& commands, const std::optional<py::object>& pdu,
                const std::string& profile, const py::kwargs& kw) {
  given_params given;
  const wire::frame_params p = params_from(encap, kw, given);
  const bool lite = p.kind == wire::encap::lite;
  if (pdu && (rh || payload || commands))
    throw py::value_error("pdu= is the carried bytes as they are: no rh, payload or commands");
  if (lite && (rh || pdu))
    throw py::value_error("lite: a SUE Lite frame has no RH and no PDU (give payload or commands)");
  const auto inner = pdu ? bytes_of(*pdu) : payload_of(payload, commands, profile);
  std::vector<std::uint8_t> out(wire::header_size(p.kind) + wire::pdu_size(inner.size()) +
                                wire::ethernet_min_frame);
  // The network header's own checks first: an XPU id the encapsulation cannot carry is its
  // error, not the RH's whose xpuid it would also have been.
  if (const auto r = wire::emit_frame(p, {}, out); !r) raise(r.err);
  refuse_unused(p, given);
  const auto r = pdu || lite ? wire::emit_frame(p, inner, out)
                             : wire::emit_sue_frame(p, rh_from(rh, p.src_xpu), inner, out);
  if (!r) raise(r.err);
  return as_bytes(out, r.value);
}

py::bytes pdu(const std::optional<py::dict>& rh, const std::optional<py::object>& payload,
              const std::optional<py::iterable>& commands, const std::string& profile) {
  const auto inner = payload_of(payload, commands, profile);
  std::vector<std::uint8_t> out(wire::pdu_size(inner.size()));
  const auto r = wire::emit_pdu(rh_from(rh, 0), inner, out);
  if (!r) raise(r.err);
  return as_bytes(out, r.value);
}

std::size_t write_pcap(const std::filesystem::path& path, const py::iterable& frames,
                       std::uint32_t link, std::uint64_t start_ns, std::uint64_t interval_ns) {
  std::string error;
  scaleup::pcap::capture_file w;
  if (!w.open(path.string(), static_cast<scaleup::pcap::link_type>(link),
              scaleup::pcap::max_snaplen, error)) {
    PyErr_SetString(PyExc_OSError, error.c_str());
    throw py::error_already_set();
  }
  std::size_t n = 0;
  for (const py::handle f : frames) {
    std::uint64_t ts = start_ns + n * interval_ns;
    std::vector<std::uint8_t> b;
    if (py::isinstance<py::tuple>(f)) {
      const auto t = py::cast<py::tuple>(f);
      if (t.size() != 2) throw py::value_error("a frame is bytes or (time_ns, bytes)");
      if (!py::isinstance<py::int_>(t[0]))
        throw py::type_error("a frame's time is an int of nanoseconds, not " +
                             py::cast<std::string>(py::str(t[0].get_type().attr("__name__"))));
      const py::int_ when = py::reinterpret_borrow<py::int_>(t[0]);
      if (when < py::int_(0) || when > py::int_(std::numeric_limits<std::uint64_t>::max()))
        throw py::value_error("a frame's time is 0 to 2**64 - 1 nanoseconds: " +
                              py::cast<std::string>(py::str(py::handle(when))));
      ts = py::cast<std::uint64_t>(when);
      b = bytes_of(t[1]);
    } else {
      b = bytes_of(f);
    }
    if (!w.write(b, ts)) throw py::value_error(w.error());
    ++n;
  }
  if (!w.close()) {
    PyErr_SetString(PyExc_OSError, w.error().c_str());
    throw py::error_already_set();
  }
  return n;
}

}  // namespace

void add_builders(py::module_& m) {
  py::tuple encaps(wire::encap_names.size());
  for (std::size_t i = 0; i < wire::encap_names.size(); ++i)
    encaps[i] = py::str(std::string(wire::encap_names[i]));
  m.attr("ENCAPS") = encaps;

  m.def("frame", &frame, py::arg("encap") = "udp4", py::kw_only(), py::arg("rh") = py::none(),
        py::arg("payload") = py::none(), py::arg("commands") = py::none(),
        py::arg("pdu") = py::none(), py::arg("profile") = "default",
        R"(A whole frame as bytes, built by the library's emitters (wire/frame.hpp).

encap: one of ENCAPS (udp4 udp6 afh1 afh1-vlan afh1-shim afh1-vlan-shim afh2 afh2c lite).
What it carries, one of:
  rh={...} with payload=bytes or commands=[...]: a SUE PDU (RH, payload, R-CRC). rh's keys are
    the RH's fields as dump --json names them after "sue.rh.": ver op xpuid npsn vc partition
    apsn (and the reserved rsv, rsvd); op also by name ("ACK", "NACK", "none"). Fields not given
    are 0, op is "none" and xpuid is src_xpu. For every encapsulation but lite; rh may be left
    out (an RH of defaults).
  pdu=bytes: carried as they are (a PDU from pdu(), or a damaged one).
  payload= or commands=, for lite: the SUE Lite payload.
commands: dicts as pack() takes, packed with `profile` (a name or a profile file, as read()).
The network header's keywords are wire::frame_params' members, each at the library's default
when left out: src_xpu dst_xpu tc udp_src_port udp_dst_port udp4_checksum hop_limit vlan_id
entropy multicast afh1_prefix sue_ethertype shim_ethertype shim_next_header pad. One the
encapsulation has no field for (vlan_id without a VLAN tag, entropy over IPv4) is refused.

Raises ValueError with the library's error text when it refuses a value (an id too big for the
encapsulation, a traffic class AFH Gen 1 cannot carry, a value wider than its field).)");

  m.def("pdu", &pdu, py::kw_only(), py::arg("rh") = py::none(), py::arg("payload") = py::none(),
        py::arg("commands") = py::none(), py::arg("profile") = "default",
        R"(A SUE PDU as bytes: RH, payload (bytes, or commands packed as pack() does) and the
R-CRC (wire::emit_pdu). rh as for frame(); xpuid is 0 unless given.)");

  m.def(
      "pack",
      [](const py::iterable& commands, const std::string& profile) {
        const auto b = packed(commands, profile);
        return as_bytes(b, b.size());
      },
      py::arg("commands"), py::kw_only(), py::arg("profile") = "default",
      R"(Commands packed back to back, as bytes (pack::emit_command of each).

Each command is a dict: "type", the code or the profile's name for it (dump --json's
sue.cmd.name: WR_FULL_P, WR_FULL, WR_PART_P, WR_PART, RD, RD_RSP, WR_RSP, MSG, BARRIER, ATOMIC,
ATOMIC_RSP in the default profile); "data", bytes, for the types that carry data; and the type's
control fields as dump --json names them after "sue.cmd." (tag, addr, be_first, be_last, rlen,
status, queue, op, ...), names allowed for fields with value names (status "OKAY", op "CAS").
Fields not given are 0; dlen is set from the data. profile: a name or a profile file, as read().
Raises ValueError naming the command (#index) and its offset when the profile refuses it.)");

  m.def("write_pcap", &write_pcap, py::arg("path"), py::arg("frames"), py::kw_only(),
        py::arg("link") = 1, py::arg("start_ns") = 0, py::arg("interval_ns") = 1000,
        R"(Writes frames (bytes, or (time_ns, bytes) tuples) to a pcap file with nanosecond
time stamps (pcap::writer, libpcap), or to pcapng for a path ending in .pcapng; returns how many. link: the link type (1 Ethernet, 147
bare AFH Gen 2 frames). Frames without a time are start_ns + i * interval_ns.)");
}
