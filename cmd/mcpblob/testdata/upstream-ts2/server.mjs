// An MCP server written with the official TypeScript SDK v2
// (@modelcontextprotocol/server, served over Streamable HTTP by
// @modelcontextprotocol/node): the upstream of mcpblob's gateway tests. It
// serves both protocol eras on /mcp: 2025-11-25 in sessions (a sessionful
// transport per session, so elicitation requests reach the client) and
// 2026-07-28 through createMcpHandler (elicitation as an input_required round).
//
// What it offers (blob.mjs holds the bytes; the Go tests rebuild them):
//   resources  ts2://blob/big    SIZE bytes of the deterministic pattern, application/octet-stream
//              ts2://blob/small  65537 bytes of the same pattern
//              ts2://text/hello  a short text/plain resource
//   tools      echo {text}               returns the text
//              file_info {file}          file is x-mcp-file: returns {name, mediaType, size, sha256} as JSON text
//              file_ref {file}           the same, file delivered by reference ("delivery":"reference"): through
//                                        mcpblob's gateway a link it fetches (checking its sha256), directly a data URI
//              confirm {question}        asks the client (form elicitation) and returns what it answered
//              attach {question}         asks the client for a file (a form elicitation whose field file is
//                                        x-mcp-file: maxSize 64 KiB, text/plain or text/csv) and returns
//                                        {name, mediaType, size, sha256} of the answer's file as JSON text
//   prompt     greet {name}             one user message "Hello, NAME"
//
// usage: node server.mjs PORT [SIZE]   (listens on 127.0.0.1:PORT; SIZE defaults to 256 MiB)
// Prints "listening http://127.0.0.1:PORT/mcp" once it accepts connections.
import http from "node:http";
import { randomUUID } from "node:crypto";
import {
  McpServer,
  createMcpHandler,
  fromJsonSchema,
  inputRequired,
  acceptedContent,
  isLegacyRequest,
  DEFAULT_MAX_REQUEST_BODY_SIZE,
} from "@modelcontextprotocol/server";
import { NodeStreamableHTTPServerTransport, toNodeHandler } from "@modelcontextprotocol/node";
import { blobBase64, fileInfo, fileRefInfo, fileRefSpec, fileSpec } from "./blob.mjs";

const port = Number(process.argv[2]);
const bigSize = Number(process.argv[3] ?? 256 * 1024 * 1024);
const smallSize = 65537;

// attachSchema is the form of attach: one x-mcp-file field.
const attachSchema = {
  type: "object",
  properties: { file: { type: "string", format: "uri", title: "File", "x-mcp-file": { maxSize: 65536, accept: ["text/plain", "text/csv"] } } },
  required: ["file"],
};
const confirmSchema = { type: "object", properties: { ok: { type: "boolean", title: "OK?" } }, required: ["ok"] };

// newServer builds the server of one 2025-11-25 session or one 2026-07-28 request.
function newServer(era) {
  const server = new McpServer({ name: "mcpblob-upstream-ts2", version: "1.0.0" });
  const blob = (uri, size) => ({ contents: [{ uri, mimeType: "application/octet-stream", blob: blobBase64(size) }] });
  server.registerResource("big", "ts2://blob/big", { mimeType: "application/octet-stream", size: bigSize }, (u) => blob(u.href, bigSize));
  server.registerResource("small", "ts2://blob/small", { mimeType: "application/octet-stream", size: smallSize }, (u) =>
    blob(u.href, smallSize),
  );
  server.registerResource("hello", "ts2://text/hello", { mimeType: "text/plain" }, (u) => ({
    contents: [{ uri: u.href, mimeType: "text/plain", text: "hello from the ts2 upstream\n" }],
  }));
  const text = (t) => ({ content: [{ type: "text", text: t }] });
  const obj = (properties) => fromJsonSchema({ type: "object", properties, required: Object.keys(properties) });
  server.registerTool("echo", { description: "returns its text", inputSchema: obj({ text: { type: "string" } }) }, ({ text: t }) => text(t));
  server.registerTool(
    "file_info",
    { description: "name, media type, size and sha256 of a file", inputSchema: obj({ file: fileSpec }) },
    ({ file }) => text(JSON.stringify(fileInfo(file))),
  );
  server.registerTool(
    "file_ref",
    { description: "name, media type, size and sha256 of a file, delivered by reference", inputSchema: obj({ file: fileRefSpec }) },
    async ({ file }) => text(JSON.stringify(await fileRefInfo(file))),
  );
  server.registerTool("confirm", { description: "asks the user a yes/no question", inputSchema: obj({ question: { type: "string" } }) }, (args, ctx) =>
    era === "modern" ? confirmModern(args, ctx) : confirmLegacy(args, ctx),
  );
  server.registerTool("attach", { description: "asks the user for a file", inputSchema: obj({ question: { type: "string" } }) }, (args, ctx) =>
    era === "modern" ? attachModern(args, ctx) : attachLegacy(args, ctx),
  );
  server.registerPrompt("greet", { description: "greets NAME", argsSchema: obj({ name: { type: "string" } }) }, ({ name }) => ({
    messages: [{ role: "user", content: { type: "text", text: `Hello, ${name}` } }],
  }));
  return server;
}

