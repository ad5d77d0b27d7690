// One reading of a capture for `dump`, `stats` and `check`, as Wireshark's framework reads one
// for its dissectors: the session opens the source, dissects every frame (on every core given
// it, taken back in frame order), joins IP fragments and Tofu slices, keeps the table of UDP
// flows found SUE and the sequence analysis' connections, holds the frames whose flows are not
// known yet, reads a cut file a second time when the first reading left frames it could not
// place, and hands each frame to the command, which only reports.
//
// A command is a frame_consumer: look() sees a frame's tree on whichever thread dissected it,
// in any order (the place for work that needs only the frame: its text); take() gets it in frame
// order, with what the session worked out there (its analysis result, the Tofu frame a slice
// completed, and, when asked for, the tree itself). A display filter (-Y) is the session's too:
// compiled once, it decides which frames the command sees (filter_scope).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "app/capture_source.hpp"
#include "app/profile_file.hpp"
#include "app/text_buffer.hpp"
#include "scaleup/dissect/analysis.hpp"
#include "scaleup/dissect/display_filter.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/flow_table.hpp"
#include "scaleup/dissect/limits.hpp"
#include "scaleup/dissect/tree.hpp"
#include "scaleup/dissect/xpu_table.hpp"

namespace scaleup::app {

// How frames are dissected (the commands' --profile, --udp-port, --no-heuristics, --xpu-map,
// --check-checksums and --fcs).
struct engine_settings {
  std::string profile = "default";
  std::vector<unsigned> udp_ports;
  bool no_heuristics = false;
  std::string xpu_map;
  bool check_checksums = false;
  dissect::fcs_mode fcs = dissect::fcs_mode::detect;
  // Connections (and UDP flows) kept at most (dissect/limits.hpp): the flow table's limit here,
  // the analysis' and the conformance state's in their own configurations.
  std::size_t max_connections = dissect::default_max_connections;
  bool nodes = true;  // the tree's fields and layers; off: the PDU's summary only (the analysis')
  // Each capture interface is one port of the SUE instances (a pcapng of a fabric's planes):
  // connections are told apart by it, as the plugin's sue.port_by_interface does. Off: a frame
  // carries no port, and every frame is on port 0.
  bool port_by_interface = false;
};

// The port a frame crossed, as the analysis and the conformance rules key connections by it.
inline std::uint16_t port_of(const engine_settings& e, const cap::packet& p) noexcept {
  return e.port_by_interface ? dissect::port_of_interface(p.interface) : 0;
}

// What a display filter (-Y) decides of the frames it does not keep.
enum class filter_scope : std::uint8_t {
  // `dump`: they are taken with no text (frame_out::kept), in their place; the sequence
  // analysis and the conformance rules the filter names (sue.analysis*, sue.check.*) see every
  // frame, in frame order, as the Wireshark plugin sees them in tshark's one pass.
  shown,
  // `stats`, `check`: they are neither taken nor analysed, as if the capture did not hold them.
  // The filter cannot then name what the command works out of the frames it keeps: the
  // command refuses a filter whose needs_analysis() or needs_conformance() is true.
  counted,
};

struct filter_settings {
  std::optional<std::string> text;  // Wireshark's display-filter syntax; none: every frame
  filter_scope scope = filter_scope::shown;
};

// The frames `dump`, `stats` and `check` hold at most by default while their flows are not known.
inline constexpr std::size_t default_hold = std::size_t{1} << 16;

// The most threads a reading takes (`--threads`): each worker keeps a copy of the UDP flow table,
// and 2 N + 2 batches are under way, so memory grows with N; past a few dozen, the reading in
// frame order is the bound anyway (docs/performance.md, the Amdahl lines).
inline constexpr unsigned max_threads = 64;

struct session_settings {
  source_settings source;
  engine_settings engine;
  filter_settings filter;
  unsigned threads = 1;  // dissecting threads on a file, the reading one included (max_threads)
  unsigned batch = 512;  // frames a thread takes at a time
  // Frames held at most while their flows are not known (0: none; the commands' --hold gives
  // default_hold); see session.cpp.
  std::size_t hold = 0;
  // Read a file whose first reading left cut datagrams on flows it later recognised a second
  // time, with what the first taught (the report is then the second reading's).
  bool reread = false;
  // The rest of a first reading certain to be read again is only read for the flow table,
  // never taken (off: every frame of every reading is taken, as `stats --interval` shows them).
  bool cut_first_reading = true;
  bool progress = true;         // a progress line on a terminal while a large file is read
  bool trees_in_order = false;  // take() gets each frame's tree (dissected on another thread)
  // The sequence analysis over the frames in order (dissect/analysis.hpp); its result per frame
  // in take().
  std::optional<dissect::analysis_config> analysis;
};

// A frame as the session's work sees it: the packet, its time, its frame.* values.
struct frame_in {
  const cap::packet& pkt;
  std::int64_t ns;
  dissect::frame_meta meta;
};

// A frame in frame order, with what the session made of it.
struct frame_out {
  const frame_in& in;
  std::string_view text;                      // what look() wrote for it
  const dissect::large_tree* tree = nullptr;  // with trees_in_order (or one thread): its tree
  // With the analysis: the facts the frame gave it and the result, or null when the frame holds
  // no RH it could take (rh_dropped: an RH a receiver would drop).
  const dissect::frame_facts* facts = nullptr;
  const dissect::frame_result* result = nullptr;
  bool rh_dropped = false;
  // A Tofu frame whose last slice this frame is, reassembled and dissected (or the error); with
  // a display filter, only when the filter keeps it.
  const dissect::large_tree* tofu_frame = nullptr;
  // With a display filter (filter_scope::shown): whether it keeps the frame. When not, `text`
  // is empty and the frame is taken for its place and its tofu_frame only.
  bool kept = true;
};

// A reading of the capture, from its start (the session may read a file twice: then the report
// is the second reading's).
struct reading {
  int number = 1;
  std::string name;  // the capture: as named, "(standard input)", or the interface
  bool streaming = false;
  bool live = false;
};

class frame_consumer {
 public:
  virtual ~frame_consumer() = default;
  // Before each reading's first frame: start the report afresh.
  virtual void start(const reading&) {}
  // On any thread, in any order: what needs only this frame. `text` is the batch's: append the
  // frame's output to it (take() gets what was appended). Not called for a frame the display
  // filter has left out already. A call reads the object's vtable pointer, and look reads what
  // it reads, on a dissecting thread while take() writes on the reading thread: what take
  // writes at every frame goes on cache lines of its own (alignas(64)), away from the start of
  // the object and from what look reads, or each write takes the line from the other core.
  virtual void look(const dissect::large_tree&, const frame_in&, text_buffer&) {}
  // In frame order.
  virtual void take(const frame_out&) = 0;
  // The text take() was given may change after this (take may keep a view of it until then).
  virtual void taken() {}
  // A live capture waiting for frames (every tenth of a second at most).
  virtual void idle() {}
  // Before the session writes an error of the reading on stderr: output so far goes out first.
  virtual void flush() {}
};

// How a reading ended.
enum class read_end {
  whole,       // to its end, -c's count, -a's time or a stop signal
  cut_short,   // an interface or a pipe that failed, or -w's file: what was read stands (exit 1)
  unreadable,  // a file that could not be opened or read: its figures would be wrong (exit 1)
};

class session {
 public:
  explicit session(session_settings s);
  ~session();
  session(const session&) = delete;
  session& operator=(const session&) = delete;

