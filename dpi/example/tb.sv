// The example bench: random requests from a seeded generator into sue_pdu_builder, each PDU it
// streams out checked against scaleup through DPI-C (package scaleup_dpi).
//
// For each request the model packs the same writes and emits the PDU it expects; then both
// PDUs, the DUT's and the model's, are decoded by the model's checker and compared field by
// field (the RH, the payload's length, each command, the R-CRC, then the bytes), and the DUT's
// PDU is wrapped in a frame and read back as a receiver would. The first difference ends the run:
//   MISMATCH frame <n> field <name>: dut=<..> model=<..>
// and $fatal. All good: PASS <n> frames, $finish.
//
// Plusargs: +frames=N (default 200), +seed=S (default 1), and the DUT's +plant_rcrc_byte_order.
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

`ifndef SCALEUP_TB_EXTERNAL_CLOCK
  logic clk = 1'b0;
  always #5 clk = ~clk;
`endif

  // ---- the DUT ------------------------------------------------------------------------------

  logic rst_n = 1'b0;
  logic in_valid = 1'b0, in_ready;
  logic [1:0] op, vc;
  logic [9:0] xpuid, partition;
  logic [15:0] npsn, apsn;
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

  // ---- what the model expects and what the DUT sent ------------------------------------------

  byte unsigned model_pdu[MAXB], dut_pdu[MAXB], frame[MAXB + 128];
  int model_len, dut_len;
  int unsigned frames, done;

  // The model's PDU for the request now on the DUT's inputs.
  function automatic void model_expect();
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
  function automatic void mismatch(string field, longint unsigned dut_v, longint unsigned model_v);
    failed = 1'b1;
    $display("MISMATCH frame %0d field %s: dut=0x%0h model=0x%0h", done, field, dut_v, model_v);
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
    `SCALEUP_TB_DECODE(model_pdu, model_len, m)
    same("rh.decode", longint'(t_rc), longint'(m_rc));
    same("rh.op", t_op, m_op);
    same("rh.xpuid", t_xpuid, m_xpuid);
    same("rh.npsn", t_npsn, m_npsn);
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
    longint unsigned seed;
    if (!$value$plusargs("frames=%d", frames)) frames = 200;
    if (!$value$plusargs("seed=%d", seed)) seed = 1;
    rng = seed ^ 64'h9E3779B97F4A7C15;
    done = 0;
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
        $display("PASS %0d frames", done);
        $finish;
      end else begin
        r = next_random();
        op = 2'(r % 3);
        xpuid = r[17:8];
        npsn = r[33:18];
        vc = r[35:34];
        partition = r[45:36];
        apsn = r[61:46];
        posted = r[62];
        n_cmds = NW'(1 + (next_random() % MAX_CMDS));
        for (int i = 0; i < MAX_CMDS; i++) begin
          cmd_tag[i] = 16'(next_random());
          cmd_addr[i] = next_random();
          for (int j = 0; j < DATA_BYTES; j += 8) cmd_data[i][8*j+:64] = next_random();
        end
        model_expect();
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
        done <= done + 1;
        step <= REQUEST;
      end
      default: step <= RESET;
    endcase
  end

endmodule
