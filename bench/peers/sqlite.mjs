// OpenClaw's built-in memory index for the peers benchmark: SQLite FTS5 +
// sqlite-vec through node:sqlite, with memory-core's schema (chunks, chunks
// FTS5 table, vec0 table), its queries (vec0 KNN oversampled 8x ordered by
// vec_distance_cosine; FTS5 "a" AND "b" ranked by bm25) and its hybrid merge
// (4x candidates, 0.7 x vector score + 0.3 x bm25RankToScore), as in
// openclaw 2026.9.6 dist/manager-search*.mjs and memory-schema*.mjs.
//   node sqlite.mjs ingest|query WORK STORE openclaw
import { createRequire } from "node:module";
import { DatabaseSync } from "node:sqlite";
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { readWorkload, report, rssMB, anonMB, needleHit } from "./common.mjs";

const require = createRequire(import.meta.url);
const sqliteVec = require("sqlite-vec");
const [mode, work, store] = process.argv.slice(2);
const w = readWorkload(work, mode === "ingest");
const file = join(store, "memory.sqlite");
const MODEL = "hmo-static";

function open() {
  const db = new DatabaseSync(file, { allowExtension: true });
  db.loadExtension(sqliteVec.getLoadablePath());
  db.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;");
  return db;
}
const blob = (v) => new Uint8Array(v.buffer, v.byteOffset, v.byteLength);

if (mode === "ingest") {
  rmSync(store, { recursive: true, force: true });
  mkdirSync(store, { recursive: true });
  const start = performance.now();
  const db = open();
  db.exec(`
CREATE TABLE IF NOT EXISTS memory_index_chunks (
  chunk_rowid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, path TEXT NOT NULL,
  source TEXT NOT NULL DEFAULT 'memory', start_line INTEGER NOT NULL, end_line INTEGER NOT NULL,
  hash TEXT NOT NULL, model TEXT NOT NULL, text TEXT NOT NULL, embedding BLOB NOT NULL,
  updated_at INTEGER NOT NULL) STRICT;
CREATE VIRTUAL TABLE IF NOT EXISTS memory_index_chunks_fts USING fts5(
  text, id UNINDEXED, path UNINDEXED, source UNINDEXED, model UNINDEXED,
  start_line UNINDEXED, end_line UNINDEXED);
CREATE VIRTUAL TABLE IF NOT EXISTS memory_index_chunks_vec USING vec0(
  id TEXT PRIMARY KEY, embedding FLOAT[${w.dims}]);`);
  const chunk = db.prepare("INSERT INTO memory_index_chunks (id, path, source, start_line, end_line, hash, model, text, embedding, updated_at) VALUES (?, ?, 'memory', ?, ?, ?, ?, ?, ?, ?)");
  const fts = db.prepare("INSERT INTO memory_index_chunks_fts (text, id, path, source, model, start_line, end_line) VALUES (?, ?, ?, 'memory', ?, ?, ?)");
  const vec = db.prepare("INSERT INTO memory_index_chunks_vec (id, embedding) VALUES (?, ?)");
  const batch = 1000;
  for (let off = 0; off < w.texts.length; off += batch) {
    db.exec("BEGIN");
    for (let i = off; i < Math.min(off + batch, w.texts.length); i++) {
      const id = String(i), path = `memory/${Math.floor(i / 20)}.md`, line = i % 20, v = blob(w.vector(i));
      chunk.run(id, path, line, line, id, MODEL, w.texts[i], v, Date.now());
      fts.run(w.texts[i], id, path, MODEL, line, line);
      vec.run(id, v);
    }
    db.exec("COMMIT");
  }
  db.close();
  report({ engine: "sqlite", ingest_rps: w.texts.length / ((performance.now() - start) / 1000) });
} else {
  const start = performance.now();
  const db = open();
  const knn = db.prepare(`SELECT c.id, c.text, vec_distance_cosine(v.embedding, ?) AS dist
  FROM memory_index_chunks_vec v CROSS JOIN memory_index_chunks c ON c.id = v.id
 WHERE v.embedding MATCH ? AND k = ? AND c.model IN (?)
 ORDER BY dist ASC LIMIT ?`);
  const kw = db.prepare(`SELECT id, text, memory_index_chunks_fts.rank AS rank FROM memory_index_chunks_fts
 WHERE memory_index_chunks_fts MATCH ? AND memory_index_chunks_fts.rank MATCH 'bm25()' AND model = ?
 ORDER BY rank ASC LIMIT ?`);
  const vectorSearch = (q, limit) => {
    const b = blob(new Float32Array(q.vec));
    return knn.all(b, b, Math.min(limit * 8, 4096), MODEL, limit).map((r) => ({ id: r.id, text: r.text, score: 1 - r.dist }));
  };
  const buildFtsQuery = (raw) => {
    const tokens = (raw.match(/[\p{L}\p{N}_]+/gu) ?? []).map((t) => t.trim()).filter(Boolean);
    return tokens.length ? tokens.map((t) => `"${t.replaceAll('"', "")}"`).join(" AND ") : null;
  };
  const bm25RankToScore = (rank) => (!Number.isFinite(rank) ? 1 / 1e3 : rank < 0 ? -rank / (1 - rank) : 1 / (1 + rank));
  const keywordSearch = (q, limit) => {
    const m = buildFtsQuery(q.text);
    return m ? kw.all(m, MODEL, limit).map((r) => ({ id: r.id, text: r.text, score: bm25RankToScore(r.rank) })) : [];
  };
  const res = { engine: "sqlite", hybrid_ms: [], vector_ms: [], text_ms: [], vector_top: [], needle_hits: 0, needles: 0 };
  for (const [i, q] of w.queries.entries()) {
    let t = performance.now();
    const vec = vectorSearch(q, 10);
    res.vector_ms.push(performance.now() - t);
    if (i === 0) res.cold_ms = performance.now() - start;
    res.vector_top.push(vec.map((r) => Number(r.id)));
    t = performance.now();
    keywordSearch(q, 10);
    res.text_ms.push(performance.now() - t);
    t = performance.now();
    const candidates = Math.min(200, Math.max(1, Math.floor(10 * 4)));
    const byId = new Map();
    for (const r of vectorSearch(q, candidates)) byId.set(r.id, { text: r.text, v: r.score, k: 0 });
    for (const r of keywordSearch(q, candidates)) {
      const e = byId.get(r.id);
      if (e) e.k = r.score;
      else byId.set(r.id, { text: r.text, v: 0, k: r.score });
    }
    const top = [...byId.values()].map((e) => ({ text: e.text, score: 0.7 * e.v + 0.3 * e.k })).sort((a, b) => b.score - a.score).slice(0, 10);
    res.hybrid_ms.push(performance.now() - t);
    if (q.needle) {
      res.needles++;
      if (needleHit(q, top.map((r) => r.text))) res.needle_hits++;
    }
  }
  res.rss_mb = rssMB();
  res.anon_mb = anonMB();
  db.close();
  report(res);
}
