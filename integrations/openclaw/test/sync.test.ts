import assert from "node:assert/strict";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";

import { MemoryFileSync, parseMemoryFile } from "../src/sync.js";
import type { AddRequest, AddResponse, DeleteRequest, DeleteResponse } from "../src/wire.js";

describe("parseMemoryFile", () => {
  const cases: Array<{ name: string; path: string; text: string; want: Array<[number, string, string?]> }> = [
    {
      name: "list items with continuation and nested items, dated by the daily note",
      path: "memory/2026-03-02.md",
      text: "# Tuesday\n\n- Ana moved to Porto.\n- She prefers tea.\n  Green, no sugar.\n  - not before 10\n\nA paragraph\nover two lines.\n",
      want: [
        [3, "Ana moved to Porto.", "2026-03-02"],
        [4, "She prefers tea.\nGreen, no sugar.\n- not before 10", "2026-03-02"],
        [8, "A paragraph\nover two lines.", "2026-03-02"],
      ],
    },
    {
      name: "dated headings, OpenClaw's annotations, front matter and rules",
      path: "MEMORY.md",
      text: "---\ntitle: x\n---\n## 2026-01-05 deploys\n- Keep the gateway on loopback. <!-- trigger: gateway setup --> <!-- importance: 9 -->\n\n---\n## Preferences\n1. Tabs, not spaces.\n<!-- a comment -->\n",
      want: [
        [5, "Keep the gateway on loopback.", "2026-01-05"],
        [9, "Tabs, not spaces."],
      ],
    },
    {
      name: "fenced code stays verbatim in its block, blank lines inside it too",
      path: "memory/notes.md",
      text: "- Build with:\n  ```\n  make\n\n  make test\n  ```\n- Next\n",
      want: [
        [1, "Build with:\n  ```\n  make\n\n  make test\n  ```"],
        [7, "Next"],
      ],
    },
    { name: "empty", path: "MEMORY.md", text: "\n\n# Only a heading\n", want: [] },
  ];
  for (const c of cases) {
    it(c.name, () => {
      assert.deepEqual(
        parseMemoryFile(c.text, c.path).map((i) => (i.date ? [i.line, i.text, i.date] : [i.line, i.text])),
        c.want,
      );
    });
  }
});

/** A fake hmo: records adds and deletes, hands out ids, fails on demand. */
class FakeHmo {
  next = 1;
  live = new Map<number, string>();
  adds: AddRequest[] = [];
  deletes: number[][] = [];
  fail = false;
  async add(req: AddRequest): Promise<AddResponse> {
    if (this.fail) throw new Error("hmo serve did not answer");
    this.adds.push(req);
    const duplicates: number[] = [];
    const ids = req.memories.map((m) => {
      // hmo de-duplicates: the same text is the stored memory.
      for (const [id, text] of this.live) {
        if (text === m.text) {
          duplicates.push(id);
          return id;
        }
      }
      this.live.set(this.next, m.text);
      return this.next++;
    });
    return { ids, ...(duplicates.length ? { duplicates } : {}) };
  }
  async delete(req: DeleteRequest): Promise<DeleteResponse> {
    if (this.fail) throw new Error("hmo serve did not answer");
    this.deletes.push(req.ids);
    for (const id of req.ids) this.live.delete(id);
    return { deleted: req.ids.length };
  }
  texts(): string[] {
    return [...this.live.values()].sort();
  }
}

