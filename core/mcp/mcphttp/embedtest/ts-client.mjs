// The official TypeScript SDK clients against embedtest's hash_file tool:
//   node ts-client.mjs v1|v2 URL SIZE
// v1 (@modelcontextprotocol/sdk) speaks 2025-11-25 (initialize, a session);
// v2 (@modelcontextprotocol/client) is pinned to 2026-07-28 (stateless).
// It checks serverInfo and hash_file's x-mcp-file schema, sends SIZE random
// bytes as a data URI and checks the sha256 and size the tool returns. A
// JSON-RPC message is one JavaScript string in both SDKs, and V8 caps a
// string at 2^29-24 characters, so SIZE stays under 384 MiB (base64).
// Prints "ok ..." or exits non-zero.
import { createHash, randomBytes } from "node:crypto";

const [sdk, url, sizeArg] = process.argv.slice(2);
const size = Number(sizeArg);
const fail = (msg) => { console.error(`FAIL (${sdk}):`, msg); process.exit(1); };

let client, transport;
if (sdk === "v1") {
  const { Client } = await import("@modelcontextprotocol/sdk/client/index.js");
  const { StreamableHTTPClientTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js");
  client = new Client({ name: "embedtest-ts-v1", version: "1" }, { capabilities: {} });
  transport = new StreamableHTTPClientTransport(new URL(url));
} else {
  const { Client, StreamableHTTPClientTransport } = await import("@modelcontextprotocol/client");
  client = new Client({ name: "embedtest-ts-v2", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
  transport = new StreamableHTTPClientTransport(new URL(url));
}
await client.connect(transport);

const info = client.getServerVersion();
if (info?.name !== "embed-hasher") fail(`serverInfo ${JSON.stringify(info)}, want embed-hasher`);
const { tools } = await client.listTools();
const tool = tools.find((t) => t.name === "hash_file");
const spec = tool?.inputSchema?.properties?.file?.["x-mcp-file"];
if (!spec || spec.maxSize !== 2 * 1024 ** 3) fail(`hash_file x-mcp-file: ${JSON.stringify(tool)}`);

const data = randomBytes(size);
const want = createHash("sha256").update(data).digest("hex");
const params = { name: "hash_file", arguments: { file: "data:application/octet-stream;base64," + data.toString("base64") } };
const options = { timeout: 600000 };
const res = sdk === "v1" ? await client.callTool(params, undefined, options) : await client.callTool(params, options);
if (res.isError) fail(`hash_file error: ${JSON.stringify(res).slice(0, 500)}`);
const sc = res.structuredContent;
if (sc?.sha256 !== want || sc?.size !== size) fail(`structuredContent ${JSON.stringify(sc)}, want ${want} ${size}`);

await transport.terminateSession?.().catch(() => {});
await client.close();
console.log(`ok sdk=${sdk} protocol=${transport.protocolVersion ?? "2026-07-28"} size=${size} sha256=${want}`);
