// Integrity: a low-VU run (bodies kept) that reads known blobs through
// resources/read, decodes the base64 and compares the sha256 with the one
// the runner computed when it seeded them. Load runs discard bodies; this is
// where the bytes are checked.
//
// Parameters (__ENV): BASE_URL, BLOBS (comma-separated key:size:sha256hex),
// ITERATIONS (3 per blob), SUMMARY_JSON.
import http from 'k6/http';
import { check } from 'k6';
import crypto from 'k6/crypto';
import encoding from 'k6/encoding';
import { env, endpoint, headers, rpc, openSession, message, summary } from './lib/mcp.js';

const BLOBS = env('BLOBS', '').split(',').filter((b) => b !== '').map((b) => {
  const [key, size, sha256] = b.split(':');
  return { key, size: Number(size), sha256 };
});

export const options = {
  discardResponseBodies: false,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: {
    integrity: {
      executor: 'shared-iterations',
      vus: 1,
      iterations: Math.max(1, BLOBS.length) * Number(env('ITERATIONS', 3)),
      maxDuration: env('MAX_DURATION', '60s'),
    },
  },
  thresholds: {
    http_req_failed: ['rate==0'],
    checks: ['rate==1'],
  },
};

export function setup() {
  if (BLOBS.length === 0) throw new Error('BLOBS is empty');
  return openSession();
}

export default function (s) {
  const b = BLOBS[__ITER % BLOBS.length];
  const res = http.post(endpoint(), rpc('resources/read', { uri: `blob:///${b.key}` }),
    { headers: headers(s.session), tags: { name: 'read_verify' }, timeout: '120s' });
  check(res, {
    'read 200': (r) => r.status === 200,
    'sha256 matches the seeded blob': (r) => {
      if (r.status !== 200) return false;
      const msg = message(r);
      const c = ((msg.result || {}).contents || [])[0] || {};
      if (typeof c.blob !== 'string') return false;
      const raw = encoding.b64decode(c.blob, 'std');
      return raw.byteLength === b.size && crypto.sha256(raw, 'hex') === b.sha256;
    },
  });
}

export const handleSummary = summary;
