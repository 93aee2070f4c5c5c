"""The README's library example runs and says what it claims."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_library_example_runs(capsys):
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"```python\n(.+?)\n```", text, flags=re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    eer, lid_max, tag, alid = capsys.readouterr().out.split()
    assert float(eer) >= 0.45 and float(lid_max) > 1.0 and tag in "0ABCDEF"
    assert abs(float(alid)) < 1.0
