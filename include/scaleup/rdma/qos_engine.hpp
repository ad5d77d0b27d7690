// The RDMA QoS engine: the AXI slave's descriptor writes and status reads, the transfer
// segmenter, the message handler and the timeout scan of the thesis (Thesis 2, Fig. 2.2; 3.4,
// 3.6, 3.9, 3.11), as one pure machine:
//
//   advance(engine&, event, now) -> actions         (the state is updated in place)
//   step(engine, event, now) -> (engine, actions)   (the same, by value)
//
// `now` is the caller's clock in ns; nothing here reads a clock. The state is a few hundred
// kilobytes at the thesis's sizes (2048 channels, 1024 transactions), which is why `advance`
// exists: callers with the default sizes keep one engine in static or heap storage and
// advance it; `step` suits small engines and tests that compare states.
//
// Events: post a descriptor to a write channel; schedule (the send unit can take one more
// block or packet: the segmenter serves one transfer); a response (ACK or NACK) from the
// network; tick (the timeout scan); status reads, single or collective.
//
// Beyond the thesis (its future work, Thesis 5), with `config::retransmit` on:
//   * a NACK re-issues the block it names, and the timeout scan re-issues every block
//     without an ACK for `config::timeout` (20 us, Thesis 2); the thesis instead sets ERROR;
//   * every issue and re-issue takes the next number of one global sequence counter
//     (Thesis 3.13); a block keeps the number of its first issue as its identity (the pending
//     entry's block sequence), and an ACK of any issue of a block acknowledges it;
//   * wraparound: sequence numbers are only ever compared for equality (an ACK names a block
//     by its identity, a NACK names the block's latest issue), so the counter may wrap any
//     number of times. What equality needs is given here: a TID's new block never gets the
//     identity of the TID's last issued block nor of its last ACKed one (the receiver holds
//     one of the two, unless two blocks in a row on that TID ended in ERROR), so a receiver
//     never takes a new block for a duplicate of an old one; and `current(tid, seq)` tells
//     the send unit whether an issue is still the TID's latest, so that nothing of a
//     superseded issue or an earlier block leaves the sender after a newer one (the send
//     unit reads the Transaction Table when it sends);
//   * the control packet of a transfer with a notification is re-sent with its last block
//     on a timeout (the receiver ACKs that block only once both have arrived);
//   * after `max_retries` re-issues of one block the transfer ends in ERROR.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "scaleup/rdma/exajet_packet.hpp"
#include "scaleup/rdma/params.hpp"
#include "scaleup/rdma/pending_transactions.hpp"
#include "scaleup/rdma/scheduling_queues.hpp"
#include "scaleup/rdma/segmenter.hpp"
#include "scaleup/rdma/status_registers.hpp"
#include "scaleup/rdma/transaction_ids.hpp"
#include "scaleup/rdma/transaction_table.hpp"
#include "scaleup/rdma/transfer_descriptor.hpp"
#include "scaleup/rdma/transfer_metadata.hpp"
#include "scaleup/transport/psn.hpp"
#include "scaleup/wire/error.hpp"

namespace scaleup::rdma {

// ---- events and actions ----------------------------------------------------------------------

enum class input : std::uint8_t {
  post,             // a descriptor was written to a write channel (Thesis 3.6.1)
  schedule,         // the segmenter may serve one transfer (Thesis 3.9)
  response,         // an ACK or NACK arrived (Thesis 3.11)
  tick,             // the timeout scan (Thesis 2; 5)
  read_single,      // status of one write channel (Thesis 3.6.2)
  read_collective,  // status of 32 write channels (Thesis 3.4, 3.6.2)
};

struct event {
  input kind = input::tick;
  std::uint16_t channel = 0;  // post: channel, page x channels per page + channel in page
  transfer xfer{};            // post
  response_header response{};
  std::uint16_t page = 0;   // reads
  std::uint16_t index = 0;  // read_single: write channel in the page; collective: half, 0 or 1

