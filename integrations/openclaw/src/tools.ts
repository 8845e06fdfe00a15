import type { HmoClient } from "./client.js";
import type { Config } from "./config.js";
import { memoryList } from "./format.js";
import type { AgentTool, JsonSchema, ToolResult } from "./openclaw.js";
import { REQUEST_SCHEMAS, type RequestName } from "./schema.gen.js";

/**
 * TOOL_NAMES are the tools the plugin registers (contracts.tools). They
 * differ from memory-core's memory_search and memory_get: OpenClaw keeps
 * memory-core loaded beside the memory-slot owner as the dreaming sidecar
 * (it curates MEMORY.md), with its file-search tools, so equal names would
 * conflict. The recall, store and forget names are the ones the SDK's own
 * external memory plugin (memory-lancedb) uses; Active Memory knows
 * memory_recall.
 */
export const TOOL_NAMES = [
  "memory_recall",
  "memory_fetch",
  "memory_store",
  "memory_update",
  "memory_forget",
  "memory_list",
  "memory_context",
  "memory_stats",
] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

/** RECALL_TOOL is the deterministic recall tool of the memory capability. */
export const RECALL_TOOL: ToolName = "memory_recall";

/**
 * params builds a tool's parameter schema from the request schema hmo's Go
 * code generates (schema.gen.ts): the fields in keys, with the limits of
 * the Go side, and descriptions for the model.
 */
export function params(request: RequestName, keys: Record<string, string>, required: string[] = []): JsonSchema {
  const src = REQUEST_SCHEMAS[request] as { properties: Record<string, JsonSchema> };
  const properties: Record<string, JsonSchema> = {};
  for (const [k, description] of Object.entries(keys)) {
    const p = src.properties[k] ?? (REQUEST_SCHEMAS.add.properties.memories.items.properties as Record<string, JsonSchema>)[k];
    if (!p) throw new Error(`hmo-memory: ${request} has no field ${k}`);
    properties[k] = { ...structuredClone(p), description };
  }
  return { type: "object", properties, required, additionalProperties: false };
}

function withoutDefault(schema: JsonSchema, key: string): JsonSchema {
  delete ((schema.properties as Record<string, JsonSchema>)[key] as JsonSchema).default;
  return schema;
}

function result(text: string, details: unknown): ToolResult {
  return { content: [{ type: "text", text }], details };
}

type Params = Record<string, unknown>;

/** pick keeps the defined keys of p, so stray arguments never reach hmo. */
function pick(p: Params, keys: string[]): Params {
  const out: Params = {};
  for (const k of keys) if (p[k] !== undefined) out[k] = p[k];
  return out;
}

