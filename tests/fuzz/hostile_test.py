#!/usr/bin/env python3
"""Hostile capture files for the scaleup CLI: damaged or absurd pcaps must give a clear
message and exit code 1 (or be dissected with errors and exit 0), never a crash, and the frames
before the damage must still be dissected.

usage: hostile_test.py PATH/TO/scaleup
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

FRAME_LINE = re.compile(r"^\s*(\d+)\s+-?\d+\.\d+\s")  # No. and Time, as tshark's columns


def pcap(frames, link=1, snaplen=65535, lens=None):
    out = struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, snaplen, link)
    for i, fr in enumerate(frames):
        orig = lens[i] if lens else len(fr)
        out += struct.pack("<IIII", 1, i, len(fr), orig) + fr
    return out


def run(tool, *args):
    r = subprocess.run([tool, *args], capture_output=True, text=True, timeout=60)
    if r.returncode < 0 or r.returncode > 2:
        raise AssertionError(f"{args}: exit {r.returncode} (crash?)\n{r.stderr[-2000:]}")
    for line in r.stderr.splitlines():
        if "runtime error" in line or "Sanitizer" in line:
            raise AssertionError(f"{args}: sanitizer report\n{r.stderr[-2000:]}")
    return r


def frames_shown(stdout):
    return [int(m.group(1)) for m in map(FRAME_LINE.match, stdout.splitlines()) if m]


def main():
    tool = sys.argv[1]
    failures = []

    def case(name, fn):
        try:
            fn()
            print(f"ok   {name}")
        except AssertionError as e:
            failures.append(name)
            print(f"FAIL {name}: {e}")

    with tempfile.TemporaryDirectory() as tmp:
        base = os.path.join(tmp, "base.pcap")
        subprocess.run([tool, "gen", "basic", "-o", base, "--encap", "udp4", "--count", "6"],
                       check=True, capture_output=True)
        with open(base, "rb") as f:
            good = f.read()
        # Record boundaries of the good capture.
        bounds, at = [], 24
        while at + 16 <= len(good):
            incl = struct.unpack("<I", good[at + 8:at + 12])[0]
            bounds.append((at, incl))
            at += 16 + incl
        n = len(bounds)

        def write(name, data):
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(data)
            return path

        def expect_error(path, pattern, before):
            for cmd in (["dump", path], ["dump", "--json", path], ["stats", path]):
                r = run(tool, *cmd)
                assert r.returncode == 1, f"{cmd[0]}: exit {r.returncode}, expected 1"
                err = r.stderr.strip()
                assert err.startswith("scaleup: "), f"unclear message: {err!r}"
                assert re.search(pattern, err), f"message {err!r} lacks {pattern!r}"
            shown = frames_shown(run(tool, "dump", path).stdout)
            assert shown == list(range(1, before + 1)), f"frames before the damage: {shown}"

        def truncated_record():
            at, incl = bounds[-1]
            expect_error(write("trunc.pcap", good[:at + 16 + incl // 2]), "truncated", n - 1)

        def truncated_record_header():
            at, _ = bounds[-1]
            expect_error(write("trunc-hdr.pcap", good[:at + 7]), "truncated", n - 1)

        def absurd_caplen():
            at, _ = bounds[2]
            b = bytearray(good)
            b[at + 8:at + 12] = struct.pack("<I", 0xFFFFFFF0)
            expect_error(write("caplen.pcap", bytes(b)), "capture length|caplen", 2)

        def caplen_above_snaplen():
            # Within the reader's maximum, a record longer than the snaplen is read (as libpcap
            # does); either way, no crash and every frame before it shown.
            frames = [good[a + 16:a + 16 + i] for a, i in bounds]
            first_big = next(k for k, f in enumerate(frames) if len(f) > 100)
            r = run(tool, "dump", write("snap.pcap", pcap(frames, snaplen=100)))
            if r.returncode == 1:
                assert r.stderr.startswith("scaleup: "), r.stderr
                assert frames_shown(r.stdout) == list(range(1, first_big + 1))
            else:
                assert r.returncode == 0 and len(frames_shown(r.stdout)) >= first_big

        def absurd_snaplen():
            for snap in (0, 0xFFFFFFFF):
                b = bytearray(good)
                b[16:20] = struct.pack("<I", snap)
                r = run(tool, "dump", write("snaplen.pcap", bytes(b)))
                assert r.returncode in (0, 1), f"snaplen {snap}: exit {r.returncode}"
                if r.returncode == 1:
                    assert r.stderr.startswith("scaleup: "), r.stderr
                else:
                    assert frames_shown(r.stdout) == list(range(1, n + 1))

        def unknown_link():
            frames = [good[a + 16:a + 16 + i] for a, i in bounds]
            r = run(tool, "dump", write("link.pcap", pcap(frames, link=200)))
            assert r.returncode == 0, f"exit {r.returncode}: {r.stderr}"
            assert frames_shown(r.stdout) == list(range(1, n + 1))
            assert "unknown" in r.stdout and "error" in r.stdout
            r = run(tool, "dump", "-v", write("link.pcap", pcap(frames, link=200)))
            assert "link type" in r.stdout, "verbose output does not name the problem"

        def zero_length_frames():
            for link in (1, 147, 148, 149):
                r = run(tool, "dump", "-v", write("zero.pcap", pcap([b"", b"", b""], link=link)))
                assert r.returncode == 0, f"link {link}: exit {r.returncode}: {r.stderr}"
                assert frames_shown(run(tool, "dump", write("zero.pcap", pcap(
                    [b"", b"", b""], link=link))).stdout) == [1, 2, 3]
                run(tool, "stats", write("zero.pcap", pcap([b""], link=link)))

        def huge_frames():
            big = bytes(range(256)) * 1024  # 262144 bytes, the reader's maximum
            for link in (1, 147, 148, 149):
                path = write("huge.pcap", pcap([big, b"\xff" * 65535], link=link, snaplen=262144))
                r = run(tool, "dump", "--json", path)
                assert r.returncode == 0, f"link {link}: exit {r.returncode}: {r.stderr}"
                assert len(r.stdout.splitlines()) >= 2

        def cut_by_snaplen():
            # Frames recorded shorter than on the wire: dissected, and flagged as cut.
            frames = [good[a + 16:a + 16 + i][:40] for a, i in bounds]
            lens = [i for _, i in bounds]
            r = run(tool, "dump", "-v", write("cut.pcap", pcap(frames, snaplen=40, lens=lens)))
            assert r.returncode == 0, r.stderr
            assert "snapshot length" in r.stdout

        def not_a_capture():
            for name, data in [("empty", b""), ("garbage", b"hello, this is not a capture\n" * 4),
                               ("header-only-short", good[:12])]:
                r = run(tool, "dump", write(name, data))
                assert r.returncode == 1, f"{name}: exit {r.returncode}"
                assert r.stderr.startswith("scaleup: "), f"{name}: {r.stderr!r}"
            r = run(tool, "dump", write("header-only", good[:24]))
            assert r.returncode == 0 and frames_shown(r.stdout) == [], r.stderr
            r = run(tool, "dump", os.path.join(tmp, "does-not-exist.pcap"))
            assert r.returncode == 1 and r.stderr.startswith("scaleup: ")

        case("truncated record", truncated_record)
        case("truncated record header", truncated_record_header)
        case("absurd caplen", absurd_caplen)
        case("caplen above snaplen", caplen_above_snaplen)
        case("absurd snaplen", absurd_snaplen)
        case("unknown link type", unknown_link)
        case("zero-length frames", zero_length_frames)
        case("huge frames", huge_frames)
        case("frames cut by the snaplen", cut_by_snaplen)
        case("not a capture", not_a_capture)

    if failures:
        print(f"{len(failures)} hostile-file case(s) failed: {', '.join(failures)}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
