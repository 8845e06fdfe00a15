/**
 * hmo memory plugin for OpenClaw: long-term memory kept on this machine by
 * hmo (github.com/hmo-dev/hmo), reached over loopback through "hmo serve".
 * It registers the memory tools, injects relevant memory before each
 * prompt is built, and remembers each exchange when the agent ends.
 */
import { HmoClient } from "./client.js";
import { parseConfig } from "./config.js";
import { frameContext, messageText } from "./format.js";
import type { AgentEndEvent, HookContext, OpenClawPlugin, OpenClawPluginApi } from "./openclaw.js";
import { tools } from "./tools.js";
import type { NewMemory } from "./wire.js";

export { HmoClient, HmoError } from "./client.js";
export { parseConfig, type Config } from "./config.js";
export { TOOL_NAMES } from "./tools.js";

/** Prompts shorter than this are not worth a recall. */
const MIN_RECALL_CHARS = 5;
/** Longest text captured from one message, in characters. */
const MAX_CAPTURE_CHARS = 16000;

const plugin: OpenClawPlugin = {
  id: "hmo-memory",
  name: "hmo memory",
  description: "On-device long-term memory (hmo): memory tools, recall before each prompt, capture at agent end.",
  kind: "memory",
  register(api: OpenClawPluginApi): void {
    const cfg = parseConfig(api.pluginConfig);
    const client = new HmoClient(cfg);
    const scopeFor = (ctx: HookContext): string => cfg.scope ?? `openclaw:${ctx.agentId ?? "main"}`;
    for (const t of tools(client, cfg, scopeFor({}))) api.registerTool(t, { name: t.name });

    if (cfg.autoRecall) {
      api.on("before_prompt_build", async (event, ctx) => {
        if (!event.prompt || event.prompt.trim().length < MIN_RECALL_CHARS) return;
        try {
          const res = await client.context({ prompt: event.prompt, scope: scopeFor(ctx), max_tokens: cfg.recallTokens });
          if (res.context.trim() === "") return;
          return { prependContext: frameContext(res.context) };
        } catch (err) {
          api.logger.warn(`hmo-memory: recall failed: ${String(err)}`);
          return;
        }
      });
    }

    if (cfg.autoCapture) {
      api.on("agent_end", async (event, ctx) => {
        const memories = lastExchange(event, scopeFor(ctx), ctx.sessionKey ?? ctx.sessionId);
        if (memories.length === 0) return;
        try {
          await client.add({ memories });
        } catch (err) {
          api.logger.warn(`hmo-memory: capture failed: ${String(err)}`);
        }
      });
    }
  },
};

/**
 * lastExchange returns the last user message of a successful run and the
 * assistant text after it, without injected memory context.
 */
export function lastExchange(event: AgentEndEvent, scope: string, session?: string): NewMemory[] {
  if (event.success === false || !event.messages) return [];
  const msgs = event.messages.map(messageText);
  let start = -1;
  for (let i = msgs.length - 1; i >= 0; i--) {
    if (msgs[i]?.role === "user" && msgs[i]?.text !== "") {
      start = i;
      break;
    }
  }
  if (start < 0) return [];
  const out: NewMemory[] = [];
  const now = new Date().toISOString();
  for (const m of msgs.slice(start)) {
    if (!m || m.text === "" || (m.role !== "user" && m.role !== "assistant")) continue;
    out.push({
      text: m.text.slice(0, MAX_CAPTURE_CHARS),
      scope,
      role: m.role,
      time: now,
      ...(session ? { session } : {}),
    });
  }
  return out;
}

export default plugin;
