// OAuth end-to-end client on the official MCP TypeScript SDK v2
// (@modelcontextprotocol/client): flow.mjs's flow, with what v2 does its own way.
//
// usage: node flow-v2.mjs CONFIG_JSON (see flow.mjs)
import { Client, StreamableHTTPClientTransport, UnauthorizedError } from "@modelcontextprotocol/client";
import { runFlow } from "./flow.mjs";

await runFlow({
  name: "v2",
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  // v2 takes the whole callback query (code, state, and iss when the AS sends
  // it: RFC 9207, checked against the AS metadata).
  finishAuth: (transport, callback) => transport.finishAuth(callback),
  callTool: (client, params, options) => client.callTool(params, options),
});
