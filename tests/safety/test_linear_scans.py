"""Contract 6 (bounded work): the byte scans that read every file of a project (the project
index of `rewrite` and `lint`, and `porter backends`) take time linear in the file, whatever
it holds. Each of these ran past any per-file limit, because the index is a project's, not a
file's (adversarial read 14)."""

from __future__ import annotations

from porter.analysis import extensions
from porter.analysis.cuda_only_index import _cuda_extension_name, _module_attributes, from_statements
from porter.analysis.device_backends import class_statements, classes
from porter.analysis.index import parameter_loop
from porter.analysis.native_ops import registrations
from porter.analysis.program import defines_is_cuda

from tests.growth import linear, linear_steps


def _quick(fn, make, n: int) -> object:
    """`fn(make(n))`, whose CPU time is checked to grow linearly from `make(n // 4)` (a ratio in the
    same test, not seconds: each input below took minutes to hours before, quadratic or worse)."""
    return linear(fn, make, n)


def test_class_statements_whose_brackets_never_close():
    """`class CudaA(` on 40,000 lines: `\\([^)]*\\)` searched to the end of the file from each
    (5,000 lines 3.4 s, 20,000 54 s: a lint with --file-timeout 10 took 66 CPU s)."""
    assert _quick(lambda s: list(class_statements(s)), lambda n: b"class CudaA(\n" * n, 40000) == []
    assert _quick(lambda s: classes("m.py", s), lambda n: b"class CudaA(\n" * n, 40000) == []
    # heads whose brackets close at one `)`, then a run of tabs and no colon: each head read the
    # run again (8,000 heads and 80 KB of tabs: 10.5 s; this input 64 s)
    assert (
        _quick(lambda s: list(class_statements(s)), lambda n: b"class CudaA(\n" * (n // 10) + b")" + b"\t" * n, 200000)
        == []
    )
    found = list(class_statements(b"class CUDA_A(Base,\n    Other):\n    pass\nclass CPU_A:\n"))
    assert [(n, b) for _, n, b in found] == [(b"CUDA_A", b"Base,\n    Other"), (b"CPU_A", None)]


def test_from_imports_whose_brackets_never_close():
    """`from a import (` on 40,000 lines (5,000 lines cost 1.2 s)."""
    assert len(_quick(lambda s: list(from_statements(s)), lambda n: b"from a import (\n" * n, 40000)) == 40000  # type: ignore[arg-type]


def test_a_from_import_head_of_a_long_run_of_blanks():
    """`from` and 200,000 spaces: the blanks before and after the module (`\\.*[\\w.]*`, which could
    be empty) split the run every way (100,000: 8 CPU s; seventeenth read)."""
    assert _quick(lambda s: list(from_statements(s)), lambda n: b"from" + b" " * n + b"x\n", 200000) == []
    assert _quick(lambda s: list(from_statements(s)), lambda n: b"from\t" + b"\t" * n + b"x import y\n", 200000) != []
    assert [t for _, _, t in from_statements(b"from . import a\n  from ..b.c  import (d,\n e)\n")] == [
        b"from . import a",
        b"from ..b.c  import (d,\n e)",
    ]


def test_library_blocks_of_a_hostile_cpp_source():
    """A C++ source the index reads for its TORCH_LIBRARY blocks: 2,000 spaces after
    `TORCH_LIBRARY(` cost 15 s (cubic: 20,000 did not end), 1,000 unclosed blocks 1 s."""
    assert _quick(registrations, lambda n: b"TORCH_LIBRARY(" + b" " * n, 200000) == []
    assert _quick(registrations, lambda n: b"TORCH_LIBRARY(a, m) {\n" * n, 100000) == []
    assert len(_quick(registrations, lambda n: b"TORCH_LIBRARY(a, m) {\n" + b'm.def("x",\n' * n, 100000)) == 99999  # type: ignore[arg-type]
    # (the lead's review of the thirty-second read: each block's line counted from the file's start, 50,000 unclosed
    # blocks 11 s; a registering function above 4,000 blocks that call it read again for each, 83 s)
    fn = b'void f(torch::Library& m) { m.impl("x", &x); }\n'
    assert len(_quick(registrations, lambda n: fn + b"TORCH_LIBRARY_IMPL(a, CPU, m) { f(m); }\n" * n, 40000)) == 40000  # type: ignore[arg-type]
    assert (
        _quick(registrations, lambda n: fn[:-2] + b"\n" + b"TORCH_LIBRARY_IMPL(a, CPU, m) { f(m); }\n" * n, 40000) == []
    )
    ok = b'TORCH_LIBRARY_IMPL(_C, CUDA, m) {\n  m.impl("mla", &mla);\n}\nTORCH_LIBRARY(_C, ops) { ops.def("f(Tensor x) -> Tensor", &f); }\n'
    assert registrations(ok) == [("_C", "mla", "CUDA"), ("_C", "f", "any")]


def test_the_kinds_of_file_the_incremental_index_keeps_are_found_in_one_pass():
    """The index state's kinds of file (`_KINDS`), read from every file the index reads on every
    run (adversarial read 15): the parameter loop's `for\\s[^\\n]*\\sin\\s[^\\n]*parameters\\(`
    was cubic (18 KB of `for x in ` on one line: 28 s, and a lint 27 CPU s past
    --file-timeout 5), and `is_cuda`'s `^\\s*def` / `: [^=\\n]*` quadratic (100 KB of
    `x.is_cuda:` 20 s, 40 KB of blank lines 4.8 s)."""
    assert _quick(parameter_loop, lambda n: b"parameters(\n" + b"for x in " * n, 200000) is False
    assert _quick(parameter_loop, lambda n: b"for x in " * n + b"m.parameters(", 200000) is True
    assert parameter_loop(b"for p in m.parameters():\n") and parameter_loop(b"for\np in m.parameters(")
    assert not parameter_loop(b"for p in m\n.parameters()") and not parameter_loop(b"for p in m.parameters")
    assert _quick(defines_is_cuda, lambda n: b"x.is_cuda:" * n, 200000) is False
    assert _quick(defines_is_cuda, lambda n: b"\n" * n + b"x = t.is_cuda\n", 400000) is False
    assert _quick(defines_is_cuda, lambda n: b" \n" * n + b"  def is_cuda(self):\n", 200000) is True
    assert defines_is_cuda(b"self.is_cuda: bool = True") and defines_is_cuda(b"self.is_cuda = x")
    assert not defines_is_cuda(b"if t.is_cuda == True:") and not defines_is_cuda(b"x.is_cuda: bool\n= 1")


def test_import_lines_the_extension_scans_read():
    """`import` then a compiled module's name on the same line: from each of 20,000 `import`s
    on one line the scan ran to the line's end (120 KB: 14 s; adversarial read 15)."""
    hint = extensions.IMPORT_HINT.search
    assert _quick(hint, lambda n: b"import" * n, 400000) is None
    assert hint(b"from . import _C\n") and hint(b"import pkg.ops_cuda as k\n") and not hint(b"import os\n_C = 1\n")
    exported = {"pkg.ops": ("pkg/ops.py", {"f": "runs CUDA"})}
    running = {"pkg.ops": {"f"}}
    assert (
        _quick(lambda s: _module_attributes([("m.py", s)], exported, running, {}, {}), lambda n: b"import " * n, 400000)
        == {}
    )


def test_a_class_registry_of_extensions_with_a_long_name():
    """A name listed in a class's registry, read as a CUDA extension's or not: the pattern
    tried each `Cuda` of the name to its end (an 80 KB name: 16 s; adversarial read 15). Its bytecodes
    are counted, not timed: the first name is read in a millisecond, whose CPU-time ratio was noise
    (x31 to x57 under load, 5 of 300 over x10 on an idle machine)."""
    import random
    import re

    assert linear_steps(_cuda_extension_name, lambda n: "Cuda" * n + "_Extension", 4000) is False
    assert linear_steps(_cuda_extension_name, lambda n: "_" + "Cudax" * n + "Extension", 4000) is False
    assert linear_steps(_cuda_extension_name, lambda n: "Cudax" * n + "CudaFusedExtension", 4000) is True
    old = re.compile(r"(?:Cuda|CUDA)(?:[A-Z][a-z]+)*(?:Extension|Builder)$")
    pieces = ["Cuda", "CUDA", "Extension", "Builder", "Fused", "x", "A", "a", "_", "Cud", "UDA", "C", "\u00e9"]
    rng = random.Random(11)
    for _ in range(20000):
        name = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 7)))
        assert _cuda_extension_name(name) == bool(old.search(name)), name


