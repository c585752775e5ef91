"""porter's cheap name resolution agrees with libcst's QualifiedNameProvider where it matters.

The provider is the reference: for every Name/Attribute chain in these snippets that the
provider resolves to something under `torch`, porter's resolver must give the same name,
and where the provider says a chain is local (not an import), porter must say None.
"""

from __future__ import annotations

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, QualifiedNameProvider, QualifiedNameSource

from porter.analysis.resolve import ImportTable, Resolver, ScopeStack, dotted

SNIPPETS = {
    "alias": "import torch as t\nt.cuda.synchronize()\n",
    "from-module": "from torch import cuda\ncuda.synchronize()\n",
    "from-submodule": "from torch.cuda import amp\nwith amp.autocast():\n    pass\n",
    "from-alias": "from torch.cuda import synchronize as sync\nsync()\n",
    "dotted-import": "import torch.cuda\ntorch.cuda.empty_cache()\n",
    "dotted-alias": "import torch.cuda as tc\ntc.current_device()\n",
    "param-shadow": "import torch\ndef f(torch):\n    torch.cuda.synchronize()\n",
    "local-shadow": "from torch import cuda\ndef f():\n    cuda = object()\n    cuda.synchronize()\n",
    "loop-shadow": "import torch\ndef f(xs):\n    for torch in xs:\n        torch.cuda.x()\n",
    "nested": "import torch\ndef f():\n    def g():\n        return torch.cuda.is_available()\n    return g\n",
    "import-in-function": "def f():\n    import torch\n    return torch.cuda.device_count()\n",
    "class-attr": "import torch\nclass A:\n    torch = 1\n    def m(self):\n        return torch.cuda.is_available()\n",
}


class _Collect(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (QualifiedNameProvider,)

    def __init__(self) -> None:
        super().__init__()
        self.scopes = ScopeStack()
        self.pairs: list[tuple[str, set[str], str | None]] = []
        self.resolver: Resolver | None = None
        self.skip: set[int] = set()

    def visit_Module(self, node):
        self.resolver = Resolver(ImportTable.from_module(node), self.scopes)

    def visit_Import(self, node):
        return False  # porter never looks inside import statements

    def visit_ImportFrom(self, node):
        return False

    def visit_AssignTarget(self, node):
        self.skip.add(id(node.target))  # a binding, not a reference

    def visit_FunctionDef(self, node):
        self.scopes.push(node)

    def leave_FunctionDef(self, node):
        self.scopes.pop()

    def _check(self, node):
        name = dotted(node)
        if name is None or id(node) in self.skip:
            return
        provider = {
            q.name
            for q in self.get_metadata(QualifiedNameProvider, node, set())
            if q.source is QualifiedNameSource.IMPORT
        }
        ours = self.resolver.qualname(node)
        self.pairs.append((name, provider, ours))

    def visit_Attribute(self, node):
        self._check(node)

    def visit_Name(self, node):
        self._check(node)


SHADOWED = {"param-shadow", "local-shadow", "loop-shadow"}


@pytest.mark.parametrize("case", SNIPPETS)
def test_agrees_with_qualified_name_provider(case):
    code = SNIPPETS[case]
    wrapper = MetadataWrapper(cst.parse_module(code))
    collector = _Collect()
    wrapper.visit(collector)
    checked = 0
    for name, provider, ours in collector.pairs:
        torch_names = {q for q in provider if q.startswith("torch")}
        if torch_names:
            assert ours in torch_names, (name, provider, ours)
            checked += 1
        elif ours is not None and ours.startswith("torch") and name.split(".")[0] == name:
            # a bare name we resolve that the provider calls local: must not happen
            raise AssertionError((name, provider, ours))
    if case in SHADOWED:
        assert all(
            not (o or "").startswith("torch.cuda")
            for n, p, o in collector.pairs
            if n.startswith(("torch.cuda", "cuda."))
        ), collector.pairs
    else:
        assert checked, "the snippet resolved nothing: the test would prove nothing"


def test_torch_bound_by_a_star_import_is_torch():
    """fastai's modules get `torch` from `from .imports import *`: unported and unreported before."""
    from tests.helpers import port

    code = "from .imports import *\n\ndef default_device():\n    if torch.cuda.is_available():\n        return 'cuda'\n    return 'cpu'\n"
    new, findings = port(code, "xla")
    assert "xr.global_runtime_device_count() > 0" in new and "import torch\n" not in new
    assert any(f.code == "CUDA001" and f.applied for f in findings)
    # no star import: an unbound `torch` stays unknown; a star import without `torch.`: nothing bound
    assert not [f for f in port(code.replace("from .imports import *\n", ""), "xla")[1] if f.code == "CUDA001"]
    table = ImportTable.from_module(cst.parse_module("from .imports import *\nx = 1\n"))
    table.bind_torch_from_star(b"from .imports import *\nx = 1\n")
    assert table.star_modules == [".imports"] and "torch" not in table.names
