/* scaleup's C ABI: the SUE wire formats of the C++20 library for C11 programs (libscaleup_c).
 *
 * A C header, so it cannot start with scaleup/wire/version.hpp as the C++ headers do: it includes
 * only the C library's headers, and every declaration here is plain C (fixed-width integers,
 * plain structs, no C++-only enum features). Each function is one C++ call of the library,
 * named beside it; nothing here throws, allocates or needs the C++ runtime.
 *
 * Conventions:
 *   - functions that can fail return an int: 0 on success, else the error's code
 *     (SCALEUP_ERRC_*), with the whole error written to `err` when `err` is not NULL;
 *   - strings in an error (layer, what, field) are pointer and length, not NUL-terminated;
 *     they point into the library's constants and stay valid for the life of the program;
 *   - byte buffers are a pointer and a size; a size of 0 allows a NULL pointer. */
#ifndef SCALEUP_SCALEUP_H
#define SCALEUP_SCALEUP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors (wire/error.hpp: wire::error, wire::errc, wire::severity) ------------------- */

enum {
  SCALEUP_ERRC_NONE = 0,
  SCALEUP_ERRC_TRUNCATED = 1,        /* fewer bytes than the layer needs */
  SCALEUP_ERRC_VALUE_TOO_BIG = 2,    /* encode: a value does not fit its field */
  SCALEUP_ERRC_BAD_VALUE = 3,        /* a field holds a value the format forbids */
  SCALEUP_ERRC_RESERVED_NONZERO = 4, /* a reserved field is not zero (reported, not rejected) */
  SCALEUP_ERRC_BAD_CHECKSUM = 5,     /* IPv4 header checksum, UDP checksum, R-CRC */
  SCALEUP_ERRC_BAD_LENGTH = 6,       /* a length field disagrees with the bytes present */
  SCALEUP_ERRC_NO_SPACE = 7,         /* encode: the output buffer is too small */
  SCALEUP_ERRC_UNSUPPORTED = 8,      /* valid, but not a variant this library decodes */
  SCALEUP_ERRC_NOT_CAPTURED = 9,     /* bytes on the wire the capture did not keep */
  SCALEUP_ERRC_UNREACHABLE = 10      /* a transport's destination answers on no port */
};

enum { SCALEUP_SEVERITY_ERROR = 0, SCALEUP_SEVERITY_WARNING = 1, SCALEUP_SEVERITY_NOTE = 2 };

/* wire::error, field for field. offset: from the start of the buffer handed to the call;
 * needed/available: byte counts of a length error; field: the field's display-filter name;
 * item: which repeated unit (a command's 1-based index), 0 when not applicable. */
typedef struct scaleup_error {
  uint8_t code;  /* SCALEUP_ERRC_* */
  uint8_t level; /* SCALEUP_SEVERITY_* */
  const char* layer;
  size_t layer_len;
  uint32_t offset;
  uint32_t needed;
  uint32_t available;
  const char* what;
  size_t what_len;
  const char* field;
  size_t field_len;
  uint64_t value;
  uint32_t item;
} scaleup_error;

/* The name of an error code ("truncated", ...), NUL-terminated; "unknown" for others. */
const char* scaleup_errc_name(int code);

/* ---- headers: encode to bytes, decode from bytes (wire::encode, wire::decode<T>) ----------
 *
 * encode writes exactly SCALEUP_*_SIZE bytes to out (out_len at least that) and refuses a value
 * too big for its field or a fixed field off its value; nothing is truncated. decode reads the
 * header at in[0]: a buffer too short is SCALEUP_ERRC_TRUNCATED with needed/available set; a
 * fixed field off its value is an error, yet the value read is still written to *out. */

#define SCALEUP_RH_SIZE 8
#define SCALEUP_AFH1_ADDRESSES_SIZE 12
#define SCALEUP_AFH1_SHIM_SIZE 16
#define SCALEUP_AFH2_NORMAL_SIZE 12
#define SCALEUP_AFH2_COMPRESSED_SIZE 6

/* RH op codes (decisions.md): ACK, NACK, no acknowledgement carried (2 is sent, 3 accepted). */
enum { SCALEUP_RH_OP_ACK = 0, SCALEUP_RH_OP_NACK = 1, SCALEUP_RH_OP_NONE = 2 };

/* SUE Reliability Header (wire::reliability_header, R2 Table 5). */
typedef struct scaleup_rh {
  uint8_t ver;        /* 2 bits, 0 today */
  uint8_t op;         /* 2 bits, SCALEUP_RH_OP_* */
  uint8_t rsv;        /* 2 bits, reserved */
  uint16_t xpuid;     /* 10 bits, the source XPU */
  uint16_t npsn;      /* this PDU's sequence number */
  uint8_t vc;         /* 2 bits */
  uint8_t rsvd;       /* 4 bits, reserved */
  uint16_t partition; /* 10 bits */
  uint16_t apsn;      /* ACK: highest PSN delivered in order; NACK: PSN expected */
} scaleup_rh;

/* The Ethernet addresses read as AFH Gen 1 (wire::afh1_addresses). */
typedef struct scaleup_afh1_addresses {
  uint32_t da_prefix;
  uint16_t dst_xpu;
  uint32_t sa_prefix;
  uint16_t src_xpu;
} scaleup_afh1_addresses;

/* The AFH Gen 1 shim header (wire::afh1_shim). */
typedef struct scaleup_afh1_shim {
  uint8_t version; /* 4 bits, 0 */
  uint8_t tc;
  uint8_t hop_limit;
  uint8_t next_header; /* 253 = SUE */
  uint16_t length;     /* bytes after the shim, padding excluded */
  uint32_t entropy;    /* 20 bits */
  uint32_t src_xpu;
  uint32_t dst_xpu;
} scaleup_afh1_shim;

/* AFH Gen 2, normal 12-byte format (wire::afh2_normal). Fixed bits: w 0, v z y 0, x 1,
 * sa_ul 1, sa_ig 0; scaleup_afh2_normal_init sets them. */
typedef struct scaleup_afh2_normal {
  uint8_t rsv, w, v, z, y, x, m;
  uint8_t hop_count;
  uint32_t dst_xpu;
  uint8_t tc; /* 5 bits */
  uint8_t spare;
  uint8_t sa_ul;
  uint8_t sa_ig;
  uint8_t entropy;
  uint32_t src_xpu;
} scaleup_afh2_normal;

/* AFH Gen 2, compressed 6-byte format (wire::afh2_compressed): also the SUE Lite header, which
 * a packed payload follows directly (R2 3.4, Fig. 10). Fixed bits: w 1, v z y 0, x 1. */
typedef struct scaleup_afh2_compressed {
  uint8_t rsv, w, v, z, y, x, m;
  uint8_t tc; /* 5 bits; carries the VC in SUE Lite */
  uint8_t spare;
  uint16_t src_xpu;
  uint16_t dst_xpu;
} scaleup_afh2_compressed;

/* Values with the C++ struct's defaults (fixed bits set, the default prefix, ...). */
void scaleup_rh_init(scaleup_rh* h);
void scaleup_afh1_addresses_init(scaleup_afh1_addresses* h);
void scaleup_afh1_shim_init(scaleup_afh1_shim* h);
void scaleup_afh2_normal_init(scaleup_afh2_normal* h);
void scaleup_afh2_compressed_init(scaleup_afh2_compressed* h);

