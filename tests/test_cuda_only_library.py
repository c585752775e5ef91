"""CUDA-only code in library ports (issue 21, kinds "cuda-only-on" and "cuda-only-edited"):
each case is modelled on a hunk of a real library (fla-core 0.6.0, mmcv 2.2.0, bitsandbytes
0.50.2, DeepSpeed 0.19.8) that porter switched on for the target or edited. Such code stays
byte for byte, with a finding that says why."""

from __future__ import annotations

import textwrap

import pytest

from tests.helpers import port, port_files, write_files

TARGETS = ["neuron", "tpu", "xla"]


@pytest.fixture(autouse=True)
def _in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


# fla/modules/activations/ops.py: a module of Triton kernels whose pure-torch helpers are compiled
TRITON_MODULE = """
import torch
import triton
import triton.language as tl


@triton.jit
def relu_fwd_kernel(x, y, T, B: tl.constexpr):
    pass


@torch.compile
def relu_bwd(x, g):
    return g * (x > 0)


torch_compile = torch.compile(fullgraph=True)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_compile_in_a_module_of_triton_kernels_keeps_inductor(target):
    new, findings = port(TRITON_MODULE, target)
    assert "@torch.compile\n" in new and "torch.compile(fullgraph=True)\n" in new and "backend=" not in new
    said = [f for f in findings if f.code == "COMP001"]
    assert len(said) == 2 and all("module of Triton kernels" in f.message for f in said)


def test_compile_beside_a_triton_import_without_kernels_still_gets_the_backend():
    # a model file that only imports Triton (for a flag) is not a module of kernels
    new, _ = port("import torch\nimport triton\n\nmodel = torch.compile(model)\n", "neuron")
    assert 'backend="neuron"' in new


# mmcv: `mmcv._ext` built by a CUDAExtension bound to a name, its name a variable of setup.py,
# loaded by a helper (`ext_loader.load_ext('_ext', [...])`), dispatched to by `x.is_cuda`
MMCV = {
    "setup.py": """
        from setuptools import setup
        from torch.utils.cpp_extension import CppExtension, CUDAExtension


        def get_extensions():
            ext_name = 'mmcv._ext'
            op_files = ['mmcv/ops/csrc/pytorch/cuda/carafe_cuda.cu']
            extension = CUDAExtension
            return [extension(name=ext_name, sources=op_files)]


        setup(name='mmcv', ext_modules=get_extensions())
    """,
    "mmcv/__init__.py": "",
    "mmcv/utils/__init__.py": "",
    "mmcv/utils/ext_loader.py": """
        import importlib


        def load_ext(name, funcs):
            return importlib.import_module('mmcv.' + name)
    """,
    "mmcv/ops/__init__.py": "",
    "mmcv/ops/carafe.py": """
        import torch
        from torch.autograd import Function

        from ..utils import ext_loader

        ext_module = ext_loader.load_ext('_ext', [
            'carafe_forward', 'carafe_backward'
        ])


        class CARAFEFunction(Function):
            @staticmethod
            def backward(ctx, grad_output):
                assert grad_output.is_cuda
                grad_input = torch.zeros_like(grad_output)
                ext_module.carafe_backward(grad_output, grad_input)
                return grad_input


        def _act_cuda(dim):
            class Act(Function):
                @staticmethod
                def forward(ctx, x):
                    return ext_module.carafe_forward(x, dim)
            return Act


        def bias_act(input, use_custom_op=True):
            if use_custom_op and input.is_cuda:
                return _act_cuda(1).apply(input)
            return input.relu()
    """,
}


@pytest.mark.parametrize("target", TARGETS)
def test_a_loaded_cuda_extension_keeps_its_is_cuda_dispatch(tmp_path, target):
    write_files(tmp_path, MMCV)
    ported = port_files(tmp_path, target)
    new, findings = ported["mmcv/ops/carafe.py"]
    assert "assert grad_output.is_cuda\n" in new and "if use_custom_op and input.is_cuda:" in new
    kept = [f for f in findings if f.code == "GUARD001"]
    assert len(kept) == 2 and all("mmcv._ext" in f.message for f in kept)


def test_the_loader_names_a_compiled_module_and_a_build_name_may_be_a_variable():
    from porter.analysis.extensions import built_extensions, loaded_extensions

    assert "mmcv._ext" in built_extensions("setup.py", textwrap.dedent(MMCV["setup.py"]).encode())
    source = b"ext_module = ext_loader.load_ext(\n    '_ext', ['nms'])\nconfig = load_config('defaults')\n"
    assert loaded_extensions(source) == [("ext_module", "ext_loader.load_ext", "_ext")]


# bitsandbytes: `backends/cuda/ops.py` beside `backends/cpu/`, `backends/xpu/`: CUDA's kernels
# registered for "cuda", calling into the CUDA library through ctypes
BNB = {
    "bnb/__init__.py": "",
    "bnb/backends/__init__.py": "",
    "bnb/backends/cuda/__init__.py": "",
    "bnb/backends/cuda/ops.py": """
        import torch

        from ..._ops import register_kernel
        from ...cextension import lib


        @register_kernel("bitsandbytes::gemm_4bit", "cuda")
        def _(A, B):
            out = torch.empty(A.shape[0], B.shape[1], device="cuda")
            lib.cgemm_4bit_inference(A, B, out)
            return out
    """,
    "bnb/backends/cpu/__init__.py": "",
    "bnb/backends/cpu/ops.py": """
        import torch

        from ..._ops import register_kernel


        @register_kernel("bitsandbytes::gemm_4bit", "cpu")
        def _(A, B):
            return A @ B
    """,
    "bnb/backends/xpu/ops.py": """
        import torch

        from ..._ops import register_kernel


        @register_kernel("bitsandbytes::gemm_4bit", "xpu")
        def _(A, B):
            return torch.ops.xpu_gemm(A, B)
    """,
}


@pytest.mark.parametrize("target", TARGETS)
def test_cudas_folder_of_a_per_device_family_is_kept(tmp_path, target):
    write_files(tmp_path, BNB)
    ported = port_files(tmp_path, target)
    new, findings = ported["bnb/backends/cuda/ops.py"]
    assert new == textwrap.dedent(BNB["bnb/backends/cuda/ops.py"]).lstrip()
    (said,) = [f for f in findings if f.code == "BACK003"]
    assert "beside `cpu/`, `xpu/`" in said.message and "DEV002" in said.message


def test_a_cuda_folder_without_sibling_devices_is_ported_as_usual(tmp_path):
    files = {k: v for k, v in BNB.items() if "/cpu/" not in k and "/xpu/" not in k}
    write_files(tmp_path, files)
    new, _ = port_files(tmp_path, "neuron")["bnb/backends/cuda/ops.py"]
    assert 'device="neuron"' in new


# DeepSpeed's op_builder/builder.py: the project's build code for its CUDA ops; its CUDA
# questions are about the host that compiles them
BUILDER = """
import torch


class OpBuilder:
    def jit_load(self, verbose=True):
        from torch.utils.cpp_extension import load
        self.build_for_cpu = not torch.cuda.is_available()
        return load(name=self.name, sources=self.sources)


class CUDAOpBuilder(OpBuilder):
    def compute_capability_args(self):
        ccs = []
        for i in range(torch.cuda.device_count()):
            ccs.append(torch.cuda.get_device_capability(i))
        return ccs

    def builder(self):
        from torch.utils.cpp_extension import CUDAExtension as ExtensionBuilder
        return ExtensionBuilder(name=self.name, sources=self.sources)
