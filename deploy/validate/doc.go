// Package validate checks the deployment files under deploy/ without a
// cluster, a Docker engine or a running Prometheus: `make deploy-check`
// runs its tests.
//
//   - deploy/kubernetes: every YAML document is decoded strictly (an
//     unknown or misspelt field fails) into the k8s.io/api type its
//     apiVersion and kind name (an unknown kind fails); kustomization.yaml
//     is rendered with kustomize's own engine (krusty, what `kubectl apply
//     -k` runs), and the rendered objects are decoded strictly again and
//     checked against each other, against deploy/Dockerfile's entrypoint and
//     against the flags of cmd/mcpblob/config.go (invariants_test.go lists the
//     invariants).
//   - deploy/compose.yaml: loaded by the Compose specification's Go loader
//     with schema validation and consistency checks on, with the variables
//     of deploy/example.env; then its SeaweedFS wiring, which the loader
//     cannot see (store_test.go): the nodes' endpoint and keys are the S3
//     gateway's, they wait for the ready step, the gateway, filer, master
//     and volume servers name each other, replication fits the volume
//     servers, the nodes reach no unauthenticated SeaweedFS service.
//   - deploy/s3-ready.sh: parsed by the system's POSIX shell (sh -n), and
//     run against the pinned SeaweedFS (`weed server -s3` from
//     <repo>/.tools/bin/weed, or MCPBLOB_WEED_BIN, on 127.0.0.1), which
//     fails the test, not skips it, when missing.
//   - deploy/prometheus: prometheus.yml decoded strictly into the part of
//     Prometheus' configuration it uses, and checked as Prometheus would;
//     alerts.yml parsed by Prometheus' own rule file parser.
//   - deploy/grafana: the dashboard decoded strictly into the part of the
//     dashboard JSON model it uses; every PromQL expression there and in
//     the alerts is parsed and may name only the metric families mcpblob
//     exports (metrics_test.go).
//   - deploy/nginx.conf and deploy/haproxy.cfg: `nginx -t` and `haproxy -c`
//     on a copy whose node names are rewritten to 127.0.0.1.
//
// Each check has a negative test that feeds it a broken input and expects
// it to fail. The package is its own module so that none of kustomize,
// k8s.io/api, compose-go or Prometheus enters mcpblob's module graph.
package validate
