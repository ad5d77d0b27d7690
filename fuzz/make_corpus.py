#!/usr/bin/env python3
"""Rebuilds the seed corpora under fuzz/corpus/ from captures the scaleup tool writes.

usage: fuzz/make_corpus.py PATH/TO/scaleup
       fuzz/make_corpus.py --state-machines

Seeds are small and deterministic (fixed generator seeds); rerunning replaces the generated
files (named gen-*) and keeps every other file, such as the reproducers of past findings.
capture_session's seeds are whole pcap (and one pcapng) files of consecutive frames.
The state-machine targets (gbn, llr, cbfc, pfc, packer) and ip_reassembly need no capture: their
seeds are event or fragment scripts written here; --state-machines rebuilds only those, without
the tool.
"""
import hashlib
import os
import re
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")


def header_types():
    """The types of the registry's table list (dissect::table_types), in order: the headers
    fuzz target picks one by the input's first byte."""
    path = os.path.join(HERE, "..", "include", "scaleup", "dissect", "registry.hpp")
    with open(path) as f:
        text = f.read()
    start = text.index("using table_types = std::tuple<")
    end = text.index(">;", start)
    names = re.findall(r"table_entry<([\w:]+),", text[start:end])
    assert names, "no table_entry in " + path
    return names


HEADER_TYPES = header_types()


def read_pcap(path):
    """(link type, [frame bytes]) of a little-endian pcap (microseconds or nanoseconds)."""
    with open(path, "rb") as f:
        d = f.read()
    magic, _, _, _, _, _, link = struct.unpack("<IHHiIII", d[:24])
    assert magic in (0xA1B2C3D4, 0xA1B23C4D), "expected a little-endian pcap"
    frames, at = [], 24
    while at + 16 <= len(d):
        _, _, incl, _ = struct.unpack("<IIII", d[at:at + 16])
        frames.append(d[at + 16:at + 16 + incl])
        at += 16 + incl
    return link, frames


def write_pcap(link, frames):
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, link)
    for i, fr in enumerate(frames):
        out += struct.pack("<IIII", 1, i, len(fr), len(fr)) + fr
    return out


def pcapng_block(order, btype, body):
    """One pcapng block (draft-ietf-opsawg-pcapng 3.1): type, length, body padded to 32 bits,
    length again."""
    body += bytes(-len(body) % 4)
    n = 12 + len(body)
    return struct.pack(order + "II", btype, n) + body + struct.pack(order + "I", n)


def pcapng_option(order, code, value):
    return struct.pack(order + "HH", code, len(value)) + value + bytes(-len(value) % 4)


def write_pcapng(order, interfaces, packets, extra=b""):
    """A pcapng section in byte order `order` ("<" or ">"): a Section Header Block, one
    Interface Description Block per (link, snaplen, tsresol or None, name), `extra` blocks,
    then per (kind, interface, time, frame) an Enhanced ("epb"), Simple ("spb") or obsolete
    Packet Block ("pb")."""
    out = pcapng_block(order, 0x0A0D0D0A, struct.pack(order + "IHHq", 0x1A2B3C4D, 1, 0, -1))
    for link, snaplen, tsresol, name in interfaces:
        opts = b""
        if name:
            opts += pcapng_option(order, 2, name.encode())
        if tsresol is not None:
            opts += pcapng_option(order, 9, bytes([tsresol]))
        if opts:
            opts += pcapng_option(order, 0, b"")
        out += pcapng_block(order, 1, struct.pack(order + "HHI", link, 0, snaplen) + opts)
    out += extra
    for kind, iface, t, fr in packets:
        if kind == "epb":
            out += pcapng_block(order, 6, struct.pack(order + "IIIII", iface, t >> 32,
                                                      t & 0xFFFFFFFF, len(fr), len(fr)) + fr)
        elif kind == "pb":
            out += pcapng_block(order, 2, struct.pack(order + "HHIIII", iface, 0, t >> 32,
                                                      t & 0xFFFFFFFF, len(fr), len(fr)) + fr)
        else:
            out += pcapng_block(order, 3, struct.pack(order + "I", len(fr)) + fr)
    return out