def test_a_requirements_file_of_blank_lines_is_read_for_a_cuda_build_once():
    """Whether a requirements-like file pins a CUDA build of torch (or a wheel of one CUDA
    release): `^\\s*` ran from each line start over every blank line after it (40,000 blank
    lines: 27 s of the file's port; adversarial read 15)."""
    from porter.files.port import _cuda_build_evidence

    assert (
        _quick(lambda s: _cuda_build_evidence("requirements.txt", s.decode()), lambda n: b"\n" * n + b"cu\n", 400000)
        is None
    )
    found = _cuda_build_evidence("requirements.txt", "\n\n  torch==2.1.0+cu121\n")
    assert found is not None and "torch==2.1.0+cu121" in found
    wheel = _cuda_build_evidence("requirements.txt", "numpy\n\n cupy-cuda12x\n")
    assert wheel is not None and "cupy-cuda12x" in wheel


def test_a_requirement_line_with_a_long_run_of_spaces_is_cut_once():
    """A requirement's options are cut off where a run of spaces meets `-x`: from each space of
    a run the scan ran to the run's end (20,000 spaces 0.55 s, quadratic; adversarial read 15)."""
    from porter.files.deps.reqfile import _REQ_OPTION

    assert _quick(lambda s: _REQ_OPTION.search(s.decode()), lambda n: b"a" + b" " * n + b"b", 400000) is None
    cut = _REQ_OPTION.search("torch==2.1   --hash=sha256:x")
    assert cut is not None and cut.start() == len("torch==2.1")


