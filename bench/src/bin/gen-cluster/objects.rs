//! JSON for each object, shaped like `kubectl get -o json` prints it (keys sorted, as
//! Go's encoder sorts map keys of unstructured objects; serde_json's default `Map` is a
//! `BTreeMap`, so the serializer sorts them the same way).

use serde_json::{Map, Value, json};

use crate::plan::{
    Detail, Family, INSTANCE_TYPES, Item, NOW, Namespace, Node, Plan, Pod, PodSet, PodState, REGION, Service,
    SetKind, SvcType, stream,
};
use crate::rng::{Rng, timestamp};

/// Under `--detail typical`, the share of objects written with managedFields.
const MANAGED_FRACTION: f64 = 0.03;

impl Plan {
    /// The JSON of one item.
    pub fn build(&self, item: Item) -> Value {
        let mut v = self.build_full(item);
        // `kubectl get -o json` hides managedFields unless `--show-managed-fields`; in a
        // typical dump only a few objects carry them (pods decide for themselves, below).
        if self.typical()
            && !matches!(item, Item::Pod(_))
            && !self.keep_managed(item)
            && let Some(m) = v["metadata"].as_object_mut()
        {
            m.remove("managedFields");
        }
        v
    }

    fn typical(&self) -> bool {
        self.cfg.detail == Detail::Typical
    }

    /// Whether a non-pod object keeps its managedFields under `--detail typical`: about
    /// 3%, from a stream of its own so that no other field changes.
    fn keep_managed(&self, item: Item) -> bool {
        let (kind, index) = match item {
            Item::Namespace(i) => (stream::NAMESPACE, i as u64),
            Item::Node(i) => (stream::NODE, i as u64),
            Item::DaemonSet(s) | Item::Deployment(s) => (stream::SET, s as u64),
            Item::ReplicaSet(s) => (stream::SET, s as u64 + (1 << 30)),
            Item::Pod(p) => (stream::POD, p as u64),
            Item::Service(s) => (stream::SERVICE, s as u64),
            Item::Slice(s, f, c) => (stream::SLICE, ((s as u64) << 12) + ((f as u64) << 10) + c as u64),
        };
        Rng::stream(self.cfg.seed, kind, index + (9 << 40)).chance(MANAGED_FRACTION)
    }

    fn build_full(&self, item: Item) -> Value {
        match item {
            Item::Namespace(i) => namespace(&self.namespaces[i], self.cfg.seed),
            Item::Node(i) => self.node(i),
            Item::DaemonSet(s) => self.daemonset(s),
            Item::Deployment(s) => self.deployment(s),
            Item::ReplicaSet(s) => self.replicaset(s),
            Item::Pod(p) => self.pod(p),
            Item::Service(s) => self.service(s),
            Item::Slice(s, f, c) => self.slice(s, f, c),
        }
    }

    fn ns(&self, i: usize) -> &str {
        &self.namespaces[i].name
    }

