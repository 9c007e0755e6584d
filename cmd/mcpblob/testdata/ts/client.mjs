// Interop client built on the official MCP TypeScript SDK (@modelcontextprotocol/sdk).
// Connects over Streamable HTTP, lists resources, reads one blob with resources/read,
// checks its sha256 and calls stat_blob. Exits 1 with the reason on any mismatch.
//
// usage: node client.mjs URL URI KEY SHA256 [TOKEN]
import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const [url, uri, key, want, token] = process.argv.slice(2);

function fail(msg) {
  console.error(`ts interop: ${msg}`);
  process.exit(1);
}

const headers = token ? { Authorization: `Bearer ${token}` } : {};
const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } });
const client = new Client({ name: "mcpblob-interop-ts", version: "1.0.0" });
await client.connect(transport);

let found = false;
let cursor;
do {
  const page = await client.listResources(cursor ? { cursor } : {});
  found ||= page.resources.some((r) => r.uri === uri);
  cursor = page.nextCursor;
} while (cursor);
if (!found) fail(`resources/list does not list ${uri}`);

const read = await client.readResource({ uri }, { timeout: 300000 });
if (read.contents.length !== 1 || typeof read.contents[0].blob !== "string") {
  fail(`resources/read: want one blob content, got ${JSON.stringify(read.contents.map((c) => Object.keys(c)))}`);
}
const bytes = Buffer.from(read.contents[0].blob, "base64");
const got = createHash("sha256").update(bytes).digest("hex");
if (got !== want) fail(`resources/read: sha256 ${got} (${bytes.length} bytes), want ${want}`);

const call = await client.callTool({ name: "stat_blob", arguments: { key } });
if (call.isError) fail(`stat_blob isError: ${JSON.stringify(call.content)}`);
const sc = call.structuredContent ?? {};
if (sc.key !== key || sc.sha256 !== want || sc.size !== bytes.length) {
  fail(`stat_blob structuredContent ${JSON.stringify(sc)}, want key ${key} sha256 ${want} size ${bytes.length}`);
}
console.log(`ok protocol=${transport.protocolVersion ?? "?"} bytes=${bytes.length} sha256=${want}`);
await client.close();