int scaleup_rh_encode(const scaleup_rh* h, uint8_t* out, size_t out_len, scaleup_error* err);
int scaleup_rh_decode(const uint8_t* in, size_t in_len, scaleup_rh* out, scaleup_error* err);
int scaleup_afh1_addresses_encode(const scaleup_afh1_addresses* h, uint8_t* out, size_t out_len,
                                  scaleup_error* err);
int scaleup_afh1_addresses_decode(const uint8_t* in, size_t in_len, scaleup_afh1_addresses* out,
                                  scaleup_error* err);
int scaleup_afh1_shim_encode(const scaleup_afh1_shim* h, uint8_t* out, size_t out_len,
                             scaleup_error* err);
int scaleup_afh1_shim_decode(const uint8_t* in, size_t in_len, scaleup_afh1_shim* out,
                             scaleup_error* err);
int scaleup_afh2_normal_encode(const scaleup_afh2_normal* h, uint8_t* out, size_t out_len,
                               scaleup_error* err);
int scaleup_afh2_normal_decode(const uint8_t* in, size_t in_len, scaleup_afh2_normal* out,
                               scaleup_error* err);
int scaleup_afh2_compressed_encode(const scaleup_afh2_compressed* h, uint8_t* out, size_t out_len,
                                   scaleup_error* err);
int scaleup_afh2_compressed_decode(const uint8_t* in, size_t in_len, scaleup_afh2_compressed* out,
                                   scaleup_error* err);

/* ---- the PDU and its R-CRC (wire/pdu.hpp, wire/checksum.hpp) ---------------------------- */

#define SCALEUP_RCRC_SIZE 4
#define SCALEUP_SUE_MAX_PAYLOAD 4096
#define SCALEUP_SUE_LITE_MAX_PAYLOAD 1024

enum {
  SCALEUP_RCRC_GOOD = 0,
  SCALEUP_RCRC_BAD = 1,
  SCALEUP_RCRC_MISSING = 2,     /* fewer bytes than an RH and an R-CRC */
  SCALEUP_RCRC_NOT_CAPTURED = 3 /* the capture cut the PDU: not checked */
};

/* The R-CRC of RH and payload, bytes[0, len): CRC-32/ISO-HDLC (wire::crc32). */
uint32_t scaleup_rcrc_compute(const uint8_t* bytes, size_t len);

/* Where a PDU whose length its carrier gives ends, and what its R-CRC says
 * (wire::pdu_bounds_exact). payload_end: bytes from the PDU's start to the R-CRC. */
typedef struct scaleup_pdu_bounds {
  size_t payload_end;
  size_t pad;
  uint8_t status; /* SCALEUP_RCRC_* */
  uint32_t rcrc;  /* as found */
  uint32_t computed;
} scaleup_pdu_bounds;

/* Returns the status; *out gets the whole verdict when out is not NULL. */
int scaleup_rcrc_check(const uint8_t* pdu, size_t pdu_len, scaleup_pdu_bounds* out);

/* RH, payload and R-CRC to out (wire::emit_pdu); *written gets the PDU's length. */
int scaleup_pdu_emit(const scaleup_rh* rh, const uint8_t* payload, size_t payload_len, uint8_t* out,
                     size_t out_len, size_t* written, scaleup_error* err);

/* ---- frames: emit (wire/frame.hpp) ------------------------------------------------------ */

/* wire::encap */
enum {
  SCALEUP_ENCAP_UDP4 = 0,
  SCALEUP_ENCAP_UDP6 = 1,
  SCALEUP_ENCAP_AFH1 = 2,
  SCALEUP_ENCAP_AFH1_VLAN = 3,
  SCALEUP_ENCAP_AFH1_SHIM = 4,
  SCALEUP_ENCAP_AFH1_VLAN_SHIM = 5,
  SCALEUP_ENCAP_AFH2 = 6,
  SCALEUP_ENCAP_AFH2C = 7,
  SCALEUP_ENCAP_LITE = 8
};
#define SCALEUP_ENCAP_COUNT 9

/* "udp4", "afh1-vlan", ... (wire::to_string(encap)), NUL-terminated; "unknown" for others. */
const char* scaleup_encap_name(int encap);
/* Bytes in front of the carried PDU or SUE Lite payload (wire::header_size); 0 if unknown. */
size_t scaleup_frame_header_size(int encap);

/* wire::frame_params: what the network layer needs to wrap a PDU. */
typedef struct scaleup_frame_params {
  uint8_t encap; /* SCALEUP_ENCAP_* */
  uint32_t src_xpu;
  uint32_t dst_xpu;
  uint8_t tc;
  uint16_t udp_src_port;
  uint16_t udp_dst_port;
  bool udp4_checksum;
  uint8_t hop_limit;
  uint16_t vlan_id;
  uint32_t entropy;
  bool multicast; /* AFH Gen 2's M bit; other encapsulations refuse it */
  uint32_t afh1_prefix;
  uint16_t sue_ethertype;
  uint16_t shim_ethertype;
  uint8_t shim_next_header;
  bool pad; /* zero-pad to the 60-byte Ethernet minimum */
} scaleup_frame_params;

/* The C++ defaults (decisions.md) for encapsulation `encap`. */
void scaleup_frame_params_init(scaleup_frame_params* p, int encap);

/* Wraps carried bytes, a PDU or a SUE Lite payload, in p's headers (wire::emit_frame). */
int scaleup_frame_emit(const scaleup_frame_params* p, const uint8_t* inner, size_t inner_len,
                       uint8_t* out, size_t out_len, size_t* written, scaleup_error* err);
/* A whole SUE frame: headers, RH, payload, R-CRC, padding (wire::emit_sue_frame); not Lite. */
int scaleup_sue_frame_emit(const scaleup_frame_params* p, const scaleup_rh* rh,
                           const uint8_t* payload, size_t payload_len, uint8_t* out, size_t out_len,
                           size_t* written, scaleup_error* err);

/* ---- commands: profiles (pack/command.hpp) ---------------------------------------------- */

/* A command type of a profile (pack::command_type; the framing rules of R2 4.2 step 2a): the
 * control is control_units x 2 bytes (1..9 units); with has_data, the control's byte 1 is the
 * data length - 1 and 1 to 256 bytes of data follow it. Code 0 is padding, never a type. */
typedef struct scaleup_command_type {
  uint8_t code;
  const char* name; /* NUL-terminated, or NULL: no name */
  uint8_t control_units;
  bool has_data;
  uint8_t vc; /* the VC the XPU's AXI mapping puts the type on (scaleup_command.vc) */
} scaleup_command_type;

/* A command profile (pack::profile) of the caller's table, in the caller's memory. The packer,
 * the unpacker, the frame reader and the instance take one where they would use the default
 * profile (pack/default_profile.hpp), which a NULL profile still means; each keeps it by
 * pointer, so the profile must outlive them. */
typedef struct scaleup_profile scaleup_profile;

#define SCALEUP_MAX_COMMAND_TYPES 255

