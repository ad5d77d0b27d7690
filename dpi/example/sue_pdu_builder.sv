// An example DUT: builds a SUE PDU (RH, packed full writes, R-CRC) and streams it out a byte a
// cycle. Synthesizable style: one request latched at a time, a byte mux driven by counters, the
// R-CRC computed in RTL a byte at a time as the bytes leave.
//
// The PDU it builds (docs/wire-format.md):
//   RH, 8 bytes (R2 Table 5): ver(2)=0 op(2) rsv(2)=0 xpuid(10) | npsn(16) |
//                             vc(2) rsvd(4)=0 partition(10) | apsn(16)
//   n_cmds full writes of the default command profile, back to back, each 12 bytes of control
//   (type 0x02 posted / 0x04 non-posted, data length - 1 = 63, tag(16), address(64)) and 64
//   bytes of data; byte j of command i's data is cmd_data[i][8*j +: 8];
//   R-CRC: CRC-32/ISO-HDLC (reflected, polynomial 0x04C11DB7, init and final xor 0xFFFFFFFF)
//   over RH and payload, sent big-endian.
//
// The NPSN is the DUT's own: 0 after reset, one more with each PDU (R2 4.2 step 4), as the
// receiving end's go-back-N expects.
//
// Planted bugs, for showing that a bench catches them: +define+PLANT_RCRC_BYTE_ORDER, or the
// plusarg +plant_rcrc_byte_order in simulation, sends the R-CRC's bytes in the reverse order;
// +define+PLANT_NPSN_SKIP or +plant_npsn_skip skips NPSN PlantNpsnSkipAt (5): the sixth PDU
// carries 6.
module sue_pdu_builder #(
    parameter int MAX_CMDS = 4,
    localparam int DATA_BYTES = 64,
    localparam int CMD_BYTES = 12 + DATA_BYTES,
    localparam int NW = $clog2(MAX_CMDS + 1)
) (
    input logic clk,
    input logic rst_n,

    // Request: accepted when in_valid and in_ready.
    input  logic                                  in_valid,
    output logic                                  in_ready,
    input  logic [ 1:0]                           op,
    input  logic [ 9:0]                           xpuid,
    input  logic [ 1:0]                           vc,
    input  logic [ 9:0]                           partition,
    input  logic [15:0]                           apsn,
    input  logic                                  posted,
    input  logic [NW-1:0]                         n_cmds,     // 1..MAX_CMDS
    input  logic [MAX_CMDS-1:0][15:0]             cmd_tag,
    input  logic [MAX_CMDS-1:0][63:0]             cmd_addr,
    input  logic [MAX_CMDS-1:0][DATA_BYTES*8-1:0] cmd_data,

    // The PDU, a byte a beat; out_last marks its last byte.
    output logic       out_valid,
    input  logic       out_ready,
    output logic [7:0] out_data,
    output logic       out_last
);

`ifdef PLANT_RCRC_BYTE_ORDER
  localparam bit PlantDefault = 1'b1;
`else
  localparam bit PlantDefault = 1'b0;
`endif
`ifdef PLANT_NPSN_SKIP
  localparam bit PlantNpsnDefault = 1'b1;
`else
  localparam bit PlantNpsnDefault = 1'b0;
`endif
  localparam logic [15:0] PlantNpsnSkipAt = 16'd5;
  logic plant_rcrc_byte_order, plant_npsn_skip;
`ifdef SYNTHESIS
  assign plant_rcrc_byte_order = PlantDefault;
  assign plant_npsn_skip = PlantNpsnDefault;
`else
  initial plant_rcrc_byte_order = PlantDefault || $test$plusargs("plant_rcrc_byte_order");
  initial plant_npsn_skip = PlantNpsnDefault || $test$plusargs("plant_npsn_skip");
