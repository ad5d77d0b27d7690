// The `scaleup` Python module: a capture read by the application layer's capture session, the
// one under `scaleup dump`, so that Python sees what the tool prints.
//
// Why pybind11 over the app layer, not ctypes over the C ABI (include/scaleup/scaleup.h): the C
// ABI covers the wire formats, the frame reader and the packer, not the dissector, its
// display-filter names or the session around it (UDP flows, IP reassembly, Tofu frames, the
// second reading of a cut file). read() is defined as "the objects `dump --json` prints" and
// columns() as "the values of `dump -T fields`": only the session and the dissector give them,
// and reimplementing either in Python would be a second dissector to keep in step.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <charconv>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/session.hpp"
#include "builders.hpp"
#include "scaleup/dissect/field_tree.hpp"
#include "scaleup/dissect/frame_json.hpp"
#include "scaleup/dissect/registry.hpp"

namespace py = pybind11;
namespace app = scaleup::app;
namespace dissect = scaleup::dissect;

namespace {

// The options of `scaleup dump` the module takes, with dump's defaults.
struct options {
  std::string profile = "default";
  std::vector<unsigned> udp_ports;
  bool no_heuristics = false;
  std::optional<std::string> display_filter;
  unsigned threads = 0;  // 0: every core, as dump
  bool port_by_interface = false;
};

// A session as `scaleup dump PATH` sets one up; a bad option raises ValueError with dump's text.
std::unique_ptr<app::session> open_session(const std::string& path, const options& o,
                                           std::string& errors, const std::atomic<bool>* stop) {
  app::session_settings s;
  s.source.file = path;
  s.source.catch_signals = false;  // Python's handlers stay: Ctrl-C raises KeyboardInterrupt
  s.source.errors = &errors;
  s.source.stop = stop;
  s.engine.profile = o.profile;
  s.engine.udp_ports = o.udp_ports;
  s.engine.no_heuristics = o.no_heuristics;
  s.engine.port_by_interface = o.port_by_interface;
  s.filter.text = o.display_filter;
  s.threads =
      o.threads ? o.threads : std::clamp(std::thread::hardware_concurrency(), 1u, app::max_threads);
  s.progress = false;
  auto se = std::make_unique<app::session>(s);
  if (const auto bad = se->prepare()) throw py::value_error(*bad);
  return se;
}

[[noreturn]] void raise_unreadable(const std::string& errors) {
  PyErr_SetString(PyExc_OSError, errors.c_str());
  throw py::error_already_set();
}

// ---- read(): dump --json's lines, frame by frame -------------------------------------------

// The session runs on a thread of its own and hands batches of JSON lines over a short queue,
// so a generator over a large capture holds a few batches, not the capture's text.
class json_frames final : public app::frame_consumer {
 public:
  json_frames(const std::string& path, const options& o) {
    session_ = open_session(path, o, errors_, &stop_);
    loads_ = py::module_::import("json").attr("loads");
    worker_ = std::thread([this] {
      const auto end = session_->run(*this);
      send();
      std::lock_guard lock(m_);
      done_ = true;
      failed_ = end != app::read_end::whole;
      cv_.notify_all();
    });
  }
  ~json_frames() override { close(); }

  // Ends the reading (a generator left early): the session stops at its next frame.
  void close() {
    if (!worker_.joinable()) return;
    stop_ = true;
    {
      std::lock_guard lock(m_);
      cv_.notify_all();
    }
    py::gil_scoped_release nogil;
    worker_.join();
  }

  // Python's close(): no frame after it, though batches read before it are still queued.
  void close_by_caller() {
    const one_caller in(busy_);
    closed_ = true;
    close();
  }

  py::object next() {
    const one_caller in(busy_);
    if (closed_) throw py::stop_iteration();
    while (at_ == batch_.size()) {
      batch_.clear();
      at_ = 0;
      if (!take_batch()) {
        const bool failed = failed_ && !stop_;  // not a reading close() stopped
        closed_ = true;
        close();
        if (failed) raise_unreadable(errors_);
        throw py::stop_iteration();
      }
    }
    const auto nl = batch_.find('\n', at_);
    py::str line(batch_.data() + at_, nl - at_);
    at_ = nl + 1;
    return loads_(line);
  }

