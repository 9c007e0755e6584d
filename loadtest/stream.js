// resources/stream (SEP-2532) of a blob, in whichever mode the server picks
// (direct bytes, 302 to a presigned URL, or a downloadUrl answer), at a
// constant arrival rate, bodies discarded. The runner schedules this script
// only when the server declares the resources.stream capability; STREAM_MODE
// only labels the run (the server's --stream-mode picks the mode).
//
// Parameters (__ENV): BASE_URL, KEY (bench-64MiB), SIZE, RATE (2/s),
// DURATION (10s), VUS (4), MAX_VUS (8), STREAM_MODE (direct), P99_MS, SUMMARY_JSON.
//
// P99_MS defaults to 1500 ms, like large-reads.js. Measured here: p99 ≈ 100 ms
// for 64 MiB at 2/s (k6 on the same 2 cores); the bound is ~15× that, so it
// catches stalls and buffering, not a slow neighbour.
import http from 'k6/http';
import { check } from 'k6';
import { env, endpoint, headers, rpc, openSession, summary } from './lib/mcp.js';

const SIZE = Number(env('SIZE', 64 << 20));
const URI = `blob:///${env('KEY', 'bench-64MiB')}`;

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: {
    stream: {
      executor: 'constant-arrival-rate',
      rate: Number(env('RATE', 2)),
      timeUnit: '1s',
      duration: env('DURATION', '10s'),
      preAllocatedVUs: Number(env('VUS', 4)),
      maxVUs: Number(env('MAX_VUS', 8)),
      tags: { stream_mode: env('STREAM_MODE', 'direct') },
    },
  },
  thresholds: {
    http_req_failed: ['rate==0'],
    checks: ['rate==1'],
    'http_req_duration{scenario:stream}': [`p(99)<${env('P99_MS', 1500)}`],
  },
};

export function setup() {
  return openSession({ resourceStreaming: { maxStreamSize: 1 << 30 } });
}

export default function (s) {
  const h = Object.assign(headers(s.session), { Accept: 'application/json, text/event-stream, */*' });
  let res = http.post(endpoint(), rpc('resources/stream', { uri: URI }),
    { headers: h, tags: { name: 'stream' }, timeout: '120s', redirects: 5 });
  const ct = res.headers['Content-Type'] || '';
  if (res.status === 200 && ct.startsWith('application/json')) {
    // downloadUrl mode: the answer names a URL; fetch it.
    const r2 = http.post(endpoint(), rpc('resources/stream', { uri: URI }),
      { headers: h, responseType: 'text', tags: { name: 'stream_url' } });
    const url = ((JSON.parse(r2.body).result) || {}).downloadUrl;
    res = http.get(url, { tags: { name: 'stream_download' }, timeout: '120s' });
  }
  check(res, {
    'stream 200, full length': (r) => r.status === 200 &&
      (r.headers['Content-Length'] === undefined || Number(r.headers['Content-Length']) === SIZE),
  });
}

export const handleSummary = summary;
