#!/bin/bash
# P6 measurement (bench/profiles/p6-*.txt): server CPU per request of the k6
# mixed load (loadtest/mixed.js) against `mcpblob serve`, and of nginx
# serving the same 4 KiB file, from /proc/PID/stat utime+stime deltas.
#
#   p6-measure.sh cpu BIN LABEL       RATE/s for DUR s; PROF=1 also saves a pprof CPU profile
#   p6-measure.sh syscalls BIN LABEL  strace -c -f over a whole 600/s, 10 s run: syscalls per request
#   p6-measure.sh nginx LABEL         nginx, one worker, sendfile, access_log off (as bench/compare)
#
# Output under $WORK/LABEL (WORK default /tmp/p6/out); one summary line per
# run is appended to $WORK/results.txt. Ports: PORT, APORT (admin, pprof).
# SERVE_ARGS are added to `mcpblob serve` (for example --access-log=false).
set -e
REPO=$(cd "$(dirname "$0")/../.." && pwd)
K6=${K6:-$REPO/.tools/bin/k6}
WORK=${WORK:-/tmp/p6/out}
RATE=${RATE:-1800}; DUR=${DUR:-20}
PORT=${PORT:-18611}; APORT=${APORT:-18612}
TCK=$(getconf CLK_TCK)

cpu_of() { awk '{print $14 + $15}' /proc/$1/stat; }

# start_mcpblob BIN DIR: serve an empty store in DIR with a 4 KiB blob bench-4KiB.
start_mcpblob() {
	rm -rf "$2/data"; mkdir -p "$2/data"
	"$1" serve --data "$2/data" --listen 127.0.0.1:$PORT --admin-listen 127.0.0.1:$APORT $SERVE_ARGS >"$2/server.log" 2>&1 &
	PID=$!
	for _ in $(seq 50); do curl -sf http://127.0.0.1:$PORT/readyz >/dev/null && break; sleep 0.1; done
	head -c 4096 /dev/urandom >"$2/blob"
	curl -sf -X PUT --data-binary @"$2/blob" -H 'Content-Type: application/octet-stream' \
		http://127.0.0.1:$PORT/v1/blobs/bench-4KiB >/dev/null
	k6mixed 300 3s "$2/warm.json" >/dev/null 2>&1 || true
}

k6mixed() { # RATE DURATION SUMMARY
	RATE=$1 DURATION=$2 VUS=40 MAX_VUS=400 P99_MS=10 SUMMARY_JSON=$3 BASE_URL=http://127.0.0.1:$PORT \
		"$K6" run -q "$REPO/loadtest/mixed.js"
}

k6count() { python3 -c "import json,sys;m=json.load(open(sys.argv[1]))['metrics'];print(int(m['http_reqs']['values']['count']), round(m['http_req_duration']['values']['p(99)'],2))" "$1"; }

report() { # LABEL CPU0 CPU1 SUMMARY
	read -r n p99 < <(k6count "$4")
	python3 -c "import sys;l,c,n,p,t=sys.argv[1],int(sys.argv[2]),int(sys.argv[3]),sys.argv[4],int(sys.argv[5]);print(f'{l} requests={n} p99={p}ms cpu={c/t:.2f}s cpu_per_request={c/t*1e6/n:.1f}us')" \
		"$1" $(($3 - $2)) "$n" "$p99" "$TCK" | tee -a "$WORK/results.txt"
}

cmd_cpu() {
	local out=$WORK/$2; mkdir -p "$out"
	start_mcpblob "$1" "$out"
	local c0 cp=""; c0=$(cpu_of $PID)
	if [ "${PROF:-0}" = 1 ]; then
		curl -s "http://127.0.0.1:$APORT/debug/pprof/profile?seconds=$((DUR - 4))" -o "$out/cpu.pprof" & cp=$!
	fi
	k6mixed "$RATE" "${DUR}s" "$out/k6.json" >"$out/k6.txt" 2>&1 || true
	local c1; c1=$(cpu_of $PID)
	[ -n "$cp" ] && wait $cp
	report "$2" "$c0" "$c1" "$out/k6.json"
	kill $PID; wait $PID 2>/dev/null || true
}

cmd_syscalls() {
	local out=$WORK/$2; mkdir -p "$out"
	start_mcpblob "$1" "$out"
	strace -c -f -p $PID -o "$out/strace.txt" 2>/dev/null & local sp=$!
	sleep 1
	k6mixed 600 10s "$out/k6.json" >"$out/k6.txt" 2>&1 || true
	sleep 1; kill -INT $sp; wait $sp || true
	read -r n _ < <(k6count "$out/k6.json")
	echo "$2 requests=$n syscalls per request:" | tee -a "$WORK/results.txt"
	awk -v n="$n" 'NR>2 && $4+0>0 && $NF != "total" {printf "  %-14s %6.2f\n", $NF, $4/n}' "$out/strace.txt" | head -16 | tee -a "$WORK/results.txt"
	kill $PID; wait $PID 2>/dev/null || true
}

cmd_nginx() {
	local out=$WORK/$1; mkdir -p "$out/logs" "$out/root"
	head -c 4096 /dev/urandom >"$out/root/bench-4KiB"
	cat >"$out/nginx.conf" <<CONF
daemon off;
master_process off;
worker_processes 1;
user root;
error_log $out/logs/error.log warn;
pid $out/nginx.pid;
events { worker_connections 1024; }
http {
  access_log off; sendfile on; tcp_nopush on; sendfile_max_chunk 0; keepalive_requests 100000;
  client_body_temp_path $out/body; proxy_temp_path $out/proxy; fastcgi_temp_path $out/fastcgi;
  uwsgi_temp_path $out/uwsgi; scgi_temp_path $out/scgi; default_type application/octet-stream;
  server { listen 127.0.0.1:$PORT; root $out/root; location = /readyz { return 200; } }
}
CONF
	cat >"$out/get.js" <<JS
import http from 'k6/http';
import { check } from 'k6';
export const options = { discardResponseBodies: true,
  summaryTrendStats: ['avg', 'min', 'med', 'max', 'p(90)', 'p(95)', 'p(99)'],
  scenarios: { get: { executor: 'constant-arrival-rate', rate: Number(__ENV.RATE), timeUnit: '1s',
    duration: __ENV.DURATION, preAllocatedVUs: 40, maxVUs: 400 } } };
export default function () { check(http.get('http://127.0.0.1:$PORT/bench-4KiB'), { '200': (r) => r.status === 200 }); }
export function handleSummary(data) { return { [__ENV.SUMMARY_JSON]: JSON.stringify(data) }; }
JS
	nginx -p "$out" -c "$out/nginx.conf" & PID=$!
	sleep 0.5
	RATE=300 DURATION=3s SUMMARY_JSON=$out/warm.json "$K6" run -q "$out/get.js" >/dev/null 2>&1 || true
	local c0 c1; c0=$(cpu_of $PID)
	RATE=$RATE DURATION=${DUR}s SUMMARY_JSON=$out/k6.json "$K6" run -q "$out/get.js" >"$out/k6.txt" 2>&1 || true
	c1=$(cpu_of $PID)
	report "$1" "$c0" "$c1" "$out/k6.json"
	kill $PID; wait $PID 2>/dev/null || true
}

mkdir -p "$WORK"
cmd=$1; shift
"cmd_$cmd" "$@"
