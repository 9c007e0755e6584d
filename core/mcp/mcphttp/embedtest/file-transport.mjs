// A Streamable HTTP client transport for the official MCP TypeScript SDKs
// (v1 @modelcontextprotocol/sdk, v2 @modelcontextprotocol/client) that sends
// x-mcp-file arguments of any size by streaming them from disk.
//
// Why: the SDKs' StreamableHTTPClientTransport posts
// `body: JSON.stringify(message)`, one JavaScript string, and V8 caps a
// string at 2^29-24 characters (buffer.constants.MAX_STRING_LENGTH,
// 536870888 in Node 22). A 1 GiB file is a data URI of 1431655805
// characters: Buffer#toString("base64") throws ERR_STRING_TOO_LONG
// ("Cannot create a string longer than 0x1fffffe8 characters") and
// JSON.stringify or `+` throw RangeError "Invalid string length". No
// stock-transport option avoids that string: the stock transport takes files
// up to 383 MiB (a body of 535472977 characters).
//
// How: the caller passes `new FileArgument(path)` where the data URI would
// go. StreamingFileTransport implements the SDKs' documented Transport
// interface by delegating to the stock transport, so session ids, protocol
// version headers, auth and the JSON or SSE response are handled exactly as
// before. Its send() swaps each FileArgument for a unique token
// string, so the stock transport's JSON.stringify stays small; the stock
// transport's `fetch` option (documented: a custom fetch) is this
// transport's, which finds the tokens in the body and posts the body as a
// stream instead: the JSON text around each token, then `"data:<type>;base64,`,
// the file read in chunks and base64-encoded as it goes, and `"`, with an
// exact Content-Length. Memory stays at a few chunks whatever the file's
// size. The streamed POST is sent with redirect "error" (see #post): a
// redirect of a request with a file argument fails the call.
//
// The SDKs do not validate outgoing tool arguments (v1 and v2 Client.callTool
// check only the result against the tool's outputSchema), so the placeholder
// reaches the transport as the caller built it. A FileArgument refuses to
// be serialised any other way (toJSON throws) rather than send its path.
import { randomUUID } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";

const TOKEN_PREFIX = "mcp-streamed-file:";
const TOKEN_LITERAL = /"mcp-streamed-file:([0-9a-f-]{36})"/g;
const CHUNK = 3 << 18; // 768 KiB read at a time: a multiple of 3, so chunks encode alone