    fn node(&self, i: usize) -> Value {
        let n: &Node = &self.nodes[i];
        let mut r = Rng::stream(self.cfg.seed, stream::NODE, i as u64 + (1 << 40));
        let zone = &self.zones[n.zone];
        let (itype, cpu, mem) = INSTANCE_TYPES[n.instance];
        let mut labels = Map::new();
        for (k, v) in [
            ("beta.kubernetes.io/arch", "amd64"),
            ("beta.kubernetes.io/instance-type", itype),
            ("beta.kubernetes.io/os", "linux"),
            ("failure-domain.beta.kubernetes.io/region", REGION),
            ("failure-domain.beta.kubernetes.io/zone", zone.as_str()),
            ("kubernetes.io/arch", "amd64"),
            ("kubernetes.io/hostname", n.name.as_str()),
            ("kubernetes.io/os", "linux"),
            ("node.kubernetes.io/instance-type", itype),
            ("topology.kubernetes.io/region", REGION),
            ("topology.kubernetes.io/zone", zone.as_str()),
        ] {
            labels.insert(k.into(), v.into());
        }
        if n.control_plane {
            labels.insert("node-role.kubernetes.io/control-plane".into(), "".into());
            labels.insert(
                "node.kubernetes.io/exclude-from-external-load-balancers".into(),
                "".into(),
            );
        } else {
            labels.insert(
                "node.example.com/pool".into(),
                format!("pool-{}", ["general", "compute", "memory"][n.instance % 3]).into(),
            );
        }
        let heartbeat = timestamp(NOW - r.below(40) as i64);
        let since = timestamp(n.created + 30);
        let cond = |t: &str, status: &str, reason: &str, message: &str| {
            json!({"lastHeartbeatTime": heartbeat, "lastTransitionTime": since,
                   "message": message, "reason": reason, "status": status, "type": t})
        };
        let mut conditions = vec![
            cond(
                "MemoryPressure",
                "False",
                "KubeletHasSufficientMemory",
                "kubelet has sufficient memory available",
            ),
            cond(
                "DiskPressure",
                "False",
                "KubeletHasNoDiskPressure",
                "kubelet has no disk pressure",
            ),
            cond(
                "PIDPressure",
                "False",
                "KubeletHasSufficientPID",
                "kubelet has sufficient PID available",
            ),
        ];
        if n.ready {
            conditions.push(cond(
                "Ready",
                "True",
                "KubeletReady",
                "kubelet is posting ready status",
            ));
        } else {
            conditions.push(cond(
                "Ready",
                "Unknown",
                "NodeStatusUnknown",
                "Kubelet stopped posting node status.",
            ));
        }
        let mut images = Vec::new();
        let n_images = 4 + r.below(6) as usize;
        for k in 0..n_images {
            let repo = match k {
                0 => "registry.k8s.io/pause".to_string(),
                1 => "quay.io/prometheus/node-exporter".to_string(),
                2 => "cr.fluentbit.io/fluent/fluent-bit".to_string(),
                _ => format!(
                    "registry.example.com/{}/{}",
                    ["payments", "search", "catalog", "platform"][k % 4],
                    ["api", "worker", "web", "cache"][(k / 4) % 4]
                ),
            };
            images.push(json!({
                "names": [format!("{repo}@sha256:{}", r.hex(64)), format!("{repo}:v{}.{}.{}", r.below(4), r.below(30), r.below(10))],
                "sizeBytes": 5_000_000 + r.below(400_000_000),
            }));
        }
        let mut spec = json!({
            "podCIDR": n.pod_cidr4,
            "podCIDRs": [n.pod_cidr4, n.pod_cidr6],
            "providerID": format!("aws:///{zone}/i-{}", r.hex(17)),
        });
        if n.control_plane {
            spec["taints"] =
                json!([{"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}]);
        } else if !n.ready {
            spec["taints"] = json!([
                {"effect": "NoSchedule", "key": "node.kubernetes.io/unreachable", "timeAdded": timestamp(NOW - 900)},
                {"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "timeAdded": timestamp(NOW - 895)}
            ]);
        }
        let status = json!({
            "addresses": [
                {"address": n.ipv4, "type": "InternalIP"},
                {"address": n.ipv6, "type": "InternalIP"},
                {"address": format!("ip-{}.ec2.internal", n.ipv4.replace('.', "-")), "type": "InternalDNS"},
                {"address": n.name, "type": "Hostname"}
            ],
            "allocatable": {"cpu": format!("{}m", cpu * 1000 - 90), "ephemeral-storage": "95551679124",
                            "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                            "memory": format!("{}Ki", mem as u64 * 1024 * 1024 - 737_280), "pods": "110"},
            "capacity": {"cpu": cpu.to_string(), "ephemeral-storage": "103668716Ki",
                         "hugepages-1Gi": "0", "hugepages-2Mi": "0",
                         "memory": format!("{}Ki", mem as u64 * 1024 * 1024 - 215_040), "pods": "110"},
            "conditions": conditions,
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "features": {"supplementalGroupsPolicy": true},
            "images": images,
            "nodeInfo": {
                "architecture": "amd64", "bootID": r.uuid(),
                "containerRuntimeVersion": "containerd://2.1.3",
                "kernelVersion": "6.12.40-63.114.amzn2023.x86_64",
                "kubeProxyVersion": "", "kubeletVersion": n.kubelet,
                "machineID": r.hex(32), "operatingSystem": "linux",
                "osImage": "Amazon Linux 2023.8.20250715", "systemUUID": r.uuid()
            },
            "runtimeHandlers": [
                {"features": {"recursiveReadOnlyMounts": true, "userNamespaces": true}, "name": "runc"},
                {"features": {"recursiveReadOnlyMounts": true, "userNamespaces": true}, "name": ""}
            ]
        });
        let mut annotations = Map::new();
        annotations.insert(
            "alpha.kubernetes.io/provided-node-ip".into(),
            format!("{},{}", n.ipv4, n.ipv6).into(),
        );
        annotations.insert("node.alpha.kubernetes.io/ttl".into(), "0".into());
        annotations.insert(
            "volumes.kubernetes.io/controller-managed-attach-detach".into(),
            "true".into(),
        );
        let labels = Value::Object(labels);
        let managed = json!([
            managed_entry(
                "kubelet",
                "Update",
                None,
                n.created + 5,
                &json!({"metadata": {"annotations": annotations, "labels": labels}}),
                3
            ),
            managed_entry(
                "kube-controller-manager",
                "Update",
                None,
                n.created + 40,
                &json!({"spec": {"podCIDR": "", "podCIDRs": [""]}}),
                3
            ),
            managed_entry(
                "kubelet",
                "Update",
                Some("status"),
                NOW - 60,
                &json!({"status": status}),
                2
            ),
        ]);
        json!({
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "annotations": annotations,
                "creationTimestamp": timestamp(n.created),
                "labels": labels,
                "managedFields": managed,
                "name": n.name,
                "resourceVersion": r.range(1_000_000, 99_999_999).to_string(),
                "uid": r.uuid(),
            },
            "spec": spec,
            "status": status,
        })
    }

    /// Pod template (Deployment/DaemonSet/ReplicaSet `spec.template`) and the basis of
    /// each pod's spec.
    fn pod_spec(&self, s: usize) -> Value {
        let set = &self.sets[s];
        let mut r = Rng::stream(self.cfg.seed, stream::SET, s as u64 + (1 << 40));
        let ports: Vec<Value> = set
            .ports
            .iter()
            .map(|p| {
                let mut v = json!({"containerPort": p.port, "name": p.name, "protocol": p.protocol});
                if set.host_network {
                    v["hostPort"] = json!(p.port);
                }
                v
            })
            .collect();
        let probe_port = set
            .ports
            .iter()
            .find(|p| p.protocol == "TCP")
            .map(|p| p.name)
            .unwrap_or("metrics");
        let probe = |path: &str, delay: u64| {
            json!({"failureThreshold": 3,
                   "httpGet": {"path": path, "port": probe_port, "scheme": "HTTP"},
                   "initialDelaySeconds": delay, "periodSeconds": 10, "successThreshold": 1, "timeoutSeconds": 1})
        };
        let cpu = r.pick(&["50m", "100m", "250m", "500m", "1"]).to_string();
        let mem = r.pick(&["64Mi", "128Mi", "256Mi", "512Mi", "1Gi"]).to_string();
        let full = !self.typical();
        let mut env = Vec::new();
        if full {
            env.push(json!({"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}}));
            env.push(json!({"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}));
        }
        // Typical: one or two plain variables, and on fewer containers (below).
        for k in 0..r.below(2) + u64::from(!full) {
            let name = ["LOG_LEVEL", "GOMAXPROCS", "OTEL_SERVICE_NAME"][k as usize];
            let value = ["info", "2", set.name.as_str()][k as usize];
            env.push(json!({"name": name, "value": value}));
        }
        let mut main = json!({
            "image": set.image,
            "imagePullPolicy": "IfNotPresent",
            "name": if set.kind == SetKind::DaemonSet { set.name.as_str() } else { "app" },
            "ports": ports,
            "resources": {"limits": {"memory": mem}, "requests": {"cpu": cpu, "memory": mem}},
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File",
            "volumeMounts": [{"mountPath": "/etc/app", "name": "config", "readOnly": true}],
        });
        // (share under --detail full, share under --detail typical)
        let share = |f: f64, t: f64| if full { f } else { t };
        if r.chance(share(0.3, 0.2)) {
            main["env"] = Value::Array(env);
        }
        let config_volume = r.chance(share(0.4, 0.15));
        if !config_volume {
            main.as_object_mut().expect("container").remove("volumeMounts");
        }
        if r.chance(share(0.6, 0.5)) {
            main["readinessProbe"] = probe("/ready", 5);
        }
        if r.chance(share(0.3, 0.15)) {
            main["livenessProbe"] = probe("/healthz", 10);
        }
        let mut containers = vec![main];
        if set.sidecar {
            containers.push(json!({
                "image": "registry.example.com/platform/log-shipper:v2.4.0",
                "imagePullPolicy": "IfNotPresent",
                "name": "log-shipper",
                "resources": {"limits": {"memory": "64Mi"}, "requests": {"cpu": "10m", "memory": "64Mi"}},
                "terminationMessagePath": "/dev/termination-log",
                "terminationMessagePolicy": "File",
            }));
        }
        let mut spec = json!({
            "containers": containers,
            "dnsPolicy": if set.host_network { "ClusterFirstWithHostNet" } else { "ClusterFirst" },
            "restartPolicy": "Always",
            "schedulerName": "default-scheduler",
            "securityContext": {},
            "serviceAccount": set.name,
            "serviceAccountName": set.name,
            "terminationGracePeriodSeconds": 30,
            "volumes": [],
        });
        if config_volume {
            spec["volumes"] = json!([{"configMap": {"defaultMode": 420, "name": format!("{}-config", set.name)}, "name": "config"}]);
        }
        if set.host_network {
            spec["hostNetwork"] = json!(true);
        }
        if set.kind == SetKind::DaemonSet {
            let mut tol = vec![
                json!({"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure", "operator": "Exists"}),
            ];
            if set.on_control_plane {
                tol.push(json!({"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane", "operator": "Exists"}));
            }
            spec["tolerations"] = Value::Array(tol);
            spec["priorityClassName"] = json!("system-node-critical");
        }
        spec
    }

    fn template(&self, s: usize) -> Value {
        let set = &self.sets[s];
        let mut labels = json!({"app.kubernetes.io/name": set.name});
        if set.kind == SetKind::Deployment {
            labels["app.kubernetes.io/part-of"] = json!(self.ns(set.namespace));
        }
        json!({"metadata": {"annotations": {"prometheus.io/port": "9102", "prometheus.io/scrape": "true"},
                            "creationTimestamp": null, "labels": labels},
               "spec": template_spec(self.pod_spec(s))})
    }

    fn daemonset(&self, s: usize) -> Value {
        let set = &self.sets[s];
        let mut r = Rng::stream(self.cfg.seed, stream::SET, s as u64 + (2 << 40));
        let n = set.replicas;
        let spec = json!({
            "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app.kubernetes.io/name": set.name}},
            "template": self.template(s),
            "updateStrategy": {"rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}, "type": "RollingUpdate"},
        });
        let last_applied = last_applied("apps/v1", "DaemonSet", &set.name, self.ns(set.namespace), &spec);
        let status = json!({"currentNumberScheduled": n, "desiredNumberScheduled": n, "numberAvailable": n,
                            "numberMisscheduled": 0, "numberReady": n, "observedGeneration": 3, "updatedNumberScheduled": n});
        json!({
            "apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": {
                "annotations": {"deprecated.daemonset.template.generation": "3",
                                "kubectl.kubernetes.io/last-applied-configuration": last_applied},
                "creationTimestamp": timestamp(set.created), "generation": 3,
                "labels": {"app.kubernetes.io/name": set.name},
                "managedFields": [
                    managed_entry("kubectl-client-side-apply", "Update", None, set.created, &json!({"metadata": {"annotations": {}}, "spec": spec}), 4),
                    managed_entry("kube-controller-manager", "Update", Some("status"), NOW - 3600, &json!({"status": status}), 3),
                ],
                "name": set.name, "namespace": self.ns(set.namespace),
                "resourceVersion": r.range(1_000_000, 99_999_999).to_string(), "uid": set.uid,
            },
            "spec": spec,
            "status": status,
        })
    }

    fn deployment(&self, s: usize) -> Value {
        let set = &self.sets[s];
        let mut r = Rng::stream(self.cfg.seed, stream::SET, s as u64 + (2 << 40));
        let n = set.replicas;
        let spec = json!({
            "progressDeadlineSeconds": 600, "replicas": n, "revisionHistoryLimit": 10,
            "selector": {"matchLabels": {"app.kubernetes.io/name": set.name}},
            "strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}, "type": "RollingUpdate"},
            "template": self.template(s),
        });
        let t = timestamp(set.created + 60);
        let status = json!({
            "availableReplicas": n,
            "conditions": [
                {"lastTransitionTime": t, "lastUpdateTime": t, "message": "Deployment has minimum availability.",
                 "reason": "MinimumReplicasAvailable", "status": "True", "type": "Available"},
                {"lastTransitionTime": t, "lastUpdateTime": t,
                 "message": format!("ReplicaSet \"{}-{}\" has successfully progressed.", set.name, set.template_hash),
                 "reason": "NewReplicaSetAvailable", "status": "True", "type": "Progressing"}
            ],
            "observedGeneration": 1, "readyReplicas": n, "replicas": n, "updatedReplicas": n,
        });
        let mut annotations = json!({"deployment.kubernetes.io/revision": "1"});
        if r.chance(0.5) {
            annotations["kubectl.kubernetes.io/last-applied-configuration"] = json!(last_applied(
                "apps/v1",
                "Deployment",
                &set.name,
                self.ns(set.namespace),
                &spec
            ));
        }
        json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {
                "annotations": annotations,
                "creationTimestamp": timestamp(set.created), "generation": 1,
                "labels": {"app.kubernetes.io/name": set.name},
                "managedFields": [
                    managed_entry("kubectl-client-side-apply", "Update", None, set.created, &json!({"metadata": {"labels": {}}, "spec": spec}), 3),
                    managed_entry("kube-controller-manager", "Update", Some("status"), set.created + 60, &json!({"status": status}), 3),
                ],
                "name": set.name, "namespace": self.ns(set.namespace),
                "resourceVersion": r.range(1_000_000, 99_999_999).to_string(), "uid": set.uid,
            },
            "spec": spec,
            "status": status,
        })
    }

    fn replicaset(&self, s: usize) -> Value {
        let set = &self.sets[s];
        let mut r = Rng::stream(self.cfg.seed, stream::SET, s as u64 + (3 << 40));
        let n = set.replicas;
        let mut template = self.template(s);
        template["metadata"]["labels"]["pod-template-hash"] = json!(set.template_hash);
        let spec = json!({
            "replicas": n,
            "selector": {"matchLabels": {"app.kubernetes.io/name": set.name, "pod-template-hash": set.template_hash}},
            "template": template,
        });
        let status = json!({"availableReplicas": n, "fullyLabeledReplicas": n, "observedGeneration": 1, "readyReplicas": n, "replicas": n});
        json!({
            "apiVersion": "apps/v1", "kind": "ReplicaSet",
            "metadata": {
                "annotations": {"deployment.kubernetes.io/desired-replicas": n.to_string(),
                                "deployment.kubernetes.io/max-replicas": (n + n.div_ceil(4)).to_string(),
                                "deployment.kubernetes.io/revision": "1"},
                "creationTimestamp": timestamp(set.created), "generation": 1,
                "labels": {"app.kubernetes.io/name": set.name, "pod-template-hash": set.template_hash},
                "managedFields": [
                    managed_entry("kube-controller-manager", "Update", None, set.created, &json!({"metadata": {"annotations": {}, "labels": {}, "ownerReferences": {}}, "spec": spec}), 3),
                    managed_entry("kube-controller-manager", "Update", Some("status"), set.created + 60, &json!({"status": status}), 3),
                ],
                "name": format!("{}-{}", set.name, set.template_hash), "namespace": self.ns(set.namespace),
                "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true,
                                     "kind": "Deployment", "name": set.name, "uid": set.uid}],
                "resourceVersion": r.range(1_000_000, 99_999_999).to_string(), "uid": set.rs_uid,
            },
            "spec": spec,
            "status": status,
        })
    }

    fn pod(&self, p: usize) -> Value {
        let pod: &Pod = &self.pods[p];
        let set: &PodSet = &self.sets[pod.set];
        let node = &self.nodes[pod.node];
        let mut r = Rng::stream(self.cfg.seed, stream::POD, p as u64 + (1 << 40));
        // A size trade-off (see bench/README.md): 10% of pods (3% under `--detail
        // typical`) are written in full, with
        // managedFields and the complete projected service-account volume; the rest as
        // `kubectl get -o json` prints them by default (no managedFields) and with the
        // token source only.
        // Under `--detail typical`, 3% (the share of other objects with managedFields).
        let rich = r.chance(if self.typical() { MANAGED_FRACTION } else { 0.1 });
        let mut spec = self.pod_spec(pod.set);
        spec["nodeName"] = json!(node.name);
        spec["enableServiceLinks"] = json!(true);
        spec["preemptionPolicy"] = json!("PreemptLowerPriority");
        spec["priority"] = json!(if set.kind == SetKind::DaemonSet {
            2_000_001_000
        } else {
            0
        });
        let default_tol = [
            json!({"effect": "NoExecute", "key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 300}),
            json!({"effect": "NoExecute", "key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": 300}),
        ];
        match spec.get_mut("tolerations") {
            Some(Value::Array(t)) => t.extend(default_tol),
            _ => spec["tolerations"] = Value::Array(default_tol.to_vec()),
        }
        // Service account token volume the admission plugin adds.
        let token_vol = format!("kube-api-access-{}", r.suffix(5));
        if let Some(Value::Array(vols)) = spec.get_mut("volumes") {
            let sources = if rich {
                json!([
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"items": [{"key": "ca.crt", "path": "ca.crt"}], "name": "kube-root-ca.crt"}},
                    {"downwardAPI": {"items": [{"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}, "path": "namespace"}]}}
                ])
            } else {
                json!([{"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}}])
            };
            vols.push(json!({"name": token_vol, "projected": {"defaultMode": 420, "sources": sources}}));
        }
        if let Some(Value::Array(cs)) = spec.get_mut("containers") {
            for c in cs.iter_mut() {
                let mounts = c
                    .as_object_mut()
                    .expect("container")
                    .entry("volumeMounts")
                    .or_insert_with(|| json!([]));
                if let Value::Array(m) = mounts {
                    m.push(json!({"mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "name": token_vol, "readOnly": true}));
                }
            }
        }
        if set.kind == SetKind::DaemonSet {
            spec["affinity"] = json!({"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
                "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node.name]}]}]}}});
        }

        let mut labels = Map::new();
        labels.insert("app.kubernetes.io/name".into(), json!(set.name));
        let (owner_kind, owner_name, owner_uid, generate_name) = match set.kind {
            SetKind::DaemonSet => {
                labels.insert("controller-revision-hash".into(), json!(set.template_hash));
                labels.insert("pod-template-generation".into(), json!("3"));
                ("DaemonSet", set.name.clone(), &set.uid, format!("{}-", set.name))
            }
            SetKind::Deployment => {
                labels.insert("app.kubernetes.io/part-of".into(), json!(self.ns(set.namespace)));
                labels.insert("pod-template-hash".into(), json!(set.template_hash));
                let rs = format!("{}-{}", set.name, set.template_hash);
                let g = format!("{rs}-");
                ("ReplicaSet", rs, &set.rs_uid, g)
            }
        };
        let started = pod.created + 2 + r.below(20) as i64;
        let ready = pod.ready();
        let pending = pod.state == PodState::Pending;
        let containers_ready = ready;
        let cond = |t: &str, ok: bool, at: i64, reason: Option<&str>| {
            let mut c = json!({"lastProbeTime": null, "lastTransitionTime": timestamp(at),
                               "status": if ok { "True" } else { "False" }, "type": t});
            if let Some(reason) = reason {
                c["reason"] = json!(reason);
                if reason == "ContainersNotReady" {
                    c["message"] = json!(format!(
                        "containers with unready status: [{}]",
                        if set.kind == SetKind::DaemonSet {
                            set.name.as_str()
                        } else {
                            "app"
                        }
                    ));
                }
            }
            c
        };
        let not_ready_at = NOW - 60 - r.below(3000) as i64;
        let conditions = vec![
            cond("PodReadyToStartContainers", !pending, started, None),
            cond("Initialized", true, pod.created + 1, None),
            cond(
                "Ready",
                ready,
                if ready { started + 6 } else { not_ready_at },
                (!ready).then_some("ContainersNotReady"),
            ),
            cond(
                "ContainersReady",
                containers_ready,
                if ready { started + 6 } else { not_ready_at },
                (!ready).then_some("ContainersNotReady"),
            ),
            cond("PodScheduled", true, pod.created, None),
        ];
        let mut statuses = Vec::new();
        for c in spec["containers"].as_array().expect("containers") {
            let cname = c["name"].as_str().expect("name");
            let image = c["image"].as_str().expect("image");
            let (state, cready) = if pending {
                (json!({"waiting": {"reason": "ContainerCreating"}}), false)
            } else if cname == "log-shipper" {
                (json!({"running": {"startedAt": timestamp(started)}}), true)
            } else {
                (json!({"running": {"startedAt": timestamp(started)}}), ready)
            };
            let mut st = json!({
                "image": image, "imageID": if pending { String::new() } else {
                    format!("{}@sha256:{}", image.split(':').next().unwrap_or(image), r.hex(64)) },
                "lastState": {}, "name": cname, "ready": cready,
                "restartCount": if r.chance(0.1) { r.range(1, 12) } else { 0 },
                "started": !pending, "state": state,
            });
            if !pending {
                st["containerID"] = json!(format!("containerd://{}", r.hex(64)));
            }
            statuses.push(st);
        }
        let mut status = json!({
            "conditions": conditions,
            "containerStatuses": statuses,
            "hostIP": node.ipv4,
            "hostIPs": [{"ip": node.ipv4}, {"ip": node.ipv6}],
            "phase": if pending { "Pending" } else { "Running" },
            "qosClass": "Burstable",
            "startTime": timestamp(pod.created + 1),
        });
        if let (Some(a), Some(b)) = (&pod.ipv4, &pod.ipv6) {
            status["podIP"] = json!(a);
            status["podIPs"] = json!([{"ip": a}, {"ip": b}]);
        }
        let mut meta = json!({
            "creationTimestamp": timestamp(pod.created),
            "generateName": generate_name,
            "labels": labels,
            "name": pod.name,
            "namespace": self.ns(set.namespace),
            "ownerReferences": [{"apiVersion": "apps/v1", "blockOwnerDeletion": true, "controller": true,
                                 "kind": owner_kind, "name": owner_name, "uid": owner_uid}],
            "resourceVersion": r.range(1_000_000, 99_999_999).to_string(),
            "uid": pod.uid,
        });
        if set.kind == SetKind::Deployment {
            meta["annotations"] = json!({"prometheus.io/port": "9102", "prometheus.io/scrape": "true"});
        }
        if let PodState::Terminating { .. } = pod.state {
            meta["deletionGracePeriodSeconds"] = json!(30);
            meta["deletionTimestamp"] = json!(timestamp(NOW + 20 - r.below(25) as i64));
        }
        let controller_fields = json!({"metadata": {"generateName": "", "labels": meta["labels"], "ownerReferences": {}},
                                       "spec": {"containers": spec["containers"]}});
        let kubelet_fields = json!({"status": {"conditions": status["conditions"], "containerStatuses": {}, "hostIP": "",
                                               "hostIPs": {}, "phase": "", "podIP": "", "podIPs": {}, "startTime": ""}});
        if rich {
            meta["managedFields"] = json!([
                managed_entry(
                    "kube-controller-manager",
                    "Update",
                    None,
                    pod.created,
                    &controller_fields,
                    3
                ),
                managed_entry(
                    "kubelet",
                    "Update",
                    Some("status"),
                    started + 6,
                    &kubelet_fields,
                    3
                ),
            ]);
        }
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec, "status": status})
    }

    fn service(&self, s: usize) -> Value {
        let svc: &Service = &self.services[s];
        let mut r = Rng::stream(self.cfg.seed, stream::SERVICE, s as u64 + (1 << 40));
        let ports: Vec<Value> = svc
            .ports
            .iter()
            .map(|p| {
                let mut v = json!({"name": p.name, "port": p.port, "protocol": p.protocol,
                                   "targetPort": match p.target_name { Some(n) => json!(n), None => json!(p.target) }});
                if let Some(np) = p.node_port {
                    v["nodePort"] = json!(np);
                }
                v
            })
            .collect();
        let mut spec = json!({
            "clusterIP": svc.cluster_ips[0],
            "clusterIPs": svc.cluster_ips,
            "internalTrafficPolicy": if svc.itp_local { "Local" } else { "Cluster" },
            "ipFamilies": svc.families.iter().map(|f| match f { Family::V4 => "IPv4", Family::V6 => "IPv6" }).collect::<Vec<_>>(),
            "ipFamilyPolicy": svc.family_policy,
            "ports": ports,
            "selector": {"app.kubernetes.io/name": svc.selector_value},
            "sessionAffinity": "None",
            "type": match svc.svc_type { SvcType::ClusterIP => "ClusterIP", SvcType::NodePort => "NodePort", SvcType::LoadBalancer => "LoadBalancer" },
        });
        if svc.svc_type != SvcType::ClusterIP {
            spec["externalTrafficPolicy"] = json!(if svc.etp_local { "Local" } else { "Cluster" });
        }
        if svc.svc_type == SvcType::LoadBalancer {
            spec["allocateLoadBalancerNodePorts"] = json!(true);
        }
        if let Some(h) = svc.health_check_node_port {
            spec["healthCheckNodePort"] = json!(h);
        }
        if let Some(td) = svc.traffic_distribution {
            spec["trafficDistribution"] = json!(td);
        }
        if let Some(ip) = &svc.external_ip {
            spec["externalIPs"] = json!([ip]);
        }
        let status = match &svc.lb_ingress {
            Some(ip) => json!({"loadBalancer": {"ingress": [{"ip": ip, "ipMode": "VIP"}]}}),
            None => json!({"loadBalancer": {}}),
        };
        let mut annotations = Map::new();
        if let Some((k, v)) = svc.topology_annotation {
            annotations.insert(k.into(), json!(v));
        }
        if svc.svc_type == SvcType::LoadBalancer {
            annotations.insert(
                "service.beta.kubernetes.io/aws-load-balancer-type".into(),
                json!("external"),
            );
            annotations.insert(
                "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type".into(),
                json!("instance"),
            );
        }
        let ns = self.ns(svc.namespace);
        if svc.last_applied {
            let mut applied = spec.clone();
            if let Some(o) = applied.as_object_mut() {
                for k in [
                    "clusterIP",
                    "clusterIPs",
                    "internalTrafficPolicy",
                    "ipFamilies",
                    "ipFamilyPolicy",
                    "sessionAffinity",
                    "allocateLoadBalancerNodePorts",
                    "healthCheckNodePort",
                ] {
                    o.remove(k);
                }
            }
            let mut meta_ann = annotations.clone();
            meta_ann.remove("kubectl.kubernetes.io/last-applied-configuration");
            let la = json!({"apiVersion": "v1", "kind": "Service",
                            "metadata": {"annotations": meta_ann, "labels": {"app.kubernetes.io/name": svc.selector_value}, "name": svc.name, "namespace": ns},
                            "spec": applied});
            annotations.insert(
                "kubectl.kubernetes.io/last-applied-configuration".into(),
                json!(format!("{}\n", serde_json::to_string(&la).expect("json"))),
            );
        }
        let mut meta = json!({
            "creationTimestamp": timestamp(svc.created),
            "labels": {"app.kubernetes.io/name": svc.selector_value},
            "name": svc.name,
            "namespace": ns,
            "resourceVersion": r.range(1_000_000, 99_999_999).to_string(),
            "uid": svc.uid,
        });
        let mut managed = vec![managed_entry(
            if svc.last_applied {
                "kubectl-client-side-apply"
            } else {
                "helm"
            },
            "Update",
            None,
            svc.created,
            &json!({"metadata": {"annotations": annotations, "labels": meta["labels"]}, "spec": spec}),
            4,
        )];
        if svc.lb_ingress.is_some() {
            managed.push(managed_entry(
                "aws-load-balancer-controller",
                "Update",
                Some("status"),
                svc.created + 90,
                &json!({"status": status}),
                5,
            ));
        }
        meta["managedFields"] = Value::Array(managed);
        if !annotations.is_empty() {
            meta["annotations"] = Value::Object(annotations);
        }
        json!({"apiVersion": "v1", "kind": "Service", "metadata": meta, "spec": spec, "status": status})
    }

    fn slice(&self, s: usize, f: usize, c: usize) -> Value {
        let svc = &self.services[s];
        let family = svc.families[f];
        let all = &self.endpoints[s][f];
        let chunk = &all[(c * crate::plan::MAX_PER_SLICE).min(all.len())
            ..((c + 1) * crate::plan::MAX_PER_SLICE).min(all.len())];
        let mut r = Rng::stream(
            self.cfg.seed,
            stream::SLICE,
            ((s as u64) << 12) + ((f as u64) << 10) + c as u64,
        );
        let ns = self.ns(svc.namespace);

        // Hints, as the controller writes them: the topology annotation wins over the field.
        let auto = svc.topology_annotation.is_some();
        let hint_zones = if auto {
            self.auto_hints_ok(s, f)
        } else {
            matches!(
                svc.traffic_distribution,
                Some("PreferClose" | "PreferSameZone" | "PreferSameNode")
            )
        };
        let hint_nodes = !auto && svc.traffic_distribution == Some("PreferSameNode");

        let endpoints: Vec<Value> = chunk
            .iter()
            .map(|&p| {
                let pod = &self.pods[p];
                let node = &self.nodes[pod.node];
                let terminating = matches!(pod.state, PodState::Terminating { .. });
                let serving = pod.ready();
                let ready = serving && !terminating;
                let addr = match family {
                    Family::V4 => pod.ipv4.as_deref(),
                    Family::V6 => pod.ipv6.as_deref(),
                }
                .expect("endpoint has an address");
                let mut e = json!({
                    "addresses": [addr],
                    "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
                    "nodeName": node.name,
                    "targetRef": {"kind": "Pod", "name": pod.name, "namespace": ns, "uid": pod.uid},
                    "zone": self.zones[node.zone],
                });
                if ready && (hint_zones || hint_nodes) {
                    let mut h = json!({"forZones": [{"name": self.zones[node.zone]}]});
                    if hint_nodes {
                        h["forNodes"] = json!([{"name": node.name}]);
                    }
                    e["hints"] = h;
                }
                e
            })
            .collect();
        let ports: Vec<Value> = svc
            .ports
            .iter()
            .map(|p| json!({"name": p.name, "port": p.target, "protocol": p.protocol}))
            .collect();
        let mut labels = Map::new();
        labels.insert("app.kubernetes.io/name".into(), json!(svc.selector_value));
        labels.insert(
            "endpointslice.kubernetes.io/managed-by".into(),
            json!("endpointslice-controller.k8s.io"),
        );
        labels.insert("kubernetes.io/service-name".into(), json!(svc.name));
        if svc.headless {
            labels.insert("service.kubernetes.io/headless".into(), json!(""));
        }
        let name_base: String = svc.name.chars().take(57).collect();
        let changed = timestamp(NOW - 30 - r.below(86_400) as i64);
        let fields = json!({"addressType": "", "endpoints": {}, "metadata": {
            "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": ""},
            "generateName": "", "labels": labels, "ownerReferences": {}}, "ports": {}});
        json!({
            "addressType": match family { Family::V4 => "IPv4", Family::V6 => "IPv6" },
            "apiVersion": "discovery.k8s.io/v1",
            "endpoints": if endpoints.is_empty() { Value::Null } else { Value::Array(endpoints) },
            "kind": "EndpointSlice",
            "metadata": {
                "annotations": {"endpoints.kubernetes.io/last-change-trigger-time": changed},
                "creationTimestamp": timestamp(svc.created + 1),
                "generateName": format!("{name_base}-"),
                "generation": 1 + r.below(40),
                "labels": labels,
                "managedFields": [managed_entry("kube-controller-manager", "Update", None, NOW - 30, &fields, 3)],
                "name": format!("{name_base}-{}", self.slice_suffix(s, f, c)),
                "namespace": ns,
                "ownerReferences": [{"apiVersion": "v1", "blockOwnerDeletion": true, "controller": true,
                                     "kind": "Service", "name": svc.name, "uid": svc.uid}],
                "resourceVersion": r.range(1_000_000, 99_999_999).to_string(),
                "uid": r.uuid(),
            },
            "ports": ports,
        })
    }

    /// The name suffix of slice `c` of family `f` of service `s`.
    fn slice_suffix(&self, s: usize, f: usize, c: usize) -> &str {
        let before: usize = self.endpoints[s][..f]
            .iter()
            .map(|eps| eps.len().div_ceil(crate::plan::MAX_PER_SLICE).max(1))
            .sum();
        &self.slice_suffixes[s][before + c]
    }

    /// Whether the topology-aware-hints allocator (`topology-mode: Auto`) would assign
    /// same-zone hints. A simplification of upstream's CPU-proportional allocator: it
    /// gives up with fewer ready endpoints than 3 per zone, when a zone has no ready
    /// endpoint, or when a zone's share of endpoints is more than 20% off its share of
    /// allocatable CPU (upstream would donate across zones; the generator just omits).
    fn auto_hints_ok(&self, s: usize, f: usize) -> bool {
        let eps = &self.endpoints[s][f];
        let nz = self.zones.len();
        let mut per_zone = vec![0usize; nz];
        for &p in eps {
            let pod = &self.pods[p];
            if pod.ready() && !matches!(pod.state, PodState::Terminating { .. }) {
                per_zone[self.nodes[pod.node].zone] += 1;
            }
        }
        let total: usize = per_zone.iter().sum();
        if total < 3 * nz || per_zone.contains(&0) {
            return false;
        }
        let mut cpu = vec![0u64; nz];
        for n in &self.nodes {
            if !n.control_plane {
                cpu[n.zone] += u64::from(INSTANCE_TYPES[n.instance].1);
            }
        }
        let cpu_total: u64 = cpu.iter().sum::<u64>().max(1);
        (0..nz).all(|z| {
            let want = total as f64 * cpu[z] as f64 / cpu_total as f64;
            (per_zone[z] as f64) <= want * 1.2 && (per_zone[z] as f64) >= want / 1.2
        })
    }
}

/// A pod template's spec omits what is empty (Go's `omitempty`).
fn template_spec(mut spec: Value) -> Value {
    if spec["volumes"].as_array().is_some_and(Vec::is_empty) {
        spec.as_object_mut().expect("spec").remove("volumes");
    }
    spec
}

fn namespace(n: &Namespace, seed: u64) -> Value {
    let mut r = Rng::stream(seed, stream::NAMESPACE, 1 << 40);
    json!({
        "apiVersion": "v1", "kind": "Namespace",
        "metadata": {
            "creationTimestamp": timestamp(n.created),
            "labels": {"kubernetes.io/metadata.name": n.name},
            "managedFields": [managed_entry("kubectl-create", "Update", None, n.created,
                &json!({"metadata": {"labels": {"kubernetes.io/metadata.name": ""}}}), 4)],
            "name": n.name,
            "resourceVersion": r.range(100, 99_999).to_string(),
            "uid": n.uid,
        },
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    })
}

/// `kubectl.kubernetes.io/last-applied-configuration` for an applied object.
fn last_applied(api_version: &str, kind: &str, name: &str, ns: &str, spec: &Value) -> String {
    let v = json!({"apiVersion": api_version, "kind": kind,
                   "metadata": {"annotations": {}, "name": name, "namespace": ns}, "spec": spec});
    format!("{}\n", serde_json::to_string(&v).expect("json"))
}

/// A `managedFields` entry whose `fieldsV1` is derived from `owned` (the part of the
/// object the manager owns) the way the API server's structured-merge-diff writes it:
/// `f:<field>` for map keys, `k:{...}` for list items keyed by name/type/port, `.` for
/// the owned map itself, truncated at `depth` levels.
fn managed_entry(
    manager: &str,
    op: &str,
    subresource: Option<&str>,
    time: i64,
    owned: &Value,
    depth: usize,
) -> Value {
    let mut e = json!({
        "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": fields_v1(owned, depth, true),
        "manager": manager, "operation": op, "time": timestamp(time),
    });
    if let Some(s) = subresource {
        e["subresource"] = json!(s);
    }
    e
}

fn fields_v1(v: &Value, depth: usize, top: bool) -> Value {
    let mut m = Map::new();
    if !top {
        m.insert(".".into(), json!({}));
    }
    if depth == 0 {
        return Value::Object(m);
    }
    match v {
        Value::Object(o) => {
            for (k, val) in o {
                let child = match val {
                    Value::Object(_) | Value::Array(_) => fields_v1(val, depth - 1, false),
                    _ => json!({}),
                };
                m.insert(format!("f:{k}"), child);
            }
        }
        Value::Array(a) => {
            for item in a {
                let key = match item {
                    Value::Object(o) => ["name", "type", "containerPort", "key", "ip", "address"]
                        .iter()
                        .find_map(|k| o.get(*k).map(|v| format!("k:{{\"{k}\":{v}}}"))),
                    Value::String(s) => Some(format!("v:\"{s}\"")),
                    _ => None,
                };
                if let Some(key) = key {
                    let child = match item {
                        Value::Object(_) => fields_v1(item, depth - 1, false),
                        _ => json!({}),
                    };
                    m.insert(key, child);
                }
            }
        }
        _ => {}
    }
    Value::Object(m)
}
