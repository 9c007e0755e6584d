// OAuth end-to-end client on the official MCP TypeScript SDK v1
// (@modelcontextprotocol/sdk): flow.mjs's flow, with what v1 does its own way.
//
// usage: node flow-v1.mjs CONFIG_JSON (see flow.mjs)
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { runFlow } from "./flow.mjs";

await runFlow({
  name: "v1",
  Client,
  StreamableHTTPClientTransport,
  UnauthorizedError,
  // v1 takes the authorization code alone.
  finishAuth: (transport, callback) => transport.finishAuth(callback.get("code")),
  // v1's callTool takes a result schema before the request options.
  callTool: (client, params, options) => client.callTool(params, undefined, options),
});