/* Bytes the caller provides for a profile, any alignment (init aligns inside); it holds up to
 * SCALEUP_MAX_COMMAND_TYPES types whatever the count. */
size_t scaleup_profile_size(void);
/* Builds the profile `name` of types[0, count) in storage[0, size). The types are copied (the
 * array may go once init returns); the strings, `name` and each type's name, are referenced, not
 * copied: they must outlive the profile. NULL, with the reason in err, when storage is NULL or
 * smaller than scaleup_profile_size(), count is over SCALEUP_MAX_COMMAND_TYPES, types is NULL
 * with a count, or profile::check() refuses the table (a code twice, code 0, control units
 * outside 1..9, a VC over 3: SCALEUP_ERRC_BAD_VALUE, check()'s reason in what). Nothing to
 * release: drop the storage. */
scaleup_profile* scaleup_profile_init(void* storage, size_t size, const char* name,
                                      const scaleup_command_type* types, size_t count,
                                      scaleup_error* err);

/* ---- frames: read (wire/receive.hpp, pack/receive.hpp) ---------------------------------- */

/* pcap link types read_frame reads (wire::link_*). */
#define SCALEUP_LINK_NULL 0u
#define SCALEUP_LINK_ETHERNET 1u
#define SCALEUP_LINK_RAW 101u
#define SCALEUP_LINK_LOOP 108u
#define SCALEUP_LINK_LINUX_SLL 113u
#define SCALEUP_LINK_AFH2 147u
#define SCALEUP_LINK_IPV4 228u
#define SCALEUP_LINK_IPV6 229u
#define SCALEUP_LINK_LINUX_SLL2 276u

enum { SCALEUP_FCS_DETECT = 0, SCALEUP_FCS_PRESENT = 1, SCALEUP_FCS_ABSENT = 2 };

#define SCALEUP_MAX_UDP_PORTS 16

/* wire::receive_options, less the flow table (each datagram is judged alone). A profile's
 * command boundaries end a minimum-size frame's PDU and a SUE Lite payload's padding
 * (pack::read_frame): `profile`'s when it is not NULL, else the default profile's with
 * default_profile; with neither, every byte boundary is a candidate. */
typedef struct scaleup_receive_options {
  uint16_t udp_ports[SCALEUP_MAX_UDP_PORTS]; /* decoded as SUE whatever they hold */
  size_t udp_port_count;
  bool heuristics;
  uint8_t fcs; /* SCALEUP_FCS_*, Ethernet link only */
  bool check_checksums;
  uint16_t sue_ethertype;
  uint16_t shim_ethertype;
  uint8_t shim_next_sue;
  bool default_profile;
  const scaleup_profile* profile; /* NULL: default_profile decides */
} scaleup_receive_options;

void scaleup_receive_options_init(scaleup_receive_options* o);

/* wire::carrier: how far a frame that is not SUE was read. */
enum {
  SCALEUP_CARRIER_UNKNOWN = 0,
  SCALEUP_CARRIER_ETHERNET = 1,
  SCALEUP_CARRIER_IPV4 = 2,
  SCALEUP_CARRIER_IPV6 = 3,
  SCALEUP_CARRIER_IPV4_UDP = 4,
  SCALEUP_CARRIER_IPV6_UDP = 5,
  SCALEUP_CARRIER_AFH2 = 6,
  SCALEUP_CARRIER_LINUX_SLL = 7,
  SCALEUP_CARRIER_NULL = 8
};

#define SCALEUP_FRAME_MAX_ERRORS 16

/* What wire::received_frame says to a C user. Offsets count from the frame's first byte. */
typedef struct scaleup_received_frame {
  uint32_t link;
  bool is_sue;   /* a SUE encapsulation was recognised: `encap` is valid */
  uint8_t encap; /* SCALEUP_ENCAP_* */
  uint8_t carrier;
  bool has_src_xpu; /* only AFH Gen 1 and Gen 2 carry XPU ids */
  uint32_t src_xpu;
  bool has_dst_xpu;
  uint32_t dst_xpu;
  bool has_rh;
  scaleup_rh rh;
  size_t pdu_offset;     /* where the RH (or SUE Lite payload) starts */
  size_t payload_offset; /* the packed payload: between RH and R-CRC; SUE Lite: before padding */
  size_t payload_length; /* captured bytes of it */
  scaleup_pdu_bounds bounds;
  bool accepted; /* an RH and a good R-CRC: what a receiver takes */
  bool fcs_present;
  bool fcs_good;
  size_t wire_length;
  size_t not_captured;
  size_t error_count; /* problems found, in order; the one that stopped reading is last */
  bool errors_overflow;
  scaleup_error errors[SCALEUP_FRAME_MAX_ERRORS];
} scaleup_received_frame;

/* One frame as captured on `link` (pack::read_frame; wire::read_frame without the profile).
 * wire_length: the frame's length on the wire when the capture kept fewer bytes, else 0. o may
 * be NULL (defaults). Returns 0 when no problem of error severity was found and none was dropped
 * (received_frame::ok()), else the code of the first such problem (warnings and notes do not
 * count; with errors_overflow and none kept, the first kept entry's); *out is filled either way. */
int scaleup_frame_read(const uint8_t* frame, size_t frame_len, uint32_t link,
                       const scaleup_receive_options* o, size_t wire_length,
                       scaleup_received_frame* out);

/* ---- commands: unpacker (pack/command.hpp) ---------------------------------------------- */

#define SCALEUP_MAX_CONTROL_BYTES 18
#define SCALEUP_MAX_DATA_BYTES 256

/* Command codes of the default profile (pack/default_profile.hpp). */
enum {
  SCALEUP_CMD_WRITE_FULL_POSTED = 0x02,
  SCALEUP_CMD_WRITE_FULL = 0x04,
  SCALEUP_CMD_WRITE_PARTIAL_POSTED = 0x06,
  SCALEUP_CMD_WRITE_PARTIAL = 0x08,
  SCALEUP_CMD_READ = 0x0A,
  SCALEUP_CMD_READ_RESPONSE = 0x0C,
  SCALEUP_CMD_WRITE_RESPONSE = 0x0E,
  SCALEUP_CMD_MESSAGE = 0x10,
  SCALEUP_CMD_BARRIER = 0x12,
  SCALEUP_CMD_ATOMIC = 0x14,
  SCALEUP_CMD_ATOMIC_RESPONSE = 0x16
};

/* The control length in bytes of a command type of the default profile, and whether data
 * follows it; 0 for a code not in the profile. */
size_t scaleup_command_control_size(uint8_t code, bool* has_data);

/* A full write's control, posted or not (pack::cmd_write, R2 Table 2; 12 bytes): what a
 * program hands the packer as a write's control and reads back from an unpacked one. dlen, the
 * data length minus one, is the packer's to set from the data it is given. */
#define SCALEUP_CMD_WRITE_SIZE 12

typedef struct scaleup_cmd_write {
  uint8_t type; /* SCALEUP_CMD_WRITE_FULL or SCALEUP_CMD_WRITE_FULL_POSTED */
  uint8_t dlen;
  uint16_t tag; /* matches a response to its request */
  uint64_t addr;
} scaleup_cmd_write;

