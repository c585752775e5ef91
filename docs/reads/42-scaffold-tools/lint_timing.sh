#!/bin/bash
cd /tmp/sleft-vllm/vllm-0.34.0
for t in /tmp/base-scaffold24 /work/wt/scaffold /tmp/base-scaffold24 /work/wt/scaffold; do
  PYTHONPATH=$t /usr/bin/time -f "lint $t %e s %U user %S sys" /work/main/.venv-ci/bin/python -m porter lint --target xla --no-cache --output-format concise vllm/model_executor > /tmp/scaffold24/l_$(basename $t).txt 2>>/tmp/scaffold24/time.err
  tail -1 /tmp/scaffold24/time.err
  wc -l < /tmp/scaffold24/l_$(basename $t).txt
done
