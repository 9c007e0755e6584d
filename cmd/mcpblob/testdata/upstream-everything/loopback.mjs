// Preloaded (node --import) by cmd/mcpblob's gateway tests before
// @modelcontextprotocol/server-everything, whose Streamable HTTP mode listens
// on every interface (app.listen(PORT)): a listen given a port and no host
// binds 127.0.0.1 instead, so the test's upstream is reachable from this
// machine only.
import net from "node:net";

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const portOnly = (typeof args[0] === "number" || /^\d+$/.test(String(args[0]))) && typeof args[1] !== "string";
  if (portOnly) args.splice(1, 0, "127.0.0.1");
  return listen.apply(this, args);
};
