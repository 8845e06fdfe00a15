#!/bin/bash
# Turns bench/ablation/{flat,tiered}.jsonl (run.sh) into the markdown
# table of BENCHMARKS.md and the chart spec docs/retrieval-ablation.json
# (drawn with: go run ./tools/plot < docs/retrieval-ablation.json > docs/retrieval-ablation.svg).
set -euo pipefail
python3 - <<'PY'
import json
rows = {m: [json.loads(l) for l in open(f"bench/ablation/{m}.jsonl")] for m in ("flat", "tiered")}
cats = ["single-hop", "multi-hop", "temporal", "open-domain"]
print("| stages | mode | R@10 | Δ vs first row [95% CI] | " + " | ".join(cats) + " | median ms |")
print("|---|---|---|---|" + "---|" * len(cats) + "---|")
for m in ("flat", "tiered"):
    for r in rows[m]:
        d = "—" if r is rows[m][0] else f"{r['delta']:+.3f} [{r['delta_ci'][0]:+.3f}, {r['delta_ci'][1]:+.3f}]"
        print(f"| {r['name']} | {m} | {r['r10']:.3f} | {d} | " + " | ".join(f"{r['by_category'][c]:.3f}" for c in cats) + f" | {r['median_ms']:.2f} |")
spec = {"title": "LoCoMo dev: turn Recall@10 by pipeline stages", "unit": "Recall@10", "max": 1.0,
        "series": ["flat", "tiered"],
        "groups": [{"label": a["name"], "values": [round(a["r10"], 3), round(b["r10"], 3)]} for a, b in zip(rows["flat"], rows["tiered"])]}
json.dump(spec, open("docs/retrieval-ablation.json", "w"), indent=1)
PY
