#!/usr/bin/env python3
"""An independent oracle for `locality matrix`: pod -> ClusterIP routes, as kube-proxy computes them.

Written from upstream Kubernetes Go source (not from this repository's Rust model) for the
randomized differential test in crates/locality/tests/matrix.rs (module `differential`).
Standard library only.

    python3 kube_proxy.py --kube-proxy-version 1.35 FILE.json [FILE.json ...]

Each FILE is a JSON `List` (or one object, or a JSON array) of Nodes, Services and
EndpointSlices, read "as if applied": the API server's defaulting is applied first. Prints
one JSON object: {FILE: {"NS/NAME/PORTNAME/PROTOCOL/PORT": {NODE: [OUTCOME, ...]}}}, where
each OUTCOME is {"verdict", "endpoints", "topology", "fallback", "reason", "sessionAffinity"}
(the client-IP affinity timeout in seconds of a delivered route, else null) and the list holds
every outcome Go's map order can produce (one when the order does not matter).

Scope (what can be compared exactly): IPv4, iptables mode, kube-proxy >= 1.34 (hints without
the Service annotation, PreferSameTrafficDistribution on), selector-less Services whose
EndpointSlices are given by hand (no EndpointSlice controller, no mirroring), a client pod
on each node dialling the Service's ClusterIP.
"""

import itertools
import json
import sys

LABEL_SERVICE_NAME = "kubernetes.io/service-name"
LABEL_PROXY_NAME = "service.kubernetes.io/service-proxy-name"
LABEL_HEADLESS = "service.kubernetes.io/headless"
LABEL_ZONE = "topology.kubernetes.io/zone"


def parse_minor(text):
    """'1.35' / 'v1.36.2' -> 36 (the major is always 1 here)."""
    text = text.lstrip("v")
    return int(text.split(".")[1])


def load_objects(path):
    with open(path, encoding="utf-8") as f:
        doc = json.load(f)
    if isinstance(doc, list):
        return doc
    if doc.get("kind", "").endswith("List") and "items" in doc:
        return doc["items"]
    return [doc]


# ----- API defaulting -------------------------------------------------------------------------


def default_service(svc):
    """pkg/apis/core/v1/defaults.go SetDefaults_Service (the fields kube-proxy reads)."""
    spec = svc.setdefault("spec", {})
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    for port in spec.get("ports") or []:
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        # A Service port's name is a plain string: absent means "".
        if port.get("name") is None:
            port["name"] = ""
    # internalTrafficPolicy nil -> Cluster for NodePort, LoadBalancer and ClusterIP.
    if spec.get("internalTrafficPolicy") is None and spec["type"] in (
        "NodePort",
        "LoadBalancer",
        "ClusterIP",
    ):
        spec["internalTrafficPolicy"] = "Cluster"
    # ExternallyAccessible -> externalTrafficPolicy Cluster (not needed for pod -> ClusterIP,
    # kept so UsesClusterEndpoints below reads the stored object).
    externally = spec["type"] in ("NodePort", "LoadBalancer") or bool(spec.get("externalIPs"))
    if externally and not spec.get("externalTrafficPolicy"):
        spec["externalTrafficPolicy"] = "Cluster"
    # sessionAffinity "" -> None (its config dropped); ClientIP without
    # sessionAffinityConfig.clientIP.timeoutSeconds -> v1.DefaultClientIPServiceAffinitySeconds.
    if not spec.get("sessionAffinity"):
        spec["sessionAffinity"] = "None"
    if spec["sessionAffinity"] == "None":
        spec.pop("sessionAffinityConfig", None)
    elif spec["sessionAffinity"] == "ClientIP":
        config = spec.get("sessionAffinityConfig") or {}
        client_ip = config.get("clientIP") or {}
        if client_ip.get("timeoutSeconds") is None:
            spec["sessionAffinityConfig"] = {"clientIP": {"timeoutSeconds": 10800}}
    return svc


