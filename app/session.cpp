// The capture session (session.hpp): reading, dissecting on every core in frame order, holding
// frames until their flows are known, reading a cut file twice, reassembly and the analysis.
//
// Dissection depends on the frames before a frame in two ways, which the parallel reading
// keeps exactly as the serial one has them:
//  - the UDP flows found SUE (dissect/flow_table.hpp): a thread asks its copy of the shared table
//    (brought up to date at a batch's start) through a proxy that records every question
//    answered no, and every bind and unconfirmed datagram. In frame order, if the table changed
//    since, those questions are asked again of the table as it now is; a frame with any other
//    answer is dissected again there, else its binds are applied. The table only grows, so a
//    thread's answer can only be stale from no to yes (a yes needs no second asking): such
//    frames are few (the first frames of a flow while its first datagram is being bound).
//  - IP fragments (dissect/ip_reassembly.hpp): a thread does not reassemble; a frame holding a
//    fragment is dissected again in frame order with the one reassembler.
// Input that flows (a pipe, an interface) stays frame by frame: its output must go out as frames
// come, not a batch later.
//
// Frames held until their flows are known: a capture cut by its snapshot length holds no R-CRC
// in its long datagrams. On a port nobody named, a cut datagram is SUE only on a flow or port a
// whole datagram showed SUE before (wire/udp_flow.hpp), so the datagrams before that one stay
// UDP ("unconfirmed"). With `hold`, the session holds the frames from the first such datagram
// on, in order, until each flow they left unconfirmed is recognised (a header-only capture's
// first stand-alone ACK, a few frames later), then dissects them again with what the table now
// knows: the figures of the whole capture, read once (a second reading of the file cost as much
// as the first). At most held_frames::max_bytes or `hold` frames are held: then, at a frame of
// an IP fragment (whose datagram the reassembler joins in frame order) and at the end of the
// input, the held frames are taken as they are, their flows left unconfirmed in the table, which
// may have the file read again (`reread`), as tshark's two passes do.
#include "app/session.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <span>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

#include "app/tofu_frames.hpp"
#include "scaleup/dissect/ip_reassembly.hpp"
#include "scaleup/tofu/slice.hpp"
#include "scaleup/wire/ip_reassembly.hpp"

namespace scaleup::app {

namespace {

// ---- reassembly -----------------------------------------------------------------------------

// The one reassembler of IP fragments a reading's frames go through, in frame order. About 4
// MiB, made at the first fragment: most captures hold none, and clearing it (a thousand fresh
// pages) was a tenth of `stats` on a short capture.
class lazy_reassembler {
 public:
  const wire::reassembly_result& push(const wire::ip_fragment& f, std::uint64_t frame,
                                      std::int64_t now_ns) {
    if (!r_) r_ = std::make_unique<wire::ip_reassembler<>>();
    return r_->push(f, frame, now_ns);
  }
  void reset() noexcept {
    if (r_) r_->reset();
  }

 private:
  std::unique_ptr<wire::ip_reassembler<>> r_;
};

// The reassembler as the reader sees it: whether the frame held a fragment.
struct watched_reassembler {
  lazy_reassembler& r;
  bool pushed = false;
  const wire::reassembly_result& push(const wire::ip_fragment& f, std::uint64_t frame,
                                      std::int64_t now_ns) {
    pushed = true;
    return r.push(f, frame, now_ns);
  }
};

// Stands in for the reassembler on a worker: notes that the frame holds a fragment (it is
// dissected again in order) and holds nothing.
struct fragment_probe {
  bool seen = false;
  wire::reassembly_result held{};
  const wire::reassembly_result& push(const wire::ip_fragment&, std::uint64_t,
                                      std::int64_t) noexcept {
    seen = true;
    return held;
  }
};

// ---- frames held until their flows are known ------------------------------------------------

// The flow table as the reader sees it while frames may be held: the flows a frame's cut
// datagrams left unconfirmed are noted for the frame, not told the table.
class noting_flows final : public wire::flow_binding {
 public:
  explicit noting_flows(dissect::flow_table& t) noexcept : t_(t) {}
  bool bound(const wire::udp_flow& f) const noexcept override { return t_.bound(f); }
  bool port_bound(std::uint16_t port) const noexcept override { return t_.port_bound(port); }
  void bind(const wire::udp_flow& f) noexcept override { t_.bind(f); }
  void unconfirmed(const wire::udp_flow& f) noexcept override { noted.push_back(f); }

  std::vector<wire::udp_flow> noted;  // the current frame's

 private:
  dissect::flow_table& t_;
};

bool recognised(const dissect::flow_table& t, const wire::udp_flow& f) noexcept {
  return t.bound(f) || t.port_bound(f.port_a) || t.port_bound(f.port_b);
}

class held_frames {
 public:
  static constexpr std::size_t max_bytes = std::size_t{16} << 20;
  explicit held_frames(std::size_t most) noexcept : most_(most) {}