/* A non-posted write to address 0, tag 0 (the C++ struct's defaults). */
void scaleup_cmd_write_init(scaleup_cmd_write* c);
int scaleup_cmd_write_encode(const scaleup_cmd_write* c, uint8_t* out, size_t out_len,
                             scaleup_error* err);
int scaleup_cmd_write_decode(const uint8_t* in, size_t in_len, scaleup_cmd_write* out,
                             scaleup_error* err);

/* One command of a payload (pack::command_view): views into the caller's payload. */
typedef struct scaleup_command {
  uint8_t code;
  const uint8_t* control;
  size_t control_len;
  const uint8_t* data;
  size_t data_len;
  size_t offset;  /* of the control, from the payload's start plus base_offset */
  uint32_t index; /* 1-based position in the PDU */
  uint8_t vc;     /* the VC the profile's AXI mapping puts the type on */
} scaleup_command;

/* A pack::unpacker kept in the caller's memory: opaque, copyable, no cleanup. */
typedef struct scaleup_unpacker {
  union {
    unsigned char bytes[256];
    uint64_t align_u64;
    void* align_ptr;
  } opaque;
} scaleup_unpacker;

/* Walks `payload` (which must outlive the walk) with the default profile; offsets are numbered
 * from base_offset. */
void scaleup_unpacker_init(scaleup_unpacker* u, const uint8_t* payload, size_t payload_len,
                           size_t base_offset);
/* The same with `profile` (NULL: the default), which must outlive the walk too. */
void scaleup_unpacker_init_with(scaleup_unpacker* u, const scaleup_profile* profile,
                                const uint8_t* payload, size_t payload_len, size_t base_offset);
/* 1 with the next command in *out; 0 at the end of the payload or at a malformed command. */
int scaleup_unpacker_next(scaleup_unpacker* u, scaleup_command* out);
/* The error that stopped the walk (0 when it ended cleanly or has not ended). */
int scaleup_unpacker_error(const scaleup_unpacker* u, scaleup_error* err);
size_t scaleup_unpacker_count(const scaleup_unpacker* u);
size_t scaleup_unpacker_padding(const scaleup_unpacker* u);

/* ---- commands: packer (pack/packer.hpp) ------------------------------------------------- */

#define SCALEUP_PACKER_DESTINATIONS 1024 /* the RH's 10-bit XPU ids */
#define SCALEUP_PACKER_VCS 4
#define SCALEUP_PACKER_CAPACITY 1024 /* commands queued at once */
#define SCALEUP_SUE_PACK_LIMIT 4096
#define SCALEUP_LITE_PACK_LIMIT 1024

enum { SCALEUP_WITHIN_VC_ARRIVAL_ORDER = 0, SCALEUP_WITHIN_VC_ROUND_ROBIN = 1 };

/* pack::packer_config: VC weights (smooth weighted round robin), the order within a VC and the
 * payload bytes per PDU; and the command profile pushed commands are checked against. */
typedef struct scaleup_packer_config {
  uint16_t weights[SCALEUP_PACKER_VCS];
  uint8_t order; /* SCALEUP_WITHIN_VC_* */
  size_t limit;
  const scaleup_profile* profile; /* NULL: the default profile */
} scaleup_packer_config;

void scaleup_packer_config_init(scaleup_packer_config* c);

/* A packer with fixed storage (no heap), built in the caller's memory, in one of two sizings:
 *   - SCALEUP_PACKER_SIZING_FULL: pack::packer<1024, 4, 1024>, any XPU id, 4 VCs, 1024 commands
 *     queued (about 177 KB);
 *   - SCALEUP_PACKER_SIZING_FIRMWARE: pack::packer<16, 2, 16>, destinations 0 to 15, VCs 0 and 1,
 *     16 commands queued (2.5 to 2.8 KB): a microcontroller's RAM. At most
 *     SCALEUP_PACKER_FIRMWARE_SIZE bytes on any target, so that a firmware sizes its static
 *     storage at compile time.
 * A packer of either sizing takes every scaleup_packer_* call; it refuses a destination or VC
 * beyond its sizing (SCALEUP_ERRC_VALUE_TOO_BIG), and only the first VCs' weights apply. */
typedef struct scaleup_packer scaleup_packer;

enum { SCALEUP_PACKER_SIZING_FULL = 0, SCALEUP_PACKER_SIZING_FIRMWARE = 1 };
#define SCALEUP_PACKER_FIRMWARE_DESTINATIONS 16
#define SCALEUP_PACKER_FIRMWARE_VCS 2
#define SCALEUP_PACKER_FIRMWARE_CAPACITY 16
#define SCALEUP_PACKER_FIRMWARE_SIZE 3072

/* Bytes the caller provides for a packer of the full sizing: any alignment will do (init aligns
 * inside). */
size_t scaleup_packer_size(void);
/* Builds a packer of the full sizing in storage[0, size); c may be NULL (defaults). NULL when
 * size is too small or the config is refused (limit 0, order unknown). Nothing to release: drop
 * the storage (before the config's profile, which the packer keeps by pointer). */
scaleup_packer* scaleup_packer_init(void* storage, size_t size, const scaleup_packer_config* c);
/* The same for a sizing (SCALEUP_PACKER_SIZING_*): 0 bytes, and NULL, for an unknown one. */
size_t scaleup_packer_sized_size(int sizing);
scaleup_packer* scaleup_packer_sized_init(void* storage, size_t size, int sizing,
                                          const scaleup_packer_config* c);

/* A command handed to the packer (pack::queued_command). The control is copied; the data is
 * kept by pointer until scaleup_packer_next has packed the command (its cookie comes back). */
typedef struct scaleup_queued_command {
  uint16_t destination;
  uint8_t vc;
  const uint8_t* control;
  size_t control_len;
  const uint8_t* data;
  size_t data_len;
  bool send_now; /* close the PDU after this command */
  uint64_t cookie;
} scaleup_queued_command;

/* What one call to scaleup_packer_next packed (pack::packed_pdu). */
typedef struct scaleup_packed_pdu {
  uint16_t destination;
  uint8_t vc;
  size_t bytes;    /* payload bytes written */
  size_t commands; /* 0: nothing was queued */
} scaleup_packed_pdu;

int scaleup_packer_push(scaleup_packer* p, const scaleup_queued_command* c, scaleup_error* err);
/* Packs one {destination, VC} queue into out (out_len at least the limit). The cookies of the
 * packed commands go to cookies[0, cookies_cap) in order, and that bound also limits how many
 * are packed; cookies may be NULL when cookies_cap is 0 (no bound then). */
int scaleup_packer_next(scaleup_packer* p, uint8_t* out, size_t out_len, scaleup_packed_pdu* pdu,
                        uint64_t* cookies, size_t cookies_cap, scaleup_error* err);
/* Commands queued, every queue. */
size_t scaleup_packer_queued(const scaleup_packer* p);

/* ---- transport: sizings and go-back-N (transport/instance.hpp, transport/go_back_n.hpp) --- */

