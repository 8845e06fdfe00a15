#!/bin/bash
# Paired bootstrap of turn R@10 between two per-question files (JSON
# arrays in the same question order, as tools/ablate -per-question
# writes them): the mean difference B - A and its 95% percentile
# interval over 10000 resamples of the questions.
# Usage: bench/ablation/paired.sh A.json B.json
set -euo pipefail
python3 - "$1" "$2" <<'PY'
import json, random, sys
a, b = (json.load(open(f)) for f in sys.argv[1:3])
assert len(a) == len(b), "different question counts"
d = [y - x for x, y in zip(a, b)]
rng = random.Random(1)
n = len(d)
means = sorted(sum(d[rng.randrange(n)] for _ in range(n)) / n for _ in range(10000))
print(f"A {sum(a)/n:.3f}  B {sum(b)/n:.3f}  B-A {sum(d)/n:+.3f} [{means[250]:+.3f}, {means[9750]:+.3f}]  n={n}")
PY
