"""What a command line does on NVIDIA GPUs, and what the target's counterpart is.

One function per concern, each given a `Command` (porter.files.shell.words): the device tool
(`nvidia-smi`), CUDA's toolchain, launchers sized in GPUs, `docker run --gpus`, package installs
(`pip`, `conda`, `apt-get`), Slurm's GPU requests, and `cuda`/`nccl` passed to a program.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from porter.files.deps import requirement
from porter.files.deps.indexes import GPU_BACKEND, TORCH_BACKEND_OPTION, index_sites, torch_backend_site
from porter.files.deps.pip_options import INSTALL, long_option
from porter.files.facts import cuda_only_package, environment
from porter.files.shell import env as envvars
from porter.files.shell.native import defines
from porter.files.shell.words import Command, Word
from porter.files.sites import Site

TOOLCHAIN = frozenset(
    {
        "nvcc",
        "nsys",
        "ncu",
        "nv-nsight-cu-cli",
        "cuda-gdb",
        "compute-sanitizer",
        "cuda-memcheck",
        "dcgmi",
        "nvidia-cuda-mps-control",
        "nvidia-persistenced",
    }
)
MESSAGES = frozenset({"echo", "printf", "log", "info", "warn", "logger"})  # print what they are given
_LIST_GPUS = ((), ("-L",), ("--list-gpus",))
_DEVICE_VALUE = re.compile(r"(?:^|[=:])(cuda(?::\d+)?|nccl)$")
_SLURM_GPU = re.compile(
    r"--gres[= ](?:\S*:)?gpu\b\S*"
    r"|--gpus(?:-per-(?:node|task|socket))?(?:[= ]\S+)?"
    r"|--gpu-bind\S*|--gpus-per-\w+\S*|-G\s*\d+"
)
_APT = frozenset({"apt-get", "apt", "yum", "dnf", "microdnf", "apk"})
_CUDA_APT = re.compile(
    r"(?:cuda(?:-[\w.-]+)?|libcudnn\w*(?:-[\w.-]+)?|libnccl\w*(?:-[\w.-]+)?|nvidia-[\w.-]+|libnvinfer\w*|tensorrt)(?:=\S+)?"
)
_INDEX = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links")
# uv's own (`uv pip install --index [NAME=]URL`, `--default-index URL`: uv 0.13.10 `pip compile -v` asks the URL)
_UV_INDEX = ("--index", "--default-index")
_PIP_VALUE_OPTIONS = frozenset(
    {
        *_INDEX,
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-e",
        "--editable",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--trusted-host",
        "--config-settings",
        "-C",
        "--python",
        "--platform",
        "--python-version",
        "--implementation",
        "--abi",
        "--src",
        "--cache-dir",
        "--log",
        "--progress-bar",
    }
)


def sites(cmd: Command, text: str, target: str, *, consumed: bool = False) -> list[Site]:
    """`consumed`: the command's output is read by another (a pipe, `$(...)`), not shown. The script a shell
    is handed with `-c` is read as shell too (a rule the command's own checks found on its word is not said twice)."""
    out: list[Site] = []
    for check in CHECKS:
        out.extend(check(cmd, text, target, consumed))
    said = {site.code for site in out}
    out.extend(site for site in _inline_script(cmd, text, target) if site.code not in said)
    return out


# the shells whose `-c` takes a script as a string (POSIX `sh -c command_string`; `bash -lc`, `sh -ec`: `c` among
# the options). A compose `command: sh -c "pip install ..."` and its list form, a Dockerfile's `RUN bash -c '...'`:
# the script was never read (thirty-fifth read)
_SHELLS = frozenset({"sh", "bash", "dash", "ash", "zsh", "ksh"})
_SHORT_OPTIONS = re.compile(r"-[a-zA-Z]+")


def _inline_script(cmd: Command, text: str, target: str) -> list[Site]:
    """The sites of the script `sh -c '...'` runs, where the script's characters are its value (a string with an
    escape or an expansion has no literal value: left unread, as before)."""
    options = [i for i, w in enumerate(cmd.args) if w.value and _SHORT_OPTIONS.fullmatch(w.value) and "c" in w.value]
    if cmd.name not in _SHELLS or not options:
        return []
    # (the first word after the options: an expansion there, `sh -c "$CMD" name`, is no script porter can read)
    script = next((w for w in cmd.args[options[0] + 1 :] if not (w.value or "").startswith("-")), None)
    if script is None or (not script.value and not script.raw.startswith('"')):
        return []
    from porter.files.shell.script import shell_sites

    start, end = script.inner
    if script.value and text[start:end] == script.value:
        return shell_sites(script.value, start, text, target)
    masked = _escapes_masked(script)
    if masked is None:
        return []
    # (what the outer shell expands, `$V`, stays an expansion for the script's reader: a word it cannot know; the
    # other characters are the value's, edited in place where no escape moved them)
    found = shell_sites(masked, script.start + 1, text, target)
    if "\\" not in script.raw:
        return found
    return [Site(s.code, s.start, s.end, None, message=s.message, advice=s.advice) for s in found]


# a double-quoted string's escapes (POSIX: `\` before `$`, `` ` ``, `"`, `\` or a newline), in the string's value
# the character after it (a newline: nothing)
_DOUBLE_QUOTED_ESCAPE = re.compile(r'\\([$`"\\\n])')


def _escapes_masked(script: Word) -> str | None:
    """The script a double-quoted `sh -c "..."` string holds, each escape's `\\` a blank (an escaped newline two):
    its characters at their places in the file, so a site found there is at its place; where an escape moved the
    value's characters, reported, never edited. `sh -c "echo \\"hi\\" && pip install ... --index-url .../cu121"`
    had no value and was not read (thirty-fifth read, cache2)."""
    raw = script.raw
    inner = raw[1:-1]
    if len(raw) < 2 or not (raw.startswith('"') and raw.endswith('"')) or '"' in _DOUBLE_QUOTED_ESCAPE.sub("", inner):
        return None
    return _DOUBLE_QUOTED_ESCAPE.sub(lambda m: "  " if m.group(1) == "\n" else " " + m.group(1), inner)


def device_tool(cmd: Command, text: str, target: str, consumed: object) -> list[Site]:
    if cmd.name != "nvidia-smi":
        # `watch -n 1 nvidia-smi`: the tool as another command's argument
        return [
            Site("LCH001", w.start, w.end, None, message="runs `nvidia-smi`, NVIDIA's device tool")
            for w in cmd.args
            if (w.value or "").rsplit("/", 1)[-1] == "nvidia-smi"
        ]
    tool = environment(target).get("device_tool")
    args = tuple(w.value for w in cmd.args)
    if tool and args in _LIST_GPUS and not consumed:
        # (what it prints is shown, not parsed: the other tool's listing serves the reader)
        return [
            Site(
                "LCH001",
                cmd.name_word.start,
                cmd.args[-1].end if cmd.args else cmd.name_word.end,
                tool,
                message=f"`nvidia-smi` lists NVIDIA's GPUs: `{tool}` lists the target's devices",
            )
        ]
    why = (
        " queried for values" if args not in _LIST_GPUS else ", its output read by another command" if consumed else ""
    )
    return [
        Site(
            "LCH001",
            cmd.name_word.start,
            cmd.args[-1].end if cmd.args else cmd.name_word.end,
            None,
            message=f"`nvidia-smi`, NVIDIA's device tool{why}",
        )
    ]


def toolchain(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    if cmd.name not in TOOLCHAIN:
        return []
    return [
        Site(
            "LCH004",
            cmd.name_word.start,
            cmd.name_word.end,
            None,
            message=f"`{cmd.name}` is a tool of CUDA's toolkit or NVIDIA's profilers",
        )
    ]


def _module(cmd: Command) -> str | None:
    """`torch.distributed.run` for `python -m torch.distributed.run ...`."""
    if not cmd.name.startswith("python"):
        return None
    for i, w in enumerate(cmd.args):
        if w.value == "-m":
            return cmd.literal(i + 1)
        if w.value is not None and w.value.startswith("-m") and len(w.value) > 2:
            return w.value[2:]
    return None


def _option(cmd: Command, names: tuple[str, ...]) -> list[tuple[Word, Word | None]]:
    """(option word, its value word or None) for each use of an option: `--x=v` or `--x v`."""
    out: list[tuple[Word, Word | None]] = []
    for i, w in enumerate(cmd.args):
        raw = w.value if w.value is not None else w.raw
        for name in names:
            if raw == name:
                out.append((w, cmd.args[i + 1] if i + 1 < len(cmd.args) else None))
            elif raw.startswith(name + "="):
                out.append((w, None))
    return out


def launcher(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    unit = environment(target).get("process_unit")
    module = _module(cmd)
    found: list[tuple[Word, Word | None]] = []
    if cmd.name == "torchrun" or module in ("torch.distributed.run", "torch.distributed.launch"):
        found = _option(cmd, ("--nproc_per_node", "--nproc-per-node"))
    elif cmd.name == "deepspeed":
        found = _option(cmd, ("--num_gpus", "--num-gpus", "--include", "--exclude"))
    elif cmd.name == "accelerate" and cmd.literal(0) == "launch":
        found = _option(cmd, ("--multi_gpu", "--multi-gpu", "--gpu_ids", "--gpu-ids"))
    out = []
    for opt, value in found:
        end = value.end if value is not None and not (opt.value or opt.raw).startswith("--multi") else opt.end
        out.append(
            Site("LCH002", opt.start, end, None, message=f"starts processes per GPU: on the target, one per {unit}")
        )
    return out


def docker_gpus(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    if cmd.name not in ("docker", "podman", "nvidia-docker") or (
        cmd.name != "nvidia-docker" and cmd.literal(0) not in ("run", "create")
    ):
        return []
    env = environment(target)
    out = []
    if cmd.name == "nvidia-docker":
        out.append(
            Site(
                "CTR002",
                cmd.name_word.start,
                cmd.name_word.end,
                None,
                message="`nvidia-docker` runs containers on NVIDIA GPUs",
            )
        )
    for opt, value in _option(cmd, ("--gpus", "--runtime")):
        shown = (opt.value or opt.raw) + ("" if value is None else " " + (value.value or value.raw))
        if "runtime" in shown and "nvidia" not in shown:
            continue
        out.append(
            Site(
                "CTR002",
                opt.start,
                value.end if value is not None else opt.end,
                None,
                message=f"`{shown}` gives the container NVIDIA GPUs; the target's containers run with"
                f" {env.get('run_options')}",
            )
        )
    return out


def _pip_args(cmd: Command) -> list[Word] | None:
    """The arguments after `install` of a pip command (`pip`, `python -m pip`, `uv pip`)."""
    args = list(cmd.args)
    if cmd.name.startswith("python") and _module(cmd) == "pip":
        at = next(i for i, w in enumerate(args) if w.value in ("-m", "-mpip") or (w.value or "").startswith("-m"))
        args = args[at + (1 if args[at].value != "-m" else 2) :]
    elif cmd.name == "uv" and args and args[0].value == "pip":
        args = args[1:]
    elif not re.fullmatch(r"pip(?:3(?:\.\d+)?)?", cmd.name):
        return None
    if not args or args[0].value != "install":
        return None
    return args[1:]


def _uv_torch_backend(text: str, option: Word, value_word: Word | None, target: str) -> list[Site]:
    """DEP002 on `uv pip install --torch-backend cu121` (or `=cu121`): uv takes torch from PyTorch's
    index of CUDA builds."""
    word = value_word if value_word is not None else option
    value = (word.value or "").split("=", 1)[-1] if word is option else word.value
    at = text.rfind(value, word.start, word.end) if value else -1
    if not value or at < 0 or GPU_BACKEND.fullmatch(value) is None:
        return []
    return [torch_backend_site(at, value, target, f"`{TORCH_BACKEND_OPTION} {value}`", TORCH_BACKEND_OPTION)]


def pip_install(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    args = _pip_args(cmd)
    if args is None:
        return []
    ctx = requirement.Context(target, None)
    out: list[Site] = []
    skip = False
    for i, w in enumerate(args):
        out.extend(_extras(w))
        if skip:
            skip = False
            continue
        value = w.value
        if value is None:
            out.extend(_templated(w, args[i - 1] if i else None))
            continue
        option = value.split("=", 1)[0]
        option = option if cmd.name == "uv" else long_option(option, INSTALL)  # (pip's `--extra-index URL`)
        if option in _INDEX or (cmd.name == "uv" and option in _UV_INDEX):
            url_word = args[i + 1] if "=" not in value and i + 1 < len(args) else w
            url = (url_word.value or "").split("=", 1)[-1] if url_word is w else url_word.value
            skip = url_word is not w
            if url:
                at = text.find(url, url_word.start, url_word.end)
                start = w.start - 1 if w.start > 0 and text[w.start - 1] == " " else w.start
                if at >= 0:
                    out.extend(index_sites(text, at, url, target, (start, url_word.end)))
            continue
        if option == TORCH_BACKEND_OPTION and cmd.name == "uv":
            out.extend(
                _uv_torch_backend(text, w, args[i + 1] if "=" not in value and i + 1 < len(args) else None, target)
            )
            skip = "=" not in value
            continue
        if value.startswith("-"):
            skip = option in _PIP_VALUE_OPTIONS and "=" not in value
            continue
        inner = w.inner
        out.extend(
            requirement.sites(
                value, requirement.Place(inner[0], None, editable=w.raw == value or w.raw[1:-1] == value), ctx
            )
        )
    return out


_EXTRAS = re.compile(r"\[([^\]]*)\]")
_TEMPLATED_BUILD = re.compile(r"\+cu(?:\d|\$)")
_TEMPLATED_INDEX = re.compile(r"/whl/(?:nightly/)?cu(?:\d|\$)")


def _extras(w: Word) -> list[Site]:
    """`pip install -e .[deepspeed,flash-attn]`: the project's own extras named after a package
    with no build for the target."""
    out = []
    # up to the last `]` only: every `[` before it closes (from each `[` after it the scan ran to the end)
    for m in _EXTRAS.finditer(w.raw, 0, w.raw.rfind("]") + 1):
        at = w.start + m.start(1)
        for name in re.finditer(r"[A-Za-z0-9_.-]+", m.group(1)):
            if cuda_only_package(name.group(0)) is not None:
                out.append(
                    Site(
                        "DEP005",
                        at + name.start(),
                        at + name.end(),
                        None,
                        message=f"installs the project's `{name.group(0)}` extra: a package with no build for the"
                        " target",
                    )
                )
    return out


def _templated(w: Word, before: Word | None) -> list[Site]:
    """A word built from variables: `torch==${V}+cu${CUDA}`, an index `.../whl/cu$CUDA`."""
    if _TEMPLATED_BUILD.search(w.raw):
        return [
            Site(
                "DEP001", w.start, w.end, None, message=f"`{w.raw}` installs a CUDA build (its version from variables)"
            )
        ]
    if _TEMPLATED_INDEX.search(w.raw) and "download.pytorch.org" in w.raw:
        return [
            Site(
                "DEP002",
                w.start,
                w.end,
                None,
                message=f"`{w.raw}` is PyTorch's index of CUDA builds (its version from variables)",
            )
        ]
    return []


def conda_install(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    if cmd.name not in ("conda", "mamba", "micromamba") or cmd.literal(0) != "install":
        return []
    ctx = requirement.Context(target, None, conda=True)
    out = []
    for i, w in enumerate(cmd.args[1:], start=1):
        if w.value is None:
            continue
        if w.value in ("-c", "--channel") and cmd.literal(i + 1) == "nvidia":
            nxt = cmd.args[i + 1]
            out.append(
                Site("DEP002", w.start, nxt.end, None, message="conda's `nvidia` channel serves CUDA libraries only")
            )
            continue
        m = re.match(r"(?:[\w.-]+::)?([A-Za-z0-9_][A-Za-z0-9_.-]*)", w.value)
        if m and not w.value.startswith("-") and cuda_only_package(m.group(1), conda=True) is not None:
            out.append(requirement.cuda_only(m.group(1), (w.start, w.end), requirement.Place(w.start, None), ctx))
    return out


def system_packages(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    if cmd.name not in _APT or not any(w.value in ("install", "add") for w in cmd.args[:3]):
        return []
    return [
        Site("CTR003", w.start, w.end, None, message=f"`{w.value}` is a CUDA system package")
        for w in cmd.args
        if w.value is not None and _CUDA_APT.fullmatch(w.value)
    ]


def slurm(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    if cmd.name not in ("srun", "sbatch", "salloc"):
        return []
    out = []
    for i, w in enumerate(cmd.args):
        joined = (w.value or w.raw) + (
            " " + (cmd.literal(i + 1) or "") if (w.value or "") in ("--gres", "-G", "--gpus") else ""
        )
        if _SLURM_GPU.fullmatch(joined.strip()) or _SLURM_GPU.fullmatch(w.value or w.raw):
            out.append(Site("LCH003", w.start, w.end, None, message=f"`{(w.value or w.raw)}` asks Slurm for GPUs"))
    return out


def device_arguments(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    """`cuda`/`nccl` handed to a program (not a message printed, not a variable: those have
    their own checks)."""
    if cmd.name in MESSAGES:
        return []
    out = []
    for w in cmd.args:
        value = w.value
        if value is None or not _DEVICE_VALUE.search(value):
            continue
        name = value.split("=", 1)[0]
        if "=" in value and envvars.rule_of(name) is not None:
            continue
        kind = "backend" if value.endswith("nccl") else "device"
        out.append(Site("LCH005", w.start, w.end, None, message=f"`{value}` passes a CUDA {kind} to `{cmd.name}`"))
    return out


_VARIABLE_PREFIX = re.compile(r"\b(?:CUDA|NCCL|NVIDIA|CUDNN)_")


def variable_names(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    """`unset CUDA_VISIBLE_DEVICES`, `env -u NCCL_DEBUG ...`: a CUDA variable named as an
    argument; `grep -E '^CUDA_|^NCCL_'`: a pattern that picks CUDA's variables."""
    out = []
    for w in cmd.args:
        if w.value is not None and envvars.rule_of(w.value) is not None:
            site = envvars.read(w.value, (w.start, w.end))
            if site is not None:
                out.append(site)
        elif (
            cmd.name not in MESSAGES
            and w.value is not None
            and _VARIABLE_PREFIX.search(w.value)
            and not re.match(r"[A-Za-z_]\w*=", w.value)
        ):
            rule = "ENV002" if "NCCL_" in w.value and "CUDA_" not in w.value else "ENV003"
            out.append(Site(rule, w.start, w.end, None, message=f"`{w.value[:60]}` names CUDA's or NCCL's variables"))
    return out


# a file of NVIDIA's driver or CUDA's toolkit, as a command names it: the toolkit's folders, its
# and the driver's libraries, device nodes, the driver's proc entries, its OpenCL/Vulkan ICDs.
# Two kinds are patterns of their own, each tried only from the first place in a run of its
# characters where a file may start (`_first`): searched, from each `-L` of a long word (the
# driver's `libnvidia-*`) or each `/` of a long path (an ICD) the scan ran to the run's end
_FILE_START = r"(?:^|(?<=[\s/:=,;\"'(])|(?<=-[LI]))"
NVIDIA_FILE = re.compile(
    _FILE_START + r"(?:(?:/usr/local/cuda(?:-[\d.]+)?|/usr/local/nvidia|/opt/nvidia|/proc/driver/nvidia)"
    r"(?=/|$|[\s:;,\"')])[\w.+/-]*"
    r"|/dev/nvidia[\w-]*"
    r"|lib(?:cuda|cudart|cublas(?:Lt)?|cudnn\w*|nccl|nvrtc|nvToolsExt|nvcuvid|cufft|curand|cusparse|cusolver)\.(?:so|a)\b[\w.]*)"
)
_NVIDIA_LIB = re.compile(_FILE_START + r"libnvidia-[\w-]+\.(?:so|a)\b[\w.]*")
_NVIDIA_LIBS = (re.compile(r"[\w-]+"), re.compile(_FILE_START + r"(?=libnvidia-)"))
_NVIDIA_ICD = re.compile(_FILE_START + r"(?:[\w/.-]*\bnvidia[\w-]*\.icd|[\w/.-]*\bnvidia_icd\.json)")
_NVIDIA_ICDS = (re.compile(r"[\w/.-]+"), re.compile(_FILE_START))


def _first(value: str, pattern: re.Pattern[str], places: tuple[re.Pattern[str], ...]) -> re.Match[str] | None:
    """`pattern`'s first match in `value`, where it matches only within a run of `places[0]`
    and from a place `places[1]` finds: tried from the first such place of each run only, as
    from a later place of the run it could only match less (the run's end is the same)."""
    runs, starts = places
    for run in runs.finditer(value):
        start = starts.search(value, run.start(), run.end())
        found = pattern.match(value, start.start()) if start is not None and start.start() < run.end() else None
        if found is not None:
            return found
    return None


def nvidia_file(value: str) -> str | None:
    """The file of NVIDIA's driver or CUDA's toolkit `value` names (the first), or None."""
    lib, icd = _first(value, _NVIDIA_LIB, _NVIDIA_LIBS), _first(value, _NVIDIA_ICD, _NVIDIA_ICDS)
    found = [m for m in (NVIDIA_FILE.search(value), lib, icd) if m is not None]
    return min(found, key=re.Match.start).group(0) if found else None  # the first; a tie: in that order, as before


def nvidia_files(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    """`ln -s /usr/local/cuda/lib64/stubs/libcuda.so ...`, `ldconfig /usr/local/nvidia/lib64`,
    `--device /dev/nvidia0`: a command handed a file of NVIDIA's driver or CUDA's toolkit (a
    message's words aside; an assignment's value is ENV004's; a system package is CTR003's)."""
    if cmd.name in MESSAGES or (cmd.name in _APT and any(w.value in ("install", "add") for w in cmd.args[:3])):
        return []
    for w in cmd.args:
        value = w.value if w.value is not None else w.raw
        if re.match(r"[A-Za-z_]\w*=", value) and envvars.rule_of(value.split("=", 1)[0]) is not None:
            continue
        found = nvidia_file(value)
        if found is not None:  # (one per command: the step is what to port)
            return [
                Site(
                    "LCH007", w.start, w.end, None, message=f"`{found}` is a file of NVIDIA's driver or CUDA's toolkit"
                )
            ]
    return []


def redirect(raw: str, value: str | None, start: int, end: int) -> list[Site]:
    """`echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd`: output written to a file
    of NVIDIA's driver or CUDA's toolkit (LCH007)."""
    found = nvidia_file(value if value is not None else raw)
    if found is None:
        return []
    return [Site("LCH007", start, end, None, message=f"writes `{found}`, a file of NVIDIA's driver or CUDA's toolkit")]


def native_defines(cmd: Command, text: str, target: str, _: object) -> list[Site]:
    """`cmake -B build -DGGML_CUDA=ON`: a define that builds native code for CUDA (LCH006)."""
    return [site for w in cmd.args if "-D" in w.raw for site in defines(w.raw, w.start)]


CHECKS: tuple[Callable[[Command, str, str, object], list[Site]], ...] = (
    device_tool,
    toolchain,
    launcher,
    docker_gpus,
    pip_install,
    conda_install,
    system_packages,
    slurm,
    device_arguments,
    variable_names,
    native_defines,
    nvidia_files,
)


def slurm_directive(comment: str, start: int) -> list[Site]:
    """`#SBATCH --gres=gpu:8` (a comment that is Slurm's directive)."""
    if not comment.startswith("#SBATCH"):
        return []
    out = []
    for m in _SLURM_GPU.finditer(comment):
        out.append(
            Site("LCH003", start + m.start(), start + m.end(), None, message=f"`{m.group(0)}` asks Slurm for GPUs")
        )
    return out
