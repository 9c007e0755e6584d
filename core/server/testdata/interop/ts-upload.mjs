// File inputs with the official TypeScript SDK client (2025-11-25 era):
// node ts-upload.mjs URL. request_upload elicits a file in form mode (an
// x-mcp-file field) and the client answers with a data URI; upload_file takes
// one inline. Exits non-zero on the first failure.
import { createHash } from "node:crypto";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";

const url = process.argv[2];
const fail = (msg) => { console.error("FAIL:", msg); process.exit(1); };
const sha = (b) => createHash("sha256").update(b).digest("hex");

// A PNG signature followed by 300 KiB: large enough that the server decodes
// the answer into a spool as it arrives.
const png = Buffer.concat([Buffer.from("89504e470d0a1a0a", "hex"), Buffer.alloc(300 << 10, 7)]);
let seen = null;
const client = new Client({ name: "ts-upload", version: "1" }, { capabilities: { elicitation: { form: {} } } });
client.setRequestHandler(ElicitRequestSchema, async (req) => {
  seen = req.params;
  const f = req.params.requestedSchema?.properties?.file;
  // The SDK's schema parsing drops keywords it does not know, x-mcp-file
  // included (SEP-2356 is unmerged); the Go tests check it on the wire.
  if (!f || f.type !== "string" || f.format !== "uri") fail(`file field: ${JSON.stringify(f)}`);
  if (seen.message !== "Send the diagram") fail(`message ${seen.message}`);
  return { action: "accept", content: { file: "data:image/png;base64," + png.toString("base64") } };
});
const transport = new StreamableHTTPClientTransport(new URL(url));
await client.connect(transport);
if (transport.protocolVersion !== "2025-11-25") fail(`negotiated ${transport.protocolVersion}`);

const tools = await client.listTools();
const up = tools.tools.find((t) => t.name === "upload_file");
if (!up || !up.inputSchema.properties.file["x-mcp-file"]) fail("upload_file without an x-mcp-file argument");

// callTool validates structuredContent against the tool's outputSchema.
const r = await client.callTool({ name: "request_upload", arguments: { message: "Send the diagram", key: "ts/diagram.png", accept: ["image/png"] } });
if (r.isError) fail(`request_upload: ${JSON.stringify(r.content)}`);
if (!seen || (seen.mode && seen.mode !== "form")) fail(`elicitation mode ${seen && seen.mode}`);
const sc = r.structuredContent;
if (sc.key !== "ts/diagram.png" || sc.sha256 !== sha(png) || sc.size !== png.length || sc.mimeType !== "image/png") fail(`stored ${JSON.stringify(sc)}`);
if (!r.content.some((c) => c.type === "resource_link" && c.uri === sc.uri)) fail("no resource_link");

const text = Buffer.from("hello from the TypeScript SDK\n");
const u = await client.callTool({ name: "upload_file", arguments: { key: "ts/hello.txt", file: "data:text/plain;base64," + text.toString("base64") } });
if (u.isError || u.structuredContent.sha256 !== sha(text)) fail(`upload_file: ${JSON.stringify(u)}`);
const bad = await client.callTool({ name: "upload_file", arguments: { file: "https://example.com/x.png" } });
if (!bad.isError || !bad.content[0].text.includes('Argument "file"')) fail(`bad scheme: ${JSON.stringify(bad)}`);

await transport.terminateSession();
await client.close();
console.log("ok");
