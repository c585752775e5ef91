"""The way a file takes through porter, one module a step:

    discover -> prefilter -> resolve, positions (one file) / index, cuda_only_index, generic
    (the project) -> port -> suppressions -> findings -> writer

`discover` lists the files; `prefilter` keeps those a rule could match; `resolve` and
`positions` answer what a name is and where a node sits; the project-wide passes (`index`:
device values, `cuda_only_index`: CUDA-only imports, `generic`: whether the project already
picks its device generically) give each file its cross-file facts; `port` runs the rule
families (`porter/codemods`) over one file; `suppressions` drops what the user silenced;
`findings` is what every step reports; `writer` writes results atomically. `runner` drives
many files through it, in worker processes (`parallel`) and through the cache (`cache`, with
`statindex` answering unchanged files from their `stat`).
"""
