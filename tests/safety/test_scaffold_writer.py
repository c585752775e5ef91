"""Contract 1 and 5 for `porter kernels --scaffold DIR`: it writes only new files inside DIR
(never through a link, dangling or not), and text from the tree (file names, kernel names,
source) never becomes code in what it writes: every generated file parses, and a crafted
name stays a name."""

from __future__ import annotations

import ast
import builtins
from pathlib import Path

import pytest

from tests.safety.conftest import porter

TRITON = """import triton
import triton.language as tl


@triton.jit
def scale_kernel(x_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=m) * alpha, mask=m)
"""

# whisper's dtw_kernel: a loop porter cannot translate, whose reason quotes the whole loop
DTW = """import triton
import triton.language as tl


@triton.jit
def dtw_kernel(cost, trace, x, x_stride, cost_stride, trace_stride, N, M, BLOCK_SIZE: tl.constexpr):
    offsets = tl.arange(0, BLOCK_SIZE)
    mask = offsets < M

    for k in range(1, N + M + 1):  # k = i + j
        tl.debug_barrier()

        p0 = cost + (k - 1) * cost_stride
        p1 = cost + k * cost_stride
        p2 = cost + k * cost_stride + 1

        c0 = tl.load(p0 + offsets, mask=mask)
        c1 = tl.load(p1 + offsets, mask=mask)
        c2 = tl.load(p2 + offsets, mask=mask)

        x_row = tl.load(x + (k - 1) * x_stride + offsets, mask=mask, other=0)
        cost_row = x_row + tl.minimum(tl.minimum(c0, c1), c2)

        cost_ptr = cost + (k + 1) * cost_stride + 1
        tl.store(cost_ptr + offsets, cost_row, mask=mask)

        trace_ptr = trace + (k + 1) * trace_stride + 1
        tl.store(trace_ptr + offsets, 2, mask=mask & (c2 <= c0) & (c2 <= c1))
        tl.store(trace_ptr + offsets, 1, mask=mask & (c1 <= c0) & (c1 <= c2))
        tl.store(trace_ptr + offsets, 0, mask=mask & (c0 <= c1) & (c0 <= c2))
"""

CU = (
    "__global__ void add_kernel(const float* a, float* out, int n) { int i = threadIdx.x; if (i < n) out[i] = a[i]; }\n"
)


def _parses_without_calls_to(path: Path, *names: str) -> ast.Module:
    tree = ast.parse(path.read_bytes(), filename=str(path))
    called = {
        n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
    }
    assert not called & set(names), (path.name, called & set(names))
    imported = [n for n in ast.walk(tree) if isinstance(n, ast.Import) and any(a.name == "os" for a in n.names)]
    assert not imported, path.name
    return tree


def test_a_dangling_link_in_the_scaffold_folder_is_not_written_through(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ops.py").write_text(TRITON)
    out = tmp_path / "kernels"
    out.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir()
    (out / "scale_kernel_op.py").symlink_to(outside / "planted.py")  # dangling
    (out / "test_scale_kernel_neuron_parity.py").symlink_to(
        "/nonexistent/dir/x.py"
    )  # dangling, to a folder that is not there
    res = porter("kernels", "src", "--target", "neuron", "--scaffold", "kernels", cwd=tmp_path)
    err = res.stderr.decode() + res.stdout.decode()
    assert "Traceback" not in err, err
    assert not (outside / "planted.py").exists() and list(outside.iterdir()) == []
    assert (out / "scale_kernel_op.py").is_symlink() and (out / "test_scale_kernel_neuron_parity.py").is_symlink()
    assert (out / "scale_kernel_neuron.py").is_file()  # the name that was free is written
    assert "scale_kernel_op.py" in err and "kept" in err  # the user is told which names were taken
    assert not [p for p in out.iterdir() if p.name.endswith(".porter-tmp")]


def test_a_crafted_file_name_stays_a_name(tmp_path):
    src = tmp_path / "src"
    src.mkdir()
    evil = 'a""";__import__("os").system("touch PWNED");"""b.py'
    (src / evil).write_text(TRITON)
    (src / 'x\nimport os; os.system("touch PWNED2")\n.cu').write_text(CU)
    res = porter("kernels", "src", "--target", "tpu", "--scaffold", "k", cwd=tmp_path)
    assert "Traceback" not in res.stderr.decode(), res.stderr.decode()
    files = sorted((tmp_path / "k").glob("*.py"))
    assert len(files) == 6, files  # two kernels, three files each
    for path in files:
        _parses_without_calls_to(path, "system")
    doc = ast.get_docstring(ast.parse((tmp_path / "k" / "scale_kernel_op.py").read_text()))
    assert '__import__("os").system' in doc  # still there, as text
    assert not list(tmp_path.rglob("PWNED*"))


def test_a_multi_line_loop_porter_cannot_translate_gives_files_that_parse(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "timing.py").write_text(DTW)
    for target in ("neuron", "tpu", "xla"):
        res = porter("kernels", "src", "--target", target, "--scaffold", f"k-{target}", cwd=tmp_path)
        assert "Traceback" not in res.stderr.decode(), res.stderr.decode()
        files = sorted((tmp_path / f"k-{target}").glob("*.py"))
        assert len(files) == 3, files
        for path in files:
            ast.parse(path.read_bytes(), filename=str(path))


def test_generated_names_are_identifiers(tmp_path):
    from porter.kernels.scaffold import safe_name

    for raw in ("1st", "class", "demo::fast", "ünï", "a.b", "", "__"):
        name = safe_name(raw)
        assert name.isidentifier() and name.isascii() and not __import__("keyword").iskeyword(name), (raw, name)


def test_a_kernel_name_too_long_for_a_file_name_gets_a_short_one(tmp_path):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "ops.py").write_text(TRITON.replace("scale_kernel", "scale_kernel_" + "x" * 300))
    res = porter("kernels", "src", "--target", "xla", "--scaffold", "k", cwd=tmp_path)
    assert res.returncode == 1 and "Traceback" not in res.stderr.decode(), res.stderr.decode()
    files = sorted(p.name for p in (tmp_path / "k").iterdir())
    assert len(files) == 3 and all(len(n) < 100 for n in files), files


