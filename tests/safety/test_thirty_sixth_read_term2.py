"""The thirty-sixth read's second-wave term helper (term2): the first wave's new output through every lint format and
report, judged by what the run did to the file (`git apply` of `rewrite --diff`, the bytes on disk)."""

from __future__ import annotations

import os
import signal

import pytest

from tests.safety import test_thirty_third_read_term as term
from tests.safety.conftest import CUDA

from tests.safety.test_thirty_third_read_cache2 import _run

_IDX = "https://download.pytorch.org/whl/cu121"
_Q = "'\\''"

# DEP002 sites reported, not edited (cdleft's `sh -c` scripts bash decodes, a RUN's shell text that does not parse,
# cdleft2's here-document whose `\\` the shell reads): each said ": removed" in every format while `rewrite` left the
# option in the file
_UNEDITED = {
    "sh-c-decoded": ("Dockerfile", f"FROM python:3.11\nRUN sh -c 'pip install --index-url {_IDX} {_Q}torch{_Q}'\n"),
    "dollar-quoted": ("Dockerfile", f"FROM python:3.11\nRUN bash -c $'pip install --index-url {_IDX} torch'\n"),
    "no-parse": ("Dockerfile", f"FROM python:3.11\nRUN pip install --index-url {_IDX} torch && if then fi )\n"),
    "heredoc-escape": ("install.sh", f"#!/bin/sh\nbash <<EOF\npip install --index-url {_IDX} \\\n  torch\nEOF\n"),
}


def _dep002(tmp_path, name, text):
    result = _run(tmp_path, {name: text, "m.py": "import torch\nx = torch.zeros(2).cuda()\n"}, target="xla")[name]
    return [f for f in result.findings if f.code == "DEP002"], result


@pytest.mark.parametrize("name, text", list(_UNEDITED.values()), ids=list(_UNEDITED))
def test_a_dep002_reported_without_an_edit_does_not_say_removed(tmp_path, name, text):
    """`lint --output-format full` showed `DEP002 ... the target takes PyPI's torch: removed` (no `[*]`) and
    `rewrite` left the file as it was (`rewrite --diff` wrote no hunk for it): the message said an edit no run
    makes. A site without its edit is said without the removal's words."""
    found, result = _dep002(tmp_path, name, text)
    assert found and all(f.replacement is None for f in found), found
    assert [f.message for f in found if f.message.endswith("removed")] == [], found
    assert all(f.message.endswith("the target takes PyPI's torch") for f in found), found
    assert (result.new_source or result.original_source) == result.original_source


def test_a_dep002_that_removes_its_option_still_says_removed(tmp_path):
    """The control: `RUN pip install --index-url URL torch` loses the option, and says so."""
    found, result = _dep002(tmp_path, "Dockerfile", f"FROM python:3.11\nRUN pip install --index-url {_IDX} torch\n")
    assert [f.replacement for f in found] == [""] and found[0].message.endswith(": removed"), found
    assert b"--index-url" not in (result.new_source or b"x --index-url")


def test_an_index_url_in_escaped_quotes_of_a_sh_c_script_is_said(tmp_path):
    """`sh -c "pip install --index-url \\"URL\\" torch"`: bash runs `pip install --index-url URL torch` (the
    escapes quote the URL for the inner shell). The script was read with each escape's `\\` a blank, which put a
    blank inside the inner quotes: the value `URL ` matched no index, and no DEP002 was said in any format. Read as
    bash decodes it now, reported at the characters it is written with, not edited."""
    text = f'#!/bin/sh\nsh -c "pip install --index-url \\"{_IDX}\\" torch"\n'
    found, result = _dep002(tmp_path, "install.sh", text)
    assert [(f.start.line, f.replacement, f.message.endswith("PyPI's torch")) for f in found] == [(2, None, True)]
    assert _IDX in text.splitlines()[1][found[0].start.column : found[0].end.column]