  static constexpr event post(std::uint16_t channel, const transfer& t) noexcept {
    event e;
    e.kind = input::post;
    e.channel = channel;
    e.xfer = t;
    return e;
  }
  static constexpr event schedule() noexcept {
    event e;
    e.kind = input::schedule;
    return e;
  }
  static constexpr event respond(const response_header& r) noexcept {
    event e;
    e.kind = input::response;
    e.response = r;
    return e;
  }
  static constexpr event tick() noexcept { return event{}; }
  static constexpr event read(std::uint16_t page, std::uint16_t channel) noexcept {
    event e;
    e.kind = input::read_single;
    e.page = page;
    e.index = channel;
    return e;
  }
  static constexpr event read_collective(std::uint16_t page, std::uint16_t half) noexcept {
    event e;
    e.kind = input::read_collective;
    e.page = page;
    e.index = half;
    return e;
  }
};

enum class output : std::uint8_t {
  none,
  block,           // a Transaction Table entry for the send unit
  inline_packet,   // an inline-payload packet for the Packet queue
  control_packet,  // a completion-notification packet for the Packet queue
};

enum class issue_reason : std::uint8_t { first, nack, timeout };

enum class response_outcome : std::uint8_t {
  none,
  acked,       // the block is acknowledged
  stale,       // no pending block matches: dropped and counted
  retransmit,  // a NACK of the block's latest issue: queued for re-issue
  error,       // thesis behaviour (retransmit off): the channel goes to ERROR
};

struct actions {
  // schedule
  output out = output::none;
  issue_reason reason = issue_reason::first;
  std::uint16_t tid = 0;
  block_descriptor block{};  // out == block: the entry written at `tid`
  pending_entry pending{};   // out == block or inline_packet: the entry created or updated
  packet pkt{};              // out == inline_packet or control_packet
  std::array<std::uint8_t, inline_max> payload{};
  std::uint32_t block_index = 0;  // out == block: which block of the transfer
  // the transfer concerned by out, a completion or a refused post
  std::uint16_t channel = 0;
  bool completed = false;
  status final_status = status::idle;
  // post
  bool accepted = false;
  wire::error refused{};
  // response
  response_outcome outcome = response_outcome::none;
  // reads: the status (single) or 32 statuses (collective)
  std::uint64_t status_bits = 0;
  // tick: blocks found timed out and queued for re-issue
  std::uint32_t expired = 0;
};

struct engine_stats {
  std::uint64_t posts = 0, refused = 0;
  std::uint64_t blocks = 0, inline_packets = 0, control_packets = 0;
  std::uint64_t reissued_nack = 0, reissued_timeout = 0;
  std::uint64_t acks = 0, nacks = 0, stale = 0, timeouts = 0;
  std::uint64_t done = 0, errors = 0;
};

// ---- the engine ---------------------------------------------------------------------------

template <params P = params{}>
struct qos_engine {
  static_assert(P.valid(), "RDMA engine parameters out of the thesis's field widths");
  static constexpr std::size_t channels = P.channels();
  static constexpr std::size_t queues = P.queues();
  static constexpr std::size_t tids = P.transactions;
  using seq_t = transport::psn<P.seq_bits>;
  static constexpr std::uint16_t no_identity = 0xFFFF;  // above every 12-bit sequence number

  struct channel_state {
    transfer xfer{};
    transfer_metadata md{};
    std::uint32_t total = 0;  // blocks
    transfer_class cls = transfer_class::tid_only;
    std::uint8_t queue = 0;  // which scheduling queue holds it, when md.in_sched_fifo
    bool live = false;       // posted, not yet DONE or ERROR
    bool ctl_sent = false;   // its control packet went out at least once
    bool held = false;       // holds the second line of the previous channel's descriptor
  };

  struct rtx_entry {
    std::uint16_t tid = 0;
    std::uint16_t block_seq = 0;
    issue_reason reason = issue_reason::timeout;
  };