  // What the command line could not check: the XPU map and profile files, the UDP ports, the
  // display filter (compiled against the profile in use), and that a capture is named. The
  // usage error ("--xpu-map: FILE:3: ...", "-Y: no field is named 'x'" with the filter and a
  // mark under where), or nothing.
  std::optional<std::string> prepare();
  // The dissection options, once prepared (the profile in use: `-e` names are checked
  // against it).
  const dissect::options& options() const noexcept { return options_; }
  // The display filter, once prepared; null without one.
  const dissect::display_filter* filter() const noexcept { return filter_ ? &*filter_ : nullptr; }

  // Reads the capture, each frame to `c`.
  read_end run(frame_consumer& c);

  // The reading's analysis (with session_settings::analysis): during run, as far as it has come;
  // after, the last reading's.
  const dissect::analysis* analysis() const noexcept;
  // The UDP flows found SUE, and what the flow limit left out (flow_table::not_remembered).
  const dissect::flow_table& flows() const noexcept { return flows_; }
  // A live capture's counts from the kernel: during run, so far; after, at its end. Nothing for
  // a file or a pipe.
  std::optional<capture_drops> drops() const;
  bool live() const noexcept { return live_; }

 private:
  struct impl;
  session_settings s_;
  dissect::options options_;
  dissect::flow_table flows_;
  dissect::xpu_table xpus_;
  profile_choice profile_;
  std::optional<dissect::display_filter> filter_;
  std::unique_ptr<impl> impl_;
  std::optional<capture_drops> drops_;
  bool live_ = false;
};

}  // namespace scaleup::app
