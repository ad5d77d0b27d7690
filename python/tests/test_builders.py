"""frame(), pdu(), pack(), write_pcap(): every encapsulation built, read back by read() with
the fields that were set; bytes held against ones packed independently (by hand from the
seed's layouts, and by scapy); the library's refusals as ValueError with its text."""
import struct

import pytest
import scaleup
from cli_test import SRC_KEYS, rcrc, rh_bytes
from scapy.all import IP, UDP, Ether, IPv6, Raw, wrpcap

ENCAPS = ("udp4", "udp6", "afh1", "afh1-vlan", "afh1-shim", "afh1-vlan-shim", "afh2", "afh2c",
          "lite")

# Where dump --json shows the traffic class of each encapsulation (none for plain AFH Gen 1).
TC_KEYS = {"udp4": "ip.dsfield.dscp", "udp6": "ipv6.tclass", "afh1": None,
           "afh1-vlan": "vlan.priority", "afh1-shim": "afh1.shim.tc",
           "afh1-vlan-shim": "afh1.shim.tc", "afh2": "afh2.tc", "afh2c": "afh2c.tc",
           "lite": "afh2c.tc"}

# The other network header fields build() sets where each encapsulation has room for them
# (frame() refuses them elsewhere), and where dump --json shows them.
PARAMS = {"udp4": dict(hop_limit=33), "udp6": dict(hop_limit=33, entropy=0x2A),
          "afh1": {}, "afh1-vlan": dict(vlan_id=7),
          "afh1-shim": dict(hop_limit=33, entropy=0x2A),
          "afh1-vlan-shim": dict(vlan_id=7, hop_limit=33, entropy=0x2A),
          "afh2": dict(hop_limit=33, entropy=0x2A), "afh2c": {}, "lite": {}}
EXTRA = {"udp4": {"ip.ttl": 33}, "udp6": {"ipv6.hlim": 33, "ipv6.flow": 0x2A},
         "afh1-vlan": {"vlan.id": 7},
         "afh1-shim": {"afh1.shim.hop_limit": 33, "afh1.shim.entropy": 0x2A},
         "afh1-vlan-shim": {"vlan.id": 7, "afh1.shim.hop_limit": 33, "afh1.shim.entropy": 0x2A},
         "afh2": {"afh2.hop_count": 33, "afh2.entropy": 0x2A}}

RH = {"op": "ACK", "xpuid": 21, "npsn": 0xBEEF, "vc": 2, "partition": 515, "apsn": 0x1234}
RH_NUMBERS = dict(RH, op=0, ver=0)
COMMANDS = [
    {"type": "WR_FULL_P", "tag": 1, "addr": 0x1122334455667788, "data": b"\xaa" * 8},
    {"type": "RD", "tag": 2, "addr": 0x2000, "rlen": 63},
    {"type": "WR_PART", "tag": 3, "addr": 0x3000, "be_first": 0x0F, "be_last": 0xF0,
     "data": bytes(range(16))},
    {"type": "WR_RSP", "tag": 4, "status": "SLVERR"},
    {"type": "MSG", "tag": 5, "queue": 9, "data": b"hello"},
    {"type": "ATOMIC", "tag": 6, "op": "CAS", "addr": 0x4000, "data": bytes(16)},
]
# What dump --json shows of them (status and op as numbers; lengths from the engine).
COMMANDS_SEEN = [
    {"sue.cmd.name": "WR_FULL_P", "sue.cmd.tag": 1, "sue.cmd.addr": 0x1122334455667788,
     "sue.cmd.dlen": 7, "sue.cmd.data_len": 8},
    {"sue.cmd.name": "RD", "sue.cmd.tag": 2, "sue.cmd.addr": 0x2000, "sue.cmd.rlen": 63,
     "sue.cmd.data_len": 0},
    {"sue.cmd.name": "WR_PART", "sue.cmd.tag": 3, "sue.cmd.addr": 0x3000,
     "sue.cmd.be_first": 0x0F, "sue.cmd.be_last": 0xF0, "sue.cmd.data_len": 16},
    {"sue.cmd.name": "WR_RSP", "sue.cmd.tag": 4, "sue.cmd.status": 2},
    {"sue.cmd.name": "MSG", "sue.cmd.tag": 5, "sue.cmd.queue": 9, "sue.cmd.data_len": 5},
    {"sue.cmd.name": "ATOMIC", "sue.cmd.tag": 6, "sue.cmd.op": 2, "sue.cmd.addr": 0x4000,
     "sue.cmd.data_len": 16},
]
SRC, DST, TC = 300, 700, 5


