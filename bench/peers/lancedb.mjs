// LanceDB embedded (@lancedb/lancedb) for the peers benchmark:
//   node lancedb.mjs ingest|query WORK STORE flat|ivfpq
// One table (id, text, vector) with an FTS index on text; "ivfpq" adds an
// IVF-PQ index on vector (cosine). Ingest time includes the index builds.
import { createRequire } from "node:module";
import { rmSync } from "node:fs";
import { readWorkload, report, rssMB, anonMB, needleHit } from "./common.mjs";

const require = createRequire(import.meta.url);
const lancedb = require("@lancedb/lancedb");
const [mode, work, store, variant] = process.argv.slice(2);
const w = readWorkload(work, mode === "ingest");

if (mode === "ingest") {
  rmSync(store, { recursive: true, force: true });
  const start = performance.now();
  const db = await lancedb.connect(store);
  const batch = 10000;
  const rows = (off) => {
    const out = [];
    for (let i = off; i < Math.min(off + batch, w.texts.length); i++) {
      out.push({ id: i, text: w.texts[i], vector: Array.from(w.vector(i)) });
    }
    return out;
  };
  const tbl = await db.createTable("memory", rows(0));
  for (let off = batch; off < w.texts.length; off += batch) await tbl.add(rows(off));
  await tbl.createIndex("text", { config: lancedb.Index.fts() });
  if (variant === "ivfpq") {
    await tbl.createIndex("vector", {
      config: lancedb.Index.ivfPq({ distanceType: "cosine", numPartitions: Math.max(1, Math.round(Math.sqrt(w.texts.length))), numSubVectors: w.dims / 4 }),
    });
  }
  report({ engine: "lancedb-" + variant, ingest_rps: w.texts.length / ((performance.now() - start) / 1000) });
} else {
  const start = performance.now();
  const db = await lancedb.connect(store);
  const tbl = await db.openTable("memory");
  const rrf = await lancedb.rerankers.RRFReranker.create();
  const res = { engine: "lancedb-" + variant, hybrid_ms: [], vector_ms: [], text_ms: [], vector_top: [], needle_hits: 0, needles: 0 };
  let hybridOK = true;
  for (const [i, q] of w.queries.entries()) {
    let t = performance.now();
    const vec = await tbl.vectorSearch(q.vec).distanceType("cosine").select(["id"]).limit(10).toArray();
    res.vector_ms.push(performance.now() - t);
    if (i === 0) res.cold_ms = performance.now() - start;
    res.vector_top.push(vec.map((r) => Number(r.id)));
    t = performance.now();
    const txt = await tbl.search(q.text, "fts").select(["id", "text"]).limit(10).toArray();
    res.text_ms.push(performance.now() - t);
    let top = txt;
    if (hybridOK) {
      try {
        t = performance.now();
        top = await tbl.query().fullTextSearch(q.text).nearestTo(q.vec).distanceType("cosine").rerank(rrf).select(["id", "text"]).limit(10).toArray();
        res.hybrid_ms.push(performance.now() - t);
      } catch (err) {
        hybridOK = false;
        console.error("lancedb: hybrid query failed, hybrid NOT measured:", String(err));
      }
    }
    if (q.needle) {
      res.needles++;
      if (needleHit(q, top.map((r) => r.text))) res.needle_hits++;
    }
  }
  res.rss_mb = rssMB();
  res.anon_mb = anonMB();
  report(res);
}