def default_slice(slc):
    """pkg/apis/discovery/v1/defaults.go SetDefaults_EndpointPort: name nil -> "", protocol
    nil -> TCP. Endpoint conditions are NOT defaulted (nil stays nil)."""
    for port in slc.get("ports") or []:
        if port.get("name") is None:
            port["name"] = ""
        if port.get("protocol") is None:
            port["protocol"] = "TCP"
    return slc


# ----- kube-proxy's informers -----------------------------------------------------------------


def visible_to_kube_proxy(obj, kind, minor):
    """cmd/kube-proxy/app/server.go ProxyServer.Run: the informers' label selectors.

    Before 1.36 one factory with `!service.kubernetes.io/service-proxy-name,
    !service.kubernetes.io/headless` for both Services and EndpointSlices. From 1.36
    (kubernetes/kubernetes PR #134623) the Service informer selects
    `!service-proxy-name` and the EndpointSlice informer `!headless`."""
    labels = (obj.get("metadata") or {}).get("labels") or {}
    has_proxy_name = LABEL_PROXY_NAME in labels
    has_headless = LABEL_HEADLESS in labels
    if minor < 36:
        return not has_proxy_name and not has_headless
    if kind == "Service":
        return not has_proxy_name
    return not has_headless


# ----- EndpointSliceCache ---------------------------------------------------------------------


def cond(conditions, key, nil_value):
    value = conditions.get(key)
    return nil_value if value is None else bool(value)


def endpoints_map(slices, node_name, minor):
    """pkg/proxy/endpointslicecache.go endpointInfoByServicePort + addEndpoints, for slices
    walked in the given order (the caller tries every order: Go map order is random).

    Returns {(port name, protocol): {"IP:port": endpoint dict}}."""
    by_port = {}
    for slc in slices:
        for port in slc.get("ports") or []:
            if port.get("name") is None:
                continue  # "Ignoring port with nil name" (cannot happen after defaulting)
            if not port.get("port"):
                continue  # "Ignoring invalid endpoint port" (nil or 0)
            key = (port["name"], port["protocol"])
            epset = by_port.setdefault(key, {})
            for ep in slc.get("endpoints") or []:
                addresses = ep.get("addresses") or []
                if not addresses:
                    continue
                conditions = ep.get("conditions") or {}
                ready = cond(conditions, "ready", True)  # nil ready -> true
                serving = cond(conditions, "serving", True)  # nil serving -> true
                terminating = cond(conditions, "terminating", False)  # nil -> false
                hints = ep.get("hints") or {}
                zone_hints = {z["name"] for z in hints.get("forZones") or []}
                node_hints = {n["name"] for n in hints.get("forNodes") or []}
                ep_node = ep.get("nodeName")
                is_local = ep_node is not None and node_name != "" and ep_node == node_name
                info = {
                    "string": "%s:%d" % (addresses[0], port["port"]),
                    "ready": ready,
                    "serving": serving,
                    "terminating": terminating,
                    "local": is_local,
                    "zone_hints": zone_hints,
                    "node_hints": node_hints,
                }
                exists = info["string"] in epset
                # The overwrite rule changed in 1.36 (PR #135593): before, `!exists || isLocal`;
                # from 1.36, `!exists || !terminating`.
                overwrite = is_local if minor < 36 else not terminating
                if not exists or overwrite:
                    epset[info["string"]] = info
    return by_port


# ----- pkg/proxy/topology.go ------------------------------------------------------------------


def topology_mode_from_hints(endpoints, node_name, zone):
    """topology.go topologyModeFromHints (PreferSameTrafficDistribution enabled)."""
    has_ready = False
    has_for_node = False
    all_node_hints = True
    has_for_zone = False
    all_zone_hints = True
    for ep in endpoints:
        if not ep["ready"]:
            continue
        has_ready = True
        if not ep["node_hints"]:
            all_node_hints = False
        elif node_name in ep["node_hints"]:
            has_for_node = True
        if not ep["zone_hints"]:
            all_zone_hints = False
        elif zone in ep["zone_hints"]:
            has_for_zone = True
    if not has_ready:
        return ""
    if all_node_hints and has_for_node:
        return "PreferSameNode"
    if all_zone_hints and has_for_zone:
        return "PreferSameZone"
    return ""


