// upload.mjs: one upload with tus-js-client (Node), driven by the cluster
// check (package loadtest/cluster/tusjs, which embeds this file and copies
// it into the folder the npm test tools are installed in so that
// `tus-js-client` resolves from there).
//
//   node upload.mjs ENDPOINT FILE KEY CHUNK PARALLEL
//
// The API key comes in the environment (MCPBLOB_API_KEY), never on the
// command line. FILE is read from disk slice by slice (an fs.ReadStream
// with a path: tus-js-client opens a fresh stream per chunk, so nothing
// holds the file in memory). One JSON object per line on stdout:
//
//   {"event":"patch","offset":N}              a PATCH starts at offset N
//   {"event":"create","concat":C,"status":S}  a POST (Upload-Concat C) answered S
//   {"event":"progress","bytes":N,"total":T}  every 4 MiB of progress
//   {"event":"retry","attempt":A,"error":E}   tus-js-client retries
//   {"event":"done","url":U,"handed":H,"seconds":S}
//   {"event":"error","error":E}               then exit status 1
//
// handed is the number of bytes read from the file into PATCH request
// bodies (counted on each body stream by a wrapper of tus-js-client's own
// Node HTTP stack; onProgress is throttled, so it cannot count them): the
// file's size plus what was sent again after the cuts.
import fs from 'node:fs';
import * as tus from 'tus-js-client';

const [endpoint, file, key, chunkArg, parallelArg] = process.argv.slice(2);
const apiKey = process.env.MCPBLOB_API_KEY;
if (!endpoint || !file || !key || !apiKey) {
  console.error('usage: MCPBLOB_API_KEY=… node upload.mjs ENDPOINT FILE KEY CHUNK PARALLEL');
  process.exit(2);
}
const chunkSize = Number(chunkArg);
const parallel = Number(parallelArg);

function emit(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

const step = 4 << 20;
let lastEmitted = -1;
let handed = 0;

// countingStack is tus-js-client's default HTTP stack, counting the bytes
// each PATCH body stream yields.
class CountingStack {
  constructor(inner) {
    this.inner = inner;
  }
  createRequest(method, url) {
    const req = this.inner.createRequest(method, url);
    const send = req.send.bind(req);
    req.send = (body) => {
      if (method === 'PATCH' && body && typeof body.on === 'function') {
        body.on('data', (chunk) => { handed += chunk.length; });
      }
      return send(body);
    };
    return req;
  }
  getName() {
    return 'counting ' + this.inner.getName();
  }
}

const started = Date.now();
const upload = new tus.Upload(fs.createReadStream(file), {
  endpoint,
  chunkSize,
  parallelUploads: parallel,
  retryDelays: [0, 250, 500, 1000, 2000, 3000, 5000],
  headers: { Authorization: 'Bearer ' + apiKey },
  metadata: { key, filename: key.split('/').pop(), filetype: 'application/octet-stream' },
  storeFingerprintForResuming: false,
  httpStack: new CountingStack(new tus.DefaultHttpStack()),
  onBeforeRequest(req) {
    if (req.getMethod() === 'PATCH') emit({ event: 'patch', offset: Number(req.getHeader('Upload-Offset')) });
  },
  onAfterResponse(req, res) {
    if (req.getMethod() === 'POST') emit({ event: 'create', concat: req.getHeader('Upload-Concat') || '', status: res.getStatus() });
  },
  onProgress(bytes, total) {
    const mark = Math.floor(bytes / step);
    if (mark !== lastEmitted) {
      lastEmitted = mark;
      emit({ event: 'progress', bytes, total });
    }
  },
  onShouldRetry(err, attempt, options) {
    const status = err.originalResponse ? err.originalResponse.getStatus() : 0;
    const retry = (status < 400 || status >= 500 || status === 409 || status === 423);
    emit({ event: 'retry', attempt, status, retry, error: String(err.message).split('\n')[0] });
    return retry;
  },
  onError(err) {
    emit({ event: 'error', error: String(err.message) });
    process.exit(1);
  },
  onSuccess() {
    emit({
      event: 'done',
      url: upload.url,
      handed,
      seconds: (Date.now() - started) / 1000,
    });
  },
});
upload.start();
