#!/bin/bash
# The retrieval ablation of BENCHMARKS.md: each stage alone on top of the
# two generators, the default, and the default without (or with) each
# stage, in both modes. Writes bench/ablation/{flat,tiered}.jsonl.
# Usage: bench/ablation/run.sh [LOCOMO_FILE]
set -euo pipefail
L=${1:-../shared/data/locomo-dev.json}
rows=(
  'text+vector (baseline)=none,text,vector'
  '+prf=none,text,vector,prf'
  '+speaker=none,text,vector,speaker'
  '+time=none,text,vector,time'
  '+session=none,text,vector,session'
  '+segtree=none,text,vector,segtree'
  '+wordsim=none,text,vector,wordsim'
  '+speechact=none,text,vector,speechact'
  'default='
  'default -prf=-prf'
  'default -speaker=-speaker'
  'default -time=-time'
  'default -session=-session'
  'default -speechact=-speechact'
  'default +segtree=+segtree'
  'default +wordsim=+wordsim'
)
for mode in flat tiered; do
  go run ./tools/ablate -data "$L" -mode $mode "${rows[@]}" > bench/ablation/$mode.jsonl
done
