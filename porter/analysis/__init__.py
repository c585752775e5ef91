"""The program analysis the rule families read: the project index (device values, fused-optimizer
flags, device-type comparisons), CUDA-only facts (compiled extensions, Triton modules, device
backends), name resolution and node positions, and the prefilter that says which files a rule
can match. It reads source with `ast` (libcst only for positions and resolve) and imports no
rule family."""
