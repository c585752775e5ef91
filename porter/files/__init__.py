"""The files around the Python: dependencies, containers, launchers, configs and notebooks.

They flow through the Python files' pipeline:

    discover (kinds.kind_of: by name) ─► prefilter (the tokens of the rules that read the kind)
      ─► port.port_file ─► the kind's porter: the sites it finds (a span, a rule, the
         replacement where one is a documented fact, facts.py / rules/environments.toml)
      ─► sites.result: findings (select/ignore, `# noqa`), the fixes the settings allow,
         new bytes that differ only inside the sites and parse again (verify.py)
      ─► the writer, the cache, lint's formats and the reports, as for Python.

One folder per family of kinds, one module per format:

    deps/        requirements files, pyproject.toml, setup.cfg, setup.py, conda environments
    containers/  Dockerfiles, compose files
    shell/       shell scripts (tree-sitter-bash), Slurm batch files, Makefiles, env variables
    configs/     YAML, JSON and TOML configs: accelerate, Lightning, DeepSpeed, CUDA values
    notebooks/   .ipynb: code cells through the Python codemods, magics through the above
"""

# the rule families (the `family` of rules/*.toml) whose codes the porters of this folder own,
# and the subpackage that implements each (the Python families live in porter/codemods)
FAMILIES = {
    "deps": "porter.files.deps",
    "containers": "porter.files.containers",
    "launch": "porter.files.shell",
    "env": "porter.files.shell",
    "configs": "porter.files.configs",
    "notebooks": "porter.files.notebooks",
}