def test_a_wheel_of_blank_lines_is_read_for_triton_and_the_targets_once():
    """A wheel's Python files, read for `import triton` and a target's package (`porter dists`'
    CUDA-only check): `^\\s*` ran from each line start over every blank line after it (8 KB of
    blank lines 0.3 s, quadratic; test_regex_linear's sweep)."""
    import io
    import zipfile

    from porter.apidata.cuda_only import _python_evidence

    def evidence(source: bytes):
        data = io.BytesIO()
        with zipfile.ZipFile(data, "w") as whl:
            whl.writestr("pkg/m.py", source)
        return _python_evidence(zipfile.ZipFile(data), ["pkg/m.py"])

    assert _quick(evidence, lambda n: b" \n" * n + b"x = 1\n", 30000) == ([], {})  # 60 KB: 40 s before
    found, targets = evidence(b"\n\n  import triton\nif x:\n\n    from torch_xla import core\n")
    assert any("import triton" in line for line in found) and targets == {"xla": "pkg/m.py"}


def test_a_module_of_blank_lines_is_read_for_a_relative_import_once(tmp_path):
    """Whether a module is a package's (`from .` at a line's start): `^\\s*` ran from each line
    start over every blank line after it (8 KB of blank lines 0.1 s, quadratic)."""
    from types import SimpleNamespace

    from porter.codemods import literals
    from porter.codemods.literals import in_package
    from porter.config.settings import Settings

    def package(source: bytes) -> bool:
        literals._imports_relatively.cache_clear()  # each call reads its source
        return in_package(SimpleNamespace(path=str(tmp_path / "m.py"), source=source, settings=Settings(target="xla")))

    assert _quick(package, lambda n: b" \n" * n + b"x = 1\n", 50000) is False  # 100 KB: 14 s before
    assert package(b"\n\n   from . import a\n") and not package(b"x = 'from .'\n")


def test_a_long_string_of_cuda_words_is_read_as_a_cuda_setting_once():
    """A string read as a CUDA setting's name (DIST003: `PYTORCH_CUDA_ALLOC_CONF`): the
    pattern tried each `CUDA` of a long run to its end (8 KB 0.14 s, quadratic)."""
    from porter.config.settings import Settings
    from porter.pipeline.port import port_source

    def port(source: bytes):
        return port_source(source, "m.py", Settings(target="xla"))

    named = b'import os\nimport torch\nos.environ["TORCH_CUDA_ARCH_LIST"] = "9.0"\nx = torch.ones(1).cuda()\n'
    found = _quick(
        port, lambda n: named + b'os.environ["' + b"CUDA" * n + b'a"] = "1"\n', 30000
    ).findings  # 120 KB: 28 s before
    assert [f.code for f in found if f.code == "DIST003"] == ["DIST003"]
    assert [f.code for f in port(named).findings if f.code == "DIST003"] == ["DIST003"]


