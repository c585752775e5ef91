"""The thirty-seventh read's term helper: the messages of findings whose fix porter reports and does not apply, judged
by what docs/portable.md promises of them and by the file `rewrite` leaves."""

from __future__ import annotations

import pytest


def _env001(tmp_path, files, *, portable=False):
    """The ENV001 findings of one Neuron run over `files` (name -> text), by the file's path under `tmp_path`."""
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    results = run([tmp_path], Settings(target="neuron", portable=portable), jobs=1, cache=False)[0]
    return {
        r.path.replace("\\", "/").split(tmp_path.name + "/", 1)[-1]: [f for f in r.findings if f.code == "ENV001"]
        for r in results
    }


_PY = "import torch\nx = torch.zeros(2).cuda()\n"

# ENV001 with its edit, left as it is for a reason the message gives: `--portable` (the file starts CUDA's hosts too),
# a file of a family per device (`launch/cuda.sh` beside `rocm.sh`): (files, portable, the file, the file the message
# names for the target's version)
_LEFT = {
    "portable-dockerfile": (
        {"Dockerfile": "FROM python:3.11\nENV CUDA_VISIBLE_DEVICES=0\n", "m.py": _PY},
        True,
        "Dockerfile",
        "`Dockerfile.neuron`",
    ),
    "portable-script": (
        {"run.sh": "export CUDA_VISIBLE_DEVICES=0,1\npython m.py\n", "m.py": _PY},
        True,
        "run.sh",
        "`run-neuron.sh`",
    ),
    "device-family": (
        {
            "launch/cuda.sh": "export CUDA_VISIBLE_DEVICES=0\npython m.py\n",
            "launch/rocm.sh": "export HIP_VISIBLE_DEVICES=0\npython m.py\n",
            "m.py": _PY,
        },
        False,
        "launch/cuda.sh",
        "`neuron.sh`",
    ),
}


@pytest.mark.parametrize("files, portable, name, beside", list(_LEFT.values()), ids=list(_LEFT))
def test_an_env001_left_for_cuda_hosts_says_why_and_where_the_targets_version_goes(
    tmp_path, files, portable, name, beside
):
    """`lint -t neuron --portable` said of `ENV CUDA_VISIBLE_DEVICES=0` only "`CUDA_VISIBLE_DEVICES=0` is
    `NEURON_RT_VISIBLE_CORES=0` on the target": the note that the file is left as it is (it starts CUDA's hosts too,
    or it is the cuda file of a family per device) and that the target's version goes in `Dockerfile.neuron` (as
    docs/portable.md says) was lost. The thirty-sixth read's `Site.unedited` (the words of a site a reader could not
    edit) won over the note that `_reported_only` writes as the message. Said again as before that read."""
    found = _env001(tmp_path, files, portable=portable)[name]
    assert [f.replacement for f in found] == [None], found
    message = found[0].message
    assert "left as it is" in message and beside in message, message
    assert "(what porter would change: `CUDA_VISIBLE_DEVICES=0" in message, message


def test_an_env001_a_reader_could_not_edit_keeps_its_words_under_portable(tmp_path):
    """The control: a RUN whose shell text does not parse has no fix to leave; under `--portable` it still says what
    the variable is on the target (the thirty-sixth read's words), with no note of a change porter would make."""
    text = "FROM python:3.11\nRUN CUDA_VISIBLE_DEVICES=0 python x.py && if then fi )\n"
    found = _env001(tmp_path, {"Dockerfile": text, "m.py": _PY}, portable=True)["Dockerfile"]
    assert [(f.replacement, f.message) for f in found] == [
        (
            None,
            "`CUDA_VISIBLE_DEVICES=0` is `NEURON_RT_VISIBLE_CORES=0` on the target (one NeuronCore index or a range)",
        )
    ], found
