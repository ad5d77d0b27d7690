#!/usr/bin/env python3
"""An Ethernet pcap rewritten as a Linux cooked capture (SLL v1, link type 113), frame by frame.

`editcap -T linux-sll` only relabels the link type: the Ethernet header stays and is then read
as a cooked header, which it is not. Here each Ethernet header (destination, source, type)
becomes the 16-byte cooked header a Linux `any` capture writes for it: packet type 4 (sent by
this host), ARPHRD_ETHER, the 6-byte source address padded to 8, the same type. The time stamps,
their resolution and everything after the Ethernet header are kept.

    linux_sll.py IN.pcap OUT.pcap
"""
import struct
import sys


def main(src, dst):
    with open(src, "rb") as f:
        data = f.read()
    for order in "<>":
        if struct.unpack(order + "I", data[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D):
            break
    else:
        sys.exit(f"{src}: not a pcap file")
    snap, link = struct.unpack(order + "II", data[16:24])
    if link != 1:
        sys.exit(f"{src}: link type {link}, not Ethernet (1)")
    out = [data[:16], struct.pack(order + "II", snap + 2, 113)]
    off = 24
    while off + 16 <= len(data):
        sec, frac, incl, orig = struct.unpack_from(order + "IIII", data, off)
        frame = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if incl < 14:
            sys.exit(f"{src}: a frame of {incl} bytes has no Ethernet header")
        cooked = struct.pack(">HHH6s2s", 4, 1, 6, frame[6:12], b"\0\0") + frame[12:]
        out.append(struct.pack(order + "IIII", sec, frac, incl + 2, orig + 2))
        out.append(cooked)
    with open(dst, "wb") as f:
        f.write(b"".join(out))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: linux_sll.py IN.pcap OUT.pcap")
    main(*sys.argv[1:])
