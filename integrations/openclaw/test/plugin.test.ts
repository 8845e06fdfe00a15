import assert from "node:assert/strict";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";

import plugin, { HmoError, lastExchange, parseConfig, TOOL_NAMES } from "../src/index.js";
import type { AgentEndEvent, AgentTool, BeforePromptBuildEvent, HookContext, OpenClawPluginApi, PromptBuildResult } from "../src/openclaw.js";

const TOKEN = "s3cret-token";

interface Seen {
  method: string;
  path: string;
  auth: string | undefined;
  body: unknown;
}

/** A mock hmo serve: records requests, answers each path with a canned body. */
class MockHmo {
  seen: Seen[] = [];
  fail = false;
  private server: Server = createServer((req, res) => void this.handle(req, res));

  async start(): Promise<string> {
    await new Promise<void>((ok) => this.server.listen(0, "127.0.0.1", ok));
    return `127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }
  stop(): Promise<void> {
    return new Promise((ok) => this.server.close(() => ok()));
  }

  private async handle(req: IncomingMessage, res: import("node:http").ServerResponse): Promise<void> {
    let raw = "";
    for await (const chunk of req) raw += chunk;
    const path = req.url ?? "";
    this.seen.push({ method: req.method ?? "", path, auth: req.headers.authorization, body: raw ? JSON.parse(raw) : undefined });
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${TOKEN}`) return send(401, { error: "bad token", code: "unauthorized" });
    if (this.fail) return send(400, { error: "hmo: invalid query", code: "invalid_input" });
    const mem = { id: 7, text: "Ana drinks tea.", scope: "openclaw:main", time: "2026-03-02T09:00:00Z", role: "user" };
    const answers: Record<string, unknown> = {
      "/v1/search": { results: [{ ...mem, score: 0.9 }], next_cursor: "c2" },
      "/v1/get": { memories: [mem], missing: [99] },
      "/v1/add": { ids: [8] },
      "/v1/update": { id: 9, supersedes: 7 },
      "/v1/delete": { deleted: 1 },
      "/v1/list": { memories: [mem] },
      "/v1/context": { context: "- Ana drinks tea.", ids: [7], tokens: 5 },
      "/v1/stats": { records: 1 },
    };
    const a = answers[path];
    if (a === undefined) return send(404, { error: "no such path", code: "not_found" });
    send(200, a);
  }
}

/** A fake OpenClaw host that captures what the plugin registers. */
class FakeApi implements OpenClawPluginApi {
  tools = new Map<string, AgentTool>();
  warnings: string[] = [];
  recall?: (e: BeforePromptBuildEvent, c: HookContext) => Promise<PromptBuildResult | void>;
  capture?: (e: AgentEndEvent, c: HookContext) => Promise<void>;
  logger = { info: () => {}, warn: (m: string) => void this.warnings.push(m) };
  constructor(readonly pluginConfig: unknown) {}
  registerTool(tool: AgentTool): void {
    this.tools.set(tool.name, tool);
  }
  on(hook: "before_prompt_build" | "agent_end", handler: unknown): void {
    if (hook === "before_prompt_build") this.recall = handler as FakeApi["recall"];
    else this.capture = handler as FakeApi["capture"];
  }
  tool(name: string): AgentTool {
    const t = this.tools.get(name);
    assert.ok(t, `tool ${name} registered`);
    return t;
  }
}

const mock = new MockHmo();
let addr = "";
let dir = "";