def build(encap):
    """A frame of `encap` with every field set away from its default."""
    params = dict(src_xpu=SRC, dst_xpu=DST, tc=0 if encap == "afh1" else TC, **PARAMS[encap])
    if encap == "lite":  # no RH; commands up to 1024 bytes
        return scaleup.frame(encap, commands=COMMANDS[:3], **params)
    return scaleup.frame(encap, rh=RH, commands=COMMANDS, **params)


def check_read_back(frames, encaps):
    assert len(frames) == len(encaps)
    for f, encap in zip(frames, encaps):
        where = f"frame {f['frame']} ({encap})"
        assert f["encap"] == encap, where
        assert f["errors"] == [], where
        keys = SRC_KEYS[encap]
        if keys:
            assert (f[keys[0]], f[keys[1]]) == (SRC, DST), where
        elif encap == "udp4":
            assert (f["ip.src"], f["ip.dst"]) == ("10.0.1.44", "10.0.2.188"), where
        else:
            assert (f["ipv6.src"], f["ipv6.dst"]) == ("fd53:5545::12c", "fd53:5545::2bc"), where
        for k, v in EXTRA.get(encap, {}).items():
            assert f[k] == v, f"{where}: {k}"
        tc = TC_KEYS[encap]
        if tc:
            assert f[tc] == (TC << 2 if encap == "udp6" else TC), f"{where}: {tc}"
        if encap == "lite":
            assert "sue.rh.npsn" not in f, where
            want = COMMANDS_SEEN[:3]
        else:
            for k, v in RH_NUMBERS.items():
                assert f[f"sue.rh.{k}"] == v, f"{where}: sue.rh.{k}"
            assert f["sue.rcrc.status"] == "good", where
            want = COMMANDS_SEEN
        got = f["sue.cmds"]
        assert len(got) == len(want), where
        for g, w in zip(got, want):
            for k, v in w.items():
                assert g[k] == v, f"{where}: {w['sue.cmd.name']} {k} = {g[k]}"


def test_encaps_are_the_library_s():
    assert scaleup.ENCAPS == ENCAPS


def test_every_encap_round_trips(tmp_path):
    frames = [build(e) for e in ENCAPS]
    mine = str(tmp_path / "built.pcap")
    assert scaleup.write_pcap(mine, frames) == len(frames)
    check_read_back(list(scaleup.read(mine)), ENCAPS)
    # The same bytes in a capture scapy writes, an independent pcap writer.
    theirs = str(tmp_path / "scapy.pcap")
    wrpcap(theirs, [Ether(b) for b in frames])
    check_read_back(list(scaleup.read(theirs)), ENCAPS)


def test_bare_afh2_link(tmp_path):
    """Frames of the AFH Gen 2 family on the link type of bare AFH Gen 2 frames (147)."""
    encaps = ("afh2", "afh2c", "lite")
    p = str(tmp_path / "afh2.pcap")
    scaleup.write_pcap(p, [build(e) for e in encaps], link=147)
    check_read_back(list(scaleup.read(p)), encaps)


def test_write_pcap_times(tmp_path):
    for name in ("t.pcap", "t.pcapng"):  # pcapng by its name, its frames on interface 0
        p = str(tmp_path / name)
        f = scaleup.frame("afh2", rh={"npsn": 1})
        scaleup.write_pcap(p, [(1_700_000_000_123_456_789, f), f], start_ns=5_000_000_000,
                           interval_ns=7)
        with open(p, "rb") as fh:
            assert (fh.read(4) == b"\x0a\x0d\x0d\x0a") == name.endswith("ng")
        frames = list(scaleup.read(p))
        assert [x["frame.time_epoch"] for x in frames] == ["1700000000.123456789", "5.000000007"]
        assert [x.get("frame.interface_id") for x in frames] == (
            [0, 0] if name.endswith("ng") else [None, None])


def test_pack_golden():
    """Controls as docs/wire-format.md draws the default profile, packed here by hand."""
    got = scaleup.pack([
        {"type": "WR_FULL_P", "tag": 0x1234, "addr": 0x1122334455667788, "data": b"\xaa\xbb"},
        {"type": 0x0A, "tag": 7, "addr": 0x10, "rlen": 255},
        {"type": "WR_RSP", "tag": 9, "status": "DECERR"},
        {"type": "BARRIER", "tag": 0xFFFF},
    ])
    assert got == (bytes([0x02, 0x01, 0x12, 0x34]) + (0x1122334455667788).to_bytes(8, "big") +
                   b"\xaa\xbb" +
                   bytes([0x0A, 0xFF, 0x00, 0x07]) + (0x10).to_bytes(8, "big") +
                   bytes([0x0E, 0x00, 0x00, 0x09, 0x03, 0x00]) +
                   bytes([0x12, 0x00, 0xFF, 0xFF]))


