#!/bin/bash
# P6 by hand, for profiling what bench/compare measures (bench/compare/p6*.go;
# the p6-*.txt beside this file were written by the cpu command, before P6's
# verdict moved to saturation).
#
#   p6-measure.sh saturate BIN LABEL  P6's verdict method: `mcpblob serve` pinned to CPU 0 with
#                                     GOMAXPROCS=1, wrk -t1 -c16 pinned to CPU 1 for DUR s with
#                                     bench/compare/wrk/p6.lua: METHOD (default resources/read of the
#                                     4 KiB blob; or tools/list) on one 2025-11-25 session; req/s, p99,
#                                     server CPU per request, bad answers; PROF=1 also saves a pprof
#                                     CPU profile of the saturated server, PERF=1 a perf record -g
#                                     (user and kernel stacks) of it
#   p6-measure.sh cpu BIN LABEL       information: server CPU per request of the mixed load
#                                     (loadtest/loadrun -scenario mixed: vegeta at a constant RATE/s,
#                                     resources/read of a 4 KiB blob and tools/list in turn on one
#                                     session) for DUR s; PROF=1 also saves a pprof CPU profile
#   p6-measure.sh syscalls BIN LABEL  strace -c -f over a whole 600/s, 10 s run: syscalls per request
#   p6-measure.sh nginx LABEL         nginx, one worker, sendfile, access_log off (as bench/compare),
#                                     GETs of the same 4 KiB file (-scenario static-get) at RATE/s
#
# CPU time is read from /proc/PID/stat utime+stime deltas. Output under $WORK/LABEL (WORK default
# /tmp/p6/out); one summary line per run is appended to $WORK/results.txt. Ports: PORT, APORT
# (admin, pprof). SERVE_ARGS are added to `mcpblob serve` (for example --access-log=false).
set -e
REPO=$(cd "$(dirname "$0")/../.." && pwd)
WORK=${WORK:-/tmp/p6/out}
LOADRUN=${LOADRUN:-$WORK/loadrun}
RATE=${RATE:-1800}; DUR=${DUR:-20}; METHOD=${METHOD:-resources/read}
PORT=${PORT:-18611}; APORT=${APORT:-18612}
TCK=$(getconf CLK_TCK)

cpu_of() { awk '{print $14 + $15}' /proc/$1/stat; }

# start_mcpblob BIN DIR: serve an empty store in DIR with a 4 KiB blob bench-4KiB
# (under $PIN, e.g. "taskset -c 0 env GOMAXPROCS=1", when set).
start_mcpblob() {
	rm -rf "$2/data"; mkdir -p "$2/data"
	$PIN "$1" serve --data "$2/data" --listen 127.0.0.1:$PORT --admin-listen 127.0.0.1:$APORT $SERVE_ARGS >"$2/server.log" 2>&1 &
	PID=$!
	for _ in $(seq 50); do curl -sf http://127.0.0.1:$PORT/readyz >/dev/null && break; sleep 0.1; done
	head -c 4096 /dev/urandom >"$2/blob"
	curl -sf -X PUT --data-binary @"$2/blob" -H 'Content-Type: application/octet-stream' \
		http://127.0.0.1:$PORT/v1/blobs/bench-4KiB >/dev/null
	attack mixed 300 3s "$2/warm" >/dev/null 2>&1 || true
}

# attack SCENARIO RATE DURATION DIR: one vegeta run at RATE/s against PORT;
# its summary is DIR/target-SCENARIO.txt.
attack() {
	"$LOADRUN" -repo "$REPO" -target http://127.0.0.1:$PORT -scenario "$1" -rate "$2" -duration "$3" \
		-key bench-4KiB -size 4096 -workers 40 -max-workers 400 -p99 10ms -results "$4"
}

# counted DIR SCENARIO: the requests sent and the p99 (ms) of a summary.
counted() {
	awk '/^scenario /{for(i=1;i<=NF;i++) if($i=="sent") n=$(i+1)} /^latency all /{for(i=1;i<=NF;i++) if($i=="p99") p=$(i+1)} END{print n, p}' "$1/target-$2.txt"
}

