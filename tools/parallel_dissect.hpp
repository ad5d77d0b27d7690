// `dump` and `stats` on every core they are given (--threads N): the reading thread copies frames
// into batches, N - 1 worker threads and the reading thread itself (while the batch it waits for
// is not done) dissect the batches and do the command's per-frame work (`look`: format a
// frame's output, take its analysis facts), and the reading thread takes finished batches in
// frame order and does the rest (`take`: write the output, feed the analysis). The result is
// exactly the serial one; two things make dissection depend on the frames before:
//  - the UDP flows found SUE (dissect/flow_table.hpp): a thread asks its copy of the shared table
//    (taken at the batch's start) through a proxy that records every question answered no, and
//    every bind and unconfirmed datagram. In frame order, if the table changed since the copy,
//    those questions are asked again of the table as it now is; a frame with any other answer
//    is dissected again there, else its binds are applied. The table only grows, so a thread's
//    answer can only be stale from no to yes (a yes needs no second asking): such frames are
//    few (the first frames of a flow while its first datagram is being bound).
//  - IP fragments (dissect/ip_reassembly.hpp): a thread does not reassemble; a frame holding a
//    fragment is dissected again in frame order with the one reassembler.
// Input that flows (a pipe, an interface) stays frame by frame: its output must go out as frames
// come, not a batch later.
#pragma once

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "capture_input.hpp"
#include "scaleup/dissect/engine.hpp"
#include "scaleup/dissect/flow_table.hpp"
#include "scaleup/dissect/ip_reassembly.hpp"

namespace scaleup::cli {

// --threads N (default: every core); --batch N, hidden, lets the tests cross batch boundaries
// on small captures.
struct thread_settings {
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  unsigned batch = 512;  // frames a batch: enough to amortise a hand-over, a few MB of copies
};

inline void add_thread_options(CLI::App* app, thread_settings& t) {
  app->add_option("--threads", t.threads,
                  "threads that read and dissect a capture file, the reading one included "
                  "(default: every core; 1: that one alone)")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  app->add_option("--batch", t.batch, "frames a thread takes at a time")
      ->check(CLI::Range(1u, 1u << 20))
      ->group("");
}

// A frame as a command's per-frame work sees it: the packet, its time, its frame.* values.
struct frame_in {
  const cap::packet& pkt;
  std::int64_t ns;
  dissect::frame_meta meta;
};

namespace parallel {

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
inline bool answer(const dissect::flow_table& t, std::span<const flow_event> before,
                   const flow_event& q) noexcept {
  for (const auto& e : before) {
    if (e.what != flow_event::kind::bind) continue;
    if (q.what == flow_event::kind::bound ? e.flow == q.flow
                                          : e.flow.port_a == q.port || e.flow.port_b == q.port)
      return true;
  }
  return q.what == flow_event::kind::bound ? t.bound(q.flow) : t.port_bound(q.port);
}

// The flow table as a thread that dissects sees it: a copy of the shared one, taken at a batch's
// start (and copied again only when the table changed since), so that a question costs a hash
// lookup and no lock; every question answered no is recorded, and every bind and unconfirmed
// datagram, for the frame-order check. The reading thread, which alone changes the
// shared table, reads it directly.
class recording_flows final : public wire::flow_binding {
 public:
  recording_flows(const dissect::flow_table& t, std::shared_mutex& lock, bool owner) noexcept
      : shared_(t), lock_(lock), owner_(owner) {}

