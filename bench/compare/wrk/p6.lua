-- P6 at saturation (bench/compare/p6sat.go): the request wrk sends, and the
-- answers it counts. The harness opens any session itself and passes it in:
--
--   wrk ... -s p6.lua URL -- get
--   wrk ... -s p6.lua URL -- mcp METHOD PARAMS PROTOCOL SESSION BEARER ERA
--
-- get: a GET of URL's path (nginx, the fasthttp floor); every answer must be 200.
-- mcp: a JSON-RPC POST of METHOD with PARAMS (a JSON object, or "-" for none),
-- a fresh id per request (servers refuse an id already in flight), the
-- MCP-Protocol-Version header PROTOCOL, Mcp-Session-Id SESSION and
-- Authorization: Bearer BEARER unless "-"; ERA "modern" makes it a 2026-07-28
-- request (Mcp-Method, Mcp-Name, the protocol in params._meta, no session).
-- Every answer must be 200 and carry a JSON-RPC result, not an error.
--
-- done() prints one line the harness parses:
--   p6wrk requests=N duration_us=N p50_us=N p99_us=N max_us=N non200=N rpc_errors=N connect=N read=N write=N timeout=N
-- and, when an answer was bad, the first one's status and body head:
--   p6wrk-first-bad STATUS BODY

local mode, method, params, body_suffix
local id = 0
non200, rpc_errors = 0, 0 -- per thread, read back in done()
first_bad = "" -- the first bad answer's status and body head, for the report

local threads = {}

function setup(thread)
	table.insert(threads, thread)
end

local function meta(protocol)
	return '"_meta":{"io.modelcontextprotocol/protocolVersion":"' .. protocol ..
		'","io.modelcontextprotocol/clientCapabilities":{},"io.modelcontextprotocol/clientInfo":{"name":"mcpblob-bench-wrk","version":"1"}}'
end

function init(args)
	mode = args[1]
	if mode == "get" then
		wrk.method = "GET"
		return
	end
	method, params = args[2], args[3]
	local protocol, session, bearer, era = args[4], args[5], args[6], args[7]
	local inner = ""
	if params ~= "-" then
		inner = string.sub(params, 2, -2) -- the object's members
	end
	if era == "modern" then
		if inner ~= "" then inner = inner .. "," end
		inner = inner .. meta(protocol)
		wrk.headers["Mcp-Method"] = method
		local name = string.match(params, '"uri":"([^"]*)"')
		if name then wrk.headers["Mcp-Name"] = name end
	end
	wrk.method = "POST"
	wrk.headers["Content-Type"] = "application/json"
	wrk.headers["Accept"] = "application/json, text/event-stream"
	wrk.headers["MCP-Protocol-Version"] = protocol
	if session ~= "-" then wrk.headers["Mcp-Session-Id"] = session end
	if bearer ~= "-" then wrk.headers["Authorization"] = "Bearer " .. bearer end
	body_suffix = ',"method":"' .. method .. '","params":{' .. inner .. '}}'
end

function request()
	if mode == "get" then
		return wrk.format()
	end
	id = id + 1
	return wrk.format(nil, nil, nil, '{"jsonrpc":"2.0","id":' .. id .. body_suffix)
end

local function bad(status, body)
	if first_bad == "" then
		first_bad = status .. " " .. string.gsub(string.sub(body or "", 1, 160), "%s+", " ")
	end
end

function response(status, headers, body)
	if status ~= 200 then
		non200 = non200 + 1
		bad(status, body)
	elseif mode ~= "get" and (not string.find(body, '"result":', 1, true) or string.find(body, '"error":{"code":', 1, true)) then
		rpc_errors = rpc_errors + 1
		bad(status, body)
	end
end

function done(summary, latency, requests)
	local n200, nrpc, first = 0, 0, ""
	for _, t in ipairs(threads) do
		n200 = n200 + t:get("non200")
		nrpc = nrpc + t:get("rpc_errors")
		if first == "" then first = t:get("first_bad") end
	end
	local e = summary.errors
	io.write(string.format("p6wrk requests=%d duration_us=%d p50_us=%d p99_us=%d max_us=%d non200=%d rpc_errors=%d connect=%d read=%d write=%d timeout=%d\n",
		summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
		n200, nrpc, e.connect, e.read, e.write, e.timeout))
	if first ~= "" then
		io.write("p6wrk-first-bad " .. first .. "\n")
	end
end