def test_pdu_against_the_seed():
    """RH of R2 Table 5 and the R-CRC (CRC-32 of RH and payload), packed independently."""
    payload = scaleup.pack(COMMANDS)
    rh = rh_bytes(**RH_NUMBERS)
    assert scaleup.pdu(rh=RH, commands=COMMANDS) == rh + payload + rcrc(rh + payload)
    assert scaleup.pdu(rh=RH, payload=payload) == rh + payload + rcrc(rh + payload)
    assert scaleup.pdu() == rh_bytes(op=2) + rcrc(rh_bytes(op=2))
    # Full filter names are dump's, the builders' keywords drop the layer's prefix.
    assert scaleup.frame("afh2", rh={"npsn": 3})[14:22] == rh_bytes(op=2, npsn=3)


def test_udp_frames_against_scapy():
    """udp4 and udp6 frames byte for byte against scapy's, which computes the IP and UDP
    headers and checksums itself."""
    pdu = scaleup.pdu(rh=dict(RH, xpuid=SRC), commands=COMMANDS)
    common = dict(src_xpu=SRC, dst_xpu=DST, tc=TC, udp_src_port=1000, udp_dst_port=2000,
                  hop_limit=33, rh=dict(RH, xpuid=SRC), commands=COMMANDS)
    eth = dict(src="02:00:00:00:01:2c", dst="02:00:00:00:02:bc")
    v4 = (Ether(type=0x0800, **eth) /
          IP(src="10.0.1.44", dst="10.0.2.188", tos=TC << 2, id=0, flags="DF", ttl=33) /
          UDP(sport=1000, dport=2000) / Raw(pdu))
    assert scaleup.frame("udp4", **common) == bytes(v4)
    common["entropy"] = 0x12345  # the flow label; IPv4 has no place for it
    v6 = (Ether(type=0x86DD, **eth) /
          IPv6(src="fd53:5545::12c", dst="fd53:5545::2bc", tc=TC << 2, fl=0x12345, hlim=33) /
          UDP(sport=1000, dport=2000) / Raw(pdu))
    assert scaleup.frame("udp6", **common) == bytes(v6)
    # Without a UDP checksum (IPv4 allows 0), and padded to the Ethernet minimum.
    small = scaleup.frame("udp4", udp4_checksum=False, rh={"npsn": 1})
    assert len(small) == 60 and small[40:42] == b"\0\0"
    assert len(scaleup.frame("udp4", pad=False, rh={"npsn": 1})) == 14 + 20 + 8 + 12
    # A default given is no error, nor is pad with nothing to pad.
    assert scaleup.frame("udp4", vlan_id=1, pad=False, commands=COMMANDS) == \
        scaleup.frame("udp4", commands=COMMANDS)


def test_pdu_carried_as_is():
    bad = b"\x40" + bytes(11)  # an RH of version 1 and a wrong R-CRC, for a receiver's test
    assert scaleup.pdu(rh={"ver": 1, "op": 0})[:8] == bad[:8]
    assert scaleup.frame("afh1-shim", pdu=bad, pad=False)[30:] == bad
    lite = scaleup.frame("lite", payload=b"\x02\x00\x00\x01")
    assert lite[6:10] == b"\x02\x00\x00\x01" and len(lite) == 60


def test_numpy_values_and_profile_file(captures):
    np = pytest.importorskip("numpy")
    from conftest import SOURCE
    cols = scaleup.columns(captures[1], ["sue.rh.npsn"], occurrence=1)
    npsn = cols["sue.rh.npsn"].compressed()[0]
    assert isinstance(npsn, np.uint64)
    assert scaleup.frame("afh2", rh={"npsn": npsn})[18:20] == struct.pack(">H", int(npsn))
    profile = f"{SOURCE}/profiles/default.json"
    assert scaleup.pack(COMMANDS, profile=profile) == scaleup.pack(COMMANDS)


