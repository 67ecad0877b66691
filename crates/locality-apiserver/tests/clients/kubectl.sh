#!/usr/bin/env bash
# The client walk-through (steps.txt) with kubectl: $KUBECTL (a kubectl binary) against
# $KUBECONFIG in the namespace $NS. Prints "step: NAME" after each step that did what it
# should; stops at the first that did not.
set -euo pipefail
k() { "$KUBECTL" "$@"; }
step() { echo "step: $1"; }
fail() { echo "FAILED: $*" >&2; exit 1; }

k create namespace "$NS" >/dev/null
step create-namespace
k -n "$NS" create deployment web --image=registry.k8s.io/e2e-test-images/agnhost:2.53 \
  --replicas=2 --port=8080 -- /agnhost netexec --http-port=8080 >/dev/null
step create-deployment
watch_out=$(mktemp)
k -n "$NS" get pods -w -o name >"$watch_out" 2>&1 &
watch_pid=$!
trap 'kill $watch_pid 2>/dev/null || true; rm -f "$watch_out"' EXIT
step watch-started
k -n "$NS" expose deployment web --port=80 --target-port=8080 >/dev/null
step expose
cat <<YAML | k -n "$NS" apply -f - >/dev/null
apiVersion: v1
kind: Service
metadata:
  name: web-local
spec:
  selector: {app: web}
  internalTrafficPolicy: Local
  ports: [{port: 80, targetPort: 8080}]
YAML
[ "$(k -n "$NS" get service web-local -o jsonpath='{.spec.internalTrafficPolicy}')" = Local ] \
  || fail "apply: internalTrafficPolicy not stored"
step apply
for _ in $(seq 1 100); do
  wide=$(k -n "$NS" get pods -o wide --no-headers)
  [ "$(grep -c 'Running.*node-' <<<"$wide" || true)" = 2 ] && break
  sleep 0.3
done
[ "$(grep -c 'Running.*node-' <<<"$wide" || true)" = 2 ] || fail "get -o wide: $wide"
step get-wide
k -n "$NS" label deployment web tier=frontend >/dev/null
[ "$(k -n "$NS" get deployment web -o jsonpath='{.metadata.labels.tier}')" = frontend ] \
  || fail "label not stored"
# A label on the Deployment is not a template change: no new ReplicaSet.
sleep 1
[ "$(k -n "$NS" get replicasets -l app=web -o name | wc -l)" = 1 ] || fail "the label rolled the Deployment"
step label
k -n "$NS" wait --for=condition=Ready pods -l app=web --timeout=60s >/dev/null
step wait-ready
pod=$(k -n "$NS" get pods -l app=web -o jsonpath='{.items[0].metadata.name}')
k -n "$NS" logs "$pod" >/dev/null
step logs
kill $watch_pid 2>/dev/null || true
wait $watch_pid 2>/dev/null || true
[ "$(grep -c '^pod/web-' "$watch_out" || true)" -ge 2 ] || fail "get -w saw: $(cat "$watch_out")"
step watch-saw-pods
k delete namespace "$NS" --wait --timeout=60s >/dev/null
step delete-namespace
left=$(k -n "$NS" get pods -o name 2>/dev/null || true)
[ -z "$left" ] || fail "pods left after the namespace was deleted: $left"
k get namespace "$NS" >/dev/null 2>&1 && fail "namespace $NS still exists"
step pods-gone