  // What dump prints, on the dissecting threads: the frame's object and a newline.
  void look(const dissect::large_tree& t, const app::frame_in& f, app::text_buffer& text) override {
    if (stop_.load(std::memory_order_relaxed)) return;
    dissect::put_json(text, t, f.meta);
    text("\n");
  }
  // In frame order: the frame's line, then the Tofu frame a slice completed (as dump).
  void take(const app::frame_out& f) override {
    if (stop_.load(std::memory_order_relaxed)) return;
    filling_.append(f.text);
    if (f.tofu_frame) {
      app::text_buffer b;
      dissect::put_json(b, *f.tofu_frame, f.in.meta);
      filling_.append(b.view());
      filling_ += '\n';
    }
    if (filling_.size() >= (256u << 10)) send();
  }

 private:
  // next() waits for a batch without the GIL, so another Python thread could call next() or
  // close() meanwhile and join the reading thread twice: refused as a generator refuses it.
  struct one_caller {
    bool& busy;
    explicit one_caller(bool& b) : busy(b) {
      if (busy) throw py::value_error("Frames already executing (one thread at a time)");
      busy = true;
    }
    ~one_caller() { busy = false; }
    one_caller(const one_caller&) = delete;
    one_caller& operator=(const one_caller&) = delete;
  };

  void send() {
    if (filling_.empty()) return;
    std::unique_lock lock(m_);
    cv_.wait(lock, [&] { return queue_.size() < 4 || stop_; });
    if (!stop_) queue_.push_back(std::move(filling_));
    filling_.clear();
    cv_.notify_all();
  }
  // The next batch into batch_; false at the end. Waits without the GIL, and looks at Python's
  // signals every tenth of a second (Ctrl-C raises here, and the reading is stopped).
  bool take_batch() {
    for (;;) {
      {
        py::gil_scoped_release nogil;
        std::unique_lock lock(m_);
        cv_.wait_for(lock, std::chrono::milliseconds(100),
                     [&] { return !queue_.empty() || done_; });
        if (!queue_.empty()) {
          batch_ = std::move(queue_.front());
          queue_.pop_front();
          cv_.notify_all();
          return true;
        }
        if (done_) return false;
      }
      if (PyErr_CheckSignals() != 0) {
        close();
        throw py::error_already_set();
      }
    }
  }

  std::atomic<bool> stop_{false};
  std::string errors_;
  std::unique_ptr<app::session> session_;
  py::object loads_;
  std::mutex m_;
  std::condition_variable cv_;
  std::deque<std::string> queue_;
  bool done_ = false, failed_ = false;
  bool busy_ = false, closed_ = false;  // under the GIL
  std::string batch_;
  std::size_t at_ = 0;
  std::thread worker_;
  // Written by take() at every frame, away from what look() reads (frame_consumer::look).
  alignas(64) std::string filling_;
};

// ---- columns(): dump -T fields' values, typed --------------------------------------------

// A value as look() records it for take(): a tag byte, then 8 bytes (a number, a double's bits)
// or a 4-byte length and the text.
enum tag : char { t_uint, t_real, t_text };

template <class T>
void put_raw(app::text_buffer& b, const T& v) {
  b(std::string_view(reinterpret_cast<const char*>(&v), sizeof v));
}

void put_text(app::text_buffer& b, std::string_view s) {
  b(std::string_view("\x02", 1));
  put_raw(b, static_cast<std::uint32_t>(s.size()));
  b(s);
}

// An object array of n elements (numpy fills it with None), element i set from at(i).
template <class At>
py::array object_array(std::size_t n, At&& at) {
  py::array a(py::dtype("O"), std::vector<py::ssize_t>{static_cast<py::ssize_t>(n)});
  auto** d = static_cast<PyObject**>(a.mutable_data());
  for (std::size_t i = 0; i < n; ++i) {
    py::object o = at(i);
    Py_XDECREF(d[i]);
    d[i] = o.release().ptr();
  }
  return a;
}

class field_columns final : public app::frame_consumer {
 public:
  explicit field_columns(const std::vector<std::string>& names) : names_(names) {
    for (const auto& n : names)
      kinds_.push_back(n == "frame.number"         ? special::number
                       : n == "frame.len"          ? special::len
                       : n == "frame.cap_len"      ? special::cap_len
                       : n == "frame.interface_id" ? special::interface
                       : n == "encap" || n.starts_with("frame.") ? special::text
                                                                 : special::none);
    cols_.resize(names.size());
  }