"""


@pytest.mark.parametrize("target", TARGETS)
def test_the_build_code_of_cuda_extensions_is_left(target):
    new, findings = port(BUILDER, target, path="op_builder/builder.py")
    assert new == BUILDER
    (said,) = [f for f in findings if f.code == "BACK007"]
    assert "CUDAExtension" in said.message


def test_a_module_that_only_loads_a_cpp_extension_is_still_ported():
    code = "import torch\nfrom torch.utils.cpp_extension import load\n\nops = load(name='ops', sources=['ops.cpp'])\nx = torch.zeros(3, device='cuda')\n"
    new, _ = port(code, "neuron")
    assert "device='neuron'" in new


# vLLM: `models/kimi_k3/nvidia/` and `amd/` beside `common/`: each vendor's implementation
VENDOR = {
    "vllm/models/kimi_k3/__init__.py": "",
    "vllm/models/kimi_k3/common/layers.py": """
        import torch

        buf = torch.empty(4, device="cuda")
    """,
    "vllm/models/kimi_k3/nvidia/dsa.py": """
        import torch

        topk_buffer_device = "cuda" if torch.cuda.is_available() else "cpu"
    """,
    "vllm/models/kimi_k3/amd/qsa.py": """
        import torch

        device = torch.device("cuda", torch.accelerator.current_device_index())
    """,
}


def test_gpu_vendor_folders_are_kept_and_the_common_one_is_ported(tmp_path):
    write_files(tmp_path, VENDOR)
    ported = port_files(tmp_path, "neuron")
    for name in ("vllm/models/kimi_k3/nvidia/dsa.py", "vllm/models/kimi_k3/amd/qsa.py"):
        new, findings = ported[name]
        assert new == textwrap.dedent(VENDOR[name]).lstrip()
        assert [f.code for f in findings if f.code == "BACK003"] == ["BACK003"]
    assert 'device="neuron"' in ported["vllm/models/kimi_k3/common/layers.py"][0]


def test_porter_kernels_lists_a_loaded_extension_with_the_ops_called_on_it(tmp_path):
    from porter.kernels.inventory import scan

    write_files(tmp_path, MMCV)
    (ext,) = [k for k in scan(tmp_path).kernels if k.kind == "cuda-extension"]
    assert ext.name == "mmcv._ext" and "carafe_backward, carafe_forward" in ext.detail


# DeepSpeed op_binding/linear.py: a Triton autotune probe imports, inside its body, a module
# that imports Triton when it is imported (matmul_ext); its probe tensors stay on CUDA
LAZY_TRITON = {
    "pkg/__init__.py": "",
    "pkg/triton/__init__.py": "",
    "pkg/triton/kernel.py": """
        import triton
        import triton.language as tl


        @triton.jit
        def _fp_matmul(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr):
            pass
    """,
    "pkg/triton/matmul_ext.py": """
        import torch
        import triton
        import pkg.triton.kernel as triton_matmul_kernel


        class Fp16Matmul(torch.autograd.Function):
            _2d_kernel = triton_matmul_kernel._fp_matmul

            @staticmethod
            def _read_autotune_table():
                pass


        matmul = Fp16Matmul.apply
    """,
    "pkg/ops/__init__.py": "",
    "pkg/ops/linear.py": """
        import torch


        class LinearOp:
            def forward(self, x):
                return x.to("cuda")

            @staticmethod
            def _triton_autotune(lengths, hidden_size, dtype=torch.float16):
                from pkg.triton.matmul_ext import Fp16Matmul, matmul
                Fp16Matmul._read_autotune_table()
                for n in lengths:
                    A = torch.randn((n, hidden_size), dtype=dtype, device='cuda')
                    matmul(A, A)
    """,
}


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_a_function_that_lazily_imports_a_triton_module_is_left(tmp_path, target):
    write_files(tmp_path, LAZY_TRITON)
    new, findings = port_files(tmp_path, target)["pkg/ops/linear.py"]
    assert f'x.to("{target}")' in new and "device='cuda')" in new
    (left,) = [f for f in findings if f.code == "GUARD003"]
    assert "_triton_autotune" in left.message and "`triton`" in left.message


def test_a_module_level_triton_import_under_try_does_not_make_its_lazy_importers_cuda_only(tmp_path):
    files = dict(LAZY_TRITON)
    files["pkg/triton/matmul_ext.py"] = """
        import torch
        try:
            import triton
        except ImportError:
            triton = None


        class Fp16Matmul:
            @staticmethod
            def _read_autotune_table():
                pass


        def matmul(a, b):
            return a @ b
    """
    write_files(tmp_path, files)
    new, findings = port_files(tmp_path, "neuron")["pkg/ops/linear.py"]
    assert "device='neuron')" in new and "GUARD003" not in [f.code for f in findings]


# ColossalAI quantization/fp8.py: compiled only on sm_89+ (`disable=cuda_arch < 89`)
FP8 = """
import torch

try:
    cuda_arch = int("".join(str(i) for i in torch.cuda.get_device_capability()))
except Exception:
    cuda_arch = 0


@torch.compile(mode="max-autotune-no-cudagraphs", dynamic=False, disable=cuda_arch < 89)
def cast_to_fp8(x):
    return x.to(torch.float8_e4m3fn)


@torch.compile(mode="max-autotune-no-cudagraphs", dynamic=False)
def cast(x):
    return x.float()
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_compile_whose_options_read_the_cuda_capability_is_left(target):
    new, findings = port(FP8, target)
    assert '@torch.compile(mode="max-autotune-no-cudagraphs", dynamic=False, disable=cuda_arch < 89)\n' in new
    assert "@torch.compile(mode=" not in new.split("def cast_to_fp8")[1]  # the other compile is ported
    assert any(f.code == "COMP001" and "options read the CUDA capability" in f.message for f in findings)


# bitsandbytes cuda_specs.py: the capability of each CUDA device
CAPABILITIES = """
import torch


def get_compute_capabilities():
    return sorted(torch.cuda.get_device_capability(torch.cuda.device(i)) for i in range(torch.cuda.device_count()))
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_capability_query_keeps_its_arguments_and_the_devices_it_counts(target):
    new, findings = port(CAPABILITIES, target)
    assert new == CAPABILITIES
    kept = [f for f in findings if f.code == "GUARD001"]
    assert len(kept) == 1 and "torch.cuda.device_count()" in kept[0].message


# torchao uintx_bit_packed_tensor.py: past `if gemlite is None: raise ImportError(...)` only
# a run with GemLite (Triton kernels) goes on
GEMLITE = """
import torch

try:
    import gemlite
except ImportError:
    gemlite = None


def from_hp(hp_tensor):
    if gemlite is None:
        raise ImportError("gemlite is required")
    int_data = hp_tensor.round()
    if int_data.device.type != "cuda":
        int_data = int_data.cuda()
    return gemlite.helper.A16W8(device=int_data.device).from_weights(int_data)


def other(x):
    return x.cuda()
"""


@pytest.mark.parametrize("target", ["neuron", "tpu"])
def test_the_code_past_a_missing_cuda_only_package_check_is_left(target):
    new, findings = port(GEMLITE, target)
    assert "int_data = int_data.cuda()" in new and 'return x.to("' in new
    (left,) = [f for f in findings if f.code == "GUARD003"]
    assert "if gemlite is None" in left.message and "`gemlite`" in left.message


# DeepSpeed triton_ops/swiglu_triton.py: a Triton launch under the tensor's CUDA device
SWIGLU = """
import torch
import triton
import triton.language as tl


@triton.jit
def _fwd_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass


def swiglu(x):
    n = x.numel()
    if n > 0:
        with torch.cuda.device(x.device):
            _fwd_kernel[(triton.cdiv(n, 128),)](x, n, BLOCK=128)
    with torch.cuda.device(x.device):
        y = x * 2
    return y
"""


def test_a_cuda_device_context_around_a_triton_launch_is_left():
    # (on tpu and xla porter has no rewrite for `torch.cuda.device`: nothing to leave there)
    new, findings = port(SWIGLU, "neuron")
    assert "        with torch.cuda.device(x.device):\n            _fwd_kernel[" in new
    (left,) = [f for f in findings if f.code == "GUARD003" and "with torch.cuda.device" in f.message]
    assert "_fwd_kernel" in left.message and left.start.line == 15  # not the context around `x * 2`


FLAGGED_IMPORT = """
import torch
import torch.nn.functional as F

try:
    from flash_attn import flash_attn_func

    HAS_FLASH_ATTN = True
except ImportError:
    HAS_FLASH_ATTN = False


def attend(q, k, v):
    if HAS_FLASH_ATTN:
        out = flash_attn_func(q, k, v, dropout_p=0.0, causal=False)
    else:
        out = F.scaled_dot_product_attention(q, k, v)
    return out.to("cuda")
"""


def test_the_branch_behind_an_import_flag_is_the_packages_own():
    """The `try` import sets a flag the library tests; without the package (the target) the
    flag is False and the library's own fallback runs: the flagged branch stays, and so does
    the import it uses."""
    new, findings = port(FLAGGED_IMPORT, "neuron", path="pkg/attn.py")
    assert new == FLAGGED_IMPORT.replace('out.to("cuda")', 'out.to("neuron")'), new
    said = [f for f in findings if f.code == "BACK007" and "HAS_FLASH_ATTN" in f.message]
    assert said and "LIB001" in said[0].message


TRITON_KERNEL_MODULE = """
import torch
import triton
import triton.language as tl


