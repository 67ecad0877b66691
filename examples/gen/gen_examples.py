#!/usr/bin/env python3
"""Generates the audit examples in examples/ as `kubectl get -o json` style List dumps.

Deterministic (no randomness, fixed timestamps): run `python3 examples/gen/gen_examples.py`
from the repository root and the files are rewritten byte for byte. Each dump holds what
`kubectl get nodes,pods,services,endpointslices,daemonsets,deployments,replicasets -A -o json`
prints for the scenario; EndpointSlices are written as the EndpointSlice controller writes
them (conditions, zone, nodeName, targetRef, and hints where the controller sets them), so
that locality's LOC014 (slices differ from the controller) stays quiet.
"""

import hashlib
import json
import os
import sys

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
KUBELET = "v1.35.1"
T_NODE = "2026-11-02T08:00:00Z"
T_WORKLOAD = "2026-11-20T10:00:00Z"
T_POD = "2026-11-28T14:00:00Z"
T_SLICE = "2026-11-28T14:05:00Z"
MANAGED_BY = "endpointslice-controller.k8s.io"


def uid(*parts):
    h = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{h[0:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def suffix(*parts, n=5):
    alphabet = "bcdfghjklmnpqrstvwxz2456789"
    h = int(hashlib.sha1("/".join(parts).encode()).hexdigest(), 16)
    out = ""
    for _ in range(n):
        out += alphabet[h % len(alphabet)]
        h //= len(alphabet)
    return out


def node(name, zone, ip, pod_cidr, cpu="8", control_plane=False, taints=None, labels=None):
    lab = {
        "beta.kubernetes.io/arch": "amd64",
        "beta.kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "kubernetes.io/hostname": name,
        "kubernetes.io/os": "linux",
        "node.kubernetes.io/instance-type": "m6i.2xlarge" if not control_plane else "m6i.xlarge",
        "topology.kubernetes.io/region": "eu-west-1",
    }
    if zone:
        lab["topology.kubernetes.io/zone"] = zone
    if control_plane:
        lab["node-role.kubernetes.io/control-plane"] = ""
    lab.update(labels or {})
    spec = {"podCIDR": pod_cidr, "podCIDRs": [pod_cidr], "providerID": f"aws:///{zone or 'eu-west-1'}/i-{suffix(name, n=12)}"}
    t = list(taints or [])
    if control_plane:
        t.append({"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"})
    if t:
        spec["taints"] = t
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
            "creationTimestamp": T_NODE,
            "labels": lab,
            "name": name,
            "resourceVersion": str(1000 + int(hashlib.sha1(name.encode()).hexdigest()[:4], 16)),
            "uid": uid("node", name),
        },
        "spec": spec,
        "status": {
            "addresses": [{"address": ip, "type": "InternalIP"}, {"address": name, "type": "Hostname"}],
            "allocatable": {"cpu": cpu, "ephemeral-storage": "95491281146", "memory": "31Gi", "pods": "110"},
            "capacity": {"cpu": cpu, "ephemeral-storage": "103609340Ki", "memory": "32Gi", "pods": "110"},
            "conditions": [
                {"lastHeartbeatTime": "2026-12-01T09:58:00Z", "lastTransitionTime": T_NODE, "message": "kubelet has sufficient memory available", "reason": "KubeletHasSufficientMemory", "status": "False", "type": "MemoryPressure"},
                {"lastHeartbeatTime": "2026-12-01T09:58:00Z", "lastTransitionTime": T_NODE, "message": "kubelet has no disk pressure", "reason": "KubeletHasNoDiskPressure", "status": "False", "type": "DiskPressure"},
                {"lastHeartbeatTime": "2026-12-01T09:58:00Z", "lastTransitionTime": T_NODE, "message": "kubelet has sufficient PID available", "reason": "KubeletHasSufficientPID", "status": "False", "type": "PIDPressure"},
                {"lastHeartbeatTime": "2026-12-01T09:58:00Z", "lastTransitionTime": T_NODE, "message": "kubelet is posting ready status", "reason": "KubeletReady", "status": "True", "type": "Ready"},
            ],
            "nodeInfo": {
                "architecture": "amd64",
                "containerRuntimeVersion": "containerd://2.1.4",
                "kernelVersion": "6.12.48",
                "kubeProxyVersion": "",
                "kubeletVersion": KUBELET,
                "operatingSystem": "linux",
                "osImage": "Ubuntu 24.04.3 LTS",
            },
        },
    }


