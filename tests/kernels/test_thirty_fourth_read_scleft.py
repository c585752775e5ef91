"""The thirty-fourth read's leftover helper on the registration readers (scleft, issue 24): each test failed on
73040789. The C++ verdicts are g++'s (each form compiles against a `Library` with `impl`/`def`) and torch 2.9's (a
CPU kernel registered is what a CPU tensor reaches): docs/reads/52-scleft-tools."""

from __future__ import annotations


from porter.analysis import native_ops, python_ops

CU = b'#include <torch/library.h>\nTORCH_LIBRARY_IMPL(myops, CUDA, m) {\n  m.impl("a", &a_cuda);\n}\n'


def _cpp_cuda_only(cpp: str) -> bool:
    """Whether porter reads `myops::a` as CUDA-only where `a.cu` gives it a CUDA kernel and `b.cpp` is `cpp`."""
    found = native_ops.cuda_only_and_overloaded([("a.cu", CU), ("b.cpp", cpp.encode())])[0]
    return "a" in found.get("myops", {})


def _cpu_block(body: str) -> str:
    return "#include <torch/library.h>\nTORCH_LIBRARY_IMPL(myops, CPU, m) {\n" + body + "\n}\n"


def test_a_library_reached_through_its_address_an_assigned_pointer_or_a_second_declarator_registers():
    forms = [
        '(&m)->impl("a", &a_cpu);',  # (the library's address, called through)
        'torch::Library* p;\n  p = &m;\n  p->impl("a", &a_cpu);',  # (a pointer given it after its declaration)
        'auto& x = m, &y = m;\n  y.impl("a", &a_cpu);',  # (the declaration's second declarator)
        'torch::Library* p = &m;\n  (*p).impl("a", &a_cpu);',  # (a pointer, dereferenced)
    ]
    assert [_cpp_cuda_only(_cpu_block(form)) for form in forms] == [False] * len(forms)
    # (the control: a comparison gives the pointer nothing)
    control = 'torch::Library* p = other();\n  bool same = p == &m;\n  p->impl("a", &a_cpu);'
    assert _cpp_cuda_only(_cpu_block(control))


PY_DEF = (
    "import torch\nfrom torch.library import Library\n"
    'DEF = Library("myops", "DEF")\nDEF.define("a(Tensor x) -> Tensor")\nDEF.impl("a", lambda x: x, "CUDA")\n'
)


def _py_cuda_only(body: str) -> bool:
    """Whether porter reads `myops::a` (a CUDA kernel given) as CUDA-only in a module `PY_DEF` + `body`."""
    kernels = python_ops.registered_kernels([("m.py", (PY_DEF + body).encode())])
    return "a" in native_ops.cuda_only_and_overloaded([], kernels)[0].get("myops", {})


def test_a_library_torch_destroys_before_any_call_registers_no_kernel():
    # (torch 2.9: NotImplementedError on a CPU tensor for each; docs/reads/52-scleft-tools/life.py)
    lib = 'lib = Library("myops", "IMPL", "CPU")\nlib.impl("a", lambda x: x + 1)\n'
    destroyed = [
        lib + "del lib\n",
        lib + 'del lib\nlib = Library("myops", "IMPL", "Meta")\n',
        lib + 'lib = Library("myops", "IMPL", "Meta")\n',
        "def reg():\n" + "".join("    " + line + "\n" for line in lib.splitlines()) + "reg()\n",
        'lib = Library("myops", "IMPL", "CPU")\n@torch.library.impl(lib, "a", "CPU")\ndef k(x):\n    return x\ndel lib\n',
    ]
    assert [_py_cuda_only(body) for body in destroyed] == [True] * len(destroyed)
    # (the controls, each RUNS under torch: the library kept by a list, returned, made global, deleted in a function
    # never called, kept by `self`)
    kept = [
        lib + "KEEP = [lib]\ndel lib\n",
        "def reg():\n" + "".join("    " + line + "\n" for line in lib.splitlines()) + "    return lib\nK = reg()\n",
        "def reg():\n    global lib\n" + "".join("    " + line + "\n" for line in lib.splitlines()) + "reg()\n",
        lib + "def drop():\n    global lib\n    del lib\n",
        "class R:\n    def __init__(self):\n        lib = Library('myops', 'IMPL', 'CPU')\n"
        "        lib.impl('a', lambda x: x + 1)\n        self.lib = lib\nr = R()\n",
    ]
    assert [_py_cuda_only(body) for body in kept] == [False] * len(kept)


