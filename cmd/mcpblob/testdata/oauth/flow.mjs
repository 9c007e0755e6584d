// The OAuth end-to-end client that flow-v1.mjs and flow-v2.mjs run, each
// on its generation of the official MCP TypeScript SDK: the whole
// authorization code + PKCE flow a real client runs against mcpblob as an
// OAuth 2.1 resource server.
//
//   connect → 401 + WWW-Authenticate → protected resource metadata → AS
//   metadata → provider.redirectToAuthorization(url) → (the script plays the
//   user: GET the authorization URL, the AS's login form, POST the
//   credentials, follow redirects until one targets the redirect URI) →
//   transport.finishAuth → reconnect with the token → tools/call
//   upload_file (data URI) → resources/read → sha256 of the read bytes.
//
// The provider is a pre-registered public client with an in-memory PKCE
// verifier and token store. Every HTTP request the SDK makes goes through a
// recording fetch; the final stdout line is one JSON object the Go test
// (oauth_e2e_test.go) checks. Exits 1 with the reason on the first failure.
//
// usage: node flow-v1.mjs CONFIG_JSON (or flow-v2.mjs)
//   CONFIG_JSON: {"url": MCP endpoint, "clientId", "redirectUrl",
//                 "username", "password", "scope": client metadata scope,
//                 "file": path of the bytes to upload, "key": blob key}
import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";

const sha = (b) => createHash("sha256").update(b).digest("hex");
const show = (v) => JSON.stringify(v)?.slice(0, 600);

