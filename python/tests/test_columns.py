"""columns(): the values of `scaleup dump -T fields`, typed, as numpy arrays."""
import math
import os

import pytest
import scaleup

from conftest import tool

FIELDS = ["frame.number", "frame.time_relative", "encap", "ip.src", "vlan.id", "sue.rh.npsn",
          "sue.rcrc.status", "sue.cmd.type", "afh1.dst_xpu"]


def missing(col, i):
    """The convention: masked in a numeric column, None in an object one."""
    return bool(col.mask[i]) if hasattr(col, "mask") else col[i] is None


def same(got, text):
    """A value against -T fields' text (hex fields compared as numbers)."""
    if text.startswith("0x"):
        return int(got) == int(text, 16)
    if isinstance(got, float):
        return got == float(text) and not math.isnan(got)
    return ("" if got is None else str(got)) == text


def test_columns_are_dump_fields(captures):
    for p in captures:
        rows = [line.split("\t") for line in
                tool("dump", "-T", "fields", "-E", "separator=/t",
                     *[a for f in FIELDS for a in ("-e", f)], p).splitlines()]
        cols = scaleup.columns(p, FIELDS)
        assert list(cols) == FIELDS, "columns are not in the order asked"
        first = scaleup.columns(p, FIELDS, occurrence=1)
        for k, name in enumerate(FIELDS):
            col, want = cols[name], [r[k] for r in rows]
            assert len(col) == len(want), f"{name}: {len(col)} frames, dump {len(want)}"
            for i, text in enumerate(want):
                values = text.split(",") if text else []
                v = col[i]
                got = list(v) if isinstance(v, tuple) else [] if missing(col, i) else [v]
                assert len(got) == len(values), f"{p} {name} frame {i + 1}: {got} vs '{text}'"
                for g, t in zip(got, values):
                    assert same(g, t), f"{p} {name} frame {i + 1}: {g!r} vs '{t}'"
                assert missing(first[name], i) == (not values), \
                    f"{name} frame {i + 1}: occurrence=1 missing differs"
        assert str(cols["sue.rh.npsn"].dtype) == "uint64"
        if os.path.basename(p) != "basic.pcap":
            assert bool(cols["afh1.dst_xpu"].mask.all()), "a field no frame has is not masked"


def test_columns_errors(captures, tmp_path):
    with pytest.raises(OSError, match="absent.pcap: No such file or directory"):
        scaleup.columns(str(tmp_path / "absent.pcap"), ["sue.rh.npsn"])
    with pytest.raises(ValueError) as e:
        scaleup.columns(captures[0], ["sue.nope"])
    assert str(e.value) == "-e: no field is named 'sue.nope'"
