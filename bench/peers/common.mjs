// Shared by the Node engines of the peers benchmark: the workload files
// written by peers_test.go and the RESULT line the harness parses.
import { readFileSync } from "node:fs";
import { join } from "node:path";

export function readWorkload(work) {
  const texts = readFileSync(join(work, "records.txt"), "utf8").replace(/\n$/, "").split("\n");
  const queries = JSON.parse(readFileSync(join(work, "queries.json"), "utf8"));
  const raw = readFileSync(join(work, "vectors.f32"));
  const all = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);
  const dims = queries[0].vec.length;
  const vector = (i) => all.subarray(i * dims, (i + 1) * dims);
  return { texts, queries, dims, vector };
}

export function report(result) {
  process.stdout.write("RESULT " + JSON.stringify(result) + "\n");
}

export const rssMB = () => process.memoryUsage().rss / (1 << 20);

// needleHit: does a top-10 of texts contain the needle's code?
export const needleHit = (q, texts) => (q.needle ? texts.some((t) => t.includes(q.needle)) : false);