  struct frame {
    cap::packet pkt;  // data: into the held bytes
    std::int64_t ns = 0;
    dissect::frame_meta meta{};
  };

  bool holding() const noexcept { return !frames_.empty(); }
  // Whether a frame whose cut datagrams left `unconfirmed` unrecognised is held: from the first
  // such frame on, every frame is, so that they are taken in order.
  bool wants(std::span<const wire::udp_flow> unconfirmed) const noexcept {
    return most_ > 0 && (holding() || !unconfirmed.empty());
  }
  void hold(const cap::packet& p, std::int64_t ns, const dissect::frame_meta& meta,
            std::span<const wire::udp_flow> unconfirmed) {
    frames_.push_back({p, ns, meta});
    at_.push_back(bytes_.size());
    bytes_.insert(bytes_.end(), p.data.begin(), p.data.end());
    for (const auto& f : unconfirmed) waiting_.insert(f);
  }
  // Whether the held frames are to be taken now: every flow they left unconfirmed is recognised,
  // directly or by a port, or no more may be held. The table only learns, so a flow once
  // recognised stays so: the flows are looked at in the order they came, each until it is
  // recognised, never again after (a walk of every waiting flow at every change of the table
  // made a crafted capture quadratic).
  bool due(const dissect::flow_table& t) {
    if (bytes_.size() >= max_bytes || frames_.size() >= most_) return true;
    if (t.version() == version_) return false;
    version_ = t.version();
    const auto& w = waiting_.keys();
    while (known_ < w.size() && recognised(t, w[known_])) ++known_;
    return known_ == w.size();
  }
  // The flows the held frames left unconfirmed that the table still does not know, told it as
  // unconfirmed, as the reader would have: before release.
  void note_unresolved(dissect::flow_table& t) const {
    const auto& w = waiting_.keys();
    for (std::size_t i = known_; i < w.size(); ++i)
      if (!recognised(t, w[i])) t.unconfirmed(w[i]);
  }
  // Calls each(frame) for the held frames in order, then forgets them.
  template <class Each>
  void release(Each&& each) {
    for (std::size_t i = 0; i < frames_.size(); ++i) {
      frame& h = frames_[i];
      h.pkt.data = std::span<const std::uint8_t>(bytes_.data() + at_[i], h.pkt.data.size());
      each(std::as_const(h));
    }
    frames_.clear();
    at_.clear();
    bytes_.clear();
    waiting_.clear();
    known_ = 0;
  }

 private:
  std::vector<frame> frames_;
  std::vector<std::size_t> at_;  // each frame's bytes in bytes_
  std::vector<std::uint8_t> bytes_;
  dissect::flat_index<wire::udp_flow, wire::udp_flow_hash> waiting_;
  std::size_t known_ = 0;  // the first waiting_ flows, found recognised
  std::uint64_t version_ = ~std::uint64_t{0};
  std::size_t most_;
};

// ---- the parallel reading -------------------------------------------------------------------

// One question or change a frame's dissection made of the flow table, in order. A question
// (bound, port_bound) is recorded only when the dissection was told no (recording_flows::ask).
struct flow_event {
  enum class kind : std::uint8_t { bound, port_bound, bind, unconfirmed };
  kind what = kind::bound;
  std::uint16_t port = 0;
  wire::udp_flow flow{};
};

// What `q` is answered by `t` together with the binds the same frame made before it (`before`):
// the answer the frame gets when it is dissected in order.
bool answer(const dissect::flow_table& t, std::span<const flow_event> before,
            const flow_event& q) noexcept {
  for (const auto& e : before) {
    if (e.what != flow_event::kind::bind) continue;
    if (q.what == flow_event::kind::bound ? e.flow == q.flow
                                          : e.flow.port_a == q.port || e.flow.port_b == q.port)
      return true;
  }
  return q.what == flow_event::kind::bound ? t.bound(q.flow) : t.port_bound(q.port);
}

// The flow table as a thread that dissects sees it: a copy of the shared one, brought up to
// date at a batch's start (with the flows bound since, not copied whole: a capture binding a
// flow every batch would copy a table as large as the capture's flows every batch), so that a
// question costs a hash lookup and no lock; every question answered no is recorded, and every
// bind and unconfirmed datagram, for the frame-order check. The reading thread, which alone
// changes the shared table, reads it directly.
class recording_flows final : public wire::flow_binding {
 public:
  recording_flows(const dissect::flow_table& t, std::shared_mutex& lock, bool owner) noexcept
      : shared_(t), lock_(lock), owner_(owner) {}

  // Before a batch: the table as it is now; returns its version (flow_table::version).
  std::uint64_t refresh() {
    if (owner_) return shared_.version();
    std::shared_lock l(lock_);
    copy_.catch_up(shared_);
    return copy_.version();
  }
  // Records into `out` from its end on: one frame's events.
  void start(std::vector<flow_event>& out) noexcept {
    out_ = &out;
    begin_ = out.size();
  }