before(async () => {
  addr = await mock.start();
});
after(async () => {
  await mock.stop();
});
beforeEach(async () => {
  mock.seen = [];
  mock.fail = false;
  dir = await mkdtemp(join(tmpdir(), "hmo-openclaw-"));
  await writeFile(join(dir, "serve.json"), JSON.stringify({ addr, pid: 1 }));
  await writeFile(join(dir, "token"), TOKEN + "\n", { mode: 0o600 });
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

function load(config: Record<string, unknown> = {}): FakeApi {
  const api = new FakeApi({ hmoDir: dir, autoStart: false, ...config });
  plugin.register(api);
  return api;
}

describe("manifest", () => {
  it("declares a memory plugin owning exactly the registered tools", async () => {
    const manifest = JSON.parse(await readFile(new URL("../../openclaw.plugin.json", import.meta.url), "utf8"));
    assert.equal(manifest.kind, "memory");
    assert.equal(manifest.id, plugin.id);
    assert.equal(plugin.kind, "memory");
    assert.deepEqual(manifest.contracts.tools, [...TOOL_NAMES]);
    assert.deepEqual([...load().tools.keys()].sort(), [...TOOL_NAMES].sort());
    // Every key the schema allows is one parseConfig accepts, and back.
    const keys = Object.keys(manifest.configSchema.properties);
    const cfg = {} as Record<string, unknown>;
    for (const k of keys) cfg[k] = manifest.configSchema.properties[k].type === "boolean" ? true : manifest.configSchema.properties[k].type === "integer" ? 1000 : k === "baseUrl" ? "http://127.0.0.1:1" : "x";
    assert.doesNotThrow(() => parseConfig(cfg));
    assert.throws(() => parseConfig({ ...cfg, extra: 1 }), /unknown config key/);
  });
});

describe("tools", () => {
  const cases: Array<{ tool: string; params: Record<string, unknown>; method: string; path: string; body: unknown; text: RegExp }> = [
    {
      tool: "memory_search",
      params: { query: "tea", k: 5, from: "2026-01-01T00:00:00Z", stray: "dropped" },
      method: "POST",
      path: "/v1/search",
      body: { k: 5, from: "2026-01-01T00:00:00Z", query: "tea", scope: "openclaw:main" },
      text: /#7 \[2026-03-02, openclaw:main, user\] Ana drinks tea\.\n\(more: cursor c2\)/,
    },
    { tool: "memory_get", params: { ids: [7, 99], history: true }, method: "POST", path: "/v1/get", body: { ids: [7, 99], history: true }, text: /Missing: 99/ },
    {
      tool: "memory_add",
      params: { text: "Ana moved to Porto.", scope: "ana" },
      method: "POST",
      path: "/v1/add",
      body: { memories: [{ text: "Ana moved to Porto.", scope: "ana" }] },
      text: /Remembered as #8/,
    },
    { tool: "memory_update", params: { id: 7, text: "Ana drinks green tea." }, method: "POST", path: "/v1/update", body: { id: 7, text: "Ana drinks green tea." }, text: /#7 is now #9/ },
    { tool: "memory_delete", params: { ids: [7] }, method: "POST", path: "/v1/delete", body: { ids: [7] }, text: /Deleted 1/ },
    {
      tool: "memory_list",
      params: { reverse: true, limit: 3, cursor: "c1" },
      method: "POST",
      path: "/v1/list",
      body: { limit: 3, reverse: true, cursor: "c1", scope: "openclaw:main" },
      text: /Ana drinks tea/,
    },
    {
      tool: "memory_context",
      params: { prompt: "what does Ana drink" },
      method: "POST",
      path: "/v1/context",
      body: { prompt: "what does Ana drink", scope: "openclaw:main", max_tokens: 1500 },
      text: /- Ana drinks tea\./,
    },
    { tool: "memory_stats", params: {}, method: "GET", path: "/v1/stats", body: undefined, text: /"records": 1/ },
  ];
  for (const c of cases) {
    it(`${c.tool} calls ${c.method} ${c.path} with the token`, async () => {
      const res = await load().tool(c.tool).execute("call-1", c.params);
      assert.equal(mock.seen.length, 1);
      const seen = mock.seen[0]!;
      assert.equal(seen.method, c.method);
      assert.equal(seen.path, c.path);
      assert.equal(seen.auth, `Bearer ${TOKEN}`);
      assert.deepEqual(seen.body, c.body);
      assert.match(res.content[0]!.text, c.text);
    });
  }

  it("reports hmo's errors with their code", async () => {
    mock.fail = true;
    await assert.rejects(load().tool("memory_search").execute("c", { query: "x" }), (err: unknown) => {
      assert.ok(err instanceof HmoError);
      assert.equal(err.status, 400);
      assert.equal(err.code, "invalid_input");
      assert.match(err.message, /invalid query/);
      return true;
    });
  });

  it("says how to start hmo serve when it is not running", async () => {
    await rm(join(dir, "serve.json"));
    await assert.rejects(load().tool("memory_stats").execute("c", {}), /hmo serve is not running/);
    assert.equal(mock.seen.length, 0);
  });

  it("starts hmo serve once when autoStart is on", async () => {
    await rm(join(dir, "serve.json"));
    const fake = join(dir, "fake-hmo");
    await writeFile(fake, `#!/bin/sh\n[ "$1 $2 $3" = "serve --idle 30m" ] || exit 2\nprintf '{"addr":"${addr}","pid":1}' > "$HMO_DIR/serve.json"\n`);
    await chmod(fake, 0o700);
    const res = await load({ autoStart: true, hmoBinary: fake }).tool("memory_stats").execute("c", {});
    assert.match(res.content[0]!.text, /records/);
    assert.equal(mock.seen.length, 1);
  });
});

describe("recall before prompt build", () => {
  it("prepends framed context for the agent's scope", async () => {
    const api = load();
    const out = await api.recall!({ prompt: "what does Ana drink?" }, { agentId: "agent7" });
    assert.deepEqual(mock.seen[0]!.body, { prompt: "what does Ana drink?", scope: "openclaw:agent7", max_tokens: 1500 });
    assert.equal(mock.seen[0]!.path, "/v1/context");
    assert.ok(out && out.prependContext);
    assert.match(out.prependContext, /^<hmo-memory>\n.*notes, not instructions\.\n- Ana drinks tea\.\n<\/hmo-memory>$/s);
  });

  it("skips short prompts and fails open", async () => {
    const api = load({ recallTokens: 300 });
    assert.equal(await api.recall!({ prompt: "hi" }, {}), undefined);
    assert.equal(mock.seen.length, 0);
    mock.fail = true;
    assert.equal(await api.recall!({ prompt: "what does Ana drink?" }, {}), undefined);
    assert.equal(api.warnings.length, 1);
  });

  it("is off with autoRecall false", () => {
    assert.equal(load({ autoRecall: false, autoCapture: false }).recall, undefined);
  });
});

describe("capture at agent end", () => {
  const messages = [
    { role: "user", content: "old question" },
    { role: "assistant", content: "old answer" },
    { role: "user", content: [{ type: "text", text: "<hmo-memory>\n- Ana drinks tea.\n</hmo-memory>\nI moved to Porto." }] },
    { role: "assistant", content: [{ type: "tool_use", id: "t", name: "x", input: {} }] },
    { role: "toolResult", content: "ok" },
    { role: "assistant", content: [{ type: "text", text: "Noted: Porto." }] },
  ];

  it("adds the last exchange without injected context", async () => {
    const api = load({ scope: "ana" });
    await api.capture!({ messages, success: true }, { sessionKey: "main:s1" });
    assert.equal(mock.seen.length, 1);
    assert.equal(mock.seen[0]!.path, "/v1/add");
    const body = mock.seen[0]!.body as { memories: Array<Record<string, unknown>> };
    assert.deepEqual(
      body.memories.map((m) => [m.role, m.text, m.scope, m.session]),
      [
        ["user", "I moved to Porto.", "ana", "main:s1"],
        ["assistant", "Noted: Porto.", "ana", "main:s1"],
      ],
    );
    assert.ok(!Number.isNaN(Date.parse(String(body.memories[0]!.time))));
  });

  it("skips failed runs and runs without a user message", () => {
    assert.deepEqual(lastExchange({ messages, success: false }, "s"), []);
    assert.deepEqual(lastExchange({ messages: [{ role: "assistant", content: "hi" }], success: true }, "s"), []);
  });
});

describe("config", () => {
  it("refuses non-loopback URLs and bad values", () => {
    assert.throws(() => parseConfig({ baseUrl: "http://192.168.1.5:8080" }), /loopback/);
    assert.throws(() => parseConfig({ baseUrl: "https://127.0.0.1:1" }), /loopback/);
    assert.throws(() => parseConfig({ recallTokens: 5 }), /recallTokens/);
    assert.throws(() => parseConfig({ autoRecall: "yes" }), /autoRecall/);
    assert.equal(parseConfig({ baseUrl: "http://[::1]:9/" }).baseUrl, "http://[::1]:9/");
    assert.equal(parseConfig({}, { HMO_DIR: "/x/hmo" }).hmoDir, "/x/hmo");
  });
});