def test_a_registration_under_an_undecided_if_in_a_block_body_is_said():
    # (`a`'s CPU kernel exists in a `-DWITH_CPU` build only: read as compiled, it was said nowhere; pybind11's `m.def(`
    # under an `#ifdef` is no registration, and `b` is in every build)
    source = (
        b'#include <torch/library.h>\nTORCH_LIBRARY_IMPL(myops, CPU, m) {\n#ifdef WITH_CPU\n  m.impl("a", &a_cpu);\n'
        b'#endif\n  m.impl("b", &b_cpu);\n}\nPYBIND11_MODULE(x, m) {\n#ifdef WITH_HELP\n  m.def("help", &h);\n#endif\n}\n'
    )
    assert native_ops.undecided(source) == [(4, "`#ifdef WITH_CPU` of the `#if` at line 3")]


def test_a_library_given_to_a_function_of_the_file_registers_through_its_parameter():
    # (torch 2.9 runs `a` on a CPU tensor for each: docs/reads/52-scleft-tools/param.py)
    reg = 'def reg(lib):\n    lib.impl("a", lambda x: x + 1)\n'
    given = [
        reg + 'cpu = Library("myops", "IMPL", "CPU")\nreg(cpu)\n',
        'def reg(n, lib=None):\n    lib.impl("a", lambda x: x + 1)\ncpu = Library("myops", "IMPL", "CPU")\nreg(1, lib=cpu)\n',
    ]
    assert [_py_cuda_only(body) for body in given] == [False, False]
    # (the controls: given a CUDA library only, `a` is CUDA-only; given one too by what porter does not read, perhaps
    # another device's library, and a `lib` at the module's top that is no library read, no verdict)
    assert _py_cuda_only(reg + 'cu = Library("myops", "IMPL", "AutogradCUDA")\nreg(cu)\n')
    unknown = reg + 'from elsewhere import lib\ncu = Library("myops", "IMPL", "AutogradCUDA")\nreg(cu)\nreg(lib)\n'
    module_top = reg + 'from elsewhere import lib\ncu = Library("myops", "IMPL", "AutogradCUDA")\nreg(cu)\n'
    module_top += 'LIBS = [Library("myops", "IMPL", "CPU")]\nlib.impl("a", lambda x: x + 1)\n'
    assert [_py_cuda_only(unknown), _py_cuda_only(module_top)] == [False, False]


def test_op_names_and_namespaces_given_by_f_strings_of_module_constants_are_read():
    # (mase-triton 0.0.7's `f"{PACKAGE_NAME}::..."`; torch 2.9 runs `a` on a CPU tensor for each of the first four and
    # not for the last: docs/reads/52-scleft-tools/fstr.py)
    head = 'PKG = "myops"\n'
    cpu = [
        head + '@torch.library.impl(f"{PKG}::a", "cpu")\ndef k(x):\n    return x\n',
        head + 'lib = Library(PKG, "IMPL", "CPU")\nlib.impl("a", lambda x: x + 1)\n',
        head + 'torch.library.register_kernel(f"{PKG}::a", "cpu")(lambda x: x + 1)\n',
        head + 'OP = f"{PKG}::a"\n@torch.library.impl(OP, "cpu")\ndef k(x):\n    return x\n',
    ]
    assert [_py_cuda_only(body) for body in cpu] == [False] * len(cpu)
    # (a name bound twice is no constant: its op not read, no verdict (thirty-fourth read, scaf2: torch 2.9 runs `a`
    # on a CPU tensor here, `PKG` is "myops" by then; this control had it CUDA-only)
    assert not _py_cuda_only(
        'PKG = "x"\nPKG = "myops"\n@torch.library.impl(f"{PKG}::a", "cpu")\ndef k(x):\n    return x\n'
    )
    only_cuda = 'PKG = "myops"\n@torch.library.impl(f"{PKG}::b", "cuda")\ndef k(x):\n    return x\n'
    kernels = python_ops.registered_kernels([("m.py", (PY_DEF + only_cuda).encode())])
    assert "b" in native_ops.cuda_only_and_overloaded([], kernels)[0].get("myops", {})