# -- `porter backends --scaffold DIR` (a per-device class family: CUDA's class and another's) --

ACCEL = (
    "import torch\n\n\nclass Accelerator:\n    pass\n\n\nclass CUDA_Accelerator(Accelerator):\n"
    "    def sync(self):\n        torch.cuda.synchronize()\n"
)
CPU_ACCEL = "class CPU_Accelerator(Accelerator):\n    pass\n"


def _family(src: Path, cuda_name: str = "cuda_accelerator.py") -> None:
    src.mkdir(parents=True, exist_ok=True)
    (src / cuda_name).write_text(ACCEL)
    (src / "cpu_accelerator.py").write_text(CPU_ACCEL)


def test_backends_scaffold_does_not_write_through_a_dangling_link(tmp_path):
    _family(tmp_path / "src")
    out, outside = tmp_path / "out", tmp_path / "outside"
    out.mkdir()
    outside.mkdir()
    (out / "neuron_accelerator.py").symlink_to(outside / "planted.py")  # dangling
    res = porter("backends", "src", "--target", "neuron", "--scaffold", "out", cwd=tmp_path)
    shown = res.stdout.decode() + res.stderr.decode()
    assert res.returncode == 0 and "Traceback" not in shown, shown
    assert list(outside.iterdir()) == [] and (out / "neuron_accelerator.py").is_symlink()
    assert "kept" in shown and "wrote 0 file(s)" in shown, shown
    assert not [p for p in out.iterdir() if p.name.endswith(".porter-tmp")]


def test_backends_scaffold_keeps_a_crafted_file_name_a_name(tmp_path):
    evil = 'cuda_a""";__import__("os").system("touch PWNED");"""\nimport os\n""".py'
    _family(tmp_path / "src", evil)
    res = porter("backends", "src", "--target", "neuron", "--scaffold", "out", cwd=tmp_path)
    assert res.returncode == 0 and "Traceback" not in res.stderr.decode(), res.stderr.decode()
    [made] = (tmp_path / "out").iterdir()
    assert made.name.isascii() and made.name.removesuffix(".py").isidentifier(), made.name  # a module name
    tree = _parses_without_calls_to(made, "system")
    assert '__import__("os").system' in ast.get_docstring(tree)  # still there, as text
    assert any(isinstance(n, ast.ClassDef) and n.name == "NEURON_Accelerator" for n in tree.body)
    assert not list(tmp_path.rglob("PWNED*"))


