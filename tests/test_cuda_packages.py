"""The CUDA-only package facts (rules/cuda_only/) are evidence: each has its source, and the
recorded evidence of a wheel is what reading the real wheel gives."""

from __future__ import annotations

import json

import pytest

from porter.apidata import cuda_only as generator
from porter.codemods.kernels import library_table
from porter.config.cuda_packages import cuda_only_modules, cuda_packages, package_of, ported_imports
from porter.config.ruledata import load_toml, rules_dir


def test_every_package_says_where_its_evidence_comes_from():
    seen: dict[str, str] = {}
    for p in cuda_packages():
        assert p.version and p.source and p.evidence and all(p.evidence), p.distribution
        for module in p.imports:
            assert module not in seen, f"{module} is listed by {seen[module]} and {p.distribution}"
            seen[module] = p.distribution


def test_a_package_with_a_path_on_a_target_is_not_cuda_only_there():
    helion = package_of("helion.language")
    # helion 1.5.1 imports torch_tpu, but its Pallas backend is one a kernel must ask for ([[opt_in]])
    assert helion is not None and helion.targets == frozenset()
    assert "helion" in cuda_only_modules("neuron") and "helion" in cuda_only_modules("tpu")
    assert "triton" in cuda_only_modules("tpu")


def test_ported_libraries_are_not_guard_seeds():
    """flash-attn's, xformers' and apex's Python APIs are ported by LIB rules, not kept."""
    for module in ported_imports():
        assert module not in cuda_only_modules(None)


def test_every_third_party_library_porter_reports_has_evidence():
    """A KERN003 row names a library CUDA-only: the facts must say why (or LIB rules port it,
    or it is DeepSpeed's own op builders, or an NVML wrapper as pynvml is)."""
    ported_or_built = {"deepspeed.ops", "apex.multi_tensor_apply", "apex", "flash_attn", "xformers"}
    nvml_wrappers = {"nvidia_smi", "py3nvml", "gpustat"}  # read NVML, as pynvml (packages.json) does
    for row in library_table():
        if row.prefix in ported_or_built | nvml_wrappers:
            continue
        assert package_of(row.prefix) is not None, f"no evidence that {row.prefix} is CUDA-only"


def test_recorded_evidence_is_what_the_wheel_says(tmp_path):
    """Re-read two small pinned wheels (downloaded from PyPI once, sha256-checked) and compare
    with packages.json: the file is generated from the packages, not written by hand."""
    recorded = {
        p["distribution"]: p for p in json.loads((rules_dir() / "cuda_only" / "packages.json").read_text())["packages"]
    }
    for requirement, file, sha, *_ in generator.PINNED:
        if not file.startswith(("nvidia_ml_py-", "liger_kernel-", "autoawq-0")):
            continue
        path = generator.download(requirement, file, sha, generator.cache_dir())
        read = generator.read_wheel(path)
        entry = recorded[read["distribution"]]
        assert (read["version"], read["imports"], read["evidence"], read["targets"]) == (
            entry["version"],
            entry["imports"],
            entry["evidence"],
            entry["targets"],
        )


def test_gptqmodel_is_read_from_its_sdist_and_is_not_cuda_only():
    """gptqmodel 7.7.0 (an sdist only; the twenty-fifth rleft read): re-read from the pinned sdist (downloaded
    once, sha256-checked; pip builds its metadata alone) it is what packages.json records under
    `read_not_cuda_only`: no compiled object, no CUDA requirement, torch kernels for every device; so no
    KERN003 (HF017 says what it does on each target)."""
    recorded = json.loads((rules_dir() / "cuda_only" / "packages.json").read_text())["read_not_cuda_only"]
    assert [r["reported_by"] for r in recorded] == ["HF017"]
    read = generator.read_cleared(generator.READ_NOT_CUDA_ONLY[0], generator.cache_dir())
    assert read == recorded[0]
    assert "0 compiled objects shipped" in read["cuda"] and "requires no CUDA or Triton distribution" in read["cuda"]
    assert "gptqmodel/nn_modules/qlinear/torch.py: SUPPORTS_DEVICES = [DEVICE.ALL]" in read["checked"]
    assert package_of("gptqmodel") is None and "gptqmodel" not in cuda_only_modules(None)


