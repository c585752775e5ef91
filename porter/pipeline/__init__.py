"""The way files take through porter:

    discover -> (analysis: the project's facts) -> port -> findings -> writer

`discover` lists the files; `port` sends each to its kind's porter (porter.codemods.apply for
Python, porter.files for the rest) with the facts porter.analysis found across the project;
`writer` writes results atomically. `runner` drives many files through it, in worker processes
(`parallel`) and through the cache (`cache`, with `statindex` answering unchanged files from
their `stat`).
"""