@triton.jit
def _scale_kernel(x_ptr, n, BLOCK: tl.constexpr):
    pass


def prune(configs):
    device = torch.cuda.current_device()
    return configs, torch.zeros(1, device="cuda")
"""


def test_a_librarys_module_of_triton_kernels_is_left_whole(tmp_path):
    """DeepSpeed's triton_matmul_kernel.py: its helpers run beside its kernels on CUDA; the
    target never runs the module, so it is left byte for byte, and said so. The same file
    on its own is CUDA's too, by GUARD004 (it cannot be imported without Triton)."""
    write_files(tmp_path / "pkg", {"__init__.py": "", "kern.py": TRITON_KERNEL_MODULE})
    code, findings = port_files(tmp_path, "neuron")["pkg/kern.py"]
    assert code == textwrap.dedent(TRITON_KERNEL_MODULE).lstrip(), code
    said = [f for f in findings if f.code == "GUARD003" and "module of Triton kernels" in f.message]
    assert said and "DEV002" in said[0].message
    assert any(f.code == "KERN002" for f in findings)  # its kernel still reported
    # on its own (an application's script) it is not a library's kernel module, but it imports
    # Triton at its top level and uses it: GUARD004 keeps its CUDA device, and says so
    script, found = port(TRITON_KERNEL_MODULE, "neuron", path=str(tmp_path / "kern.py"))
    assert 'device="cuda"' in script and any(f.code == "GUARD004" for f in found)


# vllm 0.34.0 (issue 21): a Helion kernel module (`import helion` in its own body, used by
# its kernels) builds its autotuning inputs on "cuda"; a FlashInfer backend allocates its
# workspace on "cuda": the module is CUDA's, so its devices stay, each with a finding
KERNEL_MODULE = """
import torch
import helion
import helion.language as hl


@helion.kernel()
def scale(x):
    out = torch.empty_like(x)
    for tile in hl.tile(x.size()):
        out[tile] = x[tile] * 2
    return out


def generate_inputs(n, i):
    x = torch.randn(n, device="cuda")
    return x, torch.device("cuda", i), f"cuda:{i}", x.cpu().cuda()
"""


@pytest.mark.parametrize("target", ["neuron", "xla"])
def test_devices_of_a_module_that_needs_a_cuda_only_package_stay(target):
    new, findings = port(KERNEL_MODULE, target)
    assert new == KERNEL_MODULE
    said = [f for f in findings if f.code == "GUARD004"]
    assert len(said) == 4 and all("`helion`" in f.message for f in said)


def test_a_path_a_kernel_must_ask_for_does_not_port_the_module():
    # Helion's files show a TPU backend (rules/cuda_only/packages.json), but a kernel takes it only
    # with `backend="pallas"` ([[opt_in]] in documented.toml): kept on CUDA there too
    new, findings = port(KERNEL_MODULE, "tpu")
    assert new == KERNEL_MODULE and any(f.code == "GUARD004" for f in findings)


@pytest.mark.parametrize(
    "imports",
    [
        "try:\n    import helion\nexcept ImportError:\n    helion = None\n",  # optional: under `try`
        "import helion\n",  # imported, never used (a flag)
    ],
)
def test_devices_beside_an_optional_or_unused_cuda_only_import_are_ported(imports):
    code = f"import torch\n{imports}\n\ndef make(n):\n    return torch.randn(n, device='cuda')\n"
    new, findings = port(code, "neuron")
    assert "device='neuron'" in new and not any(f.code == "GUARD004" for f in findings)


# vllm all2all.py: DeepEP's manager class imports deep_ep in its methods; its mask buffer is
# allocated on "cuda" in another method. A class beside it that never imports it is ported.
DEEPEP_CLASS = """
import torch


class LowLatencyManager:
    def get_handle(self, kwargs):
        import deep_ep

        return deep_ep.Buffer(**kwargs)

    def query_active_mask(self):
        return torch.zeros(4, device="cuda", dtype=torch.int32)


class Other:
    def mask(self):
        return torch.zeros(4, device="cuda")
"""


def test_devices_of_a_class_that_imports_a_cuda_only_package_stay():
    new, findings = port(DEEPEP_CLASS, "neuron")
    assert 'torch.zeros(4, device="cuda", dtype=torch.int32)' in new
    assert 'torch.zeros(4, device="neuron")' in new
    (said,) = [f for f in findings if f.code == "GUARD004"]
    assert "`LowLatencyManager`" in said.message and "`deep_ep`" in said.message


def test_a_class_that_imports_nixl_ep_keeps_its_devices():
    """NIXL's EP all-to-all (`nixl_ep`) is built only where CUDA is found, from .cu kernels
    (rules/cuda_only/documented.toml); NIXL itself has CPU paths and is not CUDA-only."""
    code = DEEPEP_CLASS.replace(
        "import deep_ep\n\n        return deep_ep.Buffer", "from nixl_ep import Buffer\n\n        return Buffer"
    )
    new, findings = port(code, "neuron")
    assert 'torch.zeros(4, device="cuda", dtype=torch.int32)' in new and 'torch.zeros(4, device="neuron")' in new
    (said,) = [f for f in findings if f.code == "GUARD004"]
    assert "`nixl_ep`" in said.message
    new, findings = port(code.replace("from nixl_ep import", "from nixl._api import"), "neuron")
    assert 'device="cuda"' not in new and not any(f.code == "GUARD004" for f in findings)


# vllm mooncake store worker: a pool built on a third-party CUDA allocator (torch.cuda.MemPool,
# none on the targets) after a `try` whose handler only raises again: the function is CUDA's
MEM_POOL = """
import torch


class Worker:
    @staticmethod
    def create_pool(kind):
        if not kind:
            return None
        try:
            from vendor.allocator import NVLinkAllocator as allocator_cls
        except ImportError as e:
            raise ImportError("needs vendor") from e
        device = torch.device("cuda", torch.accelerator.current_device_index())
        allocator = allocator_cls.get_allocator(device)
        return torch.cuda.MemPool(allocator.allocator())
"""


def test_a_function_that_builds_a_cuda_memory_pool_is_left_as_it_is():
    new, findings = port(MEM_POOL, "neuron")
    assert new == MEM_POOL, new
    assert any(f.code == "GUARD003" and "torch.cuda.MemPool" in f.message for f in findings)
    # a handler that falls back (returns) is another path: the function is ported
    code = MEM_POOL.replace('raise ImportError("needs vendor") from e', "return None")
    new, _ = port(code, "neuron")
    assert 'torch.device("neuron"' in new, new


# vllm's nccl_m2n trainer: a class keeps NCCL's M2N library (`self._m2n = import_m2n()`, from
# another module whose function imports `nccl.m2n`, nccl-extensions: libnccl_m2n.so links CUDA and
# NCCL) and builds its destination device in another method: the device stays CUDA's
M2N = {
    "lib/__init__.py": "",
    "lib/common.py": """
        def import_m2n():
            try:
                import nccl.m2n as m2n
            except ImportError as e:
                raise ImportError("install nccl-extensions") from e
            return m2n
    """,
    "lib/trainer.py": """
        import torch

        from lib.common import import_m2n


        class Trainer:
            def init(self):
                self._m2n = import_m2n()

            def plan(self, index):
                return torch.device("cuda", index)
    """,
}


def test_a_class_that_keeps_a_cuda_only_library_in_an_attribute_keeps_its_devices(tmp_path):
    write_files(tmp_path, M2N)
    new, findings = port_files(tmp_path, "neuron")["lib/trainer.py"]
    assert 'torch.device("cuda", index)' in new, new
    (said,) = [f for f in findings if f.code == "GUARD004"]
    assert "`self._m2n`" in said.message and "nccl.m2n" in said.message
    # with a fallback (the handler returns None) the function is not CUDA-only: ported
    other = tmp_path / "other"
    write_files(
        other,
        {
            **M2N,
            "lib/common.py": M2N["lib/common.py"].replace(
                'raise ImportError("install nccl-extensions") from e', "return None"
            ),
        },
    )
    new, findings = port_files(other, "neuron")["lib/trainer.py"]
    assert 'torch.device("neuron", index)' in new and not any(f.code == "GUARD004" for f in findings), new