/* The compile-time bounds a transport object is built with (transport::instance_sizing):
 *   FIRMWARE  firmware_sizing: one peer, one port, 2 VCs, 8 PDUs in flight of up to 274 payload
 *             bytes, 16 commands queued; everything inside the object, no heap;
 *   FABRIC    fabric_sizing: 1023 peers, 4 ports, 4 VCs, 256 PDUs in flight of up to 4096 bytes;
 *             the instance's tables grow from the caller's allocator as a run uses them.
 * A go-back-N endpoint takes the sizing's window and payload bound. A library compiled with
 * SCALEUP_C_FABRIC=0 (a firmware's) has the firmware sizing alone: the fabric sizing's code and
 * the heap it could fall back to are left out, and SCALEUP_SIZING_FABRIC is an unknown sizing. */
enum { SCALEUP_SIZING_FIRMWARE = 0, SCALEUP_SIZING_FABRIC = 1 };

/* What a deadline function returns when no timer runs (transport::no_deadline, link_never). */
#define SCALEUP_NO_DEADLINE UINT64_MAX

/* transport::gbn_config: timers and ACK coalescing; times in ns. */
typedef struct scaleup_gbn_config {
  uint32_t window;      /* PDUs in flight per connection; capped by the sizing's window */
  uint64_t rto;         /* without progress this long, go back to the oldest PDU */
  uint32_t max_retries; /* timeouts in a row, then the peer is unreachable */
  uint32_t ack_every;   /* a stand-alone ACK after this many unacknowledged PDUs... */
  uint64_t ack_delay;   /* ...or this long after the first of them */
} scaleup_gbn_config;

void scaleup_gbn_config_init(scaleup_gbn_config* c);

/* transport::drop_reason: why a PDU's payload was not delivered. */
enum {
  SCALEUP_DROP_NONE = 0,
  SCALEUP_DROP_DUPLICATE = 1, /* a PSN already delivered (re-ACKed) */
  SCALEUP_DROP_GAP = 2,       /* a PSN after a missing one (NACKed once per gap) */
  SCALEUP_DROP_PARTITION = 3  /* another partition's (R2 4.1) */
};

/* The machines themselves (transport::gbn_sender<16>, gbn_receiver<16>): plain values in the
 * caller's memory, stepped in place, time an input; the caller keeps the PDUs and writes the
 * RHs (the sender says which PSNs to send again). The endpoint below does both for a caller. */
typedef struct scaleup_gbn_sender {
  uint16_t next; /* the PSN the next new PDU gets */
  uint16_t una;  /* the oldest PDU not yet acknowledged */
  bool timing;
  uint64_t deadline;
  uint32_t retries;
  bool unreachable;
  uint64_t sent, resent, nacks, timeouts;
} scaleup_gbn_sender;

/* transport::sender_input */
enum {
  SCALEUP_GBN_SENDER_SEND = 0, /* a new PDU: give it a PSN, or say the window is full */
  SCALEUP_GBN_SENDER_ACK = 1,  /* an RH carried ACK apsn */
  SCALEUP_GBN_SENDER_NACK = 2, /* an RH carried NACK apsn */
  SCALEUP_GBN_SENDER_TICK = 3  /* time passed: the retransmit timer may fire */
};

/* transport::sender_actions */
typedef struct scaleup_gbn_sender_actions {
  bool assigned; /* send: the new PDU carries psn_assigned */
  uint16_t psn_assigned;
  bool window_full;  /* send refused: keep the PDU queued */
  uint32_t released; /* PDUs acknowledged by this event, from released_from */
  uint16_t released_from;
  uint32_t resend; /* go back: send these again, in order, from resend_from */
  uint16_t resend_from;
  bool unreachable; /* the retry limit was hit */
} scaleup_gbn_sender_actions;

typedef struct scaleup_gbn_receiver {
  uint16_t expected;
  bool nacked;   /* this gap has had its NACK */
  bool nack_due; /* ...which has not gone out yet */
  bool ack_due;  /* an ACK should go out now */
  uint32_t unacked;
  bool ack_timing;
  uint64_t ack_deadline;
  uint64_t delivered, duplicates, dropped_gap, dropped_partition;
  uint64_t acks_sent, nacks_sent;
} scaleup_gbn_receiver;

/* transport::receiver_input */
enum {
  SCALEUP_GBN_RECEIVER_PDU = 0,     /* a PDU arrived with PSN npsn (R-CRC good) */
  SCALEUP_GBN_RECEIVER_TICK = 1,    /* time passed: a coalesced ACK may be due */
  SCALEUP_GBN_RECEIVER_ACK_SENT = 2 /* the pending ACK/NACK went out */
};

/* transport::receiver_actions */
typedef struct scaleup_gbn_receiver_actions {
  bool deliver;    /* hand the PDU's commands to the XPU */
  uint8_t dropped; /* SCALEUP_DROP_* */
  bool ack_now;    /* an ACK or NACK is due: piggyback it, or send an RH-only PDU */
} scaleup_gbn_receiver_actions;

/* Machines in their initial state (PSN 0 first). */
void scaleup_gbn_sender_init(scaleup_gbn_sender* s);
void scaleup_gbn_receiver_init(scaleup_gbn_receiver* r);
/* One event at `now` (transport::step); c NULL: the defaults. Returns 0, or
 * SCALEUP_ERRC_BAD_VALUE for an unknown input (the machine unchanged); a may be NULL. */
int scaleup_gbn_sender_step(scaleup_gbn_sender* s, int input, uint16_t apsn, uint64_t now,
                            const scaleup_gbn_config* c, scaleup_gbn_sender_actions* a);
/* partition_ok: the PDU's partition is allowed for its source (else dropped and counted). */
int scaleup_gbn_receiver_step(scaleup_gbn_receiver* r, int input, uint16_t npsn, bool partition_ok,
                              uint64_t now, const scaleup_gbn_config* c,
                              scaleup_gbn_receiver_actions* a);
/* What the next RH towards the peer carries (transport::pending_ack): SCALEUP_RH_OP_ACK or
 * _NACK with *apsn, or SCALEUP_RH_OP_NONE when there is nothing to say. Once it has gone out,
 * step the receiver with SCALEUP_GBN_RECEIVER_ACK_SENT. */
int scaleup_gbn_pending_ack(const scaleup_gbn_receiver* r, uint16_t* apsn);

/* ---- transport: the go-back-N endpoint (transport/endpoint.hpp) ------------------------- */

/* One connection's sender and receiver, its retransmit store and its PDU bytes (RH, payload,
 * R-CRC), driven by one step function; the caller owns the carrier and the clock. One peer, one
 * VC: a node keeps one endpoint per connection. */

/* transport::endpoint_config */
typedef struct scaleup_endpoint_config {
  uint16_t xpuid;     /* this end's XPU id, the source in every RH (10 bits) */
  uint8_t vc;         /* the connection's VC, in every RH */
  uint16_t partition; /* in every RH; a PDU from the peer in another one is dropped */
  scaleup_gbn_config gbn;
} scaleup_endpoint_config;

void scaleup_endpoint_config_init(scaleup_endpoint_config* c);

/* transport::endpoint_input */
enum {
  SCALEUP_ENDPOINT_SEND = 0,    /* bytes: a payload (packed commands) for the peer; copied */
  SCALEUP_ENDPOINT_ARRIVED = 1, /* bytes: a PDU from the peer, RH through R-CRC */
  SCALEUP_ENDPOINT_TICK = 2     /* nothing but time: fire the timers due */
};

