// request_upload in URL mode through the official MCP TypeScript SDK v2
// client (@modelcontextprotocol/client) on 2026-07-28: the SDK's
// multi-round-trip driver hands each input_required round to the
// elicitation handler below. Round 1 accepts without uploading (the user has
// not picked a file yet), so the SDK retries; round 2 must name the same
// upload page, uploads to its endpoint and accepts; the retry that follows
// must complete with the stored blob. Exits 1 with the reason on the first
// mismatch; prints "ok …" on success.
//
// usage: node request_upload.mjs CONFIG_JSON
//   CONFIG_JSON: {"url": the MCP endpoint, "key": where to store the file}
import { createHash, randomBytes } from "node:crypto";
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";

const cfg = JSON.parse(process.argv[2]);
function fail(msg) {
  console.error(`ts2 request_upload: ${msg}`);
  process.exit(1);
}
const show = (v) => JSON.stringify(v)?.slice(0, 600);
const bytes = randomBytes((256 << 10) + 7);
const sha256 = createHash("sha256").update(bytes).digest("hex");

const client = new Client(
  { name: "mcpblob-interop-ts2-upload", version: "1.0.0" },
  { capabilities: { elicitation: { url: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } },
);
const urls = [];
client.setRequestHandler("elicitation/create", async (request) => {
  const p = request.params;
  if (p.mode !== "url" || !p.url?.includes("/upload/")) fail(`round ${urls.length + 1}: elicitation ${show(p)}`);
  urls.push(p.url);
  if (urls.length === 1) return { action: "accept" }; // the user opened the page, no file yet
  if (p.url !== urls[0]) fail(`round ${urls.length} names ${p.url}, the page opened in round 1 was ${urls[0]}`);
  const form = new FormData();
  form.append("file", new Blob([bytes], { type: "application/octet-stream" }), "picked.bin");
  const res = await fetch(p.url.replace("/upload/", "/u/"), { method: "POST", body: form });
  if (res.status !== 201) fail(`upload to round 1's link: ${res.status} ${await res.text()}`);
  return { action: "accept" };
});

await client.connect(new StreamableHTTPClientTransport(new URL(cfg.url)));
if (client.getNegotiatedProtocolVersion() !== "2026-07-28") fail(`negotiated ${client.getNegotiatedProtocolVersion()}`);
const r = await client.callTool({ name: "request_upload", arguments: { key: cfg.key, mode: "url" } }, { timeout: 60000 });
if (r.isError) fail(`request_upload isError: ${show(r.content)}`);
if (urls.length !== 2) fail(`${urls.length} elicitation rounds, want 2`);
const sc = r.structuredContent;
if (sc?.key !== cfg.key || sc.size !== bytes.length || sc.sha256 !== sha256) fail(`structuredContent ${show(sc)}, want ${cfg.key} ${bytes.length} bytes ${sha256}`);
await client.close();
console.log(`ok rounds=${urls.length} key=${sc.key} size=${sc.size} sha256=${sc.sha256}`);