def test_a_class_that_caches_cuda_ipc_tensors_keeps_its_devices():
    """vllm's sharded RDT producer caches what rebuild_cuda_tensor (CUDA IPC) returns in
    `self._base_cache[key]`; its serve device, in `__init__`, stays CUDA's."""
    code = (
        "import torch\n"
        "from torch.multiprocessing.reductions import rebuild_cuda_tensor\n\n\n"
        "class Producer:\n"
        "    def __init__(self, index):\n"
        '        self._device = torch.device("cuda", index)\n'
        "        self._cache = {}\n\n"
        "    def rebuild(self, key, args):\n"
        "        self._cache[key] = rebuild_cuda_tensor(*args)\n"
        "        return self._cache[key]\n"
    )
    new, findings = port(code, "neuron")
    assert new == code, new
    (said,) = [f for f in findings if f.code == "GUARD004"]
    assert "`self._cache`" in said.message and "rebuild_cuda_tensor" in said.message


def test_a_function_that_calls_nccls_c_api_keeps_its_device():
    """vllm's utils/nccl.py: the GIN query reads the NCCL communicator of the group's CUDA backend
    and passes it to NCCL's C API through ctypes (`ncclCommQueryProperties`): the device is the
    one NCCL runs on. A function beside it that names no NCCL symbol is ported."""
    code = (
        "import ctypes\n\nimport torch\n\n\n"
        "def query(group):\n"
        "    from .pynccl_wrapper import NCCLLibrary, ncclCommProperties\n\n"
        '    backend = group._get_backend(torch.device("cuda"))\n'
        "    props = ncclCommProperties()\n"
        "    return NCCLLibrary().query(ctypes.c_void_p(backend._comm_ptr()), ctypes.byref(props))\n\n\n"
        "def other(group):\n"
        '    return group._get_backend(torch.device("cuda"))\n'
    )
    new, findings = port(code, "neuron")
    assert new.count('torch.device("cuda")') == 1 and 'torch.device("neuron")' in new, new
    (said,) = [f for f in findings if f.code == "GUARD004"]
    assert "ncclCommProperties" in said.message and "`def query`" in said.message


# vllm's LMCache adapter: LMCache has connectors for other devices (and a TorchNeuron platform),
# but the connector classes it imports by name make torch.cuda streams (the data names the classes)
CONNECTOR_MODULE = """
import torch
from lmcache.v1.gpu_connector import {name}


def make(index, n):
    device = torch.device(f"cuda:{{index}}")
    return {name}(n, device=device)


def save(mapping):
    return mapping.cuda()
"""


def test_a_module_that_imports_a_cuda_only_class_by_name_keeps_its_devices():
    code = CONNECTOR_MODULE.format(name="VLLMPagedMemGPUConnectorV2")
    new, findings = port(code, "neuron")
    assert new == code, new
    said = [f for f in findings if f.code in ("GUARD003", "GUARD004")]  # `make` calls it: GUARD003
    assert len(said) == 2 and all("VLLMPagedMemGPUConnectorV2" in f.message for f in said)
    # another name of the same package is no evidence: ported
    code = CONNECTOR_MODULE.format(name="GPUConnectorInterface")
    new, findings = port(code, "neuron")
    assert 'f"neuron:{index}"' in new and not any(f.code == "GUARD004" for f in findings), new


# vllm prefetch.py / ngram_embedding.py: a class makes its side stream in `__init__` (kept:
# torch.cuda.Stream has no safe port on neuron) and joins it in another method; and
# `def finish(event: torch.cuda.Event)`: the join stays CUDA's beside them
STREAM_CLASS = """
import torch


class Prefetcher:
    def __init__(self):
        self.copy_stream = torch.cuda.Stream()

    def join(self, event):
        torch.cuda.current_stream().wait_event(event)


def finish(event: torch.cuda.Event) -> None:
    torch.cuda.current_stream().wait_event(event)


def plain():
    torch.cuda.current_stream().synchronize()
"""


def test_stream_calls_beside_a_stream_their_class_or_signature_keeps_stay():
    new, findings = port(STREAM_CLASS, "neuron")
    assert new.count("torch.cuda.current_stream().wait_event(event)") == 2
    assert "torch.accelerator.current_stream().synchronize()" in new  # nothing kept beside it
    assert any("its class `Prefetcher` keeps" in f.message for f in findings)


def test_an_event_the_class_makes_does_not_keep_its_current_stream():
    # megatron-core's schedule plan: `self._event = torch.cuda.Event()` in `__init__`, recorded on
    # the current stream elsewhere: no side stream, so the current stream is the generic one
    code = (
        "import torch\n\n\nclass Plan:\n    def __init__(self):\n        self._event = torch.cuda.Event()\n\n"
        "    def record(self):\n        self._event.record(torch.cuda.current_stream())\n"
    )
    new, _ = port(code, "neuron")
    assert "self._event.record(torch.accelerator.current_stream())" in new


# vllm batch_invariant.py / weight_utils.py: `current_platform.is_cuda()` asks the project's
# platform object whether it is CUDA's; its body is CUDA's case and stays (BACK008)
PLATFORM_CASE = {
    "mylib/__init__.py": "",
    "mylib/platforms/__init__.py": "current_platform = None\n",
    "mylib/platforms/interface.py": "class Platform:\n    device_type = None\n",
    **{
        f"mylib/platforms/{d}.py": f'from .interface import Platform\n\n\nclass {d.title()}Platform(Platform):\n    device_type = "{d}"\n'
        for d in ("cuda", "rocm", "xpu", "cpu")
    },
    "mylib/use.py": """
        import torch

        from mylib.platforms import current_platform


        def enable(is_distributed):
            if current_platform.is_cuda():
                torch.backends.cuda.preferred_blas_library(backend="cublaslt")
            if is_distributed and current_platform.is_cuda_alike():
                device = f"cuda:{current_platform.current_device()}"
            else:
                device = "cpu"
            return device
    """,
}


def test_the_body_of_a_platform_is_cuda_test_stays(tmp_path):
    write_files(tmp_path, PLATFORM_CASE)
    new, findings = port_files(tmp_path, "neuron")["mylib/use.py"]
    assert new == textwrap.dedent(PLATFORM_CASE["mylib/use.py"]).lstrip()
    said = [f for f in findings if f.code == "BACK008"]
    assert len(said) == 2 and "current_platform.is_cuda()" in said[0].message


# vllm config/ec_transfer.py: a public configuration dataclass's device field defaults to
# "cuda"; the default is the library's API (DEV016), as a public parameter's is
CONFIG_FIELD = {
    "lib/__init__.py": "",
    "lib/config.py": """
        from dataclasses import dataclass


        @dataclass
        class TransferConfig:
            buffer_device: str | None = "cuda"
            _scratch: str = "cuda"
    """,
}


def test_a_public_config_field_default_device_stays(tmp_path):
    write_files(tmp_path, CONFIG_FIELD)
    new, findings = port_files(tmp_path, "neuron")["lib/config.py"]
    assert 'buffer_device: str | None = "cuda"' in new and '_scratch: str = "neuron"' in new
    (said,) = [f for f in findings if f.code == "DEV016"]
    assert "TransferConfig.buffer_device" in said.message


# vllm envs.py / mooncake config.py: the default of a value the library case-normalizes is a
# configuration value as a user types it (a build target, a transfer engine's buffer setting):
# it stays, noted (DEV015); a device default that is not normalized, or a script's, is ported
CONFIGURED = {
    "lib/__init__.py": "",
    "lib/envs.py": """
        import os

        VARIABLES = {
            "LIB_TARGET_DEVICE": lambda: os.getenv("LIB_TARGET_DEVICE", "cuda").lower(),
            "LIB_DEVICE": lambda: os.getenv("LIB_DEVICE", "cuda"),
        }


        def buffer_device(config):
            return str(config.buffer_device or "cuda").lower()
    """,
    "train.py": """
        import os

        device = os.environ.get("DEVICE", "cuda").lower()
    """,
}


def test_the_default_of_a_case_normalized_configuration_value_stays(tmp_path):
    write_files(tmp_path, CONFIGURED)
    ported = port_files(tmp_path, "neuron")
    new, findings = ported["lib/envs.py"]
    assert 'os.getenv("LIB_TARGET_DEVICE", "cuda").lower()' in new, new
    assert 'str(config.buffer_device or "cuda").lower()' in new, new
    assert 'os.getenv("LIB_DEVICE", "neuron")' in new, new
    assert len([f for f in findings if f.code == "DEV015"]) == 2
    assert 'os.environ.get("DEVICE", "neuron").lower()' in ported["train.py"][0]