  bool bound(const wire::udp_flow& f) const noexcept override {
    return ask({.what = flow_event::kind::bound, .flow = f});
  }
  bool port_bound(std::uint16_t port) const noexcept override {
    return ask({.what = flow_event::kind::port_bound, .port = port});
  }
  void bind(const wire::udp_flow& f) noexcept override {
    out_->push_back({.what = flow_event::kind::bind, .flow = f});
  }
  void unconfirmed(const wire::udp_flow& f) noexcept override {
    out_->push_back({.what = flow_event::kind::unconfirmed, .flow = f});
  }

 private:
  // Only a no is recorded: the table only grows, so a yes is the answer in frame order too, with
  // nothing to check. Most questions are answered yes once a capture's flows are known.
  bool ask(const flow_event& q) const noexcept {
    const bool yes = answer(owner_ ? shared_ : copy_, std::span(*out_).subspan(begin_), q);
    if (!yes) out_->push_back(q);
    return yes;
  }

  const dissect::flow_table& shared_;
  std::shared_mutex& lock_;
  bool owner_;
  dissect::flow_table copy_;
  std::vector<flow_event>* out_ = nullptr;
  std::size_t begin_ = 0;
};

// A frame's tree kept for frame order (session_settings::trees_in_order): its nodes in use,
// copied one after the other into a batch's bytes, and copied back into a tree when the frame is
// taken (a few kilobytes a frame, where a whole tree is half a megabyte).
static_assert(std::is_trivially_copyable_v<dissect::layer_node> &&
              std::is_trivially_copyable_v<dissect::field_node> &&
              std::is_trivially_copyable_v<wire::error> &&
              std::is_trivially_copyable_v<dissect::pdu_summary>);

struct tree_head {
  std::string_view encap;
  std::uint32_t frame_length, wire_length;
  std::size_t layers, fields, errors;
  bool overflow;
  dissect::pdu_summary pdu;
};

template <class T>
void append_bytes(std::vector<std::uint8_t>& out, const T* p, std::size_t n) {
  const auto* b = reinterpret_cast<const std::uint8_t*>(p);
  out.insert(out.end(), b, b + n * sizeof(T));
}

void keep_tree(const dissect::large_tree& t, std::vector<std::uint8_t>& out) {
  const tree_head h{t.encap,       t.frame_length, t.wire_length, t.layer_count,
                    t.field_count, t.error_count,  t.overflow,    t.pdu};
  append_bytes(out, &h, 1);
  append_bytes(out, t.layers.data(), t.layer_count);
  append_bytes(out, t.fields.data(), t.field_count);
  append_bytes(out, t.errors.data(), t.error_count);
}

void restore_tree(const std::uint8_t* p, dissect::large_tree& t) {
  tree_head h;
  std::memcpy(&h, p, sizeof h);
  p += sizeof h;
  t.clear();
  t.encap = h.encap;
  t.frame_length = h.frame_length;
  t.wire_length = h.wire_length;
  t.overflow = h.overflow;
  t.pdu = h.pdu;
  t.layer_count = h.layers;
  t.field_count = h.fields;
  t.error_count = h.errors;
  std::memcpy(t.layers.data(), p, h.layers * sizeof(dissect::layer_node));
  p += h.layers * sizeof(dissect::layer_node);
  std::memcpy(t.fields.data(), p, h.fields * sizeof(dissect::field_node));
  p += h.fields * sizeof(dissect::field_node);
  std::memcpy(t.errors.data(), p, h.errors * sizeof(wire::error));
}

// What the session worked out of a frame on the thread that dissected it. With threads, the
// reading thread reads it back at every frame from the core that wrote it: two whole cache
// lines, where it was 184 bytes over three or four. The display filter's tests and a kept tree's
// place, which most readings do not use, are kept beside it (batch::tests, batch::tree_at).
struct alignas(64) frame_work {
  dissect::frame_facts facts;                      // with has_facts
  std::size_t text_begin = 0, text_end = 0;        // in the batch's text
  std::uint32_t events_begin = 0, events_end = 0;  // in the batch's flow events (threads)
  bool has_facts = false;
  bool rh_dropped = false;
  bool again = false;     // dissected again in order (an IP fragment, a tree too large to keep)
  bool learning = false;  // read for the flow table only: no look, no take
};
static_assert(sizeof(frame_work) == 128);

// Frames copied out of the reader, and what a thread made of each. On cache lines of its own:
// the batches are allocated one after the other, and a thread dissecting one (writing its
// events) would otherwise share a line with the reading thread filling the next (its count),
// each write taking the line from the other core.
// What the reading thread writes (the packets, their bytes) and what a dissecting thread writes
// (done_frames, events, text) are apart: each thread's writes go to lines the other has only
// read, if at all, rather than to lines it holds written. (One array of both, 256 bytes a frame,
// made the reading thread's filling about three times the cost of reading the file.) A frame's
// time and frame.* values are not kept: each thread works them out from the packet, with a copy
// of the frame clock as it was at the batch's first frame.
struct alignas(64) batch {
  std::vector<std::uint8_t> bytes;   // the frames' bytes, one after the other
  std::vector<cap::packet> packets;  // the first `count` are this batch's; data: into `bytes`
  std::size_t count = 0;
  frame_clock clock{false};                         // as it was before the first frame
  alignas(64) std::vector<frame_work> done_frames;  // as many as packets
  // As many as packets: the display filter's tests of each frame (those of the sequence
  // analysis are judged in frame order), and with trees_in_order where its tree is in `trees`.
  std::vector<dissect::display_filter::partial> tests;
  std::vector<std::size_t> tree_at;
  text_buffer text;                 // the frames' output, one after the other
  std::vector<std::uint8_t> trees;  // with trees_in_order: the frames' trees
  std::vector<flow_event> events;
  std::uint64_t version = 0;  // of the flow table the frames were dissected against
  bool done = false;
};

// The most of a batch's trees kept (trees_in_order): a frame past it is dissected again in
// order instead (a batch of PDUs packed with the smallest commands would otherwise keep some
// hundred times its bytes).
constexpr std::size_t max_kept_trees = std::size_t{64} << 20;

dissect::options flows_only(dissect::options o) {
  o.flows_only = true;
  return o;
}

}  // namespace

// ---- one reading ------------------------------------------------------------------------------

struct session::impl {
  session& s;
  frame_consumer* c = nullptr;
  capture_source* input = nullptr;
  lazy_reassembler ip_fragments;
  std::unique_ptr<dissect::large_tree> tree = std::make_unique<dissect::large_tree>();
  // A held frame dissected again, or a kept tree restored (the current frame's may be wanted).
  std::unique_ptr<dissect::large_tree> spare = std::make_unique<dissect::large_tree>();
  std::optional<tofu_frames> tofu;
  // Changed at every frame taken, on the reading thread: on cache lines of its own, away from
  // what the dissecting threads read at every frame (they ask `analysing`, not `an`).
  alignas(64) std::optional<dissect::analysis> an;
  // Read by the dissecting threads at every frame, set before they start.
  alignas(64) bool analysing = false;
  // The display filter; with filter_scope::shown and a filter naming sue.check.*, the rules
  // over every frame, which judge a frame against the ones before it: the filter's tests then
  // wait for frame order (tests_in_order).
  const dissect::display_filter* filter = nullptr;
  bool counted = false;  // filter_scope::counted
  bool tests_in_order = false;
  alignas(64) std::optional<dissect::conformance> rules;
  int number = 0;                     // of the reading
  std::atomic<bool> learning{false};  // the rest of this reading only teaches the flow table
  std::uint64_t taken = 0;            // frames taken in this reading

