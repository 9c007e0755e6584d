// The official TypeScript SDK clients against embedtest's hash_file tool:
//   node ts-client.mjs v1|v2 URL stock|streamed FILE SIZE
// v1 (@modelcontextprotocol/sdk) speaks 2025-11-25 (initialize, a session);
// v2 (@modelcontextprotocol/client) is pinned to 2026-07-28 (stateless).
// It checks serverInfo and hash_file's x-mcp-file schema, then sends the
// first SIZE bytes of FILE as the data URI of hash_file's `file` argument:
//   stock     the SDK's own StreamableHTTPClientTransport, the data URI one
//             string. The transport posts JSON.stringify(message) and V8
//             caps a string at 2^29-24 characters, so SIZE stays under
//             384 MiB (base64); 1 GiB cannot be sent this way.
//   streamed  StreamingFileTransport (file-transport.mjs) around the same
//             stock transport, the argument a FileArgument: the body is
//             streamed from FILE, so SIZE is the file's whole size.
// Prints "ok ... size=N sha256=HEX seconds=S client_max_rss_mib=M" with
// what hash_file returned and the client's peak RSS (the caller checks them)
// or exits non-zero.
import { readFileSync } from "node:fs";
import { open } from "node:fs/promises";
import { FileArgument, StreamingFileTransport } from "./file-transport.mjs";

const [sdk, url, mode, path, sizeArg] = process.argv.slice(2);
const size = Number(sizeArg);
const fail = (msg) => { console.error(`FAIL (${sdk} ${mode}):`, msg); process.exit(1); };

let Client, StockTransport, clientOptions;
if (sdk === "v1") {
  ({ Client } = await import("@modelcontextprotocol/sdk/client/index.js"));
  ({ StreamableHTTPClientTransport: StockTransport } = await import("@modelcontextprotocol/sdk/client/streamableHttp.js"));
  clientOptions = { capabilities: {} };
} else if (sdk === "v2") {
  ({ Client, StreamableHTTPClientTransport: StockTransport } = await import("@modelcontextprotocol/client"));
  clientOptions = { versionNegotiation: { mode: { pin: "2026-07-28" } } };
} else {
  fail(`unknown sdk ${sdk}`);
}
const client = new Client({ name: `embedtest-ts-${sdk}`, version: "1" }, clientOptions);
const transport = mode === "streamed" ? new StreamingFileTransport(StockTransport, new URL(url))
  : mode === "stock" ? new StockTransport(new URL(url)) : fail(`unknown mode ${mode}`);
await client.connect(transport);

const info = client.getServerVersion();
if (info?.name !== "embed-hasher") fail(`serverInfo ${JSON.stringify(info)}, want embed-hasher`);
const { tools } = await client.listTools();
const tool = tools.find((t) => t.name === "hash_file");
const spec = tool?.inputSchema?.properties?.file?.["x-mcp-file"];
if (!spec || spec.maxSize !== 2 * 1024 ** 3) fail(`hash_file x-mcp-file: ${JSON.stringify(tool)}`);

// readPrefix reads the first n bytes of the file into memory (stock mode).
async function readPrefix(n) {
  const f = await open(path);
  try {
    const buf = Buffer.allocUnsafe(n);
    const { bytesRead } = await f.read(buf, 0, n, 0);
    if (bytesRead !== n) fail(`${path}: ${bytesRead} bytes, want ${n}`);
    return buf;
  } finally {
    await f.close();
  }
}

const file = mode === "streamed" ? new FileArgument(path)
  : "data:application/octet-stream;base64," + (await readPrefix(size)).toString("base64");
const params = { name: "hash_file", arguments: { file } };
const options = { timeout: 600000 };
const start = performance.now();
const res = sdk === "v1" ? await client.callTool(params, undefined, options) : await client.callTool(params, options);
const seconds = ((performance.now() - start) / 1000).toFixed(1);
if (res.isError) fail(`hash_file error: ${JSON.stringify(res).slice(0, 500)}`);
const sc = res.structuredContent;
if (typeof sc?.sha256 !== "string" || sc?.size !== size) fail(`structuredContent ${JSON.stringify(sc)}, want size ${size}`);

await transport.terminateSession?.().catch(() => {});
await client.close();
// The peak RSS of this program: VmHWM, which starts afresh at exec, unlike
// process.resourceUsage().maxRSS, which Linux carries over from the process
// that started node (a Go test that had just held gigabytes).
const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(readFileSync("/proc/self/status", "latin1"));
const maxRSS = hwm ? Number(hwm[1]) >> 10 : fail("no VmHWM in /proc/self/status");
console.log(`ok sdk=${sdk} protocol=${transport.protocolVersion ?? "2026-07-28"} transport=${mode} size=${size} sha256=${sc.sha256} seconds=${seconds} client_max_rss_mib=${maxRSS}`);