# vllm ec_shared_region.py / b12x.py: an early exit where CUDA is absent, before CUDA's own API
# (torch.cuda.cudart, no twin on the targets) or an answer that stays CUDA's in a library
# (is_current_stream_capturing): the test stays CUDA's. Before a generic call it is ported.
EARLY_EXIT = {
    **{k: v for k, v in PLATFORM_CASE.items() if k != "mylib/use.py"},
    "mylib/region.py": """
        import torch


        class Region:
            def pin_memory(self) -> None:
                if self._is_pinned or not torch.cuda.is_available():
                    return
                return torch.cuda.cudart().cudaHostRegister(self._ptr, self._n, 0)


        def _capture_alloc_forbidden() -> bool:
            if not torch.cuda.is_available():
                return False
            try:
                return bool(torch.cuda.is_current_stream_capturing())
            except RuntimeError:
                return False


        def sync():
            if not torch.cuda.is_available():
                return
            torch.cuda.synchronize()
    """,
}


def test_an_early_exit_before_cudas_own_api_stays_cuda(tmp_path):
    write_files(tmp_path, EARLY_EXIT)
    new, findings = port_files(tmp_path, "neuron")["mylib/region.py"]
    assert new.count("not torch.cuda.is_available()") == 2
    assert "if not torch.accelerator.is_available():\n        return\n    torch.accelerator.synchronize()" in new
    said = [f for f in findings if f.code == "BACK008"]
    assert len(said) == 2 and "torch.cuda.cudart" in said[0].message


# vllm utils/extensible_tensor.py: a CUDA virtual-memory buffer whose `__init__` raises unless
# its device is CUDA's reports its device as torch.device("cuda", i): that stays CUDA's
CUDA_CLASS = """
import torch


class ExtensibleTensor:
    def __init__(self, device):
        dev = torch.device(device)
        if dev.type != "cuda":
            raise ValueError(f"ExtensibleTensor requires a cuda device, got {dev}.")
        self._device_index = dev.index

    @property
    def device(self) -> torch.device:
        return torch.device("cuda", self._device_index)


class Portable:
    def __init__(self, device):
        if device is None:
            raise ValueError("a device is needed")

    def device(self, i):
        return torch.device("cuda", i)
"""


def test_devices_of_a_class_whose_init_demands_cuda_stay():
    new, findings = port(CUDA_CLASS, "neuron")
    assert 'if dev.type != "cuda":' in new and 'return torch.device("cuda", self._device_index)' in new
    assert 'return torch.device("neuron", i)' in new
    said = [f for f in findings if f.code == "GUARD004"]
    assert said and all("`ExtensibleTensor` raises unless its device is CUDA's" in f.message for f in said)


# vllm requirements/rubin-prerelease.txt: beside cuda.txt, rocm.txt, cpu.txt, a requirements
# file that pins a CUDA build of torch is a CUDA variant's: left as it is, each fix reported.
# The same file without the family beside it is ported.
RUBIN = """
--extra-index-url https://download.pytorch.org/whl/nightly/cu134
torch==2.16.0.dev20261009+cu134
cuda-python==13.4.1
"""


def test_a_cuda_variant_requirements_file_beside_a_device_family_stays(tmp_path):
    write_files(
        tmp_path,
        {
            "requirements/cuda.txt": "torch==2.9.0\n",
            "requirements/rocm.txt": "torch==2.9.0\n",
            "requirements/cpu.txt": "torch==2.9.0\n",
            "requirements/rubin-prerelease.txt": RUBIN,
        },
    )
    new, findings = port_files(tmp_path, "neuron")["requirements/rubin-prerelease.txt"]
    assert new == RUBIN.lstrip()
    assert any("a CUDA variant's file" in f.message for f in findings)


def test_a_cuda_pinned_requirements_file_alone_is_ported(tmp_path):
    write_files(tmp_path, {"requirements.txt": RUBIN})
    new, findings = port_files(tmp_path, "neuron")["requirements.txt"]
    assert "+cu134" not in new and not any("a CUDA variant's file" in f.message for f in findings)


# vllm muse_spark omni.py: `torch.compile(fn, fullgraph=True, dynamic=True)` with no backend, in
# a project that picks its device generically (the target's backend is chosen by itself, so
# porter names none): on CUDA it is still inductor, which takes `dynamic=True`: it stays
GENERIC_COMPILE = {
    **{k: v for k, v in PLATFORM_CASE.items() if k != "mylib/use.py"},
    "mylib/omni.py": """
        import torch


        class Model:
            def __init__(self, cfg, enc):
                self.enc = enc
                if cfg.compile_mm_encoder:
                    self.enc.fn = torch.compile(self.enc.fn, fullgraph=True, dynamic=True)
                self.x = torch.zeros(2, device=torch.accelerator.current_accelerator())
    """,
}


def test_dynamic_stays_where_the_port_names_no_backend(tmp_path):
    write_files(tmp_path, GENERIC_COMPILE)
    new, findings = port_files(tmp_path, "neuron")["mylib/omni.py"]
    assert "torch.compile(self.enc.fn, fullgraph=True, dynamic=True)" in new
    (said,) = [f for f in findings if f.code == "COMP003"]
    assert "still compiles with inductor" in said.message


def test_dynamic_goes_where_the_port_names_the_targets_backend():
    new, _ = port("import torch\n\ndef f(fn):\n    return torch.compile(fn, dynamic=True)\n", "neuron")
    assert 'torch.compile(fn, backend="neuron")' in new


# vllm v1/conf_compute_utils.py: `torch.device("cuda", torch.cuda.current_device())` whose
# "cuda" BACK009 keeps: its index stays CUDA's with it (no torch.accelerator half)
KEPT_DEVICE_INDEX = {
    **{k: v for k, v in PLATFORM_CASE.items() if k != "mylib/use.py"},
    "mylib/conf.py": """
        import torch


        class D2H:
            def __init__(self, device):
                self.device = device

            def stream(self):
                return torch.device("cuda", torch.cuda.current_device())
    """,
}


def test_the_index_of_a_kept_cuda_device_stays(tmp_path):
    write_files(tmp_path, KEPT_DEVICE_INDEX)
    new, findings = port_files(tmp_path, "neuron")["mylib/conf.py"]
    assert 'torch.device("cuda", torch.cuda.current_device())' in new
    assert any(f.code == "CUDA002" and "a CUDA device this port keeps" in f.message for f in findings)


# vllm fusion/rocm_aiter_fusion.py, fused_moe/experts/rocm_aiter_moe.py: a module named for
# ROCm; ROCm's torch device is also "cuda", so its device names AMD's GPU, not a target's
ROCM_MODULE = """
import torch


def workspace(n):
    device = torch.device("cuda")
    ids = torch.empty(n, dtype=torch.int32, device="cuda")
    return torch.empty(n, device=device), ids
"""


@pytest.mark.parametrize("path", ["fusion/rocm_aiter_fusion.py", "platforms/rocm/ops.py", "kernels/amd/moe.py"])
def test_devices_of_a_module_named_for_rocm_stay(path):
    new, findings = port(ROCM_MODULE, "neuron", path=path)
    assert new == ROCM_MODULE
    said = [f for f in findings if f.code == "GUARD004"]
    assert len(said) == 2 and all("ROCm's" in f.message for f in said)


@pytest.mark.parametrize("path", ["fusion/fusion.py", "models/chip_module.py", "cromulent/ops.py"])
def test_devices_of_other_modules_are_ported(path):
    # `chip` holds `hip`, `cromulent` holds `rocm`... as letters, not as a word of the name
    new, findings = port(ROCM_MODULE, "neuron", path=path)
    assert '"neuron"' in new and not any(f.code == "GUARD004" for f in findings)


