// Load for the P7 cluster check (bench/cluster), all through the load
// balancer at BASE_URL; one node is killed while it runs. Three open-model
// scenarios:
//   mcp      resources/read of a 4 KiB blob and tools/list, alternating, on
//            one 2025-11-25 session (nginx hashes it to one node);
//   uploads  unique bodies of 64 KiB to 3 MiB, stored by PUT /v1/blobs (two
//            in three) or through an upload endpoint (POST /v1/uploads, then
//            a multipart POST to /u/…); the node checks x-mcp-sha256 on PUT;
//   links    256 KiB ranges of a 1 MiB blob through one /d/ link.
// Each upload logs "TRY key size sha256" before it starts and "ACK key size
// sha256" once it was answered 2xx: the runner reads both back afterwards.
// No thresholds: the runner judges every failure against the kill.
//
// Parameters (__ENV): BASE_URL, API_KEY, DURATION (20s), MCP_RATE (80/s),
// UPLOAD_RATE (6/s), LINK_RATE (20/s), SMALL_KEY, LARGE_KEY, SUMMARY_JSON.
import http from 'k6/http';
import crypto from 'k6/crypto';
import { check } from 'k6';
import { env, endpoint, headers, rpc, openSession, readOK, summary } from '../../loadtest/lib/mcp.js';

const BASE = env('BASE_URL', 'http://127.0.0.1:8080');
const DURATION = env('DURATION', '20s');
const SMALL_KEY = env('SMALL_KEY', 'cluster/seed/4KiB');
const LARGE_KEY = env('LARGE_KEY', 'cluster/seed/1MiB');
const SIZES = [64 << 10, 256 << 10, 1 << 20, 3 << 20];
const RANGE = 256 << 10;

// One random pattern per VU (made natively: a JS loop over 3 MiB takes
// seconds per VU); each upload stamps its key over the first bytes.
const pattern = new Uint8Array(crypto.randomBytes(SIZES[SIZES.length - 1]));

function scenario(exec, rate, vus) {
  return {
    executor: 'constant-arrival-rate', exec, rate: Number(rate), timeUnit: '1s',
    duration: DURATION, preAllocatedVUs: vus, maxVUs: vus * 10,
  };
}

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'med', 'max', 'p(90)', 'p(99)'],
  scenarios: {
    mcp: scenario('mcp', env('MCP_RATE', 80), 8),
    uploads: scenario('upload', env('UPLOAD_RATE', 6), 6),
    links: scenario('download', env('LINK_RATE', 20), 4),
  },
};

function api() {
  const h = { 'Content-Type': 'application/json' };
  if (__ENV.API_KEY) h.Authorization = `Bearer ${__ENV.API_KEY}`;
  return h;
}

export function setup() {
  const s = openSession();
  const res = http.post(`${BASE}/v1/links`, JSON.stringify({ key: LARGE_KEY, ttlSeconds: 900 }),
    { headers: api(), responseType: 'text' });
  if (res.status !== 201) throw new Error(`POST /v1/links: http ${res.status}: ${res.body}`);
  return { session: s.session, link: JSON.parse(res.body).url };
}

export function mcp(s) {
  if (__ITER % 2 === 0) {
    const res = http.post(endpoint(), rpc('resources/read', { uri: `blob:///${SMALL_KEY}` }),
      { headers: headers(s.session), tags: { name: 'mcp_read' } });
    check(res, { 'read 200': (r) => readOK(r, 4096) });
  } else {
    const res = http.post(endpoint(), rpc('tools/list'),
      { headers: headers(s.session), tags: { name: 'mcp_tools_list' } });
    check(res, { 'tools/list 200': (r) => r.status === 200 });
  }
}

export function upload() {
  const size = SIZES[(__VU + __ITER) % SIZES.length];
  const viaEndpoint = __ITER % 3 === 2;
  const key = `cluster/load/${viaEndpoint ? 'u' : 'put'}-${__VU}-${__ITER}`;
  const body = pattern.slice(0, size);
  for (let i = 0; i < key.length; i++) body[i] = key.charCodeAt(i);
  const sha = crypto.sha256(body.buffer, 'hex');
  console.log(`TRY ${key} ${size} ${sha}`);
  let res;
  if (viaEndpoint) {
    const mint = http.post(`${BASE}/v1/uploads`, JSON.stringify({ key, maxSize: size, ttlSeconds: 300 }),
      { headers: api(), responseType: 'text', tags: { name: 'upload_mint' } });
    if (!check(mint, { 'upload endpoint minted': (r) => r.status === 201 })) return;
    const up = JSON.parse(mint.body);
    res = http.post(up.url, { file: http.file(body.buffer, 'load.bin', 'application/octet-stream') },
      { headers: { Authorization: api().Authorization }, tags: { name: 'upload_endpoint' } });
  } else {
    const h = api();
    h['Content-Type'] = 'application/octet-stream';
    h['x-mcp-sha256'] = sha;
    res = http.put(`${BASE}/v1/blobs/${key}`, body.buffer, { headers: h, tags: { name: 'upload_put' } });
  }
  if (check(res, { 'upload stored': (r) => r.status === 201 })) console.log(`ACK ${key} ${size} ${sha}`);
}

export function download(s) {
  const slot = (__ITER * 7 + __VU) % 4;
  const start = slot * RANGE;
  const res = http.get(s.link, { headers: { Range: `bytes=${start}-${start + RANGE - 1}` }, tags: { name: 'link_range' } });
  check(res, { 'range 206': (r) => r.status === 206 && Number(r.headers['Content-Length']) === RANGE });
}

export const handleSummary = summary;