def test_gptqmodel_s_torch_requirement_is_read_from_its_metadata_and_is_what_hf017_says():
    """gptqmodel 7.7.0 is not run here (twenty-sixth rleft read): its PKG-INFO (Metadata-Version 2.4: the sdist's
    METADATA, there being no wheel) requires torch>=2.14.1 on every platform, recorded as the entry's `torch`
    (`read_sdist`, re-read in the test above); HF017's reasons for xla and neuron quote that requirement, and the
    torch installed here (torch_xla's) does not meet it."""
    from packaging.requirements import Requirement

    from tests.deps import need

    recorded = json.loads((rules_dir() / "cuda_only" / "packages.json").read_text())["read_not_cuda_only"][0]
    assert recorded["torch"] == "torch>=2.14.1"
    on = load_toml("hf.toml")["gptqmodel_on"]
    assert all(f"requires {recorded['torch']}" in on[t] for t in ("xla", "neuron"))
    here = need("torch").__version__.split("+")[0]
    assert not Requirement(recorded["torch"]).specifier.contains(here)


def test_the_triton_line_says_the_count_it_read_and_no_more(tmp_path):
    """A file that imports triton is what the generator reads, not what the package's kernels are (gptqmodel
    7.7.0: 17 of 447 files import triton, beside 122 CUDA sources and torch kernels; twenty-fifth rleft2 read):
    the line says the count, here and in every recorded entry."""
    import re
    import zipfile

    wheel = tmp_path / "pkg-1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as whl:
        whl.writestr("pkg/tri.py", "import triton\n")
        for name in ("pkg/__init__.py", "pkg/torch_kernel.py", "pkg/cpu.py"):
            whl.writestr(name, "import torch\n")
    with zipfile.ZipFile(wheel) as whl:
        evidence, _ = generator._python_evidence(whl, sorted(whl.namelist()))
    assert evidence == ["1 of its 4 Python files import triton"]
    data = json.loads((rules_dir() / "cuda_only" / "packages.json").read_text())
    lines = [line for p in data["packages"] for line in p["evidence"]]
    lines += [line for p in data["read_not_cuda_only"] for line in p["cuda"]]
    said = [line for line in lines if "import triton" in line]
    assert len(said) == 11 and all(re.fullmatch(r"\d+ of its \d+ Python files import triton", x) for x in said)


def test_documented_packages_name_a_page_and_a_date():
    for p in load_toml("cuda_only/documented.toml")["package"]:
        assert p["source"].startswith(("https://", "packages.json")) and p["read"], p["distribution"]


def test_the_fallback_rule_is_admitted_wherever_a_cuda_only_package_is_imported():
    """BACK007's tokens (the prefilter's) cover every CUDA-only package's import."""
    from porter.config.cuda_packages import import_tokens
    from porter.config.ruledata import get_rule

    tokens = set(get_rule("BACK007").tokens)
    for token in import_tokens(sorted({*cuda_only_modules(None), *ported_imports()})):
        # (`import cupy` admits `import cupy_backends`: a token inside it is enough)
        assert b"cuda" in token or any(t in token or t in b"import " + token for t in tokens), token


def test_code_that_runs_mslk_kernels_stays_cudas():
    """torchao's preshuffled int4 tensor hands `w.cuda()` to MSLK's `quantize_int4_preshuffle`
    (CUDA/ROCm builds only): the port moved the weight to the target instead."""
    from tests.helpers import port

    code = (
        "from pkg.utils import _is_mslk_available\n\n"
        "if not _is_mslk_available():\n"
        "    quantize_int4_preshuffle = None\n"
        "else:\n"
        "    from mslk.quantize.shuffle import quantize_int4_preshuffle\n\n\n"
        "def from_hp(w, group_size):\n"
        "    if quantize_int4_preshuffle is None:\n"
        '        raise ImportError("Requires mslk >= 1.0.0")\n'
        "    return quantize_int4_preshuffle(w.cuda(), group_size=group_size)\n"
    )
    new, findings = port(code, "neuron")
    assert new == code, new
    assert any(f.code == "GUARD003" and "`mslk`" in f.message for f in findings), findings


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_autogptq_and_autoawq_imports_are_reported(target):
    """auto-gptq 0.7.1's extensions link libcudart and autoawq 0.2.7 requires triton (their
    wheels, read into packages.json): importing either was silent before (twenty-fourth read)."""
    from tests.helpers import port

    code = (
        "import auto_gptq\n"
        "from awq import AutoAWQForCausalLM\n"
        "import exllamav2_kernels\n"
        "import awqward\n"
        "model = AutoAWQForCausalLM.from_quantized('m')\n"
    )
    _, findings = port(code, target)
    got = sorted((f.code, f.start.line) for f in findings if f.code == "KERN003")
    assert got == [("KERN003", 1), ("KERN003", 2), ("KERN003", 3)], findings
    packages = [package_of(m) for m in ("auto_gptq.modeling", "awq", "awq_ext")]
    assert [p.distribution if p else None for p in packages] == ["auto_gptq", "autoawq", "autoawq_kernels"]