  explicit impl(session& owner) : s(owner) {
    filter = s.filter();
    if (!filter) return;
    counted = settings().filter.scope == filter_scope::counted;
    tests_in_order = !counted && filter->needs_conformance();
  }

  const session_settings& settings() const noexcept { return s.s_; }

  // Whether the session reads the file again after this reading (whose figures are then
  // thrown away). Once true during the first reading it stays true: the flow table only learns.
  bool read_again() const {
    return settings().reread && number == 1 && !input->streaming() && s.flows_.worth_rereading();
  }

  void start(int n, capture_source& in) {
    number = n;
    input = &in;
    learning = false;
    taken = 0;
    ip_fragments.reset();
    tofu.reset();
    if (settings().analysis) {
      an.emplace(*settings().analysis);
    } else if (filter && !counted && filter->needs_analysis()) {
      dissect::analysis_config cfg;
      cfg.keep_results = false;  // one pass: no frame is asked about again
      cfg.max_connections = settings().engine.max_connections;
      an.emplace(cfg);
    }
    analysing = an.has_value();
    if (tests_in_order) {
      dissect::check_config cfg;
      cfg.profile = s.options_.profile != nullptr;
      cfg.keep = 0;
      cfg.per_frame = true;
      cfg.max_connections = settings().engine.max_connections;
      cfg.port_known = settings().engine.port_by_interface;
      rules.emplace(std::move(cfg));
    }
    in.on_idle = [this] { c->idle(); };
    c->start(
        reading{n, in.name() == "-" ? "(standard input)" : in.name(), in.streaming(), in.live()});
  }

  // On any thread: what the session and the command work out of a dissected frame.
  // `tests`: where the display filter's tests of the frame go.
  void look(const dissect::large_tree& t, const frame_in& f, frame_work& w,
            dissect::display_filter::partial& tests, text_buffer& text) {
    if (analysing) {
      // In place (set_facts says why).
      w.has_facts =
          dissect::set_facts(t, f.pkt.number, f.ns, w.facts, port_of(settings().engine, f.pkt));
      w.rh_dropped = !w.has_facts && t.pdu.rh;
    }
    w.text_begin = w.text_end = text.size();
    if (filter && !tests_in_order) {
      tests = filter->test_frame(t, {&f.meta, f.pkt.data});
      // Left out already: the frame fails the tests and the filter reads nothing else.
      if (!filter->needs_analysis() && !filter->finish(tests, nullptr)) return;
    }
    c->look(t, f, text);
    w.text_end = text.size();
  }

