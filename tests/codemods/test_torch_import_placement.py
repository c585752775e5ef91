"""Where a rewrite's `torch` comes from (issue 21): a binding in scope is reused, a module
that imports torch only under a guard or only inside functions gets its import there, and a
package module that never imports torch gets none (the site is reported). An application's
plain module keeps its module-level `import torch`."""

from __future__ import annotations

import ast
import textwrap

from tests.helpers import port, port_files, write_files


def _top_level_imports(code: str) -> list[str]:
    return [ast.unparse(s) for s in ast.parse(code).body if isinstance(s, (ast.Import, ast.ImportFrom))]


def test_a_try_import_binding_is_reused():
    code = textwrap.dedent("""
    try:
        import torch
    except ImportError:
        torch = None


    def sync():
        if torch is not None:
            torch.cuda.synchronize()
    """)
    new, _ = port(code, "neuron")
    assert "torch.accelerator.synchronize()" in new
    assert new.count("import torch") == 1
    assert _top_level_imports(new) == []


def test_a_new_import_goes_inside_the_guard_of_an_optional_torch():
    code = textwrap.dedent("""
    import json

    try:
        import torch.utils.collect_env as torchenv
        from torch.cuda import is_available as cuda_available
        TORCH_AVAILABLE = True
    except (ImportError,):
        TORCH_AVAILABLE = False


    def gpu() -> str:
        return "yes" if cuda_available() else "no"
    """)
    new, _ = port(code, "neuron")
    assert "torch.accelerator.is_available()" in new
    assert _top_level_imports(new) == ["import json"]  # nothing outside the try
    tree = ast.parse(new)
    guard = next(s for s in tree.body if isinstance(s, ast.Try))
    assert [ast.unparse(s) for s in guard.body[:2]] == ["import torch", "import torch.utils.collect_env as torchenv"]


def test_function_local_style_gets_a_function_local_import():
    code = textwrap.dedent("""
    def setup():
        import torch
        return torch.zeros(1)


    def sync():
        import torch
        torch.cuda.synchronize()


    def count():
        \"\"\"How many devices.\"\"\"
        from torch.cuda import device_count
        return device_count()
    """)
    new, _ = port(code, "neuron")
    assert _top_level_imports(new) == []
    tree = ast.parse(new)
    funcs = {f.name: f for f in tree.body if isinstance(f, ast.FunctionDef)}
    # `torch` of setup() is not in scope in count(): count() imports it itself, after its docstring
    assert [ast.unparse(s) for s in funcs["count"].body[1:]] == [
        "import torch",
        "return torch.accelerator.device_count()",
    ]
    # sync() already imports it: reused, not repeated
    assert [ast.unparse(s) for s in funcs["sync"].body] == ["import torch", "torch.accelerator.synchronize()"]


def test_a_package_module_without_torch_gets_no_import_and_a_finding(tmp_path):
    # transformers' utils/__init__.py: devices tested through helpers that import torch lazily
    init = textwrap.dedent("""
    from .import_utils import is_torch_cuda_available, is_torch_mps_available, is_torch_xpu_available, is_torch_npu_available


    def get_available_devices():
        devices = {"cpu"}
        if is_torch_cuda_available():
            devices.add("cuda")
        if is_torch_mps_available():
            devices.add("mps")
        if is_torch_xpu_available():
            devices.add("xpu")
        if is_torch_npu_available():
            devices.add("npu")
        return devices
    """).lstrip()
    helpers = textwrap.dedent("""
    import importlib.util


    def is_torch_available():
        return importlib.util.find_spec("torch") is not None


    def is_torch_cuda_available():
        if is_torch_available():
            import torch

            return torch.cuda.is_available()
        return False


    def is_torch_mps_available():
        if is_torch_available():
            import torch

            return torch.backends.mps.is_available()
        return False


    def is_torch_xpu_available():
        if is_torch_available():
            import torch

            return torch.xpu.is_available()
        return False


    def is_torch_npu_available():
        if is_torch_available():
            import torch

            return torch.npu.is_available()
        return False
    """).lstrip()
    write_files(tmp_path, {"lib/__init__.py": "", "lib/utils/__init__.py": init, "lib/utils/import_utils.py": helpers})
    new, findings = port_files(tmp_path, "neuron")["lib/utils/__init__.py"]
    assert new == init
    back = [f for f in findings if f.code == "BACK002"]
    assert back and not back[0].applied and "never imports torch" in back[0].message


def test_an_applications_plain_module_keeps_a_module_level_import():
    code = textwrap.dedent("""
    from torch.cuda import is_available


    def ready():
        return is_available()
    """)
    new, _ = port(code, "neuron")
    assert _top_level_imports(new) == ["import torch"]
    assert "return torch.accelerator.is_available()" in new


def test_the_targets_own_helper_makes_the_rung_with_no_import(tmp_path):
    # transformers imports is_torch_neuron_available beside the others: the rung calls it
    helpers = textwrap.dedent("""
    import importlib.util


    def is_torch_cuda_available():
        if importlib.util.find_spec("torch") is not None:
            import torch

            return torch.cuda.is_available()
        return False


    def is_torch_npu_available():
        if importlib.util.find_spec("torch") is not None:
            import torch

            return torch.npu.is_available()
        return False


    def is_torch_xpu_available():
        if importlib.util.find_spec("torch") is not None:
            import torch

            return torch.xpu.is_available()
        return False


    def is_torch_neuron_available():
        return importlib.util.find_spec("torch_neuronx") is not None
    """).lstrip()
    init = textwrap.dedent("""
    from .import_utils import is_torch_cuda_available, is_torch_neuron_available, is_torch_npu_available, is_torch_xpu_available


    def get_available_devices():
        devices = {"cpu"}
        if is_torch_cuda_available():
            devices.add("cuda")
        if is_torch_npu_available():
            devices.add("npu")
        if is_torch_xpu_available():
            devices.add("xpu")
        return devices
    """).lstrip()
    write_files(tmp_path, {"lib/__init__.py": "", "lib/utils/__init__.py": init, "lib/utils/import_utils.py": helpers})
    new, _ = port_files(tmp_path, "neuron")["lib/utils/__init__.py"]
    assert _top_level_imports(new) == _top_level_imports(init)
    assert '        devices.add("xpu")\n    if is_torch_neuron_available():\n        devices.add("neuron")\n' in new


def test_an_alias_imported_in_another_function_is_imported_where_used_xla():
    code = textwrap.dedent("""
    def device():
        import torch_xla.core.xla_model as xm
        return xm.xla_device()


    def sync():
        import torch
        torch.cuda.synchronize()
    """)
    new, _ = port(code, "xla")
    assert _top_level_imports(new) == []
    sync = next(f for f in ast.parse(new).body if isinstance(f, ast.FunctionDef) and f.name == "sync")
    imported = [ast.unparse(s) for s in sync.body if isinstance(s, ast.Import)]
    assert "import torch_xla.core.xla_model as xm" in imported
    compile(new, "ported.py", "exec")
    # every name the ported sync() reads is bound in it
    names = {n.id for n in ast.walk(sync) if isinstance(n, ast.Name)}
    bound = {a.asname or a.name.split(".")[0] for s in sync.body if isinstance(s, ast.Import) for a in s.names}
    assert names <= bound
