#!/usr/bin/env python3
"""Rebuilds the seed corpora under fuzz/corpus/ from captures the scaleup tool writes.

usage: fuzz/make_corpus.py PATH/TO/scaleup

Seeds are small and deterministic (fixed generator seeds); rerunning replaces the generated
files (named gen-*) and keeps every other file, such as the reproducers of past findings.
"""
import hashlib
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CORPUS = os.path.join(HERE, "corpus")
HEADER_TYPES = 41  # entries of dissect::tables (fuzz/headers.cpp checks the count)


def read_pcap(path):
    """(link type, [frame bytes]) of a little-endian microsecond pcap."""
    with open(path, "rb") as f:
        d = f.read()
    magic, _, _, _, _, _, link = struct.unpack("<IHHiIII", d[:24])
    assert magic == 0xA1B2C3D4, "expected a little-endian pcap"
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


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    tool = sys.argv[1]
    seeds = {}

    def add(target, data):
        seeds.setdefault(target, []).append(bytes(data))

    with tempfile.TemporaryDirectory() as tmp:
        caps = {}
        for name, args in [("basic", ["basic"]),
                           ("afh2", ["basic", "--link", "afh2", "--encap", "afh2,afh2c,lite"]),
                           ("traffic", ["traffic", "--encap", "udp4,udp6,afh1,afh2,lite"]),
                           ("session", ["session", "--commands", "200"]),
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
            # Vary the option bits of the selector byte across the seeds.
            add("dissect_frame", bytes([sel[link] | ((i % 8) << 2 if name == "basic" else 0)]) + fr)

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
    for t in range(HEADER_TYPES):
        if t % 2:
            add("headers", bytes([t]) + bytes(64))
        else:
            src = udp4[t % len(udp4)] if udp4 else bytes(64)
            add("headers", bytes([t]) + src[(t * 7) % 40:][:64])
    for t, off in [(0, 42), (1, 0), (3, 14), (5, 34)]:  # RH, Ethernet, IPv4, UDP in place
        for fr in udp4:
            add("headers", bytes([t]) + fr[off:])

    rng = 12345
    for i in range(16):
        data = bytearray()
        for _ in range(64 + 16 * i):
            rng = (rng * 1103515245 + 12345) & 0x7FFFFFFF
            data.append((rng >> 16) & 0xFF)
        data[0] = i * 16 + (i % 16)
        add("gbn", data)

    for name in ("basic", "afh2", "tofu", "rdma", "traffic"):
        link, frames = caps[name]
        add("capture_reader", write_pcap(link, spread(frames, 3)))
    link, frames = caps["basic"]
    good = write_pcap(link, frames[:3])
    add("capture_reader", good[:24])            # header only
    add("capture_reader", good[:24 + 16 + 10])  # a record cut short

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


if __name__ == "__main__":
    main()