  std::array<channel_state, channels> ch{};
  std::array<block_descriptor, tids> table{};   // Transaction Table (Thesis 3.3)
  std::array<pending_entry, tids> pending{};    // Pending Transactions Table (Thesis 3.5)
  scheduling_queues<channels, queues> sched{};  // Thesis 3.7
  id_fifo<P.fifo_tids()> tid_fifo{};            // Thesis 3.8
  id_fifo<P.unipath_fids> fid1{};
  id_fifo<P.multipath_groups> fid4{};
  status_registers<P.status_channels()> status_regs{};  // Thesis 3.4
  // Re-issue requests, at most one per TID (tagged with the block they are for).
  std::array<rtx_entry, tids> rtx{};
  std::uint32_t rtx_head = 0, rtx_count = 0;
  std::array<bool, tids> rtx_queued{};
  // Identity of each TID's last ACKed block (no_identity: none yet).
  std::array<std::uint16_t, tids> acked_id{};
  seq_t next_seq{};
  std::uint32_t live_transfers = 0;
  std::uint32_t live_entries = 0;
  engine_stats stats{};

  constexpr qos_engine() noexcept { reset(); }

  // Power-on state: every ID in its FIFO (Thesis 3.14), every channel IDLE.
  // Element by element: a whole-array temporary would put the table on the stack.
  constexpr void reset() noexcept {
    ch.fill(channel_state{});
    table.fill(block_descriptor{});
    pending.fill(pending_entry{});
    sched = {};
    tid_fifo.fill(0);
    fid1.fill(static_cast<std::uint16_t>(P.first_fid()));
    fid4.fill(static_cast<std::uint16_t>(P.first_multipath_fid()),
              static_cast<std::uint16_t>(P.paths));
    status_regs = {};
    rtx = {};
    rtx_head = rtx_count = 0;
    rtx_queued = {};
    acked_id.fill(no_identity);
    next_seq = seq_t{};
    live_transfers = live_entries = 0;
    stats = {};
  }

  // ---- addressing (Thesis 2, 3.1) ----------------------------------------------------------
  static constexpr std::uint16_t channel_of(std::uint32_t page, std::uint32_t ch_in_page) noexcept {
    return static_cast<std::uint16_t>(page * P.channels_per_page() + ch_in_page);
  }
  static constexpr std::uint32_t page_of(std::uint32_t c) noexcept {
    return c / P.channels_per_page();
  }
  static constexpr bool is_write_channel(std::uint32_t c) noexcept {
    return c % P.channels_per_page() < P.write_channels;
  }
  static constexpr std::uint32_t status_index(std::uint32_t c) noexcept {
    return page_of(c) * P.write_channels + c % P.channels_per_page();
  }

  constexpr status status_of(std::uint32_t c) const noexcept {
    return status_regs.peek(status_index(c));
  }
  // How many times channel c sits in the scheduling queues (never more than once).
  constexpr std::size_t queued(std::uint16_t c) const noexcept { return sched.occurrences(c); }

  // Whether issue `seq` is still the latest of a pending block at `tid`: what the send unit
  // checks before each packet, as it would by reading the Transaction Table when sending.
  constexpr bool current(std::uint16_t tid, std::uint16_t seq) const noexcept {
    return tid < tids && pending[tid].valid && pending[tid].seq == seq;
  }
  // Whether channel c still waits for the control packet naming its last block `block_seq`.
  constexpr bool control_current(std::uint16_t c, std::uint16_t block_seq) const noexcept {
    return c < channels && ch[c].live && ch[c].md.last_issued && ch[c].md.last_seq == block_seq;
  }

  // ---- the machine ------------------------------------------------------------------------
  constexpr actions advance(const event& e, std::uint64_t now, const config& cfg) noexcept {
    actions a;
    switch (e.kind) {
      case input::post:
        on_post(e.channel, e.xfer, a);
        break;
      case input::schedule:
        on_schedule(now, cfg, a);
        break;
      case input::response:
        on_response(e.response, cfg, a);
        break;
      case input::tick:
        on_tick(now, cfg, a);
        break;
      case input::read_single:
        if (e.page < P.pages && e.index < P.write_channels)
          a.status_bits = static_cast<std::uint64_t>(
              status_regs.read_single(e.page * P.write_channels + e.index));
        break;
      case input::read_collective:
        // A page with fewer than 64 write channels has a shorter second half (or none).
        if (e.page < P.pages && e.index * collective_channels < P.write_channels)
          a.status_bits =
              status_regs.read_collective(e.page * P.write_channels + e.index * collective_channels,
                                          P.write_channels - e.index * collective_channels);
        break;
    }
    return a;
  }