def test_a_long_dotted_name_is_read_as_a_kernel_loader_once():
    """A call's dotted name read as a kernel hub's loader (`get_kernel`, `lazy_load_kernel`):
    `\\w*(?:load|get)\\w*_kernel$` tried each `load` of a long name to its end (8 KB 0.08 s,
    quadratic). Only a library's calls reach it, so the pattern is timed here."""
    import random
    import re

    from porter.codemods.backends import _KERNEL_LOADER

    assert _quick(lambda s: _KERNEL_LOADER.search(s.decode()), lambda n: b"m." + b"load" * n + b"x", 30000) is None
    assert _quick(lambda s: _KERNEL_LOADER.search(s.decode()), lambda n: b"get" * n + b"_kernel.x", 40000) is None
    old = re.compile(r"(?i)(?:^|\.)\w*(?:load|get)\w*_kernel$")
    pieces = ["load", "GET", "get", "_kernel", "_KERNEL", "kernel", "_", ".", "a", "\n", " ", "ge", "t"]
    rng = random.Random(5)
    for _ in range(20000):
        name = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 7)))
        assert bool(_KERNEL_LOADER.search(name)) == bool(old.search(name)), name


def test_a_setup_cfg_line_of_a_bracket_and_spaces_is_read_once():
    """A setup.cfg line read as a section header or not: `\\[\\s*([^\\]]+?)\\s*\\]` split the
    spaces three ways before it failed (`[`, 2,000 spaces, `a] x`: 10 s; 4,000: 88 s; cubic)."""
    from porter.config.settings import Settings
    from porter.files.deps.setup_cfg import _SECTION
    from porter.pipeline.port import port_source

    def port(source: bytes):
        return port_source(source, "setup.cfg", Settings(target="xla"))

    cfg = b"[options]\ninstall_requires =\n    torch==2.4.0+cu121\n"
    assert _quick(port, lambda n: cfg + b"[" + b" " * n + b"a] x\n", 100000).status.value == "changed"
    assert (
        port(cfg + b"[ extras ]\nx = 1\n").new_source
        == b"[options]\ninstall_requires =\n    torch==2.4.0\n[ extras ]\nx = 1\n"
    )
    header = _SECTION.fullmatch("[  a b ]")
    assert header is not None and header.group(1).strip() == "a b" and _SECTION.fullmatch("[]") is None


def test_a_setup_cfg_line_of_a_long_run_of_blanks_is_checked_in_linear_time():
    """configparser, which porter checks a setup.cfg with as setuptools reads it, matches a line
    under a section with `(?P<option>.*?)\\s*(?P<vi>=|:)`: quadratic in a run of blanks inside a
    line that no delimiter follows (`[` + 20,000 spaces + `a`: 2.3 s; 100,000: 168 s, past the
    file's time limit; seventeenth read). The verdict and its line stay as they were."""
    from porter.config.settings import Settings
    from porter.core import kinds
    from porter.core.reading import configparser_text
    from porter.files.verify import problem
    from porter.pipeline.port import port_source

    def port(source: bytes):
        return port_source(source, "setup.cfg", Settings(target="xla"))

    cfg = b"[options]\ninstall_requires =\n    torch==2.4.0+cu121\n"
    result = _quick(port, lambda n: cfg + b"[" + b" " * n + b"a\n", 100000)
    assert result.status.value == "error" and result.error_line == 4, (result.status, result.reason)
    for ok in (lambda n: b"key" + b"\t" * n + b"x = 1 y\n", lambda n: b"description = a" + b" " * n + b"b\n"):
        assert _quick(port, lambda n: cfg + ok(n), 100000).status.value == "changed"  # noqa: B023 (called here)
    assert _quick(lambda s: problem(kinds.SETUP_CFG, s), lambda n: cfg + b"[" + b" " * n + b"a\n", 100000) is not None
    assert problem(kinds.SETUP_CFG, cfg + b"[" + b" " * 100 + b"a] x\n") is None
    # indentation (a continuation) and line breaks are kept; only a run inside a line is cut
    text = "[a]\nk = v\n" + " " * 40 + "w" + " " * 40 + "x\n"
    assert configparser_text(text) == "[a]\nk = v\n" + " " * 40 + "w" + " " * 16 + "x\n"


