#!/bin/sh
# s3-ready.sh: create mcpblob's bucket if it is missing, then wait until the
# S3 service answers a conditional PUT (If-None-Match: *) in it, the write
# of mcpblob's claims (single-use links, upload endpoints, live sessions).
# compose.yaml runs it once before the nodes start: SeaweedFS answers such a
# write only once its filer has joined the master's lock ring, some 10 s
# after the filer starts, while its health URLs answer at once. It works
# against any S3 service (docs/deploy.md).
#
# Environment: S3_ENDPOINT (http[s]://host:port), S3_BUCKET, S3_ACCESS_KEY,
# S3_SECRET_KEY; S3_REGION (us-east-1 when unset); READY_TIMEOUT, in
# seconds (120 when unset). Needs curl 7.75 or later (--aws-sigv4). The
# credentials reach curl on its standard input, not its command line.
#
# Exits 0 once the conditional PUT answered 200 (or 412: an earlier attempt
# got through) and its object is deleted again; 1, naming the last answer,
# when READY_TIMEOUT passes first; 2 when a variable is missing.
set -u

for v in S3_ENDPOINT S3_BUCKET S3_ACCESS_KEY S3_SECRET_KEY; do
	eval "val=\${$v:-}"
	if [ -z "$val" ]; then
		echo "s3-ready: $v is not set" >&2
		exit 2
	fi
done
region=${S3_REGION:-us-east-1}
timeout=${READY_TIMEOUT:-120}
key=.mcpblob/s3-ready # under the folder mcpblob keeps its own objects in
bucket_url=${S3_ENDPOINT%/}/$S3_BUCKET

# quote escapes a value for a double-quoted string of a curl config file.
quote() { printf '%s' "$1" | sed 's/[\\"]/\\&/g'; }

# s3 METHOD URL BODY [curl options]: sends one SigV4-signed request with
# BODY, its SHA-256 signed too, and prints the HTTP status (000 when no
# answer came).
s3() {
	method=$1 url=$2 body=$3
	shift 3
	if [ "$method" = HEAD ]; then
		set -- --head "$@"
	else
		set -- -X "$method" --data-binary "$body" -H 'Content-Type: text/plain' "$@"
	fi
	hash=$(printf '%s' "$body" | sha256sum | cut -d' ' -f1)
	printf 'user = "%s:%s"\n' "$(quote "$S3_ACCESS_KEY")" "$(quote "$S3_SECRET_KEY")" |
		curl -sS -K - -o /dev/null -w '%{http_code}' --max-time 30 \
			--aws-sigv4 "aws:amz:$region:s3" -H "x-amz-content-sha256: $hash" "$@" "$url" || true
}

# bucket: the bucket exists, or is created now.
bucket() {
	last="HEAD bucket: $(s3 HEAD "$bucket_url" "")"
	case $last in *": 200") return 0 ;; esac
	body=""
	if [ "$region" != us-east-1 ]; then
		body="<CreateBucketConfiguration><LocationConstraint>$region</LocationConstraint></CreateBucketConfiguration>"
	fi
	last="PUT bucket: $(s3 PUT "$bucket_url" "$body")"
	case $last in *": 200" | *": 409") return 0 ;; esac # 409: created meanwhile
	return 1
}

# claim: a conditional PUT got through and its object is gone again.
claim() {
	last="conditional PUT: $(s3 PUT "$bucket_url/$key" ready -H 'If-None-Match: *')"
	case $last in *": 200" | *": 412") ;; *) return 1 ;; esac
	last="DELETE: $(s3 DELETE "$bucket_url/$key" "")"
	case $last in *": 204" | *": 200") return 0 ;; esac
	return 1
}

deadline=$(($(date +%s) + timeout))
until bucket && claim; do
	if [ "$(date +%s)" -ge "$deadline" ]; then
		echo "s3-ready: $S3_ENDPOINT bucket $S3_BUCKET not ready after ${timeout}s; last answer: $last" >&2
		exit 1
	fi
	sleep 1
done
echo "s3-ready: $S3_ENDPOINT bucket $S3_BUCKET answers conditional PUTs"
