"""The client walk-through (steps.txt) with the official Kubernetes Python client
(`pip install kubernetes`) against $KUBECONFIG in the namespace $NS. Prints "step: NAME"
after each step that did what it should; stops at the first that did not."""

import os
import sys
import threading
import time

from kubernetes import client, config, watch
from kubernetes.client.rest import ApiException

NS = os.environ["NS"]
IMAGE = "registry.k8s.io/e2e-test-images/agnhost:2.53"


def step(name):
    print(f"step: {name}", flush=True)


def fail(why):
    print(f"FAILED: {why}", file=sys.stderr, flush=True)
    sys.exit(1)


def eventually(check, what, secs=60):
    end = time.time() + secs
    while time.time() < end:
        got = check()
        if got:
            return got
        time.sleep(0.3)
    fail(what)


config.load_kube_config(config_file=os.environ["KUBECONFIG"])
core = client.CoreV1Api()
apps = client.AppsV1Api()

core.create_namespace({"metadata": {"name": NS}})
step("create-namespace")

container = {
    "name": "agnhost",
    "image": IMAGE,
    "command": ["/agnhost", "netexec", "--http-port=8080"],
    "ports": [{"containerPort": 8080}],
}
apps.create_namespaced_deployment(
    NS,
    {
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [container]}},
        },
    },
)
step("create-deployment")

watched = []


def watch_pods():
    w = watch.Watch()
    for event in w.stream(core.list_namespaced_pod, NS, timeout_seconds=60):
        watched.append((event["type"], event["object"].metadata.name))
        if len({n for _, n in watched if n.startswith("web-")}) >= 2:
            w.stop()


watcher = threading.Thread(target=watch_pods, daemon=True)
watcher.start()
step("watch-started")

core.create_namespaced_service(
    NS,
    {
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]},
    },
)
step("expose")

# `kubectl apply --server-side`: a server-side apply patch.
core.patch_namespaced_service(
    "web-local",
    NS,
    {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "web-local"},
        "spec": {
            "selector": {"app": "web"},
            "internalTrafficPolicy": "Local",
            "ports": [{"port": 80, "targetPort": 8080}],
        },
    },
    field_manager="walkthrough",
    _content_type="application/apply-patch+yaml",
)
if core.read_namespaced_service("web-local", NS).spec.internal_traffic_policy != "Local":
    fail("apply: internalTrafficPolicy not stored")
step("apply")


def running_on_nodes():
    pods = core.list_namespaced_pod(NS, label_selector="app=web").items
    ok = [p for p in pods if p.status.phase == "Running" and (p.spec.node_name or "").startswith("node-")]
    return len(ok) == 2 and pods


pods = eventually(running_on_nodes, "two running pods on nodes")
step("get-wide")

apps.patch_namespaced_deployment("web", NS, {"metadata": {"labels": {"tier": "frontend"}}})
if apps.read_namespaced_deployment("web", NS).metadata.labels.get("tier") != "frontend":
    fail("label not stored")
# A label on the Deployment is not a template change: no new ReplicaSet.
time.sleep(1)
if len(apps.list_namespaced_replica_set(NS, label_selector="app=web").items) != 1:
    fail("the label rolled the Deployment")
step("label")


def all_ready():
    pods = core.list_namespaced_pod(NS, label_selector="app=web").items
    ready = [
        p for p in pods
        if any(c.type == "Ready" and c.status == "True" for c in (p.status.conditions or []))
    ]
    return len(pods) == 2 and len(ready) == 2


eventually(all_ready, "pods Ready")
step("wait-ready")

core.read_namespaced_pod_log(pods[0].metadata.name, NS)
step("logs")

watcher.join(timeout=30)
if len({n for t, n in watched if t == "ADDED" and n.startswith("web-")}) < 2:
    fail(f"the watch saw {watched}")
step("watch-saw-pods")

core.delete_namespace(NS)


def namespace_gone():
    try:
        core.read_namespace(NS)
        return False
    except ApiException as e:
        return e.status == 404


eventually(namespace_gone, f"namespace {NS} still exists")
step("delete-namespace")
left = core.list_namespaced_pod(NS).items
if left:
    fail(f"pods left after the namespace was deleted: {[p.metadata.name for p in left]}")
step("pods-gone")