# vllm weight_utils.py: `torch.device(f"cuda:{current_platform.current_device()}")` where
# `current_platform` comes from the project's folder of a module per device (`platforms/cuda.py`
# beside `rocm.py`, `cpu.py`), in a project with a device abstraction (a class per device)
PLATFORM_PROJECT = {
    "mylib/__init__.py": "",
    "mylib/platforms/__init__.py": "from mylib.platforms.interface import Platform\n\ncurrent_platform = Platform()\n",
    "mylib/platforms/interface.py": """
        class Platform:
            device_type = "cpu"

            def current_device(self):
                return 0
        """,
    "mylib/platforms/cuda.py": """
        from mylib.platforms.interface import Platform


        class CudaPlatformBase(Platform):
            device_type = "cuda"
        """,
    "mylib/comm/base.py": "class Communicator:\n    pass\n",
    "mylib/comm/cuda.py": "from mylib.comm.base import Communicator\n\n\nclass CudaCommunicator(Communicator):\n    pass\n",
    "mylib/comm/cpu.py": "from mylib.comm.base import Communicator\n\n\nclass CpuCommunicator(Communicator):\n    pass\n",
    "mylib/platforms/rocm.py": """
        from mylib.platforms.interface import Platform


        class RocmPlatform(Platform):
            device_type = "cuda"
        """,
    "mylib/platforms/cpu.py": """
        from mylib.platforms.interface import Platform


        class CpuPlatform(Platform):
            device_type = "cpu"
        """,
    "mylib/loader.py": """
        import torch

        from mylib.platforms import current_platform


        def load(n, rank, dist):
            device = torch.device(f"cuda:{current_platform.current_device()}")
            other = torch.device(f"cuda:{rank}")
            where = f"cuda:{current_platform.current_device()}" if dist else "cpu"
            return torch.zeros(n, device=device), other, where
        """,
    "mylib/state.py": """
        import torch.distributed as dist


        def backend_name():
            from mylib.platforms import current_platform

            return current_platform.device_type


        def initialize(backend=None):
            backend = backend or "nccl"
            dist.new_group([0, 1], backend=backend)
        """,
    "mylib/plain.py": """
        import torch


        def load(n, rank, backend=None):
            torch.distributed.new_group([0], backend=backend or "nccl")
            return torch.zeros(n, device=f"cuda:{rank}")
        """,
}


def test_a_cuda_device_beside_the_projects_platform_object_stays(tmp_path):
    write_files(tmp_path, PLATFORM_PROJECT)
    ported = port_files(tmp_path, "neuron")
    new, findings = ported["mylib/loader.py"]
    assert new == textwrap.dedent(PLATFORM_PROJECT["mylib/loader.py"]).lstrip()
    said = sorted((f.start.line, f.message) for f in findings if f.code == "BACK009")
    assert [line for line, _ in said] == [7, 8, 9]
    # the module reads the project's platform object: the device is at hand there
    assert "take it from `current_platform` rather" in said[0][1]
    # the choice of a device beside the index the platform object answers
    assert "(`current_platform`, from `mylib.platforms`" in said[2][1]
    # a fallback backend where the module imports the platform object: kept, reported
    state, found = ported["mylib/state.py"]
    assert 'backend = backend or "nccl"' in state
    (back,) = [f for f in found if f.code == "BACK009"]
    assert "falls back to CUDA's" in back.message and "`current_platform`" in back.message
    # a module without the platform object is ported as usual
    plain, _ = ported["mylib/plain.py"]
    assert 'device=f"neuron:{rank}"' in plain and '"nccl"' not in plain


# vllm 0.34.0 nvfp4_utils.py:53: `swizzle_blockscale` lays the NVFP4 block scales out for the
# CUTLASS / FlashInfer kernels and moves them with `.cuda()`, in a module that imports the
# project's platform object (`cutlass_fp4_supported` asks it whether the platform is CUDA)
NVFP4_UTILS = {
    **PLATFORM_PROJECT,
    "mylib/quant/__init__.py": "",
    "mylib/quant/nvfp4_utils.py": """
        import torch

        from mylib.platforms import current_platform


        def swizzle_blockscale(scale: torch.Tensor) -> torch.Tensor:
            padded = torch.zeros((1, 128, 4), dtype=scale.dtype, device=scale.device)
            swizzled = padded.permute(0, 2, 1).contiguous().cuda()
            return swizzled.reshape(128, 4)


        def cutlass_fp4_supported() -> bool:
            return current_platform.is_cuda()
        """,
    "mylib/quant/offload.py": """
        import torch


        class Offload:
            def __init__(self, device):
                self.device = device
                self.buffer = torch.empty(1, device=torch.cuda.current_device())

            def back(self, v):
                return v.cuda()
        """,
    "mylib/quant/plain.py": """
        import torch


        def mask(r, c):
            return torch.randint(0, 2, (r * c,)).cuda()
        """,
    # ColossalAI's p2p: the `device` parameter is the transport's, not where the object lands
    "mylib/quant/p2p.py": """
        import torch


        def recv_object(buf, device=None):
            obj = torch.load(buf)
            if obj.device.index != torch.cuda.current_device():
                obj = obj.cuda()
            return obj
        """,
}


def test_a_dot_cuda_beside_the_projects_platform_object_stays(tmp_path):
    """`.cuda()` -> `.to("neuron")` pins the code to the target as `device="cuda"` ->
    `device="neuron"` would, and breaks it on CUDA: where the device is at hand, kept (BACK009)."""
    write_files(tmp_path, NVFP4_UTILS)
    ported = port_files(tmp_path, "neuron")
    new, findings = ported["mylib/quant/nvfp4_utils.py"]
    assert new == textwrap.dedent(NVFP4_UTILS["mylib/quant/nvfp4_utils.py"]).lstrip(), new
    (back,) = [f for f in findings if f.code == "BACK009"]
    assert back.start.line == 8 and "`.cuda()`" in back.message and "`current_platform`" in back.message
    assert not any(f.code == "DEV001" for f in findings)
    # a class that spells its device `torch.cuda.current_device()`: its `.cuda()` becomes the
    # device-generic spelling, the same on CUDA, and nothing is pinned to the target
    offload, _ = ported["mylib/quant/offload.py"]
    assert "return v.to(torch.accelerator.current_accelerator())" in offload, offload
    # a module without the platform object (nothing at hand) is ported as usual
    plain, _ = ported["mylib/quant/plain.py"]
    assert '.to("neuron")' in plain and ".cuda()" not in plain
    # a `device` parameter does not say where `.cuda()` moves things: ported, whole
    p2p, _ = ported["mylib/quant/p2p.py"]
    assert 'obj = obj.to("neuron")' in p2p and "torch.cuda" not in p2p, p2p


def test_devices_of_a_class_whose_init_asserts_cuda_stay():
    """Megatron's NCCL memory-pool allocator (`nccl_mem`, here under a name that does not say NCCL):
    its `__init__` asserts a device string names CUDA ("only cuda devices are supported"); its
    other devices are CUDA's too."""
    code = (
        "import torch\n\n\n"
        "class pool_mem:\n"
        "    def __init__(self, pool, enabled=True, device=None):\n"
        "        if enabled:\n"
        "            if device is None:\n"
        '                self.device = torch.device("cuda", torch.cuda.current_device())\n'
        "            elif isinstance(device, int):\n"
        '                self.device = torch.device("cuda", device)\n'
        "            elif isinstance(device, str):\n"
        '                assert "cuda" in device, "only cuda devices are supported"\n'
        "                self.device = torch.device(device)\n\n\n"
        "class Other:\n"
        "    def __init__(self, device):\n"
        '        self.device = torch.device("cuda", device)\n'
    )
    new, findings = port(code, "neuron")
    assert 'torch.device("cuda", torch.cuda.current_device())' in new, new
    assert '                self.device = torch.device("cuda", device)\n' in new, new
    assert '        self.device = torch.device("neuron", device)\n' in new, new
    said = [f for f in findings if f.code == "GUARD004"]
    assert said and all("asserts its device is CUDA's" in f.message for f in said), [f.message for f in findings]


LOADER_TREE = {
    "pkg/__init__.py": "",
    "pkg/kernel/__init__.py": "",
    "pkg/kernel/ext.py": """
        class FusedOptimizerCudaExtension:
            def load(self):
                return None


        class CpuAdamExtension:
            def load(self):
                return None
    """,
    "pkg/kernel/loader.py": """
        from .ext import CpuAdamExtension, FusedOptimizerCudaExtension


        class KernelLoader:
            REGISTRY = []

            def load(self):
                return self.REGISTRY[0]().load()


        class FusedOptimizerLoader(KernelLoader):
            REGISTRY = [FusedOptimizerCudaExtension]


        class CPUAdamLoader(KernelLoader):
            REGISTRY = [CpuAdamExtension]
    """,
    "pkg/optim.py": """
        import torch

        from pkg.kernel.loader import CPUAdamLoader, FusedOptimizerLoader


        class HybridAdam:
            def __init__(self):
                if torch.cuda.is_available():
                    self.op = FusedOptimizerLoader().load()
                if torch.cuda.is_available():
                    self.cpu_op = CPUAdamLoader().load()
    """,
}


