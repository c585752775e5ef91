"""The settings one run of the engine works under.

Frozen and picklable, so worker processes and the cache key see exactly what the parent saw.
"""

from __future__ import annotations

from dataclasses import dataclass, field

TARGETS = ("neuron", "tpu", "xla")
PORTABLE_TARGETS = ("neuron", "tpu")  # the targets that implement torch.accelerator
# porter.analysis.index's answers for one file: a (scope, expression, kind, chain) per device site
Facts = tuple[tuple[str | None, str, str, tuple[str, ...]], ...]  # scope None: module-wide (a CUDA-only import)


@dataclass(frozen=True)
class Settings:
    target: str
    select: tuple[str, ...] = ()  # codes or prefixes; empty = every rule on by default
    ignore: tuple[str, ...] = ()
    extend_select: tuple[str, ...] = ()  # turn on rules that are off by default (PERF…)
    unsafe_fixes: bool = False  # apply unsafe fixes too (fp16→bf16, GradScaler removal …)
    annotate: bool = False  # leave `# porter[CODE]: …` at each manual site
    exclude: tuple[str, ...] = ()  # gitignore-style patterns
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())
    # False when only findings are wanted (lint without --fix/--diff): the engine then skips
    # the import visitors and the re-parse check, half the cost of a changed file
    want_source: bool = True
    # the project index's answers for this file (porter.analysis.index): None = index the file alone.
    # Part of the settings so that worker processes get them and the cache key covers them.
    flow: Facts | None = None
    # the project's formatter line length for this file when porter writes it (porter.codemods.fit
    # splits the lines it lengthens past it): read by the runner (porter.config.line_length), in
    # the settings so that worker processes get it and the cache key covers it; None: no fitting
    line_length: int | None = None
    # --portable: one codebase for CUDA, the CPU and the target, through torch.accelerator
    portable: bool = False
    # the project picks its device generically (porter.analysis.generic): set by the runner for a run
    generic: bool = False
    # for dependency files (porter.files.deps): the modules of CUDA-only packages that the run's
    # Python still imports after the port, set by the runner once the Python is ported; None:
    # not known (a file ported alone), so no such package is removed
    imported_after_port: tuple[str, ...] | None = None
    # requirements files the project's build code reads as its package's requirements (setup.py's
    # `open('requirements.txt')`, setuptools' `file:`), by name: set by the runner (porter.files.deps.build_read)
    build_requirements: tuple[str, ...] = ()
    # requirements files another one of the run names with `-c` (pip reads them as constraints: no
    # package goes in), by name: set by the runner (porter.files.deps.constraint_files)
    constraint_files: tuple[str, ...] = ()
    # those of them another one names with `-r` too: pip installs their requirements as well, so the target's
    # packages are reported there, never added (set by the runner, porter.files.deps.constraint_files)
    installed_constraint_files: tuple[str, ...] = ()
    # whether the file's folder holds `__init__.py` (a module of a package, whose defaults are its
    # API: porter.codemods.literals.in_package), set by the runner so that the cache key covers
    # it (a warm run after `touch __init__.py` gave the old findings: seventeenth read); None:
    # looked up where the file is ported
    package: bool | None = None
    # the files beside it named for a device (`porter.files.port.device_siblings`: one of a family
    # of files per device is reported, never rewritten), set by the runner for a file that is not
    # Python so that the cache key and the stat index cover them (a `rocm.txt` added beside a
    # cached `cuda.txt` left its fixes fixable: twenty-ninth cache read); None: looked up where
    # the file is ported
    device_siblings: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        if self.target not in TARGETS:
            raise ValueError(f"unknown target {self.target!r}: choose one of {', '.join(TARGETS)}")
        if self.portable and self.target not in PORTABLE_TARGETS:
            raise ValueError(
                f"--portable works through torch.accelerator, which {self.target} does not implement "
                f"(PyTorch/XLA's device is not a torch.accelerator backend): use --portable with "
                f"{' or '.join(PORTABLE_TARGETS)}, or port to xla without it (docs/portable.md)"
            )