typedef struct scaleup_endpoint_event {
  uint8_t input; /* SCALEUP_ENDPOINT_* */
  const uint8_t* bytes;
  size_t bytes_len;
} scaleup_endpoint_event;

/* A PDU to put on the wire (transport::outgoing_pdu): its bytes, or its parts for a caller that
 * frames it itself (scaleup_sue_frame_emit(params, &rh, payload, ...) writes the same PDU). */
typedef struct scaleup_outgoing_pdu {
  const uint8_t* bytes; /* RH, payload, R-CRC */
  size_t bytes_len;
  scaleup_rh rh;
  const uint8_t* payload; /* payload_len 0: a stand-alone ACK or NACK */
  size_t payload_len;
} scaleup_outgoing_pdu;

/* What one step did (transport::endpoint_actions). Every pointer is into the endpoint, which
 * copied what it shows: valid until its next step. */
typedef struct scaleup_endpoint_actions {
  const scaleup_outgoing_pdu* transmit; /* put these on the wire, in this order */
  size_t transmit_count;
  const uint8_t* delivered; /* arrived: the payload to hand up, in PSN order, exactly once */
  size_t delivered_len;
  bool accepted; /* send: the payload is PSN sent_psn, kept until acknowledged */
  uint16_t sent_psn;
  bool window_full;    /* send refused: offer the payload again once released > 0 */
  uint32_t released;   /* PDUs the peer acknowledged in this step */
  uint8_t dropped;     /* arrived: SCALEUP_DROP_*, why its payload was not delivered */
  bool unreachable;    /* the retry limit was hit (now or before) */
  scaleup_error error; /* the event was refused: a bad payload, a damaged or foreign PDU */
} scaleup_endpoint_actions;

/* The machines' counters (gbn_sender, gbn_receiver) and the PDUs the endpoint refused. */
typedef struct scaleup_endpoint_counters {
  uint64_t sent, resent, nacks, timeouts;
  uint64_t delivered, duplicates, dropped_gap, dropped_partition, acks_sent, nacks_sent;
  uint64_t rejected;
  uint32_t in_flight;
  bool unreachable;
} scaleup_endpoint_counters;

/* A transport::endpoint<window, payload bound> of a SCALEUP_SIZING_*, in the caller's memory. */
typedef struct scaleup_endpoint scaleup_endpoint;

/* Bytes the caller provides for an endpoint of `sizing`, any alignment (init aligns inside);
 * 0 for an unknown sizing. The fabric sizing's store is about 1 MB: static storage or the heap. */
size_t scaleup_endpoint_size(int sizing);
/* Builds an endpoint in storage[0, size); c may be NULL (defaults). NULL, with the reason in
 * err, when the sizing is unknown, size too small or the config refused (an xpuid or partition
 * wider than its field). Nothing to release: drop the storage. */
scaleup_endpoint* scaleup_endpoint_init(void* storage, size_t size, int sizing,
                                        const scaleup_endpoint_config* c, scaleup_error* err);
/* One event at `now` (ns, never decreasing; e NULL: a tick), then every timer due at `now`.
 * Returns the code of a->error; a may be NULL. */
int scaleup_endpoint_step(scaleup_endpoint* ep, uint64_t now, const scaleup_endpoint_event* e,
                          scaleup_endpoint_actions* a);
/* When to step next with nothing else to do: SCALEUP_NO_DEADLINE while no timer runs. */
uint64_t scaleup_endpoint_deadline(const scaleup_endpoint* ep);
/* Whether a payload sent now would be accepted (window open, peer not unreachable). */
bool scaleup_endpoint_can_send(const scaleup_endpoint* ep);
void scaleup_endpoint_stats(const scaleup_endpoint* ep, scaleup_endpoint_counters* out);

/* ---- transport: the SUE instance (transport/instance.hpp) -------------------------------- */

/* One XPU's SUE instance (R2 4.2, Fig. 18; SUE Lite R2 4.3): commands in, frames out, frames
 * in, commands delivered; packing, go-back-N per connection, the link layer per port (LLR, CBFC,
 * PFC), failover, management. The caller owns the wire and the clock: every call is one event
 * at `now` (ns, never decreasing); deadline says when to step again with nothing else to do,
 * port_ready which ports have something to send. What the instance has to say beside a step's
 * actions (commands completed or failed, drops, link messages for the link peer) goes to the
 * note sink, as it happens. */

/* The caller's memory for a fabric-sized instance (pack::allocator): allocate(context, bytes)
 * returns memory aligned for any fundamental type, or NULL; release(context, p, bytes) gives
 * back what allocate returned, with the size asked for then. */
typedef struct scaleup_allocator {
  void* context;
  void* (*allocate)(void* context, size_t bytes);
  void (*release)(void* context, void* p, size_t bytes);
} scaleup_allocator;

/* transport::keying: which connection a PDU belongs to. */
enum { SCALEUP_KEYING_PORT_PEER_VC = 0, SCALEUP_KEYING_PORT_PEER = 1 };

/* transport::instance_config, less what C cannot pass (only this instance's partition is
 * allowed, PFC priorities and management at their defaults).
 * The link: LLR on or off and, cbfc_credits > 0, CBFC granting that many credits to every VC's
 * class and to the acknowledgements' (transport::link_config_of). */
typedef struct scaleup_instance_config {
  uint16_t xpuid; /* this XPU (the RH's xpuid, 10 bits) */
  uint8_t ports;  /* 1, 2 or 4 (R2 Table 1); at most the sizing's */
  uint8_t vcs;    /* requests on VC0, responses on VC1 (R2 3.2.2); at most the sizing's */
  bool unordered; /* spread PDUs over ports (R2 4.4); needs more than one port */
  bool lite;      /* SUE Lite (R2 2.2, 3.4): no RH, no go-back-N; frame.encap LITE */
  scaleup_frame_params frame; /* encapsulation; XPU ids and traffic class are set per frame */
  size_t pack_limit;          /* payload bytes per PDU; 0: the most the sizing holds */
  uint16_t weights[4];        /* WRR across VCs (R2 4.2 step 3) */
  scaleup_gbn_config gbn;
  uint8_t keys;       /* SCALEUP_KEYING_* */
  uint16_t partition; /* in every RH this instance sends */
  bool llr;
  uint32_t cbfc_credits;            /* 0: no CBFC */
  uint32_t credits_per_destination; /* commands queued per {destination, VC}; 0: the pool's */
  uint32_t credits_aggregate;       /* commands queued in all; 0: the pool's */
  uint64_t unreachable_after;     /* ns a peer may be unreachable on every plane before it fails */
  const scaleup_profile* profile; /* commands in and delivered; NULL: the default profile */
} scaleup_instance_config;

/* The C++ defaults. */
void scaleup_instance_config_init(scaleup_instance_config* c);