def test_a_dockerfile_variable_line_of_one_long_name_is_read_once():
    """`ARG`/`ENV NAME=value` pairs: from each letter of a long run of name characters not
    followed by `=` the name ran to the run's end (10,000 letters: 0.9 s; 80,000: 60 s, quadratic)."""
    from porter.config.settings import Settings
    from porter.pipeline.port import port_source

    def port(source: bytes):
        return port_source(source, "Dockerfile", Settings(target="xla"))

    base = b"FROM nvidia/cuda:12.1.0-base-ubuntu22.04\n"
    assert _quick(port, lambda n: base + b"ARG " + b"A" * n + b" x\n", 80000).status.value != "error"
    found = port(base + b"ARG 1X=1 CUDA_VISIBLE_DEVICES=0\n").findings
    assert [f.message.split()[0] for f in found if f.code == "ENV001"] == ["`CUDA_VISIBLE_DEVICES`"]


def test_a_pip_install_word_of_open_brackets_is_read_for_extras_once():
    """`pip install -e .[extra]`: from each `[` of a word with no `]` after it the scan ran to the
    word's end (10,000 `[`: 0.8 s, quadratic)."""
    from porter.config.settings import Settings
    from porter.pipeline.port import port_source

    def port(source: bytes):
        return port_source(source, "install.sh", Settings(target="xla"))

    assert _quick(port, lambda n: b"pip install flash-attn -e .[" + b"[" * n + b"\n", 80000).status.value != "error"
    found = port(b"pip install -e .[[dev]x[flash-attn,cupy-cuda12x]\n").findings
    assert [f.message.split()[3] for f in found if f.code == "DEP005"] == ["`flash-attn`", "`cupy-cuda12x`"]


def test_a_makefile_rule_line_with_long_runs_of_spaces_is_read_once():
    """A rule's first line in a part tree-sitter-make did not read: `[^:#=]*?[ \\t]*` ran over
    the spaces before the colon from each of them, and `[ \\t]*([^=;#]*)` those after it
    (`;` and 8,000 spaces: 0.3 s, quadratic). The pattern is timed here (crafting a line
    tree-sitter-make does not read is the parser's choice, not this test's)."""
    from porter.files.shell.makefile import _RULE_LINE

    for line in (lambda n: b";" + b" " * n, lambda n: b"a" + b" " * n + b":=", lambda n: b"a:" + b" " * n + b"="):
        assert _quick(lambda s: _RULE_LINE.match(s.decode()), line, 100000) is None
    rule = _RULE_LINE.match("build cuda :  main.o  util.o ; echo")
    assert rule is not None and (rule.group(1).split(), rule.group(2).split()) == (
        ["build", "cuda"],
        ["main.o", "util.o"],
    )


def test_a_cuda_source_line_of_unclosed_strings_is_blanked_once(tmp_path):
    """`porter kernels` blanks a .cu source's comments and strings: a `"` whose string does not
    close on its line was tried again from each `"` after it (`"\\` 4,096 times: 0.4 s, 60,000 times: no end in 150 s,
    quadratic; within the file's time limit, but a file that should list its kernels ran out)."""
    from porter.core.cpp_text import blanked as _blank
    from porter.kernels.inventory import scan

    def folder(n: int):
        (tmp_path / str(n)).mkdir()
        (tmp_path / str(n) / "k.cu").write_bytes(
            b'__global__ void k(float* x) {}\nconst char* s = "' + b'"\\' * n + b"\n"
        )
        return tmp_path / str(n)

    inventory = _quick(lambda top: scan(top, limit=None), folder, 60000)
    assert [k.name for k in inventory.kernels] == ["k"]  # type: ignore[attr-defined]
    text = 'a "b\\" c // d\n"e" \'f\' /* g */ "h'
    assert _blank(text, strings=True) == 'a "b\\" c' + " " * 5 + "\n" + " " * 16 + '"h'


