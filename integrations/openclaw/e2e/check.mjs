// Checks OpenClaw's own listings after the plugin was installed (run.sh):
//   node check.mjs beside|alone MANIFEST INSPECT_JSON [STATUS_JSON DOCTOR_JSON]
// "beside": memory-core is loaded too (the dreaming sidecar); "alone": it is not.
import { readFileSync } from "node:fs";

const [mode, manifestPath, inspectPath, statusPath, doctorPath] = process.argv.slice(2);
const read = (p) => JSON.parse(readFileSync(p, "utf8"));
const manifest = read(manifestPath);
const plugins = read(inspectPath).map((x) => ({ ...x.plugin, diagnostics: x.diagnostics ?? [], typedHooks: x.typedHooks ?? [], services: x.services ?? [] }));
const failures = [];
const check = (ok, msg) => ok || failures.push(msg);

const loaded = plugins.filter((p) => p.status === "loaded");
const owners = new Map();
for (const p of loaded) for (const t of p.toolNames ?? []) owners.set(t, [...(owners.get(t) ?? []), p.id]);
const conflicts = [...owners].filter(([, ids]) => ids.length > 1);
for (const [t, ids] of conflicts) check(false, `tool-name conflict: ${t} registered by ${ids.join(", ")}`);
const twice = conflicts.length === 0 ? "no name twice" : `${conflicts.length} names twice`;

const hmo = plugins.find((p) => p.id === manifest.id);
check(hmo?.status === "loaded", `${manifest.id} not loaded: ${JSON.stringify(hmo?.status)}`);
check(hmo?.activationReason === "selected memory slot", `${manifest.id} activation: ${hmo?.activationReason}`);
check(JSON.stringify(hmo?.toolNames) === JSON.stringify(manifest.contracts.tools), `${manifest.id} tools ${JSON.stringify(hmo?.toolNames)}`);
for (const h of ["before_prompt_build", "agent_end"]) check(hmo?.typedHooks.some((x) => x.name === h), `hook ${h} not registered`);
check(hmo?.services.includes("hmo-memory-files"), "memory file sync service not registered");
check((hmo?.diagnostics ?? []).length === 0, `${manifest.id} diagnostics: ${JSON.stringify(hmo?.diagnostics)}`);

const core = plugins.find((p) => p.id === "memory-core");
if (mode === "beside") {
  check(core?.status === "loaded" && /sidecar.*hmo-memory/.test(core?.activationReason ?? ""), `memory-core not beside hmo: ${core?.status} ${core?.activationReason}`);
  check(core?.toolNames?.includes("memory_search"), "memory-core registered no memory_search: the conflict check would prove nothing");
  const status = read(statusPath);
  check(status.memoryPlugin?.enabled === true && status.memoryPlugin?.slot === manifest.id, `status memoryPlugin ${JSON.stringify(status.memoryPlugin)}`);
  const doctor = read(doctorPath);
  for (const d of doctor.diagnostics ?? []) {
    check(d.pluginId !== manifest.id, `doctor: ${d.message}`);
    check(!/conflict/i.test(d.message), `doctor: ${d.message}`);
  }
  check((doctor.pluginErrors ?? []).length === 0, `doctor errors: ${JSON.stringify(doctor.pluginErrors)}`);
  const others = (doctor.diagnostics ?? []).map((d) => `${d.pluginId}: ${d.message}`);
  console.log(`openclaw-e2e: beside memory-core: ${loaded.length} plugins loaded, ${owners.size} tools, ${twice}; slot ${status.memoryPlugin.slot}; memory-core ${core.activationReason} with ${JSON.stringify(core.toolNames)}`);
  if (others.length) console.log(`openclaw-e2e: doctor notes (OpenClaw's own, not hmo's): ${others.join("; ")}`);
} else {
  check(core?.status !== "loaded", `memory-core loaded with dreaming off: ${core?.activationReason}`);
  console.log(`openclaw-e2e: dreaming off: memory-core ${core?.status} (${core?.activationReason}); ${loaded.length} plugins loaded, ${twice}`);
}

if (failures.length) {
  for (const f of failures) console.error(`openclaw-e2e: FAIL: ${f}`);
  process.exit(1);
}
