// The example bench: random requests from a seeded generator into sue_pdu_builder, each PDU it
// streams out checked against scaleup through DPI-C (package scaleup_dpi).
//
// The DUT's PDUs are one connection's: its XPU id, VC and partition are drawn once from the
// seed, its NPSNs are its own. For each request the model packs the same writes and emits the
// PDU it expects; then both PDUs, the DUT's and the model's, are decoded by the model's checker
// and compared field by field (the RH, the payload's length, each command, the R-CRC, then the
// bytes), and the DUT's PDU is wrapped in a frame and read back as a receiver would. Then it
// arrives at the model's go-back-N endpoint, the receiving end of the connection: it must be
// delivered in order, once (its NPSN the one the endpoint expects), and the ACK the endpoint
// returns must acknowledge it. The first difference ends the run:
//   MISMATCH frame <n> field <name>: dut=<..> model=<..>
// and $fatal. All good: the endpoint sends four replies the other way, an ACK of the first comes
// back, its retransmit timer sends the other three again; then PASS <n> frames, $finish.
//
// Plusargs: +frames=N (default 200), +seed=S (default 1), and the DUT's +plant_rcrc_byte_order
// and +plant_npsn_skip.
// Under Verilator without timing, the clock comes from the C++ main (SCALEUP_TB_EXTERNAL_CLOCK);
// elsewhere the bench makes its own.
`include "scaleup_dpi.svh"

// The comparisons widen every field to 64 bits on purpose.
/* verilator lint_off WIDTH */

module tb
`ifdef SCALEUP_TB_EXTERNAL_CLOCK
(
    input logic clk
)
`endif
;
  import scaleup_dpi::*;

  localparam int MAX_CMDS = 4;
  localparam int DATA_BYTES = 64;
  localparam int NW = $clog2(MAX_CMDS + 1);
  localparam int MAXB = 512;  // bytes of a PDU: 8 + 4 * 76 + 4 at most
  localparam int MAX_UNPACK = 8;
  localparam longint unsigned CLK_NS = 10;  // the model's time: 100 MHz

`ifndef SCALEUP_TB_EXTERNAL_CLOCK
  logic clk = 1'b0;
  always #5 clk = ~clk;