def test_backends_scaffold_gives_each_family_a_file_of_its_own(tmp_path):
    """Two families whose CUDA modules have one name in two folders (`a/cuda_accelerator.py`,
    `b/cuda_accelerator.py`), or names that differ only in case (which a case-insensitive file
    system, macOS's and Windows' default, takes for one): the second family's file was
    "kept, not overwritten" (porter's own file of the first), and it got none (adversarial
    read 13; `kernels --scaffold` gives such names a `_`)."""
    for second in ("cuda_accelerator.py", "CUDA_accelerator.py"):
        base = tmp_path / second
        _family(base / "src" / "a")
        (base / "src" / "b").mkdir(parents=True)
        (base / "src" / "b" / second).write_text(ACCEL.replace("Accelerator", "Accel"))
        (base / "src" / "b" / "cpu_accelerator.py").write_text(CPU_ACCEL.replace("Accelerator", "Accel"))
        res = porter("backends", "src", "--target", "neuron", "--scaffold", "out", cwd=base)
        shown = res.stdout.decode() + res.stderr.decode()
        assert res.returncode == 0 and "kept" not in shown and "wrote 2 file(s)" in shown, shown
        made = sorted((base / "out").iterdir())
        assert len({p.name.casefold() for p in made}) == 2, made
        classes = {
            n.name for p in made for n in _parses_without_calls_to(p, "system").body if isinstance(n, ast.ClassDef)
        }
        assert {"NEURON_Accelerator", "NEURON_Accel"} <= classes, classes


def test_backends_scaffold_names_a_family_of_a_long_module_name_a_file_that_fits(tmp_path):
    """A CUDA module whose file name holds 255 bytes (the most a file system allows) made the
    name `neuron_aaa...py` (257): "cannot write into --scaffold out: File name too long",
    exit 2, and no family after it got its file (adversarial read 15; `kernels --scaffold`
    shortens a long name keeping a digest of it)."""
    for long in ("cuda_" + "a" * 247 + ".py", "a" * 252 + ".py"):  # with the device word, without
        base = tmp_path / long[:8]
        _family(base / "src" / "a", long)
        _family(base / "src" / "b")
        res = porter("backends", "src", "--target", "neuron", "--scaffold", "out", cwd=base)
        shown = res.stdout.decode() + res.stderr.decode()
        assert res.returncode == 0 and "wrote 2 file(s)" in shown, shown
        made = sorted((base / "out").iterdir())
        assert len(made) == 2 and all(len(p.name.encode()) <= 255 for p in made), made
        for p in made:
            _parses_without_calls_to(p, "system")


