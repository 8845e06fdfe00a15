import { homedir } from "node:os";
import { join } from "node:path";

import { LIMITS } from "./schema.gen.js";

/** Plugin configuration (plugins.entries.hmo-memory.config in openclaw.json). */
export interface Config {
  /** hmo's store directory; default $HMO_DIR, else hmo under the user's data directory. */
  hmoDir: string;
  /** Base URL of hmo serve; default from <hmoDir>/serve.json. Must be loopback. */
  baseUrl?: string;
  /** Bearer token; default the contents of <hmoDir>/token. */
  token?: string;
  /** Scope of memories added and recalled; default "openclaw:<agent id>". */
  scope?: string;
  /** Inject memory context before each prompt; default true. */
  autoRecall: boolean;
  /** Remember each exchange when the agent ends; default true. */
  autoCapture: boolean;
  /** Token budget of the injected context; default 1500. */
  recallTokens: number;
  /** Timeout of one request in milliseconds; default 3000. */
  timeoutMs: number;
  /** Start "hmo serve" when it is not running; default true. */
  autoStart: boolean;
  /** The hmo executable; default "hmo" (on PATH). */
  hmoBinary: string;
  /** Keep MEMORY.md and memory/*.md of the workspace ingested as they change; default true. */
  syncMemoryFiles: boolean;
}

export const DEFAULT_RECALL_TOKENS = LIMITS.defaultContextTokens;
/** Smallest recallTokens: a smaller block holds hardly one memory. */
export const MIN_RECALL_TOKENS = 100;
export const DEFAULT_TIMEOUT_MS = 3000;

/** hmo's default store directory, as hmo computes it. */
export function defaultHmoDir(env: NodeJS.ProcessEnv = process.env, platform: string = process.platform): string {
  if (env.HMO_DIR) return env.HMO_DIR;
  const home = env.HOME ?? homedir();
  if (platform === "darwin") return join(home, "Library", "Application Support", "hmo");
  if (platform === "win32") return join(env.APPDATA ?? join(home, "AppData", "Roaming"), "hmo");
  return join(env.XDG_DATA_HOME || join(home, ".local", "share"), "hmo");
}

/** parseConfig validates raw plugin config and fills in defaults. */
export function parseConfig(raw: unknown, env: NodeJS.ProcessEnv = process.env): Config {
  const c = (raw ?? {}) as Record<string, unknown>;
  if (typeof c !== "object" || Array.isArray(c)) throw new Error("hmo-memory: config must be an object");
  const known = ["hmoDir", "baseUrl", "token", "scope", "autoRecall", "autoCapture", "recallTokens", "timeoutMs", "autoStart", "hmoBinary", "syncMemoryFiles", "dreaming"];
  for (const k of Object.keys(c)) {
    if (!known.includes(k)) throw new Error(`hmo-memory: unknown config key ${JSON.stringify(k)}`);
  }
  const str = (k: string): string | undefined => {
    const v = c[k];
    if (v === undefined) return undefined;
    if (typeof v !== "string" || v === "") throw new Error(`hmo-memory: ${k} must be a non-empty string`);
    return v;
  };
  const bool = (k: string, d: boolean): boolean => {
    const v = c[k];
    if (v === undefined) return d;
    if (typeof v !== "boolean") throw new Error(`hmo-memory: ${k} must be true or false`);
    return v;
  };
  const int = (k: string, d: number, lo: number, hi: number): number => {
    const v = c[k];
    if (v === undefined) return d;
    if (typeof v !== "number" || !Number.isInteger(v) || v < lo || v > hi) {
      throw new Error(`hmo-memory: ${k} must be an integer from ${lo} to ${hi}`);
    }
    return v;
  };
  // dreaming belongs to OpenClaw: it reads the memory-slot owner's
  // config.dreaming to run memory-core's consolidation sidecar.
  if (c.dreaming !== undefined && (typeof c.dreaming !== "object" || c.dreaming === null || Array.isArray(c.dreaming))) {
    throw new Error("hmo-memory: dreaming must be an object");
  }
  const baseUrl = str("baseUrl");
  if (baseUrl !== undefined) checkLoopback(baseUrl);
  return {
    hmoDir: str("hmoDir") ?? defaultHmoDir(env),
    baseUrl,
    token: str("token"),
    scope: str("scope"),
    autoRecall: bool("autoRecall", true),
    autoCapture: bool("autoCapture", true),
    recallTokens: int("recallTokens", DEFAULT_RECALL_TOKENS, MIN_RECALL_TOKENS, LIMITS.maxContextTokens),
    timeoutMs: int("timeoutMs", DEFAULT_TIMEOUT_MS, 100, 60000),
    autoStart: bool("autoStart", true),
    hmoBinary: str("hmoBinary") ?? "hmo",
    syncMemoryFiles: bool("syncMemoryFiles", true),
  };
}

/** checkLoopback refuses a base URL that is not http on a loopback address. */
export function checkLoopback(baseUrl: string): void {
  let u: URL;
  try {
    u = new URL(baseUrl);
  } catch {
    throw new Error(`hmo-memory: baseUrl ${JSON.stringify(baseUrl)} is not a URL`);
  }
  const host = u.hostname.replace(/^\[|\]$/g, "");
  const loopback = host === "localhost" || host === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
  if (u.protocol !== "http:" || !loopback) {
    throw new Error(`hmo-memory: baseUrl ${JSON.stringify(baseUrl)} must be http on a loopback address`);
  }
}
