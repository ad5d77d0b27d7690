"""The README's builders example, run as it is: it must print what the README says it prints
(the comment lines that end it)."""
import contextlib
import io
import os
import re

from conftest import SOURCE


def readme_example():
    with open(os.path.join(SOURCE, "README.md"), encoding="utf-8") as f:
        blocks = re.findall(r"```python\n(.*?)```", f.read(), re.S)
    found = [b for b in blocks if "scaleup.frame(" in b]
    assert len(found) == 1, f"{len(found)} README blocks build frames"
    return found[0]


def test_readme_builders_example(tmp_path, monkeypatch):
    code = readme_example()
    lines = code.rstrip("\n").split("\n")
    printed = []
    while lines and lines[-1].startswith("# "):
        printed.insert(0, lines.pop()[2:])
    assert printed, "the example ends with no output shown"
    monkeypatch.chdir(tmp_path)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {})  # noqa: S102 (the README's own code)
    assert out.getvalue().splitlines() == printed
