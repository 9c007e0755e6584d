// Data-URI uploads: tools/call of upload_file with the file as an RFC 2397
// base64 data URI string argument (SEP-2356 x-mcp-file). The runner
// schedules it only when tools/list names upload_file.
//
// Parameters (__ENV): BASE_URL, SIZE (262144), RATE (10/s), DURATION (10s),
// VUS (5), MAX_VUS (20), P99_MS, SUMMARY_JSON.
//
// P99_MS defaults to 100 ms for 256 KiB. Measured here: p99 ≈ 14 ms (JSON
// scan, streaming base64 decode into the store, fsync, commit) at 10/s;
// ~7× headroom.
import http from 'k6/http';
import { check } from 'k6';
import encoding from 'k6/encoding';
import { env, endpoint, headers, openSession, summary } from './lib/mcp.js';

const SIZE = Number(env('SIZE', 256 << 10));
const DATA_URI = 'data:application/octet-stream;base64,' +
  encoding.b64encode(new Uint8Array(SIZE).map((_, i) => (i * 2654435761) >> 13).buffer, 'std');

export const options = {
  discardResponseBodies: false,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: {
    datauri: {
      executor: 'constant-arrival-rate',
      rate: Number(env('RATE', 10)),
      timeUnit: '1s',
      duration: env('DURATION', '10s'),
      preAllocatedVUs: Number(env('VUS', 5)),
      maxVUs: Number(env('MAX_VUS', 20)),
    },
  },
  thresholds: {
    http_req_failed: ['rate==0'],
    checks: ['rate==1'],
    'http_req_duration{name:upload_file}': [`p(99)<${env('P99_MS', 100)}`],
  },
};

export function setup() {
  return openSession();
}

export default function (s) {
  const body = JSON.stringify({
    jsonrpc: '2.0', id: __VU * 1e9 + __ITER + 1, method: 'tools/call',
    params: { name: 'upload_file', arguments: { file: DATA_URI, key: `k6/datauri-${__VU}-${__ITER}` } },
  });
  const res = http.post(endpoint(), body, { headers: headers(s.session), tags: { name: 'upload_file' } });
  check(res, { 'upload_file ok': (r) => r.status === 200 && !String(r.body).includes('"isError":true') && !String(r.body).includes('"error"') });
}

export const handleSummary = summary;
