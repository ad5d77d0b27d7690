// `dump` and `stats` on every core they are given (--threads N): the reading thread copies frames
// into batches, worker threads dissect the batches and do the command's per-frame work (`look`:
// format a frame's output, take its analysis facts), and the reading thread takes finished
// batches in frame order and does the rest (`take`: write the output, feed the analysis). The
// result is exactly the serial one; two things make dissection depend on the frames before:
//  - the UDP flows found SUE (dissect/flow_table.hpp): a worker asks the shared table through a
//    proxy that records every question with its answer, and every bind and unconfirmed datagram.
//    In frame order the questions are asked again of the table as it now is; a frame with any
//    other answer is dissected again there, else its binds are applied. The table only grows, so
//    a worker's answer can only be stale from false to true: such frames are few (the first
//    frames of a flow while its first datagram is being bound).
//  - IP fragments (dissect/ip_reassembly.hpp): a worker does not reassemble; a frame holding a
//    fragment is dissected again in frame order with the one reassembler.
// Input that flows (a pipe, an interface) stays frame by frame: its output must go out as frames
// come, not a batch later.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
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
                  "threads that dissect a capture file (default: every core; 1: none beside the "
                  "reading one)")
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

// One question or change a frame's dissection made of the flow table, in order.
struct flow_event {
  enum class kind : std::uint8_t { bound, port_bound, bind, unconfirmed };
  kind what = kind::bound;
  bool answer = false;  // bound, port_bound: what the dissection was told
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

// The flow table as a worker sees it: the shared one read under its lock, every question and
// change recorded for the frame-order check.
class recording_flows final : public wire::flow_binding {
 public:
  recording_flows(const dissect::flow_table& t, std::shared_mutex& lock) noexcept
      : table_(t), lock_(lock) {}
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
  bool ask(flow_event q) const noexcept {
    {
      std::shared_lock l(lock_);
      q.answer = answer(table_, std::span(*out_).subspan(begin_), q);
    }
    out_->push_back(q);
    return q.answer;
  }