  // Each field's values in the frame, in tree order (-T fields' order), as tagged records.
  void look(const dissect::large_tree& t, const app::frame_in& f, app::text_buffer& b) override {
    for (std::size_t k = 0; k < names_.size(); ++k) {
      const std::string& name = names_[k];
      const std::size_t count_at = b.size();
      std::uint32_t n = 0;
      put_raw(b, n);
      const auto number = [&](std::uint64_t v) {
        b(std::string_view("\x00", 1));
        put_raw(b, v);
        ++n;
      };
      const auto& m = f.meta;
      switch (kinds_[k]) {
        // put_field_values' frame.* numbers, read from the same frame_meta.
        case special::number:
          number(m.number);
          break;
        case special::len:
          number(m.len);
          break;
        case special::cap_len:
          number(m.cap_len);
          break;
        case special::interface:
          if (m.has_interface) number(m.interface);
          break;
        case special::text: {  // a time, "encap": -T fields' own text
          std::string s;
          auto sink = [&s](std::string_view v) { s.append(v); };
          dissect::put_field_values(sink, t, m, name);
          if (name == "encap") {
            put_text(b, s);
          } else {  // the decimal seconds -T fields prints, to the nearest double
            double v = 0;
            std::from_chars(s.data(), s.data() + s.size(), v);
            b(std::string_view("\x01", 1));
            put_raw(b, v);
          }
          n = 1;
          break;
        }
        case special::none:
          for (const auto& node : t.field_list()) {
            if (node.info->filter != name) continue;
            if (dissect::json_number(node.info->type)) {
              number(node.value);
              continue;
            }
            std::string s;
            auto sink = [&s](std::string_view v) { s.append(v); };
            {
              dissect::detail::chunked<decltype(sink)> w(sink);
              dissect::put_value(w, node);
            }
            put_text(b, s);
            ++n;
          }
          break;
      }
      std::memcpy(b.reserve(0) - b.size() + count_at, &n, sizeof n);
    }
  }

  void take(const app::frame_out& f) override {
    if (!f.kept) return;
    const char* p = f.text.data();
    for (auto& c : cols_) {
      std::uint32_t n;
      std::memcpy(&n, p, 4);
      p += 4;
      c.first.push_back(static_cast<std::uint32_t>(c.tags.size()));
      for (std::uint32_t i = 0; i < n; ++i) {
        const char t = *p++;
        c.tags.push_back(t);
        if (t == t_text) {
          std::uint32_t len;
          std::memcpy(&len, p, 4);
          p += 4;
          c.values.push_back(c.texts.size());
          c.texts.emplace_back(p, len);
          p += len;
        } else {
          std::uint64_t v;
          std::memcpy(&v, p, 8);
          p += 8;
          c.values.push_back(v);
        }
      }
    }
    ++frames_;
  }