def available_for_topology(ep, mode, node_name, zone):
    """topology.go availableForTopology."""
    if mode == "":
        return True
    if mode == "PreferSameNode":
        return node_name in ep["node_hints"]
    if mode == "PreferSameZone":
        return zone in ep["zone_hints"]
    return False


def categorize(endpoints, uses_cluster, uses_local, node_name, zone):
    """topology.go CategorizeEndpoints. Returns (cluster, local, has_any, topology_mode,
    cluster_fallback, local_fallback); cluster/local are None when not used."""
    cluster = local = None
    has_any = False
    mode = ""
    cluster_fallback = local_fallback = False
    if not endpoints:
        return cluster, local, has_any, mode, cluster_fallback, local_fallback
    if uses_cluster:
        mode = topology_mode_from_hints(endpoints, node_name, zone)
        cluster = [
            e for e in endpoints if e["ready"] and available_for_topology(e, mode, node_name, zone)
        ]
        if not cluster:
            cluster = [e for e in endpoints if e["serving"] and e["terminating"]]
            cluster_fallback = bool(cluster)
        if cluster:
            has_any = True
    if not uses_local:
        return cluster, local, has_any, mode, cluster_fallback, local_fallback
    local_ready = local_st = False
    for e in endpoints:
        if e["ready"]:
            has_any = True
            local_ready = local_ready or e["local"]
        elif e["serving"] and e["terminating"]:
            has_any = True
            local_st = local_st or e["local"]
    if local_ready:
        local = [e for e in endpoints if e["local"] and e["ready"]]
    elif local_st:
        local_fallback = True
        local = [e for e in endpoints if e["local"] and e["serving"] and e["terminating"]]
    return cluster, local, has_any, mode, cluster_fallback, local_fallback


# ----- the route ------------------------------------------------------------------------------


def pod_to_cluster_ip(svc, endpoints, node_name, zone):
    """pkg/proxy/iptables/proxier.go syncProxyRules, ClusterIP traffic from a pod: the
    internal policy chain is the Local one under internalTrafficPolicy: Local, else the
    Cluster one; no endpoints usable anywhere -> REJECT ("has no endpoints"); Local policy
    without local endpoints -> DROP ("has no local endpoints").

    Uses{Cluster,Local}Endpoints: pkg/proxy/serviceport.go BaseServicePortInfo (Cluster
    endpoints unless ITP Local and not externally accessible; Local endpoints under ITP
    Local, or ETP Local on an externally accessible Service)."""
    spec = svc["spec"]
    itp_local = spec.get("internalTrafficPolicy") == "Local"
    externally = spec["type"] in ("NodePort", "LoadBalancer") or bool(spec.get("externalIPs"))
    etp_local = externally and spec.get("externalTrafficPolicy") == "Local"
    # serviceport.go: "Even if the external traffic policy is Local, we need Cluster
    # endpoints to implement short circuiting."
    uses_cluster = (not itp_local) or externally
    uses_local = itp_local or etp_local
    cluster, local, has_any, mode, c_fb, l_fb = categorize(
        endpoints, uses_cluster, uses_local, node_name, zone
    )
    internal = local if itp_local else cluster
    out = {
        "verdict": None,
        "endpoints": [],
        "topology": "none",
        "fallback": None,
        "reason": None,
        "sessionAffinity": None,
    }
    if not has_any:
        out["verdict"] = "reject"
        out["reason"] = "no-endpoints" if not endpoints else "no-usable-endpoints"
        return out
    if not internal:
        out["verdict"] = "drop"
        out["reason"] = "no-local-endpoints"
        return out
    out["verdict"] = "deliver"
    out["endpoints"] = sorted(e["string"] for e in internal)
    # serviceport.go newBaseServiceInfo: stickyMaxAgeSeconds from
    # sessionAffinityConfig.clientIP.timeoutSeconds under ClientIP; proxier.go
    # writeServiceToEndpointRules adds the `-m recent` affinity rules to whichever chain
    # (cluster or local policy) the traffic takes, so every delivered route sticks.
    if spec.get("sessionAffinity") == "ClientIP":
        out["sessionAffinity"] = spec["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"]
    if itp_local:
        out["reason"] = "local-serving-terminating" if l_fb else "local-ready"
        out["fallback"] = "servingTerminating" if l_fb else None
    else:
        out["reason"] = "cluster-serving-terminating" if c_fb else "cluster-ready"
        out["fallback"] = "servingTerminating" if c_fb else None
        out["topology"] = mode or "none"
    return out


