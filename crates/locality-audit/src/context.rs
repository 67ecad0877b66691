//! Per-run indexes shared by the rules: client pods per node, nodes ordered by load, pods and
//! workloads by label, EndpointSlices by Service, and the per-port local endpoint sets.
//!
//! Everything here is built once per audit in time linear in the input; per service port the
//! rules then work in time proportional to the port's endpoints plus the number of nodes they
//! list (at most [`AuditOptions::node_limit`]), never nodes × ports.

use std::cell::OnceCell;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

use locality_model::endpointslice::TopologyCache;
use locality_model::features::{ControlPlaneFeatures, ProxyFeatures};
use locality_model::matrix::{DataPlane, Matrix, PortEntry};
use locality_model::objects::{ClusterState, EndpointSlice, Node, Service, Workload, WorkloadKind};
use locality_model::proxy::{MissingFacts, ProxyMode};
use locality_model::selector::service_selects;

use crate::builder::{FindingBuilder, Picked, object};
use crate::finding::{Finding, NodePods, ServiceRef};
use crate::report::AuditOptions;
use crate::rule::RuleId;

/// What is known about the proxy mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    /// kube-proxy in this mode (a kube-proxy replacement is taken as iptables-like: the
    /// contract is the same, the failure signature is not asserted).
    Known(ProxyMode),
    /// Unknown: every mode is possible.
    Unknown,
}

impl Mode {
    pub(crate) fn from_data_plane(dp: &DataPlane) -> Self {
        match dp {
            DataPlane::KubeProxy(Some(m)) => Mode::Known(*m),
            DataPlane::Other(_) => Mode::Known(ProxyMode::Iptables),
            _ => Mode::Unknown,
        }
    }
    /// True when the mode is known to be IPVS.
    pub(crate) fn is_ipvs(self) -> bool {
        self == Mode::Known(ProxyMode::Ipvs)
    }
}

/// Which nodes have usable local endpoints for one port (mirrors the local set of
/// `CategorizeEndpoints`: local ready endpoints, else local serving-terminating ones when the
/// node's kube-proxy has the terminating fallback).
#[derive(Debug, Default)]
pub(crate) struct LocalSets {
    /// Nodes (indices into `Matrix::nodes`) with a usable local endpoint.
    pub with_local: HashSet<usize>,
    /// Nodes whose only usable local endpoints are serving-terminating.
    pub only_terminating: BTreeSet<usize>,
    /// Nodes whose local ready endpoints are all not serving (publishNotReadyAddresses).
    pub only_not_serving: BTreeSet<usize>,
    /// Some endpoint is ready anywhere.
    pub any_ready: bool,
    /// Some endpoint is serving and terminating anywhere.
    pub any_serving_terminating: bool,
    /// Usable endpoints whose `nodeName` is unset or empty.
    pub without_node: usize,
    /// Usable endpoints.
    pub usable: usize,
}

/// A kube-proxy behaviour that depends on its version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ProxyFeature {
    /// `internalTrafficPolicy` honoured (1.22).
    Itp = 0,
    /// Zone hints read (1.24).
    ZoneHints = 1,
    /// Hints used without the topology annotation (1.31).
    HintsWithoutAnnotation = 2,
    /// Node hints read (1.34).
    NodeHints = 3,
}

impl ProxyFeature {
    const ALL: [ProxyFeature; 4] = [
        ProxyFeature::Itp,
        ProxyFeature::ZoneHints,
        ProxyFeature::HintsWithoutAnnotation,
        ProxyFeature::NodeHints,
    ];
    fn on(self, p: &ProxyFeatures) -> bool {
        match self {
            ProxyFeature::Itp => p.internal_traffic_policy,
            ProxyFeature::ZoneHints => p.zone_hints,
            ProxyFeature::HintsWithoutAnnotation => !p.hints_need_annotation,
            ProxyFeature::NodeHints => p.node_hints,
        }
    }
}

/// Pods indexed by (namespace, label key, label value).
struct PodIndex<'s> {
    by_label: HashMap<(&'s str, &'s str, &'s str), Vec<usize>>,
}

/// Workloads indexed by template label and by (namespace, kind, name).
struct WorkloadIndex<'s> {
    by_label: HashMap<(&'s str, &'s str, &'s str), Vec<usize>>,
    by_name: HashMap<(&'s str, WorkloadKind, &'s str), usize>,
}

