"""The thirty-third read's second-wave helper on the registration readers (scaf2, issue 24): each test failed on
03ad0e4c, where the first wave had the Python reader take the `Library` objects other modules give a file. Every
expected verdict is torch 2.9's (docs/reads/51-scaf2-tools/pyimp.py: the files written out, `pkg` imported,
`torch.ops.myops.a` called on a CPU tensor: NotImplementedError is CUDA-only)."""

from __future__ import annotations

from pathlib import Path

from porter.analysis import native_ops, python_ops
from porter.config.settings import Settings
from porter.kernels.inventory import scan
from porter.pipeline import statindex
from porter.pipeline.runner import run
from tests.helpers import write_files

HEAD = "import torch\nfrom torch.library import Library\n"
DEF = HEAD + 'DEF = Library("myops", "DEF")\nDEF.define("a(Tensor x) -> Tensor")\n'
CUDA = HEAD + 'from . import _def\n@torch.library.impl("myops::a", "cuda")\ndef a_cuda(x):\n    return x\n'
A_CPU = "def a_cpu(x):\n    return x + 1\n"
LIBS = HEAD + 'cpu = Library("myops", "IMPL", "CPU")\n'


def _cuda_only(files: dict[str, str]) -> bool:
    """Whether porter reads `myops::a` as CUDA-only in a package whose `_cuda.py` gives it a CUDA kernel."""
    files = {"pkg/_def.py": DEF, "pkg/_cuda.py": CUDA, **files}
    kernels = python_ops.registered_kernels(sorted((name, text.encode()) for name, text in files.items()))
    return "a" in native_ops.cuda_only_and_overloaded([], kernels)[0].get("myops", {})


def test_a_library_passed_on_by_a_module_that_never_spells_library_or_read_later_is_followed():
    # (`pkg/__init__.py` re-exports `cpu`; `c.py` takes it from `z_b.py`, a module read after `c.py`)
    through_init = {
        "pkg/__init__.py": "from . import _def, _cuda\nfrom ._lib import cpu\nfrom . import reg\n",
        "pkg/_lib.py": LIBS,
        "pkg/reg.py": "from . import cpu\n" + A_CPU + 'cpu.impl("a", a_cpu)\n',
    }
    chain = {
        "pkg/__init__.py": "from . import _def, _cuda, c\n",
        "pkg/_lib.py": LIBS,
        "pkg/z_b.py": "from ._lib import cpu  # the library\n",
        "pkg/c.py": "from .z_b import cpu\n" + A_CPU + 'cpu.impl("a", a_cpu)\n',
    }
    absolute = {**through_init, "pkg/reg.py": "from pkg import cpu\n" + A_CPU + 'cpu.impl("a", a_cpu)\n'}
    assert [_cuda_only(through_init), _cuda_only(chain), _cuda_only(absolute)] == [False, False, False]


def test_a_star_import_takes_the_public_libraries():
    star = {"pkg/_lib.py": LIBS, "pkg/reg.py": "from ._lib import *\n" + A_CPU + 'cpu.impl("a", a_cpu)\n'}
    # (the controls: `__all__` names the CUDA library `lib`, not `cpu`; a `_cpu` is not taken, the file's own
    # `_cpu` is a CUDA library)
    listed = HEAD + '__all__ = ["lib"]\nlib = Library("myops", "IMPL", "CUDA")\ncpu = Library("myops", "IMPL", "CPU")\n'
    all_listed = {"pkg/_cuda.py": "", "pkg/_lib.py": listed, "pkg/reg.py": star["pkg/reg.py"].replace("cpu.", "lib.")}
    private = {
        "pkg/_cuda.py": "",
        "pkg/_lib.py": HEAD + '_cpu = Library("myops", "IMPL", "CPU")\n',
        "pkg/reg.py": HEAD
        + "_cpu = Library('myops', 'IMPL', 'CUDA')\nfrom ._lib import *\n"
        + A_CPU
        + '_cpu.impl("a", a_cpu)\n',
    }
    assert [_cuda_only(star), _cuda_only(all_listed), _cuda_only(private)] == [False, True, True]


def test_a_class_body_s_library_is_the_class_s_not_the_module_s():
    classes = 'lib = Library("myops", "IMPL", "CPU")\nclass K:\n    lib = Library("myops", "IMPL", "CUDA")\n'
    same_file = {"pkg/reg.py": HEAD + classes + A_CPU + 'lib.impl("a", a_cpu)\n'}
    other_file = {
        "pkg/_lib.py": HEAD + classes,
        "pkg/reg.py": "from ._lib import lib\n" + A_CPU + 'lib.impl("a", a_cpu)\n',
    }
    # (a bare `lib` in K's method is the module's: Python reads no class body's name there)
    method = '    def reg(self):\n        lib.impl("a", a_cpu)\n'
    in_a_method = {"pkg/reg.py": HEAD + classes + method + A_CPU + "K().reg()\n"}
    own = {"pkg/_cuda.py": "", "pkg/reg.py": HEAD + classes + A_CPU + 'K.lib.impl("a", a_cpu)\n'}  # (the control)
    assert [_cuda_only(same_file), _cuda_only(other_file), _cuda_only(in_a_method), _cuda_only(own)] == [False] * 3 + [
        True
    ]


def test_a_library_imported_in_a_function_is_that_function_s():
    lib = HEAD + 'lib = Library("myops", "IMPL", "CUDA")\n' + A_CPU
    in_function = {
        "pkg/_lib.py": LIBS,
        "pkg/reg.py": lib + 'def register():\n    from ._lib import cpu as lib\n    lib.impl("a", a_cpu)\n',
    }
    # (the control: the import is another function's; `register` uses the module's CUDA library)
    other_function = {
        "pkg/_cuda.py": "",
        "pkg/_lib.py": LIBS,
        "pkg/reg.py": lib + "def other():\n    from ._lib import cpu as lib\n    return lib\n"
        'def register():\n    lib.impl("a", a_cpu)\n',
    }
    assert [_cuda_only(in_function), _cuda_only(other_function)] == [False, True]


