// Interop client built on the official MCP TypeScript SDK v2
// (@modelcontextprotocol/client). One run drives one protocol era over
// Streamable HTTP: initialize (2025-11-25) or server/discover (2026-07-28),
// tools/list, upload_file with an x-mcp-file data URI, list_blobs, stat_blob,
// resources/read, resources/list, resources/templates/list,
// completion/complete on the blob template (paged), a resource subscription
// (resources/subscribe, or subscriptions/listen) with its change
// notifications, and finally client.close() with the subscription still open.
// Exits 1 with the reason on the first mismatch; prints "ok …" on success.
//
// usage: node client.mjs CONFIG_JSON
//   CONFIG_JSON: {"url", "mode": "legacy"|"auto"|"2026-07-28", "want": protocol version,
//                 "prefix": key prefix for this run's uploads,
//                 "big": {"key", "sha256", "size"}, a seeded blob,
//                 "many"/"few": {"prefix", "count"}, seeded keys prefix + 4-digit index + ".txt"
//                   (many: more than one completion page of 100, few: less),
//                 "total": number of blobs stored before the run}
import { createHash, randomBytes } from "node:crypto";
import { Client, ResourceNotFoundError, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const cfg = JSON.parse(process.argv[2]);
const era = cfg.want;
const modern = era === "2026-07-28";

function fail(msg) {
  console.error(`ts2 interop (${cfg.mode}): ${msg}`);
  process.exit(1);
}
const sha = (b) => createHash("sha256").update(b).digest("hex");
const show = (v) => JSON.stringify(v)?.slice(0, 600);

// Every HTTP request the transport makes, with the headers the tests look
// at; the raw response body of requests marked with a "capture" URI (the SDK
// rewrites some error codes before the caller sees them).
const sent = [];
const captured = new Map();
const recordingFetch = async (input, init) => {
  const h = new Headers(init?.headers);
  let body;
  try {
    body = typeof init?.body === "string" ? JSON.parse(init.body) : undefined;
  } catch {}
  const req = { httpMethod: init?.method ?? "GET", rpc: body?.method, params: body?.params, headers: Object.fromEntries(h) };
  sent.push(req);
  const res = await fetch(input, init);
  req.status = res.status;
  const u = body?.params?.uri;
  if (typeof u === "string" && u.includes("capture")) captured.set(u, res.clone().text());
  return res;
};
// rpcError is the JSON-RPC error in a captured JSON or SSE response body.
async function rpcError(u) {
  const text = await captured.get(u);
  for (const line of text.split("\n")) {
    const m = JSON.parse(line.startsWith("data: ") ? line.slice(6) : line.startsWith("{") ? line : "null");
    if (m?.error) return m.error;
  }
  fail(`no JSON-RPC error in the response for ${u}: ${text.slice(0, 300)}`);
}

const negotiation = cfg.mode === "legacy" ? undefined : { mode: cfg.mode === "auto" ? "auto" : { pin: cfg.mode } };
const client = new Client({ name: "mcpblob-interop-ts2", version: "1.0.0" }, { versionNegotiation: negotiation });
const errors = [];
client.onerror = (e) => errors.push(String(e?.message ?? e));
const transport = new StreamableHTTPClientTransport(new URL(cfg.url), { fetch: recordingFetch });

// Change notifications, from the GET stream (2025-11-25) or the listen
// stream (2026-07-28): the SDK dispatches both to these handlers.
const updated = [];
let listChanged = 0;
const waiters = [];
const wake = () => waiters.splice(0).forEach((w) => w());
client.setNotificationHandler("notifications/resources/updated", (n) => {
  updated.push(n.params.uri);
  wake();
});
client.setNotificationHandler("notifications/resources/list_changed", () => {
  listChanged++;
  wake();
});
async function until(what, cond, ms = 10000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) fail(`timed out after ${ms} ms waiting for ${what} (updated: ${show(updated)}, list_changed: ${listChanged})`);
    await new Promise((resolve) => {
      waiters.push(resolve);
      setTimeout(resolve, 100);
    });
  }
}