def spread(frames, n):
    """n frames spread over the capture (not just its start)."""
    if len(frames) <= n:
        return list(frames)
    step = len(frames) / n
    return [frames[int(i * step)] for i in range(n)]


def udp4_payload(fr):
    """The SUE command bytes of a UDP/IPv4 frame: after the 8-byte RH, before the R-CRC."""
    if len(fr) < 50 or fr[12:14] != b"\x08\x00" or fr[23] != 17:
        return None
    udp_len = struct.unpack(">H", fr[38:40])[0]
    body = fr[42 + 8:34 + udp_len - 4]
    return body if body else None


def lcg_bytes(seed, n):
    """n pseudo-random bytes from a fixed linear congruential generator."""
    out = bytearray()
    for _ in range(n):
        seed = (seed * 1103515245 + 12345) & 0x7FFFFFFF
        out.append((seed >> 16) & 0xFF)
    return out


def state_machine_seeds(add):
    """Event scripts for the state-machine targets: a few walks through the paths that matter
    (written out event by event, the byte meanings are in each target's switch) and a few
    random ones."""
    rng = 12345
    for i in range(16):
        data = bytearray()
        for _ in range(64 + 16 * i):
            rng = (rng * 1103515245 + 12345) & 0x7FFFFFFF
            data.append((rng >> 16) & 0xFF)
        data[0] = i * 16 + (i % 16)
        add("gbn", data)

    def script(*parts):
        """Bytes from ints and lists of ints, in order."""
        out = bytearray()
        for part in parts:
            out += bytes(part) if isinstance(part, list) else bytes([part])
        return out

    # llr: shape (bits 0-1 width/window, 2-4 retry limit, 5-7 ack_every), timing, events.
    # 0x00 send, 0x01 data arrives (0x19: with a bad FCS), 0x02 control arrives (0x0a: one bit
    # flipped, the flip's position follows), 0x03 tick, 0x0c/0x04 loss fwd/rev, 0x0d/0x05
    # duplicate fwd/rev, 0x06/0x0e stale ACK/NACK, 0x3f reset, 0x07 sender tick.
    send, data, ctl, tick, reset = 0x00, 0x01, 0x02, 0xFB, 0x3F
    add("llr", script(0x01, 0x11, [send] * 5, [data] * 5, [ctl] * 5, [tick] * 3, [ctl] * 2))
    add("llr", script(0x41, 0x22, [send] * 5, [data, data, 0x19, data, data, ctl], [data] * 3,
                      [tick, ctl, ctl]))
    add("llr", script(0x22, 0x13, [send] * 4, [data] * 4, [0x04] * 4, [tick] * 6, [data] * 4,
                      [ctl] * 4, [0x0d, data, data, ctl]))
    add("llr", script(0x05, 0x01, [send] * 3, [tick] * 4, [send, reset, send, data, tick, ctl]))
    add("llr", script(0x00, 0x00, [send, data, ctl] * 40, [0x06, 0x0e, 0xa6, 0xae]))
    add("llr", script(0x13, 0x31, [send] * 20, [0x0a, 0x05, data] * 10, [tick] * 8))
    for i, shape in enumerate((0x03, 0x2e, 0x61, 0xb4)):
        add("llr", script(shape, 0x10 * i + 3, list(lcg_bytes(0x11A0 + i, 200 + 100 * i))))

    # cbfc: cell size / VC map / start near the wrap / refresh, buffers, threshold and delay;
    # 0x20 a 64-byte frame on VC0 (0x28 VC1 ...), 0x02 arrives, 0x03 drained (0x0b VC1 ...),
    # 0x04 + slot << 3 an update arrives, 0x05 tick, 0x06 + slot << 3 an update lost, 0x07
    # nonsense (a byte follows).
    first = [0x05] + [0x04 | (k << 3) for k in range(4)]  # the first updates, delivered
    every = [0x04 | (k << 3) for k in range(8)]
    add("cbfc", script(0x40, 0x08, 0x24, first, [0x20] * 8, [0x02] * 8, [0x03] * 8, 0x55, every))
    add("cbfc", script(0x51, 0x03, 0x41, first, [0x21, 0x40] * 6, [0x02, 0x03] * 6, 0x0e, 0x16,
                       [0xfd] * 4, every))
    add("cbfc", script(0xa4, 0x10, 0x08, first, [0x20, 0x28, 0x30, 0x38] * 4, [0x02] * 16,
                       [0x03, 0x0b, 0x13, 0x1b] * 4, 0x05, every, [0x07, 0x01, 0x0f, 0x02,
                                                                   0x17, 0x03]))
    add("cbfc", script(0xfe, 0x3f, 0xff, first, [0xe0] * 12, [0x02] * 12, [0x23] * 12, [0xfd] * 3,
                       every))
    for i, c in enumerate((0x4c, 0x93, 0xd9)):
        add("cbfc", script(c, 0x05 + 9 * i, 0x22 + i, list(lcg_bytes(0xCBFC + i, 300 + 100 * i))))

    # pfc: speed/unit/pause length, lossless priorities, thresholds, VC map/ACK priority/XON;
    # 0xe0 + vc << 3 a frame of 512 bytes + the byte that follows, 0x01 an ACK, 0x02 +
    # priority << 3 a drain (a size byte follows), 0x03 a PFC frame reaches the sender, 0x04
    # tick both, 0x05 a PFC frame lost, 0x06 a foreign frame (its bytes follow), 0x07 tick one.
    add("pfc", script(0x00, 0x3C, 0x00, 0x90, [0xe0, 0x00] * 3, 0x03, [0xe0, 0x00],
                      [0x1a, 0x07] * 3, [0x03, 0xe0, 0x00]))
    add("pfc", script(0x40, 0x3C, 0x35, 0xd0, [0xe0, 0x40] * 3, [0x03, 0x3c] * 4,
                      [0x03, 0x05, 0x3c, 0x03, 0x1a, 0x7f, 0x03]))
    add("pfc", script(0x15, 0xff, 0x0f, 0x01, [0xe0, 0x10, 0xe8, 0x10, 0x03, 0x01, 0x01],
                      [0x0e, 0x00, 0x18], [0x01] + [0xff] * 7, [0x04, 0x03]))
    add("pfc", script(0xa2, 0x18, 0x88, 0x65, [0xe0, 0xff, 0xe8, 0xff] * 4, [0x05, 0x03],
                      [0x2f, 0x27] * 4, [0x03] * 4))
    for i, c in enumerate((0x31, 0x7a, 0xc4)):
        add("pfc", script(c, 0x3C ^ (i * 0x41), 0x20 * i + 7, 0x90 + i,
                          list(lcg_bytes(0x9FC + i, 300 + 100 * i))))

    # packer: limit (bits 0-2) and order (bit 3), VC weights; a push is 0x00 + vc << 3 (+ 0x20
    # send_now, + 0xc0 a broken command), then type | destination << 4, length, fill; 0x03 +
    # n << 3 toggles queue n (0xb3 all through, 0xfb all held), 0x04 too small a buffer, 0x05
    # a PDU with 1-3 cookies, 0x06 a PDU.
    def push(vc, typ, dest, length=7, fill=0x5C, flags=0):
        return [(vc << 3) | flags, typ | (dest << 4), length, fill]
    fig21 = script(push(0, 0, 1), push(0, 0, 2), push(0, 0, 0), push(0, 0, 2, 9), [0x06] * 4)
    add("packer", script(0x00, 0x55, list(fig21)))
    add("packer", script(0x08, 0xe4, list(fig21),
                         *[push(v, t, d) for v in range(4) for t, d in ((4, 0), (6, 1), (8, 2))],
                         [0x03, 0x0b, 0x06, 0x06, 0xb3], [0x06] * 6))
    add("packer", script(0x04, 0x55, *[push(0, 0, 0, 255) for _ in range(20)],
                         [0x04, 0x05, 0x0d, 0x06, 0x06]))
    add("packer", script(0x01, 0x1b, *[push(i % 4, i % 11, i % 3, i * 37 % 256,
                                            flags=0x20 * (i % 5 == 0)) for i in range(24)],
                         [0xfb, 0x06, 0x23, 0x06, 0x43, 0x06, 0xb3, 0x06]))
    add("packer", script(0x02, 0x00, *[push(0, t, 0, 3 + t, flags=0xc0) for t in range(16)],
                         push(1, 11, 0), push(2, 12, 3), [0x06] * 3))
    for i, c in enumerate((0x03, 0x0d, 0x06)):
        add("packer", script(c, 0x39 * (i + 1), list(lcg_bytes(0x9AC + i, 300 + 100 * i))))

    # instance: shape (bits 0-1 ports 1/2/4/4, 2 unordered, 3 LLR, 4 CBFC, 5-6 udp4/afh1-shim/
    # afh2c/SUE Lite, 7 R1's keying), timing (window, RTO, retries, ACK coalescing), command credits;
    # then events of side s (bit 3) and port p (bits 4-5): 0x00 + vc << 4 a command (+ 0x20
    # send_now; its byte: the data length, 0xc0 and above to XPU 3), 0x01 transmit (a fate
    # byte: 0-3 delivered, 4 lost, 5 a bad FCS, 6 a PDU byte changed, 7 duplicated; a position
    # byte), 0x02 the link's next arrival, 0x03 + k << 3 time passes by 2^k ns, 0x04 link down
    # (0x0c up), 0x05 the peer's plane down (0x45 up), 0x06 a management packet (length, bytes),
    # 0x07 a forged PDU (position, value; 0x47 raw bytes: length, bytes).
    def offer(side, vc, length=7, now=False):
        return [(side << 3) | (vc << 4) | (0x20 if now else 0), length]

    def tx(side, port, fate=0, where=0):
        return [0x01 | (side << 3) | (port << 4), fate, where]

    def arrive(side, port):
        return [0x02 | (side << 3) | (port << 4)]

    def wait(k):
        return [0x03 | (k << 3)]

    one_way = script(*[offer(0, 0, 3 * k) for k in range(10)], *[tx(0, 0)] * 4,
                     *[arrive(1, 0)] * 4, wait(10), tx(1, 0), arrive(0, 0), wait(12))
    add("instance", script(0x00, 0x35, 0x00, list(one_way)))
    both = script(*[offer(s, v, 20 + v) for s in (0, 1) for v in (0, 1)] * 3,
                  *[tx(s, p, f) for s in (0, 1) for p in (0, 1) for f in (0, 4, 5, 6)],
                  *[arrive(s, p) for s in (0, 1) for p in (0, 1)] * 4, wait(14), wait(14),
                  *[tx(s, p) + arrive(1 - s, p) for s in (0, 1) for p in (0, 1)] * 4)
    for shape in (0x01, 0x06, 0x0a, 0x19, 0x39, 0x5a, 0xc1, 0x61, 0x69, 0x7e):
        add("instance", script(shape, 0x9b, 0x00, list(both)))
    add("instance", script(0x01, 0x35, 0x24, list(both)))  # command credits
    route = script(*[offer(0, 0, 0xc4)] * 6, *[tx(0, 0), tx(0, 1)] * 6,
                   *[wait(13)] * 12)  # to XPU 3: retries, then unreachable
    add("instance", script(0x01, 0x05, 0x00, list(route)))
    churn = script(list(both), 0x04, [0x05, 0x15], list(both), 0x0c, 0x45, list(both),
                   0x07, 0x03, 0x99, 0x47, 0x20, list(lcg_bytes(0x1B5, 32)),
                   0x46, 0x30, list(lcg_bytes(0x1B6, 0x30 % 82 + 14)), list(both))
    for shape in (0x01, 0x0a, 0x1a, 0x22):
        add("instance", script(shape, 0xc6, 0x00, list(churn)))
    for i, c in enumerate((0x01, 0x09, 0x1e, 0x7a)):
        add("instance", script(c, 0x35 + i, 0x00, list(lcg_bytes(0x1A5 + i, 400 + 200 * i))))


