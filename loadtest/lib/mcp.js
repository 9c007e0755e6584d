// Shared helpers for the mcpblob k6 scripts: one MCP session (protocol
// 2025-11-25, which mcpblob and the peer SDK servers all speak) opened in
// setup() and shared by every VU, JSON-RPC request bodies, and a summary
// writer that saves the full k6 summary as JSON for the runner.
import http from 'k6/http';

export const PROTOCOL = '2025-11-25';

// env reads a parameter from __ENV with a default.
export function env(name, dflt) {
  const v = __ENV[name];
  return v === undefined || v === '' ? dflt : v;
}

// endpoint is the MCP endpoint URL (BASE_URL + MCP_PATH).
export function endpoint() {
  return env('BASE_URL', 'http://127.0.0.1:8080') + env('MCP_PATH', '/mcp');
}

export function headers(session) {
  const h = {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': PROTOCOL,
  };
  if (session) h['Mcp-Session-Id'] = session;
  if (__ENV.API_KEY) h.Authorization = `Bearer ${__ENV.API_KEY}`;
  return h;
}

let nextId = 1;

// rpc is a JSON-RPC request body. All VUs share one session, so ids are
// unique per VU (VU × 10^9 + a counter): servers such as go-sdk reject a
// second in-flight request with the same id on a session, as JSON-RPC allows.
export function rpc(method, params) {
  const id = __VU * 1e9 + nextId++;
  return JSON.stringify({ jsonrpc: '2.0', id, method, params: params || {} });
}

// openSession runs initialize and notifications/initialized; it returns the
// session id ('' when the server runs sessionless) and the server capabilities.
export function openSession(clientCaps) {
  const url = endpoint();
  const res = http.post(url, rpc('initialize', {
    protocolVersion: PROTOCOL,
    capabilities: clientCaps || {},
    clientInfo: { name: 'mcpblob-k6', version: '1' },
  }), { headers: headers(''), responseType: 'text', tags: { name: 'initialize' } });
  if (res.status !== 200) {
    throw new Error(`initialize: http ${res.status}: ${res.body}`);
  }
  const session = res.headers['Mcp-Session-Id'] || '';
  const msg = message(res);
  http.post(url, JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
    { headers: headers(session), tags: { name: 'initialized' } });
  return { session, capabilities: (msg.result || {}).capabilities || {} };
}

// message parses the JSON-RPC answer of a JSON or SSE response body.
export function message(res) {
  const ct = res.headers['Content-Type'] || '';
  if (!ct.startsWith('text/event-stream')) return JSON.parse(res.body);
  let data = '';
  for (const line of res.body.split('\n')) {
    if (line.startsWith('data:')) data += line.slice(5).replace(/^ /, '');
    else if (line === '' && data !== '') {
      if (data.includes('"id"')) return JSON.parse(data);
      data = '';
    }
  }
  return JSON.parse(data);
}

// readOK checks a discarded resources/read answer: 200 and, when the server
// states a Content-Length, at least the base64 length of the blob (a
// JSON-RPC error answer is far shorter). Bodies are checked in integrity.js.
export function readOK(res, size) {
  if (res.status !== 200) return false;
  const cl = res.headers['Content-Length'];
  if (cl === undefined || size <= 0) return true;
  return Number(cl) >= 4 * Math.ceil(size / 3);
}

// summary saves the whole k6 summary as JSON to SUMMARY_JSON (when set) and
// prints a short text summary.
export function summary(data) {
  const out = {};
  if (__ENV.SUMMARY_JSON) out[__ENV.SUMMARY_JSON] = JSON.stringify(data, null, 1);
  const m = data.metrics;
  const d = (m.http_req_duration || {}).values || {};
  const lines = [
    `requests ${((m.http_reqs || {}).values || {}).count || 0}` +
      ` (${(((m.http_reqs || {}).values || {}).rate || 0).toFixed(1)}/s),` +
      ` failed rate ${(((m.http_req_failed || {}).values || {}).rate || 0)},` +
      ` dropped iterations ${(((m.dropped_iterations || {}).values || {}).count || 0)}`,
    `http_req_duration med ${(d.med || 0).toFixed(2)} ms, p(99) ${(d['p(99)'] || 0).toFixed(2)} ms, max ${(d.max || 0).toFixed(2)} ms`,
  ];
  for (const [name, metric] of Object.entries(m)) {
    for (const [expr, t] of Object.entries(metric.thresholds || {})) {
      lines.push(`threshold ${name} ${expr}: ${t.ok ? 'ok' : 'FAILED'}`);
    }
  }
  out.stdout = lines.join('\n') + '\n';
  return out;
}
