// tools/list at a constant arrival rate, bodies discarded.
//
// Parameters (__ENV): BASE_URL, RATE (200/s), DURATION (10s), VUS (20),
// MAX_VUS (100), P99_MS, SUMMARY_JSON.
//
// P99_MS defaults to 20 ms: measured here p99 ≈ 1–3 ms at 200/s (2 cores
// shared with k6); ~5× headroom.
import http from 'k6/http';
import { check } from 'k6';
import { env, endpoint, headers, rpc, openSession, summary } from './lib/mcp.js';

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: {
    tools_list: {
      executor: 'constant-arrival-rate',
      rate: Number(env('RATE', 200)),
      timeUnit: '1s',
      duration: env('DURATION', '10s'),
      preAllocatedVUs: Number(env('VUS', 20)),
      maxVUs: Number(env('MAX_VUS', 100)),
    },
  },
  thresholds: {
    http_req_failed: ['rate==0'],
    checks: ['rate==1'],
    'http_req_duration{name:tools_list}': [`p(99)<${env('P99_MS', 20)}`],
  },
};

export function setup() {
  return openSession();
}

export default function (s) {
  const res = http.post(endpoint(), rpc('tools/list'),
    { headers: headers(s.session), tags: { name: 'tools_list' } });
  check(res, { 'tools/list 200': (r) => r.status === 200 });
}

export const handleSummary = summary;