def ip_reassembly_seeds(add):
    """Fragment scripts for ip_reassembly (the byte meanings are in fuzz/ip_reassembly.cpp):
    limits, then per fragment flags (bit 0 IPv6, 1 MF, 2-3 datagram, 4 cut short), offset in
    8-byte units (2 bytes), data length (2 bytes), time step."""
    def frag(flags, units, length, step=1):
        return bytes([flags, units >> 8, units & 0xFF, length >> 8, length & 0xFF, step])

    def datagram(flags, pieces, order):
        """A datagram of `pieces` fragments of 1480 bytes and a last of 40, in `order`."""
        fr = [frag(flags | (2 if k < pieces - 1 else 0), k * 185, 1480 if k < pieces - 1 else 40)
              for k in range(pieces)]
        return b"".join(fr[k] for k in order)

    add("ip_reassembly", bytes([0xFF]) + datagram(0, 3, [0, 1, 2]))
    add("ip_reassembly", bytes([0xFF]) + datagram(0, 3, [2, 0, 1]) + datagram(1, 3, [1, 2, 0]))
    add("ip_reassembly", bytes([0xFF]) + datagram(4, 4, [3, 2, 1, 0]) + datagram(9, 2, [1, 1, 0]))
    # Interleaved datagrams under tight limits, an overlap, a cut fragment, an old one.
    add("ip_reassembly", bytes([0x08]) + datagram(0, 3, [0]) + datagram(4, 3, [0, 1]) +
        datagram(8, 2, [1]) + frag(2, 90, 1480) + frag(0x12, 185, 1480) +
        frag(0, 370, 40, 255) + datagram(0, 3, [1, 2]))


