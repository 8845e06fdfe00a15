import type { HmoClient } from "./client.js";
import type { Config } from "./config.js";
import { memoryList } from "./format.js";
import type { AgentTool, JsonSchema, ToolResult } from "./openclaw.js";

/** TOOL_NAMES are the tools the plugin registers (contracts.tools). */
export const TOOL_NAMES = [
  "memory_search",
  "memory_get",
  "memory_add",
  "memory_update",
  "memory_delete",
  "memory_list",
  "memory_context",
  "memory_stats",
] as const;

const ids: JsonSchema = { type: "array", items: { type: "integer", minimum: 1 }, minItems: 1, maxItems: 100 };
const time = (what: string): JsonSchema => ({ type: "string", format: "date-time", description: what });

function obj(properties: Record<string, JsonSchema>, required: string[] = []): JsonSchema {
  return { type: "object", properties, required, additionalProperties: false };
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
    name: (typeof TOOL_NAMES)[number],
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
      "memory_search",
      "Memory Search",
      "Search long-term memory (hmo) for what was said or decided before: preferences, facts, decisions, past work. Returns the best matches first, paged; pass next_cursor back as cursor for more.",
      obj({
        query: { type: "string", minLength: 1, description: "What to look for, in plain words" },
        k: { type: "integer", minimum: 1, maximum: 50, description: "Results per page (default 10)" },
        scope: { type: "string", description: "Scope to search (default: this agent's)" },
        from: time("Only memories at or after this time (RFC 3339)"),
        to: time("Only memories before this time (RFC 3339)"),
        max_tokens: { type: "integer", minimum: 100, maximum: 8000, description: "Cap on the page's text (default 4000)" },
        cursor: { type: "string", description: "next_cursor of the previous page" },
      }, ["query"]),
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
      "memory_get",
      "Memory Get",
      "Fetch memories by id; with history, also their older versions.",
      obj({ ids, history: { type: "boolean", description: "Include superseded versions" } }, ["ids"]),
      async (p) => {
        const res = await client.get(pick(p, ["ids", "history"]) as { ids: number[] });
        const missing = res.missing?.length ? `\nMissing: ${res.missing.join(", ")}` : "";
        return result(memoryList([...(res.memories ?? []), ...(res.history ?? [])], "Not found.") + missing, res);
      },
    ),
    def(
      "memory_add",
      "Memory Add",
      "Remember something for later sessions: a fact, preference or decision, stated on its own so it makes sense out of context.",
      obj({
        text: { type: "string", minLength: 1, maxLength: 65536, description: "What to remember" },
        scope: { type: "string", description: "Scope (default: this agent's)" },
        role: { type: "string", description: "Who said it, e.g. user" },
      }, ["text"]),
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
      obj({ id: { type: "integer", minimum: 1 }, text: { type: "string", minLength: 1, maxLength: 65536 } }, ["id", "text"]),
      async (p) => {
        const res = await client.update(pick(p, ["id", "text"]) as { id: number; text: string });
        return result(`#${res.supersedes} is now #${res.id}.`, res);
      },
    ),
    def(
      "memory_delete",
      "Memory Delete",
      "Delete memories and their history for good.",
      obj({ ids }, ["ids"]),
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
      obj({
        scope: { type: "string", description: "Scope (default: this agent's)" },
        from: time("At or after this time"),
        to: time("Before this time"),
        limit: { type: "integer", minimum: 1, maximum: 100, description: "Page size (default 20)" },
        reverse: { type: "boolean", description: "Newest first" },
        cursor: { type: "string" },
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
      obj({
        prompt: { type: "string", minLength: 1 },
        scope: { type: "string" },
        max_tokens: { type: "integer", minimum: 100, maximum: 8000, description: `Budget (default ${cfg.recallTokens})` },
      }, ["prompt"]),
      async (p) => {
        const res = await client.context({
          prompt: String(p.prompt),
          scope: scopeOf(p),
          max_tokens: typeof p.max_tokens === "number" ? p.max_tokens : cfg.recallTokens,
        });
        return result(res.context || "No relevant memories.", res);
      },
    ),
    def("memory_stats", "Memory Stats", "Describe the memory store: record counts, tiers, sizes.", obj({}), async () => {
      const res = await client.stats();
      return result(JSON.stringify(res, null, 2), res);
    }),
  ];
}
