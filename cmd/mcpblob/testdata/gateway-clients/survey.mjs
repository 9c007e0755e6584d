// The survey both TypeScript SDK clients (client-v1.mjs, client-v2.mjs) run
// against an MCP server, directly and through mcpblob's gateway: every tool
// (called with the arguments the config gives it; a listed tool without
// arguments fails the run), every listed resource read (its bytes reduced to
// size and sha256), every prompt got, and the form elicitations the server
// asked for on the way. cmd/mcpblob's gateway tests compare the two
// summaries, so the fields kept are those a client sees of the server, in a
// fixed order.
import { createHash } from "node:crypto";

// config: {"calls": {tool: arguments}, "prompts": {prompt: arguments}, "skipRead": [uri],
//          "elicit": {message: content}, "attach": [question]}
// With "attach", the run is only attach's calls (attachRuns), not the survey.

// elicitAnswer accepts every form elicitation, with the content cfg.elicit
// gives for its message ({"ok": true} when none), and records its message.
export function elicitAnswer(elicitations, cfg = {}) {
  return async (request) => {
    elicitations.push(request.params.message);
    return { action: "accept", content: cfg.elicit?.[request.params.message] ?? { ok: true } };
  };
}

// attachRuns calls attach once for each question of cfg.attach (the upstream
// elicits a file; elicitAnswer answers with cfg.elicit's file for that
// question) and returns, in order, each call's tool result or its error.
export async function attachRuns(client, cfg, elicitations, transportErrors) {
  const calls = [];
  for (const question of cfg.attach) {
    try {
      const r = await client.callTool({ name: "attach", arguments: { question } }, undefined, { timeout: 20000 });
      calls.push({ content: r.content, isError: r.isError ?? false });
    } catch (e) {
      calls.push({ error: { code: e?.code, message: String(e?.message ?? e) } });
    }
  }
  return { calls, elicitations, transportErrors };
}

const byName = (a, b) => (a.name ?? a.uri).localeCompare(b.name ?? b.uri);

async function all(list, member) {
  const out = [];
  let cursor;
  do {
    const page = await list(cursor ? { cursor } : {});
    out.push(...page[member]);
    cursor = page.nextCursor;
  } while (cursor);
  return out.sort(byName);
}

function digest(c) {
  const bytes = c.blob !== undefined ? Buffer.from(c.blob, "base64") : Buffer.from(c.text ?? "", "utf8");
  return { uri: c.uri, mimeType: c.mimeType, kind: c.blob !== undefined ? "blob" : "text", size: bytes.length,
    sha256: createHash("sha256").update(bytes).digest("hex") };
}

export async function survey(client, cfg, elicitations) {
  const out = { tools: [], calls: {}, resources: [], reads: {}, prompts: [], promptResults: {}, elicitations };
  for (const t of await all((p) => client.listTools(p), "tools")) {
    out.tools.push({ name: t.name, description: t.description, inputSchema: t.inputSchema });
    const args = cfg.calls[t.name];
    if (args === undefined) throw new Error(`no arguments for tool ${t.name} in the config`);
    const r = await client.callTool({ name: t.name, arguments: args });
    out.calls[t.name] = { content: r.content, isError: r.isError ?? false };
  }
  for (const r of await all((p) => client.listResources(p), "resources")) {
    out.resources.push({ uri: r.uri, name: r.name, mimeType: r.mimeType });
    if ((cfg.skipRead ?? []).includes(r.uri)) continue;
    const res = await client.readResource({ uri: r.uri });
    out.reads[r.uri] = res.contents.map(digest);
  }
  for (const p of await all((q) => client.listPrompts(q), "prompts")) {
    out.prompts.push({ name: p.name, description: p.description, arguments: p.arguments });
    const res = await client.getPrompt({ name: p.name, arguments: cfg.prompts[p.name] ?? {} });
    out.promptResults[p.name] = res.messages;
  }
  return out;
}
