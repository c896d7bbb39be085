"""tests/busy.py: a command run beside one spinning process per core, with its own exit code."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="reads /proc (Linux)")


def test_busy_runs_the_command_beside_spinning_processes_and_returns_its_code():
    # the command sees its siblings: the spinning process(es) its parent started beside it
    probe = ("import os, sys; ppid = os.getppid(); "
             "kids = open(f'/proc/{ppid}/task/{ppid}/children').read().split(); "
             "print('siblings', len(kids) - 1); sys.exit(3)")
    done = subprocess.run([sys.executable, "-m", "tests.busy", "--workers", "1", "--", sys.executable, "-c", probe],
                          cwd=REPO, capture_output=True, text=True, timeout=60)
    assert done.returncode == 3, done.stderr
    assert int(done.stdout.split()[-1]) >= 1 and "1 spinning process(es) beside it" in done.stderr
    bad = subprocess.run([sys.executable, "-m", "tests.busy"], cwd=REPO, capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "give the command to run" in bad.stderr
