"""read(): the objects `scaleup dump --json` prints, frame for frame."""
import os
import threading

import pytest
import scaleup

from conftest import dump_json, tool


def test_read_is_dump_json(captures):
    for p in captures:
        want = dump_json(p)
        got = list(scaleup.read(p))
        assert len(got) > 0, p
        assert got == want, f"{os.path.basename(p)}: read() differs from dump --json"


def test_threads_and_early_close(captures):
    session = captures[1]
    assert list(scaleup.read(session, threads=1)) == dump_json(session)
    it = scaleup.read(session)  # a generator left early stops the reading
    next(it)
    it.close()
    with scaleup.read(session) as frames:
        assert next(frames)["frame"] == 1


def test_close_ends_the_frames(captures):
    """No frame after close(), though the reading had batches queued."""
    session = captures[1]
    it = scaleup.read(session, threads=1)
    assert next(it)["frame"] == 1
    it.close()
    assert list(it) == []
    with scaleup.read(session) as frames:
        next(frames)
    assert list(frames) == []


def test_one_thread_at_a_time(captures):
    """A Frames object iterated by several Python threads: a thread that finds it busy gets
    ValueError (as a generator raises), and every frame is read once."""
    session = captures[1]
    want = [f["frame"] for f in dump_json(session)]
    got, refused, lock = [], [], threading.Lock()
    frames = scaleup.read(session)

    def take():
        while True:
            try:
                f = next(frames)
            except StopIteration:
                return
            except ValueError as e:
                with lock:
                    refused.append(str(e))
                continue
            with lock:
                got.append(f["frame"])

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hangs"
    assert sorted(got) == want
    assert all(r == "Frames already executing (one thread at a time)" for r in refused)


def test_read_errors(tmp_path):
    with pytest.raises(OSError, match="absent.pcap: No such file or directory"):
        list(scaleup.read(str(tmp_path / "absent.pcap")))
    with pytest.raises(OSError, match="not a pcap or pcapng capture"):
        list(scaleup.read(__file__))
    # What dump refuses, with its text.
    with pytest.raises(ValueError, match=r"^--udp-port: 127329 is not a port \(1 to 65535\)$"):
        scaleup.read(__file__, udp_port=[127329])
    with pytest.raises(ValueError, match=r"^--udp-port: 0 is not a port"):
        scaleup.columns(__file__, ["frame.number"], udp_port=[0])
    with pytest.raises(ValueError, match=r"^--threads: 65 is not 1 to 64$"):
        scaleup.read(__file__, threads=65)


def test_port_by_interface(tmp_path):
    """A pcapng of four planes (PDUs spread over them): the rules a display filter names key
    connections by capture interface with port_by_interface, as dump --port-by-interface does;
    without it the planes' PSN spaces mix and the rules fire."""
    path = str(tmp_path / "planes.pcapng")
    tool("gen", "session", "--xpus", "8", "--ports", "4", "--unordered", "--loss", "0.01",
         "--commands", "3000", "--seed", "4", "-o", path)
    flt = "sue.check.gbn.resend || sue.check.ack.monotonic"
    mixed = list(scaleup.read(path, display_filter=flt))
    assert len(mixed) > 100 and mixed == dump_json(path, "-Y", flt)
    assert list(scaleup.read(path, display_filter=flt, port_by_interface=True)) == []
    cols = scaleup.columns(path, ["frame.number"], display_filter=flt, port_by_interface=True)
    assert len(cols["frame.number"]) == 0
