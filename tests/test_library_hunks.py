"""benchmarks/library_hunks.py: the hunk ids, the fixed-seed sample and the verdict data that
docs/library-hunks.md is rendered from (the ports themselves are the benchmark's, not run here)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

import library_hunks as lh  # noqa: E402 - found through the sys.path entry above

DIFF = """\
--- a/pkg/a.py
+++ b/pkg/a.py
@@ -10,3 +10,3 @@
 import torch
-x = torch.zeros(2).cuda()
+x = torch.zeros(2).to("neuron")
 y = 1
@@ -40,4 +40,3 @@
 def f():
--- a comment that starts like a file header
-    torch.cuda.synchronize()
+    torch.accelerator.synchronize()
     return 1
--- a/pkg/b.py
+++ b/pkg/b.py
@@ -1,1 +1,1 @@
-d = "cuda"
+d = "neuron"
"""


def test_hunks_and_their_ids():
    hunks = lh.parse_hunks("lib", DIFF)
    assert [(h.path, h.old_start, h.first_line) for h in hunks] == [
        ("pkg/a.py", 10, 11),
        ("pkg/a.py", 40, 41),
        ("pkg/b.py", 1, 1),
    ]
    assert hunks[1].removed == ["-- a comment that starts like a file header\n", "    torch.cuda.synchronize()\n"]
    # the id is the text's, not the position's: the same change elsewhere in the file keeps it
    moved = lh.parse_hunks("lib", DIFF.replace("@@ -10,3 +10,3 @@", "@@ -12,3 +12,3 @@"))
    assert [h.id for h in moved] == [h.id for h in hunks]
    # another library, file or text is another hunk
    assert lh.parse_hunks("other", DIFF)[0].id != hunks[0].id
    changed = lh.parse_hunks("lib", DIFF.replace('to("neuron")', "to(device)"))
    assert changed[0].id != hunks[0].id and changed[1].id == hunks[1].id


def test_the_same_text_twice_in_a_file_gets_two_ids():
    twice = (
        DIFF.split("--- a/pkg/b.py")[0]
        + '@@ -90,3 +89,3 @@\n import torch\n-x = torch.zeros(2).cuda()\n+x = torch.zeros(2).to("neuron")\n y = 1\n'
    )
    hunks = lh.parse_hunks("lib", twice)
    assert len(hunks) == 3 and len({h.id for h in hunks}) == 3


def test_the_sample_is_fixed_and_keeps_the_hunks_that_stay():
    hunks = [lh.Hunk("lib", f"m{i}.py", 1, 1, 1, (f"-a{i}\n", f"+b{i}\n"), f"{i:012x}") for i in range(100)]
    first = lh.sample(hunks, 40)
    assert [h.id for h in lh.sample(list(reversed(hunks)), 40)] == [h.id for h in first]
    gone = first[0]
    again = lh.sample([h for h in hunks if h is not gone], 40)
    assert {h.id for h in first} - {h.id for h in again} == {gone.id}  # one left, one came in
    assert len(lh.sample(hunks[:7], 40)) == 7


def test_library_code_leaves_tests_and_examples_out():
    is_library = lh.LibraryCode(lh.Library("x", "1", "x.whl", "0" * 64, not_library=["pkg/vendored/"]))
    assert is_library("pkg/core/train.py")
    for path in (
        "tests/test_a.py",
        "pkg/tests/helpers.py",
        "pkg/test_utils/x.py",
        "examples/run.py",
        "pkg/conftest.py",
        "pkg/foo_test.py",
        "pkg/vendored/x.py",
        "docs/conf.py",
    ):
        assert not is_library(path), path


def test_verdicts_are_checked(tmp_path):
    bad = tmp_path / "v.toml"
    bad.write_text('[hunk.abc]\nverdict = "wrong"\nreason = "breaks CUDA"\n')
    with pytest.raises(SystemExit, match="needs a kind"):
        lh.load_verdicts(bad)
    bad.write_text('[hunk.abc]\nverdict = "fine"\nreason = "x"\n')
    with pytest.raises(SystemExit, match="verdict must be one of"):
        lh.load_verdicts(bad)
    bad.write_text('[hunk.abc]\nverdict = "clean"\n')
    with pytest.raises(SystemExit, match="no reason"):
        lh.load_verdicts(bad)


def test_the_recorded_verdicts_and_corpus_are_well_formed():
    verdicts = lh.load_verdicts()
    assert len(verdicts) >= 400
    corpus = lh.load_corpus()
    names = {lib.name for lib in corpus}
    assert len(corpus) >= 8 and len(names) == len(corpus)
    for lib in corpus:
        assert len(lib.sha256) == 64 and lib.version in lib.dist, lib.name
    assert {v["library"] for v in verdicts.values()} <= names