def test_a_sh_c_script_with_an_escape_elsewhere_is_read_as_before(tmp_path):
    """The control: `sh -c "echo \\"hi\\" && pip install $X --index-url URL torch"` (the thirty-fifth read's form)."""
    text = f'#!/bin/sh\nsh -c "echo \\"hi\\" && pip install $X --index-url {_IDX} torch"\n'
    found, result = _dep002(tmp_path, "install.sh", text)
    assert [(f.start.line, f.start.column, f.replacement) for f in found] == [(2, 36, None)], found


@pytest.mark.skipif(not hasattr(signal, "SIGQUIT"), reason="Ctrl-\\ is SIGQUIT where there is one")
def test_ctrl_backslash_during_the_progress_bar_quits_at_once_and_leaves_the_cursor_shown(tmp_path):
    """Ctrl-\\ (SIGQUIT to the terminal's job) while `rewrite`'s bar draws: porter ends by the signal's default
    action, at once, where no handler runs; rich's bar had hidden the cursor (`ESC[?25l`, never shown again): the
    shell came back with no cursor. The bar leaves the cursor shown now (as cargo's and uv's do), so no end of
    porter's can leave it hidden; the run still quits at once (the signal's own exit)."""
    (tmp_path / "m.py").write_bytes(CUDA)
    hook, marker = tmp_path / "hook", tmp_path / "drawing"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(
        # (SIGQUIT's default restored and unblocked: a test runner's worker may ignore or block it, and porter
        # inherit that; a shell starts a job with the default)
        "import resource, signal\nresource.setrlimit(resource.RLIMIT_CORE, (0, 0))\n"
        "signal.signal(signal.SIGQUIT, signal.SIG_DFL)\nsignal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGQUIT})\n"
        + term._FIRST_DRAW_WAITS.format(marker=str(marker))
    )
    argv = ["rewrite", "m.py", "-t", "xla", "--diff", "--jobs", "1", "--allow-no-vcs"]
    proc, leader = term._on_a_terminal(argv, tmp_path, hook)
    try:
        out = term._read_all(proc, leader, until=marker.exists)
        assert proc.poll() is None, out
        proc.send_signal(signal.SIGQUIT)
        out += term._read_all(proc, leader)
        code = proc.wait(timeout=300)
    finally:
        os.close(leader)
    assert code == -signal.SIGQUIT, out
    assert b"\x1b[?25l" not in out, out  # the cursor never hidden
    assert (tmp_path / "m.py").read_bytes() == CUDA


_ENV001_UNEDITED = {
    "no-parse": "FROM python:3.11\nRUN CUDA_VISIBLE_DEVICES=0 python x.py && if then fi )\n",
    "sh-c-decoded": f"FROM python:3.11\nRUN sh -c 'CUDA_VISIBLE_DEVICES=0 python {_Q}x.py{_Q}'\n",
}


@pytest.mark.parametrize("text", list(_ENV001_UNEDITED.values()), ids=list(_ENV001_UNEDITED))
def test_an_env001_reported_without_an_edit_does_not_say_becomes(tmp_path, text):
    """On Neuron, ENV001 said "`CUDA_VISIBLE_DEVICES=0` becomes `NEURON_RT_VISIBLE_CORES=0`" of a RUN whose shell text
    does not parse or a script bash decodes, where the reader drops the edit and `rewrite` leaves the line: said
    now as what the variable is on the target, without an edit."""
    result = _run(tmp_path, {"Dockerfile": text, "m.py": "import torch\n"}, target="neuron")["Dockerfile"]
    found = [f for f in result.findings if f.code == "ENV001"]
    assert [(f.replacement, "becomes" in f.message) for f in found] == [(None, False)], found
    assert "`NEURON_RT_VISIBLE_CORES=0` on the target" in found[0].message, found


def test_an_env001_with_its_edit_still_says_becomes(tmp_path):
    """The control: `RUN CUDA_VISIBLE_DEVICES=0 python x.py` is rewritten, and says so."""
    text = "FROM python:3.11\nRUN CUDA_VISIBLE_DEVICES=0 python x.py\n"
    result = _run(tmp_path, {"Dockerfile": text, "m.py": "import torch\n"}, target="neuron")["Dockerfile"]
    assert [(f.replacement, "becomes" in f.message) for f in result.findings if f.code == "ENV001"] == [
        ("NEURON_RT_VISIBLE_CORES=0", True)
    ]