/** tools builds the memory tools over client; scope is the default scope. */
export function tools(client: HmoClient, cfg: Config, scope: string): AgentTool[] {
  const scopeOf = (p: Params): string => (typeof p.scope === "string" && p.scope !== "" ? p.scope : scope);
  const def = (
    name: ToolName,
    label: string,
    description: string,
    parameters: JsonSchema,
    run: (p: Params) => Promise<ToolResult>,
  ): AgentTool => ({
    name,
    label,
    description,
    parameters,
    execute: async (_id, params) => run((params ?? {}) as Params),
  });
  return [
    def(
      "memory_recall",
      "Memory Recall",
      "Search long-term memory (hmo) for what was said or decided before: preferences, facts, decisions, past work. Returns the best matches first, paged; pass next_cursor back as cursor for more. Ids can be passed to memory_fetch.",
      params(
        "search",
        {
          query: "What to look for, in plain words",
          k: "Results per page (default 10)",
          scope: "Scope to search (default: this agent's)",
          from: "Only memories at or after this time (RFC 3339)",
          to: "Only memories before this time (RFC 3339)",
          max_tokens: "Cap on the page's text (default 4000)",
          cursor: "next_cursor of the previous page",
        },
        ["query"],
      ),
      async (p) => {
        const res = await client.search({
          ...pick(p, ["k", "from", "to", "max_tokens", "cursor"]),
          query: String(p.query),
          scope: scopeOf(p),
        });
        const more = res.next_cursor ? `\n(more: cursor ${res.next_cursor})` : "";
        return result(memoryList(res.results, "No matching memories.") + more, res);
      },
    ),
    def(
      "memory_fetch",
      "Memory Fetch",
      "Fetch memories by id (the #numbers memory_recall shows); with history, also their older versions.",
      params("get", { ids: "Memory ids", history: "Include superseded versions" }, ["ids"]),
      async (p) => {
        const res = await client.get(pick(p, ["ids", "history"]) as { ids: number[] });
        const missing = res.missing?.length ? `\nMissing: ${res.missing.join(", ")}` : "";
        return result(memoryList([...(res.memories ?? []), ...(res.history ?? [])], "Not found.") + missing, res);
      },
    ),
    def(
      "memory_store",
      "Memory Store",
      "Remember something for later sessions: a fact, preference or decision, stated on its own so it makes sense out of context.",
      params("add", { text: "What to remember (at most 64 KiB)", scope: "Scope (default: this agent's)", role: "Who said it, e.g. user" }, ["text"]),
      async (p) => {
        const res = await client.add({
          memories: [{ text: String(p.text), scope: scopeOf(p), ...(typeof p.role === "string" ? { role: p.role } : {}) }],
        });
        return result(`Remembered as #${(res.ids ?? []).join(", #")}.`, res);
      },
    ),
    def(
      "memory_update",
      "Memory Update",
      "Correct a memory: the new text supersedes it, and the old version stays as history.",
      params("update", { id: "The memory to correct", text: "The corrected text" }, ["id", "text"]),
      async (p) => {
        const res = await client.update(pick(p, ["id", "text"]) as { id: number; text: string });
        return result(`#${res.supersedes} is now #${res.id}.`, res);
      },
    ),
    def(
      "memory_forget",
      "Memory Forget",
      "Delete memories and their history for good.",
      params("delete", { ids: "Memory ids" }, ["ids"]),
      async (p) => {
        const res = await client.delete(pick(p, ["ids"]) as { ids: number[] });
        const missing = res.missing?.length ? ` Missing: ${res.missing.join(", ")}.` : "";
        return result(`Deleted ${res.deleted}.${missing}`, res);
      },
    ),
    def(
      "memory_list",
      "Memory List",
      "List memories in time order (newest first with reverse), paged; pass next_cursor back as cursor for more.",
      params("list", {
        scope: "Scope (default: this agent's)",
        from: "At or after this time (RFC 3339)",
        to: "Before this time (RFC 3339)",
        limit: "Page size (default 20)",
        reverse: "Newest first",
        cursor: "next_cursor of the previous page",
      }),
      async (p) => {
        const res = await client.list({ ...pick(p, ["from", "to", "limit", "reverse", "cursor"]), scope: scopeOf(p) });
        const more = res.next_cursor ? `\n(more: cursor ${res.next_cursor})` : "";
        return result(memoryList(res.memories, "No memories.") + more, res);
      },
    ),
    def(
      "memory_context",
      "Memory Context",
      "Get a block of relevant memory for a task or question, within a token budget.",
      withoutDefault(
        params(
          "context",
          { prompt: "The task or question", scope: "Scope (default: this agent's)", max_tokens: `Budget (default ${cfg.recallTokens})` },
          ["prompt"],
        ),
        "max_tokens", // the plugin's default is recallTokens
      ),
      async (p) => {
        const res = await client.context({
          prompt: String(p.prompt),
          scope: scopeOf(p),
          max_tokens: typeof p.max_tokens === "number" ? p.max_tokens : cfg.recallTokens,
        });
        return result(res.context || "No relevant memories.", res);
      },
    ),
    def("memory_stats", "Memory Stats", "Describe the memory store: record counts, tiers, sizes.", params("stats", {}), async () => {
      const res = await client.stats();
      return result(JSON.stringify(res, null, 2), res);
    }),
  ];
}