@pytest.mark.parametrize("call, text", [
    (lambda: scaleup.frame("afh1", tc=1),
     "error: frame at byte 0: unsupported: AFH Gen 1 without tag or shim has no traffic class "
     "field"),
    (lambda: scaleup.frame("afh1", src_xpu=70000),
     "error: frame at byte 0: value_too_big: AFH Gen 1 XPU ids are 16 bits"),
    (lambda: scaleup.frame("udp4", dst_xpu=1 << 24),
     "error: frame at byte 0: value_too_big: XPU id does not fit an IPv4 address"),
    (lambda: scaleup.frame("udp6", multicast=True),
     "error: frame at byte 0: unsupported: only AFH Gen 2 carries a multicast bit"),
    (lambda: scaleup.frame("udp6", tc=64),
     "error: frame at byte 0: value_too_big: traffic class over 63"),
    (lambda: scaleup.frame("udp4", vlan_id=7),
     "error: frame at byte 0: unsupported: this encapsulation has no field for it "
     "[vlan_id = 7]"),
    (lambda: scaleup.frame("udp4", entropy=5),
     "error: frame at byte 0: unsupported: this encapsulation has no field for it "
     "[entropy = 5]"),
    (lambda: scaleup.frame("udp6", udp4_checksum=False),
     "error: frame at byte 0: unsupported: this encapsulation has no field for it "
     "[udp4_checksum = 0]"),
    (lambda: scaleup.frame("afh1", hop_limit=9),
     "error: frame at byte 0: unsupported: this encapsulation has no field for it "
     "[hop_limit = 9]"),
    (lambda: scaleup.frame("afh1-vlan", shim_next_header=1),
     "error: frame at byte 0: unsupported: this encapsulation has no field for it "
     "[shim_next_header = 1]"),
    (lambda: scaleup.frame("afh2", udp_dst_port=1, afh1_prefix=2),
     "error: frame at byte 0: unsupported: this encapsulation has no field for it "
     "[udp_dst_port = 1]"),
    (lambda: scaleup.frame("lite", sue_ethertype=0x1234, payload=b"\x02\0\0\0"),
     "error: frame at byte 0: unsupported: this encapsulation has no field for it "
     "[sue_ethertype = 4660]"),
    (lambda: scaleup.frame("afh2", tc=256),
     "error: frame at byte 0: value_too_big: value does not fit the field [tc = 256]"),
    (lambda: scaleup.frame("lite", payload=b"\x01"),
     "error: frame at byte 0: bad_value: SUE Lite payload's first byte has bit 0 set: the "
     "source MAC a switch reads would be a group address"),
    (lambda: scaleup.frame("afh1", afh1_prefix=0x02000000),
     "error: frame at byte 0: bad_value: AFH Gen 1 prefix: its first octet has the AFH Gen 2 "
     "signature, and the frame would read as AFH Gen 2"),
    (lambda: scaleup.frame("lite", payload=bytes(1025)),
     "error: frame at byte 0: value_too_big: SUE Lite payload over 1024 bytes"),
    (lambda: scaleup.frame("afh2", payload=bytes(4097)),
     "error: sue at byte 0: value_too_big: SUE payload over 4096 bytes (needed 4096, "
     "available 4097)"),
    (lambda: scaleup.frame("afh2", src_xpu=1024),
     "error: sue.rh at byte 0: value_too_big: value does not fit the field "
     "[sue.rh.xpuid = 1024]"),
    (lambda: scaleup.pdu(rh={"npsn": 1 << 16}),
     "error: sue.rh at byte 0: value_too_big: value does not fit the field "
     "[sue.rh.npsn = 65536]"),
    (lambda: scaleup.pdu(rh={"op": "MAYBE"}), "sue.rh.op: 'MAYBE' is not one of its value names"),
    (lambda: scaleup.pdu(rh={"psn": 1}),
     "sue.rh: no field is named 'psn' (fields: ver, op, rsv, xpuid, npsn, vc, rsvd, partition, "
     "apsn)"),
    (lambda: scaleup.pdu(rh={"npsn": -1}), "sue.rh.npsn: -1 is not a 64-bit unsigned value"),
    (lambda: scaleup.pack([COMMANDS[0], {"type": 3}]),
     "error: sue.cmd #2 at byte 20: bad_value: command type not in the profile "
     "[sue.cmd.type = 3]"),
    (lambda: scaleup.pack([{"type": "RD", "data": b"x"}]),
     "error: sue.cmd #1 at byte 0: bad_length: this type carries no data "
     "(needed 0, available 1) [sue.cmd.data_len = 1]"),
    (lambda: scaleup.pack([{"type": "WR_FULL"}]),
     "error: sue.cmd #1 at byte 0: bad_length: data must be 1 to 256 bytes "
     "[sue.cmd.data_len = 0]"),
    (lambda: scaleup.pack([{"type": "WR_FULL", "data": b"ab", "dlen": 2}]),
     "error: sue.cmd #1 at byte 0: bad_length: the data's length decides this field "
     "[sue.cmd.dlen = 2]"),
    (lambda: scaleup.pack([{"type": "MSG", "data": b"ab", "addr": 1}]),
     "sue.cmd #1 (MSG): no field is named 'addr' (fields: dlen, tag, queue, data)"),
    (lambda: scaleup.pack([{"tag": 1}]), 'sue.cmd #1: no "type"'),
    (lambda: scaleup.pack([{"type": "WR_RSP", "tag": 1 << 16}]),
     "error: sue.cmd #1 at byte 0: value_too_big: value does not fit the field "
     "[sue.cmd.tag = 65536]"),
    (lambda: scaleup.pack([], profile="nope"), "profile: 'nope' is not "),
    (lambda: scaleup.frame("ethernet"), "encap: 'ethernet' is not one of udp4, udp6, afh1, "),
    (lambda: scaleup.frame("lite", rh={}), "lite: a SUE Lite frame has no RH"),
    (lambda: scaleup.frame("afh2", payload=b"", commands=[]), "give payload= or commands="),
    (lambda: scaleup.frame("afh2", pdu=b"", rh={}), "pdu= is the carried bytes as they are"),
])
def test_errors(call, text):
    with pytest.raises(ValueError) as e:
        call()
    assert str(e.value).startswith(text)