def test_a_command_word_of_a_long_path_is_read_for_nvidia_files_once():
    """A command's word read for a file of NVIDIA's driver: an ICD's `[\\w/.-]*` ran from each
    `/` of a long path to its end (20,000 `/`: 35 s), and `libnvidia-[\\w-]+` from each `-L` of
    a long word (120 KB: 16 s); this script's port did not end in 200 s."""
    from porter.config.settings import Settings
    from porter.files.shell.commands import nvidia_file
    from porter.pipeline.port import port_source

    def port(source: bytes):
        return port_source(source, "setup.sh", Settings(target="xla"))

    for word in (lambda n: b"/" * n + b"nvidia", lambda n: b"-Llibnvidia-" * (n // 10)):
        made = lambda n: b"export CUDA_HOME=/usr/local/cuda\nldconfig " + word(n) + b"\n"  # noqa: B023, E731
        assert _quick(port, made, 100000).status.value != "error"
    assert nvidia_file("-L/opt/x -Llibnvidia-ml.so.1") == "libnvidia-ml.so.1"
    assert nvidia_file("$X/usr/share/vulkan/icd.d/nvidia_icd.json") == "usr/share/vulkan/icd.d/nvidia_icd.json"
    assert nvidia_file("/etc/OpenCL/vendors/nvidia.icd:/dev/nvidia0") == "/etc/OpenCL/vendors/nvidia.icd"


def test_a_cuda_source_of_many_kernels_is_read_in_linear_time(tmp_path):
    """`porter kernels` read each `__global__` kernel's line as `text.count("\\n", 0, at)`, from
    the file's start: 40,000 kernels in a 2 MiB file took 45 s of the 60 s a file gets (past it,
    every kernel of the file is lost). Macro uses and unclosed heads, read since, too (eighteenth
    read of issue 24)."""
    from porter.kernels.inventory import Inventory, _scan_cuda

    def kernels(source: bytes) -> list:
        path = tmp_path / "k.cu"
        path.write_bytes(source)
        inv = Inventory()
        _scan_cuda(path, "k.cu", inv)
        return inv.kernels

    # 38,000 kernels: 2.0 MB, within the 2 MiB a .cu source is read to (40,000 are 2.1 MB)
    found = _quick(
        kernels,
        lambda n: b"".join(b"__global__ void k%d(float* x, int n) { x[0] = n; }\n" % i for i in range(n)),
        38000,
    )
    assert len(found) == 38000 and (found[-1].name, found[-1].line) == ("k37999", 38000)  # type: ignore[attr-defined]

    def made(n: int) -> bytes:
        return b"#define K(name) __global__ void name(float* x) { x[0] = 0; }\n" + b"".join(
            b"K(k%d)\n" % i for i in range(n)
        )

    found = _quick(kernels, made, 40000)
    assert len(found) == 40000 and (found[-1].name, found[-1].line) == ("k39999", 40001)  # type: ignore[attr-defined]
    assert _quick(kernels, lambda n: b"__global__ void k(" * n, 200000) == []


def test_a_cuda_source_of_many_aliases_of_void_is_read_in_bounded_time(tmp_path):
    """The aliases of `void` a kernel's return type may be spelled as are alternatives of its head's
    pattern, tried at each word of each head: 5,000 of them and 40,000 words took 2 s on 180 KB. The
    first `_VOID_ALIASES` are read (a 2 MB file of 90,000 of them)."""
    from porter.kernels.inventory import Inventory, _scan_cuda

    def source(n: int):  # aliases and heads grow together: reading every alias at every word is quadratic
        aliases = b"".join(b"typedef void V%d;\n" % i for i in range(n))
        heads = (b"__global__ " + b"a " * 2000 + b"\n") * (n // 4500)
        (tmp_path / f"k{n}.cu").write_bytes(aliases + heads + b"__global__ V1 k(float* x) { x[0] = 0; }\n")
        return tmp_path / f"k{n}.cu"

    def kernels(path) -> list:
        inv = Inventory()
        _scan_cuda(path, "k.cu", inv)
        return inv.kernels

    assert [k.name for k in _quick(kernels, source, 90000)] == ["k"]  # type: ignore[attr-defined]


def test_a_cuda_source_of_many_launches_is_read_in_bounded_time(tmp_path):
    """C++ launches are read (`k<<<grid, block>>>(args)`, 39-sleft): each `<<<` is closed by counting
    within 8 KiB, its name read 512 characters back, 4,096 of them a file. Unclosed launches, launches
    that never open their arguments, and 45,000 real ones stay within the bound."""
    from porter.kernels.inventory import Inventory, _scan_cuda

    def calls(source: bytes) -> list:
        path = tmp_path / "k.cu"
        path.write_bytes(source)
        inv = Inventory()
        _scan_cuda(path, "k.cu", inv)
        return inv.launches

    assert _quick(calls, lambda n: b"k<<<" * n, 500000) == []
    assert _quick(calls, lambda n: b"k<<<1,1>>>(" * n, 150000) == []
    many = lambda n: b"__global__ void k(float* x) {}\n" + b"k<float><<<1, 1>>>(x.data_ptr<float>());\n" * n  # noqa: E731
    assert len(_quick(calls, many, 45000)) == 4096  # type: ignore[arg-type]
