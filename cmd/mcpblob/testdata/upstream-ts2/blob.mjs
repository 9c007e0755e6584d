// The bytes of the ts2 upstream's blob resources and its file_info and file_ref tools.
//
// A blob of SIZE bytes is the pattern byte(i) = f(i mod PERIOD), with
// f(j) = (j * 0x9E3779B1 mod 2^32) >> 13 mod 256 and PERIOD = 3 * 65521
// (cmd/mcpblob's gateway tests rebuild it to check sums). PERIOD is a multiple
// of 3, so the base64 of the blob is the base64 of one period repeated, then
// that of the tail: the raw bytes are never held, and the one string the SDK
// serialises is the only copy.
import { createHash } from "node:crypto";

export const PERIOD = 3 * 65521;

function pattern(n) {
  const b = Buffer.alloc(n);
  for (let j = 0; j < n; j++) b[j] = (Math.imul(j, 0x9e3779b1) >>> 13) & 0xff;
  return b;
}

const period64 = pattern(PERIOD).toString("base64");

// blobBase64 is the base64 of the first size bytes of the pattern.
export function blobBase64(size) {
  const whole = Math.floor(size / PERIOD);
  return period64.repeat(whole) + pattern(size - whole * PERIOD).toString("base64");
}

// fileSpec is the JSON Schema of an x-mcp-file argument (SEP-2356): a data URI
// of any media type up to 4 MiB, the SDK's default request body limit.
export const fileSpec = { type: "string", format: "uri", "x-mcp-file": { maxSize: 4 * 1024 * 1024, accept: ["*/*"] } };

// fileRefSpec is the same, delivered by reference through mcpblob's gateway
// (a link in place of the data URI), up to 64 MiB.
export const fileRefSpec = {
  type: "string",
  format: "uri",
  "x-mcp-file": { maxSize: 64 * 1024 * 1024, accept: ["*/*"], delivery: "reference" },
};

// fileRefInfo reads a file delivered by reference: a link (from mcpblob's
// gateway), fetched as a stream and checked against the sha256 in its query;
// or a data URI (called directly).
export async function fileRefInfo(ref) {
  if (ref.startsWith("data:")) return fileInfo(ref);
  const url = new URL(ref);
  if (url.protocol !== "http:" || url.hostname !== "127.0.0.1") throw new Error("file is neither a link of the gateway nor a data: URI");
  const res = await fetch(url);
  if (!res.ok) throw new Error(`GET the file: HTTP ${res.status}`);
  const hash = createHash("sha256");
  let size = 0;
  for await (const chunk of res.body) {
    hash.update(chunk);
    size += chunk.length;
  }
  const sha256 = hash.digest("hex");
  if (sha256 !== url.searchParams.get("sha256")) throw new Error("the file's sha256 does not match its link");
  return { name: url.searchParams.get("name") ?? "", mediaType: url.searchParams.get("type") ?? "", size, sha256 };
}

// fileInfo reads an RFC 2397 data URI with an optional name parameter.
export function fileInfo(uri) {
  const m = /^data:([^,]*),(.*)$/s.exec(uri);
  if (!m) throw new Error("file is not a data: URI");
  const params = m[1].split(";");
  const base64 = params.at(-1) === "base64";
  if (base64) params.pop();
  const mediaType = params.shift() || "text/plain";
  const name = params.find((p) => p.startsWith("name="))?.slice(5) ?? "";
  const bytes = base64 ? Buffer.from(m[2], "base64") : Buffer.from(decodeURIComponent(m[2]));
  return { name: decodeURIComponent(name), mediaType, size: bytes.length, sha256: createHash("sha256").update(bytes).digest("hex") };
}