  // In frame order: the analysis, Tofu reassembly, and the command's take.
  void take(const frame_in& f, const frame_work& w,
            const dissect::display_filter::partial& look_tests, const text_buffer& text,
            const dissect::large_tree* t) {
    // The rest of a first reading certain to be read again: its figures will be thrown away
    // when the second starts, so it only teaches the flow table. Asked every 4096 frames
    // (worth_rereading is cheap, but reading a frame lightly is worth it only in bulk).
    if (settings().cut_first_reading && !learning && taken % 4096 == 4095 && read_again())
      learning = true;
    if (learning) return;
    ++taken;
    const dissect::display_filter::partial* tests = &look_tests;
    dissect::display_filter::partial judged;
    if (tests_in_order) {
      // t: trees_in_order (prepare) or one thread.
      rules->add(*t, f.pkt.data, f.pkt.number, f.ns, port_of(settings().engine, f.pkt));
      judged =
          filter->test_frame(*t, {&f.meta, f.pkt.data, nullptr, rules->of_frame(f.pkt.number)});
      tests = &judged;
    }
    // As if the capture did not hold it: the command is only told time passes.
    if (counted && !filter->finish(*tests, nullptr)) return c->idle();
    frame_out out{f, text.view().substr(w.text_begin, w.text_end - w.text_begin), t};
    if (an && w.has_facts) {
      out.facts = &w.facts;
      out.result = &an->add(w.facts);
    }
    out.rh_dropped = w.rh_dropped;
    if (filter && !counted && !filter->finish(*tests, out.result)) {
      out.kept = false;
      out.text = {};
    }
    if (f.pkt.link == tofu::link_tofu) {
      if (!tofu) tofu.emplace();
      out.tofu_frame = tofu->push_dissected(f.pkt.data);
      // Judged by its own fields; a frame made of earlier ones goes through no analysis and
      // no rule.
      if (out.tofu_frame && filter &&
          !filter->matches(*out.tofu_frame, {&f.meta, tofu->dissected_bytes()}))
        out.tofu_frame = nullptr;
    }
    c->take(out);
  }

  bool learning_now() const noexcept { return learning.load(std::memory_order_relaxed); }

