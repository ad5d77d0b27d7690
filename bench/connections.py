#!/usr/bin/env python3
"""A capture of N SUE connections over IPv4 UDP, for the memory row of bench/tools.sh.

Connection i runs from 10.a.b.c (i + 1 spread over the last three octets) to 10.255.255.254,
each its own UDP flow (source port 1024 + i % 60000, destination port PORT): two data PDUs (PSNs
0 and 1, 8 payload bytes) and a stand-alone ACK of PSN 1 from the destination, the common case of
a short connection. The connections' frames come in three rounds (every first PDU, every second,
every ACK), so all N connections are open at once. 3 N frames, 1 us apart.

With --acked, a connection's one PDU (PSN 0) is followed at once by its ACK: what a connection
keeps once nothing of it is in flight (its counters, key and RTT), without the PSNs in flight
the three rounds hold at their peak. 2 N frames.

    connections.py [--acked] N OUT.pcap [PORT]

The destination port is not SUE's (4793) unless given: the flows are then found by their
plausible RH and good R-CRC, and kept in the table of UDP flows too.
"""
import struct
import sys
import zlib


def rh(op, xpuid, npsn, apsn):
    """The 8-byte RH of R2 Table 5 (ver 0, VC 0, partition 0)."""
    return struct.pack(">II", (op << 28) | (xpuid << 16) | npsn, apsn)


def ip_sum(header):
    s = sum(struct.unpack(">10H", header))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def main(n, out, port, acked=False):
    eth = b"\x02\0\0\0\0\x02\x02\0\0\0\0\x01\x08\x00"
    dst_ip = bytes([10, 255, 255, 254])
    payload = bytes(range(1, 9))
    t = 0
    with open(out, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 65535, 1))
        rounds = [("pdu0", "ack")] if acked else [("pdu0",), ("pdu1",), ("ack",)]
        for whats in rounds:
            chunk = []
            for i, what in ((i, w) for i in range(n) for w in whats):
                k = i + 1
                src_ip = bytes([10, (k >> 16) & 0xFF, (k >> 8) & 0xFF, k & 0xFF])
                sport = 1024 + i % 60000
                if what == "ack":
                    body = rh(0, 1000, 0, 0 if acked else 1)  # op ACK, apsn 0 or 1; no payload
                    a, b, pa, pb = dst_ip, src_ip, port, sport
                else:
                    body = rh(2, i % 1024, 0 if what == "pdu0" else 1, 0) + payload
                    a, b, pa, pb = src_ip, dst_ip, sport, port
                pdu = body + struct.pack(">I", zlib.crc32(body))
                udp = struct.pack(">HHHH", pa, pb, 8 + len(pdu), 0) + pdu
                ip = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, 17, 0, a, b)
                ip = ip[:10] + struct.pack(">H", ip_sum(ip)) + ip[12:]
                frame = eth + ip + udp
                t += 1
                chunk.append(struct.pack("<IIII", 1_000_000 + t // 1_000_000, t % 1_000_000,
                                         len(frame), len(frame)) + frame)
                if len(chunk) == 65536:
                    f.write(b"".join(chunk))
                    chunk = []
            f.write(b"".join(chunk))


if __name__ == "__main__":
    args = sys.argv[1:]
    acked = "--acked" in args
    args = [a for a in args if a != "--acked"]
    if len(args) not in (2, 3):
        sys.exit("usage: connections.py [--acked] N OUT.pcap [PORT]")
    main(int(args[0]), args[1], int(args[2]) if len(args) == 3 else 47990, acked)
