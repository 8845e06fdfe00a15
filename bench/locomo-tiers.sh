#!/bin/bash
# LoCoMo in-situ stream, tiered against flat, for BENCHMARKS.md (issue 3).
# One JSON line per row: recall, the tier that served each question, the
# share that touched Tier 3, candidates scored per query and latency.
set -euo pipefail
L=${1:-../shared/data/locomo-dev.json}
run(){ name="$1"; shift; ./bin/hmo eval locomo --json "$@" "$L" | python3 -c "
import json,sys; r=json.load(sys.stdin); o=r['overall']; t=r.get('tiers') or {}
print(json.dumps({'name':sys.argv[1],'args':sys.argv[2],'r5':o['turn_recall']['5'],'r10':o['turn_recall']['10'],'r20':o['turn_recall']['20'],'hit10':o['all_hit_10'],'sess5':o['session_recall'],'served':t.get('served'),'tier3_share':t.get('tier3_share'),'scored':t.get('candidates_per_query'),'firings':t.get('gate_firings'),'med_ms':r['median_latency_ms'],'p99_ms':r['p99_latency_ms'],'auc':r['importance_auc'],'records':r['records']}))" "$name" "$*"; }
run "flat (exhaustive)"                   --mode flat
run "tiered, defaults"                    --mode tiered
run "tiered, defaults, gate off"          --mode tiered --gate-off
run "tiered, stop on several full matches" --mode tiered --max-matches -1
run "tiered, Tier 1 never sufficient"     --mode tiered --min-coverage 1.5
run "tiered, 128 / 512"                   --mode tiered --tier1 128 --tier2 512
run "tiered, 64 / 192"                    --mode tiered --tier1 64 --tier2 192
run "tiered, 64 / 192, coverage 0.8"      --mode tiered --tier1 64 --tier2 192 --min-coverage 0.8