/* transport::instance_input */
enum {
  SCALEUP_INPUT_COMMAND = 0,      /* a command for `peer` on `vc`: control then data (copied) */
  SCALEUP_INPUT_FRAME = 1,        /* `bytes` arrived on `port`, with `link` */
  SCALEUP_INPUT_TRANSMIT = 2,     /* `port` can take a frame now: it is written into `out` */
  SCALEUP_INPUT_LINK_MESSAGE = 3, /* the link peer of `port` sent `message` */
  SCALEUP_INPUT_LINK_STATUS = 4,  /* `port`'s link went `up` or down */
  SCALEUP_INPUT_PEER_STATUS = 5,  /* `peer`'s plane `port` went `up` or down (the fabric says) */
  SCALEUP_INPUT_MANAGEMENT = 6,   /* the XPU sends `bytes` (Ethernet, no FCS) on management */
  SCALEUP_INPUT_TICK = 7          /* time passed */
};

/* transport::link_info: what travels with a frame below the capture (LLR sequence, class, the
 * FCS verdict). */
typedef struct scaleup_link_info {
  bool llr;
  uint16_t seq;
  uint8_t cls;
  bool fcs_ok;
} scaleup_link_info;

/* transport::link_message: from one end of a link to the other. */
enum {
  SCALEUP_LINK_MESSAGE_LLR_ACK = 0,
  SCALEUP_LINK_MESSAGE_LLR_NACK = 1,
  SCALEUP_LINK_MESSAGE_CBFC_UPDATE = 2
};

typedef struct scaleup_link_message {
  uint8_t kind;       /* SCALEUP_LINK_MESSAGE_* */
  uint16_t seq;       /* LLR: last in order (ACK), expected (NACK) */
  uint8_t cbfc_class; /* CBFC update: the class... */
  uint8_t cbfc_rsvd;
  uint32_t cbfc_limit; /* ...and the credits its sender may have consumed since start, mod 2^24 */
} scaleup_link_message;

/* transport::instance_event; scaleup_instance_event_init gives a tick with the C++ defaults (up,
 * link.fcs_ok), the wrappers below fill it for the common events. */
typedef struct scaleup_instance_event {
  uint8_t input; /* SCALEUP_INPUT_* */
  uint8_t port;
  uint16_t peer;
  uint8_t vc;
  bool send_now;          /* command: close the PDU after it (R2 4.3 step 2) */
  bool up;                /* link_status, peer_status */
  const uint8_t* control; /* command */
  size_t control_len;
  const uint8_t* data; /* command */
  size_t data_len;
  const uint8_t* bytes; /* frame, management */
  size_t bytes_len;
  scaleup_link_info link; /* frame */
  uint8_t* out;           /* transmit: at least scaleup_instance_frame_room(sizing) bytes */
  size_t out_len;
  scaleup_link_message message; /* link_message */
} scaleup_instance_event;

void scaleup_instance_event_init(scaleup_instance_event* e);

/* transport::frame_kind */
enum {
  SCALEUP_FRAME_KIND_NONE = 0,
  SCALEUP_FRAME_KIND_PDU = 1,            /* a data PDU's first transmission on its connection */
  SCALEUP_FRAME_KIND_RETRANSMISSION = 2, /* a data PDU sent again (go-back-N) */
  SCALEUP_FRAME_KIND_ACK = 3,            /* a stand-alone RH-only PDU: ACK or NACK */
  SCALEUP_FRAME_KIND_CONTROL = 4,        /* a failover request or reply */
  SCALEUP_FRAME_KIND_MANAGEMENT = 5,
  SCALEUP_FRAME_KIND_LITE = 6,
  SCALEUP_FRAME_KIND_REPLAY = 7, /* a frame sent again by LLR */
  SCALEUP_FRAME_KIND_PFC = 8
};

/* What a transmit step wrote into the caller's buffer (transport::instance_frame). */
typedef struct scaleup_transmitted_frame {
  size_t size;  /* bytes written; 0: nothing to send on this port now */
  uint8_t kind; /* SCALEUP_FRAME_KIND_* */
  uint16_t peer;
  uint8_t vc;
  uint16_t psn; /* pdu, retransmission: its PSN */
  uint8_t op;   /* SCALEUP_RH_OP_*: the acknowledgement its RH carries */
  uint16_t apsn;
  uint64_t first_seq;     /* pdu, retransmission, lite: the commands it carries, numbered per */
  uint32_t commands;      /* {peer, VC} in offer order */
  bool moved;             /* pdu: moved to this connection by a failover */
  scaleup_link_info link; /* what travels with it below the capture */
} scaleup_transmitted_frame;

/* What an arriving frame delivered (transport::instance_delivery): a PDU's payload (commands,
 * for scaleup_unpacker_init) or a management packet; payload points into the event's bytes. */
typedef struct scaleup_instance_delivery {
  bool valid;
  bool management;
  uint16_t src;
  uint8_t vc;
  uint8_t port;
  const uint8_t* payload;
  size_t payload_len;
} scaleup_instance_delivery;

/* transport::instance_actions */
typedef struct scaleup_instance_actions {
  scaleup_error error; /* the event was refused: what and why */
  uint64_t seq;        /* command: its number in {peer, VC}, 0, 1, 2, ... in offer order */
  scaleup_transmitted_frame frame;     /* transmit */
  scaleup_instance_delivery delivered; /* frame */
} scaleup_instance_actions;

/* transport::instance_drop: why an arriving frame was not delivered. */
enum {
  SCALEUP_INSTANCE_DROP_NONE = 0,
  SCALEUP_INSTANCE_DROP_LINK_DOWN = 1,
  SCALEUP_INSTANCE_DROP_LINK = 2,         /* bad FCS, or LLR out of sequence or a duplicate */
  SCALEUP_INSTANCE_DROP_BAD_RCRC = 3,     /* no good R-CRC: corrupted, or no SUE PDU in it */
  SCALEUP_INSTANCE_DROP_MISADDRESSED = 4, /* not for this XPU, or from one that cannot be */
  SCALEUP_INSTANCE_DROP_VERSION = 5,      /* an RH of another version */
  SCALEUP_INSTANCE_DROP_PARTITION = 6,    /* a partition not allowed for its source (R2 4.1) */
  SCALEUP_INSTANCE_DROP_DUPLICATE = 7,    /* go-back-N: a PSN already delivered */
  SCALEUP_INSTANCE_DROP_GAP = 8,          /* go-back-N: a PSN after a missing one */
  SCALEUP_INSTANCE_DROP_NO_ROOM = 9,      /* a peer beyond the sizing's */
  SCALEUP_INSTANCE_DROP_MANAGEMENT = 10   /* a management packet whose FCS is bad */
};

