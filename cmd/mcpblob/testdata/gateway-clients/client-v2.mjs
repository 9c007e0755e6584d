// The gateway survey (survey.mjs) with the official TypeScript SDK v2 client
// (@modelcontextprotocol/client), in the era MODE asks for: "legacy"
// (initialize, 2025-11-25) or "2026-07-28" (server/discover; elicitation as
// input_required rounds, which the client fulfils with the same handler).
// Prints "summary JSON".
//
// usage: node client-v2.mjs URL MODE CONFIG_JSON
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import { attachRuns, elicitAnswer, survey } from "./survey.mjs";

const [url, mode, config] = process.argv.slice(2);
const negotiation = mode === "legacy" ? undefined : { mode: { pin: mode } };
const client = new Client(
  { name: "mcpblob-gateway-ts2", version: "1.0.0" },
  { capabilities: { elicitation: { form: {} } }, versionNegotiation: negotiation },
);
const cfg = JSON.parse(config);
const elicitations = [];
client.setRequestHandler("elicitation/create", elicitAnswer(elicitations, cfg));
const transportErrors = [];
client.onerror = (e) => transportErrors.push(String(e?.message ?? e));
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const out = cfg.attach ? await attachRuns(client, cfg, elicitations, transportErrors) : await survey(client, cfg, elicitations);
  out.protocol = client.getNegotiatedProtocolVersion?.() ?? "";
  console.log("summary " + JSON.stringify(out));
  await client.close();
} catch (e) {
  console.error(`ts2 gateway survey (${mode}): ${e?.stack ?? e}`);
  process.exit(1);
}