  const dissect::flow_table& table_;
  std::shared_mutex& lock_;
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

// Frames copied out of the reader, each with the command's result.
template <class Result>
struct batch {
  struct frame {
    cap::packet pkt{};  // data: into `bytes`
    std::size_t at = 0;
    std::int64_t ns = 0;
    dissect::frame_meta meta{};
    std::uint32_t events_begin = 0, events_end = 0;
    bool again = false;     // dissected again in order (an IP fragment)
    bool learning = false;  // read for the flow table only (learn_only): no look, no take
    Result result{};
  };
  std::vector<std::uint8_t> bytes;
  std::string text;           // the frames' output, one after the other
  std::vector<frame> frames;  // the first `count` are this batch's; kept for their capacity
  std::size_t count = 0;
  std::vector<flow_event> events;
  bool done = false;
};

}  // namespace parallel

// Every frame of an open input dissected, then look(tree, frame, result, text) and take(frame,
// result, text), with `frame` a frame_in. look writes the whole of `result` (it may hold an
// earlier frame's) and may append output to `text` (a batch's: results say where theirs is);
// it may run on any thread, in any order. take runs on this thread in frame order.
// With threads above 1 on a file, `threads` worker threads dissect and look; otherwise each
// frame is dissected, looked at and taken in turn. False when reading failed (input.error()).
// `learn_only` as for dissect_each: once it is true, the frames dissected after only teach the
// flow table and are neither looked at nor taken (take may set it: frames already dissected are
// still taken, in order).
template <class Result, class Look, class Take>
bool dissect_in_order(capture_input& input, const dissect::options& o, dissect::flow_table& flows,
                      const thread_settings& ts, Look&& look, Take&& take,
                      const std::atomic<bool>* learn_only = nullptr) {
  frame_clock clock(input.names_interfaces());
  if (ts.threads <= 1 || input.streaming()) {
    Result r{};
    std::string text;
    return dissect_each(
        input, o,
        [&](dissect::large_tree& tree, const cap::packet& pkt, std::int64_t ns) {
          const frame_in f{pkt, ns, clock(pkt)};
          text.clear();
          look(std::as_const(tree), f, r, text);
          take(f, r, std::as_const(text));
        },
        learn_only);
  }
  const auto learning = [learn_only] {
    return learn_only != nullptr && learn_only->load(std::memory_order_relaxed);
  };
  const dissect::options light = flows_only(o);
  using batch = parallel::batch<Result>;
  const std::size_t depth = 2 * std::size_t{ts.threads} + 2;  // batches under way
  std::vector<std::unique_ptr<batch>> ring(depth);
  for (auto& b : ring) b = std::make_unique<batch>();

  std::shared_mutex table_lock;
  std::mutex m;
  std::condition_variable work_cv, done_cv;
  std::vector<batch*> queue;  // filled, not yet taken by a worker; oldest first
  std::size_t queue_head = 0;
  bool quit = false;

  const auto dissect_batch = [&](batch& b, dissect::large_tree& tree, const dissect::options& wo,
                                 const dissect::options& wo_light,
                                 parallel::recording_flows& proxy) {
    b.events.clear();
    b.text.clear();
    for (std::size_t i = 0; i < b.count; ++i) {
      auto& f = b.frames[i];
      proxy.start(b.events);
      f.events_begin = static_cast<std::uint32_t>(b.events.size());
      f.learning = learning();
      parallel::fragment_probe probe;
      dissect::dissect_frame(tree, f.pkt.data, f.pkt.link, f.learning ? wo_light : wo, probe,
                             f.pkt.number, f.ns, f.pkt.len);
      f.events_end = static_cast<std::uint32_t>(b.events.size());
      f.again = probe.seen;
      if (!f.again && !f.learning)
        look(std::as_const(tree), frame_in{f.pkt, f.ns, f.meta}, f.result, b.text);
    }
  };
  const auto worker = [&] {
    auto tree = std::make_unique<dissect::large_tree>();
    parallel::recording_flows proxy(flows, table_lock);
    dissect::options wo = o;
    wo.flows = &proxy;
    const dissect::options wo_light = flows_only(wo);
    for (;;) {
      batch* b = nullptr;
      {
        std::unique_lock l(m);
        work_cv.wait(l, [&] { return quit || queue_head < queue.size(); });
        if (queue_head == queue.size()) return;
        b = queue[queue_head++];
        if (queue_head == queue.size()) queue.clear(), queue_head = 0;
      }
      dissect_batch(*b, *tree, wo, wo_light, proxy);
      {
        std::lock_guard l(m);
        b->done = true;
      }
      done_cv.notify_one();
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(ts.threads);
  for (unsigned i = 0; i < ts.threads; ++i) workers.emplace_back(worker);
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
    cap::packet pkt{};
    while (b.count < ts.batch && b.bytes.size() < (8u << 20)) {
      const auto st = input.next(pkt);
      if (st != cap::reader::status::packet) {
        ended = true;
        ok = st != cap::reader::status::error;
        break;
      }
      if (b.frames.size() == b.count) b.frames.emplace_back();
      auto& f = b.frames[b.count++];
      f.pkt = pkt;
      f.at = b.bytes.size();
      f.ns = capture_time_ns(pkt);
      f.meta = clock(pkt);
      b.bytes.insert(b.bytes.end(), pkt.data.begin(), pkt.data.end());
    }
    for (std::size_t i = 0; i < b.count; ++i)  // the copies stay where they are from now on
      b.frames[i].pkt.data =
          std::span(b.bytes).subspan(b.frames[i].at, b.frames[i].pkt.data.size());
  };

  // In frame order: what the worker could not know, then take.
  auto& ip_fragments = frame_reassembler();
  ip_fragments.reset();
  static dissect::large_tree tree;  // for frames dissected again here
  const auto take_batch = [&](batch& b) {
    for (std::size_t i = 0; i < b.count; ++i) {
      auto& f = b.frames[i];
      const std::span<const parallel::flow_event> ev(b.events.data() + f.events_begin,
                                                     f.events_end - f.events_begin);
      bool again = f.again, changes = false;
      for (std::size_t k = 0; k < ev.size() && !again; ++k) {
        const auto what = ev[k].what;
        if (what == parallel::flow_event::kind::bind ||
            what == parallel::flow_event::kind::unconfirmed)
          changes = true;
        else
          again = parallel::answer(flows, ev.first(k), ev[k]) != ev[k].answer;
      }
      const frame_in in{f.pkt, f.ns, f.meta};
      if (again) {
        {
          std::unique_lock l(table_lock);
          dissect::dissect_frame(tree, f.pkt.data, f.pkt.link, f.learning ? light : o, ip_fragments,
                                 f.pkt.number, f.ns, f.pkt.len);
        }
        if (!f.learning) look(std::as_const(tree), in, f.result, b.text);
      } else if (changes) {
        std::unique_lock l(table_lock);
        for (const auto& e : ev)
          if (e.what == parallel::flow_event::kind::bind)
            flows.bind(e.flow);
          else if (e.what == parallel::flow_event::kind::unconfirmed)
            flows.unconfirmed(e.flow);
      }
      if (!f.learning) take(in, f.result, std::as_const(b.text));
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
    {
      std::unique_lock l(m);
      done_cv.wait(l, [&] { return b.done; });
    }
    take_batch(b);
    head = (head + 1) % depth;
    --under_way;
  }
  return ok;
}

}  // namespace scaleup::cli