 private:
  static constexpr std::uint8_t max_retry_field = 15;  // the pending entry's 4-bit count

  // ---- queues ----------------------------------------------------------------------------
  constexpr std::uint8_t queue_for(std::uint16_t c) const noexcept {
    const auto& s = ch[c];
    const bool has_fid = s.md.block_number > 0;
    queue_category cat = queue_category::tid_only;
    if (s.cls == transfer_class::unipath)
      cat = has_fid ? queue_category::unipath_has_fid : queue_category::unipath_no_fid;
    if (s.cls == transfer_class::multipath)
      cat = has_fid ? queue_category::multipath_has_fid : queue_category::multipath_no_fid;
    return static_cast<std::uint8_t>(queue_index(cat, s.xfer.priority, P.intra_priorities));
  }

  constexpr void enqueue(std::uint16_t c, std::uint8_t q) noexcept {
    auto& s = ch[c];
    if (s.md.in_sched_fifo) return;  // at most once in the queues (Thesis 3.2)
    sched.enqueue(c, q);
    sched.started[c] = s.md.block_number > 0;
    s.md.in_sched_fifo = 1;
    s.queue = q;
  }

  constexpr void unqueue(std::uint16_t c) noexcept {
    auto& s = ch[c];
    if (!s.md.in_sched_fifo) return;
    sched.remove(c, s.queue);
    s.md.in_sched_fifo = 0;
  }

  // ---- flows and TIDs (Thesis 3.8) ---------------------------------------------------------
  constexpr std::uint16_t flow_tid(std::uint16_t c, std::uint32_t k) const noexcept {
    const auto& s = ch[c];
    return s.cls == transfer_class::multipath
               ? multipath_tid(s.md.flow_id, k, P.flow_blocks, P.paths)
               : unipath_tid(s.md.flow_id, k, P.flow_blocks);
  }
  constexpr std::uint32_t flow_bit(std::uint16_t c, std::uint16_t tid) const noexcept {
    return tid_bit(tid, ch[c].md.flow_id, P.flow_blocks);
  }
  // The next block's TID is free: a flow reuses its TIDs in order, and a TID whose block is
  // not yet ACKed (a lost block awaiting re-issue) holds the transfer back (Thesis 3.2 TID
  // bitmap).
  constexpr bool next_tid_free(std::uint16_t c) const noexcept {
    const auto& s = ch[c];
    if (s.cls == transfer_class::tid_only || s.md.block_number == 0) return true;
    const std::uint16_t t = flow_tid(c, s.md.block_number);
    return ((s.md.tid_bitmap >> flow_bit(c, t)) & 1u) == 0;
  }
  constexpr bool wants_more(std::uint16_t c) const noexcept {
    const auto& s = ch[c];
    return s.live && s.md.block_number < s.total && s.md.outstanding < P.max_outstanding &&
           next_tid_free(c);
  }

  // ---- sequence numbers (Thesis 3.13; wraparound: scaleup) ---------------------------------
  constexpr std::uint16_t take_seq(std::uint16_t tid, bool new_block) noexcept {
    // A new block skips the (at most two) identities the receiver may hold for this TID.
    // total_blocks is never 0 in an entry that was used: an unused TID has no identity yet.
    const auto& p = pending[tid];
    for (int i = 0; new_block && i < 2; ++i) {
      const std::uint16_t v = next_seq.value;
      if ((p.total_blocks != 0 && v == p.block_seq) || v == acked_id[tid])
        ++next_seq;
      else
        break;
    }
    const std::uint16_t n = next_seq.value;
    ++next_seq;
    return n;
  }

  constexpr void release_entry(std::uint16_t tid) noexcept {
    auto& p = pending[tid];
    if (!p.valid) return;
    p.valid = 0;
    --live_entries;
    if (p.qos_class == static_cast<std::uint8_t>(transfer_class::tid_only))
      tid_fifo.push(tid);
    else
      ch[p.transfer].md.tid_bitmap = static_cast<std::uint16_t>(ch[p.transfer].md.tid_bitmap &
                                                                ~(1u << flow_bit(p.transfer, tid)));
  }