  // The columns as numpy arrays (see the docstring of columns()).
  py::dict result(int occurrence) {
    py::module_ ma = py::module_::import("numpy.ma");
    py::dict out;
    for (std::size_t k = 0; k < names_.size(); ++k) {
      auto& c = cols_[k];
      c.first.push_back(static_cast<std::uint32_t>(c.tags.size()));
      const auto value = [&](std::size_t i) -> py::object {
        switch (c.tags[i]) {
          case t_uint:
            return py::int_(c.values[i]);
          case t_real:
            return py::float_(std::bit_cast<double>(c.values[i]));
          default:
            return py::str(c.texts[c.values[i]]);
        }
      };
      // The value a frame gives the column: its `occurrence`th (from 1; from the end when
      // negative: 1 is tshark's -E occurrence=f, -1 its occurrence=l); SIZE_MAX when none.
      const auto pick = [&](std::size_t frame) -> std::size_t {
        const std::size_t lo = c.first[frame], n = c.first[frame + 1] - lo;
        const std::size_t at = occurrence > 0 ? static_cast<std::size_t>(occurrence - 1)
                                              : n - static_cast<std::size_t>(-occurrence);
        return occurrence != 0 && at < n ? lo + at : SIZE_MAX;
      };
      bool repeats = false;
      for (std::size_t i = 0; i < frames_; ++i) repeats |= c.first[i + 1] - c.first[i] > 1;
      if (occurrence == 0 && repeats) {
        // Every value, as -T fields' comma-separated cell: a tuple per frame.
        out[py::str(names_[k])] = object_array(frames_, [&](std::size_t i) -> py::object {
          py::tuple t(c.first[i + 1] - c.first[i]);
          for (std::size_t j = c.first[i]; j < c.first[i + 1]; ++j) t[j - c.first[i]] = value(j);
          return t;
        });
        continue;
      }
      std::vector<std::size_t> at(frames_);
      bool all_uint = true, all_real = true;
      for (std::size_t i = 0; i < frames_; ++i) {
        at[i] = occurrence == 0 ? (c.first[i + 1] > c.first[i] ? c.first[i] : SIZE_MAX) : pick(i);
        if (at[i] == SIZE_MAX) continue;
        all_uint &= c.tags[at[i]] == t_uint;
        all_real &= c.tags[at[i]] == t_real;
      }
      if (all_uint || all_real) {
        py::array_t<bool> mask(frames_);
        auto m = mask.mutable_unchecked<1>();
        py::object data;
        if (all_uint) {
          py::array_t<std::uint64_t> d(frames_);
          auto v = d.mutable_unchecked<1>();
          for (std::size_t i = 0; i < frames_; ++i) {
            m(i) = at[i] == SIZE_MAX;
            v(i) = m(i) ? 0 : c.values[at[i]];
          }
          data = d;
        } else {
          py::array_t<double> d(frames_);
          auto v = d.mutable_unchecked<1>();
          for (std::size_t i = 0; i < frames_; ++i) {
            m(i) = at[i] == SIZE_MAX;
            v(i) = m(i) ? std::nan("") : std::bit_cast<double>(c.values[at[i]]);
          }
          data = d;
        }
        out[py::str(names_[k])] = ma.attr("masked_array")(data, py::arg("mask") = mask);
      } else {
        out[py::str(names_[k])] = object_array(frames_, [&](std::size_t i) -> py::object {
          return at[i] == SIZE_MAX ? py::none() : value(at[i]);
        });
      }
    }
    return out;
  }

 private:
  struct column {
    std::vector<std::uint32_t> first;  // per frame: where its values start
    std::vector<char> tags;
    std::vector<std::uint64_t> values;  // a number, a double's bits, or an index into texts
    std::vector<std::string> texts;
  };
  // The values that are the capture's or the frame's, not tree fields.
  enum class special : std::uint8_t { none, number, len, cap_len, interface, text };
  const std::vector<std::string>& names_;
  std::vector<special> kinds_;
  // Written by take() only (on the reading thread), away from names_ (frame_consumer::look).
  alignas(64) std::vector<column> cols_;
  std::size_t frames_ = 0;
};

py::dict columns(const std::string& path, const std::vector<std::string>& fields, int occurrence,
                 const options& o) {
  std::string errors;
  auto se = open_session(path, o, errors, nullptr);
  for (const auto& f : fields)
    if (!dissect::is_field_name(f, se->options().profile))
      throw py::value_error("-e: no field is named '" + f + "'");
  field_columns c(fields);
  app::read_end end;
  {
    py::gil_scoped_release nogil;
    end = se->run(c);
  }
  if (end != app::read_end::whole) raise_unreadable(errors);
  return c.result(occurrence);
}

}  // namespace