def test_a_loader_whose_registry_lists_only_cuda_extensions_is_cuda_only(tmp_path):
    """ColossalAI's `FusedOptimizerLoader` (`REGISTRY = [FusedOptimizerCudaExtension]`): HybridAdam
    loaded it on any accelerator, so the target would build or load CUDA kernels."""
    write_files(tmp_path, LOADER_TREE)
    code, findings = port_files(tmp_path, "neuron")["pkg/optim.py"]
    first, _, second = code.partition("self.op = ")
    assert first.rstrip().endswith("if torch.cuda.is_available():"), code
    assert "if torch.accelerator.is_available():\n            self.cpu_op" in second, code
    assert any(f.code == "GUARD001" and "only CUDA extensions" in f.message for f in findings), [
        f.message for f in findings
    ]


KERNEL_PACKAGE_TREE = {
    "pkg/__init__.py": "",
    "pkg/kernel/__init__.py": "",
    "pkg/kernel/triton/__init__.py": """
        try:
            import triton

            HAS_TRITON = True
        except ImportError:
            HAS_TRITON = False
    """,
    "pkg/legacy/__init__.py": "",
    "pkg/legacy/rotary.py": """
        import torch

        from pkg.kernel.triton.copy_kv_cache_dest import copy_kv_cache_to_dest


        def init_cache(self, freqs):
            self.cos = torch.cos(freqs).cuda()
            copy_kv_cache_to_dest(self.cos)


        def positions(n):
            return torch.arange(n, device="cuda")
    """,
    "pkg/legacy/plain.py": """
        import torch

        from pkg.kernel import helpers


        def init_cache(self, freqs):
            self.cos = torch.cos(freqs).cuda()
    """,
}


def test_a_module_importing_from_the_projects_package_of_triton_kernels_keeps_its_devices(tmp_path):
    """ColossalAI's legacy inference: `from colossalai.kernel.triton.copy_kv_cache_dest import ...`
    at the top of the module (the project's package named for Triton, whose `__init__` imports
    it): the module runs Triton kernels; its `.cuda()` stays CUDA's (GUARD004)."""
    write_files(tmp_path, KERNEL_PACKAGE_TREE)
    out = port_files(tmp_path, "neuron")
    code, findings = out["pkg/legacy/rotary.py"]
    assert "self.cos = torch.cos(freqs).cuda()" in code and 'device="cuda")' in code, code
    assert any(f.code == "GUARD003" for f in findings)  # the function that calls the kernel
    assert any(f.code == "GUARD004" and "`triton`" in f.message for f in findings), [f.message for f in findings]
    assert '.to("neuron")' in out["pkg/legacy/plain.py"][0], out["pkg/legacy/plain.py"][0]


def test_a_stream_handed_to_a_kept_cuda_events_wait_stays_cuda():
    """Megatron's activation offload: `group.wait_reload_event(torch.cuda.current_stream())`, where
    `wait_reload_event(stream)` runs `stream.wait_event(self._reload_event)` on a kept
    `torch.cuda.Event()`: torch's generic stream would wait on an event CUDA's never records."""
    code = (
        "import torch\n\n\n"
        "class Group:\n"
        "    def __init__(self):\n"
        "        self._reload_event = torch.cuda.Event()\n\n"
        "    def wait_reload_event(self, stream):\n"
        "        stream.wait_event(self._reload_event)\n\n\n"
        "class Handler:\n"
        "    def backward(self, group, x):\n"
        "        group.wait_reload_event(torch.cuda.current_stream())\n\n"
        "    def release(self, x):\n"
        "        x.record_stream(torch.cuda.current_stream())\n\n"
        "    def record(self):\n"
        "        torch.cuda.current_stream().record_event(self.event)\n"
        "        torch.cuda.current_stream().wait_stream(self.other)\n"
    )
    new, findings = port(code, "neuron", path="pkg/offload.py")
    assert "group.wait_reload_event(torch.cuda.current_stream())" in new, new
    assert "x.record_stream(torch.accelerator.current_stream())" in new, new
    assert "torch.cuda.current_stream().record_event(self.event)" in new, new
    assert "torch.cuda.current_stream().wait_stream(self.other)" in new, new  # one function, one stream API
    assert any(f.code == "CUDA006" and "`wait_reload_event` hands it to CUDA" in f.message for f in findings), findings


def test_a_stream_handed_to_a_function_that_reads_its_raw_cuda_handle_stays_cuda():
    """Megatron's UVM prefetch: `stream = torch.cuda.current_stream()` handed to
    `prefetch_managed_tensor(t, stream=stream)`, which passes `stream.cuda_stream` to a CUDA
    library: torch's generic stream has no such handle."""
    code = (
        "import ctypes\n\n"
        "import torch\n\n\n"
        "def prefetch(tensor, *, stream=None):\n"
        "    if stream is None:\n"
        "        stream = torch.cuda.current_stream()\n"
        "    return LIB.prefetch(ctypes.c_void_p(int(stream.cuda_stream)))\n\n\n"
        "def prefetch_all(module):\n"
        "    stream = torch.cuda.current_stream()\n"
        "    for p in module.parameters():\n"
        "        prefetch(p, stream=stream)\n"
        "    other = torch.cuda.current_stream()\n"
        "    other.synchronize()\n"
    )
    new, findings = port(code, "neuron", path="pkg/uvm.py")
    assert "    stream = torch.cuda.current_stream()\n    for p" in new, new
    assert "other = torch.accelerator.current_stream()" in new, new
    assert any(f.code == "CUDA006" and "`prefetch` hands it to CUDA" in f.message for f in findings), findings


def test_a_buffer_handed_to_a_cuda_extensions_kernel_stays_on_cuda(tmp_path):
    """ColossalAI's legacy `_calc_l2_norm`: `buf = torch.cuda.IntTensor([0])` then
    `applier(fused_optim.multi_tensor_l2norm, buf, ...)`, where `fused_optim` is what a loader of
    CUDA extensions only loads: the buffer is a CUDA kernel's operand; on neuron it is no port."""
    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/kernel/__init__.py": "",
            "pkg/kernel/loader.py": """
                from .extensions import FusedOptimizerCudaExtension


                class FusedOptimizerLoader:
                    REGISTRY = [FusedOptimizerCudaExtension]
            """,
            "pkg/apply.py": """
                def applier(op, buf, lists):
                    return op(2048, buf, lists)
            """,
            "pkg/common.py": """
                import torch

                from pkg.apply import applier

                fused_optim = None


                def l2_norm(grads):
                    global fused_optim
                    if fused_optim is None:
                        from pkg.kernel.loader import FusedOptimizerLoader

                        fused_optim = FusedOptimizerLoader().load()
                    norm = 0.0
                    if len(grads) > 0:
                        buf = torch.cuda.IntTensor([0])
                        other = torch.cuda.IntTensor([0])
                        norm = applier(fused_optim.multi_tensor_l2norm, buf, [grads])
                    return norm, other
            """,
        },
    )
    code, findings = port_files(tmp_path, "neuron")["pkg/common.py"]
    assert "buf = torch.cuda.IntTensor([0])" in code, code
    assert 'other = torch.tensor([0], dtype=torch.int32, device="neuron")' in code, code
    assert any(
        f.code == "GUARD003" and "`buf` is handed to `fused_optim.multi_tensor_l2norm`" in f.message for f in findings
    ), findings


def test_a_buffer_handed_to_a_kernel_with_a_local_fallback_is_ported():
    """Megatron's clip_grads: `multi_tensor_applier` comes from transformer-engine, apex, or a
    local implementation (`multi_tensor_applier = local_multi_tensor_applier`): what it runs
    depends on the host, so the buffer handed to it is ported."""
    code = (
        "import torch\n\n"
        "try:\n"
        "    from transformer_engine.pytorch.optimizers import multi_tensor_applier\n"
        "except ImportError:\n"
        "    from pkg.utils import local_multi_tensor_applier\n\n"
        "    multi_tensor_applier = local_multi_tensor_applier\n\n\n"
        "def scale(grads, coeff, impl):\n"
        "    if coeff < 1.0:\n"
        "        buf = torch.zeros(1, dtype=torch.int, device='cuda')\n"
        "        multi_tensor_applier(impl, buf, [grads, grads], coeff)\n"
    )
    new, findings = port(code, "neuron", path="pkg/clip_grads.py")
    assert "buf = torch.zeros(1, dtype=torch.int, device='neuron')" in new, new


