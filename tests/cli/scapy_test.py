#!/usr/bin/env python3
"""The scapy module python/scaleup_scapy.py, generated from the field tables, against
`scaleup dump`.

usage: scapy_test.py SCALEUP_BINARY SCALEUP_DOCGEN MODULE_DIR CASE

  check_detects_drift  --check-scapy fails on a changed line of a copy, --update-scapy repairs it;
                       the template (python/scaleup_scapy.py.in) is the module's Python, and a
                       template that names a place the generator lacks, or lacks one, is refused
  built_frames         frames built with the module (every format and encapsulation, fields set
                       to values other than the defaults) dissect in dump to the values built
  gen_captures         every `scaleup gen` capture reads in scapy to dump's values, frame by frame
  recognition          ports, heuristic, SLAP signature, tags and link types: scapy takes a frame
                       for what dump takes it for
  dump_parity          frames with packed commands (the default profile's, a user's profile
                       file's) in every SUE encapsulation, built with the module: dump_fields is
                       dump --json's object key by key, less NOT_IN_DUMP_FIELDS
  readme_example       README.md's example of commands and dump_fields prints what it says

dump_fields is held to dump --json key by key (parity) in every case on SUE frames; the
comparisons below (compare) read the values through scapy's own fields instead, independently of
the tables dump_fields reads bytes with.

Values are compared after these normalisations (scapy -> dump --json):
  - fields of the generated classes: the integer on both sides (dump writes every integer kind,
    hex included, as a number); reserved fields are not JSON keys and are skipped;
  - MAC addresses: lower-case text; AFH1's da_prefix and dst_xpu (sa_prefix, src_xpu) as the
    MAC text of eth.dst (eth.src); IPv4 addresses: dotted text; IPv6 addresses: both sides
    through ipaddress (compressed form);
  - IPv4 tos -> ip.dsfield.dscp (tos >> 2) and ip.dsfield.ecn (tos & 3); flags -> ip.flags.df,
    ip.flags.mf; Dot1Q prio, id, vlan, type -> vlan.priority, vlan.dei, vlan.id, vlan.etype
    (Dot1AD -> ieee8021ad.priority, .dei, .id and ieee8021ah.etype, as tshark names them);
  - a name two layers carry (two VLAN tags) is a list in layer order on both sides;
  - fields dump computes (the module's COMPUTED: sue.rcrc.status, sue.payload.len, ...) are
    skipped, except the trailers' CRC status, which scaleup_check() must give as dump does.
Golden bytes of the headers are packed here by hand, in the field order of the seeds.
"""
import contextlib
import io
import ipaddress
import json
import logging
import os
import random
import struct
import subprocess
import sys
import zlib

import cli_test  # the scaleup command's runner and the RH packed by hand
from cli_test import check, fail, jsonl, rh_bytes, run

DOCGEN = MODULE_DIR = None


def tmp(name):
    """A path in the case's temporary directory."""
    return os.path.join(cli_test.TMP, name)


def dump(cap, *opts):
    """dump --json of a capture, without the frames dump puts together from Tofu slices."""
    out = jsonl(run("dump", "--json", *opts, cap).stdout)
    return [f for f in out if f["encap"] != "tofu.frame"]


