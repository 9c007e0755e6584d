// Interop check with the official TypeScript SDK client (@modelcontextprotocol/sdk,
// 2025-11-25 era): node ts-client.mjs URL. Exits non-zero on the first failure.
// The server must run with the conformance fixtures and hold the blob
// "interop/hello.txt" (text/plain) — conformance_test.go seeds it.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const url = process.argv[2];
const fail = (msg) => { console.error("FAIL:", msg); process.exit(1); };
const client = new Client({ name: "ts-interop", version: "1" }, { capabilities: { elicitation: {}, sampling: {} } });
client.setRequestHandler((await import("@modelcontextprotocol/sdk/types.js")).ElicitRequestSchema,
  async () => ({ action: "accept", content: { username: "ada", email: "ada@example.com" } }));
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
if (transport.protocolVersion !== "2025-11-25") fail(`negotiated ${transport.protocolVersion}`);
if (!transport.sessionId) fail("no session id");

const tools = await client.listTools();
for (const name of ["list_blobs", "stat_blob", "delete_blob", "get_download_link"]) {
  const t = tools.tools.find((t) => t.name === name);
  if (!t || !t.outputSchema) fail(`tool ${name} missing or without outputSchema`);
}
const res = await client.listResources();
const hello = res.resources.find((r) => r.uri === "blob:///interop/hello.txt");
if (!hello || hello.size !== 13 || hello.mimeType !== "text/plain") fail(`resource listing: ${JSON.stringify(hello)}`);
const rr = await client.readResource({ uri: hello.uri });
if (rr.contents[0].text !== "hello \"text\"\n") fail(`read: ${JSON.stringify(rr.contents[0])}`);
try {
  await client.readResource({ uri: "blob:///interop/missing" });
  fail("missing resource read succeeded");
} catch (e) {
  if (e.code !== -32002) fail(`missing resource code ${e.code}`);
}
// callTool validates structuredContent against each tool's outputSchema.
const stat = await client.callTool({ name: "stat_blob", arguments: { key: "interop/hello.txt" } });
if (stat.isError || stat.structuredContent.size !== 13) fail(`stat_blob: ${JSON.stringify(stat)}`);
if (!stat.content.some((c) => c.type === "resource_link" && c.uri === hello.uri)) fail("stat_blob without resource_link");
const list = await client.callTool({ name: "list_blobs", arguments: { prefix: "interop/" } });
if (list.isError || list.structuredContent.blobs.length !== 1) fail(`list_blobs: ${JSON.stringify(list.structuredContent)}`);
const link = await client.callTool({ name: "get_download_link", arguments: { key: "interop/hello.txt" } });
if (link.isError || !link.structuredContent.url.includes("/d/")) fail(`get_download_link: ${JSON.stringify(link)}`);
const dl = await fetch(link.structuredContent.url);
if (dl.status !== 200 || (await dl.text()) !== "hello \"text\"\n") fail(`download link: ${dl.status}`);
const progress = [];
await client.callTool({ name: "test_tool_with_progress", arguments: {} }, undefined, { onprogress: (p) => progress.push(p.progress) });
if (progress.join(",") !== "0,50,100") fail(`progress ${progress}`);
const el = await client.callTool({ name: "test_elicitation", arguments: { message: "who?" } });
if (!el.content[0].text.includes("ada@example.com")) fail(`elicitation: ${JSON.stringify(el)}`);
await client.callTool({ name: "test_reconnection", arguments: {} }).then((r) => {
  if (!r.content[0].text.includes("completed")) fail(`reconnection: ${JSON.stringify(r)}`);
});
await transport.terminateSession();
await client.close();
console.log("ok");
