// End-to-end test of `hmo mcp` driven by the official TypeScript MCP client.
// Environment: HMO_BIN (the hmo binary), HMO_E2E_DIR (an empty store directory).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import Ajv2020 from 'ajv/dist/2020.js';

const bin = process.env.HMO_BIN;
const dir = process.env.HMO_E2E_DIR;
assert.ok(bin && dir, 'HMO_BIN and HMO_E2E_DIR must be set');

const client = new Client({ name: 'hmo-e2e', version: '1.0.0' });
const transport = new StdioClientTransport({ command: bin, args: ['mcp', '--dir', dir], stderr: 'inherit' });
const ajv = new Ajv2020({ strict: false, allErrors: true });
const validators = new Map();

after(async () => {
  await client.close();
  // The MCP server started the daemon on demand: stop it.
  execFileSync(bin, ['serve', '--stop', '--dir', dir], { stdio: 'inherit' });
});

// call invokes a tool, checks its structured result against the tool's
// declared output schema, and returns it.
async function call(name, args) {
  const res = await client.callTool({ name, arguments: args });
  assert.ok(!res.isError, `${name} failed: ${JSON.stringify(res.content)}`);
  const validate = validators.get(name);
  assert.ok(res.structuredContent, `${name}: no structured content`);
  assert.ok(validate(res.structuredContent), `${name}: output does not match its schema: ${ajv.errorsText(validate.errors)}`);
  // The text content carries the same JSON, for clients without structured output.
  assert.deepEqual(JSON.parse(res.content[0].text), res.structuredContent);
  // Far under the 25,000-token limit of agent hosts (4 bytes a token is generous).
  assert.ok(JSON.stringify(res).length / 4 < 25000, `${name}: response too large`);
  return res.structuredContent;
}

test('initialize and list tools', async () => {
  await client.connect(transport);
  assert.equal(client.getServerVersion().name, 'hmo');
  assert.match(client.getInstructions() ?? '', /long-term memory/);
  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name).sort();
  assert.deepEqual(names, ['memory_add', 'memory_context', 'memory_delete', 'memory_get', 'memory_list', 'memory_search', 'memory_stats', 'memory_update']);
  for (const t of tools) {
    assert.ok(t.description.length > 40, `${t.name}: description too short`);
    assert.equal(t.inputSchema.type, 'object');
    assert.ok(t.outputSchema, `${t.name}: no output schema`);
    validators.set(t.name, ajv.compile(t.outputSchema));
  }
});

const ids = [];

test('add and search', async () => {
  const facts = [
    'The user prefers tabs over spaces in Go code',
    'The staging database runs on port 5433',
    'Deploys happen on Tuesdays after the standup',
  ];
  for (const text of facts) {
    const out = await call('memory_add', { text, scope: 'proj', role: 'user' });
    assert.equal(out.ids.length, 1);
    ids.push(out.ids[0]);
  }
  for (let i = 0; i < 22; i++) {
    const out = await call('memory_add', { text: `journal entry ${i}: worked on the parser`, scope: 'proj', time: `2024-01-${String(i + 1).padStart(2, '0')}` });
    ids.push(out.ids[0]);
  }
  const found = await call('memory_search', { query: 'which port does the staging database use', scope: 'proj', k: 3 });
  assert.ok(found.results.length >= 1 && found.results.length <= 3);
  // Memories of one scope without a session form one chain, and each is
  // indexed with the one before it as context: the fact and its successor
  // can both match.
  assert.ok(found.results.slice(0, 2).some((m) => m.id === ids[1]), `fact not in the top 2: ${JSON.stringify(found.results)}`);
  // The default relevance floor drops the unrelated journal entries.
  assert.ok(found.results.every((m) => !m.text.startsWith('journal entry')), `unrelated memories above the floor: ${JSON.stringify(found.results)}`);
  // Without a floor every memory of the scope ranks, so there are pages.
  const all = await call('memory_search', { query: 'which port does the staging database use', scope: 'proj', k: 3, min_score: -1 });
  assert.equal(all.results.length, 3);
  assert.ok(all.next_cursor, 'a first page of 3 has a next cursor');
  const page2 = await call('memory_search', { query: 'which port does the staging database use', scope: 'proj', k: 3, min_score: -1, cursor: all.next_cursor });
  const first = new Set(all.results.map((m) => m.id));
  assert.ok(page2.results.length > 0 && page2.results.every((m) => !first.has(m.id)), 'pages do not repeat');
});

test('context', async () => {
  const out = await call('memory_context', { prompt: 'when do we deploy?', scope: 'proj', max_tokens: 300 });
  assert.match(out.context, /Tuesdays/);
  assert.ok(out.tokens <= 300 && out.ids.includes(ids[2]));
});

test('update keeps history', async () => {
  const out = await call('memory_update', { id: ids[1], text: 'The staging database moved to port 6543' });
  assert.equal(out.supersedes, ids[1]);
  const got = await call('memory_get', { ids: [out.id], history: true });
  assert.equal(got.memories[0].text, 'The staging database moved to port 6543');
  assert.equal(got.history[0].id, ids[1]);
  assert.equal(got.history[0].superseded_by, out.id);
  const found = await call('memory_search', { query: 'staging database port', scope: 'proj', k: 5 });
  assert.ok(!found.results.some((m) => m.id === ids[1]), 'the old version is not searchable');
  ids[1] = out.id;
});

test('delete', async () => {
  const out = await call('memory_delete', { ids: [ids[0], 999999] });
  assert.equal(out.deleted, 1);
  assert.deepEqual(out.missing, [999999]);
  const got = await call('memory_get', { ids: [ids[0]] });
  assert.deepEqual(got.missing, [ids[0]]);
});

test('page through a list', async () => {
  const seen = [];
  let cursor;
  let pages = 0;
  do {
    const out = await call('memory_list', { scope: 'proj', limit: 10, ...(cursor ? { cursor } : {}) });
    seen.push(...out.memories.map((m) => m.id));
    cursor = out.next_cursor;
    pages++;
  } while (cursor && pages < 10);
  assert.equal(pages, 3);
  assert.equal(seen.length, 24);
  assert.equal(new Set(seen).size, 24);
  const times = [];
  // Timeline order: event times never go backwards.
  const got = await call('memory_get', { ids: seen.slice(0, 22) });
  for (const m of got.memories) times.push(Date.parse(m.time));
  for (let i = 1; i < times.length; i++) assert.ok(times[i] >= times[i - 1]);
});

test('errors are tool errors', async () => {
  const res = await client.callTool({ name: 'memory_update', arguments: { id: 424242, text: 'x' } });
  assert.equal(res.isError, true);
  assert.match(res.content[0].text, /not found/);
  const bad = await client.callTool({ name: 'memory_search', arguments: { query: 'x', k: 500 } });
  assert.equal(bad.isError, true);
  const stats = await call('memory_stats', {});
  assert.equal(stats.records, 24);
});
