#!/bin/bash
# `porter kernels --json` of a tree on two porter trees: each kernel's path, name and detail (the
# "binds:", "TORCH_LIBRARY" and "a helper of" parts), and the count of helpers.
# usage: listing.sh TREE BASE_PORTER BRANCH_PORTER
for t in "$2" "$3"; do
  echo "== $t"
  PYTHONPATH=$t /work/main/.venv-ci/bin/python -m porter kernels --json "$1" | /work/main/.venv-ci/bin/python -c "
import json, sys
ks = json.load(sys.stdin)['kernels']
print(len(ks), 'kernels,', sum('a helper of' in k['detail'] for k in ks), 'helpers')
for k in ks:
    print(k['path'], k['name'], '|', k['detail'][:160])
"
done