// --- connect -----------------------------------------------------------
await client.connect(transport);
const negotiated = client.getNegotiatedProtocolVersion();
if (negotiated !== era) fail(`negotiated protocol ${negotiated}, want ${era}`);
if (client.getProtocolEra() !== (modern ? "modern" : "legacy")) fail(`protocol era ${client.getProtocolEra()}`);
const first = sent[0];
if (modern) {
  if (first.rpc !== "server/discover") fail(`first request ${first.rpc}, want server/discover`);
  if (sent.some((r) => r.rpc === "initialize")) fail("a 2026-07-28 connection sent initialize");
  if (transport.sessionId) fail(`a 2026-07-28 connection has session id ${transport.sessionId}`);
} else {
  if (cfg.mode === "legacy" && first.rpc !== "initialize") fail(`first request ${first.rpc}, want initialize`);
  if (!transport.sessionId) fail("no Mcp-Session-Id after initialize");
}
const info = client.getServerVersion();
if (info?.name !== "mcpblob") fail(`server info ${show(info)}`);
const caps = client.getServerCapabilities();
if (!caps?.resources?.subscribe || !caps?.resources?.listChanged || !caps?.completions || !caps?.tools) {
  fail(`server capabilities ${show(caps)}`);
}

// --- tools/list --------------------------------------------------------
// The SDK v2 drops (on 2026-07-28) tools whose x-mcp-header declarations it
// finds invalid; upload_file declares one on "key".
const { tools } = await client.listTools();
for (const name of ["list_blobs", "stat_blob", "delete_blob", "get_download_link", "upload_file"]) {
  const t = tools.find((t) => t.name === name);
  if (!t || !t.outputSchema) fail(`tools/list: ${name} missing or without outputSchema (got ${show(tools.map((t) => t.name))})`);
}
const up = tools.find((t) => t.name === "upload_file");
if (!up.inputSchema.properties?.file?.["x-mcp-file"]) fail(`upload_file.file without x-mcp-file: ${show(up.inputSchema)}`);
if (up.inputSchema.properties?.key?.["x-mcp-header"] !== "Blob-Key") fail(`upload_file.key without x-mcp-header: ${show(up.inputSchema)}`);

// --- subscribe before the blob exists ----------------------------------
const key = `${cfg.prefix}upload.bin`;
const uri = `blob:///${key}`;
let subscription;
if (modern) {
  subscription = await client.listen({ resourceSubscriptions: [uri], resourcesListChanged: true });
  const h = subscription.honoredFilter;
  if (!h.resourcesListChanged || !h.resourceSubscriptions?.includes(uri)) fail(`subscriptions/listen honoured ${show(h)}`);
} else {
  await client.subscribeResource({ uri });
  // Notifications go out on the GET stream the SDK opens after initialize;
  // the server subscribes it to changes before its response headers leave.
  await until("the GET stream", () => sent.some((r) => r.httpMethod === "GET" && r.status !== undefined));
  const get = sent.find((r) => r.httpMethod === "GET");
  if (get.status !== 200) fail(`GET stream: status ${get.status}`);
}

