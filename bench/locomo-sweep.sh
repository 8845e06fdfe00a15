#!/bin/bash
# LoCoMo sweep used for BENCHMARKS.md (flat mode: the retrieval settings themselves)
L=${1:-../shared/data/locomo-dev.json}
run(){ name="$1"; shift; ./bin/hmo eval locomo --json --mode flat "$@" $L | python3 -c "
import json,sys; r=json.load(sys.stdin); o=r['overall']; c=r['by_category']
print(json.dumps({'name':sys.argv[1],'args':sys.argv[2],'r5':o['turn_recall']['5'],'r10':o['turn_recall']['10'],'r20':o['turn_recall']['20'],'hit10':o['all_hit_10'],'sess5':o['session_recall'],'med_ms':r['median_latency_ms'],'cat':{k:v['turn_recall']['10'] for k,v in c.items()}}))" "$name" "$*"; }
run "BM25, single turn"          --only text --context -1 --no-role
run "BM25, turn+speaker"         --only text --context -1
run "BM25, +previous turn"       --only text
run "vector, single turn"        --only vector --context -1
run "vector, +previous turn"     --only vector
run "RRF (k=60)"                 --fusion rrf
run "min-max linear w=0.5"       --text-weight 0.5
run "scale w=0.5"                --fusion scale --text-weight 0.5
run "min-max linear w=0.7"       --text-weight 0.7
run "min-max linear w=0.8 (default)"
run "min-max linear w=0.9"       --text-weight 0.9
run "default, 2 previous turns"  --context 2
