"""A function whose truth means a CUDA-only package is installed (transformers'
`is_sagemaker_dp_enabled`: `return _is_package_available("smdistributed")[0]`; smdistributed
runs only on NVIDIA GPUs, rules/cuda_only/) guards CUDA-only code: the branch of `if
is_sagemaker_dp_enabled():` is left as it is (GUARD003), in its own module or where it is
imported, through a package's `__init__.py`."""

from __future__ import annotations

import pytest

from porter.analysis.cuda_only_index import availability_predicates
from tests.helpers import port, port_files, write_files

TARGETS = ["neuron", "tpu", "xla"]

IMPORT_UTILS = """
import importlib.util
import json
import os


def _is_package_available(name):
    return importlib.util.find_spec(name) is not None, None


def is_sagemaker_dp_enabled() -> bool:
    params = os.getenv("SM_FRAMEWORK_PARAMS", "{}")
    try:
        params = json.loads(params)
        if not params.get("sagemaker_distributed_dataparallel_enabled", False):
            return False
    except json.JSONDecodeError:
        return False
    return _is_package_available("smdistributed")[0]


def is_numpy_enabled() -> bool:
    if os.getenv("NO_NUMPY"):
        return False
    return _is_package_available("numpy")[0]


def sagemaker_or_default():
    if os.getenv("SM"):
        return "default"
    return _is_package_available("smdistributed")[0]
"""

TRAINER = """
import os

import torch
from torch import nn

from .utils import is_numpy_enabled, is_sagemaker_dp_enabled


def wrap(model, fsdp):
    if fsdp:
        model = model.to("cuda")
    elif is_sagemaker_dp_enabled():
        model = nn.parallel.DistributedDataParallel(
            model, device_ids=[int(os.getenv("SMDATAPARALLEL_LOCAL_RANK"))]
        )
        torch.cuda.synchronize()
    elif is_numpy_enabled():
        torch.cuda.synchronize()
    return model
"""


def test_a_predicate_is_a_function_that_returns_false_or_whether_the_package_is_there():
    found = availability_predicates(IMPORT_UTILS.encode())
    assert list(found) == ["is_sagemaker_dp_enabled"]  # numpy is no CUDA-only package; a string is no False
    assert "`smdistributed`" in found["is_sagemaker_dp_enabled"]


@pytest.mark.parametrize("target", TARGETS)
def test_the_branch_of_an_imported_predicate_is_left(tmp_path, target):
    write_files(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/utils/__init__.py": "from .import_utils import (\n    is_numpy_enabled,\n    is_sagemaker_dp_enabled,\n)\n",
            "pkg/utils/import_utils.py": IMPORT_UTILS,
            "pkg/trainer.py": TRAINER,
        },
    )
    code, findings = port_files(tmp_path, target)["pkg/trainer.py"]
    branch = TRAINER.split("elif is_sagemaker_dp_enabled():")[1].split("    elif")[0]
    assert branch in code  # DDP's device_ids and CUDA's synchronize stay
    assert 'model.to("cuda")' not in code  # the rest is ported
    assert code.count("torch.cuda.synchronize()") == 1
    left = [f for f in findings if f.code == "GUARD003"]
    assert len(left) == 1 and "`smdistributed` (CUDA-only)" in left[0].message


@pytest.mark.parametrize("target", TARGETS)
def test_the_branch_of_a_predicate_of_the_same_module_is_left(target):
    code = IMPORT_UTILS + TRAINER.replace("from .utils import is_numpy_enabled, is_sagemaker_dp_enabled\n", "")
    new, findings = port(code, target)
    assert TRAINER.split("elif is_sagemaker_dp_enabled():")[1].split("    elif")[0] in new
    assert new.count("torch.cuda.synchronize()") == 1
    assert [f.code for f in findings].count("GUARD003") == 1
