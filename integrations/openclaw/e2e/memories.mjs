// Waits until the hmo store serves exactly the given memories, with the
// sources the OpenClaw plugin gives file items:
//   node memories.mjs STORE_DIR TIMEOUT_SECONDS TEXT...
import { readFileSync } from "node:fs";
import { join } from "node:path";

const [dir, timeout, ...want] = process.argv.slice(2);
const deadline = Date.now() + Number(timeout) * 1000;
let last = "";
while (Date.now() < deadline) {
  try {
    const { addr } = JSON.parse(readFileSync(join(dir, "serve.json"), "utf8"));
    const token = readFileSync(join(dir, "token"), "utf8").trim();
    const res = await fetch(`http://${addr}/v1/list`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: JSON.stringify({ limit: 100 }),
    });
    const { memories } = await res.json();
    const got = memories.map((m) => m.text).sort();
    last = JSON.stringify(memories.map((m) => [m.text, m.scope, m.sources]));
    const ok =
      JSON.stringify(got) === JSON.stringify([...want].sort()) &&
      memories.every((m) => m.scope === "openclaw:main" && /^openclaw:(MEMORY\.md|memory\/.+\.md)#L\d+$/.test(m.sources?.[0] ?? ""));
    if (ok) {
      console.log(`openclaw-e2e: hmo holds ${last}`);
      process.exit(0);
    }
  } catch {
    // hmo serve not up yet
  }
  await new Promise((r) => setTimeout(r, 500));
}
console.error(`openclaw-e2e: want ${JSON.stringify(want)}, hmo holds ${last}`);
process.exit(1);
