import { spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

import { checkLoopback, type Config } from "./config.js";
import type * as w from "./wire.js";

/** HmoError is an error answer of hmo serve, or a failure to reach it. */
export class HmoError extends Error {
  constructor(
    message: string,
    readonly status = 0,
    readonly code = "",
  ) {
    super(message);
    this.name = "HmoError";
  }
}

interface Connection {
  baseUrl: string;
  token: string;
}

/** How long autoStart waits for a started daemon to write serve.json. */
const START_WAIT_MS = 3000;
/** A daemon the plugin starts stops after this long without a request. */
const START_IDLE = "30m";

/**
 * HmoClient calls the hmo HTTP API. It reads the address and token on
 * every call (the daemon may have restarted on another port) and, when
 * configured to, starts "hmo serve" once if it is not running.
 */
export class HmoClient {
  private started = false;

  constructor(private readonly cfg: Config) {}

  search(req: w.SearchRequest): Promise<w.SearchResponse> {
    return this.call("POST", "/v1/search", req);
  }
  get(req: w.GetRequest): Promise<w.GetResponse> {
    return this.call("POST", "/v1/get", req);
  }
  add(req: w.AddRequest): Promise<w.AddResponse> {
    return this.call("POST", "/v1/add", req);
  }
  update(req: w.UpdateRequest): Promise<w.UpdateResponse> {
    return this.call("POST", "/v1/update", req);
  }
  delete(req: w.DeleteRequest): Promise<w.DeleteResponse> {
    return this.call("POST", "/v1/delete", req);
  }
  list(req: w.ListRequest): Promise<w.ListResponse> {
    return this.call("POST", "/v1/list", req);
  }
  context(req: w.ContextRequest): Promise<w.ContextResponse> {
    return this.call("POST", "/v1/context", req);
  }
  stats(): Promise<w.StatsResponse> {
    return this.call("GET", "/v1/stats");
  }

  private async call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const conn = await this.connection();
    let res: Response;
    try {
      res = await fetch(conn.baseUrl + path, {
        method,
        headers: {
          authorization: `Bearer ${conn.token}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.cfg.timeoutMs),
      });
    } catch (err) {
      throw new HmoError(`hmo serve at ${conn.baseUrl} did not answer: ${String(err)}`);
    }
    const text = await res.text();
    if (!res.ok) {
      let e: Partial<w.ErrorBody> = {};
      try {
        e = JSON.parse(text) as w.ErrorBody;
      } catch {
        // not JSON: keep the status
      }
      throw new HmoError(`${e.error ?? `hmo serve: ${res.statusText}`} (HTTP ${res.status})`, res.status, e.code ?? "");
    }
    return JSON.parse(text) as T;
  }

  private async connection(): Promise<Connection> {
    const token = this.cfg.token ?? (await readTrimmed(join(this.cfg.hmoDir, "token"))) ?? "";
    if (this.cfg.baseUrl !== undefined) return { baseUrl: this.cfg.baseUrl.replace(/\/$/, ""), token };
    let addr = await serveAddr(this.cfg.hmoDir);
    if (addr === undefined && this.cfg.autoStart && !this.started) {
      this.started = true;
      addr = await this.start();
    }
    if (addr === undefined) {
      throw new HmoError(`hmo serve is not running (no ${join(this.cfg.hmoDir, "serve.json")}); start it with "hmo serve"`);
    }
    const baseUrl = `http://${addr}`;
    checkLoopback(baseUrl);
    // A daemon started just now wrote its token too.
    return { baseUrl, token: this.cfg.token ?? (await readTrimmed(join(this.cfg.hmoDir, "token"))) ?? token };
  }

  /** start runs "hmo serve" detached and waits for its address. */
  private async start(): Promise<string | undefined> {
    try {
      const child = spawn(this.cfg.hmoBinary, ["serve", "--idle", START_IDLE], {
        detached: true,
        stdio: "ignore",
        env: { ...process.env, HMO_DIR: this.cfg.hmoDir },
      });
      child.on("error", () => {}); // a missing binary is reported as "not running"
      child.unref();
    } catch {
      return undefined;
    }
    for (let waited = 0; waited < START_WAIT_MS; waited += 100) {
      await sleep(100);
      const addr = await serveAddr(this.cfg.hmoDir);
      if (addr !== undefined) return addr;
    }
    return undefined;
  }
}

async function readTrimmed(path: string): Promise<string | undefined> {
  try {
    return (await readFile(path, "utf8")).trim();
  } catch {
    return undefined;
  }
}

/** serveAddr reads the daemon's address from <dir>/serve.json. */
async function serveAddr(dir: string): Promise<string | undefined> {
  const s = await readTrimmed(join(dir, "serve.json"));
  if (s === undefined) return undefined;
  try {
    const v = JSON.parse(s) as { addr?: unknown };
    return typeof v.addr === "string" && v.addr !== "" ? v.addr : undefined;
  } catch {
    return undefined;
  }
}