/// The shared state of one audit run.
pub(crate) struct Ctx<'a, 's> {
    pub state: &'s ClusterState,
    pub m: &'a Matrix<'s>,
    pub opts: &'a AuditOptions,
    pub cp: ControlPlaneFeatures,
    /// kube-proxy behaviour of nodes without a version override.
    pub proxy: ProxyFeatures,
    pub mode: Mode,
    /// True when the nodes are assumed (`--nodes`/`--zones`).
    pub assumed: bool,
    /// Client pods per node index (Matrix order).
    pub pods_on: Vec<usize>,
    /// Client node flag per node index (nodes that run pods; every node when the input has no
    /// pods or the shape is assumed).
    pub is_client: Vec<bool>,
    /// Windows flag per node index (not proxied).
    pub windows: Vec<bool>,
    /// Linux client nodes, most loaded first.
    pub clients_sorted: Vec<usize>,
    /// Linux nodes, most loaded first.
    pub linux_sorted: Vec<usize>,
    /// Total pods on Linux client nodes.
    pub client_pods: usize,
    /// Total pods on Linux nodes.
    pub linux_pods: usize,
    /// Observed EndpointSlices per (namespace, service name), sorted by name.
    pub slices: HashMap<(&'s str, &'s str), Vec<&'s EndpointSlice>>,
    pods: OnceCell<PodIndex<'s>>,
    workloads: OnceCell<WorkloadIndex<'s>>,
    topology: OnceCell<TopologyCache>,
    zone_pods: OnceCell<BTreeMap<&'s str, usize>>,
    lacking: OnceCell<Vec<(Vec<usize>, usize)>>,
    node_map: OnceCell<HashMap<&'s str, &'s Node>>,
    /// The data plane that implements Services, as detected ([`AuditOptions::data_plane`],
    /// else from the input's DaemonSets).
    pub detection: locality_model::dataplane::Detection,
    /// The catalogue entries that apply to [`Self::detection`].
    pub divergences: Vec<&'static locality_model::dataplane::catalogue::Divergence>,
    /// Findings so far.
    pub out: Vec<Finding>,
}

impl<'a, 's> Ctx<'a, 's> {
    pub(crate) fn new(
        state: &'s ClusterState,
        m: &'a Matrix<'s>,
        opts: &'a AuditOptions,
        assumed: bool,
    ) -> Self {
        let n = m.nodes.len();
        let mut pods_on = vec![0usize; n];
        let mut any_pod = false;
        for p in &state.pods {
            if !crate::clients::is_client_pod(p) {
                continue;
            }
            if let Some(i) = m.node_position(&p.spec.node_name) {
                pods_on[i] += 1;
                any_pod = true;
            }
        }
        let every_node = assumed || !any_pod;
        let windows: Vec<bool> = m.nodes.iter().map(|n| n.node.is_windows()).collect();
        let is_client: Vec<bool> = (0..n).map(|i| every_node || pods_on[i] > 0).collect();
        let mut linux_sorted: Vec<usize> = (0..n).filter(|&i| !windows[i]).collect();
        linux_sorted.sort_by(|&a, &b| pods_on[b].cmp(&pods_on[a]).then_with(|| a.cmp(&b)));
        let clients_sorted: Vec<usize> = linux_sorted.iter().copied().filter(|&i| is_client[i]).collect();
        let client_pods = clients_sorted.iter().map(|&i| pods_on[i]).sum();
        let linux_pods = linux_sorted.iter().map(|&i| pods_on[i]).sum();

        let mut slices: HashMap<(&str, &str), Vec<&EndpointSlice>> = HashMap::new();
        for s in &state.endpoint_slices {
            if let Some(svc) = s.service_name() {
                slices
                    .entry((s.meta.namespace.as_str(), svc))
                    .or_default()
                    .push(s);
            }
        }
        for v in slices.values_mut() {
            v.sort_by(|a, b| (&a.meta.name, a.address_type).cmp(&(&b.meta.name, b.address_type)));
        }
        let detection = opts.data_plane.clone().unwrap_or_else(|| {
            locality_model::dataplane::detect::detect(
                &locality_model::dataplane::detect::facts_from_workloads(&state.workloads),
            )
        });
        let divergences = locality_model::dataplane::catalogue::applicable(&detection);
        Ctx {
            detection,
            divergences,
            state,
            m,
            opts,
            cp: m.control_plane,
            proxy: m.default_proxy(),
            mode: Mode::from_data_plane(&m.config.data_plane),
            assumed,
            pods_on,
            is_client,
            windows,
            clients_sorted,
            linux_sorted,
            client_pods,
            linux_pods,
            slices,
            pods: OnceCell::new(),
            workloads: OnceCell::new(),
            topology: OnceCell::new(),
            zone_pods: OnceCell::new(),
            lacking: OnceCell::new(),
            node_map: OnceCell::new(),
            out: Vec::new(),
        }
    }