def container(name, image, ports, cpu="100m"):
    c = {
        "image": image,
        "imagePullPolicy": "IfNotPresent",
        "name": name,
        "resources": {"requests": {"cpu": cpu, "memory": "128Mi"}},
        "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File",
    }
    if ports:
        c["ports"] = [{"containerPort": p, "name": n, "protocol": "TCP"} for n, p in ports]
    return c


def pod_spec(containers, node_name=None, tolerations=None, node_selector=None, host_network=False):
    spec = {
        "containers": containers,
        "dnsPolicy": "ClusterFirstWithHostNet" if host_network else "ClusterFirst",
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
        "priority": 0,
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "serviceAccountName": "default",
        "terminationGracePeriodSeconds": 30,
    }
    if node_name:
        spec["nodeName"] = node_name
    if tolerations:
        spec["tolerations"] = tolerations
    if node_selector:
        spec["nodeSelector"] = node_selector
    if host_network:
        spec["hostNetwork"] = True
    return spec


class Cluster:
    def __init__(self):
        self.items = []
        self.nodes = {}  # name -> (zone, ip, pod counter, cidr prefix)
        self.pods = []

    def add_node(self, name, zone, index, **kw):
        ip = f"10.0.{index // 250}.{10 + index % 250}"
        cidr = f"10.244.{index}.0/24"
        self.nodes[name] = {"zone": zone, "ip": ip, "index": index, "next": 2}
        self.items.append(node(name, zone, ip, cidr, **kw))

    def pod_ip(self, node_name, host_network):
        n = self.nodes[node_name]
        if host_network:
            return n["ip"]
        ip = f"10.244.{n['index']}.{n['next']}"
        n["next"] += 1
        return ip

    def add_pod(self, ns, name, node_name, labels, spec, owner, ready=True, host_network=False, created=T_POD):
        ip = self.pod_ip(node_name, host_network)
        spec = dict(spec)
        spec["nodeName"] = node_name
        # The DaemonSet controller pins each pod to its node with a matchFields affinity.
        if owner["kind"] == "DaemonSet":
            spec["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node_name]}]}]}}}
        status = "True" if ready else "False"
        p = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "creationTimestamp": created,
                "generateName": name.rsplit("-", 1)[0] + "-",
                "labels": labels,
                "name": name,
                "namespace": ns,
                "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True, "kind": owner["kind"], "name": owner["name"], "uid": owner["uid"]}],
                "resourceVersion": str(50000 + len(self.pods)),
                "uid": uid("pod", ns, name),
            },
            "spec": spec,
            "status": {
                "conditions": [
                    {"lastProbeTime": None, "lastTransitionTime": created, "status": "True", "type": "PodReadyToStartContainers"},
                    {"lastProbeTime": None, "lastTransitionTime": created, "status": "True", "type": "Initialized"},
                    {"lastProbeTime": None, "lastTransitionTime": created, "status": status, "type": "Ready"},
                    {"lastProbeTime": None, "lastTransitionTime": created, "status": status, "type": "ContainersReady"},
                    {"lastProbeTime": None, "lastTransitionTime": created, "status": "True", "type": "PodScheduled"},
                ],
                "hostIP": self.nodes[node_name]["ip"],
                "hostIPs": [{"ip": self.nodes[node_name]["ip"]}],
                "phase": "Running",
                "podIP": ip,
                "podIPs": [{"ip": ip}],
                "qosClass": "Burstable",
                "startTime": created,
            },
        }
        self.pods.append(p)
        self.items.append(p)
        return p

    def daemonset(self, ns, name, labels, containers, nodes, tolerations=None, max_surge=None, host_network=False):
        ds_uid = uid("ds", ns, name)
        rolling = {"maxSurge": max_surge if max_surge is not None else 0, "maxUnavailable": 1}
        tmpl = {"metadata": {"labels": labels}, "spec": pod_spec(containers, tolerations=tolerations, host_network=host_network)}
        self.items.append({
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": {"annotations": {"deprecated.daemonset.template.generation": "3"}, "creationTimestamp": T_WORKLOAD, "generation": 3, "labels": labels, "name": name, "namespace": ns, "resourceVersion": "40001", "uid": ds_uid},
            "spec": {"revisionHistoryLimit": 10, "selector": {"matchLabels": labels}, "template": tmpl, "updateStrategy": {"rollingUpdate": rolling, "type": "RollingUpdate"}},
            "status": {"currentNumberScheduled": len(nodes), "desiredNumberScheduled": len(nodes), "numberAvailable": len(nodes), "numberMisscheduled": 0, "numberReady": len(nodes), "observedGeneration": 3, "updatedNumberScheduled": len(nodes)},
        })
        pods = []
        for n in nodes:
            pname = f"{name}-{suffix(ns, name, n)}"
            pl = dict(labels)
            pl["controller-revision-hash"] = "6c7d9b8f4"
            pl["pod-template-generation"] = "3"
            pods.append(self.add_pod(ns, pname, n, pl, tmpl["spec"], {"kind": "DaemonSet", "name": name, "uid": ds_uid}, host_network=host_network))
        return pods

    def deployment(self, ns, name, labels, containers, nodes, tolerations=None, node_selector=None):
        dep_uid = uid("deploy", ns, name)
        h = suffix(ns, name, "hash", n=10)
        rs_name = f"{name}-{h}"
        rs_uid = uid("rs", ns, rs_name)
        tmpl = {"metadata": {"labels": labels}, "spec": pod_spec(containers, tolerations=tolerations, node_selector=node_selector)}
        replicas = len(nodes)
        self.items.append({
            "apiVersion": "apps/v1",
            "kind": "Deployment",
            "metadata": {"annotations": {"deployment.kubernetes.io/revision": "1"}, "creationTimestamp": T_WORKLOAD, "generation": 1, "labels": labels, "name": name, "namespace": ns, "resourceVersion": "40100", "uid": dep_uid},
            "spec": {"progressDeadlineSeconds": 600, "replicas": replicas, "revisionHistoryLimit": 10, "selector": {"matchLabels": labels}, "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"}, "template": tmpl},
            "status": {"availableReplicas": replicas, "observedGeneration": 1, "readyReplicas": replicas, "replicas": replicas, "updatedReplicas": replicas},
        })
        rs_labels = dict(labels)
        rs_labels["pod-template-hash"] = h
        self.items.append({
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"annotations": {"deployment.kubernetes.io/desired-replicas": str(replicas), "deployment.kubernetes.io/max-replicas": str(replicas + 1), "deployment.kubernetes.io/revision": "1"}, "creationTimestamp": T_WORKLOAD, "generation": 1, "labels": rs_labels, "name": rs_name, "namespace": ns, "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": True, "controller": True, "kind": "Deployment", "name": name, "uid": dep_uid}], "resourceVersion": "40101", "uid": rs_uid},
            "spec": {"replicas": replicas, "selector": {"matchLabels": rs_labels}, "template": {"metadata": {"labels": rs_labels}, "spec": tmpl["spec"]}},
            "status": {"availableReplicas": replicas, "fullyLabeledReplicas": replicas, "observedGeneration": 1, "readyReplicas": replicas, "replicas": replicas},
        })
        pods = []
        for i, n in enumerate(nodes):
            pname = f"{rs_name}-{suffix(ns, name, str(i))}"
            pods.append(self.add_pod(ns, pname, n, dict(rs_labels), tmpl["spec"], {"kind": "ReplicaSet", "name": rs_name, "uid": rs_uid}))
        return pods

    def service(self, ns, name, selector, ports, cluster_ip, itp="Cluster", etp=None, svc_type="ClusterIP", traffic_distribution=None, annotations=None):
        spec = {
            "clusterIP": cluster_ip,
            "clusterIPs": [cluster_ip],
            "internalTrafficPolicy": itp,
            "ipFamilies": ["IPv4"],
            "ipFamilyPolicy": "SingleStack",
            "ports": [{"name": n, "port": p, "protocol": "TCP", "targetPort": t} for n, p, t in ports],
            "selector": selector,
            "sessionAffinity": "None",
            "type": svc_type,
        }
        if etp:
            spec["externalTrafficPolicy"] = etp
        if traffic_distribution:
            spec["trafficDistribution"] = traffic_distribution
        meta = {"creationTimestamp": T_WORKLOAD, "name": name, "namespace": ns, "resourceVersion": "40200", "uid": uid("svc", ns, name)}
        if annotations:
            meta["annotations"] = annotations
        svc = {"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec, "status": {"loadBalancer": {}}}
        self.items.append(svc)
        return svc

    def slice_for(self, svc, pods, port_numbers, hints=None):
        """One controller-managed slice with every pod; `hints(pod)` gives the hints or None."""
        ns = svc["metadata"]["namespace"]
        name = svc["metadata"]["name"]
        endpoints = []
        for p in sorted(pods, key=lambda p: p["status"]["podIP"]):
            ready = all(c["status"] == "True" for c in p["status"]["conditions"] if c["type"] == "Ready")
            n = p["spec"]["nodeName"]
            ep = {
                "addresses": [p["status"]["podIP"]],
                "conditions": {"ready": ready, "serving": ready, "terminating": False},
                "nodeName": n,
                "targetRef": {"kind": "Pod", "name": p["metadata"]["name"], "namespace": ns, "uid": p["metadata"]["uid"]},
            }
            zone = self.nodes[n]["zone"]
            if zone:
                ep["zone"] = zone
            if hints:
                h = hints(p)
                if h:
                    ep["hints"] = h
            endpoints.append(ep)
        sname = f"{name}-{suffix(ns, name, 'slice')}"
        self.items.append({
            "addressType": "IPv4",
            "apiVersion": "discovery.k8s.io/v1",
            "endpoints": endpoints,
            "kind": "EndpointSlice",
            "metadata": {
                "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": T_SLICE},
                "creationTimestamp": T_SLICE,
                "generateName": f"{name}-",
                "generation": 1,
                "labels": {"endpointslice.kubernetes.io/managed-by": MANAGED_BY, "kubernetes.io/service-name": name},
                "name": sname,
                "namespace": ns,
                "ownerReferences": [{"apiVersion": "v1", "blockOwnerDeletion": True, "controller": True, "kind": "Service", "name": name, "uid": svc["metadata"]["uid"]}],
                "resourceVersion": "40300",
                "uid": uid("slice", ns, sname),
            },
            "ports": [{"name": n, "port": p, "protocol": "TCP"} for n, p in port_numbers],
        })

    def kube_system(self, control_planes, workers):
        """kube-proxy on every node (hostNetwork) and CoreDNS: what every real dump has."""
        all_nodes = control_planes + workers
        self.daemonset(
            "kube-system", "kube-proxy", {"k8s-app": "kube-proxy"},
            [container("kube-proxy", "registry.k8s.io/kube-proxy:v1.35.1", [], cpu="50m")],
            all_nodes, tolerations=[{"operator": "Exists"}], max_surge=0, host_network=True,
        )
        dns = self.deployment(
            "kube-system", "coredns", {"k8s-app": "kube-dns"},
            [container("coredns", "registry.k8s.io/coredns/coredns:v1.12.1", [("dns", 53), ("dns-tcp", 53), ("metrics", 9153)])],
            workers[:2],
        )
        svc = self.service("kube-system", "kube-dns", {"k8s-app": "kube-dns"}, [("dns-tcp", 53, 53), ("metrics", 9153, 9153)], "10.96.0.10")
        self.slice_for(svc, dns, [("dns-tcp", 53), ("metrics", 9153)])

    def write(self, filename, header):
        doc = {"apiVersion": "v1", "items": self.items, "kind": "List", "metadata": {"resourceVersion": ""}}
        path = os.path.join(OUT, filename)
        with open(path, "w") as f:
            json.dump(doc, f, indent=4, sort_keys=False)
            f.write("\n")
        print(f"wrote {path}: {len(self.items)} objects ({header})", file=sys.stderr)