/** A file argument sent from disk by StreamingFileTransport as a base64 data URI. */
export class FileArgument {
  constructor(path, { mediaType = "application/octet-stream" } = {}) {
    if (!/^[a-z0-9!#$&^_.+-]+\/[a-z0-9!#$&^_.+-]+$/i.test(mediaType)) throw new TypeError(`FileArgument: bad media type ${mediaType}`);
    this.path = path;
    this.mediaType = mediaType;
  }

  toJSON() {
    throw new TypeError("a FileArgument is sent only through StreamingFileTransport");
  }
}

/** The Transport: the stock Streamable HTTP transport, with file arguments streamed. */
export class StreamingFileTransport {
  #inner;
  #fetch;
  #files = new Map(); // token -> FileArgument, while the message that holds it is being sent

  /**
   * @param StockTransport the SDK's StreamableHTTPClientTransport class
   * @param url the MCP endpoint
   * @param opts the stock transport's options (its `fetch`, if any, is used underneath)
   */
  constructor(StockTransport, url, opts = {}) {
    this.#fetch = opts.fetch ?? globalThis.fetch;
    this.#inner = new StockTransport(url, { ...opts, fetch: (u, init) => this.#post(u, init) });
  }

  async send(message, options) {
    if (!holdsFile(message)) return this.#inner.send(message, options);
    const tokens = [];
    const tokenized = tokenize(message, (file) => {
      const token = TOKEN_PREFIX + randomUUID();
      this.#files.set(token, file);
      tokens.push(token);
      return token;
    });
    try {
      return await this.#inner.send(tokenized, options);
    } finally {
      for (const token of tokens) this.#files.delete(token);
    }
  }

  start() { return this.#inner.start(); }
  close() { return this.#inner.close(); }
  terminateSession() { return this.#inner.terminateSession?.(); }
  setProtocolVersion(version) { this.#inner.setProtocolVersion?.(version); }
  setSupportedProtocolVersions(versions) { this.#inner.setSupportedProtocolVersions?.(versions); }
  get sessionId() { return this.#inner.sessionId; }
  get protocolVersion() { return this.#inner.protocolVersion; }
  get hasPerRequestStream() { return this.#inner.hasPerRequestStream; }
  get onmessage() { return this.#inner.onmessage; }
  set onmessage(f) { this.#inner.onmessage = f; }
  get onerror() { return this.#inner.onerror; }
  set onerror(f) { this.#inner.onerror = f; }
  get onclose() { return this.#inner.onclose; }
  set onclose(f) { this.#inner.onclose = f; }

  // #post is the stock transport's fetch: a body with file tokens goes out
  // as a stream, anything else as it is.
  async #post(url, init) {
    const body = init?.body;
    if (typeof body !== "string" || !body.includes(TOKEN_PREFIX)) return this.#fetch(url, init);
    const parts = await this.#bodyParts(body);
    const length = parts.reduce((n, p) => n + p.length, 0);
    const headers = new Headers(init.headers);
    headers.set("content-length", String(length));
    // redirect "error": with "follow" or "manual" (the stock transport's
    // choice) Node's fetch clones the request to replay it on a redirect,
    // teeing the body stream and keeping every chunk sent until the
    // response: the whole encoded file. A redirect is an error instead.
    const stream = ReadableStream.from(streamParts(parts));
    return this.#fetch(url, { ...init, headers, body: stream, duplex: "half", redirect: "error" });
  }

  // #bodyParts splits the JSON text at each registered token: text parts
  // are bytes, file parts a FileArgument with its size and encoded length.
  async #bodyParts(body) {
    const enc = new TextEncoder();
    const parts = [];
    let at = 0;
    for (const m of body.matchAll(TOKEN_LITERAL)) {
      const file = this.#files.get(TOKEN_PREFIX + m[1]);
      if (!file) continue;
      parts.push(textPart(enc.encode(body.slice(at, m.index) + `"data:${file.mediaType};base64,`)));
      const { size } = await stat(file.path);
      parts.push({ file, size, length: 4 * Math.ceil(size / 3) });
      at = m.index + m[0].length - 1; // keep the closing quote
    }
    parts.push(textPart(enc.encode(body.slice(at))));
    return parts;
  }
}

function textPart(bytes) {
  return { bytes, length: bytes.length };
}

async function* streamParts(parts) {
  for (const p of parts) {
    if (p.bytes) yield p.bytes;
    else yield* base64File(p.file.path, p.size);
  }
}

// base64File reads the file's first size bytes in chunks and yields their
// base64; it fails if the file has fewer by then.
async function* base64File(path, size) {
  if (size === 0) return;
  let read = 0;
  let carry = Buffer.alloc(0);
  for await (const chunk of createReadStream(path, { highWaterMark: CHUNK, end: size - 1 })) {
    read += chunk.length;
    const buf = carry.length ? Buffer.concat([carry, chunk]) : chunk;
    const whole = buf.length - (buf.length % 3);
    carry = buf.subarray(whole);
    if (whole) yield Buffer.from(buf.subarray(0, whole).toString("base64"), "latin1");
  }
  if (read !== size) throw new Error(`${path}: ${read} bytes read, ${size} when the request began (the file shrank)`);
  if (carry.length) yield Buffer.from(carry.toString("base64"), "latin1");
}

function holdsFile(v) {
  if (v instanceof FileArgument) return true;
  if (Array.isArray(v)) return v.some(holdsFile);
  return isPlainObject(v) && Object.values(v).some(holdsFile);
}

// tokenize copies the message with each FileArgument replaced by swap(file);
// the caller's objects are left as they were.
function tokenize(v, swap) {
  if (v instanceof FileArgument) return swap(v);
  if (Array.isArray(v)) return v.map((x) => tokenize(x, swap));
  if (!isPlainObject(v)) return v;
  return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, tokenize(x, swap)]));
}

function isPlainObject(v) {
  if (v === null || typeof v !== "object") return false;
  const proto = Object.getPrototypeOf(v);
  return proto === Object.prototype || proto === null;
}
