"""How the build ends a worker that does not end when its stdin closes (handles.end_process):
SIGTERM first, SIGKILL only if that does not end it, on a stand-in process, no worker started.
The worker's end mid-build, in real builds: tests/build/test_worker_dies.py."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest


@pytest.mark.parametrize("on_sigterm", ["ends", "ignores it"])
def test_a_worker_stuck_at_close_gets_sigterm_before_sigkill(tmp_path, monkeypatch, on_sigterm):
    """A worker that does not end when its stdin closes gets SIGTERM first, whose handler (the
    zygote's) ends its runs' process groups with what snippets started there; SIGKILL only if
    that does not end it either. The stuck worker is a stand-in: a real process that ignores
    its stdin and notes the SIGTERM it gets."""
    from sphinx_autocast_demo.engine.parent import handles

    monkeypatch.setattr(handles, "CLOSE_GRACE", 2.0)
    marker = tmp_path / "sigterm"
    script = (f"import signal, sys, time\n"
              f"def heard(*_):\n    open({str(marker)!r}, 'w').close()\n"
              f"    {'sys.exit(0)' if on_sigterm == 'ends' else 'pass'}\n"
              "signal.signal(signal.SIGTERM, heard)\nprint('up', flush=True)\n"
              "while True:\n    time.sleep(0.05)\n")
    proc = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"up\n"  # handler in place
        handles.end_process(proc, warmed=True)
        assert marker.exists()
        assert proc.returncode == (0 if on_sigterm == "ends" else -signal.SIGKILL)
    finally:
        if proc.poll() is None:
            proc.kill()