def test_a_library_a_function_of_the_project_makes_and_returns_is_read():
    make = 'def make():\n    made = Library("myops", "IMPL", "CPU")\n    return made\nlib = make()\n'
    same_file = {"pkg/reg.py": HEAD + make + A_CPU + 'lib.impl("a", a_cpu)\n'}
    other_file = {
        "pkg/_lib.py": HEAD + make,
        "pkg/reg.py": "from ._lib import lib\n" + A_CPU + 'lib.impl("a", a_cpu)\n',
    }
    # (the controls: a CUDA library so made; `.impl` of an object that is no library beside a CUDA library)
    cuda = {"pkg/_cuda.py": "", "pkg/reg.py": same_file["pkg/reg.py"].replace('"CPU"', '"CUDA"')}
    other_object = {
        "pkg/_cuda.py": "",
        "pkg/reg.py": HEAD + 'lib = Library("myops", "IMPL", "CUDA")\n' + A_CPU + 'lib.impl("a", a_cpu)\n'
        "class R:\n    def impl(self, *a):\n        pass\nR().impl('a', a_cpu)\n",
    }
    assert [_cuda_only(same_file), _cuda_only(other_file), _cuda_only(cuda), _cuda_only(other_object)] == [
        False,
        False,
        True,
        True,
    ]


def test_lint_follows_a_library_re_exported_by_the_package_cold_and_warm(tmp_path, monkeypatch):
    # (end to end: base said GUARD001 for `torch.ops.myops.a(x)` under `if x.is_cuda:` where torch runs `a` on a CPU
    # tensor; `pkg/__init__.py` edited, the same size, to re-export the CUDA library makes it CUDA-only on the warm run)
    monkeypatch.setattr(statindex, "RACY_NS", 0)
    init = "from . import _def, _cuda\nfrom ._lib import cpu as lib\nfrom . import reg\n"
    use = "import torch\n\n\ndef f(x):\n    if x.is_cuda:\n        return torch.ops.myops.a(x)\n    return x\n"
    files = {
        "pkg/_def.py": DEF,
        "pkg/_cuda.py": CUDA,
        "pkg/_lib.py": LIBS + 'cud = Library("myops", "IMPL", "CUDA")\n',
        "pkg/__init__.py": init,
        "pkg/reg.py": "from . import lib\n" + A_CPU + 'lib.impl("a", a_cpu)\n',
        "pkg/use.py": use,
    }
    write_files(tmp_path / "p", files)
    monkeypatch.chdir(tmp_path / "p")
    cache = tmp_path / "cache"

    def codes(cache: Path | None) -> list[str]:
        results, _ = run([Path("pkg")], Settings(target="xla"), jobs=1, cache=cache is not None, cache_dir=cache)
        return next(sorted({f.code for f in r.findings}) for r in results if r.path.endswith("use.py"))

    assert "GUARD001" not in codes(None)
    assert "GUARD001" not in codes(cache)
    Path("pkg/__init__.py").write_text(init.replace("cpu as", "cud as"))
    assert "GUARD001" in codes(cache)


# each form registers its op's CPU kernel (g++ -std=c++17 -fsyntax-only accepts each against a `torch::Library`
# that cannot be copied: docs/reads/51-scaf2-tools/cppforms.py)
ALIAS_FORMS = {
    "a": 'auto p = &m;\n  p->impl("a", &a_cpu);',
    "b": 'auto&& r = m;\n  r.impl("b", &b_cpu);',
    "c": 'torch::Library& s{m};\n  s.impl("c", &c_cpu);',
    "d": 'auto& t(m);\n  t.impl("d", &d_cpu);',
    "i": 'auto& w = (m);\n  w.impl("i", &i_cpu);',
    "j": 'torch::Library* q{&m};\n  q->impl("j", &j_cpu);',
}


def test_a_block_s_library_named_again_by_any_declaration_form_registers_with_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ops = [*ALIAS_FORMS, "z"]
    cuda = "TORCH_LIBRARY_IMPL(myops, CUDA, m) {\n" + "".join(f'  m.impl("{op}", &{op}_cuda);\n' for op in ops) + "}\n"
    cpu = "TORCH_LIBRARY_IMPL(myops, CPU, m) {\n  " + "\n  ".join(ALIAS_FORMS.values()) + "\n}\n"
    # (the control: `z`, given no CPU kernel, stays CUDA-only)
    sources = [("a.cu", cuda.encode()), ("b.cpp", cpu.encode())]
    assert sorted(native_ops.cuda_only_and_overloaded(sources)[0].get("myops", {})) == ["z"]


def test_porter_kernels_run_inside_the_package_follows_its_absolute_imports(tmp_path, monkeypatch):
    # (`porter kernels pkg`: the files' names lack `pkg.`, so `import pkg._lib as L` named no module of the project)
    files = {
        "pkg/__init__.py": "from . import _def, _cuda, reg\n",
        "pkg/_def.py": DEF,
        "pkg/_cuda.py": CUDA,
        "pkg/_lib.py": LIBS,
        "pkg/reg.py": "import pkg._lib as L\n" + A_CPU + 'L.cpu.impl("a", a_cpu)\n',
    }
    write_files(tmp_path / "p", files)
    monkeypatch.chdir(tmp_path / "p")
    rows = {(r.path, r.op, r.key) for r in scan(tmp_path / "p" / "pkg").registered}
    assert rows == {("_cuda.py", "a", "CUDA"), ("reg.py", "a", "CPU")}