ZONES = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]


def telemetry():
    """3 control-plane + 27 workers; workers ingress-1..3 carry a dedicated=ingress:NoSchedule
    taint the telemetry agent does not tolerate; the gateway runs there and sends its traces to
    the agent through an internalTrafficPolicy: Local Service: those three nodes are blind."""
    c = Cluster()
    cps = [f"cp-{i}" for i in range(1, 4)]
    workers = [f"worker-{i:02d}" for i in range(1, 25)]
    ingress = [f"ingress-{i}" for i in range(1, 4)]
    idx = 1
    for i, n in enumerate(cps):
        c.add_node(n, ZONES[i % 3], idx, control_plane=True, cpu="4")
        idx += 1
    for i, n in enumerate(workers):
        c.add_node(n, ZONES[i % 3], idx)
        idx += 1
    taint = [{"effect": "NoSchedule", "key": "dedicated", "value": "ingress"}]
    for i, n in enumerate(ingress):
        c.add_node(n, ZONES[i % 3], idx, taints=taint, labels={"node.example.com/pool": "ingress"})
        idx += 1
    c.kube_system(cps, workers + ingress)
    # The agent tolerates the control plane, not the ingress pool.
    agent = c.daemonset(
        "telemetry", "otel-agent", {"app.kubernetes.io/name": "otel-agent"},
        [container("otel-collector", "otel/opentelemetry-collector-contrib:0.139.0", [("otlp-grpc", 4317), ("otlp-http", 4318)])],
        cps + workers,
        tolerations=[{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}],
    )
    svc = c.service("telemetry", "otel-agent", {"app.kubernetes.io/name": "otel-agent"}, [("otlp-grpc", 4317, "otlp-grpc"), ("otlp-http", 4318, "otlp-http")], "10.96.40.17", itp="Local")
    c.slice_for(svc, agent, [("otlp-grpc", 4317), ("otlp-http", 4318)])
    # The gateway: pinned to the ingress pool, sends OTLP to otel-agent.telemetry:4317.
    gw = c.deployment(
        "edge", "gateway", {"app.kubernetes.io/name": "gateway"},
        [container("envoy", "envoyproxy/envoy:v1.36.2", [("http", 8080), ("admin", 9901)], cpu="500m")],
        ingress * 2,
        tolerations=[{"effect": "NoSchedule", "key": "dedicated", "operator": "Equal", "value": "ingress"}],
        node_selector={"node.example.com/pool": "ingress"},
    )
    gsvc = c.service("edge", "gateway", {"app.kubernetes.io/name": "gateway"}, [("http", 80, "http")], "10.96.12.80")
    c.slice_for(gsvc, gw, [("http", 8080)])
    # Ordinary workloads on the workers (clients too).
    shop = c.deployment(
        "shop", "storefront", {"app.kubernetes.io/name": "storefront"},
        [container("web", "ghcr.io/example/storefront:4.2.0", [("http", 8080)])],
        workers,
    )
    ssvc = c.service("shop", "storefront", {"app.kubernetes.io/name": "storefront"}, [("http", 80, "http")], "10.96.20.20")
    c.slice_for(ssvc, shop, [("http", 8080)])
    c.write("telemetry-30-nodes.json", "telemetry agent behind ITP Local, 3 tainted ingress workers")