report() { # LABEL CPU0 CPU1 DIR SCENARIO
	read -r n p99 < <(counted "$4" "$5")
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
	attack mixed "$RATE" "${DUR}s" "$out/load" >"$out/load.txt" 2>&1 || true
	local c1; c1=$(cpu_of $PID)
	[ -n "$cp" ] && wait $cp
	report "$2" "$c0" "$c1" "$out/load" mixed
	kill $PID; wait $PID 2>/dev/null || true
}

# session: a 2025-11-25 session on PORT, initialized; prints its id.
session() {
	local h=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
	local sid
	sid=$(curl -si -X POST "${h[@]}" http://127.0.0.1:$PORT/mcp \
		-d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"p6-measure","version":"1"}}}' |
		tr -d '\r' | awk 'tolower($1)=="mcp-session-id:"{print $2}')
	curl -s -X POST "${h[@]}" -H "Mcp-Session-Id: $sid" -H 'MCP-Protocol-Version: 2025-11-25' \
		-d '{"jsonrpc":"2.0","method":"notifications/initialized"}' http://127.0.0.1:$PORT/mcp >/dev/null
	echo "$sid"
}

cmd_saturate() {
	local out=$WORK/$2; mkdir -p "$out"
	PIN="taskset -c 0 env GOMAXPROCS=1" start_mcpblob "$1" "$out"
	local sid params='{"uri":"blob:///bench-4KiB"}' c0 c1 cp=""
	sid=$(session)
	[ "$METHOD" = resources/read ] || params=-
	c0=$(cpu_of $PID)
	if [ "${PROF:-0}" = 1 ]; then
		curl -s "http://127.0.0.1:$APORT/debug/pprof/profile?seconds=$((DUR - 2))" -o "$out/cpu.pprof" & cp=$!
	fi
	if [ "${PERF:-0}" = 1 ]; then # kernel and user stacks of the server (perf report -i perf.data)
		perf record -g -o "$out/perf.data" -p $PID -- sleep $((DUR - 2)) 2>/dev/null & cp=$!
	fi
	taskset -c 1 wrk -t1 -c16 -d"${DUR}s" --timeout 2s -s "$REPO/bench/compare/wrk/p6.lua" \
		http://127.0.0.1:$PORT/mcp -- mcp "$METHOD" "$params" 2025-11-25 "$sid" - session >"$out/wrk.txt"
	c1=$(cpu_of $PID)
	[ -n "$cp" ] && wait $cp
	awk -v l="$2" -v c=$((c1 - c0)) -v t="$TCK" '/^p6wrk /{for(i=2;i<=NF;i++){split($i,a,"=");v[a[1]]=a[2]}
		s=v["duration_us"]/1e6; printf "%s saturate %s requests=%d req_per_s=%.0f p99=%.2fms cpu_per_request=%.1fus not200=%d rpc_errors=%d socket_errors=%d\n",
		l, ENVIRON["METHOD"], v["requests"], v["requests"]/s, v["p99_us"]/1e3, c/t*1e6/v["requests"], v["non200"], v["rpc_errors"], v["connect"]+v["read"]+v["write"]+v["timeout"]}' \
		"$out/wrk.txt" | tee -a "$WORK/results.txt"
	kill $PID; wait $PID 2>/dev/null || true
}

cmd_syscalls() {
	local out=$WORK/$2; mkdir -p "$out"
	start_mcpblob "$1" "$out"
	strace -c -f -p $PID -o "$out/strace.txt" 2>/dev/null & local sp=$!
	sleep 1
	attack mixed 600 10s "$out/load" >"$out/load.txt" 2>&1 || true
	sleep 1; kill -INT $sp; wait $sp || true
	read -r n _ < <(counted "$out/load" mixed)
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
	nginx -p "$out" -c "$out/nginx.conf" & PID=$!
	sleep 0.5
	attack static-get 300 3s "$out/warm" >/dev/null 2>&1 || true
	local c0 c1; c0=$(cpu_of $PID)
	attack static-get "$RATE" "${DUR}s" "$out/load" >"$out/load.txt" 2>&1 || true
	c1=$(cpu_of $PID)
	report "$1" "$c0" "$c1" "$out/load" static-get
	kill $PID; wait $PID 2>/dev/null || true
}

mkdir -p "$WORK"
[ -x "$LOADRUN" ] || (cd "$REPO/loadtest" && go build -o "$LOADRUN" ./loadrun)
cmd=$1; shift
"cmd_$cmd" "$@"