// runFlow runs the flow on one SDK generation, whose differences sdk holds:
//   name                                       "v1" or "v2", in logs and the result
//   Client, StreamableHTTPClientTransport, UnauthorizedError   the SDK's classes
//   finishAuth(transport, callback)            hands the callback's query to the SDK
//   callTool(client, params, options)          tools/call with request options
export async function runFlow(sdk) {
  const SDK = sdk.name;
  const { Client, StreamableHTTPClientTransport, UnauthorizedError } = sdk;
  const cfg = JSON.parse(process.argv[2]);
  const log = (msg) => console.error(`[oauth ${SDK}] ${msg}`);
  function fail(msg) {
    console.error(`oauth ${SDK}: ${msg}`);
    process.exit(1);
  }
  const watchdog = setTimeout(() => fail("timed out after 90s"), 90_000);

  // --- recording fetch: every request the SDK makes ---------------------------
  const requests = [];
  async function recordingFetch(input, init) {
    const url = new URL(input instanceof Request ? input.url : String(input));
    const headers = new Headers(init?.headers ?? (input instanceof Request ? input.headers : undefined));
    const rec = {
      method: init?.method ?? (input instanceof Request ? input.method : "GET"),
      url: url.href,
      bearer: /^Bearer\s/i.test(headers.get("authorization") ?? ""),
    };
    if (typeof init?.body === "string") {
      try {
        rec.rpc = JSON.parse(init.body).method;
      } catch {}
    }
    if (init?.body instanceof URLSearchParams) {
      // The token request: keep its parameters, not the secrets.
      rec.form = Object.fromEntries([...init.body].filter(([k]) => !["code", "code_verifier", "refresh_token"].includes(k)));
    }
    requests.push(rec);
    const res = await fetch(input, init);
    rec.status = res.status;
    const challenge = res.headers.get("www-authenticate");
    if (challenge) rec.wwwAuthenticate = challenge;
    log(`${rec.method} ${url.pathname} bearer=${rec.bearer}${rec.rpc ? " " + rec.rpc : ""} → ${res.status}`);
    return res;
  }

  // --- the provider: a pre-registered public client, all state in memory -------
  const events = []; // redirectToAuthorization, saveTokens, … in call order
  let authorizationUrl;
  let verifier;
  let stored;
  let clientInfo;
  let discovery;
  const state = randomBytes(16).toString("base64url"); // CSRF: the callback must echo it
  const provider = {
    get redirectUrl() {
      return cfg.redirectUrl;
    },
    get clientMetadata() {
      return {
        client_name: `mcpblob oauth e2e (${SDK})`,
        redirect_uris: [cfg.redirectUrl],
        grant_types: ["authorization_code"],
        response_types: ["code"],
        token_endpoint_auth_method: "none",
        scope: cfg.scope,
      };
    },
    // Pre-registered: the SDK must not register a client of its own. It may
    // save the information back, stamped with the AS's issuer (SEP-2352).
    clientInformation() {
      return clientInfo ?? { client_id: cfg.clientId };
    },
    saveClientInformation(info) {
      events.push("saveClientInformation");
      if (info.client_id !== cfg.clientId) fail(`the SDK registered a client of its own: ${show(info)}`);
      clientInfo = info;
      log(`saveClientInformation ${show(info)}`);
    },
    tokens() {
      return stored;
    },
    saveTokens(tokens) {
      events.push("saveTokens");
      stored = tokens;
      log(`saveTokens token_type=${tokens.token_type} scope=${tokens.scope} expires_in=${tokens.expires_in}`);
    },
    redirectToAuthorization(url) {
      events.push("redirectToAuthorization");
      authorizationUrl = new URL(url);
      log(`redirectToAuthorization ${url}`);
    },
    state() {
      return state;
    },
    // Discovery results kept across the redirect, as the SDK asks (SEP-2352:
    // finishAuth checks the callback against the AS the flow started with).
    saveDiscoveryState(s) {
      discovery = s;
    },
    discoveryState() {
      return discovery;
    },
    saveCodeVerifier(v) {
      events.push("saveCodeVerifier");
      verifier = v;
    },
    codeVerifier() {
      if (!verifier) fail("codeVerifier() before saveCodeVerifier()");
      return verifier;
    },
  };

  // --- the user in the browser: plain fetch, redirects by hand ------------------
  // Follows the AS's redirects until one leaves for the redirect URI, posting
  // the login form on the way, and returns the callback's query parameters.
  async function playUser(start) {
    const redirect = new URL(cfg.redirectUrl);
    const isCallback = (u) => u.origin === redirect.origin && u.pathname === redirect.pathname;
    let next = new URL(start);
    let init = { redirect: "manual" };
    for (let hop = 0; hop < 10; hop++) {
      const res = await fetch(next, init);
      log(`user ${init.method ?? "GET"} ${next.pathname} → ${res.status}`);
      if (res.status === 200 && (res.headers.get("content-type") ?? "").includes("text/html")) {
        // The login page: a form that posts id, username and password.
        const html = await res.text();
        const action = html.match(/<form[^>]*action="([^"]*)"/i)?.[1];
        const id = html.match(/name="id"[^>]*value="([^"]*)"/i)?.[1] ?? html.match(/value="([^"]*)"[^>]*name="id"/i)?.[1];
        if (!action || !id) fail(`login page without a form with an id field: ${html.slice(0, 400)}`);
        next = new URL(action.replaceAll("&amp;", "&"), next);
        init = {
          method: "POST",
          redirect: "manual",
          headers: { "content-type": "application/x-www-form-urlencoded" },
          body: new URLSearchParams({ id, username: cfg.username, password: cfg.password }),
        };
        continue;
      }
      await res.body?.cancel();
      const location = res.headers.get("location");
      if (res.status < 300 || res.status > 399 || !location) fail(`${next}: ${res.status} without a redirect`);
      next = new URL(location, next);
      if (isCallback(next)) return next.searchParams;
      init = { redirect: "manual" };
    }
    fail("more than 10 hops without reaching the redirect URI");
  }

  const serverUrl = new URL(cfg.url);

  // --- 1. connect without a token: the SDK must ask for authorization -----------
  const first = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider, fetch: recordingFetch });
  try {
    await new Client({ name: `mcpblob-oauth-${SDK}`, version: "1.0.0" }).connect(first);
    fail("connected without authorization");
  } catch (e) {
    if (!(e instanceof UnauthorizedError)) fail(`connect: ${e?.stack ?? e}, want UnauthorizedError`);
    log(`connect: ${e.name}: ${e.message}`);
  }
  if (!authorizationUrl) fail("the SDK never called redirectToAuthorization");
  const authorize = Object.fromEntries(authorizationUrl.searchParams);

  // --- 2. the user logs in; the SDK exchanges the code ---------------------------
  const callback = await playUser(authorizationUrl);
  if (callback.get("error")) fail(`the AS refused: ${callback}`);
  if (authorize.state !== state || callback.get("state") !== state) fail(`state: provider ${state}, authorization URL ${authorize.state}, callback ${callback.get("state")}`);
  if (!callback.get("code")) fail(`no code in the callback: ${callback}`);
  await sdk.finishAuth(first, callback);
  if (!stored?.access_token) fail("finishAuth saved no access token");

  // --- 3. reconnect with the token and use the server -----------------------------
  const transport = new StreamableHTTPClientTransport(serverUrl, { authProvider: provider, fetch: recordingFetch });
  const client = new Client({ name: `mcpblob-oauth-${SDK}`, version: "1.0.0" });
  await client.connect(transport);

  const bytes = readFileSync(cfg.file);
  const uri = `blob:///${cfg.key}`;
  const up = await sdk.callTool(
    client,
    { name: "upload_file", arguments: { key: cfg.key, file: `data:application/octet-stream;base64,${bytes.toString("base64")}` } },
    { timeout: 60_000 },
  );
  if (up.isError) fail(`upload_file isError: ${show(up.content)}`);
  const read = await client.readResource({ uri });
  const blob = read.contents?.[0]?.blob;
  if (typeof blob !== "string") fail(`resources/read ${uri}: no blob contents: ${show(read)}`);
  const readBytes = Buffer.from(blob, "base64");
  await client.close();

  const tokenRequest = requests.find((r) => r.form?.grant_type === "authorization_code");
  clearTimeout(watchdog);
  console.log(
    JSON.stringify({
      sdk: SDK,
      events,
      authorize: {
        scope: authorize.scope,
        resource: authorize.resource,
        client_id: authorize.client_id,
        redirect_uri: authorize.redirect_uri,
        code_challenge_method: authorize.code_challenge_method,
        state_echoed: authorize.state === state && callback.get("state") === state,
        iss: callback.get("iss") ?? undefined, // RFC 9207, when the AS sends it
      },
      tokenRequest: tokenRequest?.form,
      tokenScope: stored.scope,
      tokenType: stored.token_type,
      uploaded: { size: bytes.length, sha256: sha(bytes) },
      uploadResult: { sha256: up.structuredContent?.sha256, size: up.structuredContent?.size, key: up.structuredContent?.key },
      read: { size: readBytes.length, sha256: sha(readBytes), mimeType: read.contents[0].mimeType },
      requests,
    }),
  );
}
