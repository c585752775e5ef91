#!/bin/bash
# lint timing: h9-scaffold's tip (/tmp/base-scaf2) against the scaf2 worktree, alternated, 2 rounds
run() { # tree dir out-prefix
  PYTHONPATH=$1 /usr/bin/time -f "lint $1 $2 %e s %U user %S sys" /work/main/.venv-ci/bin/python -m porter lint --target xla --no-cache --output-format concise $3 > /tmp/scaf2-time/$4_$(basename $1).txt 2>>/tmp/scaf2-time/time.err
  tail -1 /tmp/scaf2-time/time.err; wc -l < /tmp/scaf2-time/$4_$(basename $1).txt
}
for t in /tmp/base-scaf2 /work/wt/scaf2 /tmp/base-scaf2 /work/wt/scaf2; do (cd /tmp/scaffold24/falint && run $t fa . fa); done
for t in /tmp/base-scaf2 /work/wt/scaf2 /tmp/base-scaf2 /work/wt/scaf2; do (cd /tmp/sleft-vllm/vllm-0.34.0 && run $t vllm vllm/model_executor vl); done
