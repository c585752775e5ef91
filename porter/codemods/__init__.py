"""Rule families, in the order they see each node.

Order matters only where two families touch the same node kind: the device family ports
strings before the cuda-api family reads calls.
"""

from porter.codemods.accelerator import AcceleratorFamily
from porter.codemods.amp import AmpFamily
from porter.codemods.backends import BackendsFamily
from porter.codemods.backend_flags import BackendFlagsFamily
from porter.codemods.compile import CompileFamily
from porter.codemods.cuda_api import CudaApiFamily
from porter.codemods.device import DeviceFamily
from porter.codemods.distributed import DistributedFamily
from porter.codemods.frameworks import FrameworksFamily
from porter.codemods.guards import GuardsFamily
from porter.codemods.hf import HfFamily
from porter.codemods.kernels import KernelsFamily
from porter.codemods.libraries import LibrariesFamily
from porter.codemods.library_api import LibraryApiFamily
from porter.codemods.literals import LiteralsFamily
from porter.codemods.perf import PerfFamily
from porter.codemods.runtime import RuntimeFamily
from porter.codemods.target_api import TargetApiFamily
from porter.codemods.optim import OptimizerFamily
from porter.codemods.xla_loop import XlaLoopFamily
from porter.codemods.xla_autograd import XlaAutogradFamily
from porter.codemods.xla_params import KeepParametersFamily

FAMILIES = [
    GuardsFamily,  # first: it marks the checks the families below must leave on CUDA
    BackendsFamily,  # and CUDA's own branch of each device switch (it adds the target's)
    LiteralsFamily,  # and the strings that are not devices
    DeviceFamily,
    AcceleratorFamily,
    CudaApiFamily,
    AmpFamily,
    DistributedFamily,
    BackendFlagsFamily,
    CompileFamily,
    OptimizerFamily,
    XlaLoopFamily,
    KeepParametersFamily,  # after every family that moves to the device
    XlaAutogradFamily,
    LibrariesFamily,
    FrameworksFamily,
    HfFamily,  # claims its keyword values on entering a call, before the families above see them
    KernelsFamily,
    PerfFamily,
    RuntimeFamily,
    TargetApiFamily,  # last: it checks calls as the other families left them
    LibraryApiFamily,
]

__all__ = ["FAMILIES"]
