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
// Every function returning int (endpoint_can_send aside) returns 0, a SCALEUP_ERRC_* code of the
// library (1 truncated, 2 value too big, 3 bad value, 5 bad checksum, 7 no space, ...) or a
// negative DPI_* code; errc_name() names either. RH fields are passed one by one (ver, rsv and
// rsvd are 0 on emit).
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
  localparam int DPI_BAD_HANDLE = -4;
  localparam int DPI_TOO_MANY_ENDPOINTS = -5;

  // Endpoint sizings (scaleup.h SCALEUP_SIZING_*): the firmware's takes payloads of up to 274
  // bytes and 8 PDUs in flight, the fabric's 4096 bytes and 256.
  localparam int SIZING_FIRMWARE = 0;
  localparam int SIZING_FABRIC = 1;
  localparam longint unsigned NO_DEADLINE = 64'hFFFF_FFFF_FFFF_FFFF;

  // Why an arrived PDU's payload was not delivered (scaleup.h SCALEUP_DROP_*).
  localparam int DROP_NONE = 0;
  localparam int DROP_DUPLICATE = 1;
  localparam int DROP_GAP = 2;
  localparam int DROP_PARTITION = 3;

  // Indices into endpoint_counters' array.
  localparam int COUNTER_SENT = 0;  // new PDUs sent
  localparam int COUNTER_RESENT = 1;  // PDUs sent again (go back: a NACK or a timeout)
  localparam int COUNTER_NACKS = 2;  // NACKs received
  localparam int COUNTER_TIMEOUTS = 3;
  localparam int COUNTER_DELIVERED = 4;  // payloads delivered, in order, once
  localparam int COUNTER_DUPLICATES = 5;
  localparam int COUNTER_DROPPED_GAP = 6;  // PDUs after a missing PSN
  localparam int COUNTER_DROPPED_PARTITION = 7;
  localparam int COUNTER_ACKS_SENT = 8;
  localparam int COUNTER_NACKS_SENT = 9;
  localparam int COUNTER_REJECTED = 10;  // damaged or foreign PDUs refused
  localparam int COUNTER_IN_FLIGHT = 11;
  localparam int COUNTER_UNREACHABLE = 12;  // 1: the retry limit was hit
  localparam int COUNTERS = 13;

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

  // ---- the go-back-N endpoint (scaleup.h scaleup_endpoint_*) ----
  //
  // One connection's sender and receiver: payloads in, PDUs (RH, payload, R-CRC) out with PSNs,
  // arrived PDUs delivered in order or dropped, ACKs and NACKs in the RHs it sends (stand-alone
  // when nothing else goes out), timers fired by the step at `now` (ns, never decreasing). An
  // endpoint is a handle (int) into a table of 16 in the wrapper; each step's PDUs stay readable
  // by endpoint_transmit until the endpoint's next step.

  // The library's timers and coalescing, to start a configuration from.
  import "DPI-C" function void scaleup_dpi_endpoint_defaults(
    output int unsigned window, output longint unsigned rto, output int unsigned max_retries,
    output int unsigned ack_every, output longint unsigned ack_delay);

  // An endpoint of a SIZING_*: this end's XPU id, VC and partition in every RH it writes (a PDU
  // arriving in another partition is dropped), PDUs in flight (capped by the sizing), the
  // retransmit timeout and retries, and a coalesced ACK after ack_every PDUs or ack_delay ns.
  import "DPI-C" function int scaleup_dpi_endpoint_open(
    input int sizing, input shortint unsigned xpuid, input byte unsigned vc,
    input shortint unsigned partition, input int unsigned window, input longint unsigned rto,
    input int unsigned max_retries, input int unsigned ack_every,
    input longint unsigned ack_delay, output int handle);

  import "DPI-C" function int scaleup_dpi_endpoint_close(input int handle);

  // A payload for the peer: accepted (1) with its PSN and its PDU, or 0 when the window is full
  // (offer it again later). pdu must hold payload_len + 12 bytes. transmit_count: the PDUs the
  // step put out, this one last (before it, any the timers sent again).
  import "DPI-C" function int scaleup_dpi_endpoint_send(
    input int handle, input longint unsigned now, input byte unsigned payload[],
    input int payload_len, output byte unsigned pdu[], output int pdu_len,
    output shortint unsigned psn, output byte unsigned accepted, output int transmit_count);

  // A PDU from the peer: its payload delivered (delivered_len > 0; the array must hold
  // pdu_len - 12 bytes) or dropped (DROP_*), the ACK or NACK it carries applied. Returns the
  // reason a damaged or foreign PDU was refused (bad checksum, ...).
  import "DPI-C" function int scaleup_dpi_endpoint_arrived(
    input int handle, input longint unsigned now, input byte unsigned pdu[], input int pdu_len,
    output byte unsigned delivered[], output int delivered_len, output int dropped,
    output int transmit_count);

  // Time only: the retransmit timer and a coalesced ACK's delay fire when due.
  import "DPI-C" function int scaleup_dpi_endpoint_tick(
    input int handle, input longint unsigned now, output int transmit_count);

  // When to tick next with nothing else to do; NO_DEADLINE while no timer runs.
  import "DPI-C" function longint unsigned scaleup_dpi_endpoint_deadline(input int handle);

  // 1 when a payload sent now would be accepted (window open, peer not unreachable).
  import "DPI-C" function int scaleup_dpi_endpoint_can_send(input int handle);

  // PDU `index` (0 .. transmit_count - 1) of the endpoint's last step, and its RH's op, npsn and
  // apsn (a stand-alone ACK or NACK is 12 bytes: no payload, and it takes no PSN).
  import "DPI-C" function int scaleup_dpi_endpoint_transmit(
    input int handle, input int index, output byte unsigned pdu[], output int pdu_len,
    output byte unsigned op, output shortint unsigned npsn, output shortint unsigned apsn);

  // The last ACK or NACK this endpoint's RHs carried to the peer (RH_OP_NONE before the first):
  // ACK apsn, everything up to apsn delivered; NACK apsn, apsn expected and the PDUs after it
  // dropped.
  import "DPI-C" function int scaleup_dpi_endpoint_ack(
    input int handle, output byte unsigned op, output shortint unsigned apsn);

  // The counters, by COUNTER_* index; counters must hold COUNTERS elements.
  import "DPI-C" function int scaleup_dpi_endpoint_counters(
    input int handle, output longint unsigned counters[]);

endpackage

`endif  // SCALEUP_DPI_SVH