# vllm's weight transfer (packed_tensor.py, sharded_rdt_trainer.py): a buffer exported with
# torch.multiprocessing's reduce_tensor is shared through CUDA IPC (a device tensor's storage is
# shared only as a cudaIpcMemHandle), so the device it is made on stays CUDA's
CUDA_IPC = """
import torch
from torch.multiprocessing.reductions import reduce_tensor


def produce(n):
    buffer = torch.empty(n, dtype=torch.uint8, device="cuda")
    _, args = reduce_tensor(buffer)
    return args


def gather(tensors):
    out = []
    for tensor in tensors:
        if tensor.device.type == "cpu":
            tensor = tensor.cuda()
        out.append(reduce_tensor(tensor))
    return out


def consume(args):
    from torch.multiprocessing.reductions import rebuild_cuda_tensor

    return rebuild_cuda_tensor(*args).to(f"cuda:{args[6]}")


def other(n):
    return torch.empty(n, device="cuda")
"""


@pytest.mark.parametrize("target", TARGETS)
def test_a_function_that_shares_tensors_through_cuda_ipc_keeps_its_device(target):
    new, findings = port(CUDA_IPC, target)
    assert 'device="cuda")\n    _, args' in new and "tensor = tensor.cuda()" in new and 'f"cuda:{args[6]}"' in new, new
    assert 'return torch.empty(n, device="cuda")' not in new, new
    said = [f.message for f in findings if f.code == "GUARD004"]  # (`consume` runs rebuild_cuda_tensor: GUARD003)
    assert len(said) == 2 and "`def produce`" in said[0] and "`def gather`" in said[1], said
    assert all("CUDA IPC" in m for m in said), said


# vllm's DeepEP prepare/finalize (deepep_ht.py), Flint's CuTe decode attention, a ROCm attention
# backend: torch.cuda's stream calls in a module that runs only on CUDA (or is ROCm's) are that
# module's CUDA code, the same on CUDA after a rewrite and never run on the target: they stay
CUDA_MODULE_STREAMS = """
import torch
{imports}


def make(x):
    return {use}


def dispatch(x):
    torch.cuda.current_stream().synchronize()
    return torch.cuda.current_stream(x.device)
"""


@pytest.mark.parametrize(
    ("path", "imports", "use"),
    [
        ("moe/deepep_ht.py", "import deep_ep", "deep_ep.Buffer(x)"),
        ("ops/decode_attention.py", "import cutlass.cute as cute", "cute.compile(x)"),
        ("backends/rocm_octave_attn.py", "", "x"),
    ],
)
def test_torch_cuda_calls_of_a_cuda_only_module_stay(path, imports, use):
    code = CUDA_MODULE_STREAMS.format(imports=imports, use=use)
    new, findings = port(code, "neuron", path=path)
    assert new == code, new
    said = [f.message for f in findings if f.code == "GUARD004"]
    assert len(said) == 2 and "`torch.cuda.current_stream()`" in said[0], said


def test_torch_cuda_calls_of_other_modules_are_ported():
    code = CUDA_MODULE_STREAMS.format(imports="", use="x")
    new, findings = port(code, "neuron", path="ops/attention.py")
    assert "torch.accelerator.current_stream()" in new and not any(f.code == "GUARD004" for f in findings)


# vllm's vllm_flash_attn/flash_attn_interface.py: the wrapper of the project's compiled CUDA
# extension (`from . import _ext_C` registers `torch.ops._ext_C`); each path of the function calls
# its ops, so its capability check is CUDA's code: no `torch.cuda.is_available() and` pasted in
EXTENSION_WRAPPER = {
    "pkg/__init__.py": "",
    "csrc/flash_fwd.cu": "// kernels\\n",
    "pkg/attn/__init__.py": "",
    "pkg/attn/interface.py": """
        import torch

        try:
            from . import _ext_C  # noqa: F401

            AVAILABLE = True
        except ImportError:
            AVAILABLE = False


        def varlen(q, k, version):
            dequant = False
            if version == 4 and k.dtype == torch.float8_e4m3fn and torch.cuda.get_device_capability()[0] == 9:
                dequant = True
            if version == 2:
                return torch.ops._ext_C.varlen_fwd(q, k, dequant)
            return torch.ops._ext_C.fwd(q, k, dequant)


        def other(q):
            if torch.cuda.get_device_capability()[0] == 9:
                return q
            return q + 1
        """,
}


def test_the_capability_check_of_a_compiled_extensions_wrapper_stays(tmp_path):
    write_files(tmp_path, EXTENSION_WRAPPER)
    new, findings = port_files(tmp_path, "neuron")["pkg/attn/interface.py"]
    assert "and torch.cuda.get_device_capability()[0] == 9:\n" in new, new
    assert "if torch.cuda.is_available() and torch.cuda.get_device_capability()[0] == 9:" in new, new
    said = [f.message for f in findings if f.code == "GUARD003" and "capability" in f.message]
    assert len(said) == 1 and "`def varlen`" in said[0] and "_ext_C" in said[0], said


# the same wrapper shape where the capability check chooses between the extension's op and a
# pure-torch path: the target takes the torch path, so the check gets its guard (GUARD002)
# rather than staying CUDA's (where it would raise before the target reached its path)
EXTENSION_OR_TORCH = {
    **EXTENSION_WRAPPER,
    "pkg/attn/interface.py": """
        import torch

        from . import _ext_C  # noqa: F401


        def fwd(q, k):
            if torch.cuda.get_device_capability()[0] >= 9:
                return torch.ops._ext_C.fwd(q, k)
            return q @ k


        def fwd_flag(q, k):
            fast = torch.cuda.get_device_capability()[0] >= 9
            if fast:
                out = torch.ops._ext_C.fwd(q, k)
            else:
                out = q @ k
            return out
        """,
}


def test_a_capability_check_that_chooses_the_extension_or_torch_gets_its_guard(tmp_path):
    write_files(tmp_path, EXTENSION_OR_TORCH)
    new, findings = port_files(tmp_path, "neuron")["pkg/attn/interface.py"]
    assert new.count("torch.cuda.is_available() and torch.cuda.get_device_capability()[0] >= 9") == 2, new
    assert not [f for f in findings if f.code == "GUARD003" and "capability" in f.message], findings


# vllm 0.34.0's NIXL worker: the memory type NIXL registers a KV buffer as comes from the
# project's platform object first; the device list is the fallback where it answers nothing
NIXL = """
from mylib.platforms import current_platform


class Worker:
    def __init__(self, kv_buffer_device):
        self.kv_buffer_device = kv_buffer_device
        memory_type = current_platform.get_memory_type()
        if memory_type is None:
            if self.kv_buffer_device in ["cuda", "xpu"]:
                memory_type = "VRAM"
            elif self.kv_buffer_device == "cpu":
                memory_type = "DRAM"
        if memory_type is None:
            raise RuntimeError(f"{self.kv_buffer_device} kv_buffer is not supported.")
        self.memory_type = memory_type

    def pick(self):
        if self.kv_buffer_device in ["cuda", "xpu"]:
            return "VRAM"
        return "DRAM"
"""


def test_a_device_list_where_the_projects_platform_object_answers_nothing_stays(tmp_path):
    write_files(tmp_path, {**PLATFORM_PROJECT, "mylib/nixl.py": NIXL})
    new, findings = port_files(tmp_path, "neuron")["mylib/nixl.py"]
    # `current_platform.get_memory_type()` answers for each platform (an out-of-tree neuron
    # platform too); the list is the fallback where it answers None: the target's answer is
    # the platform's, so `"neuron"` is not claimed to be NIXL's VRAM here
    assert new.count('["cuda", "xpu"]') == 1 and new.count('"neuron"') == 1, new
    said = [f.message for f in findings if f.code == "BACK001" and "is the fallback where" in f.message]
    assert len(said) == 1 and "`current_platform.get_memory_type()` answers nothing" in said[0], findings
    # the same list outside that fallback lists the devices the code supports: the target is added
    assert '["cuda", "xpu", "neuron"]' in new.split("def pick")[1]