PYBIND11_MODULE(scaleup, m) {
  m.doc() =
      "Captures of Scale-Up Ethernet read by scaleup's own capture session: read() gives the "
      "objects `scaleup dump --json` prints, columns() the values of `scaleup dump -T fields`. "
      "Frames, PDUs and packed commands built by the library's emitters: frame(), pdu(), "
      "pack(); write_pcap() writes frames to a capture.";
  py::class_<json_frames>(m, "Frames")
      .def("__iter__", [](json_frames& f) -> json_frames& { return f; })
      .def("__next__", &json_frames::next)
      .def("close", &json_frames::close_by_caller,
           "Stop the reading (the rest of the capture is not read): no frame after it.")
      .def("__enter__", [](json_frames& f) -> json_frames& { return f; })
      .def("__exit__", [](json_frames& f, py::args) { f.close_by_caller(); });

  const auto opts = [](std::string profile, std::vector<unsigned> udp_ports, bool no_heuristics,
                       std::optional<std::string> display_filter, unsigned threads,
                       bool port_by_interface) {
    return options{
        std::move(profile), std::move(udp_ports), no_heuristics, std::move(display_filter), threads,
        port_by_interface};
  };
  m.def(
      "read",
      [opts](const std::filesystem::path& path, std::string profile, std::vector<unsigned> udp_port,
             bool no_heuristics, std::optional<std::string> display_filter, unsigned threads,
             bool port_by_interface) {
        return std::make_unique<json_frames>(
            path.string(), opts(std::move(profile), std::move(udp_port), no_heuristics,
                                std::move(display_filter), threads, port_by_interface));
      },
      py::arg("path"), py::kw_only(), py::arg("profile") = "default",
      py::arg("udp_port") = std::vector<unsigned>{}, py::arg("no_heuristics") = false,
      py::arg("display_filter") = py::none(), py::arg("threads") = 0,
      py::arg("port_by_interface") = false,
      R"(Iterate over the frames of a capture (pcap, pcapng, gzip), each a dict: exactly the
object `scaleup dump --json PATH` prints for it, in the same order (a Tofu frame a slice
completes follows that slice, as in dump). The options are dump's: --profile, --udp-port
(a list), --no-heuristics, -Y (display_filter), --threads (0: every core),
--port-by-interface (each capture interface a port: what the analysis and the rules a
display_filter names key connections by).

Raises ValueError for an option dump would refuse, OSError with dump's message for a capture
it cannot open or read (after the frames read before the error).)");
  m.def(
      "columns",
      [opts](const std::filesystem::path& path, const std::vector<std::string>& fields,
             int occurrence, std::string profile, std::vector<unsigned> udp_port,
             bool no_heuristics, std::optional<std::string> display_filter, unsigned threads,
             bool port_by_interface) {
        return columns(path.string(), fields, occurrence,
                       opts(std::move(profile), std::move(udp_port), no_heuristics,
                            std::move(display_filter), threads, port_by_interface));
      },
      py::arg("path"), py::arg("fields"), py::kw_only(), py::arg("occurrence") = 0,
      py::arg("profile") = "default", py::arg("udp_port") = std::vector<unsigned>{},
      py::arg("no_heuristics") = false, py::arg("display_filter") = py::none(),
      py::arg("threads") = 0, py::arg("port_by_interface") = false,
      R"(The values of `scaleup dump -T fields -e NAME ...` as a dict of numpy arrays, one entry
per field name and one element per frame (the frames a display_filter keeps).

- Integer fields (hex ones too: the number, not its text) and frame.number, frame.len,
  frame.cap_len, frame.interface_id: numpy.ma.MaskedArray of uint64, masked where the frame has
  no such field. frame.time_*: MaskedArray of float64 (the seconds -T fields prints, to the
  nearest double). Addresses, labels and "encap": object array of str, None where absent.
- A field a frame holds more than once (a command's field, once per packed command; two VLAN
  tags): with occurrence=0 (the default, -T fields' comma-separated cell) a column where any
  frame repeats the field is an object array of tuples, every frame's values in order (an empty
  tuple where none). occurrence=N picks the Nth value of each frame (from 1; -1 the last:
  1 and -1 are tshark's -E occurrence=f and l), and gives the typed columns above.

Raises ValueError for a name dump -e refuses, OSError with dump's message for a capture it
cannot open or read.)");

  add_builders(m);
}