`endif

  // One byte into the reflected CRC-32, a bit at a time.
  function automatic logic [31:0] crc32_byte(input logic [31:0] crc, input logic [7:0] b);
    logic [31:0] c;
    c = crc ^ {24'h0, b};
    for (int k = 0; k < 8; k++) c = c[0] ? (c >> 1) ^ 32'hEDB88320 : c >> 1;
    return c;
  endfunction

  typedef enum logic [1:0] {
    IDLE,
    RH,
    CMD,
    RCRC
  } state_t;
  state_t state;

  // The latched request.
  logic [63:0] rh_q;
  logic posted_q;
  logic [NW-1:0] n_cmds_q;
  logic [MAX_CMDS-1:0][15:0] tag_q;
  logic [MAX_CMDS-1:0][63:0] addr_q;
  logic [MAX_CMDS-1:0][DATA_BYTES*8-1:0] data_q;

  // The NPSN of the next PDU, and the one the request being latched gets.
  logic [15:0] npsn_q, npsn;
  assign npsn = npsn_q + 16'(plant_npsn_skip && npsn_q == PlantNpsnSkipAt);

  // Where the stream is: the RH's byte, the command and its byte, the R-CRC's byte.
  logic [2:0] rh_idx;
  logic [NW-1:0] cmd_idx;
  localparam int OW = $clog2(CMD_BYTES);
  logic [OW-1:0] cmd_off;
  logic [1:0] rcrc_idx;
  logic [31:0] crc;  // running, before the final xor

  logic [31:0] rcrc;
  assign rcrc = ~crc;

  // The current command's control: type, data length - 1, tag, address.
  logic [12*8-1:0] control;
  assign control = {posted_q ? 8'h02 : 8'h04, 8'(DATA_BYTES - 1), tag_q[cmd_idx], addr_q[cmd_idx]};

  always_comb begin
    out_data = 8'h00;
    unique case (state)
      RH: out_data = rh_q[63-8*rh_idx-:8];
      CMD:
      if (cmd_off < 12) out_data = control[95-8*cmd_off-:8];
      else out_data = data_q[cmd_idx][8*(cmd_off-12)+:8];
      RCRC:
      if (plant_rcrc_byte_order) out_data = rcrc[8*rcrc_idx+:8];
      else out_data = rcrc[31-8*rcrc_idx-:8];
      default: out_data = 8'h00;
    endcase
  end

  assign in_ready  = state == IDLE;
  assign out_valid = state != IDLE;
  assign out_last  = state == RCRC && rcrc_idx == 2'd3;

  always_ff @(posedge clk or negedge rst_n) begin
    if (!rst_n) begin
      state <= IDLE;
      npsn_q <= '0;
      rh_idx <= '0;
      cmd_idx <= '0;
      cmd_off <= '0;
      rcrc_idx <= '0;
      crc <= 32'hFFFFFFFF;
    end else begin
      unique case (state)
        IDLE:
        if (in_valid) begin
          rh_q <= {2'b00, op, 2'b00, xpuid, npsn, vc, 4'b0000, partition, apsn};
          npsn_q <= npsn + 16'd1;
          posted_q <= posted;
          n_cmds_q <= n_cmds;
          tag_q <= cmd_tag;
          addr_q <= cmd_addr;
          data_q <= cmd_data;
          rh_idx <= '0;
          cmd_idx <= '0;
          cmd_off <= '0;
          rcrc_idx <= '0;
          crc <= 32'hFFFFFFFF;
          state <= RH;
        end
        RH:
        if (out_ready) begin
          crc <= crc32_byte(crc, out_data);
          rh_idx <= rh_idx + 3'd1;
          if (rh_idx == 3'd7) state <= n_cmds_q == '0 ? RCRC : CMD;
        end
        CMD:
        if (out_ready) begin
          crc <= crc32_byte(crc, out_data);
          if (cmd_off == OW'(CMD_BYTES - 1)) begin
            cmd_off <= '0;
            cmd_idx <= cmd_idx + 1'b1;
            if (cmd_idx == n_cmds_q - 1'b1) state <= RCRC;
          end else begin
            cmd_off <= cmd_off + 1'b1;
          end
        end
        RCRC:
        if (out_ready) begin
          rcrc_idx <= rcrc_idx + 2'd1;
          if (rcrc_idx == 2'd3) state <= IDLE;
        end
        default: state <= IDLE;
      endcase
    end
  end

endmodule