def two_replicas():
    """Six workers in three zones; a 2-replica Deployment behind internalTrafficPolicy: Local
    called from a checkout Deployment that runs everywhere: four nodes are blind."""
    c = Cluster()
    nodes = [f"node-{i}" for i in range(1, 7)]
    for i, n in enumerate(nodes):
        c.add_node(n, ZONES[i % 3], i + 1)
    c.kube_system([], nodes)
    fraud = c.deployment(
        "payments", "fraud-score", {"app": "fraud-score"},
        [container("model", "ghcr.io/example/fraud-score:2.7.1", [("grpc", 9000)], cpu="1")],
        nodes[:2],
    )
    svc = c.service("payments", "fraud-score", {"app": "fraud-score"}, [("grpc", 9000, "grpc")], "10.96.31.9", itp="Local")
    c.slice_for(svc, fraud, [("grpc", 9000)])
    checkout = c.deployment(
        "payments", "checkout", {"app": "checkout"},
        [container("api", "ghcr.io/example/checkout:5.0.3", [("http", 8080)])],
        nodes,
    )
    csvc = c.service("payments", "checkout", {"app": "checkout"}, [("http", 80, "http")], "10.96.31.8")
    c.slice_for(csvc, checkout, [("http", 8080)])
    c.write("two-replicas-local.json", "2-replica Deployment behind ITP Local on 6 nodes")


