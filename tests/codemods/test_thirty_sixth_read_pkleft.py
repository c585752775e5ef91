"""The thirty-sixth read, pkleft (pkread's leftovers on real packages): kornia 0.8.1's
`torch.hub.load_state_dict_from_url(url, map_location="cuda:0" if torch.cuda.is_available() else "cpu")`
became `map_location="xla" if ... else "cpu"` on xla, and torch.load raises there ("don't know how to
restore data location of torch.storage.UntypedStorage (tagged with xla)", torch_xla 2.9)."""

from __future__ import annotations


def _port(tmp_path, text, target="xla"):
    from porter.config.settings import Settings
    from porter.pipeline.runner import run

    (tmp_path / "m.py").write_text(text)
    result = run([tmp_path], Settings(target=target), jobs=1, cache=False)[0][0]
    return (result.new_source or result.original_source or b"").decode()


CONDITIONAL = (
    "import torch\n"
    "def load(url):\n"
    '    return torch.hub.load_state_dict_from_url(url, map_location="cuda:0" if torch.cuda.is_available() else "cpu")\n'
)


def test_a_conditional_cuda_map_location_loads_onto_the_cpu_on_xla(tmp_path):
    out = _port(tmp_path, CONDITIONAL)
    assert 'map_location="cpu"' in out
    assert '"xla" if' not in out


def test_control_a_plain_cuda_map_location_still_loads_onto_the_cpu(tmp_path):
    out = _port(tmp_path, 'import torch\nsd = torch.load("m.pt", map_location="cuda")\n')
    assert 'map_location="cpu"' in out