`endif

  // ---- the DUT ------------------------------------------------------------------------------

  logic rst_n = 1'b0;
  logic in_valid = 1'b0, in_ready;
  logic [1:0] op, vc;
  logic [9:0] xpuid, partition;
  logic [15:0] apsn;
  logic posted;
  logic [NW-1:0] n_cmds;
  logic [MAX_CMDS-1:0][15:0] cmd_tag;
  logic [MAX_CMDS-1:0][63:0] cmd_addr;
  logic [MAX_CMDS-1:0][DATA_BYTES*8-1:0] cmd_data;
  logic out_valid, out_last, out_ready = 1'b0;
  logic [7:0] out_data;

  sue_pdu_builder #(.MAX_CMDS(MAX_CMDS)) dut (.*);

  // ---- the generator: xorshift64, seeded by +seed ----------------------------------------------

  longint unsigned rng;
  function automatic longint unsigned next_random();
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
  endfunction

  // ---- the connection, and the model's endpoint at its receiving end -------------------------

  localparam int unsigned RX_XPU = 7;  // the receiving XPU's id (the frames' destination)
  int rx_ep;  // the model's endpoint
  longint unsigned cycles = 0, now_ns = 0;  // the model's time, never decreasing

  always @(posedge clk) cycles <= cycles + 1;

  // ---- what the model expects and what the DUT sent ------------------------------------------

  byte unsigned model_pdu[MAXB], dut_pdu[MAXB], frame[MAXB + 128];
  // What the model's endpoint delivered, sent and sent again. Buffers live here, not in the
  // functions: Verilator clears a function's arrays on every clock of the block calling it.
  byte unsigned delivered[MAXB], pdu[MAXB], again[MAXB];
  int model_len, dut_len;
  int unsigned frames, done;

  // The model's PDU for the request now on the DUT's inputs, with the NPSN the DUT gave its PDU:
  // whether that is the right one is the endpoint's to say (endpoint_check).
  function automatic void model_expect(shortint unsigned npsn);
    longint unsigned addr[MAX_CMDS];
    shortint unsigned tag[MAX_CMDS];
    int lens[MAX_CMDS];
    byte unsigned data[MAX_CMDS*DATA_BYTES], payload[MAXB];
    int payload_len, rc;
    for (int i = 0; i < MAX_CMDS; i++) begin
      addr[i] = cmd_addr[i];
      tag[i] = cmd_tag[i];
      lens[i] = DATA_BYTES;
      for (int j = 0; j < DATA_BYTES; j++) data[i*DATA_BYTES+j] = cmd_data[i][8*j+:8];
    end
    rc = scaleup_dpi_pack_writes(int'(n_cmds), int'(posted), 16'(xpuid), 8'(vc), addr, tag, lens,
                                 data, payload, payload_len);
    if (rc != 0) $fatal(1, "model: pack_writes: %s", scaleup_dpi_errc_name(rc));
    rc = scaleup_dpi_pdu_emit(8'(op), 16'(xpuid), npsn, 8'(vc), 16'(partition), apsn, payload,
                              payload_len, model_pdu, model_len);
    if (rc != 0) $fatal(1, "model: pdu_emit: %s", scaleup_dpi_errc_name(rc));
  endfunction

  // Only the first difference is reported: $fatal may return (Verilator's main asks it to, to
  // exit with a status rather than abort), and what follows the first difference says no more.
  bit failed = 1'b0;
  function automatic void mismatch(string field, longint unsigned dut_v, longint unsigned model_v,
                                   string model = "model");
    failed = 1'b1;
    $display("MISMATCH frame %0d field %s: dut=0x%0h %s=0x%0h", done, field, dut_v, model,
             model_v);
    $fatal(1, "frame %0d differs from the model", done);
  endfunction

  function automatic void same(string field, longint unsigned dut_v, longint unsigned model_v);
    if (!failed && dut_v != model_v) mismatch(field, dut_v, model_v);
  endfunction

  // A PDU as the model's checker reads it: the RH, the R-CRC, the payload and its commands, in
  // variables named P_* (t_ for the DUT's PDU, m_ for the model's).
`define SCALEUP_TB_DECODED(P) \
  int P``_rc, P``_rcrc_status, P``_payload_len, P``_unpack_rc, P``_count; \
  byte unsigned P``_op, P``_vc; \
  shortint unsigned P``_xpuid, P``_npsn, P``_partition, P``_apsn; \
  int unsigned P``_rcrc_found, P``_rcrc_computed; \
  byte unsigned P``_code[MAX_UNPACK]; \
  shortint unsigned P``_tag[MAX_UNPACK]; \
  longint unsigned P``_addr[MAX_UNPACK]; \
  int P``_data_offset[MAX_UNPACK], P``_data_len[MAX_UNPACK]; \
  byte unsigned P``_payload[MAXB];
  `SCALEUP_TB_DECODED(t)
  `SCALEUP_TB_DECODED(m)

