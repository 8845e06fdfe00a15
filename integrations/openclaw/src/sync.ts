import { createHash } from "node:crypto";
import { watch, type FSWatcher } from "node:fs";
import { mkdir, readdir, readFile, rename, stat, writeFile } from "node:fs/promises";
import { join, relative, sep } from "node:path";

import type { HmoClient } from "./client.js";
import type { PluginLogger } from "./openclaw.js";
import { LIMITS } from "./schema.gen.js";
import type { NewMemory } from "./wire.js";

/** One memory read from a Markdown memory file. */
export interface FileItem {
  text: string;
  /** 1-based line the item starts on. */
  line: number;
  /** YYYY-MM-DD from the file name or the heading above, if any. */
  date?: string;
}

const DATE = /^(\d{4}-\d{2}-\d{2})\b/;

/**
 * parseMemoryFile splits an OpenClaw memory file the way "hmo import"
 * does: each top-level list item (with its nested items and continuation
 * lines) and each paragraph is one memory; headings are not memories but
 * a heading that starts with a date dates the items under it, as a daily
 * note's file name (memory/2026-03-02.md) dates all of its items. Front
 * matter, HTML comments (OpenClaw's trigger and importance annotations),
 * rules and blank lines are skipped; fenced code stays in its block.
 */
export function parseMemoryFile(text: string, relPath: string): FileItem[] {
  const base = relPath.split(/[\\/]/).pop() ?? "";
  const fileDate = DATE.exec(base)?.[1];
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  const items: FileItem[] = [];
  let date = fileDate;
  let cur: { lines: string[]; line: number; date?: string; item: boolean; blank: boolean } | undefined;
  let fence = false;
  const flush = () => {
    const t = cur?.lines.join("\n").replace(/<!--[\s\S]*?-->/g, "").trim();
    if (cur && t) items.push({ text: t, line: cur.line, ...(cur.date ? { date: cur.date } : {}) });
    cur = undefined;
  };
  const start = (line: number, text: string, item: boolean) => {
    flush();
    cur = { lines: [text], line, date, item, blank: false };
  };
  let i = 0;
  if (lines[0]?.trim() === "---") {
    const end = lines.findIndex((l, j) => j > 0 && l.trim() === "---");
    if (end > 0) i = end + 1;
  }
  for (; i < lines.length; i++) {
    const raw = (lines[i] ?? "").trimEnd();
    const indented = /^\s/.test(raw);
    const l = raw.trim();
    if (fence) {
      cur?.lines.push(raw);
      if (/^(```|~~~)/.test(l)) fence = false;
      continue;
    }
    if (/^(```|~~~)/.test(l)) {
      fence = true;
      if (cur && (!cur.blank || indented)) cur.lines.push(raw);
      else start(i + 1, raw, false);
      continue;
    }
    if (l === "") {
      if (cur?.item) cur.blank = true;
      else flush();
      continue;
    }
    const heading = indented ? null : /^#{1,6}\s+(.*)$/.exec(l);
    if (heading) {
      flush();
      date = DATE.exec(heading[1] ?? "")?.[1] ?? fileDate;
      continue;
    }
    if (/^([-*_])(\s*\1){2,}$/.test(l) || /^<!--[\s\S]*-->$/.test(l)) {
      flush();
      continue;
    }
    const marker = indented ? null : /^([-*+]|\d+[.)])\s+/.exec(l);
    if (marker) {
      start(i + 1, l.slice(marker[0].length), true);
      continue;
    }
    if (cur && (indented || !cur.blank)) {
      // Nested items, continuation lines, lazy continuation.
      cur.lines.push(l);
      cur.blank = false;
      continue;
    }
    start(i + 1, l, false);
  }
  flush();
  return items;
}

/** What the sync remembers of one file: its hash and its items' memory ids. */
interface FileState {
  hash: string;
  /** item key (hash of its text) to the hmo ids added for it */
  items: Record<string, number>;
}

interface State {
  version: 1;
  files: Record<string, FileState>;
}