  // Before a batch: the table as it is now; returns its version (flow_table::version).
  std::uint64_t refresh() {
    if (owner_) return shared_.version();
    std::shared_lock l(lock_);
    if (!copy_ || copy_->version() != shared_.version()) copy_ = shared_;
    return copy_->version();
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
  // nothing to check. Most questions are answered yes once a capture's flows are known (`stats`
  // on the cooked capture of `./run bench`: 3 % less CPU time).
  bool ask(const flow_event& q) const noexcept {
    const bool yes = answer(owner_ ? shared_ : *copy_, std::span(*out_).subspan(begin_), q);
    if (!yes) out_->push_back(q);
    return yes;
  }

  const dissect::flow_table& shared_;
  std::shared_mutex& lock_;
  bool owner_;
  std::optional<dissect::flow_table> copy_;
  std::vector<flow_event>* out_ = nullptr;
  std::size_t begin_ = 0;
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

// Frames copied out of the reader, and what a thread made of each. On cache lines of its own:
// the batches are allocated one after the other, and a thread dissecting one (writing its
// events) would otherwise share a line with the reading thread filling the next (its count),
// each write taking the line from the other core.
// What the reading thread writes (the packets, their bytes) and what a dissecting thread writes
// (done_frames, events, text) are apart: each thread's writes go to lines the other has only
// read, if at all, rather than to lines it holds written. (One array of both, 256 bytes a frame,
// made the reading thread's filling about three times the cost of reading the file; `stats` on
// the cooked capture of `./run bench` took 8 % less time once they were apart.) A frame's time and
// frame.* values are not kept: each thread works them out from the packet, with a copy of the
// frame clock as it was at the batch's first frame.
template <class Result>
struct alignas(64) batch {
  struct done_frame {
    std::uint32_t events_begin = 0, events_end = 0;
    bool again = false;     // dissected again in order (an IP fragment)
    bool learning = false;  // read for the flow table only (learn_only): no look, no take
    Result result{};
  };
  std::vector<std::uint8_t> bytes;   // the frames' bytes, one after the other
  std::vector<cap::packet> packets;  // the first `count` are this batch's; data: into `bytes`
  std::size_t count = 0;
  frame_clock clock{false};                         // as it was before the first frame
  alignas(64) std::vector<done_frame> done_frames;  // as many as packets
  text_buffer text;                                 // the frames' output, one after the other
  std::vector<flow_event> events;
  std::uint64_t version = 0;  // of the flow table the frames were dissected against
  bool done = false;
};

}  // namespace parallel

// Every frame of an open input dissected, then look(tree, frame, result, text) and take(frame,
// result, text), with `frame` a frame_in. look writes the whole of `result` (it may hold an
// earlier frame's) and may append output to `text` (a batch's: results say where theirs is);
// it may run on any thread, in any order. take runs on this thread in frame order.
// With threads above 1 on a file, `threads` - 1 worker threads and this one dissect and look
// (this one reads and takes, and dissects a batch while the one it waits for is not done);
// otherwise each frame is dissected, looked at and taken in turn. False when reading failed
// (input.error()).
// `learn_only` as for dissect_each: once it is true, the frames dissected after only teach the
// flow table and are neither looked at nor taken (take may set it: frames already dissected are
// still taken, in order, and so are the rest of a batch begun before it turned, which take
// must leave out itself). Up to `hold` frames are held while their flows are not known, as
// dissect_each holds them (0: none).
// take may keep a view of the text it is given, rather than copy it, until `taken()`, which is
// called in frame order before that text is written again or moves (after each batch, before a
// frame of a batch is looked at again in order, after each frame dissected alone).
struct nothing_kept {
  void operator()() const noexcept {}
};
template <class Result, class Look, class Take, class Taken = nothing_kept>
bool dissect_in_order(capture_input& input, const dissect::options& o, dissect::flow_table& flows,
                      const thread_settings& ts, Look&& look, Take&& take,
                      const std::atomic<bool>* learn_only = nullptr, std::size_t hold = 0,
                      Taken&& taken = {}) {
  frame_clock clock(input.names_interfaces());
  if (ts.threads <= 1 || input.streaming()) {
    Result r{};
    text_buffer text;
    return dissect_each(
        input, o,
        [&](dissect::large_tree& tree, const cap::packet& pkt, std::int64_t ns) {
          const frame_in f{pkt, ns, clock(pkt)};
          text.clear();
          look(std::as_const(tree), f, r, text);
          take(f, r, std::as_const(text));
          taken();
        },
        learn_only, hold ? &flows : nullptr, hold);
  }
  const auto learning = [learn_only] {
    return learn_only != nullptr && learn_only->load(std::memory_order_relaxed);
  };
  const dissect::options light = flows_only(o);
  using batch = parallel::batch<Result>;
  const std::size_t depth = 2 * std::size_t{ts.threads} + 2;  // batches under way
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
    parallel::recording_flows proxy;
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
    b.version = d.proxy.refresh();
    // Asked once a batch: the flag is written by the reading thread, and frames dissected in
    // full after it turned are still taken in order (take then leaves them out).
    const bool learn = learning();
    frame_clock c = b.clock;
    for (std::size_t i = 0; i < b.count; ++i) {
      const cap::packet& pkt = b.packets[i];
      auto& f = b.done_frames[i];
      const std::int64_t ns = capture_time_ns(pkt);
      const dissect::frame_meta meta = c(pkt);
      d.proxy.start(b.events);
      f.events_begin = static_cast<std::uint32_t>(b.events.size());
      f.learning = learn;
      parallel::fragment_probe probe;
      dissect::dissect_frame(*d.tree, pkt.data, pkt.link, f.learning ? d.light : d.with, probe,
                             pkt.number, ns, pkt.len);
      f.events_end = static_cast<std::uint32_t>(b.events.size());
      f.again = probe.seen;
      if (!f.again && !f.learning)
        look(std::as_const(*d.tree), frame_in{pkt, ns, meta}, f.result, b.text);
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
  workers.reserve(ts.threads - 1);
  for (unsigned i = 1; i < ts.threads; ++i) workers.emplace_back(worker);
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

  // Reading: up to ts.batch frames or 8 MiB of bytes a batch.
  bool ended = false, ok = true;
  const auto fill = [&](batch& b) {
    b.bytes.clear();
    b.count = 0;
    b.done = false;
    b.clock = clock;
    cap::packet pkt{};
    std::size_t entries = b.packets.size();  // not asked each frame: a division by its size
    while (b.count < ts.batch && b.bytes.size() < (8u << 20)) {
      const auto st = input.next(pkt);
      if (st != cap::reader::status::packet) {
        ended = true;
        ok = st != cap::reader::status::error;
        break;
      }
      if (entries == b.count) b.packets.emplace_back(), b.done_frames.emplace_back(), ++entries;
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
  auto& ip_fragments = frame_reassembler();
  ip_fragments.reset();
  dissector own(o, flows, table_lock, true);  // this thread's, while it waits
  static dissect::large_tree tree;            // for frames dissected again here
  // Frames held while their flows are not known (held_frames): the flows a frame left
  // unconfirmed are noted rather than told the table; a held frame is dissected again here.
  held_frames held(hold);
  noting_flows noting(flows);
  dissect::options noted = o;
  noted.flows = &noting;
  Result held_result{};
  text_buffer held_text;
  const auto take_held = [&](const held_frames::frame& h) {
    {
      std::unique_lock l(table_lock);
      dissect::dissect_frame(tree, h.pkt.data, h.pkt.link, o, ip_fragments, h.pkt.number, h.ns,
                             h.pkt.len);
    }
    const frame_in in{h.pkt, h.ns, h.meta};
    held_text.clear();
    look(std::as_const(tree), in, held_result, held_text);
    take(in, held_result, std::as_const(held_text));
    taken();
  };
  const auto release = [&] {
    {
      std::unique_lock l(table_lock);
      held.note_unresolved(flows);
    }
    held.release(take_held);
  };
  const auto take_batch = [&](batch& b) {
    frame_clock c = b.clock;
    for (std::size_t i = 0; i < b.count; ++i) {
      const cap::packet& pkt = b.packets[i];
      auto& f = b.done_frames[i];
      const frame_in in{pkt, capture_time_ns(pkt), c(pkt)};
      const std::span<const parallel::flow_event> ev(b.events.data() + f.events_begin,
                                                     f.events_end - f.events_begin);
      // Nothing bound since the batch was dissected: the frame got the answers it gets now.
      const bool current = b.version == flows.version();
      bool again = f.again, changes = false;
      for (std::size_t k = 0; k < ev.size() && !again; ++k) {
        const auto what = ev[k].what;
        if (what == parallel::flow_event::kind::bind ||
            what == parallel::flow_event::kind::unconfirmed)
          changes = true;
        else if (!current)
          again = parallel::answer(flows, ev.first(k), ev[k]);  // it was told no
      }
      const bool holds = hold > 0 && !f.learning;
      noting.noted.clear();
      if (again) {
        {
          std::unique_lock l(table_lock);
          dissect::dissect_frame(tree, pkt.data, pkt.link,
                                 f.learning ? light
                                 : holds    ? noted
                                            : o,
                                 ip_fragments, pkt.number, in.ns, pkt.len);
        }
        if (!f.learning) {
          taken();  // the text may move as it grows: what was taken of it goes out first
          look(std::as_const(tree), in, f.result, b.text);
        }
      } else if (changes) {
        std::unique_lock l(table_lock);
        for (const auto& e : ev)
          if (e.what == parallel::flow_event::kind::bind)
            flows.bind(e.flow);
          else if (e.what == parallel::flow_event::kind::unconfirmed)
            holds ? noting.noted.push_back(e.flow) : flows.unconfirmed(e.flow);
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
      take(in, f.result, std::as_const(b.text));
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
    taken();
    head = (head + 1) % depth;
    --under_way;
  }
  if (held.holding()) release();
  return ok;
}

}  // namespace scaleup::cli
