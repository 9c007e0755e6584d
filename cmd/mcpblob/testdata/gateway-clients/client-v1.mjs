// The gateway survey (survey.mjs) with the official TypeScript SDK v1 client
// (@modelcontextprotocol/sdk), protocol 2025-11-25: prints "summary JSON".
//
// usage: node client-v1.mjs URL CONFIG_JSON
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { attachRuns, elicitAnswer, survey } from "./survey.mjs";

const [url, config] = process.argv.slice(2);
const client = new Client({ name: "mcpblob-gateway-ts1", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } });
const cfg = JSON.parse(config);
const elicitations = [];
client.setRequestHandler(ElicitRequestSchema, elicitAnswer(elicitations, cfg));
const transportErrors = [];
client.onerror = (e) => transportErrors.push(String(e?.message ?? e));
try {
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  const out = cfg.attach ? await attachRuns(client, cfg, elicitations, transportErrors) : await survey(client, cfg, elicitations);
  out.protocol = client.transport?.protocolVersion ?? "";
  console.log("summary " + JSON.stringify(out));
  await client.close();
} catch (e) {
  console.error(`ts1 gateway survey: ${e?.stack ?? e}`);
  process.exit(1);
}