  // ---- packets ---------------------------------------------------------------------------
  constexpr packet_footer footer_for(std::uint16_t c, const config& cfg) const noexcept {
    packet_footer f;
    f.src_coord = cfg.coord;
    f.pd = static_cast<std::uint16_t>(page_of(c));
    f.channel = c;
    f.priority = ch[c].xfer.priority;
    return f;
  }

  constexpr void emit_inline(std::uint16_t c, std::uint16_t tid, const config& cfg,
                             actions& a) const noexcept {
    const auto& s = ch[c];
    const auto& p = pending[tid];
    a.out = output::inline_packet;
    a.pkt.type = packet_type::inline_write;
    a.pkt.data.type = static_cast<std::uint8_t>(packet_type::inline_write);
    a.pkt.data.last = 1;
    a.pkt.data.tid = tid;
    a.pkt.data.seq = p.seq;
    a.pkt.data.block_seq = p.block_seq;
    a.pkt.data.len = static_cast<std::uint16_t>(s.xfer.size);
    a.pkt.data.dst_addr = s.xfer.dst;
    a.pkt.footer = footer_for(c, cfg);
    a.pkt.footer.pkts = 1;
    a.pkt.payload_len = static_cast<std::uint16_t>(s.xfer.size);
    a.payload = s.xfer.payload;
    a.pending = p;
  }

  constexpr void emit_control(std::uint16_t c, const config& cfg, actions& a) noexcept {
    auto& s = ch[c];
    const auto& last = pending[s.md.last_tid];
    a.out = output::control_packet;
    a.channel = c;
    a.pkt.type = packet_type::control;
    a.pkt.control.tid = s.md.last_tid;
    const bool still_pending = last.valid && last.transfer == c && last.block_seq == s.md.last_seq;
    a.pkt.control.seq = still_pending ? last.seq : s.md.last_seq;
    a.pkt.control.block_seq = s.md.last_seq;
    a.pkt.control.blocks = s.total;
    a.pkt.control.notify_addr = s.xfer.notify_addr;
    a.pkt.footer = footer_for(c, cfg);
    a.pkt.payload_len = control_payload_size;
    for (std::size_t i = 0; i < control_payload_size; ++i)
      a.payload[i] = static_cast<std::uint8_t>(s.xfer.notify_value >> (56 - 8 * i));
    s.ctl_sent = true;
    ++stats.control_packets;
  }

  // ---- ending a transfer -----------------------------------------------------------------
  constexpr void finish(std::uint16_t c, status how, actions& a) noexcept {
    auto& s = ch[c];
    unqueue(c);
    if (how == status::error)
      for (std::uint16_t t = 0; t < tids; ++t)
        if (pending[t].valid && pending[t].transfer == c) release_entry(t);
    // FIDs go back at the end of the transfer, not per block (Thesis 3.8, 3.11).
    if (s.md.block_number > 0 && s.cls == transfer_class::unipath) fid1.push(s.md.flow_id);
    if (s.md.block_number > 0 && s.cls == transfer_class::multipath) fid4.push(s.md.flow_id);
    if (descriptor_size(s.xfer) == 64 && c + 1u < channels) ch[c + 1].held = false;
    s.live = false;
    --live_transfers;
    status_regs.set(status_index(c), how);
    a.completed = true;
    a.channel = c;
    a.final_status = how;
    if (how == status::done)
      ++stats.done;
    else
      ++stats.errors;
  }

  // ---- post (AXI writes, Thesis 3.6.1) -----------------------------------------------------
  constexpr void refuse(actions& a, std::uint16_t c, wire::errc code, std::string_view what,
                        std::string_view field = {}, std::uint64_t value = 0) noexcept {
    a.channel = c;
    a.refused = wire::error{
        .code = code, .layer = "rdma.desc", .what = what, .field = field, .value = value};
    ++stats.refused;
  }