/* transport::note_kind */
enum {
  SCALEUP_NOTE_COMPLETED = 0,        /* peer, vc, first_seq, count: acknowledged (R2 4.1) */
  SCALEUP_NOTE_FAILED = 1,           /* peer, vc, first_seq, count, error: never delivered */
  SCALEUP_NOTE_DROPPED = 2,          /* port, peer, vc, psn, why: an arriving frame dropped */
  SCALEUP_NOTE_UNREACHABLE = 3,      /* port, peer, vc: go-back-N's retry limit on a plane */
  SCALEUP_NOTE_PEER_UNREACHABLE = 4, /* peer: no plane reached it; its work failed */
  SCALEUP_NOTE_PEER_REACHABLE = 5,   /* peer: a plane reaches it again */
  SCALEUP_NOTE_FAILOVER = 6,         /* port, to_port, peer, vc, count: PDUs moved */
  SCALEUP_NOTE_LINK_MESSAGE = 7,     /* port, message: for the link peer of `port` */
  SCALEUP_NOTE_LINK_DOWN = 8,        /* port */
  SCALEUP_NOTE_LINK_UP = 9,          /* port */
  SCALEUP_NOTE_ACK_IN = 10,          /* port, peer, vc, psn: an ACK arrived (apsn in psn) */
  SCALEUP_NOTE_NACK_IN = 11          /* port, peer, vc, psn: a NACK arrived */
};

/* transport::instance_note; the error's strings are the library's constants. */
typedef struct scaleup_instance_note {
  uint8_t kind; /* SCALEUP_NOTE_* */
  uint8_t port;
  uint8_t to_port;
  uint8_t vc;
  uint16_t peer;
  uint16_t psn;
  uint64_t first_seq;
  uint32_t count;
  uint8_t why; /* SCALEUP_INSTANCE_DROP_* */
  scaleup_error error;
  scaleup_link_message message;
} scaleup_instance_note;

/* transport::instance_stats */
typedef struct scaleup_instance_counters {
  uint64_t commands, refused; /* commands accepted, refused */
  uint64_t pdus, retransmissions, acks_only, frames;
  uint64_t acks_sent, nacks_sent;
  uint64_t delivered, delivered_bytes; /* PDUs (Lite frames) delivered, payload bytes */
  uint64_t completed, failed;          /* commands */
  uint64_t dropped, duplicates, gaps, bad_rcrc, partition;
  uint64_t unreachable; /* retry limits hit (per connection and plane) */
  uint64_t peers_unreachable;
  uint64_t failovers, moved, control_sent;
  uint64_t management_sent, management_received, management_refused;
} scaleup_instance_counters;

/* Register map (R2 3.1, transport::reg): 32-bit words; a port's are at
 * SCALEUP_REG_PORT_BASE + port * SCALEUP_REG_PORT_STRIDE + the offset. */
#define SCALEUP_REG_ID 0x000u /* xpuid | ports << 16 | vcs << 20 | unordered << 24 | lite << 25 */
#define SCALEUP_REG_CONGESTION 0x004u
#define SCALEUP_REG_PEERS_UNREACHABLE 0x008u
#define SCALEUP_REG_PORT_BASE 0x100u
#define SCALEUP_REG_PORT_STRIDE 0x40u
#define SCALEUP_REG_LINK_STATUS                                    \
  0x00u /* bit 0 up (writable), 1 LLR gave up, 2 LLR on, 3 CBFC on \
         */
#define SCALEUP_REG_FRAMES_SENT 0x04u
#define SCALEUP_REG_FRAMES_RECEIVED 0x08u
#define SCALEUP_REG_LLR_REPLAYS 0x0Cu
#define SCALEUP_REG_CREDIT_STALLS 0x10u
#define SCALEUP_REG_PFC_PAUSED 0x14u
#define SCALEUP_REG_CREDITS 0x20u /* + 4 * VC */

/* A transport::sue_instance of a SCALEUP_SIZING_*, in the caller's memory. */
typedef struct scaleup_instance scaleup_instance;

/* Bytes the caller provides for an instance of `sizing`, any alignment; 0 if unknown. */
size_t scaleup_instance_size(int sizing);
/* The out buffer a transmit needs (a smaller one: the port is treated as busy); 0 if unknown. */
size_t scaleup_instance_frame_room(int sizing);
/* The configuration's error for `sizing` (sue_instance::check), as init would report it. */
int scaleup_instance_check(int sizing, const scaleup_instance_config* c, scaleup_error* err);
/* Builds an instance in storage[0, size); c may be NULL (defaults). The fabric sizing takes
 * memory only from `allocator` (no heap unless the caller passes one) and is refused without
 * it; the firmware sizing keeps everything in storage and ignores it. NULL, with the reason in
 * err, when the sizing is unknown, size too small, the allocator missing or the config refused. */
scaleup_instance* scaleup_instance_init(void* storage, size_t size, int sizing,
                                        const scaleup_instance_config* c,
                                        const scaleup_allocator* allocator, scaleup_error* err);
/* Gives back to the allocator everything the instance took; then drop the storage. NULL, or an
 * instance already finished, is left as it is. */
void scaleup_instance_fini(scaleup_instance* inst);

/* Where notes go as they happen (NULL fn: nowhere); n is valid during the call only. */
void scaleup_instance_set_note_sink(scaleup_instance* inst,
                                    void (*fn)(void* context, const scaleup_instance_note* n),
                                    void* context);

/* One event at `now`, then the timers due at `now`. Returns the code of a->error; a may be
 * NULL. An event on a port the instance does not have (config ports) is not taken:
 * SCALEUP_ERRC_BAD_VALUE, field "sue.port". */
int scaleup_instance_step(scaleup_instance* inst, uint64_t now, const scaleup_instance_event* e,
                          scaleup_instance_actions* a);
/* The common events, as scaleup_instance_step would take them. A frame arrives here with no
 * link info (no LLR sequence, class 0, FCS good): with LLR on, step the event with the
 * sender's frame.link instead. */
int scaleup_instance_command(scaleup_instance* inst, uint64_t now, uint16_t peer, uint8_t vc,
                             const uint8_t* control, size_t control_len, const uint8_t* data,
                             size_t data_len, bool send_now, scaleup_instance_actions* a);
int scaleup_instance_frame(scaleup_instance* inst, uint64_t now, uint8_t port, const uint8_t* bytes,
                           size_t len, scaleup_instance_actions* a);
int scaleup_instance_transmit(scaleup_instance* inst, uint64_t now, uint8_t port, uint8_t* out,
                              size_t out_len, scaleup_instance_actions* a);
int scaleup_instance_tick(scaleup_instance* inst, uint64_t now, scaleup_instance_actions* a);

/* When to step next with nothing else to do: SCALEUP_NO_DEADLINE while no timer runs. */
uint64_t scaleup_instance_deadline(const scaleup_instance* inst);
/* Whether `port` has something to send now: offer it a transmit. Bit p of ready_ports: port p. */
bool scaleup_instance_port_ready(const scaleup_instance* inst, uint8_t port);
uint8_t scaleup_instance_ready_ports(const scaleup_instance* inst);
/* Commands `peer` may still be given on `vc` (R2 3.2.1). */
uint32_t scaleup_instance_credits(const scaleup_instance* inst, uint16_t peer, uint8_t vc);
void scaleup_instance_stats(const scaleup_instance* inst, scaleup_instance_counters* out);
/* Registers (R2 3.1): false for an address that is not one (read) or not writable (write). */
bool scaleup_instance_read_register(const scaleup_instance* inst, uint32_t address,
                                    uint32_t* value);
bool scaleup_instance_write_register(scaleup_instance* inst, uint64_t now, uint32_t address,
                                     uint32_t value);

#ifdef __cplusplus
}
#endif

#endif /* SCALEUP_SCALEUP_H */