def prefer_close():
    """trafficDistribution: PreferClose on Kubernetes 1.35: the deprecated alias of
    PreferSameZone. Endpoints in every zone, so zone hints are set and nothing drops."""
    c = Cluster()
    nodes = [f"node-{i}" for i in range(1, 7)]
    for i, n in enumerate(nodes):
        c.add_node(n, ZONES[i % 3], i + 1)
    c.kube_system([], nodes)
    cache = c.deployment(
        "catalog", "catalog-cache", {"app": "catalog-cache"},
        [container("redis", "redis:8.2", [("redis", 6379)])],
        nodes[:3],
    )
    svc = c.service("catalog", "catalog-cache", {"app": "catalog-cache"}, [("redis", 6379, "redis")], "10.96.50.5", traffic_distribution="PreferClose")
    c.slice_for(svc, cache, [("redis", 6379)], hints=lambda p: {"forZones": [{"name": c.nodes[p["spec"]["nodeName"]]["zone"]}]})
    api = c.deployment(
        "catalog", "catalog-api", {"app": "catalog-api"},
        [container("api", "ghcr.io/example/catalog-api:1.9.0", [("http", 8080)])],
        nodes,
    )
    asvc = c.service("catalog", "catalog-api", {"app": "catalog-api"}, [("http", 80, "http")], "10.96.50.6")
    c.slice_for(asvc, api, [("http", 8080)])
    c.write("prefer-close.json", "trafficDistribution: PreferClose")


