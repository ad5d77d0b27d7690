"""read(): the objects `scaleup dump --json` prints, frame for frame."""
import os

import pytest
import scaleup

from conftest import dump_json


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


def test_read_errors(tmp_path):
    with pytest.raises(OSError, match="absent.pcap: No such file or directory"):
        list(scaleup.read(str(tmp_path / "absent.pcap")))
    with pytest.raises(OSError, match="not a pcap or pcapng capture"):
        list(scaleup.read(__file__))