`define SCALEUP_TB_DECODE(PDU, LEN, P) \
  P``_rc = scaleup_dpi_pdu_check(PDU, LEN, P``_op, P``_xpuid, P``_npsn, P``_vc, P``_partition, \
                                 P``_apsn, P``_rcrc_status, P``_rcrc_found, P``_rcrc_computed, \
                                 P``_payload_len); \
  for (int i = 0; i < MAXB; i++) P``_payload[i] = i + RH_SIZE < MAXB ? PDU[(i+RH_SIZE)%MAXB] : 0; \
  P``_unpack_rc = scaleup_dpi_unpack(P``_payload, P``_payload_len, MAX_UNPACK, P``_code, \
                                     P``_tag, P``_addr, P``_data_offset, P``_data_len, P``_count);

  // The DUT's PDU against the model's, field by field; the first difference ends the run.
  function automatic void compare();
    int encap, pdu_offset, payload_len, frame_len, rc, rcrc_status;
    int unsigned src, dst;
    byte unsigned f_op, f_vc, accepted;
    shortint unsigned f_xpuid, f_npsn, f_partition, f_apsn;
    string c;

    `SCALEUP_TB_DECODE(dut_pdu, dut_len, t)
    model_expect(t_npsn);
    `SCALEUP_TB_DECODE(model_pdu, model_len, m)
    same("rh.decode", longint'(t_rc), longint'(m_rc));
    same("rh.op", t_op, m_op);
    same("rh.xpuid", t_xpuid, m_xpuid);
    same("rh.vc", t_vc, m_vc);
    same("rh.partition", t_partition, m_partition);
    same("rh.apsn", t_apsn, m_apsn);
    same("payload_len", t_payload_len, m_payload_len);
    same("commands", t_count, m_count);
    same("commands.error", longint'(t_unpack_rc), longint'(m_unpack_rc));
    for (int i = 0; i < m_count; i++) begin
      c = $sformatf("cmd[%0d]", i);
      same({c, ".code"}, t_code[i], m_code[i]);
      same({c, ".tag"}, t_tag[i], m_tag[i]);
      same({c, ".addr"}, t_addr[i], m_addr[i]);
      same({c, ".data_len"}, t_data_len[i], m_data_len[i]);
      for (int j = 0; j < m_data_len[i]; j++)
        same($sformatf("%s.data[%0d]", c, j), t_payload[t_data_offset[i]+j],
             m_payload[m_data_offset[i]+j]);
    end
    same("rcrc", t_rcrc_found, m_rcrc_found);
    same("rcrc.status", t_rcrc_status, RCRC_GOOD);
    same("length", dut_len, model_len);
    for (int i = 0; i < model_len; i++) same($sformatf("byte[%0d]", i), dut_pdu[i], model_pdu[i]);

    // The DUT's PDU in a frame, AFH Gen 1 with the shim and UDP/IPv4 in turn, read back.
    rc = scaleup_dpi_frame_emit(done % 2 ? ENCAP_UDP4 : ENCAP_AFH1_SHIM, 32'(xpuid), 32'd7,
                                dut_pdu, dut_len, frame, frame_len);
    if (rc != 0) $fatal(1, "model: frame_emit: %s", scaleup_dpi_errc_name(rc));
    rc = scaleup_dpi_frame_check(frame, frame_len, encap, src, dst, f_op, f_xpuid, f_npsn, f_vc,
                                 f_partition, f_apsn, rcrc_status, pdu_offset, payload_len,
                                 accepted);
    same("frame.error", longint'(rc), 0);
    same("frame.encap", longint'(encap), done % 2 ? ENCAP_UDP4 : ENCAP_AFH1_SHIM);
    same("frame.accepted", accepted, 1);
    same("frame.rh.npsn", f_npsn, m_npsn);
    same("frame.payload_len", payload_len, m_payload_len);
    if (encap == ENCAP_AFH1_SHIM) same("frame.src_xpu", src, 32'(xpuid));
  endfunction

  // The DUT's PDU arrives at the model's endpoint: delivered whole, in order, once; then the ACK
  // the endpoint returns, at once or when its coalescing delay runs out (the model's time jumps
  // there), acknowledges the DUT's NPSN. The ACK or NACK of the DUT's RH (random op and apsn) is
  // stale to the endpoint's sender, which has nothing in flight until reply_check.
  function automatic void endpoint_check();
    longint unsigned prior[COUNTERS], after[COUNTERS], deadline;
    byte unsigned ack_op;
    shortint unsigned ack_apsn;
    int delivered_len, dropped, sent, rc;

    if (failed) return;
    void'(scaleup_dpi_endpoint_counters(rx_ep, prior));
    if (cycles * CLK_NS > now_ns) now_ns = cycles * CLK_NS;
    rc = scaleup_dpi_endpoint_arrived(rx_ep, now_ns, dut_pdu, dut_len, delivered, delivered_len,
                                      dropped, sent);
    same("endpoint.error", longint'(rc), 0);
    // The endpoint expects the PSN after the last one it delivered, from 0.
    if (!failed && dropped != DROP_NONE)
      mismatch("npsn", t_npsn, 16'(prior[COUNTER_DELIVERED]), "model expected");
    same("endpoint.delivered_len", delivered_len, t_payload_len);
    for (int i = 0; i < delivered_len && !failed; i++)
      if (delivered[i] != dut_pdu[RH_SIZE+i])  // the field's name formatted only when it differs
        mismatch($sformatf("endpoint.delivered[%0d]", i), delivered[i], dut_pdu[RH_SIZE+i]);
    if (!failed && sent == 0) begin
      // No ACK yet: the coalescing timer runs.
      deadline = scaleup_dpi_endpoint_deadline(rx_ep);
      same("endpoint.ack_timer", deadline == NO_DEADLINE, 0);
      if (!failed) begin
        now_ns = deadline;
        rc = scaleup_dpi_endpoint_tick(rx_ep, now_ns, sent);
        same("endpoint.tick", longint'(rc), 0);
        same("endpoint.ack_sent", sent, 1);
      end
    end
    void'(scaleup_dpi_endpoint_ack(rx_ep, ack_op, ack_apsn));
    same("ack.op", RH_OP_ACK, ack_op);
    same("ack.apsn", t_npsn, ack_apsn);
    void'(scaleup_dpi_endpoint_counters(rx_ep, after));
    same("endpoint.delivered", after[COUNTER_DELIVERED], prior[COUNTER_DELIVERED] + 1);
    same("endpoint.duplicates", after[COUNTER_DUPLICATES], 0);
    same("endpoint.dropped_gap", after[COUNTER_DROPPED_GAP], 0);
    same("endpoint.acks_sent", after[COUNTER_ACKS_SENT], prior[COUNTER_ACKS_SENT] + 1);
  endfunction

  // The other direction, once at the end: the model's endpoint sends the DUT's XPU four replies,
  // PSNs 0 to 3 in PDUs that check; an ACK of PSN 0 comes back and nothing else, so the
  // retransmit timer sends the other three again, twice.
  function automatic void reply_check();
    byte unsigned reply[16], r_op, r_vc, accepted;
    shortint unsigned psn, r_xpuid, r_npsn, r_partition, r_apsn;
    longint unsigned c[COUNTERS];
    int pdu_len, again_len, sent, rc, rcrc_status, payload_len, delivered_len, dropped;
    int unsigned rcrc_found, rcrc_computed;

    for (int k = 0; k < 4; k++) begin
      for (int i = 0; i < 16; i++) reply[i] = 8'(next_random());
      same("reply.can_send", scaleup_dpi_endpoint_can_send(rx_ep), 1);
      rc = scaleup_dpi_endpoint_send(rx_ep, now_ns, reply, 16, again, again_len, psn, accepted,
                                     sent);
      same("reply.error", longint'(rc), 0);
      same("reply.accepted", accepted, 1);
      same("reply.psn", psn, k);
      same("reply.transmit", sent, 1);
      rc = scaleup_dpi_pdu_check(again, again_len, r_op, r_xpuid, r_npsn, r_vc, r_partition,
                                 r_apsn, rcrc_status, rcrc_found, rcrc_computed, payload_len);
      same("reply.rh.decode", longint'(rc), 0);
      same("reply.rh.op", r_op, RH_OP_NONE);  // the last ACK went out already
      same("reply.rh.xpuid", r_xpuid, RX_XPU);
      same("reply.rh.npsn", r_npsn, k);
      same("reply.rh.vc", r_vc, vc);
      same("reply.rh.partition", r_partition, partition);
      same("reply.rcrc.status", rcrc_status, RCRC_GOOD);
      same("reply.payload_len", payload_len, 16);
      for (int i = 0; i < 16; i++)
        same($sformatf("reply.payload[%0d]", i), again[RH_SIZE+i], reply[i]);
      if (k == 1) begin  // the first of those sent again
        pdu = again;
        pdu_len = again_len;
      end
    end

    // The DUT's XPU acknowledges PSN 0 in a stand-alone ACK (an RH without payload).
    rc = scaleup_dpi_pdu_emit(RH_OP_ACK, 16'(xpuid), 0, 8'(vc), 16'(partition), 0, reply, 0,
                              again, again_len);
    same("reply.ack.emit", longint'(rc), 0);
    rc = scaleup_dpi_endpoint_arrived(rx_ep, now_ns, again, again_len, delivered, delivered_len,
                                      dropped, sent);
    same("reply.ack.error", longint'(rc), 0);
    same("reply.ack.delivered_len", delivered_len, 0);

    for (int t = 0; t < 2; t++) begin
      now_ns = scaleup_dpi_endpoint_deadline(rx_ep);  // the retransmit timeout
      rc = scaleup_dpi_endpoint_tick(rx_ep, now_ns, sent);
      same("reply.resent", sent, 3);
      rc = scaleup_dpi_endpoint_transmit(rx_ep, 0, again, again_len, r_op, r_npsn, r_apsn);
      same("reply.resent.error", longint'(rc), 0);
      same("reply.resent.npsn", r_npsn, 1);
      same("reply.resent.length", again_len, pdu_len);
      for (int i = 0; i < pdu_len; i++)
        same($sformatf("reply.resent[%0d]", i), again[i], pdu[i]);
    end
    void'(scaleup_dpi_endpoint_counters(rx_ep, c));
    same("reply.counters.sent", c[COUNTER_SENT], 4);
    same("reply.counters.resent", c[COUNTER_RESENT], 6);
    same("reply.counters.timeouts", c[COUNTER_TIMEOUTS], 2);
    same("reply.counters.in_flight", c[COUNTER_IN_FLIGHT], 3);
    same("reply.counters.nacks", c[COUNTER_NACKS], 0);
  endfunction

  // ---- the bench's sequence, one step a clock ------------------------------------------------

  typedef enum {
    RESET,
    REQUEST,
    ACCEPT,
    COLLECT,
    CHECK
  } step_t;
  step_t step = RESET;
  int reset_cycles = 0;

  initial begin
    longint unsigned seed, r;
    int unsigned window, max_retries, ack_every;
    longint unsigned rto, ack_delay;
    int rc;
    if (!$value$plusargs("frames=%d", frames)) frames = 200;
    if (!$value$plusargs("seed=%d", seed)) seed = 1;
    rng = seed ^ 64'h9E3779B97F4A7C15;
    done = 0;
    r = next_random();
    xpuid = r[9:0];
    vc = r[11:10];
    partition = r[21:12];
    // The receiving end: the library's timers and coalescing, a fabric-sized endpoint (the DUT's
    // payloads reach 304 bytes, over the firmware sizing's 274).
    scaleup_dpi_endpoint_defaults(window, rto, max_retries, ack_every, ack_delay);
    rc = scaleup_dpi_endpoint_open(SIZING_FABRIC, 16'(RX_XPU), 8'(vc), 16'(partition), window,
                                   rto, max_retries, ack_every, ack_delay, rx_ep);
    if (rc != 0) $fatal(1, "model: endpoint_open: %s", scaleup_dpi_errc_name(rc));
  end

  always @(posedge clk) begin
    longint unsigned r;
    unique case (step)
      RESET: begin
        reset_cycles <= reset_cycles + 1;
        if (reset_cycles == 3) begin
          rst_n <= 1'b1;
          step <= REQUEST;
        end
      end
      REQUEST:
      if (done == frames) begin
        reply_check();
        same("endpoint.close", longint'(scaleup_dpi_endpoint_close(rx_ep)), 0);
        same("endpoint.closed", longint'(scaleup_dpi_endpoint_close(rx_ep)),
             longint'(DPI_BAD_HANDLE));
        if (!failed) $display("PASS %0d frames", done);
        $finish;
      end else begin
        r = next_random();
        op = 2'(r % 3);
        apsn = r[61:46];
        posted = r[62];
        n_cmds = NW'(1 + (next_random() % MAX_CMDS));
        for (int i = 0; i < MAX_CMDS; i++) begin
          cmd_tag[i] = 16'(next_random());
          cmd_addr[i] = next_random();
          for (int j = 0; j < DATA_BYTES; j += 8) cmd_data[i][8*j+:64] = next_random();
        end
        dut_len <= 0;
        in_valid <= 1'b1;
        step <= ACCEPT;
      end
      ACCEPT:
      if (in_ready) begin
        in_valid <= 1'b0;
        out_ready <= 1'b1;
        step <= COLLECT;
      end
      COLLECT: begin
        if (out_valid && out_ready) begin
          if (dut_len < MAXB) dut_pdu[dut_len] <= out_data;
          dut_len <= dut_len + 1;
          if (out_last) step <= CHECK;
        end
        out_ready <= next_random() % 8 != 0;  // back-pressure one beat in eight
      end
      CHECK: begin
        out_ready <= 1'b0;
        compare();
        endpoint_check();
        done <= done + 1;
        step <= REQUEST;
      end
      default: step <= RESET;
    endcase
  end

endmodule