  constexpr void on_post(std::uint16_t c, const transfer& t, actions& a) noexcept {
    using wire::errc;
    if (c >= channels) return refuse(a, c, errc::bad_value, "no such channel", {}, c);
    if (!is_write_channel(c))
      return refuse(a, c, errc::unsupported, "read channels serve remote reads (not modelled)", {},
                    c);
    if (status_of(c) != status::idle || ch[c].held || ch[c].live)
      return refuse(a, c, errc::bad_value, "channel is not IDLE", {}, c);
    if (t.size == 0) return refuse(a, c, errc::bad_value, "empty transfer", "rdma.desc.size", 0);
    if (t.priority >= P.intra_priorities)
      return refuse(a, c, errc::value_too_big, "no such intra-priority", "rdma.desc.priority",
                    t.priority);
    if (t.is_inline && (t.size > P.inline_max || t.cm || t.multipath || t.notify))
      return refuse(a, c, errc::bad_value,
                    "inline: at most 32 bytes, not congestion managed, no notification",
                    "rdma.desc.inline", t.size);
    if (t.multipath && !t.cm)
      return refuse(a, c, errc::bad_value, "multipath transfers are congestion managed",
                    "rdma.desc.multipath", 1);
    const std::uint64_t blocks = t.is_inline ? 1 : total_blocks(t.dst, t.size, P.block_size);
    if (blocks >= (std::uint64_t{1} << 18))
      return refuse(a, c, errc::value_too_big, "more blocks than the 18-bit block number",
                    "rdma.desc.size", t.size);
    if (descriptor_size(t) == 64) {
      // A 64-byte descriptor takes two Transfer Table lines, so two channels (Thesis 3.1).
      const std::uint32_t in_page = c % P.channels_per_page();
      if (in_page + 1 >= P.write_channels || status_of(c + 1u) != status::idle || ch[c + 1u].held ||
          ch[c + 1u].live)
        return refuse(a, c, errc::bad_value, "a 64-byte descriptor needs the next channel too", {},
                      c + 1u);
      ch[c + 1u].held = true;
    }
    auto& s = ch[c];
    s = channel_state{};
    s.xfer = t;
    s.total = static_cast<std::uint32_t>(blocks);
    s.cls = !t.cm ? transfer_class::tid_only
                  : (t.multipath ? transfer_class::multipath : transfer_class::unipath);
    s.live = true;
    ++live_transfers;
    status_regs.set(status_index(c), status::busy);
    enqueue(c, queue_for(c));
    a.accepted = true;
    a.channel = c;
    ++stats.posts;
  }

  // ---- schedule (the segmenter, Thesis 3.9) ------------------------------------------------
  constexpr bool can_serve(std::uint32_t q) const noexcept {
    if (sched.empty(q)) return false;
    switch (category_of(q, P.intra_priorities)) {
      case queue_category::control:
        return true;
      case queue_category::tid_only:
        return !tid_fifo.empty();
      case queue_category::unipath_no_fid:
        return !fid1.empty();
      case queue_category::multipath_no_fid:
        return !fid4.empty();
      case queue_category::unipath_has_fid:
      case queue_category::multipath_has_fid:
        return next_tid_free(sched.front(q));
    }
    return false;
  }

