// Static file GETs, open model (constant-arrival-rate): each iteration is
// one GET of BASE_URL/KEY, bodies discarded. bench/compare runs it against
// nginx serving the 4 KiB file of the P6 mixed load, as the ceiling for a
// server's CPU per small read (issue 15, P6).
//
// Parameters (__ENV): BASE_URL, KEY (bench-4KiB), SIZE (4096), RATE (300/s),
// DURATION (10s), VUS (30), MAX_VUS (200), P99_MS (20), SUMMARY_JSON.
//
// P99_MS defaults to 20 ms like mixed.js; bench/compare sets 10.
import http from 'k6/http';
import { check } from 'k6';
import { env, summary } from './lib/mcp.js';

const SIZE = Number(env('SIZE', 4096));
const URL = `${env('BASE_URL', 'http://127.0.0.1:8080')}/${env('KEY', 'bench-4KiB')}`;

export const options = {
  discardResponseBodies: true,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: {
    static: {
      executor: 'constant-arrival-rate',
      rate: Number(env('RATE', 300)),
      timeUnit: '1s',
      duration: env('DURATION', '10s'),
      preAllocatedVUs: Number(env('VUS', 30)),
      maxVUs: Number(env('MAX_VUS', 200)),
    },
  },
  thresholds: {
    http_req_failed: ['rate==0'],
    checks: ['rate==1'],
    'http_req_duration{scenario:static}': [`p(99)<${env('P99_MS', 20)}`],
  },
};

export default function () {
  const res = http.get(URL, { tags: { name: 'static' } });
  check(res, { 'static 200, full length': (r) => r.status === 200 && Number(r.headers['Content-Length']) === SIZE });
}

export const handleSummary = summary;