    /// Zone capacity for `topology-mode: Auto` (built on first use).
    pub(crate) fn topology(&self) -> &TopologyCache {
        self.topology
            .get_or_init(|| TopologyCache::from_nodes(&self.state.nodes))
    }

    /// Client pods per zone (`""` for nodes without zone) over Linux client nodes.
    pub(crate) fn zone_client_pods(&self) -> &BTreeMap<&'s str, usize> {
        self.zone_pods.get_or_init(|| {
            let mut out = BTreeMap::new();
            for &i in &self.clients_sorted {
                *out.entry(self.m.nodes[i].zone).or_default() += self.pods_on[i];
            }
            out
        })
    }

    /// Linux nodes whose kube-proxy lacks a behaviour, most loaded first, all listed up to
    /// `node_limit` (the lists are built once per audit).
    pub(crate) fn nodes_lacking(&self, feature: ProxyFeature) -> Picked {
        let lists = self.lacking.get_or_init(|| {
            ProxyFeature::ALL
                .iter()
                .map(|f| {
                    let v: Vec<usize> = self
                        .linux_sorted
                        .iter()
                        .copied()
                        .filter(|&i| !f.on(&self.m.nodes[i].proxy))
                        .collect();
                    let pods = v.iter().map(|&i| self.pods_on[i]).sum();
                    (v, pods)
                })
                .collect()
        });
        let (list, pods) = &lists[feature as usize];
        self.pick(list, *pods, &HashSet::new(), |_| true)
    }

    /// Nodes by name (for the EndpointSlice controller model).
    pub(crate) fn node_lookup(&self) -> &HashMap<&'s str, &'s Node> {
        self.node_map.get_or_init(|| {
            self.m
                .nodes
                .iter()
                .map(|n| (n.node.meta.name.as_str(), n.node))
                .collect()
        })
    }

    /// Observed EndpointSlices of a Service, sorted by name.
    pub(crate) fn slices_of<'x>(&'x self, svc: &'x Service) -> &'x [&'s EndpointSlice] {
        self.slices
            .get(&(svc.meta.namespace.as_str(), svc.meta.name.as_str()))
            .map_or(&[][..], Vec::as_slice)
    }

    /// Pods the Service's selector picks in its namespace (indices into `state.pods`,
    /// ascending), whatever their phase.
    pub(crate) fn selected_pods(&self, svc: &Service) -> Vec<usize> {
        let Some(selector) = svc.selector.as_ref().filter(|s| !s.is_empty()) else {
            return Vec::new();
        };
        let idx = self.pods.get_or_init(|| {
            // Only the (namespace, key, value) triples some Service selects on are indexed:
            // most pod labels (pod-template-hash, controller-revision-hash…) never are.
            let mut by_label: HashMap<(&str, &str, &str), Vec<usize>> = HashMap::new();
            for s in &self.state.services {
                for (k, v) in s.selector.iter().flatten() {
                    by_label.insert((s.meta.namespace.as_str(), k.as_str(), v.as_str()), Vec::new());
                }
            }
            for (i, p) in self.state.pods.iter().enumerate() {
                for (k, v) in &p.meta.labels {
                    if let Some(list) = by_label.get_mut(&(p.meta.namespace.as_str(), k.as_str(), v.as_str()))
                    {
                        list.push(i);
                    }
                }
            }
            PodIndex { by_label }
        });
        let ns = svc.meta.namespace.as_str();
        let smallest = selector
            .iter()
            .map(|(k, v)| {
                idx.by_label
                    .get(&(ns, k.as_str(), v.as_str()))
                    .map_or(&[][..], Vec::as_slice)
            })
            .min_by_key(|l| l.len())
            .unwrap_or(&[]);
        smallest
            .iter()
            .copied()
            .filter(|&i| service_selects(selector, &self.state.pods[i].meta.labels))
            .collect()
    }

    fn workload_index(&self) -> &WorkloadIndex<'s> {
        self.workloads.get_or_init(|| {
            let mut by_label: HashMap<(&str, &str, &str), Vec<usize>> = HashMap::new();
            let mut by_name = HashMap::new();
            for (i, w) in self.state.workloads.iter().enumerate() {
                let ns = w.meta.namespace.as_str();
                for (k, v) in &w.template_labels {
                    by_label.entry((ns, k.as_str(), v.as_str())).or_default().push(i);
                }
                by_name.entry((ns, w.kind, w.meta.name.as_str())).or_insert(i);
            }
            WorkloadIndex { by_label, by_name }
        })
    }

    /// The workloads behind a Service: those whose pod template labels the selector matches,
    /// and the controllers (via `ownerReferences`) of the pods it selects; a ReplicaSet owned
    /// by a known Deployment is replaced by the Deployment. Sorted by kind, then name.
    pub(crate) fn backing(&self, svc: &Service) -> Vec<&'s Workload> {
        let Some(selector) = svc.selector.as_ref().filter(|s| !s.is_empty()) else {
            return Vec::new();
        };
        let idx = self.workload_index();
        let ns = svc.meta.namespace.as_str();
        let workloads = &self.state.workloads;
        let mut found: BTreeSet<usize> = BTreeSet::new();
        if let Some(smallest) = selector
            .iter()
            .map(|(k, v)| {
                idx.by_label
                    .get(&(ns, k.as_str(), v.as_str()))
                    .map_or(&[][..], Vec::as_slice)
            })
            .min_by_key(|l| l.len())
        {
            found.extend(
                smallest
                    .iter()
                    .copied()
                    .filter(|&i| service_selects(selector, &workloads[i].template_labels)),
            );
        }
        for p in self.selected_pods(svc) {
            let pod = &self.state.pods[p];
            for owner in pod.meta.owner_references.iter().filter(|o| o.controller) {
                if let Some(kind) = kind_of(&owner.kind)
                    && let Some(&i) = idx.by_name.get(&(ns, kind, owner.name.as_str()))
                {
                    found.insert(i);
                }
            }
        }
        // A ReplicaSet owned by a known Deployment stands for that Deployment.
        let mut top: BTreeSet<usize> = BTreeSet::new();
        for i in found {
            let w = &workloads[i];
            let parent = (w.kind == WorkloadKind::ReplicaSet)
                .then(|| {
                    w.meta
                        .owner_references
                        .iter()
                        .filter(|o| o.controller && o.kind == "Deployment")
                        .find_map(|o| idx.by_name.get(&(ns, WorkloadKind::Deployment, o.name.as_str())))
                })
                .flatten();
            top.insert(parent.copied().unwrap_or(i));
        }
        let mut out: Vec<&Workload> = top.into_iter().map(|i| &workloads[i]).collect();
        out.sort_by(|a, b| (a.kind, &a.meta.name).cmp(&(b.kind, &b.meta.name)));
        out
    }

    /// The local endpoint sets of a port.
    pub(crate) fn local_sets(&self, entry: &PortEntry<'_>) -> LocalSets {
        let mut ls = LocalSets::default();
        // Per node: (has ready, has serving-terminating, has ready-and-serving).
        let mut per_node: HashMap<usize, (bool, bool, bool)> = HashMap::new();
        for ep in &entry.endpoints {
            let st = !ep.ready && ep.serving && ep.terminating;
            ls.any_ready |= ep.ready;
            ls.any_serving_terminating |= st;
            if !(ep.ready || st) {
                continue;
            }
            ls.usable += 1;
            let node = ep.node_name.as_deref().filter(|n| !n.is_empty());
            let Some(name) = node else {
                ls.without_node += 1;
                continue;
            };
            if let Some(i) = self.m.node_position(name) {
                let e = per_node.entry(i).or_default();
                e.0 |= ep.ready;
                e.1 |= st;
                e.2 |= ep.ready && ep.serving;
            }
        }
        for (i, (ready, st, ready_serving)) in per_node {
            let fallback = self.m.nodes[i].proxy.terminating_fallback;
            if ready || (st && fallback) {
                ls.with_local.insert(i);
            }
            if !ready && st && fallback {
                ls.only_terminating.insert(i);
            }
            if ready && !ready_serving {
                ls.only_not_serving.insert(i);
            }
        }
        ls
    }

    /// Nodes of `sorted` (most loaded first) that are not in `exclude`: at most
    /// `node_limit` listed, with the complete count and pod total. `in_sorted` tells whether
    /// a node index belongs to `sorted`.
    pub(crate) fn pick(
        &self,
        sorted: &[usize],
        total_pods: usize,
        exclude: &HashSet<usize>,
        in_sorted: impl Fn(usize) -> bool,
    ) -> Picked {
        let excluded: Vec<usize> = exclude.iter().copied().filter(|&i| in_sorted(i)).collect();
        let count = sorted.len().saturating_sub(excluded.len());
        let pods = total_pods.saturating_sub(excluded.iter().map(|&i| self.pods_on[i]).sum());
        let nodes = sorted
            .iter()
            .copied()
            .filter(|i| !exclude.contains(i))
            .take(self.opts.node_limit)
            .map(|i| self.node_pods(i))
            .collect();
        Picked { nodes, count, pods }
    }

    /// Client nodes (Linux) without a usable local endpoint.
    pub(crate) fn blind_clients(&self, ls: &LocalSets) -> Picked {
        self.pick(&self.clients_sorted, self.client_pods, &ls.with_local, |i| {
            self.is_client[i] && !self.windows[i]
        })
    }

    /// Linux nodes without a usable local endpoint.
    pub(crate) fn nodes_without_local(&self, ls: &LocalSets) -> Picked {
        self.pick(&self.linux_sorted, self.linux_pods, &ls.with_local, |i| {
            !self.windows[i]
        })
    }

    /// An explicit list of nodes, sorted and truncated for a finding.
    pub(crate) fn listed(&self, nodes: impl IntoIterator<Item = usize>) -> Picked {
        let mut v: Vec<usize> = nodes.into_iter().collect();
        v.sort_unstable();
        v.dedup();
        v.sort_by(|&a, &b| self.pods_on[b].cmp(&self.pods_on[a]).then_with(|| a.cmp(&b)));
        let pods = v.iter().map(|&i| self.pods_on[i]).sum();
        let count = v.len();
        let nodes = v
            .into_iter()
            .take(self.opts.node_limit)
            .map(|i| self.node_pods(i))
            .collect();
        Picked { nodes, count, pods }
    }

    fn node_pods(&self, i: usize) -> NodePods {
        NodePods {
            node: self.m.nodes[i].name().to_string(),
            pods: self.pods_on[i],
        }
    }

    /// Starts a finding on a Service (objects: the Service, then `objects`).
    pub(crate) fn finding(&self, rule: RuleId, svc: &Service) -> FindingBuilder {
        FindingBuilder {
            f: Finding {
                rule,
                severity: rule.default_severity(),
                title: rule.title(),
                service: ServiceRef {
                    namespace: svc.meta.namespace.clone(),
                    name: svc.meta.name.clone(),
                },
                port: None,
                ip_family: None,
                nodes: Vec::new(),
                node_count: 0,
                pod_count: 0,
                objects: vec![object("Service", &svc.meta)],
                message: String::new(),
                fix: String::new(),
                docs_url: rule.docs_url(),
                suppression: None,
                // Set from the port summaries once every rule has run (`lib.rs` `run`).
                confidence: None,
                missing_facts: MissingFacts::NONE,
                cause: None,
                clients: Vec::new(),
            },
        }
    }

    /// Adds a finding if its rule is selected.
    pub(crate) fn push(&mut self, b: FindingBuilder) {
        if self.opts.selects(b.f.rule) {
            self.out.push(b.f);
        }
    }
}