def pack(*fields):
    """(value, width) pairs, first on the wire first, packed big-endian; independent of the
    module."""
    word, bits = 0, 0
    for value, width in fields:
        check(0 <= value < (1 << width), f"{value} does not fit {width} bits")
        word, bits = (word << width) | value, bits + width
    check(bits % 8 == 0, "whole bytes")
    return word.to_bytes(bits // 8, "big")


def crc(data):
    return zlib.crc32(data) & 0xFFFFFFFF


def load_module():
    sys.path.insert(0, "/usr/lib/python3/dist-packages")  # Debian's python3-scapy
    sys.path.insert(0, MODULE_DIR)
    try:
        import scapy  # noqa: F401
    except ImportError:
        fail("scapy is not installed (Debian: python3-scapy)")
    logging.getLogger("scapy.runtime").setLevel(logging.ERROR)
    import scaleup_scapy
    return scaleup_scapy


# ---- what a packet holds, as dump --json names it ------------------------------------------

def mac(value):
    return ":".join(f"{b:02x}" for b in value.to_bytes(6, "big"))


def standard_fields(m, layer):
    """Fields of scapy's own layers under dump's names (the normalisations of the docstring);
    AFH1 gives dump's eth.dst and eth.src too, the MACs its prefixes and XPU ids make."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1AD, Dot1Q, Ether
    if isinstance(layer, m.AFH1):
        return {"eth.dst": mac(layer.da_prefix << 16 | layer.dst_xpu),
                "eth.src": mac(layer.sa_prefix << 16 | layer.src_xpu)}
    if isinstance(layer, Ether):
        return {"eth.dst": layer.dst.lower(), "eth.src": layer.src.lower(), "eth.type": layer.type}
    if isinstance(layer, Dot1AD):  # tshark's names for an 802.1ad tag
        return {"ieee8021ad.priority": layer.prio, "ieee8021ad.dei": layer.id,
                "ieee8021ad.id": layer.vlan, "ieee8021ah.etype": layer.type}
    if isinstance(layer, Dot1Q):
        return {"vlan.priority": layer.prio, "vlan.dei": layer.id, "vlan.id": layer.vlan,
                "vlan.etype": layer.type}
    if isinstance(layer, IP):
        return {"ip.version": layer.version, "ip.hdr_len": layer.ihl, "ip.dsfield.dscp":
                layer.tos >> 2, "ip.dsfield.ecn": layer.tos & 3, "ip.len": layer.len,
                "ip.id": layer.id, "ip.flags.df": (int(layer.flags) >> 1) & 1,
                "ip.flags.mf": int(layer.flags) & 1, "ip.frag_offset": layer.frag,
                "ip.ttl": layer.ttl, "ip.proto": layer.proto, "ip.checksum": layer.chksum,
                "ip.src": layer.src, "ip.dst": layer.dst}
    if isinstance(layer, IPv6):
        return {"ipv6.version": layer.version, "ipv6.tclass": layer.tc, "ipv6.flow": layer.fl,
                "ipv6.plen": layer.plen, "ipv6.nxt": layer.nh, "ipv6.hlim": layer.hlim,
                "ipv6.src": ipaddress.ip_address(layer.src).compressed,
                "ipv6.dst": ipaddress.ip_address(layer.dst).compressed}
    if isinstance(layer, UDP):
        return {"udp.srcport": layer.sport, "udp.dstport": layer.dport, "udp.length": layer.len,
                "udp.checksum": layer.chksum}
    return {}


STANDARD_KEYS = ("eth.", "vlan.", "ieee8021ad.", "ieee8021ah.", "ip.", "ipv6.", "udp.")


def layers_of(pkt):
    from scapy.packet import NoPayload
    layer = pkt
    while not isinstance(layer, NoPayload):
        yield layer
        layer = layer.payload


def built_fields(m, pkt, other=None):
    """The fields of pkt's generated layers under their filter names, as they are in pkt (None
    where built to be computed), reserved ones left out; other(layer) names more. A name two
    layers hold: a list."""
    out = {}
    for layer in layers_of(pkt):
        named = {key: layer.getfieldval(name)
                 for name, key in getattr(layer, "scaleup_fields", {}).items()
                 if name not in layer.scaleup_reserved and not isinstance(layer, m.SUECommand)}
        named.update(other(layer) if other else {})
        for key, value in named.items():
            if key not in out:
                out[key] = value
            elif isinstance(out[key], list):
                out[key].append(value)
            else:
                out[key] = [out[key], value]
    return out


def scapy_values(m, pkt):
    """{dump name: value} of pkt read through scapy's fields: its generated layers' fields,
    scapy's own layers through standard_fields; independent of dump_fields, which reads the
    bytes with the tables."""
    return built_fields(m, pkt, lambda layer: standard_fields(m, layer))


def normal(key, value):
    if key.startswith("ipv6.") and isinstance(value, str):
        return ipaddress.ip_address(value).compressed
    return value


def compare(m, where, want, got):
    """Every key of `got` (dump's JSON) that is a table field of a generated layer or a field of
    scapy's own layers is in `want` with the same value, and every key of `want` is in `got`.
    Returns how many values were compared."""
    n = 0
    for k, v in got.items():
        if k in ("frame", "encap", "errors") or k.startswith("frame.") or k in m.COMPUTED or \
                isinstance(v, dict):
            continue
        if k == "sue.cmds" or not (k in m.FILTERS or k.startswith(STANDARD_KEYS)):
            continue
        check(k in want, f"{where}: dump has {k} = {v!r}, scapy has no such field")
        check(normal(k, want[k]) == normal(k, v), f"{where}: {k}: scapy {want[k]!r}, dump {v!r}")
        n += 1
    for k in want:
        check(k in got, f"{where}: scapy has {k} = {want[k]!r}, dump has no such key")
    return n


def closed_layers(m, pkt):
    return [layer for layer in layers_of(pkt) if getattr(layer, "scaleup_trailer", None)]


# The headers dump's encapsulation names, in order; a PDU follows when dump read an RH.
def expected_classes(m, encap):
    from scapy.layers.inet import IP, UDP
    from scapy.layers.inet6 import IPv6
    from scapy.layers.l2 import Dot1Q, Ether
    table = {
        "udp4": [Ether, IP, UDP], "udp6": [Ether, IPv6, UDP], "ipv4/udp": [Ether, IP, UDP],
        "ipv6/udp": [Ether, IPv6, UDP], "ipv4": [Ether, IP], "ipv6": [Ether, IPv6],
        "eth": [Ether], "afh1": [m.AFH1], "afh1-vlan": [m.AFH1, Dot1Q],
        "afh1-shim": [m.AFH1, m.AFH1Shim], "afh1-vlan-shim": [m.AFH1, Dot1Q, m.AFH1Shim],
        "afh2": [m.AFH2, m.AFH2Type], "afh2c": [m.AFH2C, m.AFH2Type], "lite": [m.AFH2C],
        "tofu": [m.TofuSlice, m.TofuRH],
    }
    return table.get(encap)


def check_classes(m, where, pkt, d):
    """scapy reads pkt as the headers dump's encapsulation names, then a SUE PDU when dump read
    an RH, SUE Lite's payload when dump says lite."""
    from scapy.packet import Padding, Raw
    from scapy.layers.l2 import Dot1AD, Dot1Q
    aside = (Raw, Padding, m.SUERCRC, m.TofuFCS, m.ExaJetFooter, m.ExaJetControlPayload,
             m.SUEPad)
    got = []
    for c in pkt.layers():
        if issubclass(c, m.SUECommand):
            continue
        c = Dot1Q if c is Dot1AD else c
        if (c not in aside or c is m.SUELite) and not (got and got[-1] is Dot1Q and c is Dot1Q):
            got.append(c)
    encap = d["encap"]
    if encap == "rdma":
        check(len(got) == 1 and got[0] in (m.ExaJetData, m.ExaJetAck, m.ExaJetControl),
              f"{where}: rdma read as {got}")
        return
    want = expected_classes(m, encap)
    check(want is not None, f"{where}: no expectation for encap {encap}")
    if any(k.startswith("sue.rh.") for k in d):
        want = want + [m.SUE]
    if encap == "lite":
        want = want + [m.SUELite]
    # Past what dump reads (ARP, ...) scapy may read on; no PDU where dump has none.
    same = got[:len(want)] == want and all((c in got) == (c in want) for c in (m.SUE, m.SUELite))
    check(same, f"{where}: dump says {encap}, scapy reads {[c.__name__ for c in got]}")


def check_status(m, where, pkt, d):
    """Each header a trailer closes: scaleup_check() says what dump computed."""
    for layer in closed_layers(m, pkt):
        key = layer.scaleup_status
        check(key in d, f"{where}: dump has no {key}")
        check(layer.scaleup_check() == d[key],
              f"{where}: {key}: scapy {layer.scaleup_check()}, dump {d[key]}")


# ---- cases -------------------------------------------------------------------------------

def case_check_detects_drift():
    module = os.path.join(MODULE_DIR, "scaleup_scapy.py")
    template = os.path.join(MODULE_DIR, "scaleup_scapy.py.in")
    p = subprocess.run([DOCGEN, "--check-scapy", template, module], capture_output=True,
                       text=True)
    check(p.returncode == 0, f"the committed module is current: {p.stderr}")
    text = open(module).read()
    copy = tmp("scaleup_scapy.py")
    drifted = text.replace('BitField("xpuid", 0, 10)', 'BitField("xpuid", 0, 11)', 1)
    check(drifted != text, "the module declares xpuid as a 10-bit field")
    open(copy, "w").write(drifted)
    p = subprocess.run([DOCGEN, "--check-scapy", template, copy], capture_output=True, text=True)
    check(p.returncode == 1, f"--check-scapy on a changed copy: exit {p.returncode}")
    check(f"run: scaleup_docgen --update-scapy {template} {copy}" in p.stderr and
          'BitField("xpuid", 0, 11)' in p.stderr,
          f"the message shows the line and the fix: {p.stderr}")
    open(copy, "w").write(text + "# one more line\n")
    p = subprocess.run([DOCGEN, "--check-scapy", template, copy], capture_output=True, text=True)
    check(p.returncode == 1 and "# one more line" in p.stderr, f"a line added: {p.stderr}")
    p = subprocess.run([DOCGEN, "--update-scapy", template, copy], capture_output=True, text=True)
    check(p.returncode == 0 and open(copy).read() == text, "--update-scapy repairs it")
    p = subprocess.run([DOCGEN, "--check-scapy", template, tmp("none.py")],
                       capture_output=True, text=True)
    check(p.returncode == 2, f"a missing file: exit {p.returncode}")
    p = subprocess.run([DOCGEN, "--check-scapy", tmp("none.py.in"), module],
                       capture_output=True, text=True)
    check(p.returncode == 2, f"a missing template: exit {p.returncode}")
    # The runtime is the template's text, written once: an edit there is in the module.
    source = open(template).read()
    edited = tmp("edited.py.in")
    open(edited, "w").write(source.replace("def _crc32(data):", "def _crc32(data):  # edited", 1))
    p = subprocess.run([DOCGEN, "--scapy", edited], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout == text.replace("def _crc32(data):",
                                                         "def _crc32(data):  # edited", 1),
          f"the template's Python is the module's: exit {p.returncode}, {p.stderr}")
    # A place the generator does not fill, and one the template lost: both refused.
    open(edited, "w").write(source + "# @@no_such_place@@\n")
    p = subprocess.run([DOCGEN, "--scapy", edited], capture_output=True, text=True)
    check(p.returncode == 2 and "@@no_such_place@@" in p.stderr and p.stdout == "",
          f"an unknown place: exit {p.returncode}, {p.stderr}")
    open(edited, "w").write(source.replace("@@rh_size@@", "8"))
    p = subprocess.run([DOCGEN, "--scapy", edited], capture_output=True, text=True)
    check(p.returncode == 2 and "@@rh_size@@" in p.stderr and p.stdout == "",
          f"a place left out: exit {p.returncode}, {p.stderr}")
    p = subprocess.run([DOCGEN, "--scapy", template], capture_output=True, text=True)
    check(p.returncode == 0 and p.stdout == text, "--scapy prints the module")


def randomise(m, cls, rng, **given):
    """Values for every field of cls that is not reserved, fixed or computed: random within the
    field's width, or as given."""
    out = {}
    for f in cls.fields_desc:
        if f.name in given or f.name in cls.scaleup_reserved or f.name in cls.scaleup_fixed:
            continue
        if f.default is None:
            continue
        width = getattr(f, "size", None) or 8 * f.sz
        out[f.name] = rng.randrange(1 << width)
    out.update(given)
    return out


def rh_values(rng, heuristic=False):
    v = dict(ver=0 if heuristic else rng.randrange(4), op=rng.randrange(4),
             xpuid=rng.randrange(1024), npsn=rng.randrange(1 << 16), vc=rng.randrange(4),
             partition=rng.randrange(1024), apsn=rng.randrange(1 << 16))
    return v


def case_built_frames():
    m = load_module()
    m.SUE_UDP_PORTS.add(61793)
    m.use_profile(None)  # random payloads: read as dump --profile none reads them
    from scapy.all import IP, UDP, Dot1AD, Dot1Q, Ether, IPv6, Padding, Raw, rdpcap, wrpcap
    rng = random.Random(22)

    # Golden bytes, packed by hand from the seeds' field order.
    rh = dict(op=1, xpuid=0x2A5, npsn=0xBEEF, vc=2, partition=0x155, apsn=0xBEEE)
    check(bytes(m.SUE(**rh))[:8] == bytes.fromhex("12a5beef8155beee"), "RH golden bytes")
    pdu = bytes(m.SUE(**rh) / Raw(b"\x01\x02"))
    check(pdu == rh_bytes(**rh) + b"\x01\x02" + struct.pack(">I", crc(pdu[:10])),
          "RH, payload, R-CRC over both, big-endian")
    check(bytes(m.AFH2C(m=1, tc=5, src_xpu=0x1234, dst_xpu=0xABCD)) ==
          bytes.fromhex("23281234abcd"), "AFH Gen 2 compressed: W, X and M in the first octet")
    check(bytes(m.AFH2(hop_count=7, dst_xpu=0x01020304, tc=3, entropy=0x5A, src_xpu=0x0A0B0C0D))
          == bytes.fromhex("0207010203041a5a0a0b0c0d"), "AFH Gen 2 normal: SA U/L set")
    shim = bytes(m.AFH1Shim(tc=0xAB, hop_limit=0x40, entropy=0x56789, src_xpu=1, dst_xpu=2) /
                 Raw(b"x" * 5))
    check(shim[:16] == pack((0, 4), (0xAB, 8), (0x40, 8), (253, 8), (5, 16), (0x56789, 20),
                            (1, 32), (2, 32)), "shim: length computed, next header 253")
    # The shim's XPU ids, left None, are the AFH Gen 1 addresses'; given, they are kept.
    over = m.AFH1(dst_xpu=2, src_xpu=1) / Dot1Q(prio=3) / m.AFH1Shim(tc=3) / m.SUE(xpuid=1)
    got = m.AFH1(bytes(over))[m.AFH1Shim]
    check((got.src_xpu, got.dst_xpu) == (1, 2), "shim XPU ids from the AFH1 addresses")
    given = m.AFH1(dst_xpu=2, src_xpu=1) / m.AFH1Shim(src_xpu=7, dst_xpu=9) / m.SUE(xpuid=1)
    got = m.AFH1(bytes(given))[m.AFH1Shim]
    check((got.src_xpu, got.dst_xpu) == (7, 9), "shim XPU ids given are kept")
    check(bytes(m.AFH1Shim() / Raw(b"x"))[8:16] == bytes(8), "no AFH1 under it: zeros")
    trh = dict(len=5, dabc1_a=1, dabc1_b=2, dabc1_c=1, dx=200, dy=3, dz=77, dabc2_a=0,
               dabc2_b=1, dabc2_c=1, di=5, b=1, s=0, vc=3, pat=1, stat=0xA, seq=0x2C3)
    check(bytes(m.TofuRH(**trh))[:8] == pack(
        (1, 1), (5, 6), (1, 1), (2, 2), (1, 1), (200, 8), (3, 8), (77, 8), (0, 1), (1, 2),
        (1, 1), (5, 3), (1, 1), (0, 1), (0, 1), (3, 2), (1, 3), (0xA, 4), (0x2C3, 10)),
        "Tofu routing header in the order of 003 Figs. 4-6")
    check(len(bytes(m.TofuRH(**trh))) == 12, "a trailer left out is added")
    check(m.SUE(bytes(m.SUE(**rh) / Raw(b"abc"))).scaleup_check() == "good", "CRC computed")
    check(m.SUE(bytes(m.SUE(**rh) / Raw(b"abc") / m.SUERCRC(rcrc=1))).scaleup_check() == "bad",
          "a CRC given is kept")

    def sue(heuristic=False, payload=None):
        body = payload if payload is not None else bytes(rng.randrange(256) for _ in range(
            rng.choice([0, 1, 5, 64, 300])))
        return m.SUE(**rh_values(rng, heuristic)) / Raw(body) if body else \
            m.SUE(**rh_values(rng, heuristic))

    def afh1(**kw):
        v = randomise(m, m.AFH1, rng, **kw)
        # A first octet with the AFH Gen 2 signature would make it an AFH Gen 2 frame (as dump
        # reads it): keep bit 6 set, as the default prefix does.
        v["da_prefix"] |= 0x40000000
        v.pop("type", None)
        return m.AFH1(**v)

    def lite_payload():
        while True:
            b = bytes(rng.randrange(256) for _ in range(rng.randrange(8, 120)))
            # Byte 0 lands on the source MAC's I/G bit: an odd one is a group
            # address, which the reader rightly warns about (R2 3.4, Fig. 10).
            b = bytes([b[0] & 0xFE]) + b[1:]
            if struct.unpack(">H", b[0:2])[0] != m.SUE_ETHERTYPE and \
                    struct.unpack(">H", b[6:8])[0] not in m.COMMON_ETHERTYPES:
                return b

    mac = dict(src="02:00:00:00:01:02", dst="02:00:00:00:03:04")
    eth = []  # (packet, encap)
    for _ in range(3):
        eth.append((Ether(**mac) / IP(src="10.1.2.3", dst="10.4.5.6", tos=rng.randrange(256)) /
                    UDP() / sue(), "udp4"))
        eth.append((Ether(**mac) / IPv6(src="fd00::1", dst="fd00::2:3", fl=rng.randrange(1 << 20))
                    / UDP() / sue(), "udp6"))
        eth.append((Ether(**mac) / IP() / UDP(sport=40000, dport=50000) / sue(heuristic=True),
                    "udp4"))
        eth.append((afh1() / sue(), "afh1"))
        eth.append((afh1() / Dot1Q(prio=rng.randrange(8), id=1, vlan=rng.randrange(4096)) / sue(),
                    "afh1-vlan"))
        eth.append((afh1() / m.AFH1Shim(**randomise(m, m.AFH1Shim, rng, next_header=253)) / sue(),
                    "afh1-shim"))
        eth.append((afh1() / Dot1Q(vlan=rng.randrange(4096)) /
                    m.AFH1Shim(**randomise(m, m.AFH1Shim, rng, next_header=253)) / sue(),
                    "afh1-vlan-shim"))
        eth.append((m.AFH2(**randomise(m, m.AFH2, rng)) / m.AFH2Type() / sue(), "afh2"))
        eth.append((m.AFH2C(**randomise(m, m.AFH2C, rng)) / m.AFH2Type() / sue(), "afh2c"))
        eth.append((m.AFH2C(**randomise(m, m.AFH2C, rng)) / m.SUELite(lite_payload()), "lite"))
    # Two tags, and minimum-size frames padded after the R-CRC (the payload ending in zeros
    # makes the R-CRC hard to find), and a bad R-CRC given on purpose.
    eth.append((afh1() / Dot1AD(vlan=5) / Dot1Q(vlan=6) / sue(), "afh1-vlan"))
    for payload in (b"\x07", b"\x05\x00\x00", b""):
        for head, encap in ((afh1(), "afh1"), (afh1() / Dot1Q(vlan=9), "afh1-vlan"),
                            (m.AFH2C() / m.AFH2Type(), "afh2c"), (m.AFH2() / m.AFH2Type(), "afh2")):
            p = head / sue(payload=payload)
            eth.append((p / Padding(b"\0" * (60 - len(p))), encap))
    bad = afh1() / sue(payload=b"\x01\x02\x03" * 20) / m.SUERCRC(rcrc=0x12345678)
    eth.append((bad, "afh1"))
    bare = [(m.AFH2(**randomise(m, m.AFH2, rng)) / m.AFH2Type() / sue(), "afh2"),
            (m.AFH2C(**randomise(m, m.AFH2C, rng)) / m.AFH2Type() / sue(), "afh2c"),
            (m.AFH2C(**randomise(m, m.AFH2C, rng)) / m.SUELite(lite_payload()), "lite")]

    # Tofu slices: lengths as LEN, PAT and the lane make them (slice.hpp, decisions.md).
    def tofu_slice(lanes, pat, lane):
        ways = {0: 1, 1: 2, 2: 4}[pat]
        length = rng.randrange(8)
        body = (32 * (length + 1) + 16 + 8) // 8
        words = (body - lane % ways + ways - 1) // ways
        pad = (16 - (8 + 8 + 8 * words + 4) % 16) % 16
        v = randomise(m, m.TofuRH, rng, len=length, pat=pat, dabc1_b=rng.randrange(3),
                      dabc2_b=rng.randrange(3))
        head = m.TofuSlice(lane=lane, lanes=lanes, replay=rng.randrange(2),
                           injected=rng.randrange(2))
        return head / m.TofuRH(**v) / Raw(bytes(rng.randrange(256) for _ in range(8 * words)) +
                                          b"\0" * pad)
    tofu = [(tofu_slice(lanes, pat, lane), "tofu") for lanes, pat in ((2, 0), (2, 1), (4, 2),
                                                                       (4, 1)) for lane in
            range(lanes)]

    def footer():
        return m.ExaJetFooter(**randomise(m, m.ExaJetFooter, rng))

    rdma = []
    for t in (0, 1):
        payload = bytes(rng.randrange(256) for _ in range(rng.choice([0, 1, 100, 1024])))
        head = m.ExaJetData(**randomise(m, m.ExaJetData, rng, type=t))
        rdma.append(((head / Raw(payload) if payload else head) / footer(), "rdma"))
    for t in (2, 3):
        rdma.append((m.ExaJetAck(**randomise(m, m.ExaJetAck, rng, type=t,
                                             cause=rng.randrange(3))) / footer(), "rdma"))
    rdma.append((m.ExaJetAck(), "rdma"))  # the footer added, its CRC computed
    rdma.append((m.ExaJetControl(**randomise(m, m.ExaJetControl, rng)) /
                 m.ExaJetControlPayload(value=rng.randrange(1 << 64)) / footer(), "rdma"))

    checked = 0
    for name, frames, link in (("eth", eth, None), ("bare", bare, 147), ("tofu", tofu, 148),
                               ("rdma", rdma, 149)):
        cap = tmp(f"built-{name}.pcap")
        wrpcap(cap, [p for p, _ in frames], linktype=link)
        # Random payloads: no commands to read in them. Random RHs need not pass for PDUs: the
        # port the module builds UDP with (the emitters' 61793) is named, as SUE_UDP_PORTS is.
        got = dump(cap, "--profile", "none", "--udp-port", "61793")
        check(len(got) == len(frames), f"{name}: {len(frames)} frames written, {len(got)} dumped")
        back = rdpcap(cap)
        for i, ((p, encap), d, read) in enumerate(zip(frames, got, back)):
            where = f"{name} frame {i + 1} ({p.summary()})"
            check(d["encap"] == encap, f"{where}: dump says {d['encap']}, built as {encap}")
            wire = bytes(p)
            want = built_fields(m, p)
            # A header's trailer left out: added with its defaults.
            for layer in closed_layers(m, p):
                if layer.payload.getlayer(layer.scaleup_trailer) is None:
                    want.update(built_fields(m, layer.scaleup_trailer()))
            # scapy's own layers: as scapy built them (lengths and checksums filled in).
            for k, v in scapy_values(m, type(p)(wire)).items():
                want.setdefault(k, v)
            # What the module computes (None when built): against what it must be.
            for k, v in list(want.items()):
                if v is not None:
                    continue
                if k == "afh1.shim.length":
                    want[k] = len(p[m.AFH1Shim].payload.do_build())
                elif k == "rdma.pkt.len":
                    want[k] = d.get("rdma.payload.len", 0)
                elif k in ("afh1.shim.src_xpu", "afh1.shim.dst_xpu"):
                    # the AFH1 addresses' ids, or 0 without them
                    under = p.getlayer(m.AFH1)
                    want[k] = under.getfieldval(k.split(".")[-1]) if under else 0
                elif k in ("sue.rcrc", "tofu.slice.fcs", "rdma.ftr.crc"):
                    want[k] = d.get(k)  # checked below through the status
                else:
                    fail(f"{where}: {k} left None")
            checked += compare(m, where, want, d)
            expect_bad = p is bad
            # A random RH of a version other than 0 is read with a warning (and only that).
            ver = d.get("sue.rh.ver", 0)
            errors = [e for e in d["errors"] if not (expect_bad and e["code"] == "bad_checksum")
                      and not (ver and e.get("field") == "sue.rh.ver" and e["severity"] == "warning"
                               and e["value"] == ver)]
            check(errors == [], f"{where}: errors {d['errors']}")
            for key in ("sue.rcrc.status", "tofu.slice.fcs.status", "rdma.ftr.crc.status"):
                if key in d:
                    check(d[key] == ("bad" if expect_bad else "good"), f"{where}: {key} {d[key]}")
            if "sue.rcrc" in d and not expect_bad:
                sue_bytes = bytes(p[m.SUE])
                end = len(sue_bytes) - (len(p[m.SUE][Padding].load) if Padding in p else 0)
                check(d["sue.rcrc"] == crc(sue_bytes[:end - 4]), f"{where}: R-CRC value")
            if m.SUE in p:
                s = p[m.SUE]
                check(wire.find(rh_bytes(**{k: s.getfieldval(k) for k in
                                            ("ver", "op", "xpuid", "npsn", "vc", "partition",
                                             "apsn")})) >= 0, f"{where}: the RH packed by hand")
            # And scapy reads the capture back as dump does.
            check_classes(m, where, read, d)
            check_status(m, where, read, d)
            checked += compare(m, where + " read back", scapy_values(m, read), d)
            if name in ("eth", "bare"):  # SUE frames: dump_fields is dump's object
                checked += parity(where, m.dump_fields(p), d)
                checked += parity(where + " read back", m.dump_fields(read), d)
    check(checked > 2000, f"only {checked} values compared")
    print(f"{len(eth) + len(bare) + len(tofu) + len(rdma)} frames built, {checked} values compared")


def gen_captures():
    """Every scenario of `scaleup gen`, with its link."""
    caps = []
    for name, args in (
            ("basic", ["basic", "--encap", "all", "--count", "6", "--seed", "11"]),
            ("basic-afh2", ["basic", "--link", "afh2", "--count", "6", "--seed", "12"]),
            ("traffic", ["traffic", "--encap", "all", "--count", "150", "--seed", "13"]),
            ("traffic-fig21", ["traffic", "--pattern", "fig21", "--encap", "afh2c,lite"]),
            ("session", ["session", "--xpus", "4", "--loss", "0.05", "--corrupt", "0.05",
                         "--commands", "1500", "--seed", "14"]),
            ("session-afh1", ["session", "--encap", "afh1-vlan-shim", "--commands", "300"]),
            ("tofu", ["tofu", "--frames", "200", "--error-rate", "2e-5", "--seed", "15"]),
            ("rdma", ["rdma", "--transfers", "8", "--loss", "0.01", "--seed", "16"])):
        cap = tmp(f"{name}.pcap")
        run("gen", *args, "-o", cap)
        caps.append((name, cap))
    return caps


def case_gen_captures():
    m = load_module()
    from scapy.all import rdpcap
    statuses = set()
    for name, cap in gen_captures():
        pkts = rdpcap(cap)
        got = dump(cap)
        check(len(pkts) == len(got) > 0, f"{name}: scapy reads {len(pkts)}, dump {len(got)}")
        compared = 0
        for i, (p, d) in enumerate(zip(pkts, got)):
            where = f"{name} frame {d['frame']} ({d['encap']})"
            check(d["frame"] == i + 1, f"{where}: frame number")
            n = compare(m, where, scapy_values(m, p), d)
            check(n > 0, f"{where}: nothing compared")
            if d["encap"] not in ("tofu", "rdma"):  # dump_fields gives their table fields only
                n += parity(where, m.dump_fields(p), d)
            compared += n
            check_classes(m, where, p, d)
            check_status(m, where, p, d)
            statuses.update(layer.scaleup_check() for layer in closed_layers(m, p))
        print(f"{name}: {len(pkts)} frames, {compared} values")
    check({"good", "bad"} <= statuses, f"good and bad CRCs both met: {statuses}")


def case_recognition():
    m = load_module()
    from scapy.all import ARP, IP, UDP, Dot1Q, Ether, Raw, rdpcap, wrpcap

    rh_good = rh_bytes(op=0, xpuid=9, npsn=10, apsn=8) + b"\x01\x02\x03"
    good = rh_good + struct.pack(">I", crc(rh_good))

    def udp(sport, dport, payload):
        return Ether() / IP() / UDP(sport=sport, dport=dport) / Raw(payload)

    def with_crc(rh):
        return rh + struct.pack(">I", crc(rh))

    # More tags than dump reads (wire::received_frame::max_vlan_tags): not SUE to either.
    nine_tagged = m.AFH1()
    for _ in range(8):
        nine_tagged = nine_tagged / Dot1Q()
    nine_tagged = nine_tagged / Dot1Q(type=m.SUE_ETHERTYPE) / Raw(good)

    # Each UDP frame its own flow (source ports 1234 up): dump keeps a flow found SUE as SUE,
    # which the module, judging frame by frame, does not model.
    frames = [
        udp(1234, 5678, good),                                         # heuristic
        udp(1235, 5678, good[:-1] + bytes([good[-1] ^ 1])),            # bad R-CRC: not SUE
        udp(1236, 5678, with_crc(rh_bytes(ver=1, xpuid=3))),           # version 1
        udp(1237, 5678, with_crc(rh_bytes(rsv=1, xpuid=3))),           # reserved bits
        udp(1238, 5678, with_crc(rh_bytes(rsvd=8, xpuid=3))),
        udp(1239, 5678, good[:11]),                                    # too short
        udp(1240, 4793, rh_bytes(op=1, xpuid=7)),                      # RH only: no R-CRC
        udp(4793, 1241, rh_bytes(op=0, xpuid=8)),                      # source port
        udp(4793, 4793, good[:-1] + bytes([good[-1] ^ 1])),            # named port, bad R-CRC
        Ether(dst="22:00:00:00:00:01") / IP() / UDP(sport=1, dport=2) / Raw(b"x" * 20),
        Ether(dst="02:00:00:00:00:01") / IP() / UDP(sport=1, dport=2) / Raw(b"x" * 20),
        Ether(dst="02:00:00:00:00:01", type=m.SUE_ETHERTYPE) / Raw(good),  # read as AFH Gen 2
        m.AFH2C() / m.SUELite(b"\x00" * 6 + b"\x08\x00" + b"\x00" * 40),  # IPv4 at 12-13
        m.AFH2C() / m.AFH2Type() / m.SUE(xpuid=4) / Raw(b"\x08\x00" * 30),
        Ether() / ARP(),
        m.AFH1(type=m.SHIM_ETHERTYPE) / m.AFH1Shim(next_header=17) / Raw(good),
        m.AFH1() / Dot1Q() / Dot1Q() / Dot1Q(type=m.SUE_ETHERTYPE) / Raw(good),  # three tags
        Ether(type=0x88A8) / Dot1Q(type=0x8100) / Dot1Q(type=m.SUE_ETHERTYPE) / Raw(good),
        nine_tagged,
    ]
    nine_tags = 18
    cap = tmp("recognition.pcap")
    wrpcap(cap, frames)

    def agree(tag, opts, pkts):
        got = dump(cap, *opts)
        check(len(got) == len(pkts), f"{tag}: {len(got)} frames dumped")
        for i, (p, d) in enumerate(zip(pkts, got)):
            where = f"{tag} frame {i + 1} ({p.summary()})"
            check_classes(m, where, p, d)
            check_status(m, where, p, d)
            if i != nine_tags:  # scapy reads a ninth tag dump leaves alone
                compare(m, where, scapy_values(m, p), d)
                parity(where, m.dump_fields(p), d)
        return got

    got = agree("default", [], rdpcap(cap))
    check([d["encap"] for d in got[:9]] == ["udp4"] + ["ipv4/udp"] * 8,
          f"no port is SUE's by default: {[d['encap'] for d in got]}")
    m.SUE_UDP_PORTS.add(4793)
    got_named = agree("--udp-port 4793", ["--udp-port", "4793"], rdpcap(cap))
    check([d["encap"] for d in got_named[6:9]] == ["udp4"] * 3, "a named port, either side")
    check(got_named[6]["sue.rcrc.status"] == "missing" and
          got_named[8]["sue.rcrc.status"] == "bad", "an RH without R-CRC, a bad R-CRC")
    m.SUE_UDP_PORTS.discard(4793)
    check([d["encap"] for d in got[9:]] == ["ipv4/udp", "ipv4/udp", "afh2", "ipv4", "afh2c", "eth",
                                            "afh1-shim", "afh1-vlan", "afh1-vlan", "eth"],
          f"the SLAP signature and the tags exercised: {[d['encap'] for d in got[9:]]}")
    m.SUE_UDP_HEURISTIC = False
    got = agree("--no-heuristics", ["--no-heuristics"], rdpcap(cap))
    check(got[0]["encap"] == "ipv4/udp", "no heuristic")
    m.SUE_UDP_HEURISTIC = True
    m.SUE_UDP_PORTS.add(5678)
    got = agree("--udp-port 5678", ["--udp-port", "5678"], rdpcap(cap))
    check(got[1]["encap"] == "udp4" and got[1]["sue.rcrc.status"] == "bad", "a port added")
    m.SUE_UDP_PORTS.discard(5678)

    # Link type 147: the format by W; no signature, no AFH Gen 2 (dump reports it).
    bare = [m.AFH2C(tc=3) / m.SUELite(b"\x88\xb6" + b"\x01" * 20),
            m.AFH2(hop_count=3) / m.AFH2Type() / m.SUE(xpuid=1) / Raw(b"\x00" * 3),
            m.AFH2(hop_count=3) / m.AFH2Type(type=0x0800) / Raw(b"\x00" * 20),
            Raw(b"\x00" * 20)]
    cap147 = tmp("bare.pcap")
    wrpcap(cap147, bare, linktype=147)
    pkts = rdpcap(cap147)
    got = dump(cap147)
    check([d["encap"] for d in got] == ["lite", "afh2", "afh2", "afh2"], f"{got}")
    for i, (p, d) in enumerate(zip(pkts[:3], got)):
        check_classes(m, f"147 frame {i + 1}", p, d)
        compare(m, f"147 frame {i + 1}", scapy_values(m, p), d)
    check(type(pkts[3]) is Raw and got[3]["errors"], "no signature: Raw, and dump's error")

    # Link type 149: too short or of an unknown type, not an ExaJet header class.
    odd = [Raw(b"\x00" * 20), Raw(b"\x70" + b"\x00" * 40)]
    cap149 = tmp("odd.pcap")
    wrpcap(cap149, odd, linktype=149)
    pkts = rdpcap(cap149)
    got = dump(cap149)
    check(all(type(p) is Raw for p in pkts) and all(d["errors"] for d in got),
          "short and unknown ExaJet packets")


# Keys dump --json gives that dump_fields cannot: what the capture says of a frame and the bytes
# cannot (its number, times, interface), and "errors", dump's findings, which the module does not
# judge (scaleup_check() gives the CRCs'; check_status holds it to dump's).
NOT_IN_DUMP_FIELDS = ("frame", "frame.time_epoch", "frame.time_relative", "frame.time_delta",
                      "frame.interface_id", "errors")


def parity(where, mine, d):
    """dump_fields' answer `mine` is dump's JSON `d`, key by key, less NOT_IN_DUMP_FIELDS."""
    want = {k: v for k, v in d.items() if k not in NOT_IN_DUMP_FIELDS}
    if mine == want:
        return len(want)
    diff = [f"{k}: dump_fields {mine.get(k, '(none)')!r}, dump {want.get(k, '(none)')!r}"
            for k in sorted(set(mine) | set(want)) if mine.get(k) != want.get(k)]
    fail(f"{where}: " + "; ".join(diff))


def user_profile():
    """A profile file of another layout than the default's: a vendor's write with a 32-bit
    address, a 2-byte ping with named flags and a reserved byte, a type with no field layout."""
    return {"name": "vendor", "description": "a profile of other codes and layouts", "types": [
        {"code": 0x20, "name": "VWR", "control_units": 4, "data": True, "vc": 0, "fields": [
            {"name": "type", "filter": "vendor.cmd.type", "bit": 0, "width": 8, "type": "hex"},
            {"name": "length", "filter": "vendor.cmd.len", "bit": 8, "width": 8},
            {"name": "tag", "filter": "vendor.cmd.tag", "bit": 16, "width": 16},
            {"name": "address", "filter": "vendor.cmd.vaddr", "bit": 32, "width": 32,
             "type": "hex"}]},
        {"code": 0x22, "name": "PING", "control_units": 2, "data": False, "fields": [
            {"name": "type", "filter": "vendor.cmd.type", "bit": 0, "width": 8, "type": "hex"},
            {"name": "flags", "filter": "vendor.ping.flags", "bit": 8, "width": 4,
             "values": [[0, "none"], [5, "urgent"]]},
            {"name": "reserved", "filter": "vendor.ping.rsvd", "bit": 12, "width": 4,
             "check": "reserved"},
            {"name": "cookie", "filter": "vendor.ping.cookie", "bit": 16, "width": 16}]},
        {"code": 0x24, "name": "BLOB", "control_units": 3, "data": True}]}


def case_dump_parity():
    """Frames with packed commands, built with the module in every SUE encapsulation, written
    with wrpcap: dump_fields of each, built and read back, is dump --json's object, key by key
    (NOT_IN_DUMP_FIELDS aside), with the default profile and with a user's profile file."""
    m = load_module()
    m.SUE_UDP_PORTS.add(61793)
    from scapy.all import IP, UDP, Dot1AD, Dot1Q, Ether, IPv6, Padding, Raw, rdpcap, wrpcap
    rng = random.Random(31)
    P = m.DEFAULT_PROFILE

    # The default profile's classes: its layouts, held to bytes packed by hand (R2 Table 2
    # shapes of pack/default_profile.hpp, docs/wire-format.md).
    wr = P["WR_FULL"](tag=0x1234, addr=0x1122334455667788, data=b"abcd")
    check(bytes(wr) == pack((0x04, 8), (3, 8), (0x1234, 16), (0x1122334455667788, 64)) +
          b"abcd", f"WR_FULL packed by hand: {bytes(wr).hex()}")
    rd = P["RD"](rlen=63, tag=9, addr=0x2000)
    check(bytes(rd) == pack((0x0A, 8), (63, 8), (9, 16), (0x2000, 64)), "RD: no data")
    at = P["ATOMIC"](op=2, addr=0x40, data=bytes(16))
    check(bytes(at)[:14] == pack((0x14, 8), (15, 8), (0, 16), (2, 8), (0, 8), (0x40, 64)),
          "ATOMIC: operation, reserved, address")
    check(sorted(P.classes) == [2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22], "the default's codes")
    # Read back: one class per command, data by byte 1, zeros as padding, the rest opaque.
    read = m.SUE(bytes(m.SUE(xpuid=3) / wr / rd / Raw(b"\0\0")))
    got = [type(layer) for layer in layers_of(read)]
    check(got == [m.SUE, P["WR_FULL"], P["RD"], m.SUEPad, m.SUERCRC], f"read as {got}")
    check(read[P["WR_FULL"]].data == b"abcd" and read[P["RD"]].addr == 0x2000, "values")
    opaque = m.SUE(bytes(m.SUE() / rd / Raw(b"\x05\x01\x02")))
    check(type(opaque[P["RD"]].payload) is Raw, "a type the profile lacks: opaque")
    cut = m.SUE(bytes(m.SUE() / Raw(bytes(wr)[:-1])))
    check(type(cut.payload) is Raw, "a command cut off: opaque")
    m.use_profile(None)
    check(type(m.SUE(bytes(m.SUE() / rd)).payload) is Raw, "no profile: no commands")
    m.use_profile("default")
    # The generator's field names are the rule the module names a profile's fields by.
    for cls in m.CLASSES:
        for name, filt in cls.scaleup_fields.items():
            check(m._field_name(cls.scaleup_layer, filt) == name, f"{cls.__name__}.{name}")

    def command(profile):
        cls = rng.choice(list(profile.classes.values()))
        data = bytes(rng.randrange(256) for _ in range(rng.randrange(1, 257)))
        given = {}
        for f in cls.fields_desc:
            if f.name in ("data", "control") or f.name in cls.scaleup_reserved or \
                    f.name == cls.scaleup_length or f.default == cls.scaleup_code:
                continue
            given[f.name] = rng.randrange(1 << f.size)
        if "control" in [f.name for f in cls.fields_desc]:
            given["control"] = bytes([cls.scaleup_code]) + bytes(
                rng.randrange(256) for _ in range(cls.scaleup_control - 1))
        if cls.scaleup_has_data:
            given["data"] = data
        return cls(**given)

    def commands(profile, n=None):
        p = command(profile)
        for _ in range(rng.randrange(1, 6) if n is None else n - 1):
            p = p / command(profile)
        return p

    def sue(profile, tail=None):
        rh = m.SUE(**rh_values(rng))
        return rh / commands(profile) / tail if tail is not None else rh / commands(profile)

    def afh1():
        return m.AFH1(dst_xpu=rng.randrange(1 << 16), src_xpu=rng.randrange(1 << 16))

    def frames(profile):
        mac = dict(src="02:00:00:00:01:02", dst="02:00:00:00:03:04")
        eth = [
            Ether(**mac) / IP(src="10.1.2.3", dst="10.4.5.6", tos=rng.randrange(256)) / UDP() /
            sue(profile),
            Ether(**mac) / IP(flags="DF") / UDP(chksum=0) / sue(profile),   # UDP checksum 0
            Ether(**mac) / IPv6(src="fd00::1", dst="fd00::2:3", fl=rng.randrange(1 << 20)) /
            UDP() / sue(profile),
            afh1() / sue(profile),
            afh1() / Dot1Q(prio=5, vlan=rng.randrange(4096)) / sue(profile),
            afh1() / Dot1AD(vlan=5) / Dot1Q(vlan=6) / sue(profile),          # two tags: lists
            afh1() / m.AFH1Shim(tc=3) / sue(profile),
            afh1() / Dot1Q(vlan=7) / m.AFH1Shim(entropy=99) / sue(profile),
            m.AFH2(hop_count=3, dst_xpu=7, src_xpu=9) / m.AFH2Type() / sue(profile),
            m.AFH2C(src_xpu=1, dst_xpu=2, tc=1) / m.AFH2Type() / sue(profile),
            m.AFH2C(src_xpu=3, dst_xpu=4) / m.SUELite() / commands(profile),
            m.AFH2C(src_xpu=3, dst_xpu=4) / m.SUELite() / commands(profile) / Raw(b"\0" * 7),
            afh1() / sue(profile, Raw(b"\0" * 3)),                            # padding in the PDU
            afh1() / sue(profile, Raw(b"\x01\x02\x03")),                      # opaque bytes
            afh1() / m.SUE(xpuid=5) / Raw(b"\x07\x00\x00"),                   # opaque only
            Ether(**mac) / IP() / UDP() / m.SUE(xpuid=6) / m.SUERCRC(rcrc=1),  # bad R-CRC
        ]
        # Minimum-size frames: padded after the R-CRC, which dump finds and the module too.
        small = afh1() / m.SUE(xpuid=7) / P["BARRIER"](tag=1) if profile is P else \
            afh1() / m.SUE(xpuid=7) / profile["PING"](ping_cookie=1)
        eth.append(small / Padding(b"\0" * (60 - len(small))))
        bare = [m.AFH2C(tc=2) / m.SUELite() / commands(profile),
                m.AFH2(hop_count=1) / m.AFH2Type() / sue(profile)]
        return eth, bare

    compared = 0
    user_file = tmp("vendor.json")
    with open(user_file, "w") as f:
        json.dump(user_profile(), f)
    vendor = m.load_profile(user_file)
    check(sorted(vendor.classes) == [0x20, 0x22, 0x24] and vendor["VWR"].scaleup_control == 8,
          f"the user's profile: {vendor}")
    check(bytes(vendor["PING"](ping_flags=5, ping_cookie=0xBEEF)) == bytes.fromhex("2250beef"),
          "PING packed by hand")
    # Profiles dump refuses, the module refuses too, naming the entry as dump does.
    head = {"name": "type", "filter": "x.type", "bit": 0, "width": 8}
    one = tmp("one.pcap")
    wrpcap(one, [m.AFH1() / m.SUE()])
    run("dump", "--profile", user_file, one)
    for bad in ({"code": 0, "name": "PAD", "control_units": 1, "data": False},
                {"code": 4, "name": "W", "control_units": 2, "data": True,
                 "fields": [head, {"name": "t", "filter": "x.t", "bit": 8, "width": 16}]},
                {"code": 6, "name": "L", "control_units": 10, "data": False}):
        path = tmp("bad.json")
        with open(path, "w") as f:
            json.dump({"name": "bad", "types": [bad]}, f)
        check("types[0]" in run("dump", "--profile", path, one, expect=2).stderr, "dump refuses")
        try:
            m.load_profile(path)
            fail(f"{bad}: loaded")
        except ValueError as e:
            check(f"types[0] (code {bad['code']}, {bad['name']})" in str(e), f"{e}")
    for profile, opts in ((P, []), (vendor, ["--profile", user_file])):
        m.use_profile(profile)
        eth, bare = frames(profile)
        for name, pkts, link in (("eth", eth, None), ("bare", bare, 147)):
            cap = tmp(f"parity-{profile.name}-{name}.pcap")
            wrpcap(cap, pkts, linktype=link)
            got = dump(cap, "--udp-port", "61793", *opts)
            check(len(got) == len(pkts), f"{name}: {len(pkts)} frames written, {len(got)} dumped")
            cmds = 0
            for i, (p, read, d) in enumerate(zip(pkts, rdpcap(cap), got)):
                where = f"{profile.name} {name} frame {i + 1} ({d['encap']})"
                compared += parity(where + " built", m.dump_fields(p), d)
                compared += parity(where + " read back", m.dump_fields(read), d)
                check_status(m, where, read, d)
                cmds += len(d.get("sue.cmds", []))
            check(cmds > 2 * len(pkts), f"{profile.name} {name}: only {cmds} commands")
    # Other links and what is not SUE: the failover exchange, an RH-only PDU, ARP, cooked and
    # loopback links (the loopback family in the host's byte order, as link type 0 has it).
    from scapy.all import ARP, CookedLinux, Loopback
    udp = dict(sport=61793, dport=61793)
    port = m.FAILOVER_UDP_PORT
    other = [([Ether() / IP() / UDP(sport=port, dport=port) / m.SUEFailover(generation=3),
               m.AFH1(type=m.SHIM_ETHERTYPE) / m.AFH1Shim(next_header=m.SHIM_NEXT_FAILOVER) /
               m.SUEFailover(),
               Ether() / IP() / UDP(**udp) / Raw(bytes(m.SUE(xpuid=3))[:8]),
               Ether() / IPv6() / UDP(chksum=0, **udp) / m.SUE() / P["MSG"](data=b"x"),
               Ether() / ARP()], None),
             ([CookedLinux(proto=0x800) / IP() / UDP(**udp) / m.SUE() / P["BARRIER"]()], 113),
             ([Loopback(type=2) / IP() / UDP(**udp) / m.SUE() / P["BARRIER"]()], 0)]
    m.use_profile(P)
    for pkts, link in other:
        cap = tmp(f"other-{link}.pcap")
        wrpcap(cap, pkts, linktype=link)
        for i, (p, d) in enumerate(zip(rdpcap(cap), dump(cap, "--udp-port", "61793"))):
            compared += parity(f"link {link} frame {i + 1} ({d['encap']})", m.dump_fields(p), d)

    # dump --profile none and the module without a profile; profile= read with the one given.
    m.use_profile(None)
    cap = tmp("parity-vendor-eth.pcap")
    plain = dump(cap, "--udp-port", "61793", "--profile", "none")
    with_vendor = dump(cap, "--udp-port", "61793", "--profile", user_file)
    check(not any("sue.cmds" in d for d in plain), "dump --profile none: no commands")
    for i, (p, d, dv) in enumerate(zip(rdpcap(cap), plain, with_vendor)):
        compared += parity(f"--profile none frame {i + 1}", m.dump_fields(p), d)
        compared += parity(f"profile= frame {i + 1}", m.dump_fields(p, profile=vendor), dv)
    print(f"{compared} values compared")


def case_readme_example():
    """README.md's scapy example of commands and dump_fields, run as it stands: what it prints
    is what its "# →" lines say, and dump_fields of the frame it writes is dump --json's."""
    m = load_module()
    readme = open(os.path.join(MODULE_DIR, os.pardir, "README.md"), encoding="utf-8").read()
    section = readme[readme.index("\n## scapy\n"):]
    section = section[:section.index("\n## ", 1)]
    blocks = [b.split("```", 1)[0] for b in section.split("```python\n")[1:]]
    block = [b for b in blocks if "sue.cmds" in b]
    check(len(block) == 1, f"one example of commands in the scapy section: {len(block)}")
    block = block[0]
    said = [line.split("# → ", 1)[1] for line in block.splitlines() if line.startswith("# → ")]
    check(len(said) >= 3, f"the example says what it prints: {said}")
    # Run where the example expects the tree: python/ and profiles/ at hand.
    os.symlink(MODULE_DIR, tmp("python"))
    os.symlink(os.path.join(MODULE_DIR, os.pardir, "profiles"), tmp("profiles"))
    cwd, out = os.getcwd(), io.StringIO()
    os.chdir(cli_test.TMP)
    try:
        with contextlib.redirect_stdout(out):
            exec(compile(block, "README.md", "exec"), {})
    finally:
        os.chdir(cwd)
        m.use_profile("default")
    printed = out.getvalue().splitlines()
    check(printed == said, f"the example prints {printed}, the README says {said}")
    from scapy.all import rdpcap
    cap = tmp("cmds.pcap")
    for i, (p, d) in enumerate(zip(rdpcap(cap), dump(cap))):
        parity(f"cmds.pcap frame {i + 1}", m.dump_fields(p), d)


def main():
    global DOCGEN, MODULE_DIR
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    cli_test.SCALEUP, DOCGEN, MODULE_DIR = (os.path.abspath(a) for a in sys.argv[1:4])
    return cli_test.run_case(globals(), sys.argv[4])


if __name__ == "__main__":
    sys.exit(main())