describe("MemoryFileSync", () => {
  let ws = "";
  let state = "";
  const warnings: string[] = [];
  const logger = { info: () => {}, warn: (m: string) => void warnings.push(m) };
  beforeEach(async () => {
    ws = await mkdtemp(join(tmpdir(), "hmo-ws-"));
    state = join(ws, ".state");
    warnings.length = 0;
    await mkdir(join(ws, "memory"));
  });
  afterEach(async () => {
    await rm(ws, { recursive: true, force: true });
  });
  const make = (hmo: FakeHmo) => new MemoryFileSync(hmo, { workspaceDir: ws, stateDir: state, scope: "openclaw:main", logger, pollMs: 0, debounceMs: 20 });

  it("ingests MEMORY.md and daily notes once, with sources and dates", async () => {
    await writeFile(join(ws, "MEMORY.md"), "- Ana drinks tea.\n");
    await writeFile(join(ws, "memory", "2026-03-02.md"), "- Ana moved to Porto.\n");
    await writeFile(join(ws, "other.md"), "- not a memory file\n");
    const hmo = new FakeHmo();
    await make(hmo).scan();
    assert.deepEqual(hmo.texts(), ["Ana drinks tea.", "Ana moved to Porto."]);
    const all = hmo.adds.flatMap((a) => a.memories);
    assert.deepEqual(all.find((m) => m.text === "Ana moved to Porto."), {
      text: "Ana moved to Porto.",
      scope: "openclaw:main",
      sources: ["openclaw:memory/2026-03-02.md#L1"],
      time: "2026-03-02T00:00:00Z",
    });
    // Again, and from a new process: nothing is added twice.
    await make(hmo).scan();
    assert.equal(hmo.adds.length, 2);
    assert.equal((await stat(join(state, "hmo-memory-sync.json"))).mode & 0o777, 0o600);
  });

  it("follows edits: new items added, removed ones forgotten, unchanged ones kept", async () => {
    await writeFile(join(ws, "MEMORY.md"), "- Ana drinks tea.\n- Ana lives in Lisbon.\n");
    const hmo = new FakeHmo();
    const sync = make(hmo);
    await sync.scan();
    // Dreaming rewrites MEMORY.md: one entry superseded, one kept.
    await writeFile(join(ws, "MEMORY.md"), "# Facts\n\n- Ana drinks tea.\n- Ana lives in Porto.\n");
    await sync.scan();
    assert.deepEqual(hmo.texts(), ["Ana drinks tea.", "Ana lives in Porto."]);
    assert.deepEqual(hmo.deletes, [[2]]);
    // A deleted daily note takes its memories along.
    await writeFile(join(ws, "memory", "2026-03-03.md"), "- Met Rui.\n");
    await sync.scan();
    await rm(join(ws, "memory", "2026-03-03.md"));
    await sync.scan();
    assert.deepEqual(hmo.texts(), ["Ana drinks tea.", "Ana lives in Porto."]);
    const rec = JSON.parse(await readFile(join(state, "hmo-memory-sync.json"), "utf8"));
    assert.deepEqual(Object.keys(rec.files), ["MEMORY.md"]);
  });

  it("never forgets a memory hmo had before the file said it", async () => {
    const hmo = new FakeHmo();
    await hmo.add({ memories: [{ text: "Ana drinks tea." }] }); // captured from a conversation
    await writeFile(join(ws, "MEMORY.md"), "- Ana drinks tea.\n- Ana lives in Porto.\n");
    const sync = make(hmo);
    await sync.scan();
    await writeFile(join(ws, "MEMORY.md"), "");
    await sync.scan();
    assert.deepEqual(hmo.texts(), ["Ana drinks tea."]);
    assert.deepEqual(hmo.deletes, [[2]]);
  });

  it("retries after hmo was unreachable, without duplicates", async () => {
    await writeFile(join(ws, "MEMORY.md"), "- Ana drinks tea.\n");
    const hmo = new FakeHmo();
    hmo.fail = true;
    const sync = make(hmo);
    await sync.scan();
    assert.equal(warnings.length, 1);
    assert.deepEqual(hmo.texts(), []);
    hmo.fail = false;
    await sync.scan();
    await sync.scan();
    assert.deepEqual(hmo.texts(), ["Ana drinks tea."]);
    assert.equal(hmo.adds.length, 1);
  });

  it("watches the files while started", async () => {
    const hmo = new FakeHmo();
    const sync = make(hmo);
    await sync.start();
    try {
      await writeFile(join(ws, "memory", "2026-03-04.md"), "- Ana starts a new job.\n");
      for (let i = 0; i < 100 && hmo.texts().length === 0; i++) await sleep(20);
      assert.deepEqual(hmo.texts(), ["Ana starts a new job."]);
    } finally {
      await sync.stop();
    }
  });
});
