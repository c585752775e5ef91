"""The scaffold leftover 5 of the twenty-fourth read (42-sleft's "Left"), closed by "kidx" (issue 24):
lint reported neither a kernel under a decorator re-exported by a module of the project whose body
uses no Triton language, nor a launch of a kernel another module of the project defines, though
`porter kernels` lists both. Each test failed on 9d8198a."""

from __future__ import annotations

from pathlib import Path

from porter.config.settings import Settings
from porter.kernels.inventory import scan
from porter.pipeline.runner import run

KERNEL = """import triton
import triton.language as tl


@triton.jit
def scale(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * 2, mask=offs < n)


def launch(x):
    scale[(1,)](x, x.numel(), BLOCK=128)
"""


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)


def _kern002(root: Path, cache: Path | None = None) -> dict[str, list[tuple[int, str]]]:
    results, _ = run(
        [root], Settings(target="xla", want_source=False), jobs=1, cache=cache is not None, cache_dir=cache
    )
    out: dict[str, list[tuple[int, str]]] = {}
    for r in results:
        said = [(f.start.line, f.message) for f in r.findings if f.code == "KERN002"]
        if said:
            out[Path(r.path).relative_to(root).as_posix()] = said
    return out


def test_a_kernel_under_a_decorator_a_module_of_the_project_re_exports_is_reported(tmp_path):
    # `from pkg.tu import triton` over a body of `pass`: `porter kernels` lists it (the tree binds
    # `triton` in pkg/tu.py); lint said nothing, there being no Triton language in the body to go by
    root = tmp_path / "p"
    _tree(
        root,
        {
            "pkg/__init__.py": "",
            "pkg/tu.py": "import triton\nfrom triton import jit\n",
            "pkg/plain.py": "from pkg.tu import triton\n\n\n@triton.jit\ndef nothing(x_ptr):\n    pass\n",
            "pkg/rel.py": "from .tu import triton as tt\n\n\n@tt.jit\ndef nothing_either(x_ptr):\n    return\n",
            "pkg/attr.py": "import pkg.tu as tu\n\n\n@tu.triton.jit\ndef through_module(x_ptr):\n    pass\n",
            # a module of the project that binds `triton` to something else is not taken for Triton
            "pkg/fake.py": "triton = object()\n",
            "pkg/not_triton.py": "from pkg.fake import triton\n\n\n@triton.jit\ndef host(x):\n    pass\n",
        },
    )
    listed = sorted((k.path, k.name) for k in scan(root).kernels)
    assert listed == [("pkg/attr.py", "through_module"), ("pkg/plain.py", "nothing"), ("pkg/rel.py", "nothing_either")]
    for cache in (None, tmp_path / "cache", tmp_path / "cache"):  # a cold run, a cached one, a warm one
        said = _kern002(root, cache)
        assert [line for line, _ in said["pkg/plain.py"]] == [5]
        assert "`triton.jit` is Triton's: `pkg.tu` in the tree binds it" in said["pkg/plain.py"][0][1]
        assert [line for line, _ in said["pkg/rel.py"]] == [5]
        assert [line for line, _ in said["pkg/attr.py"]] == [5]
        assert "pkg/not_triton.py" not in said


def test_a_launch_of_a_kernel_another_module_of_the_project_defines_is_reported(tmp_path):
    # `ops.scale[(1,)](...)` in a file that never spells Triton: `porter kernels` lists the call,
    # lint reported neither it nor anything else in the file
    root = tmp_path / "p"
    _tree(
        root,
        {
            "pkg/__init__.py": "",
            "pkg/ops.py": KERNEL,
            "pkg/use.py": "import torch\nfrom pkg import ops\n\n\ndef run(x: torch.Tensor) -> None:\n"
            "    ops.scale[(1,)](x, x.numel(), BLOCK=128)\n",
            "pkg/alias.py": "import pkg.ops as kernels\nfrom pkg.ops import scale\n\n\ndef run(x):\n"
            "    kernels.scale[(2,)](x, x.numel(), BLOCK=64)\n    scale[(1,)](x, x.numel(), BLOCK=128)\n",
            # a CUDA-only function that is no kernel, and a parameter that shadows the module: no launch
            # (`porter kernels` lists the latter all the same: it reads no function's bindings)
            "pkg/other.py": "from pkg import ops\n\n\ndef run(x):\n    ops.launch[0]\n\n\ndef go(x, ops):\n"
            "    ops.scale[(1,)](x, 1, BLOCK=1)\n",
        },
    )
    (k,) = scan(root).kernels
    listed = sorted((c.path, c.line) for c in k.calls if c.path != "pkg/other.py")
    assert listed == [("pkg/alias.py", 6), ("pkg/alias.py", 7), ("pkg/ops.py", 12), ("pkg/use.py", 6)]
    for cache in (None, tmp_path / "cache", tmp_path / "cache"):
        said = _kern002(root, cache)
        launches = sorted((path, line) for path, found in said.items() for line, m in found if "launch" in m)
        assert launches == listed
        [(line, message)] = said["pkg/use.py"]
        assert line == 6 and message.startswith("launch of Triton kernel `ops.scale` (defined in ")
        assert message.endswith("pkg/ops.py): replace with the op `porter kernels --scaffold` writes for it")
        assert "pkg/other.py" not in said