// --- upload_file (x-mcp-file data URI) ----------------------------------
async function upload(bytes, mimeType) {
  const args = { key, filename: "upload.bin", file: `data:${mimeType};base64,${bytes.toString("base64")}` };
  const r = await client.callTool({ name: "upload_file", arguments: args }, { timeout: 120000 });
  if (r.isError) fail(`upload_file isError: ${show(r.content)}`);
  const sc = r.structuredContent;
  if (sc?.key !== key || sc.uri !== uri || sc.size !== bytes.length || sc.sha256 !== sha(bytes) || sc.mimeType !== mimeType) {
    fail(`upload_file structuredContent ${show(sc)}, want ${key} ${bytes.length} bytes sha256 ${sha(bytes)} ${mimeType}`);
  }
  if (!r.content.some((c) => c.type === "resource_link" && c.uri === uri)) fail(`upload_file without a resource_link: ${show(r.content)}`);
  return sc;
}
// 1 MiB + 3 random bytes: not a multiple of 3 (base64 padding), no text.
const v1 = randomBytes((1 << 20) + 3);
await upload(v1, "application/octet-stream");
if (modern) {
  // SEP-2243: the SDK mirrors x-mcp-header arguments into Mcp-Param-* headers.
  const post = sent.findLast((r) => r.rpc === "tools/call");
  const h = post.headers;
  if (h["mcp-method"] !== "tools/call" || h["mcp-name"] !== "upload_file" || h["mcp-param-blob-key"] !== key || h["mcp-protocol-version"] !== era) {
    fail(`tools/call headers ${show(h)}`);
  }
} else if (sent.some((r) => r.headers["mcp-method"])) {
  fail("a 2025-11-25 connection sent Mcp-Method headers");
}
await until(`notifications/resources/updated for ${uri} after the upload`, () => updated.includes(uri));
await until("notifications/resources/list_changed after the upload", () => listChanged > 0);

// Replace it: a second resources/updated, and reads see the new bytes.
const seen = updated.length;
const v2 = randomBytes((512 << 10) + 1);
const stored = await upload(v2, "application/octet-stream");
await until(`a second notifications/resources/updated for ${uri}`, () => updated.length > seen);

// --- list_blobs, stat_blob -------------------------------------------
const lb = await client.callTool({ name: "list_blobs", arguments: { prefix: cfg.prefix } });
if (lb.isError || lb.structuredContent.blobs.length !== 1 || lb.structuredContent.blobs[0].sha256 !== stored.sha256) {
  fail(`list_blobs ${cfg.prefix}: ${show(lb.structuredContent ?? lb.content)}`);
}
// Paged: list_blobs hands out a cursor when limit cuts the listing short.
const keys = [];
let cursor;
do {
  const page = await client.callTool({ name: "list_blobs", arguments: { prefix: cfg.few.prefix, limit: 7, ...(cursor ? { cursor } : {}) } });
  if (page.isError) fail(`list_blobs page: ${show(page.content)}`);
  keys.push(...page.structuredContent.blobs.map((b) => b.key));
  cursor = page.structuredContent.nextCursor;
} while (cursor);
if (keys.length !== cfg.few.count || new Set(keys).size !== keys.length) fail(`list_blobs in pages of 7: ${keys.length} keys, want ${cfg.few.count} distinct`);

const st = await client.callTool({ name: "stat_blob", arguments: { key } });
if (st.isError || st.structuredContent.sha256 !== stored.sha256 || st.structuredContent.size !== v2.length) fail(`stat_blob: ${show(st.structuredContent ?? st.content)}`);
const stBig = await client.callTool({ name: "stat_blob", arguments: { key: cfg.big.key } });
if (stBig.isError || stBig.structuredContent.sha256 !== cfg.big.sha256 || stBig.structuredContent.size !== cfg.big.size) fail(`stat_blob ${cfg.big.key}: ${show(stBig.structuredContent ?? stBig.content)}`);

// --- resources/read ---------------------------------------------------
async function readBlob(u, timeout = 60000) {
  const r = await client.readResource({ uri: u }, { timeout });
  if (r.contents.length !== 1 || typeof r.contents[0].blob !== "string" || r.contents[0].uri !== u) {
    fail(`resources/read ${u}: want one blob content, got ${show(r.contents.map((c) => ({ ...c, blob: c.blob?.length, text: c.text?.length })))}`);
  }
  return Buffer.from(r.contents[0].blob, "base64");
}
const got = await readBlob(uri);
if (!got.equals(v2)) fail(`resources/read ${uri}: ${got.length} bytes sha256 ${sha(got)}, want ${v2.length} bytes sha256 ${sha(v2)}`);
const big = await readBlob(`blob:///${cfg.big.key}`, 300000);
if (big.length !== cfg.big.size || sha(big) !== cfg.big.sha256) fail(`resources/read ${cfg.big.key}: ${big.length} bytes sha256 ${sha(big)}, want ${cfg.big.size} ${cfg.big.sha256}`);
// A missing blob: on the wire -32602 on 2026-07-28 and -32002 before
// (SEP-2164), both with data.uri; the SDK reports either as a
// ResourceNotFoundError (code -32602).
const missing = `blob:///${cfg.prefix}capture-missing`;
let notFound;
try {
  await client.readResource({ uri: missing });
} catch (e) {
  notFound = e;
}
if (!(notFound instanceof ResourceNotFoundError)) fail(`resources/read of a missing blob: ${notFound ? `${notFound.constructor.name} ${notFound.code} ${notFound.message}` : "succeeded"}`);
const wire = await rpcError(missing);
if (wire.code !== (modern ? -32602 : -32002) || wire.data?.uri !== missing) fail(`resources/read of a missing blob: wire error ${show(wire)}`);