  constexpr void issue_block(std::uint16_t c, std::uint64_t now, const config& cfg,
                             actions& a) noexcept {
    auto& s = ch[c];
    auto& md = s.md;
    const std::uint32_t k = md.block_number;
    std::uint16_t tid = 0;
    if (s.cls == transfer_class::tid_only) {
      tid = tid_fifo.pop();
    } else {
      if (k == 0) md.flow_id = s.cls == transfer_class::unipath ? fid1.pop() : fid4.pop();
      tid = flow_tid(c, k);
      md.tid_bitmap = static_cast<std::uint16_t>(md.tid_bitmap | (1u << flow_bit(c, tid)));
    }
    const bool last = k + 1 == s.total;
    const std::uint16_t n = take_seq(tid, true);
    auto& p = pending[tid];
    p = pending_entry{};
    p.valid = 1;
    p.issue_time = static_cast<std::uint32_t>(now);
    p.seq = n;
    p.transfer = c;
    p.priority = s.xfer.priority;
    p.qos_class = static_cast<std::uint8_t>(s.cls);
    p.qos_fid = s.cls == transfer_class::tid_only ? 0 : md.flow_id;
    p.total_blocks = s.total;
    p.last = last ? 1 : 0;
    p.has_notification = last && s.xfer.notify ? 1 : 0;
    p.block_seq = n;
    ++live_entries;

    ++md.block_number;
    ++md.outstanding;
    if (s.cls != transfer_class::tid_only && md.block_number < s.total)
      md.next_tid = static_cast<std::uint8_t>(flow_bit(c, flow_tid(c, md.block_number)));
    if (last) {
      md.last_issued = 1;
      md.last_tid = tid;
      md.last_seq = n;
    }

    a.tid = tid;
    a.channel = c;
    a.reason = issue_reason::first;
    a.block_index = k;
    if (s.xfer.is_inline) {
      emit_inline(c, tid, cfg, a);
      ++stats.inline_packets;
    } else {
      const std::uint64_t off = block_offset(s.xfer.dst, s.xfer.size, P.block_size, k);
      block_descriptor& b = table[tid];
      b = block_descriptor{};
      b.src_addr = s.xfer.src + off;
      b.dst_addr = s.xfer.dst + off;
      b.pd = static_cast<std::uint16_t>(page_of(c));
      b.seq = n;
      b.cm = s.xfer.cm ? 1 : 0;
      b.notify = p.has_notification;
      b.chained = s.xfer.cm && k > 0 ? 1 : 0;
      b.has_next = s.xfer.cm && !last ? 1 : 0;
      b.block_size = block_size_field(
          static_cast<std::uint32_t>(block_bytes(s.xfer.dst, s.xfer.size, P.block_size, k)));
      a.out = output::block;
      a.block = b;
      a.pending = p;
      ++stats.blocks;
    }
    // Another outstanding block (Thesis 3.9.2), or, once the last block is out and N-1 ACKs
    // are in, the completion notification (Thesis 2, 3.9.2).
    if (wants_more(c))
      enqueue(c, queue_for(c));
    else if (last && s.xfer.notify && md.total_acks() + 1 == s.total)
      enqueue(c, 0);
  }

  constexpr void reissue(std::uint16_t tid, issue_reason why, std::uint64_t now, const config& cfg,
                         actions& a) noexcept {
    auto& p = pending[tid];
    const std::uint16_t n = take_seq(tid, false);
    p.seq = n;
    p.issue_time = static_cast<std::uint32_t>(now);
    if (p.retries < max_retry_field) ++p.retries;
    const std::uint16_t c = p.transfer;
    a.tid = tid;
    a.channel = c;
    a.reason = why;
    if (ch[c].xfer.is_inline) {
      emit_inline(c, tid, cfg, a);
    } else {
      table[tid].seq = n;
      a.out = output::block;
      a.block = table[tid];
      a.pending = p;
      const std::uint64_t off = table[tid].dst_addr - ch[c].xfer.dst;
      const std::uint64_t first = first_block_size(ch[c].xfer.dst, ch[c].xfer.size, P.block_size);
      a.block_index = off == 0 ? 0 : static_cast<std::uint32_t>((off - first) / P.block_size + 1);
    }
    if (why == issue_reason::nack) ++stats.reissued_nack;
    if (why == issue_reason::timeout) ++stats.reissued_timeout;
  }

  constexpr void on_schedule(std::uint64_t now, const config& cfg, actions& a) noexcept {
    // Completion notifications first: they free resources at both ends (Thesis 3.9.1).
    while (!sched.empty(0)) {
      const std::uint16_t c = sched.dequeue(0);
      ch[c].md.in_sched_fifo = 0;
      if (!ch[c].live) continue;
      emit_control(c, cfg, a);
      return;
    }
    // Drop re-issue requests that an ACK or an ERROR has made pointless.
    while (rtx_count > 0) {
      const rtx_entry& r = rtx[rtx_head];
      const auto& p = pending[r.tid];
      if (p.valid && p.block_seq == r.block_seq) break;
      rtx_queued[r.tid] = false;
      rtx_head = static_cast<std::uint32_t>((rtx_head + 1) % tids);
      --rtx_count;
    }
    std::uint32_t q = 1;
    while (q < queues && !can_serve(q)) ++q;
    if (rtx_count == 0 && q == queues) return;  // nothing to do: the caller may idle
    if (rtx_count > 0) {
      const rtx_entry r = rtx[rtx_head];
      rtx_queued[r.tid] = false;
      rtx_head = static_cast<std::uint32_t>((rtx_head + 1) % tids);
      --rtx_count;
      if (pending[r.tid].retries >= cfg.max_retries || pending[r.tid].retries >= max_retry_field) {
        finish(pending[r.tid].transfer, status::error, a);
        return;
      }
      reissue(r.tid, r.reason, now, cfg, a);
      return;
    }
    const std::uint16_t c = sched.dequeue(q);
    ch[c].md.in_sched_fifo = 0;
    issue_block(c, now, cfg, a);
  }

