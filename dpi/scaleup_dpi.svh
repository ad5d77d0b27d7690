// scaleup as a reference model for SystemVerilog test benches: the DPI-C imports of
// dpi/scaleup_dpi.c, which wraps the C ABI (scaleup/scaleup.h, libscaleup_c).
//
// Include this file once (it defines the package scaleup_dpi), compile dpi/scaleup_dpi.c with
// the simulator's svdpi.h on the include path and link libscaleup_c (-lscaleup_c).
//
// Byte buffers are open arrays: pass a fixed-size unpacked array (`byte unsigned buf[N]`) and the
// number of bytes of it that count. Outputs are written to the first bytes of the array given,
// which must be large enough (else the call returns DPI_ARRAY_TOO_SMALL).
//
// Every function returning int returns 0, a SCALEUP_ERRC_* code of the library (1 truncated,
// 2 value too big, 3 bad value, 5 bad checksum, 7 no space, ...) or a negative DPI_* code;
// errc_name() names either. RH fields are passed one by one (ver, rsv and rsvd are 0 on emit).
`ifndef SCALEUP_DPI_SVH
`define SCALEUP_DPI_SVH

package scaleup_dpi;

  // Sizes (scaleup.h).
  localparam int RH_SIZE = 8;
  localparam int RCRC_SIZE = 4;
  localparam int SUE_MAX_PAYLOAD = 4096;
  localparam int MAX_BYTES = 16384;  // the largest buffer one call handles

  // RH op codes.
  localparam byte unsigned RH_OP_ACK = 0;
  localparam byte unsigned RH_OP_NACK = 1;
  localparam byte unsigned RH_OP_NONE = 2;

  // R-CRC verdicts.
  localparam int RCRC_GOOD = 0;
  localparam int RCRC_BAD = 1;
  localparam int RCRC_MISSING = 2;
  localparam int RCRC_NOT_CAPTURED = 3;

  // Encapsulations (frame_emit, frame_check).
  localparam int ENCAP_UDP4 = 0;
  localparam int ENCAP_UDP6 = 1;
  localparam int ENCAP_AFH1 = 2;
  localparam int ENCAP_AFH1_VLAN = 3;
  localparam int ENCAP_AFH1_SHIM = 4;
  localparam int ENCAP_AFH1_VLAN_SHIM = 5;
  localparam int ENCAP_AFH2 = 6;

  // Command codes of the default profile.
  localparam byte unsigned CMD_WRITE_FULL_POSTED = 8'h02;
  localparam byte unsigned CMD_WRITE_FULL = 8'h04;
  localparam byte unsigned CMD_READ = 8'h0A;
  localparam byte unsigned CMD_MESSAGE = 8'h10;
  localparam int WRITE_CONTROL_BYTES = 12;  // type, data length - 1, tag, address

  // Errors of the wrapper itself.
  localparam int DPI_ARRAY_TOO_SMALL = -1;
  localparam int DPI_BAD_LENGTH = -2;
  localparam int DPI_NO_MEMORY = -3;

  // The name of an error code ("truncated", "dpi_array_too_small", ...).
  import "DPI-C" function string scaleup_dpi_errc_name(input int code);

  // CRC-32/ISO-HDLC of bytes[0:len-1], as the R-CRC is computed over RH and payload.
  import "DPI-C" function int unsigned scaleup_dpi_rcrc_compute(
    input byte unsigned bytes[], input int len);

  // RH, payload and R-CRC (big-endian) to pdu[0:pdu_len-1].
  import "DPI-C" function int scaleup_dpi_pdu_emit(
    input byte unsigned op, input shortint unsigned xpuid, input shortint unsigned npsn,
    input byte unsigned vc, input shortint unsigned partition, input shortint unsigned apsn,
    input byte unsigned payload[], input int payload_len,
    output byte unsigned pdu[], output int pdu_len);

  // A PDU's RH fields, its R-CRC (as found and as computed over RH and payload; rcrc_status
  // RCRC_*) and its payload length. Returns the RH decode's code (the R-CRC's verdict is
  // rcrc_status alone).
  import "DPI-C" function int scaleup_dpi_pdu_check(
    input byte unsigned pdu[], input int pdu_len,
    output byte unsigned op, output shortint unsigned xpuid, output shortint unsigned npsn,
    output byte unsigned vc, output shortint unsigned partition, output shortint unsigned apsn,
    output int rcrc_status, output int unsigned rcrc_found, output int unsigned rcrc_computed,
    output int payload_len);

  // A PDU wrapped in the headers of `encap` (the library's defaults, with these XPU ids).
  import "DPI-C" function int scaleup_dpi_frame_emit(
    input int encap, input int unsigned src_xpu, input int unsigned dst_xpu,
    input byte unsigned pdu[], input int pdu_len,
    output byte unsigned frame[], output int frame_len);

  // An Ethernet frame read as a receiver reads it: the encapsulation (-1 if not SUE), the XPU
  // ids the headers carry (0 when they carry none), the RH, the R-CRC's verdict, where the PDU
  // starts, the payload's length and whether a receiver takes it. Returns 0 or the first error.
  import "DPI-C" function int scaleup_dpi_frame_check(
    input byte unsigned frame[], input int frame_len,
    output int encap, output int unsigned src_xpu, output int unsigned dst_xpu,
    output byte unsigned op, output shortint unsigned xpuid, output shortint unsigned npsn,
    output byte unsigned vc, output shortint unsigned partition, output shortint unsigned apsn,
    output int rcrc_status, output int pdu_offset, output int payload_len,
    output byte unsigned accepted);

  // `count` full writes (posted or not) packed into one payload with the default profile:
  // command i writes data_len[i] bytes (1..256), taken in turn from `data`, to addr[i] with
  // tag[i]. Fails (no space) when they do not fit one PDU.
  import "DPI-C" function int scaleup_dpi_pack_writes(
    input int count, input int posted, input shortint unsigned destination,
    input byte unsigned vc, input longint unsigned addr[], input shortint unsigned tag[],
    input int data_len[], input byte unsigned data[],
    output byte unsigned payload[], output int payload_len);

  // A payload walked with the default profile, up to max_commands: each command's code, tag,
  // address (0 for types without one), and where its data is in the payload and how long.
  // Returns 0, or the error that stopped the walk (the commands before it are given).
  import "DPI-C" function int scaleup_dpi_unpack(
    input byte unsigned payload[], input int payload_len, input int max_commands,
    output byte unsigned code[], output shortint unsigned tag[], output longint unsigned addr[],
    output int data_offset[], output int data_len[], output int count);

endpackage

`endif  // SCALEUP_DPI_SVH