fn kind_of(kind: &str) -> Option<WorkloadKind> {
    match kind {
        "DaemonSet" => Some(WorkloadKind::DaemonSet),
        "Deployment" => Some(WorkloadKind::Deployment),
        "ReplicaSet" => Some(WorkloadKind::ReplicaSet),
        "StatefulSet" => Some(WorkloadKind::StatefulSet),
        _ => None,
    }
}

impl Ctx<'_, '_> {
    /// Like [`Ctx::listed`], counting only the clients of `svc` ([`crate::clients`]: its own
    /// backends are not its clients); nodes left without a client of `svc` are dropped.
    pub(crate) fn listed_clients_of(&self, svc: &Service, nodes: impl IntoIterator<Item = usize>) -> Picked {
        let mut own: HashMap<usize, usize> = HashMap::new();
        for i in self.selected_pods(svc) {
            let pod = &self.state.pods[i];
            if crate::clients::is_client_pod(pod)
                && let Some(n) = self.m.node_position(&pod.spec.node_name)
            {
                *own.entry(n).or_default() += 1;
            }
        }
        let clients = |i: usize| self.pods_on[i].saturating_sub(own.get(&i).copied().unwrap_or(0));
        // A node without any pod is listed only when every node counts as a client (no pods in
        // the input, or an assumed shape): the caller passes client nodes only.
        let mut v: Vec<usize> = nodes
            .into_iter()
            .filter(|&i| clients(i) > 0 || self.pods_on[i] == 0)
            .collect();
        v.sort_unstable();
        v.dedup();
        v.sort_by(|&a, &b| clients(b).cmp(&clients(a)).then_with(|| a.cmp(&b)));
        let pods = v.iter().map(|&i| clients(i)).sum();
        let count = v.len();
        let nodes = v
            .into_iter()
            .take(self.opts.node_limit)
            .map(|i| NodePods {
                node: self.m.nodes[i].name().to_string(),
                pods: clients(i),
            })
            .collect();
        Picked { nodes, count, pods }
    }
}