export interface SyncOptions {
  workspaceDir: string;
  /** Where the sync keeps its state (sync.json): the plugin's state directory. */
  stateDir: string;
  scope: string;
  logger: PluginLogger;
  /** Wait after a change before scanning, in ms; default 500. */
  debounceMs?: number;
  /** Rescan period when no change event arrives, in ms; default 60000, 0 for none. */
  pollMs?: number;
}

/** Largest memory file read, in bytes; larger ones are skipped with a warning. */
export const MAX_FILE_BYTES = 4 << 20;
/** Most memory files read under memory/. */
export const MAX_FILES = 2000;

const key = (s: string): string => createHash("sha256").update(s).digest("hex").slice(0, 32);

/**
 * MemoryFileSync keeps OpenClaw's memory files ingested in hmo: MEMORY.md
 * and the Markdown files under memory/ (daily notes) of the agent
 * workspace. It scans them at start and whenever they change (fs.watch,
 * with a periodic rescan as a fallback), adds each new item as a memory
 * (source "openclaw:<path>#L<line>", dated by its note) and forgets the
 * memories of items that left the files, as when dreaming rewrites
 * MEMORY.md. It never writes the files: OpenClaw's dreaming owns MEMORY.md.
 * What it added is recorded in <stateDir>/hmo-memory-sync.json, so a
 * restart adds nothing twice; a failed call leaves the record as it was
 * and the next scan retries. One scan runs at a time.
 */
