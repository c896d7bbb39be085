"""A real `kata submit`, interrupted or killed mid-grading, leaves no grading process behind."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

HOSTILE = Path(__file__).resolve().parent / "fixtures" / "hostile"


def grading_processes(marker: str) -> list[int]:
    """Live (not zombie) grading processes whose command line names a path under `marker` (the
    TMPDIR given to `kata`, where each run's private copy lives; the child's environment is an
    allowlist, so a marker there would not reach it)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
            if marker.encode() not in cmdline or b"--kata-events" not in cmdline:
                continue
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_killing_kata_submit_leaves_no_grading_process(fixture_workbook, isolated_state, sig,
                                                         tmp_path):
    marker = tmp_path / f"tmp-{uuid.uuid4().hex}"
    marker.mkdir()
    env = dict(os.environ, TMPDIR=str(marker), KATA_ORPHAN_MARKER=str(marker))
    run = [sys.executable, "-m", "kata"]
    subprocess.run([*run, "start", "adder"], env=env, check=True, capture_output=True)
    shutil.copyfile(HOSTILE / "all_c_loops.py", isolated_state / "workspace" / "adder.py")
    kata = subprocess.Popen([*run, "submit", "adder"], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not grading_processes(env["KATA_ORPHAN_MARKER"]):
            assert time.monotonic() < deadline, "the grading child never started"
            assert kata.poll() is None, kata.communicate()
            time.sleep(0.1)
        time.sleep(1.0)  # well inside the first test, which loops in C
        kata.send_signal(sig)
        kata.wait(timeout=10)
        time.sleep(3.0)
        assert grading_processes(env["KATA_ORPHAN_MARKER"]) == []
        if sig == signal.SIGINT:
            assert kata.returncode == 130 and b"interrupted" in kata.stderr.read()
    finally:
        if kata.poll() is None:
            kata.kill()
        for pid in grading_processes(env["KATA_ORPHAN_MARKER"]):
            os.kill(pid, signal.SIGKILL)
