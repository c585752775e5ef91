#!/bin/bash
cd /tmp/scaffold24/falint
for t in /tmp/base-scaffold24 /work/wt/scaffold /tmp/base-scaffold24 /work/wt/scaffold; do
  PYTHONPATH=$t /usr/bin/time -f "lint $t %e s %U user %S sys" /work/main/.venv-ci/bin/python -m porter lint --target xla --no-cache --output-format concise . > /tmp/scaffold24/fl_$(basename $t).txt 2>>/tmp/scaffold24/fltime.err
  tail -1 /tmp/scaffold24/fltime.err
  wc -l < /tmp/scaffold24/fl_$(basename $t).txt
done