  // ---- responses (the message handler, Thesis 3.11) ---------------------------------------
  constexpr void request_reissue(std::uint16_t tid, issue_reason why) noexcept {
    if (rtx_queued[tid]) return;
    rtx_queued[tid] = true;
    rtx[(rtx_head + rtx_count) % tids] = rtx_entry{tid, pending[tid].block_seq, why};
    ++rtx_count;
  }

  constexpr void on_response(const response_header& r, const config& cfg, actions& a) noexcept {
    const bool nack = r.type == static_cast<std::uint8_t>(packet_type::nack);
    if (nack)
      ++stats.nacks;
    else
      ++stats.acks;
    if (r.tid >= tids || !pending[r.tid].valid) {
      a.outcome = response_outcome::stale;
      ++stats.stale;
      return;
    }
    auto& p = pending[r.tid];
    const std::uint16_t c = p.transfer;
    a.channel = c;
    if (!cfg.retransmit) {
      // As built: a NACK, or an ACK whose sequence number does not match, is an ERROR.
      if (nack || r.seq != p.seq) {
        a.outcome = response_outcome::error;
        finish(c, status::error, a);
        return;
      }
    } else {
      if (r.block_seq != p.block_seq) {
        a.outcome = response_outcome::stale;  // an earlier block on this TID
        ++stats.stale;
        return;
      }
      if (nack) {
        if (r.seq != p.seq) {
          a.outcome = response_outcome::stale;  // about an issue already superseded
          ++stats.stale;
          return;
        }
        request_reissue(r.tid, issue_reason::nack);
        a.outcome = response_outcome::retransmit;
        return;
      }
    }
    a.outcome = response_outcome::acked;
    auto& s = ch[c];
    const bool was_last = p.last != 0;
    acked_id[r.tid] = p.block_seq;
    release_entry(r.tid);
    --s.md.outstanding;
    if (was_last) s.md.last_acked = 1;
    const std::uint32_t acks = s.md.total_acks();
    if (acks == s.total) {
      finish(c, status::done, a);
    } else if (s.md.block_number == s.total) {
      if (s.xfer.notify && acks + 1 == s.total && !s.ctl_sent) enqueue(c, 0);
    } else if (wants_more(c)) {
      enqueue(c, queue_for(c));
    }
  }

  // ---- the timeout scan (Thesis 2, 5) ------------------------------------------------------
  constexpr void on_tick(std::uint64_t now, const config& cfg, actions& a) noexcept {
    if (!cfg.retransmit) return;
    const auto now32 = static_cast<std::uint32_t>(now);
    for (std::uint16_t t = 0; t < tids; ++t) {
      const auto& p = pending[t];
      if (!p.valid || rtx_queued[t]) continue;
      if (static_cast<std::uint32_t>(now32 - p.issue_time) < cfg.timeout) continue;
      request_reissue(t, issue_reason::timeout);
      ++a.expired;
      ++stats.timeouts;
      // The receiver ACKs a notified last block only with its control packet: either may
      // be what was lost.
      if (p.has_notification && ch[p.transfer].ctl_sent) enqueue(p.transfer, 0);
    }
  }
};

// ---- the pure interface ----------------------------------------------------------------------

template <params P>
constexpr actions advance(qos_engine<P>& e, const event& ev, std::uint64_t now,
                          const config& cfg = {}) noexcept {
  return e.advance(ev, now, cfg);
}

template <params P>
constexpr std::pair<qos_engine<P>, actions> step(qos_engine<P> e, const event& ev,
                                                 std::uint64_t now,
                                                 const config& cfg = {}) noexcept {
  const actions a = e.advance(ev, now, cfg);
  return {e, a};
}

}  // namespace scaleup::rdma
