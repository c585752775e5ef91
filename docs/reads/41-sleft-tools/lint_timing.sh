#!/bin/bash
cd /tmp/sleft-vllm/vllm-0.34.0
for t in /tmp/base-e74 /work/wt/sleft /tmp/base-e74 /work/wt/sleft; do
  PYTHONPATH=$t /usr/bin/time -f "lint $t %e s %U user %S sys" /work/main/.venv-ci/bin/python -m porter lint --target xla --no-cache --output-format concise vllm/model_executor > /tmp/sleft-l_$(basename $t).txt 2>>/tmp/sleft-time.err
  tail -1 /tmp/sleft-time.err
  grep -c KERN002 /tmp/sleft-l_$(basename $t).txt
done