  bool read_serial();
  bool read_parallel();
};

// Every frame of the reading, one after the other on this thread. Once learning, the frames
// that follow only teach the flow table (options::flows_only) and are not taken. With `hold`,
// frames are held while their flows are not known (see above) and taken later, in frame order.
bool session::impl::read_serial() {
  const dissect::options& o = s.options_;
  const dissect::options light = flows_only(o);
  const std::size_t hold_most = settings().hold;
  held_frames held(hold_most);
  noting_flows noting(s.flows_);
  dissect::options noted = o;
  noted.flows = &noting;
  frame_clock clock(input->names_interfaces());
  text_buffer text;
  frame_work w;
  dissect::display_filter::partial tests{};
  const auto deliver = [&](const dissect::large_tree& t, const cap::packet& pkt, std::int64_t ns,
                           const dissect::frame_meta& meta) {
    const frame_in f{pkt, ns, meta};
    text.clear();
    look(t, f, w, tests, text);
    take(f, w, tests, text, &t);
    c->taken();
  };
  // A held frame, dissected again with what the table now knows (a tree of its own: the
  // current frame's may still be wanted), and taken.
  const auto release = [&] {
    held.note_unresolved(s.flows_);
    held.release([&](const held_frames::frame& h) {
      dissect::dissect_frame(*spare, h.pkt.data, h.pkt.link, o, ip_fragments, h.pkt.number, h.ns,
                             h.pkt.len);
      deliver(*spare, h.pkt, h.ns, h.meta);
    });
  };
  cap::packet pkt{};
  for (;;) {
    const auto st = input->next(pkt);
    if (st != cap::reader::status::packet) {
      if (held.holding()) release();
      return st == cap::reader::status::end;
    }
    const std::int64_t ns = capture_time_ns(pkt);
    const dissect::frame_meta meta = clock(pkt);
    const bool light_only = learning_now();
    if (light_only || hold_most == 0) {
      dissect::dissect_frame(*tree, pkt.data, pkt.link, light_only ? light : o, ip_fragments,
                             pkt.number, ns, pkt.len);
      if (!light_only) deliver(*tree, pkt, ns, meta);
      continue;
    }
    noting.noted.clear();
    watched_reassembler watch{ip_fragments};
    dissect::dissect_frame(*tree, pkt.data, pkt.link, noted, watch, pkt.number, ns, pkt.len);
    if (!watch.pushed && held.wants(noting.noted)) {
      held.hold(pkt, ns, meta, noting.noted);
      if (held.due(s.flows_)) release();
      continue;
    }
    if (held.holding()) release();  // before a fragment's frame
    for (const auto& f : noting.noted) s.flows_.unconfirmed(f);
    deliver(*tree, pkt, ns, meta);
  }
}

// The reading thread copies frames into batches, `threads` - 1 worker threads and the reading
// thread itself (while the batch it waits for is not done) dissect the batches and look at
// their frames, and the reading thread takes finished batches in frame order.
bool session::impl::read_parallel() {
  const session_settings& ss = settings();
  const dissect::options& o = s.options_;
  dissect::flow_table& flows = s.flows_;
  const dissect::options light = flows_only(o);
  const bool keep_trees = ss.trees_in_order;
  const std::size_t depth = 2 * std::size_t{ss.threads} + 2;  // batches under way
  std::vector<std::unique_ptr<batch>> ring(depth);
  for (auto& b : ring) b = std::make_unique<batch>();

  std::shared_mutex table_lock;  // the flow table: shared to copy it, unique to change it
  std::mutex m;
  std::condition_variable work_cv, done_cv;
  std::vector<batch*> queue;  // filled, not yet taken by a thread; oldest first
  std::size_t queue_head = 0;
  bool quit = false;

  // One thread's means of dissecting a batch.
  struct dissector {
    std::unique_ptr<dissect::large_tree> tree = std::make_unique<dissect::large_tree>();
    recording_flows proxy;
    dissect::options with, light;
    dissector(const dissect::options& o, const dissect::flow_table& flows, std::shared_mutex& lock,
              bool owner)
        : proxy(flows, lock, owner), with(o), light(flows_only(o)) {
      with.flows = &proxy;
      light.flows = &proxy;
    }
  };
  const auto dissect_batch = [&](batch& b, dissector& d) {
    b.events.clear();
    b.text.clear();
    b.trees.clear();
    b.version = d.proxy.refresh();
    // Asked once a batch: the flag is written by the reading thread, and frames dissected in
    // full after it turned are still taken in order (take then leaves them out).
    const bool learn = learning_now();
    // A copy: keep_trees lives on the reading thread's stack, beside what it writes at every
    // frame, and the loop would read it again after each call it makes (a cache line taken from
    // the other core at every frame: two threads took a fifth longer for it).
    const bool keep = keep_trees;
    frame_clock clk = b.clock;
    for (std::size_t i = 0; i < b.count; ++i) {
      const cap::packet& pkt = b.packets[i];
      auto& f = b.done_frames[i];
      const std::int64_t ns = capture_time_ns(pkt);
      const dissect::frame_meta meta = clk(pkt);
      d.proxy.start(b.events);
      f.events_begin = static_cast<std::uint32_t>(b.events.size());
      f.learning = learn;
      fragment_probe probe;
      dissect::dissect_frame(*d.tree, pkt.data, pkt.link, f.learning ? d.light : d.with, probe,
                             pkt.number, ns, pkt.len);
      f.events_end = static_cast<std::uint32_t>(b.events.size());
      f.again = probe.seen || (keep && b.trees.size() >= max_kept_trees);
      if (f.again || f.learning) continue;
      look(std::as_const(*d.tree), frame_in{pkt, ns, meta}, f, b.tests[i], b.text);
      if (keep) {
        b.tree_at[i] = b.trees.size();
        keep_tree(*d.tree, b.trees);
      }
    }
  };
  // The oldest batch no thread has taken, or null (under m).
  const auto next_queued = [&]() -> batch* {
    if (queue_head == queue.size()) return nullptr;
    batch* b = queue[queue_head++];
    if (queue_head == queue.size()) queue.clear(), queue_head = 0;
    return b;
  };
  const auto dissect_and_mark = [&](batch& b, dissector& d) {
    dissect_batch(b, d);
    {
      std::lock_guard l(m);
      b.done = true;
    }
    done_cv.notify_one();
  };
  const auto worker = [&] {
    dissector d(o, flows, table_lock, false);
    for (;;) {
      batch* b = nullptr;
      {
        std::unique_lock l(m);
        work_cv.wait(l, [&] { return quit || queue_head < queue.size(); });
        b = next_queued();
        if (!b) return;
      }
      dissect_and_mark(*b, d);
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(ss.threads - 1);
  struct joiner {
    std::vector<std::thread>& w;
    std::mutex& m;
    std::condition_variable& cv;
    bool& quit;
    ~joiner() {
      {
        std::lock_guard l(m);
        quit = true;
      }
      cv.notify_all();
      for (auto& t : w) t.join();
    }
  } join_at_end{workers, m, work_cv, quit};
  // Where the process may start fewer threads than asked (RLIMIT_NPROC, a container's pids
  // limit), the reading runs on those that started: the reading thread dissects too, so any
  // number of workers, none included, reads the same frames.
  try {
    for (unsigned i = 1; i < ss.threads; ++i) workers.emplace_back(worker);
  } catch (const std::system_error&) {
  }

  // Reading: up to ss.batch frames or 8 MiB of bytes a batch.
  frame_clock clock(input->names_interfaces());
  bool ended = false, ok = true;
  const auto fill = [&](batch& b) {
    b.bytes.clear();
    b.count = 0;
    b.done = false;
    b.clock = clock;
    cap::packet pkt{};
    std::size_t entries = b.packets.size();  // not asked each frame: a division by its size
    while (b.count < ss.batch && b.bytes.size() < (8u << 20)) {
      const auto st = input->next(pkt);
      if (st != cap::reader::status::packet) {
        ended = true;
        ok = st != cap::reader::status::error;
        break;
      }
      if (entries == b.count) {
        b.packets.emplace_back(), b.done_frames.emplace_back();
        b.tests.emplace_back(), b.tree_at.emplace_back();
        ++entries;
      }
      b.bytes.insert(b.bytes.end(), pkt.data.begin(), pkt.data.end());
      b.packets[b.count++] = pkt;
      clock(pkt);
    }
    // The copies stay where they are from now on (they moved while `bytes` grew).
    std::size_t at = 0;
    for (std::size_t i = 0; i < b.count; ++i) {
      auto& data = b.packets[i].data;
      data = std::span(b.bytes).subspan(at, data.size());
      at += data.size();
    }
  };

  // In frame order: what the thread that dissected a frame could not know, then take.
  dissector own(o, flows, table_lock, true);  // this thread's, while it waits
  // Frames held while their flows are not known (held_frames): the flows a frame left
  // unconfirmed are noted rather than told the table; a held frame is dissected again here.
  const std::size_t hold = ss.hold;
  held_frames held(hold);
  noting_flows noting(flows);
  dissect::options noted = o;
  noted.flows = &noting;
  frame_work held_work{};
  dissect::display_filter::partial held_tests{};
  text_buffer held_text;
  // Its own tree: the frame whose arrival releases the held ones is taken after them.
  const auto held_tree = std::make_unique<dissect::large_tree>();
  const auto take_held = [&](const held_frames::frame& h) {
    {
      std::unique_lock l(table_lock);
      dissect::dissect_frame(*held_tree, h.pkt.data, h.pkt.link, o, ip_fragments, h.pkt.number,
                             h.ns, h.pkt.len);
    }
    const frame_in in{h.pkt, h.ns, h.meta};
    held_text.clear();
    look(std::as_const(*held_tree), in, held_work, held_tests, held_text);
    take(in, held_work, held_tests, held_text, held_tree.get());
    c->taken();
  };
  const auto release = [&] {
    {
      std::unique_lock l(table_lock);
      held.note_unresolved(flows);
    }
    held.release(take_held);
  };
  const auto take_batch = [&](batch& b) {
    frame_clock clk = b.clock;
    for (std::size_t i = 0; i < b.count; ++i) {
      const cap::packet& pkt = b.packets[i];
      auto& f = b.done_frames[i];
      const frame_in in{pkt, capture_time_ns(pkt), clk(pkt)};
      const std::span<const flow_event> ev(b.events.data() + f.events_begin,
                                           f.events_end - f.events_begin);
      // Nothing bound since the batch was dissected: the frame got the answers it gets now.
      const bool current = b.version == flows.version();
      bool again = f.again, changes = false;
      for (std::size_t k = 0; k < ev.size() && !again; ++k) {
        const auto what = ev[k].what;
        if (what == flow_event::kind::bind || what == flow_event::kind::unconfirmed)
          changes = true;
        else if (!current)
          again = answer(flows, ev.first(k), ev[k]);  // it was told no
      }
      const bool holds = hold > 0 && !f.learning;
      noting.noted.clear();
      const dissect::large_tree* t = nullptr;
      if (again) {
        {
          std::unique_lock l(table_lock);
          dissect::dissect_frame(*tree, pkt.data, pkt.link,
                                 f.learning ? light
                                 : holds    ? noted
                                            : o,
                                 ip_fragments, pkt.number, in.ns, pkt.len);
        }
        if (!f.learning) {
          c->taken();  // the text may move as it grows: what was taken of it goes out first
          look(std::as_const(*tree), in, f, b.tests[i], b.text);
          t = tree.get();
        }
      } else {
        if (changes) {
          std::unique_lock l(table_lock);
          for (const auto& e : ev)
            if (e.what == flow_event::kind::bind)
              flows.bind(e.flow);
            else if (e.what == flow_event::kind::unconfirmed)
              holds ? noting.noted.push_back(e.flow) : flows.unconfirmed(e.flow);
        }
        if (keep_trees && !f.learning) {
          restore_tree(b.trees.data() + b.tree_at[i], *spare);
          t = spare.get();
        }
      }
      if (f.learning) continue;
      if (holds && !f.again && held.wants(noting.noted)) {
        held.hold(pkt, in.ns, in.meta, noting.noted);
        if (held.due(flows)) release();
        continue;
      }
      if (held.holding()) release();  // before a fragment's frame
      if (!noting.noted.empty()) {
        std::unique_lock l(table_lock);
        for (const auto& u : noting.noted) flows.unconfirmed(u);
      }
      take(in, f, b.tests[i], b.text, t);
    }
  };

  std::size_t head = 0, tail = 0, under_way = 0;
  for (;;) {
    while (!ended && under_way < depth) {
      batch& b = *ring[tail];
      fill(b);
      if (b.count == 0) break;
      {
        std::lock_guard l(m);
        queue.push_back(&b);
      }
      work_cv.notify_one();
      tail = (tail + 1) % depth;
      ++under_way;
    }
    if (under_way == 0) break;
    batch& b = *ring[head];
    // Until the oldest batch is done, this thread dissects the batches no thread has taken.
    for (;;) {
      batch* mine = nullptr;
      {
        std::unique_lock l(m);
        done_cv.wait(l, [&] { return b.done || queue_head < queue.size(); });
        if (b.done) break;
        mine = next_queued();
      }
      dissect_and_mark(*mine, own);
    }
    take_batch(b);
    c->taken();
    head = (head + 1) % depth;
    --under_way;
  }
  if (held.holding()) release();
  return ok;
}

// ---- the session ------------------------------------------------------------------------------

session::session(session_settings s) : s_(std::move(s)) {}
session::~session() = default;

std::optional<std::string> session::prepare() {
  const engine_settings& e = s_.engine;
  options_ = {};
  flows_ = dissect::flow_table(e.max_connections);
  options_.flows = &flows_;
  options_.nodes = e.nodes;
  if (!e.xpu_map.empty()) {
    auto m = dissect::read_xpu_map(e.xpu_map);
    if (!m) {
      const auto& err = m.err;
      return "--xpu-map: " + e.xpu_map + (err.item ? ":" + std::to_string(err.item) : "") + ": " +
             std::string(err.what) + (err.value ? " (" + std::to_string(err.value) + ")" : "");
    }
    xpus_ = std::move(m.value);
    options_.xpus = &xpus_;
  }
  options_.heuristics = !e.no_heuristics;
  options_.check_checksums = e.check_checksums;
  options_.fcs = e.fcs;
  for (const unsigned p : e.udp_ports) {
    if (p == 0 || p > 65535)
      return "--udp-port: " + std::to_string(p) + " is not a port (1 to 65535)";
    if (!options_.add_udp_port(static_cast<std::uint16_t>(p))) return "--udp-port: too many ports";
  }
  if (s_.threads == 0 || s_.threads > max_threads)
    return "--threads: " + std::to_string(s_.threads) + " is not 1 to " +
           std::to_string(max_threads);
  if (auto bad = profile_.resolve(e.profile, true)) return "--profile: " + *bad;
  options_.profile = profile_.profile();
  filter_.reset();
  if (const auto& text = s_.filter.text) {
    auto c = dissect::display_filter::compile(*text, options_.profile);
    if (!c.filter) {
      // What is wrong (an unknown name named), then the filter with a mark under where.
      const auto& e = c.error;
      return "-Y: " + e.what + "\n  " + *text + "\n  " + std::string(e.at, ' ') + "^" +
             std::string(e.length > 1 ? e.length - 1 : 0, '~');
    }
    filter_ = std::move(c.filter);
    options_.nodes = true;  // the filter reads the fields
    // The rules judge each frame's tree in frame order.
    if (s_.filter.scope == filter_scope::shown && filter_->needs_conformance())
      s_.trees_in_order = true;
  }
  const source_settings& in = s_.source;
  if (in.file.empty() && in.read.empty() && in.interface.empty())
    return "which capture? FILE, -r FILE, - (standard input) or -i IFACE";
  return std::nullopt;
}

read_end session::run(frame_consumer& c) {
  impl_ = std::make_unique<impl>(*this);
  impl_->c = &c;
  source_settings settings = s_.source;
  for (int n = 1;; ++n) {
    capture_source input;
    if (!input.open(settings, s_.progress)) return read_end::unreadable;
    live_ = input.live();
    flows_.reset_unconfirmed();
    impl_->start(n, input);
    read_end end = read_end::whole;
    const bool parallel = s_.threads > 1 && !input.streaming();
    if (!(parallel ? impl_->read_parallel() : impl_->read_serial())) {
      c.flush();
      input.complain(input.error());
      end = input.streaming() ? read_end::cut_short : read_end::unreadable;
    }
    drops_ = input.drops();
    if (!input.finish() && end == read_end::whole) end = read_end::cut_short;
    const bool again = end != read_end::unreadable && impl_->read_again();
    impl_->input = nullptr;
    if (!again) return end;
    settings.write.clear();
  }
}

std::optional<capture_drops> session::drops() const {
  return impl_ && impl_->input ? impl_->input->drops() : drops_;
}

const dissect::analysis* session::analysis() const noexcept {
  return impl_ && impl_->an ? &*impl_->an : nullptr;
}

}  // namespace scaleup::app
