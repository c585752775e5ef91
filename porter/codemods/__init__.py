"""Rule families, in the order they see each node.

Order matters only where two families touch the same node kind: the device family ports
strings before the cuda-api family reads calls.
"""

from porter.codemods.cuda_api import CudaApiFamily
from porter.codemods.device import DeviceFamily

FAMILIES = [DeviceFamily, CudaApiFamily]

__all__ = ["FAMILIES"]