def ipv4_fragments(fr, pieces, ident):
    """An Ethernet/IPv4 frame's datagram as `pieces` IPv4 fragments (8-byte aligned), in order:
    each a whole frame, padded to the Ethernet minimum."""
    ihl = (fr[14] & 0x0F) * 4
    total = struct.unpack(">H", fr[16:18])[0]
    body = fr[14 + ihl:14 + total]
    each = max(8, (len(body) // pieces + 7) // 8 * 8)
    out = []
    for start in range(0, len(body), each):
        part = body[start:start + each]
        more = start + len(part) < len(body)
        h = bytearray(fr[14:14 + ihl])
        h[2:4] = struct.pack(">H", ihl + len(part))
        h[4:6] = struct.pack(">H", ident)
        h[6:8] = struct.pack(">H", (0x2000 if more else 0) | (start // 8))
        h[10:12] = b"\0\0"
        h[10:12] = struct.pack(">H", ip_checksum(h))
        frame = fr[:14] + bytes(h) + part
        out.append(frame + bytes(max(0, 60 - len(frame))))
    return out


def ip_checksum(b):
    """RFC 1071 ones' complement sum of 16-bit words."""
    if len(b) % 2:
        b = bytes(b) + b"\0"
    s = sum(struct.unpack(">%dH" % (len(b) // 2), bytes(b)))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def with_options(pcap, a, b=0):
    """A pcap file with capture_session's options in the header's ignored thiszone field."""
    return pcap[:8] + bytes([a, b]) + pcap[10:]


def capture_session_seeds(add, caps):
    """Whole captures for capture_session: pcap files of consecutive frames (connections need
    their PDUs and ACKs in order), every link type, fragments, cut records, a pcapng file, and
    the option bits of the header's ignored fields (fuzz/capture_session.cpp)."""
    for name, n in [("basic", 12), ("afh2", 8), ("traffic", 16), ("session", 40),
                    ("session_lossy", 40), ("misbehave", 40), ("afh2c_session", 30),
                    ("tofu", 12), ("rdma", 6)]:
        link, frames = caps[name]
        add("capture_session", write_pcap(link, frames[:n]))
    link, frames = caps["session"]
    add("capture_session", with_options(write_pcap(link, frames[:30]), 0x10 | 0x40, 0x23))
    add("capture_session", with_options(write_pcap(link, frames[:30]), 0x01 | 0x04 | 0x08))
    add("capture_session", with_options(write_pcap(link, frames[:30]), 0x02 | 0x20, 0x1f))
    # Two dissecting threads over a lossy session: frames taken back in frame order.
    link, frames = caps["session_lossy"]
    add("capture_session", with_options(write_pcap(link, frames[:40]), 0x80 | 0x10, 0x04))
    # Records cut by a snapshot length of 80 bytes, as editcap -s 80 writes them.
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 80, link)
    for i, fr in enumerate(frames[:30]):
        out += struct.pack("<IIII", 1, i, min(len(fr), 80), len(fr)) + fr[:80]
    add("capture_session", out)
    # Every udp4 frame of the basic capture in fragments, some out of order.
    _, basic = caps["basic"]
    pieces = []
    for k, fr in enumerate(f for f in basic if f[12:14] == b"\x08\x00"):
        frags = ipv4_fragments(fr, 2 + k % 3, 0x100 + k)
        pieces += frags[::-1] if k % 2 else frags
    add("capture_session", write_pcap(1, pieces[:24]))
    # A pcapng file of session frames and a Tofu interface.
    _, tofu = caps["tofu"]
    add("capture_session", write_pcapng("<", [(1, 0, 9, "eth0"), (148, 0, None, "tofu")],
                                        [("epb", 0, 1700000000000000000 + 1000 * i, fr)
                                         for i, fr in enumerate(frames[:12])] +
                                        [("epb", 1, 1700000000000100000 + 1000 * i, fr)
                                         for i, fr in enumerate(tofu[:6])]))


def write_seeds(seeds):
    for target, items in seeds.items():
        d = os.path.join(CORPUS, target)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if f.startswith("gen-"):
                os.remove(os.path.join(d, f))
        for data in items:
            name = "gen-" + hashlib.sha1(data).hexdigest()[:16]
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
        print(f"{target}: {len(items)} seeds")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    seeds = {}

    def add(target, data):
        seeds.setdefault(target, []).append(bytes(data))

    state_machine_seeds(add)
    ip_reassembly_seeds(add)
    if sys.argv[1] == "--state-machines":
        write_seeds(seeds)
        return
    tool = sys.argv[1]

    with tempfile.TemporaryDirectory() as tmp:
        caps = {}
        for name, args in [("basic", ["basic"]),
                           ("afh2", ["basic", "--link", "afh2", "--encap", "afh2,afh2c,lite"]),
                           ("traffic", ["traffic", "--encap", "udp4,udp6,afh1,afh2,lite"]),
                           ("session", ["session", "--commands", "200"]),
                           ("session_lossy", ["session", "--commands", "200", "--xpus", "3",
                                              "--loss", "0.1", "--duplicate", "0.05",
                                              "--reorder", "0.05", "--corrupt", "0.02"]),
                           ("misbehave", ["session", "--commands", "100", "--xpus", "2",
                                          "--misbehave", "nack.once", "--loss", "0.1"]),
                           ("afh2c_session", ["session", "--commands", "100", "--xpus", "2",
                                              "--encap", "afh2c"]),
                           ("tofu", ["tofu"]),
                           ("rdma", ["rdma"])]:
            path = os.path.join(tmp, name + ".pcap")
            subprocess.run([tool, "gen", *args, "-o", path], check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            caps[name] = read_pcap(path)

    sel = {1: 0, 147: 1, 148: 2, 149: 3}
    for name, n in [("basic", 16), ("afh2", 6), ("traffic", 8), ("session", 6), ("tofu", 6),
                    ("rdma", 6)]:
        link, frames = caps[name]
        for i, fr in enumerate(spread(frames, n)):
            # Vary the option bits of the selector byte across the seeds. read_frame takes the
            # same input.
            seed = bytes([sel[link] | ((i % 8) << 2 if name == "basic" else 0)]) + fr
            add("dissect_frame", seed)
            add("read_frame", seed)

    _, rdma_frames = caps["rdma"]
    for fr in spread(rdma_frames, 16):
        add("rdma_packet", fr)

    for name in ("basic", "traffic", "session"):
        for fr in caps[name][1]:
            p = udp4_payload(fr)
            if p and len(seeds.get("unpacker", [])) < 24:
                add("unpacker", p)

    _, tofu_records = caps["tofu"]
    for start in range(0, min(len(tofu_records), 48), 6):
        group = tofu_records[start:start + 6]
        add("tofu_reassembly", b"\x00" + b"".join(struct.pack("<H", len(r)) + r for r in group))
    for lanes in (2, 4):
        # Direct mode: the slices of one frame laid end to end (equal sizes).
        group = tofu_records[:lanes]
        if len({len(r) for r in group}) == 1:
            add("tofu_reassembly", bytes([0x80 | (lanes == 4)]) + b"".join(r[4:] for r in group))

    # Headers: every type gets zeros or bytes taken from real frames.
    _, basic = caps["basic"]
    udp4 = [fr for fr in basic if fr[12:14] == b"\x08\x00"][:2]
    for t in range(len(HEADER_TYPES)):
        if t % 2:
            add("headers", bytes([t]) + bytes(64))
        else:
            src = udp4[t % len(udp4)] if udp4 else bytes(64)
            add("headers", bytes([t]) + src[(t * 7) % 40:][:64])
    in_place = [("wire::reliability_header", 42), ("wire::ethernet_header", 0),
                ("wire::ipv4_header", 14), ("wire::udp_header", 34)]
    for t, off in [(HEADER_TYPES.index(name), off) for name, off in in_place]:
        for fr in udp4:
            add("headers", bytes([t]) + fr[off:])

    for name in ("basic", "afh2", "tofu", "rdma", "traffic"):
        link, frames = caps[name]
        add("capture_reader", write_pcap(link, spread(frames, 3)))
    link, frames = caps["basic"]
    good = write_pcap(link, frames[:3])
    add("capture_reader", good[:24])            # header only
    add("capture_reader", good[:24 + 16 + 10])  # a record cut short
    # pcapng: interfaces of different link types and time stamp resolutions, every packet
    # block, a block to skip, two sections in different byte orders, and damage.
    _, afh2 = caps["afh2"]
    nrb = pcapng_block("<", 4, struct.pack("<HH", 0, 0))  # an empty name resolution block
    mixed = write_pcapng("<", [(1, 0, 9, "eth0"), (147, 96, None, ""), (148, 0, 0x80 | 20, "")],
                         [("epb", 0, 1700000000123456789, frames[0]),
                          ("epb", 1, 1700000000123456, afh2[0]), ("spb", 0, 0, frames[1]),
                          ("pb", 2, 1 << 40, caps["tofu"][1][0])], nrb)
    add("capture_reader", mixed)
    two = write_pcapng(">", [(1, 65535, 6, "")], [("epb", 0, 1700000000000001, frames[2])])
    two += write_pcapng("<", [(149, 0, 9, "rdma")],
                        [("epb", 0, 1700000000000000002, caps["rdma"][1][0])])
    add("capture_reader", two)
    damaged = bytearray(mixed)
    damaged[-4] ^= 0x04  # the last block's trailing length
    add("capture_reader", bytes(damaged))
    add("capture_reader", mixed[:len(mixed) - 30])  # a block cut short

    capture_session_seeds(add, caps)
    write_seeds(seeds)


if __name__ == "__main__":
    main()