def auto_too_few():
    """topology-mode: Auto with 2 endpoints for 3 zones: the EndpointSlice controller's
    safeguard leaves the slice without hints, so routing is cluster-wide."""
    c = Cluster()
    nodes = [f"node-{i}" for i in range(1, 7)]
    for i, n in enumerate(nodes):
        c.add_node(n, ZONES[i % 3], i + 1)
    c.kube_system([], nodes)
    search = c.deployment(
        "search", "search-api", {"app": "search-api"},
        [container("api", "ghcr.io/example/search-api:3.1.4", [("http", 8080)])],
        nodes[:2],
    )
    svc = c.service("search", "search-api", {"app": "search-api"}, [("http", 80, "http")], "10.96.60.6", annotations={"service.kubernetes.io/topology-mode": "Auto"})
    c.slice_for(svc, search, [("http", 8080)])
    fe = c.deployment(
        "search", "frontend", {"app": "frontend"},
        [container("web", "ghcr.io/example/search-frontend:3.1.4", [("http", 8080)])],
        nodes,
    )
    fsvc = c.service("search", "frontend", {"app": "frontend"}, [("http", 80, "http")], "10.96.60.7")
    c.slice_for(fsvc, fe, [("http", 8080)])
    c.write("auto-too-few-endpoints.json", "topology-mode: Auto with 2 endpoints in 3 zones")


def telemetry_incident():
    """The telemetry incident, for `locality simulate`: 3 control-plane + 27 workers; the
    monitoring agent DaemonSet `monitoring/node-agent` (maxSurge 0, maxUnavailable 1, a
    tcpSocket readiness probe) behind the internalTrafficPolicy: Local Service
    `monitoring/node-agent`; the `edge/gateway` Deployment (12 replicas on 12 workers) sends
    its traces there. Rolling the agent blinds each worker in turn."""
    c = Cluster()
    cps = [f"cp-{i}" for i in range(1, 4)]
    workers = [f"worker-{i:02d}" for i in range(1, 28)]
    idx = 1
    for i, n in enumerate(cps):
        c.add_node(n, ZONES[i % 3], idx, control_plane=True, cpu="4")
        idx += 1
    for i, n in enumerate(workers):
        c.add_node(n, ZONES[i % 3], idx)
        idx += 1
    c.kube_system(cps, workers)
    agent_container = container("node-agent", "ghcr.io/example/node-agent:2.7.1", [("otlp-grpc", 4317)])
    agent_container["readinessProbe"] = {"tcpSocket": {"port": "otlp-grpc"}, "initialDelaySeconds": 2, "periodSeconds": 5, "failureThreshold": 3, "successThreshold": 1, "timeoutSeconds": 1}
    agent = c.daemonset(
        "monitoring", "node-agent", {"app.kubernetes.io/name": "node-agent"},
        [agent_container],
        workers,
    )
    svc = c.service("monitoring", "node-agent", {"app.kubernetes.io/name": "node-agent"}, [("otlp-grpc", 4317, "otlp-grpc")], "10.96.50.9", itp="Local")
    c.slice_for(svc, agent, [("otlp-grpc", 4317)])
    gw_container = container("envoy", "envoyproxy/envoy:v1.36.2", [("http", 8080)], cpu="500m")
    gw_container["readinessProbe"] = {"httpGet": {"path": "/ready", "port": 8080}, "periodSeconds": 5}
    gw_container["lifecycle"] = {"preStop": {"exec": {"command": ["/bin/sh", "-c", "sleep 10"]}}}
    gw = c.deployment(
        "edge", "gateway", {"app.kubernetes.io/name": "gateway"},
        [gw_container],
        [workers[i] for i in (0, 1, 2, 4, 6, 8, 10, 13, 16, 19, 22, 25)],
    )
    gsvc = c.service("edge", "gateway", {"app.kubernetes.io/name": "gateway"}, [("http", 80, "http")], "10.96.12.80")
    c.slice_for(gsvc, gw, [("http", 8080)])
    c.write("telemetry-incident.json", "monitoring agent (maxSurge 0) behind ITP Local, gateway clients")


if __name__ == "__main__":
    telemetry()
    telemetry_incident()
    two_replicas()
    prefer_close()
    auto_too_few()
