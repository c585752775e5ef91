"""Library code keeps what its CUDA users rely on (issue 21): a backend the caller passes
through `**kwargs`, a package's cuDNN switches. Programs are still ported as before."""

from __future__ import annotations

import textwrap

from tests.helpers import port


def test_init_process_group_with_the_callers_keywords_is_left_reported():
    code = textwrap.dedent("""
    import torch.distributed as dist


    def init(**kwargs):
        dist.init_process_group(**kwargs)
    """)
    new, findings = port(code, "neuron")
    assert new == code
    assert any(f.code == "DIST001" and "kwargs" in f.message for f in findings)
    # with no keywords to carry it, the backend is still set
    plain, _ = port("import torch.distributed as dist\ndist.init_process_group()\n", "neuron")
    assert 'init_process_group(backend="neuron")' in plain


def test_a_packages_cudnn_switches_stay_a_programs_go(tmp_path):
    code = textwrap.dedent("""
    import torch


    def _set_torch_flags(benchmark):
        if benchmark is not None:
            torch.backends.cudnn.benchmark = benchmark
    """)
    pkg = tmp_path / "lib"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    new, findings = port(code, "tpu", path=str(pkg / "connector.py"))
    assert new == code
    assert any(f.code == "FLAG004" for f in findings)
    script, _ = port(code, "tpu", path=str(tmp_path / "train.py"))
    assert "cudnn" not in script


def test_a_cuda_compile_mode_stays_where_the_call_still_compiles_with_inductor():
    """Device-generic code keeps inductor on CUDA: its mode (a documented workaround, even) is
    CUDA's; where porter names the target's backend the mode goes."""
    generic = textwrap.dedent("""
    import torch
    from torch._utils import _get_available_device_type

    device_type = _get_available_device_type() or "cuda"
    f = torch.compile(g, dynamic=False, mode="max-autotune-no-cudagraphs")
    """)
    new, findings = port(generic, "neuron")
    assert new == generic
    assert any(f.code == "COMP002" and "kept" in f.message for f in findings)
    plain, _ = port('import torch\nf = torch.compile(g, mode="max-autotune")\n', "neuron")
    assert plain == 'import torch\nf = torch.compile(g, backend="neuron")\n'