// --- resources/list (the SDK walks every page) ------------------------
const before = sent.length;
const { resources } = await client.listResources();
const pages = sent.slice(before).filter((r) => r.rpc === "resources/list").length;
const uris = new Set(resources.map((r) => r.uri));
if (resources.length !== cfg.total + 1 || uris.size !== resources.length) fail(`resources/list: ${resources.length} resources (${uris.size} distinct) in ${pages} pages, want ${cfg.total + 1}`);
if (pages < 2) fail(`resources/list: ${resources.length} resources in ${pages} page(s); the test wants the SDK to follow nextCursor`);
const res = resources.find((r) => r.uri === uri);
if (!res || res.size !== v2.length || res.mimeType !== "application/octet-stream") fail(`resources/list entry ${show(res)}`);

// --- resources/templates/list, completion/complete ---------------------
const { resourceTemplates } = await client.listResourceTemplates();
const tpl = resourceTemplates.find((t) => t.uriTemplate === "blob:///{+key}");
if (!tpl) fail(`resources/templates/list: ${show(resourceTemplates)}`);
async function complete(value) {
  const r = await client.complete({ ref: { type: "ref/resource", uri: tpl.uriTemplate }, argument: { name: "key", value } });
  return r.completion;
}
const manyKeys = Array.from({ length: cfg.many.count }, (_, i) => `${cfg.many.prefix}${String(i).padStart(4, "0")}.txt`);
const fewKeys = Array.from({ length: cfg.few.count }, (_, i) => `${cfg.few.prefix}${String(i).padStart(4, "0")}.txt`);
const cm = await complete(cfg.many.prefix);
if (cm.values.length !== 100 || cm.values.join() !== manyKeys.slice(0, 100).join()) fail(`completion ${cfg.many.prefix}: ${cm.values.length} values ${show(cm.values.slice(0, 3))}…, want the first 100 keys`);
if (cm.hasMore !== true) fail(`completion ${cfg.many.prefix}: hasMore ${cm.hasMore} with ${cfg.many.count} matching keys and ${cm.values.length} values sent, want true`);
if (cm.total !== undefined && cm.total < cfg.many.count) fail(`completion ${cfg.many.prefix}: total ${cm.total}, want absent or >= ${cfg.many.count}`);
const cf = await complete(cfg.few.prefix);
if (cf.values.join() !== fewKeys.join()) fail(`completion ${cfg.few.prefix}: ${show(cf.values)}`);
if (cf.hasMore === true || (cf.total !== undefined && cf.total !== cfg.few.count)) fail(`completion ${cfg.few.prefix}: hasMore ${cf.hasMore} total ${cf.total}, want false/absent and ${cfg.few.count}/absent`);

// --- close with the subscription open ----------------------------------
// The GET stream (2025-11-25) or the listen stream (2026-07-28) is cut by
// the client; the Go test then makes the server write to it.
const session = transport.sessionId ?? "-";
await client.close();
if (errors.length) fail(`client errors: ${show(errors)}`);
console.log(`ok protocol=${negotiated} era=${modern ? "modern" : "legacy"} session=${session} requests=${sent.length} resources=${resources.length}/${pages}pages updated=${updated.length} list_changed=${listChanged} big=${big.length}`);