def not_proxied(reason):
    return {
        "verdict": "not-proxied",
        "endpoints": [],
        "topology": "none",
        "fallback": None,
        "reason": reason,
        "sessionAffinity": None,
    }


def evaluate(objects, minor):
    nodes = []
    services = []
    slices = []
    for obj in objects:
        kind = obj.get("kind")
        if kind == "Node":
            labels = (obj.get("metadata") or {}).get("labels") or {}
            nodes.append((obj["metadata"]["name"], labels.get(LABEL_ZONE, "")))
        elif kind == "Service":
            services.append(default_service(obj))
        elif kind == "EndpointSlice":
            slices.append(default_slice(obj))
    nodes.sort()
    result = {}
    for svc in services:
        meta = svc["metadata"]
        ns = meta.get("namespace") or "default"
        name = meta["name"]
        spec = svc["spec"]
        labels = meta.get("labels") or {}
        # The slices kube-proxy's cache holds for this Service (endpointSliceCacheKeys: the
        # kubernetes.io/service-name label names it; IPv4 only in this oracle).
        mine = [
            s
            for s in slices
            if ((s.get("metadata") or {}).get("namespace") or "default") == ns
            and ((s.get("metadata") or {}).get("labels") or {}).get(LABEL_SERVICE_NAME) == name
            and s.get("addressType") == "IPv4"
            and visible_to_kube_proxy(s, "EndpointSlice", minor)
        ]
        # Every order Go's map iteration may walk the slices in (few slices per Service).
        orders = list(itertools.permutations(mine)) or [()]
        for port in spec.get("ports") or []:
            key = "%s/%s/%s/%s/%d" % (ns, name, port["name"], port["protocol"], port["port"])
            per_node = {}
            for node_name, zone in nodes:
                outcomes = []
                for order in orders:
                    if spec.get("clusterIP") == "None":
                        # pkg/proxy/util ShouldSkipService skips headless Services (and the
                        # Service informer's field selector clusterIP!=None, PR #126769, never
                        # delivers them). Named "headless" even when a label would also hide
                        # it: both mean not proxied, the name is the tool's convention.
                        out = not_proxied("headless")
                    elif not visible_to_kube_proxy(svc, "Service", minor):
                        # Pre-1.36 either label hides it; from 1.36 only service-proxy-name.
                        reason = "service-proxy-name" if LABEL_PROXY_NAME in labels else "headless-label"
                        out = not_proxied(reason)
                    else:
                        by_port = endpoints_map(order, node_name, minor)
                        eps = sorted(
                            by_port.get((port["name"], port["protocol"]), {}).values(),
                            key=lambda e: e["string"],
                        )
                        out = pod_to_cluster_ip(svc, eps, node_name, zone)
                    if out not in outcomes:
                        outcomes.append(out)
                per_node[node_name] = outcomes
            result[key] = per_node
    return result


def main(argv):
    minor = None
    files = []
    i = 0
    while i < len(argv):
        if argv[i] == "--kube-proxy-version":
            minor = parse_minor(argv[i + 1])
            i += 2
        else:
            files.append(argv[i])
            i += 1
    if minor is None or not files:
        print(__doc__, file=sys.stderr)
        return 2
    if minor < 34:
        print("this oracle models kube-proxy 1.34 and newer", file=sys.stderr)
        return 2
    json.dump({f: evaluate(load_objects(f), minor) for f in files}, sys.stdout, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
