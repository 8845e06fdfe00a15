import assert from "node:assert/strict";
import { chmod, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, afterEach, before, beforeEach, describe, it } from "node:test";

import plugin, { HmoError, lastExchange, parseConfig, RECALL_TOOL, requestText, TOOL_NAMES } from "../src/index.js";
import { FRAME_HEADER } from "../src/format.js";
import type {
  AgentEndEvent,
  AgentTool,
  BeforePromptBuildEvent,
  HookContext,
  MemoryPluginCapability,
  OpenClawPluginApi,
  PluginService,
  PromptBuildResult,
  ToolAuthority,
} from "../src/openclaw.js";
import { CONTEXT_HEADER, LIMITS, REQUEST_SCHEMAS } from "../src/schema.gen.js";

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
  context = "- Ana drinks tea.";
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
      "/v1/context": { context: this.context, ids: [7], tokens: 5 },
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
  recallOpts?: unknown;
  capture?: (e: AgentEndEvent, c: HookContext) => Promise<void>;
  capabilities: MemoryPluginCapability[] = [];
  services: PluginService[] = [];
  logger = { info: () => {}, warn: (m: string) => void this.warnings.push(m) };
  constructor(readonly pluginConfig: unknown) {}
  registerTool(tool: AgentTool): void {
    assert.ok(!this.tools.has(tool.name), `tool ${tool.name} registered twice`);
    this.tools.set(tool.name, tool);
  }
  registerMemoryCapability(c: MemoryPluginCapability): void {
    this.capabilities.push(c);
  }
  registerService(s: PluginService): void {
    this.services.push(s);
  }
  on(hook: "before_prompt_build" | "agent_end", handler: unknown, opts?: unknown): void {
    if (hook === "before_prompt_build") {
      this.recall = handler as FakeApi["recall"];
      this.recallOpts = opts;
    } else this.capture = handler as FakeApi["capture"];
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
  mock.context = "- Ana drinks tea.";
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

/** memory-core's tools: OpenClaw keeps it loaded beside the slot owner (dreaming sidecar). */
const MEMORY_CORE_TOOLS = ["memory_search", "memory_get", "intent"];

describe("manifest and package", () => {
  const json = async (f: string) => JSON.parse(await readFile(new URL(`../../${f}`, import.meta.url), "utf8"));

  it("declares a memory plugin owning exactly the registered tools, none of memory-core's", async () => {
    const manifest = await json("openclaw.plugin.json");
    assert.equal(manifest.kind, "memory");
    assert.deepEqual(manifest.categories, ["memory"]);
    assert.equal(manifest.id, plugin.id);
    assert.equal(plugin.kind, "memory");
    assert.deepEqual(manifest.contracts.tools, [...TOOL_NAMES]);
    assert.deepEqual([...load().tools.keys()].sort(), [...TOOL_NAMES].sort());
    for (const t of MEMORY_CORE_TOOLS) assert.ok(!(TOOL_NAMES as readonly string[]).includes(t), `${t} would conflict with memory-core`);
    // Every key the schema allows is one parseConfig accepts, and back.
    const keys = Object.keys(manifest.configSchema.properties);
    const cfg = {} as Record<string, unknown>;
    const sample: Record<string, unknown> = { boolean: true, integer: 1000, object: { enabled: false } };
    for (const k of keys) cfg[k] = sample[manifest.configSchema.properties[k].type] ?? (k === "baseUrl" ? "http://127.0.0.1:1" : "x");
    assert.doesNotThrow(() => parseConfig(cfg));
    assert.throws(() => parseConfig({ ...cfg, extra: 1 }), /unknown config key/);
    assert.equal(manifest.configSchema.properties.recallTokens.maximum, LIMITS.maxContextTokens);
  });

  it("carries OpenClaw's packaging fields", async () => {
    const pkg = await json("package.json");
    const manifest = await json("openclaw.plugin.json");
    assert.deepEqual(pkg.openclaw.extensions, ["./dist/src/index.js"]);
    assert.match(pkg.openclaw.compat.pluginApi, /^>=\d{4}\.\d+\.\d+/);
    assert.match(pkg.openclaw.compat.minGatewayVersion, /^\d{4}\.\d+\.\d+/);
    assert.match(pkg.openclaw.build.openclawVersion, /^\d{4}\.\d+\.\d+/);
    assert.equal(pkg.openclaw.build.pluginSdkVersion, pkg.openclaw.build.openclawVersion);
    assert.equal(pkg.peerDependencies.openclaw, pkg.openclaw.compat.pluginApi);
    // Optional, so npm ci here does not pull OpenClaw (650 MB, node 24) in.
    assert.equal(pkg.peerDependenciesMeta.openclaw.optional, true);
    assert.equal(pkg.version, manifest.version ?? pkg.version);
  });
});

describe("memory capability", () => {
  it("is registered once, with the recall tool, a prompt section and no flush turn", () => {
    const api = load();
    assert.equal(api.capabilities.length, 1);
    const c = api.capabilities[0]!;
    assert.equal(c.deterministicRecallToolName, RECALL_TOOL);
    assert.ok(api.tools.has(RECALL_TOOL));
    assert.equal(c.flushPlanResolver!({}), null);
    const all = c.promptBuilder!({ availableTools: new Set(TOOL_NAMES) }).join("\n");
    assert.match(all, /memory_recall/);
    assert.match(all, /memory_fetch/);
    assert.match(all, /memory_store/);
    assert.doesNotMatch(all, /memory_search|memory_get\b/);
    assert.deepEqual(c.promptBuilder!({ availableTools: new Set(["read"]) }), []);
    const recallOnly = c.promptBuilder!({ availableTools: new Set([RECALL_TOOL]) }).join("\n");
    assert.doesNotMatch(recallOnly, /memory_store|memory_fetch/);
  });
});

describe("tool schemas come from hmo's Go types", () => {
  it("carry the Go limits (ids maxItems, max_tokens minimum, k range)", () => {
    const api = load();
    const prop = (tool: string, p: string) => (api.tool(tool).parameters.properties as Record<string, Record<string, unknown>>)[p]!;
    assert.equal(prop("memory_fetch", "ids").maxItems, LIMITS.maxGetIds);
    assert.equal(prop("memory_fetch", "ids").maxItems, REQUEST_SCHEMAS.get.properties.ids.maxItems);
    assert.equal(prop("memory_forget", "ids").maxItems, LIMITS.maxDeleteIds);
    assert.equal(prop("memory_recall", "max_tokens").minimum, 1);
    assert.equal(prop("memory_recall", "k").minimum, 1);
    assert.equal(prop("memory_recall", "k").maximum, LIMITS.maxSearchK);
    assert.equal(prop("memory_context", "max_tokens").maximum, LIMITS.maxContextTokens);
    assert.equal(prop("memory_context", "max_tokens").default, undefined);
    assert.equal(prop("memory_list", "limit").maximum, LIMITS.maxListSize);
    for (const t of api.tools.values()) {
      assert.equal(t.parameters.additionalProperties, false, t.name);
      for (const [k, p] of Object.entries(t.parameters.properties as Record<string, Record<string, unknown>>)) {
        assert.equal(typeof p.type, "string", `${t.name}.${k} has one plain type`);
        assert.ok(p.description, `${t.name}.${k} has a description`);
      }
    }
  });
});

describe("tools", () => {
  const cases: Array<{ tool: string; params: Record<string, unknown>; method: string; path: string; body: unknown; text: RegExp }> = [
    {
      tool: "memory_recall",
      params: { query: "tea", k: 5, from: "2026-01-01T00:00:00Z", stray: "dropped" },
      method: "POST",
      path: "/v1/search",
      body: { k: 5, from: "2026-01-01T00:00:00Z", query: "tea", scope: "openclaw:main" },
      text: /#7 \[2026-03-02, openclaw:main, user\] Ana drinks tea\.\n\(more: cursor c2\)/,
    },
    { tool: "memory_fetch", params: { ids: [7, 99], history: true }, method: "POST", path: "/v1/get", body: { ids: [7, 99], history: true }, text: /Missing: 99/ },
    {
      tool: "memory_store",
      params: { text: "Ana moved to Porto.", scope: "ana" },
      method: "POST",
      path: "/v1/add",
      body: { memories: [{ text: "Ana moved to Porto.", scope: "ana" }] },
      text: /Remembered as #8/,
    },
    { tool: "memory_update", params: { id: 7, text: "Ana drinks green tea." }, method: "POST", path: "/v1/update", body: { id: 7, text: "Ana drinks green tea." }, text: /#7 is now #9/ },
    { tool: "memory_forget", params: { ids: [7] }, method: "POST", path: "/v1/delete", body: { ids: [7] }, text: /Deleted 1/ },
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
    await assert.rejects(load().tool("memory_recall").execute("c", { query: "x" }), (err: unknown) => {
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

/** A turn's tool authority as OpenClaw gives it to requiresToolAuthority handlers. */
function authority(allowed: string[], active = () => true): ToolAuthority {
  return {
    fingerprint: "f",
    allows: (t) => active() && allowed.includes(t),
    assertActive: () => {
      if (!active()) throw new Error("turn over");
    },
  };
}

describe("recall before prompt build", () => {
  const turn = (agentId?: string): HookContext => ({ ...(agentId ? { agentId } : {}), toolAuthority: authority([...TOOL_NAMES]) });

  it("runs after the tool policy is final (requiresToolAuthority)", () => {
    assert.deepEqual(load().recallOpts, { requiresToolAuthority: true });
  });

  it("prepends framed context for the agent's scope, under one header", async () => {
    const api = load();
    const out = await api.recall!({ prompt: "what does Ana drink?" }, turn("agent7"));
    assert.deepEqual(mock.seen[0]!.body, { prompt: "what does Ana drink?", scope: "openclaw:agent7", max_tokens: 1500 });
    assert.equal(mock.seen[0]!.path, "/v1/context");
    assert.ok(out && out.prependContext);
    assert.equal(out.prependContext, `<hmo-memory>\n${FRAME_HEADER}\n- Ana drinks tea.\n</hmo-memory>`);
  });

  it("drops hmo's own header: the block has one header", async () => {
    mock.context = `${CONTEXT_HEADER}\n- [#7 2026-03-02 user] Ana drinks tea.\n`;
    const out = await load().recall!({ prompt: "what does Ana drink?" }, turn());
    assert.ok(out && out.prependContext);
    assert.ok(!out.prependContext.includes(CONTEXT_HEADER), out.prependContext);
    assert.equal(out.prependContext.split("Memories from earlier conversations").length, 2);
    assert.match(out.prependContext, /\n- \[#7 2026-03-02 user\] Ana drinks tea\.\n<\/hmo-memory>$/);
  });

  it("recalls for the current request, not the reconstructed prompt", async () => {
    const api = load();
    await api.recall!({ prompt: "[history] old talk about Lisbon\nwhat does Ana drink?", currentUserMessage: "what does Ana drink?" }, turn());
    assert.equal((mock.seen[0]!.body as { prompt: string }).prompt, "what does Ana drink?");
    // An empty current request means no textual request: no fallback to the prompt.
    assert.equal(await api.recall!({ prompt: "a long prompt with history", currentUserMessage: "" }, turn()), undefined);
    assert.equal(mock.seen.length, 1);
    assert.equal(requestText({ prompt: "legacy harness prompt" }), "legacy harness prompt");
  });

  it("recalls only where the turn may call the recall tool", async () => {
    const api = load();
    assert.equal(await api.recall!({ prompt: "what does Ana drink?" }, {}), undefined);
    assert.equal(await api.recall!({ prompt: "what does Ana drink?" }, { toolAuthority: authority(["memory_stats"]) }), undefined);
    assert.equal(mock.seen.length, 0);
    let live = true;
    const late = api.recall!({ prompt: "what does Ana drink?" }, { toolAuthority: authority([RECALL_TOOL], () => live) });
    live = false; // the turn ends while hmo answers
    assert.equal(await late, undefined);
  });

  it("skips short prompts and fails open", async () => {
    const api = load({ recallTokens: 300 });
    assert.equal(await api.recall!({ prompt: "hi" }, turn()), undefined);
    assert.equal(mock.seen.length, 0);
    mock.fail = true;
    assert.equal(await api.recall!({ prompt: "what does Ana drink?" }, turn()), undefined);
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