const answer = (action, content) => ({ content: [{ type: "text", text: `action=${action} ok=${content?.ok}` }] });

async function confirmLegacy({ question }, ctx) {
  const r = await ctx.mcpReq.elicitInput({ mode: "form", message: question, requestedSchema: confirmSchema });
  return answer(r.action, r.content);
}

function confirmModern({ question }, ctx) {
  const got = acceptedContent(ctx.mcpReq.inputResponses, "confirm");
  if (got) return answer("accept", got);
  return inputRequired({ inputRequests: { confirm: inputRequired.elicit({ message: question, requestedSchema: confirmSchema }) } });
}

const attached = (action, content) => ({
  content: [{ type: "text", text: action === "accept" ? JSON.stringify(fileInfo(content.file)) : `action=${action}` }],
});

// attachLegacy sends its elicitation on the call's own SSE stream (related to
// the call): on the session's GET stream it would be lost if the client's GET
// is not open yet (the transport keeps no events).
async function attachLegacy({ question }, ctx) {
  const params = { mode: "form", message: question, requestedSchema: attachSchema };
  const r = await ctx.mcpReq.elicitInput(params, { relatedRequestId: ctx.mcpReq.id });
  return attached(r.action, r.content);
}

function attachModern({ question }, ctx) {
  const got = acceptedContent(ctx.mcpReq.inputResponses, "attach");
  if (got) return attached("accept", got);
  return inputRequired({ inputRequests: { attach: inputRequired.elicit({ message: question, requestedSchema: attachSchema }) } });
}

// The 2025-11-25 sessions, by session id.
const sessions = new Map();

async function legacy(req, res, body) {
  const id = req.headers["mcp-session-id"];
  let transport = id && sessions.get(id);
  if (!transport) {
    if (id || req.method !== "POST") {
      res.writeHead(404, { "content-type": "application/json" });
      res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32001, message: "session not found" } }));
      return;
    }
    transport = new NodeStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => sessions.set(sid, transport),
    });
    transport.onclose = () => transport.sessionId && sessions.delete(transport.sessionId);
    await newServer("legacy").connect(transport);
  }
  await transport.handleRequest(req, res, body);
}

const modern = toNodeHandler(createMcpHandler(() => newServer("modern"), { legacy: "reject" }));

// readBody reads a POST body up to the SDK's default limit (4 MiB); null when over.
async function readBody(req) {
  const chunks = [];
  let n = 0;
  for await (const c of req) {
    n += c.length;
    if (n > DEFAULT_MAX_REQUEST_BODY_SIZE) return null;
    chunks.push(c);
  }
  return Buffer.concat(chunks).toString("utf8");
}

async function route(req, res) {
  if (new URL(req.url, "http://x").pathname !== "/mcp") {
    res.writeHead(404).end();
    return;
  }
  if (req.method !== "POST") return legacy(req, res, undefined);
  const text = await readBody(req);
  if (text === null) {
    res.writeHead(413, { "content-type": "application/json" });
    res.end(JSON.stringify({ jsonrpc: "2.0", id: null, error: { code: -32600, message: "request body over 4 MiB" } }));
    return;
  }
  let parsed;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  const web = new Request(`http://127.0.0.1:${port}${req.url}`, { method: "POST", headers: req.headers, body: text });
  if (await isLegacyRequest(web, parsed)) return legacy(req, res, parsed);
  return modern(req, res, parsed);
}

const httpServer = http.createServer((req, res) => {
  route(req, res).catch((e) => {
    console.error("ts2 upstream:", e);
    if (!res.headersSent) res.writeHead(500);
    res.end();
  });
});
httpServer.listen(port, "127.0.0.1", () => console.log(`listening http://127.0.0.1:${port}/mcp`));