def test_type_errors(tmp_path):
    with pytest.raises(TypeError, match="unexpected keyword argument 'vlan'"):
        scaleup.frame("afh1-vlan", vlan=3)
    with pytest.raises(TypeError, match="sue.rh.npsn: an int is wanted, not float"):
        scaleup.pdu(rh={"npsn": 5.0})
    with pytest.raises(TypeError, match="a dict is wanted"):
        scaleup.pack([("type", "RD")])
    with pytest.raises(OSError, match="No such file or directory"):
        scaleup.write_pcap(str(tmp_path / "no" / "x.pcap"), [])


def test_any_buffer_as_bytes_gives_it(tmp_path):
    """A buffer is taken as bytes(b) gives it: a strided view's elements, not the memory that
    follows its first (which a reversed view does not even own)."""
    base = bytes(range(64))
    views = (memoryview(base)[::2], memoryview(base)[::-1], memoryview(base)[5:20],
             memoryview(bytearray(base)).cast("H")[::3])
    cmd = {"type": "MSG", "tag": 5, "queue": 9}
    for v in views:
        want = bytes(v)
        assert scaleup.pdu(payload=v) == scaleup.pdu(payload=want)
        assert scaleup.pack([{**cmd, "data": v}]) == scaleup.pack([{**cmd, "data": want}])
    frame = scaleup.frame("udp4", payload=base)
    doubled = bytearray(2 * len(frame))
    doubled[::2] = frame
    a, b = str(tmp_path / "a.pcap"), str(tmp_path / "b.pcap")
    scaleup.write_pcap(a, [memoryview(doubled)[::2]])
    scaleup.write_pcap(b, [frame])
    assert open(a, "rb").read() == open(b, "rb").read()
    np = pytest.importorskip("numpy")
    x = np.arange(200, dtype=np.uint8)
    assert scaleup.pdu(payload=x[::3]) == scaleup.pdu(payload=x[::3].tobytes())


def test_paths_and_clear_type_errors(tmp_path):
    """A path may be a pathlib.Path (os.PathLike) wherever a str is; a key that is no field name
    and a time that is no nanosecond count are said as such."""
    p = tmp_path / "f.pcap"
    frame = scaleup.frame("udp4", rh={"npsn": 7})
    assert scaleup.write_pcap(p, [frame]) == 1
    assert [f["sue.rh.npsn"] for f in scaleup.read(p)] == [7]
    assert list(scaleup.columns(p, ["sue.rh.npsn"])["sue.rh.npsn"]) == [7]
    with pytest.raises(TypeError, match=r"^sue.rh: a key is a field's name \(str\), not int$"):
        scaleup.pdu(rh={1: 1})
    with pytest.raises(TypeError, match=r"^sue.cmd #1: a key is a field's name"):
        scaleup.pack([{"type": "RD", 3: 1}])
    with pytest.raises(ValueError, match=r"^a frame's time is 0 to 2\*\*64 - 1 nanoseconds: -1$"):
        scaleup.write_pcap(p, [(-1, frame)])
    with pytest.raises(TypeError, match=r"^a frame's time is an int of nanoseconds, not float$"):
        scaleup.write_pcap(p, [(1.5, frame)])
