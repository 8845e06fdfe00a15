// Shared by the Node engines of the peers benchmark: the workload files
// written by peers_test.go and the RESULT line the harness parses.
import { readFileSync } from "node:fs";
import { join } from "node:path";

// readWorkload reads the queries, and the records and their vectors only
// when records is set (ingest): a query process holds no more than an
// application querying the engine would, so its resident set is the
// engine's.
export function readWorkload(work, records = true) {
  const queries = JSON.parse(readFileSync(join(work, "queries.json"), "utf8"));
  const dims = queries[0].vec.length;
  if (!records) return { texts: null, queries, dims, vector: null };
  const texts = readFileSync(join(work, "records.txt"), "utf8").replace(/\n$/, "").split("\n");
  const raw = readFileSync(join(work, "vectors.f32"));
  const all = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const vector = (i) => all.subarray(i * dims, (i + 1) * dims);
  return { texts, queries, dims, vector };
}

export function report(result) {
  process.stdout.write("RESULT " + JSON.stringify(result) + "\n");
}

export const rssMB = () => process.memoryUsage().rss / (1 << 20);

// anonMB: the anonymous share of the resident set (RssAnon), 0 where
// /proc/self/status has none.
export function anonMB() {
  try {
    const m = readFileSync("/proc/self/status", "utf8").match(/^RssAnon:\s+(\d+) kB/m);
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

// needleHit: does a top-10 of texts contain the needle's code?
export const needleHit = (q, texts) => (q.needle ? texts.some((t) => t.includes(q.needle)) : false);
