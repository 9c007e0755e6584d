// The official TypeScript SDK client (@modelcontextprotocol/sdk) against the
// embed module's hash_file tool: node ts-client.mjs URL. It lists the tools,
// checks hash_file's x-mcp-file schema, sends a 64 KiB data URI and checks
// the sha256 it computed itself. Prints "ok ..." or exits non-zero.
import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.argv[2];
const fail = (msg) => { console.error("FAIL:", msg); process.exit(1); };

const client = new Client({ name: "embed-ts", version: "1" }, { capabilities: {} });
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);

const { tools } = await client.listTools();
const tool = tools.find((t) => t.name === "hash_file");
if (!tool) fail(`hash_file not listed: ${tools.map((t) => t.name)}`);
const spec = tool.inputSchema?.properties?.file?.["x-mcp-file"];
if (!spec || spec.maxSize !== 2 * 1024 ** 3 || !spec.accept?.includes("application/octet-stream")) {
  fail(`hash_file x-mcp-file: ${JSON.stringify(tool.inputSchema)}`);
}
if (!tool.outputSchema) fail("hash_file without outputSchema");

// 64 KiB of deterministic bytes (xorshift32).
const data = Buffer.alloc(64 * 1024);
let x = 0x9e3779b9;
for (let i = 0; i < data.length; i++) {
  x ^= x << 13; x >>>= 0; x ^= x >>> 17; x ^= x << 5; x >>>= 0;
  data[i] = x & 0xff;
}
const want = createHash("sha256").update(data).digest("hex");
// callTool validates structuredContent against the outputSchema.
const res = await client.callTool({
  name: "hash_file",
  arguments: { file: "data:application/octet-stream;base64," + data.toString("base64") },
});
if (res.isError) fail(`hash_file error: ${JSON.stringify(res)}`);
const sc = res.structuredContent;
if (sc?.sha256 !== want || sc?.size !== data.length) fail(`structuredContent ${JSON.stringify(sc)}, want ${want}`);
if (!res.content.some((c) => c.type === "text" && c.text.includes(want))) fail(`content ${JSON.stringify(res.content)}`);

// A value the descriptor rejects comes back as a tool error naming the argument.
const bad = await client.callTool({ name: "hash_file", arguments: { file: "data:image/png;base64,iVBORw0KGgo=" } });
if (!bad.isError || !JSON.stringify(bad.content).includes("file")) fail(`rejected media type: ${JSON.stringify(bad)}`);

await transport.terminateSession?.().catch(() => {});
await client.close();
console.log(`ok protocol=${transport.protocolVersion} sha256=${want} size=${data.length}`);