def test_backends_scan_passes_over_a_fifo_and_an_unparsable_cuda_module(tmp_path):
    import os

    src = tmp_path / "src"
    _family(src)
    os.mkfifo(src / "zz_fifo.py")  # opened blocking, it would hang the scan
    other = tmp_path / "other"
    other.mkdir()
    (other / "cuda_thing.py").write_text("class CUDA_Thing(Base):\n    pass\n(\n")  # no Python
    (other / "cpu_thing.py").write_text("class CPU_Thing(Base):\n    pass\n")
    res = porter("backends", "src", "--target", "neuron", "--scaffold", "out", cwd=tmp_path, timeout=60)
    assert res.returncode == 0 and (tmp_path / "out" / "neuron_accelerator.py").is_file(), res.stderr.decode()
    res = porter("backends", "other", "--target", "neuron", "--scaffold", "out2", cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 0 and "Traceback" not in err and "does not parse" in err, err
    assert not (tmp_path / "out2").exists() or list((tmp_path / "out2").iterdir()) == []


def test_backends_prints_names_as_text(tmp_path):
    src = tmp_path / "src" / "x[" / "z]"  # a path holding `[/z]`: markup's closing tag
    _family(src)
    res = porter("backends", "src", "--target", "neuron", "--scaffold", "o[red]ut", cwd=tmp_path)
    shown = res.stdout.decode() + res.stderr.decode()
    assert res.returncode == 0 and "Traceback" not in shown, shown
    assert "x[/z]/cuda_accelerator.py" in shown and "o[red]ut/neuron_accelerator.py" in shown, shown
    res = porter("backends", "no[/such]", "--target", "neuron", cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 2 and "Traceback" not in err and "no[/such]" in err, err


CR_STREAM = '    def stream(self):\n        return torch.cuda.stream(torch.cuda.Stream("""\rprint("ran")#"""))\n'


def test_a_carriage_return_quoted_in_a_note_stays_in_the_note(tmp_path):
    """The third adversarial read: a `# porter[CODE]: …` note quotes the source it is about;
    a carriage return in a triple-quoted string there is a line break to Python, and libcst
    refused the comment: `rewrite --annotate` failed the file ("internal error") and
    `backends --scaffold` (which always annotates) wrote nothing."""
    src = tmp_path / "src"
    _family(src)
    (src / "cuda_accelerator.py").write_text(ACCEL + CR_STREAM, newline="")
    (tmp_path / "m.py").write_bytes(b'import torch\ns = torch.cuda.Stream("""\rprint("ran")#""")\n')
    res = porter("rewrite", "m.py", "--target", "neuron", "--annotate", "--allow-no-vcs", cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 0 and "internal error" not in err, err
    new = (tmp_path / "m.py").read_bytes()
    [note] = [ln for ln in new.split(b"\n") if ln.startswith(b"# porter[")]
    assert b"\r" not in note, new
    res = porter("backends", "src", "--target", "neuron", "--scaffold", "out", cwd=tmp_path)
    assert res.returncode == 0 and (tmp_path / "out" / "neuron_accelerator.py").is_file(), res.stderr.decode()
    made = (tmp_path / "out" / "neuron_accelerator.py").read_bytes().decode()
    assert all("\r" not in ln for ln in made.split("\n") if ln.lstrip().startswith("# porter["))


def test_a_kernel_named_as_a_module_the_scaffold_imports_does_not_rebind_it(tmp_path):
    """Kernels called `torch`, `tl` and `wrap`: the `_op.py` of `torch` held `def torch(...)`,
    which rebinds the torch module for the rest of the file (the reference a person writes
    there), `wrap` gave a `wrap_nki` hiding torch_neuronx's, and `torch` + `_neuron.py` is
    the module name of AWS's torch-neuron package."""
    src = tmp_path / "src"
    src.mkdir()
    body = "    pid = tl.program_id(0)\n    tl.store(out + pid, tl.load(x + pid))\n\n"
    kernels = "".join(f"@triton.jit\ndef {name}(x, out):\n{body}" for name in ("torch", "tl", "wrap"))
    (src / "k.py").write_text("import triton\nimport triton.language as tl\n\n" + kernels)
    res = porter("kernels", "src", "--target", "neuron", "--scaffold", "k", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr.decode()
    written = sorted(p.name for p in (tmp_path / "k").iterdir())
    assert "torch_neuron.py" not in written, written
    imported = {"torch", "tl", "triton", "nki", "nl", "nisa", "nki_op", "wrap_nki", "pytest"}
    for path in (tmp_path / "k").glob("*.py"):
        tree = ast.parse(path.read_text())
        defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
        assigned = {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)}
        assert not (defined | assigned) & imported, (path.name, (defined | assigned) & imported)


def test_a_kernel_parameter_named_as_a_name_the_scaffold_uses_does_not_hide_it(tmp_path):
    """A Triton kernel whose parameters are called `torch`, `wrap_nki` and `device`: the test's
    `make_inputs` held `torch = 256` before `torch.randn(...)`, and `device = 256` replaced its
    own `device` argument; the NKI wrapper's `wrap_nki` parameter hid torch_neuronx's. No
    parameter of a generated function (or local of `make_inputs`) is a name the file uses."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def scale(torch, wrap_nki, device, x_ptr, out_ptr, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs) * torch * device)\n"
    )
    res = porter("kernels", "src", "--target", "neuron", "--scaffold", "k", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr.decode()
    files = sorted((tmp_path / "k").glob("*.py"))
    assert len(files) == 3, files
    imported = {"torch", "wrap_nki", "nki", "nl", "nisa", "nki_op", "pytest"}
    for path in files:
        tree = ast.parse(path.read_text())
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
            assigned = {
                t.id for n in ast.walk(fn) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
            }
            assert not (params | assigned) & imported, (path.name, fn.name, (params | assigned) & imported)
            if fn.name == "make_inputs":
                assert "device" not in assigned, path.read_text()


def test_backends_scaffold_reads_cuda_s_module_in_the_encoding_its_coding_line_names(tmp_path):
    """A module that declares `# -*- coding: latin-1 -*-` is Python (PEP 263); the scaffold read
    it as UTF-8: "cannot read CUDA's module", nothing written (adversarial read 6). Its text
    comes out as the text it is (`café`), in a UTF-8 file whose coding line is no longer first."""
    src = tmp_path / "src"
    _family(src)
    module = "# -*- coding: latin-1 -*-\n" + ACCEL + '\n    def name(self):\n        return "café"\n'
    (src / "cuda_accelerator.py").write_bytes(module.encode("latin-1"))
    res = porter("backends", "src", "--target", "neuron", "--scaffold", "out", cwd=tmp_path)
    shown = res.stdout.decode() + res.stderr.decode()
    assert res.returncode == 0 and "Traceback" not in shown, shown
    made = tmp_path / "out" / "neuron_accelerator.py"
    text = made.read_bytes().decode("utf-8")
    assert 'return "café"' in text and "class NEURON_Accelerator" in text, text
    assert ast.parse(made.read_bytes())


@pytest.mark.parametrize("breaker", ["\x0c", "\x0b", "\x1c", "\x85", "\u2028", "\u2029"])
def test_a_renamed_parameter_is_renamed_on_its_own_line(tmp_path, breaker):
    """A kernel parameter the scaffold renames (`device` -> `device_`) is renamed where tokenize
    found it: the lines were cut by str.splitlines, which also ends a line at a form feed, \\v,
    \\x1c-\\x1e, \\x85 or U+2028/9, so in a kernel with one in a comment the rename landed on
    another line and `kernels --scaffold` ended in a SyntaxError traceback (adversarial read 12)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n@triton.jit\n"
        "def scale(x_ptr, out_ptr, device, n, BLOCK: tl.constexpr):\n"
        f"    # a comment holding {breaker} here\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    mask = offs < n\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * device, mask=mask)\n",
        encoding="utf-8",
    )
    res = porter("kernels", "src", "--target", "neuron", "--scaffold", "k", cwd=tmp_path)
    shown = res.stdout.decode() + res.stderr.decode()
    assert res.returncode in (0, 1) and "Traceback" not in shown, shown
    op = (tmp_path / "k" / "scale_op.py").read_text(encoding="utf-8")
    # the reference reads it (in the dtype Triton computes a value with an argument in)
    assert "out_ptr.view(-1)[:n] = (_as_triton(x_ptr.view(-1)[:n], device_) * device_)" in op, op


def _triton_kernels(tmp_path, *names):
    """`src/k.py`: one masked Triton kernel under each of `names`."""
    body = (
        "(x_ptr, out_ptr, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    mask = offs < n\n"
        "    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2, mask=mask)\n\n\n"
    )
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.py").write_text(
        "import triton\nimport triton.language as tl\n\n\n"
        + "".join(f"@triton.jit\ndef {name}{body}" for name in names)
    )


def test_a_kernel_named_test_gives_no_test_pytest_did_not_ask_for(tmp_path):
    """pytest collects `test_*.py` and every `test*` function of a test module, imported ones
    too: kernel `test_a` made `test_a_op.py` (the name kernel `a_op`'s test needed: that test
    was "kept", never written) and `test_a_reference`, which its test imports, a test that
    errors for want of fixtures; its `test_a_neuron.py` stopped a run without nki at collection."""
    _triton_kernels(tmp_path, "test_a", "a_op", "testb")
    res = porter("kernels", "src", "--target", "neuron", "--scaffold", "k", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr.decode()
    assert b"kept" not in res.stderr, res.stderr.decode()
    files = sorted(p.name for p in (tmp_path / "k").glob("*.py"))
    assert len(files) == 9, files  # three files for each kernel
    tests = [p for p in files if p.startswith("test_") or p.endswith("_test.py")]
    assert len(tests) == 3, tests  # one test module per kernel, no other module pytest collects
    for name in tests:
        tree = ast.parse((tmp_path / "k" / name).read_text())
        collected = [
            n.asname or n.name
            for i in ast.walk(tree)
            if isinstance(i, ast.ImportFrom)
            for n in i.names
            if (n.asname or n.name).startswith("test")
        ]
        assert not collected, (name, collected)  # an imported `test*` function is a test to pytest


def test_kernels_whose_names_differ_only_in_case_get_file_names_that_differ_without_case(tmp_path):
    """macOS and Windows fold case by default: kernels `Scale` and `scale` made `Scale_op.py`
    and `scale_op.py`, one file there, so the second kernel's three files were "kept" (files
    porter had written itself) and that kernel got no scaffold; a tree with both names cannot
    be checked out there either."""
    _triton_kernels(tmp_path, "Scale", "scale", "SCALE")
    res = porter("kernels", "src", "--target", "neuron", "--scaffold", "k", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr.decode()
    assert b"kept" not in res.stderr, res.stderr.decode()
    files = sorted(p.name for p in (tmp_path / "k").glob("*.py"))
    assert len(files) == 9, files
    assert len({name.casefold() for name in files}) == 9, files  # distinct on a case-folding file system
    for name in files:
        ast.parse((tmp_path / "k" / name).read_text())
    # each kernel's test imports its own files, under their new names
    tests = [p for p in files if p.startswith("test_")]
    imported = {
        n.module
        for p in tests
        for n in ast.walk(ast.parse((tmp_path / "k" / p).read_text()))
        if isinstance(n, ast.ImportFrom)
    }
    assert {m + ".py" for m in imported if m} - set(files) <= {"torch.py", "pytest.py"}, (imported, files)


# 1,500 chained calls: libcst parses them, and overflows Python's recursion generating their code
DEEP = "x = torch.zeros(1)" + ".cuda()" * 1500 + "\n"


def test_kernels_and_backends_scaffold_pass_over_a_file_too_deep_for_the_parser(tmp_path):
    """`kernels` (listing, or --scaffold) and `backends --scaffold` read files in porter's own
    process: a file of 1,500 chained calls ended both in a RecursionError traceback. Each
    file's work now runs bounded (porter.pipeline.bounded) and such a file is a one-line note
    naming it (adversarial read 14)."""
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "deep.py").write_text("import torch\nimport triton\n" + DEEP)
    (tmp_path / "k" / "ok.py").write_text(TRITON)
    res = porter("kernels", "k", "--target", "neuron", "--scaffold", "out", cwd=tmp_path)
    shown = res.stdout.decode() + res.stderr.decode()
    assert "Traceback" not in shown and res.returncode == 1, shown
    assert "deep.py: nested too deeply" in " ".join(shown.split()), shown
    assert "scale_kernel" in shown and (tmp_path / "out" / "scale_kernel_op.py").is_file(), shown

    _family(tmp_path / "b")
    (tmp_path / "b" / "cuda_accelerator.py").write_text(ACCEL + "\n\n" + DEEP)
    res = porter("backends", "b", "--target", "neuron", "--scaffold", "bout", cwd=tmp_path)
    shown = res.stdout.decode() + res.stderr.decode()
    assert "Traceback" not in shown and res.returncode == 0, shown
    assert "cuda_accelerator.py: nested too deeply" in " ".join(shown.split()), shown


def test_kernels_bounds_each_file_by_the_per_file_limit(tmp_path):
    """`porter kernels` had no per-file limit: a file of 20,000 chained calls kept it busy for
    minutes (and Ctrl-C waited for the parser). `--file-timeout` bounds each file's work, as it
    does for rewrite and lint, and the file is named (adversarial read 14)."""
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "slow.py").write_text(
        "import torch\nimport triton\nx = torch.zeros(1)" + ".cuda()" * 20000 + "\n"
    )
    # (the message shows the limit stopped it; 120 s only ends a test the limit no longer stops)
    res = porter("kernels", "k", "--file-timeout", "3", cwd=tmp_path, timeout=120)
    shown = " ".join((res.stdout.decode() + res.stderr.decode()).split())
    assert "Traceback" not in shown and "slow.py: took longer than 3 s" in shown, shown


def test_kernels_survives_a_file_that_crashes_the_native_parser(tmp_path):
    """3,000 nested brackets crash libcst's native parser (a stack overflow): `porter kernels`
    parsed in its own process and died with SIGSEGV, printing nothing at all. Each file is
    parsed in a process of its own now: the file is a note and the rest is listed
    (adversarial read 14)."""
    (tmp_path / "k").mkdir()
    (tmp_path / "k" / "nest.py").write_text("import triton\nx = " + "[" * 3000 + "1" + "]" * 3000 + "\n")
    (tmp_path / "k" / "ok.py").write_text(TRITON)
    res = porter("kernels", "k", cwd=tmp_path)
    shown = " ".join((res.stdout.decode() + res.stderr.decode()).split())
    assert res.returncode == 1, (res.returncode, shown)
    assert "nest.py: porter's parser crashed on this file" in shown and "scale_kernel" in shown, shown


def _module_names(tree: ast.Module) -> set[str]:
    """The names a generated module binds at its top: imports, functions, assignments."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, ast.FunctionDef):
            out.add(node.name)
        elif isinstance(node, ast.Assign):
            out |= {t.id for t in node.targets if isinstance(t, ast.Name)}
    return out


def _compiled(path: Path) -> ast.Module:
    """The file's tree, once CPython's compiler (not only its parser) takes it, as an import does."""
    compile(path.read_bytes(), str(path), "exec", dont_inherit=True)
    return ast.parse(path.read_bytes())


@pytest.mark.parametrize("target", ["neuron", "tpu", "xla"])
def test_no_parameter_of_any_kind_of_kernel_hides_a_name_its_files_use(tmp_path, target):
    """A CUDA kernel's and a custom op's parameters named as the files' own functions and imports
    (`addk_reference`, `addk_nki_kernel`, `jax`, `pl`, `device`) were written as they are: `addk`
    called its tensor argument `addk_reference(...)`, the Pallas wrapper called `pl.pallas_call`
    on a jax.Array (only a Triton kernel's were renamed). And a custom op's own `out` input and the
    Pallas kernel's default output made `out_ref` twice: a file `ast.parse` takes and the import
    refuses ("duplicate argument"). A Triton kernel's `float` made the reference call a tensor."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.cu").write_text(
        "__global__ void addk(const float* addk_reference, float* addk_nki_kernel, float* addk_pallas_kernel, int n)"
        " { int i = threadIdx.x; if (i < n) addk_nki_kernel[i] = addk_reference[i]; }\n"
    )
    (src / "m.py").write_text(
        "import torch\n\n\n"
        '@torch.library.triton_op("mylib::gelu2", mutates_args=())\n'
        "def gelu2(jax: torch.Tensor, pl: torch.Tensor, device: torch.Tensor, out: torch.Tensor) -> torch.Tensor:\n"
        "    return jax + pl\n"
    )
    # a Triton kernel's parameter named as a builtin the reference calls: `float('inf')`
    (src / "t.py").write_text(TRITON.replace("out_ptr", "float").replace("* alpha", "* alpha + 1e400"))
    res = porter("kernels", "src", "--target", target, "--scaffold", "k", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr.decode()
    files = sorted((tmp_path / "k").glob("*.py"))
    assert len(files) == 9, (files, res.stderr.decode())
    for path in files:
        tree = _compiled(path)
        bound = _module_names(tree)
        for fn in (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)):
            params = {a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs}
            called = {n.func.id for n in ast.walk(fn) if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
            assert not params & (bound | called), (path.name, fn.name, params & (bound | called))


@pytest.mark.parametrize(
    "literal,expected", [("1e400", "float('inf')"), ("(1e400 - 1e400)", "float('inf')"), ("0x" + "f" * 5000, "0xfff")]
)
def test_a_kernel_s_literal_is_written_as_a_literal(tmp_path, literal, expected):
    """A float the parser rounds to infinity (`1e400`) was written `inf`, a name the reference
    never defines (NameError when the reference ran), and an integer of 5,000 hex digits ended in
    "internal error in porter: ValueError: Exceeds the limit (4300 digits)": no scaffold at all."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(TRITON.replace("* alpha", f"* alpha + {literal}"))
    res = porter("kernels", "src", "--target", "neuron", "--scaffold", "k", cwd=tmp_path)
    err = res.stderr.decode()
    assert res.returncode == 1 and "internal error" not in err, err
    op = tmp_path / "k" / "scale_kernel_op.py"
    tree = _compiled(op)
    reference = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "scale_kernel_reference")
    # (its parameters and assignments, and a helper it defines: `_as_triton`, with its parameters)
    local = {a.arg for n in ast.walk(reference) if isinstance(n, ast.arguments) for a in n.args} | {
        t.id for n in ast.walk(reference) if isinstance(n, ast.Assign) for t in n.targets if isinstance(t, ast.Name)
    }
    local |= {n.name for n in ast.walk(reference) if isinstance(n, ast.FunctionDef)}
    free = {n.id for n in ast.walk(reference) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - local
    assert free - {"torch"} <= set(dir(builtins)), (free, op.read_text())  # (`inf` is none of them)
    assert expected in op.read_text(), op.read_text()


def test_a_parameter_python_reads_as_another_name_keeps_its_kind(tmp_path):
    """Python reads names in NFKC (`ｘ` is `x`), and so does the translation: the kinds were
    looked up under the name as written, so a fullwidth pointer the kernel loads was declared
    `float ｘ_` in the op's schema, and calling the op with a tensor failed."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "k.py").write_text(TRITON.replace("x_ptr", "\uff58_ptr"))
    res = porter("kernels", "src", "--target", "neuron", "--scaffold", "k", cwd=tmp_path)
    assert res.returncode == 1, res.stderr.decode()
    tree = _compiled(tmp_path / "k" / "scale_kernel_op.py")
    op = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "scale_kernel")
    kinds = {a.arg: ast.unparse(a.annotation) for a in op.args.args if a.annotation is not None}
    assert [kind for kind in kinds.values()].count("torch.Tensor") == 2, kinds  # the two pointers


def test_backends_scaffold_keeps_the_statements_on_the_docstring_s_line(tmp_path):
    """The new module's note replaces CUDA's docstring, and only it: the whole first line went, so
    `\"\"\"CUDA's.\"\"\"; import torch; from base import Accelerator` left a module without its
    imports (a NameError at import, in a file porter had checked)."""
    src = tmp_path / "src"
    src.mkdir()
    (src / "base.py").write_text("class Accelerator:\n    pass\n")
    (src / "cuda_accelerator.py").write_text(
        '"""CUDA\'s."""; import torch; from base import Accelerator\n\n\n'
        "class CUDA_Accelerator(Accelerator):\n    def sync(self):\n        torch.cuda.synchronize()\n"
    )
    (src / "cpu_accelerator.py").write_text("from base import Accelerator\n\n\n" + CPU_ACCEL)
    res = porter("backends", "src", "--target", "neuron", "--scaffold", "out", cwd=tmp_path)
    assert res.returncode in (0, 1), res.stderr.decode()
    tree = _compiled(tmp_path / "out" / "neuron_accelerator.py")
    assert {"torch", "Accelerator"} <= _module_names(tree), ast.unparse(tree)
    assert ast.get_docstring(tree).startswith("TorchNeuron backend"), ast.unparse(tree)


def test_kernels_in_files_whose_names_are_not_utf8_are_listed_and_scaffolded(tmp_path):
    """A Triton kernel in `b<0xFF>.py`: the project's CUDA-only imports encoded its module's name
    with `.encode()`, and `porter kernels` (with `--scaffold` or not) ended in a UnicodeEncodeError
    traceback; the table showed such a name as `\\udcff`, where every other output shows `\\xff`."""
    import os

    src = tmp_path / "src"
    src.mkdir()
    (src / os.fsdecode(b"b\xff.py")).write_text(TRITON)
    res = porter("kernels", "src", "--target", "neuron", "--scaffold", "k", cwd=tmp_path)
    out, err = res.stdout.decode(), res.stderr.decode()
    assert res.returncode == 1 and "Traceback" not in err, err
    assert "b\\xff.py:" in out and "\\udcff" not in out, out
    files = sorted((tmp_path / "k").glob("*.py"))
    assert len(files) == 3, files
    for path in files:
        _compiled(path)
    listed = porter("kernels", "src", "--json", cwd=tmp_path).stdout.decode()
    assert '"b\\\\xff.py"' in listed, listed  # JSON's "b\\xff.py", as lint's JSON names it
    # and a backend family whose CUDA module's name is not UTF-8, in the table and in JSON
    (src / os.fsdecode(b"cuda_acc\xff.py")).write_text(ACCEL)
    (src / "cpu_acc.py").write_text(CPU_ACCEL)
    for args in ((), ("--json",)):
        shown = porter("backends", "src", "--target", "neuron", *args, cwd=tmp_path)
        text = shown.stdout.decode()
        assert ("cuda_acc\\\\xff" if args else "cuda_acc\\xff") in text and "udcff" not in text, text


def test_kernels_notes_name_a_file_as_every_output_names_it(tmp_path):
    """`kernels` named a file it could not read as it is: `b\\x41.py` (a backslash in the name)
    read as the escape of a byte, where lint shows `b\\\\x41.py`, and `--json` gave a name that is
    not UTF-8 as `\\udcff`, where the table and lint give `\\xff` (seventeenth read)."""
    import json
    import os

    src = tmp_path / "src"
    src.mkdir()
    (src / "b\\x41.py").write_text("import triton\ndef (:\n")
    (src / os.fsdecode(b"c\xff.py")).write_text("import triton\ndef (:\n")
    res = porter("kernels", "src", cwd=tmp_path)
    err = res.stderr.decode()
    assert "note: b\\\\x41.py: " in err and "note: c\\xff.py: " in err, err
    problems = json.loads(porter("kernels", "src", "--json", cwd=tmp_path).stdout)["problems"]
    assert sorted(p.split(":")[0] for p in problems) == ["b\\\\x41.py", "c\\xff.py"], problems


@pytest.mark.parametrize("target,runtime", [("xla", "torch_xla"), ("tpu", "torch_tpu"), ("neuron", "torch_neuron")])
def test_backends_scaffold_names_no_module_as_a_package_the_port_imports(tmp_path, target, runtime):
    """CUDA's module `torch_cuda.py` gave `torch_xla.py` (`torch_tpu.py`, `torch_neuron.py`): beside
    the project's modules it hid the target's own package, and the xla one imported itself
    (`import torch_xla.core.xla_model`: "'torch_xla' is not a package") (seventeenth read)."""
    _family(tmp_path / "src", "torch_cuda.py")
    res = porter("backends", "src", "--target", target, "--scaffold", "out", cwd=tmp_path)
    assert res.returncode == 0, res.stderr.decode()
    [made] = (tmp_path / "out").iterdir()
    assert made.name != f"{runtime}.py" and made.name.startswith(runtime), made.name
    _compiled(made)


@pytest.mark.parametrize("command", ["kernels", "backends"])
def test_an_empty_scaffold_folder_is_a_usage_error_not_the_current_folder(tmp_path, command):
    """`--scaffold "$UNSET"`: `Path("")` is `.`, and `kernels` wrote its 3 files per kernel into the
    folder it ran in (eighteenth read of issue 24)."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "k.py").write_text(TRITON)
    res = porter(command, "src", "--target", "tpu", "--scaffold", "", cwd=tmp_path)
    assert res.returncode == 2 and b"an empty name names no folder" in res.stderr, res.stderr[-800:]
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["src"]