export class MemoryFileSync {
  private watchers: FSWatcher[] = [];
  private timer?: NodeJS.Timeout;
  private poll?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    private readonly client: Pick<HmoClient, "add" | "delete">,
    private readonly opts: SyncOptions,
  ) {}

  get statePath(): string {
    return join(this.opts.stateDir, "hmo-memory-sync.json");
  }

  async start(): Promise<void> {
    this.stopped = false;
    for (const dir of [this.opts.workspaceDir, join(this.opts.workspaceDir, "memory")]) {
      try {
        const w = watch(dir, { recursive: dir !== this.opts.workspaceDir }, (_ev, name) => {
          if (dir === this.opts.workspaceDir && name !== "MEMORY.md" && name !== "memory") return;
          this.schedule();
        });
        w.on("error", () => {});
        this.watchers.push(w);
      } catch {
        // memory/ may not exist yet: the periodic rescan finds it
      }
    }
    const pollMs = this.opts.pollMs ?? 60000;
    if (pollMs > 0) {
      this.poll = setInterval(() => this.schedule(), pollMs);
      this.poll.unref();
    }
    await this.scan();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const w of this.watchers) w.close();
    this.watchers = [];
    clearTimeout(this.timer);
    clearInterval(this.poll);
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.scan(), this.opts.debounceMs ?? 500);
    this.timer.unref();
  }

  /** scan brings hmo in line with the files; concurrent calls coalesce. */
  async scan(): Promise<void> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = (async () => {
      do {
        this.again = false;
        try {
          await this.scanOnce();
        } catch (err) {
          this.opts.logger.warn(`hmo-memory: memory file sync failed: ${String(err)}`);
        }
      } while (this.again && !this.stopped);
    })();
    try {
      await this.running;
    } finally {
      this.running = undefined;
    }
  }

  private async scanOnce(): Promise<void> {
    const state = await this.load();
    const files = await this.files();
    let changed = false;
    for (const rel of files) {
      let text: string;
      try {
        const st = await stat(join(this.opts.workspaceDir, rel));
        if (st.size > MAX_FILE_BYTES) {
          this.opts.logger.warn(`hmo-memory: ${rel} is ${st.size} bytes, over ${MAX_FILE_BYTES}: not synced`);
          continue;
        }
        text = await readFile(join(this.opts.workspaceDir, rel), "utf8");
      } catch {
        continue; // removed while scanning: the next scan sees it gone
      }
      const hash = key(text);
      const old = state.files[rel];
      if (old?.hash === hash) continue;
      await this.syncFile(rel, text, hash, old, state);
      changed = true;
      await this.save(state); // after each file, so a crash loses at most one file's record
    }
    for (const rel of Object.keys(state.files)) {
      if (files.includes(rel)) continue;
      await this.syncFile(rel, "", key(""), state.files[rel], state);
      delete state.files[rel];
      changed = true;
    }
    if (changed) await this.save(state);
  }

  private async syncFile(rel: string, text: string, hash: string, old: FileState | undefined, state: State): Promise<void> {
    const items = parseMemoryFile(text, rel);
    const prev = old?.items ?? {};
    const next: Record<string, number> = {};
    const add: Array<{ k: string; m: NewMemory }> = [];
    for (const it of items) {
      const k = key(it.text);
      if (next[k] !== undefined || add.some((a) => a.k === k)) continue; // the same text twice is one memory
      if (prev[k] !== undefined) {
        next[k] = prev[k];
        continue;
      }
      add.push({
        k,
        m: {
          text: it.text,
          scope: this.opts.scope,
          sources: [`openclaw:${rel}#L${it.line}`],
          ...(it.date ? { time: `${it.date}T00:00:00Z` } : {}),
        },
      });
    }
    for (let i = 0; i < add.length; i += LIMITS.maxAddMemories) {
      const batch = add.slice(i, i + LIMITS.maxAddMemories);
      const res = await this.client.add({ memories: batch.map((b) => b.m) });
      const dup = new Set(res.duplicates ?? []);
      batch.forEach((b, j) => {
        const id = res.ids?.[j];
        // A memory hmo already had (say, said in a conversation) is not the
        // file's to forget: it is recorded as present (0), never deleted.
        if (id !== undefined) next[b.k] = dup.has(id) ? 0 : id;
      });
      // Record each batch at once: a later failure must not add it twice.
      state.files[rel] = { hash: old?.hash ?? "", items: { ...prev, ...next } };
      await this.save(state);
    }
    const gone = Object.entries(prev)
      .filter(([k, id]) => next[k] === undefined && id > 0)
      .map(([, id]) => id);
    for (let i = 0; i < gone.length; i += LIMITS.maxDeleteIds) {
      await this.client.delete({ ids: gone.slice(i, i + LIMITS.maxDeleteIds) });
    }
    state.files[rel] = { hash, items: next };
    if (add.length > 0 || gone.length > 0) {
      this.opts.logger.info(`hmo-memory: ${rel}: ${add.length} added, ${gone.length} forgotten`);
    }
  }

  /** files lists MEMORY.md and the Markdown files under memory/, workspace-relative with "/". */
  private async files(): Promise<string[]> {
    const out: string[] = [];
    try {
      if ((await stat(join(this.opts.workspaceDir, "MEMORY.md"))).isFile()) out.push("MEMORY.md");
    } catch {
      // none yet
    }
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch {
        return;
      }
      for (const e of entries) {
        if (out.length >= MAX_FILES || e.name.startsWith(".")) continue;
        const p = join(dir, e.name);
        if (e.isDirectory()) await walk(p);
        else if (e.isFile() && e.name.endsWith(".md")) out.push(relative(this.opts.workspaceDir, p).split(sep).join("/"));
      }
    };
    await walk(join(this.opts.workspaceDir, "memory"));
    return out.sort();
  }

  private async load(): Promise<State> {
    try {
      const s = JSON.parse(await readFile(this.statePath, "utf8")) as State;
      if (s.version === 1 && s.files && typeof s.files === "object") return s;
    } catch {
      // first run, or a damaged record: start over (hmo de-duplicates exact repeats)
    }
    return { version: 1, files: {} };
  }

  private async save(state: State): Promise<void> {
    await mkdir(this.opts.stateDir, { recursive: true, mode: 0o700 });
    const tmp = `${this.statePath}.tmp`;
    await writeFile(tmp, JSON.stringify(state), { mode: 0o600 });
    await rename(tmp, this.statePath);
  }
}
