//! EndpointSlice mirroring controller model (k8s.io/kubernetes
//! `pkg/controller/endpointslicemirroring`; read at the stored upstream versions of
//! `reconciler.go` `d030b9e3` and `utils.go` `173a08f4`, not checked against the v1.35.0 tag).
//!
//! A Service without a selector gets its endpoints from a hand-written core/v1 Endpoints
//! object of the same name; the mirroring controller copies that object into EndpointSlices,
//! which is what kube-proxy reads. [`should_mirror`] tells whether an Endpoints object is
//! mirrored at all, and [`mirror`] derives the slices the controller writes on a fresh sync
//! (no mirrored slices exist yet), with the addresses it leaves out and the Events it records.
//!
//! What this means for locality: a mirrored endpoint has `ready` and nothing else of the
//! topology (no `zone`, no hints, `serving` and `terminating` unset), so zone hints and
//! `trafficDistribution` never apply to it; and the Endpoints' labels are copied, so a
//! `service.kubernetes.io/headless` or `service.kubernetes.io/service-proxy-name` label on a
//! hand-written Endpoints hides the mirrored slices from kube-proxy.
//!
//! Upstream functions followed: `endpointslicemirroring_controller.go` (`syncEndpoints`,
//! `shouldMirror`), `reconciler.go` (`reconcile`, `reconcileByPortMapping`, `finalize`),
//! `reconciler_helpers.go` (`desiredCalc.initPorts`, `addAddress`), `utils.go`
//! (`newEndpointSlice`, `addressToEndpoint`, `epPortsToEpsPorts`, `skipMirror`,
//! `hasLeaderElection`), `events.go`, `pkg/api/v1/endpoints/util.go` (`RepackSubsets`),
//! `k8s.io/endpointslice/util/endpointset.go` (`hashEndpoint`), and
//! `config/v1alpha1/defaults.go` (`MirroringMaxEndpointsPerSubset`).
//!
//! Not modelled: updates of slices that already exist (`reconcileByPortMapping`'s
//! comparison, `recycleSlices`, deletion of stale slices), the slice tracker, metrics and
//! `appProtocol`. The `endpoints.kubernetes.io/over-capacity` annotation is not this
//! controller's: the Endpoints controller (`pkg/controller/endpoint`, `syncService`) sets it
//! when it truncates an Endpoints it manages; here it is an ordinary annotation and is copied.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::net::{IpAddr, Ipv4Addr};

#[cfg(test)] // named by the tests (`use super::*`)
use crate::objects::Protocol;
use crate::objects::{
    AddressType, Endpoint, EndpointConditions, EndpointPort, EndpointSlice, LABEL_MANAGED_BY,
    LABEL_SERVICE_NAME, ObjectMeta, OwnerReference, Service,
};
// The input types live with the other objects (a `ClusterState` holds them); re-exported so
// that `mirroring::Endpoints` and friends keep working.
pub use crate::objects::{EndpointAddress, EndpointSubset, Endpoints, EndpointsPort};

use super::{ControllerEvent, EventType};

/// The value of `endpointslice.kubernetes.io/managed-by` on mirrored slices (`controllerName`).
pub const MIRRORING_CONTROLLER_NAME: &str = "endpointslicemirroring-controller.k8s.io";
/// Label that opts an Endpoints object out of mirroring when set to `"true"`
/// (`discovery.LabelSkipMirror`).
pub const LABEL_SKIP_MIRROR: &str = "endpointslice.kubernetes.io/skip-mirror";
/// Leader-election record annotation (`resourcelock.LeaderElectionRecordAnnotationKey`):
/// Endpoints used as a lock carry it and are never mirrored.
pub const ANNOTATION_LEADER_ELECTION: &str = "control-plane.alpha.kubernetes.io/leader";
/// Annotation `endpoints.kubernetes.io/last-change-trigger-time`, not copied to slices.
pub const ANNOTATION_LAST_CHANGE_TRIGGER_TIME: &str = "endpoints.kubernetes.io/last-change-trigger-time";
/// Annotation `kubectl.kubernetes.io/last-applied-configuration`, not copied to slices.
pub const ANNOTATION_LAST_APPLIED_CONFIG: &str = "kubectl.kubernetes.io/last-applied-configuration";
/// Default `--mirroring-max-endpoints-per-subset` of kube-controller-manager.
pub const DEFAULT_MAX_ENDPOINTS_PER_SUBSET: usize = 1000;
/// Event reason for invalid addresses (`events.go` `InvalidIPAddress`).
pub const EVENT_INVALID_IP_ADDRESS: &str = "InvalidIPAddress";
/// Event reason for addresses over the per-subset limit (`events.go` `TooManyAddressesToMirror`).
pub const EVENT_TOO_MANY_ADDRESSES: &str = "TooManyAddressesToMirror";

/// Why an Endpoints object gets no mirrored slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NotMirrored {
    /// Labelled `endpointslice.kubernetes.io/skip-mirror: "true"` (`skipMirror`).
    SkipMirrorLabel,
    /// Annotated `control-plane.alpha.kubernetes.io/leader` (`hasLeaderElection`).
    LeaderElection,
    /// No Service of the same namespace and name (`syncEndpoints`).
    NoService,
    /// The Service has a selector: the EndpointSlice controller owns its slices (`syncEndpoints`).
    ServiceHasSelector,
    /// The Endpoints object is being deleted: no slice is created (`finalize`).
    EndpointsDeleting,
}

impl NotMirrored {
    /// A short explanation.
    pub fn reason(self) -> &'static str {
        match self {
            NotMirrored::SkipMirrorLabel => {
                "the Endpoints is labelled endpointslice.kubernetes.io/skip-mirror=true"
            }
            NotMirrored::LeaderElection => "the Endpoints carries a leader-election annotation",
            NotMirrored::NoService => "no Service of that name exists",
            NotMirrored::ServiceHasSelector => "the Service has a selector",
            NotMirrored::EndpointsDeleting => "the Endpoints is being deleted",
        }
    }
}

impl fmt::Display for NotMirrored {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.reason())
    }
}

/// Why one address was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AddressSkip {
    /// Not an IP address, even read sloppily.
    InvalidIp,
    /// Beyond `maxEndpointsPerSubset` in its (repacked) subset; never looked at.
    OverMaxPerSubset,
}

/// An address of the Endpoints that no slice carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedAddress {
    /// The `ip` text as written.
    pub ip: String,
    /// Whether it was listed under `addresses` (else `notReadyAddresses`).
    pub ready: bool,
    /// Why it was left out.
    pub reason: AddressSkip,
}

/// Result of [`mirror`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Mirrored {
    /// Why nothing is mirrored, if so (then `slices` is empty).
    pub not_mirrored: Option<NotMirrored>,
    /// The mirrored slices: by repacked subset, IPv4 before IPv6.
    pub slices: Vec<EndpointSlice>,
    /// Addresses left out, in the order the controller meets them.
    pub skipped: Vec<SkippedAddress>,
    /// Warning Events the controller records on the Endpoints object.
    pub events: Vec<ControllerEvent>,
}

/// Whether the controller mirrors `endpoints`, given the Service of the same name (if any).
///
/// Follows `syncEndpoints` and `shouldMirror`, in their order: the skip-mirror label (only
/// the exact value `"true"`), the leader-election annotation, a Service with the same
/// namespace and name, and that Service's selector. An empty selector counts as none: the
/// API server does not keep an empty map, so the controller sees `nil`.
pub fn should_mirror(service: Option<&Service>, endpoints: &Endpoints) -> Result<(), NotMirrored> {
    let meta = &endpoints.meta;
    if meta.labels.get(LABEL_SKIP_MIRROR).is_some_and(|v| v == "true") {
        return Err(NotMirrored::SkipMirrorLabel);
    }
    if meta.annotations.contains_key(ANNOTATION_LEADER_ELECTION) {
        return Err(NotMirrored::LeaderElection);
    }
    let service = service
        .filter(|s| s.meta.name == meta.name && s.meta.namespace == meta.namespace)
        .ok_or(NotMirrored::NoService)?;
    if service.selector.as_ref().is_some_and(|s| !s.is_empty()) {
        return Err(NotMirrored::ServiceHasSelector);
    }
    Ok(())
}

/// Parses an IP as `netutils.ParseIPSloppy` does and returns it in canonical form.
///
/// IPv4 octets may have leading zeros (read as decimal), also in the dotted tail of an IPv6
/// address; an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is IPv4 (Go's `ip.To4() != nil`).
pub fn parse_ip_sloppy(text: &str) -> Option<IpAddr> {
    let ip = match text.parse::<IpAddr>() {
        Ok(ip) => ip,
        Err(_) => match sloppy_v4(text) {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let (head, tail) = text.rsplit_once(':')?;
                format!("{head}:{}", sloppy_v4(tail)?).parse().ok()?
            }
        },
    };
    Some(match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(IpAddr::V6(v6), IpAddr::V4),
        v4 => v4,
    })
}

/// Four dot-separated decimal fields, each at most 255, leading zeros allowed.
fn sloppy_v4(text: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut fields = text.split('.');
    for octet in &mut octets {
        let field = fields.next()?;
        if field.is_empty() || !field.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = field.trim_start_matches('0');
        *octet = if digits.is_empty() {
            0
        } else {
            digits.parse().ok()?
        };
    }
    fields.next().is_none().then(|| Ipv4Addr::from(octets))
}

/// The slice endpoint for one Endpoints address, with its address type; `None` for an
/// invalid IP.
///
/// Follows `utils.go` `addressToEndpoint`: the IP is parsed sloppily and written back in
/// canonical form; `ready` is whether the address was listed as ready, `serving` and
/// `terminating` stay unset; `nodeName`, a non-empty `hostname` and `targetRef` are copied.
/// There is no zone and no hint.
pub fn address_to_endpoint(address: &EndpointAddress, ready: bool) -> Option<(Endpoint, AddressType)> {
    let ip = parse_ip_sloppy(&address.ip)?;
    let address_type = match ip {
        IpAddr::V4(_) => AddressType::IPv4,
        IpAddr::V6(_) => AddressType::IPv6,
    };
    let endpoint = Endpoint {
        addresses: vec![ip],
        conditions: EndpointConditions {
            ready: Some(ready),
            serving: None,
            terminating: None,
        },
        node_name: address.node_name.clone(),
        zone: None,
        hints: None,
        target_ref: address.target_ref.clone(),
        hostname: address.hostname.clone().filter(|h| !h.is_empty()),
    };
    Some((endpoint, address_type))
}

/// An address as `RepackSubsets` tells addresses apart: its IP text and `targetRef.uid`.
type AddressKey = (String, String);

fn address_key(address: &EndpointAddress) -> AddressKey {
    let uid = if address.target_ref.is_some() {
        address.target_uid.clone()
    } else {
        String::new()
    };
    (address.ip.clone(), uid)
}

/// The canonical form of `subsets` (`pkg/api/v1/endpoints/util.go` `RepackSubsets`), which
/// the controller mirrors instead of the subsets as written.
///
/// Every (port, address) pair is expanded: an address is identified by its IP text and
/// `targetRef.uid` (the first occurrence supplies its other fields), and one not ready for a
/// port in any subset is not ready for that port. Ports offered by exactly the same
/// addresses, with the same readiness, then share a subset. Ports without addresses and
/// addresses without ports disappear. Addresses are sorted by IP text then uid. Upstream
/// orders ports and subsets by an MD5 hash; here ports are sorted by (name, port, protocol)
/// and subsets by their ports, which changes no content.
pub fn repack_subsets(subsets: &[EndpointSubset]) -> Vec<EndpointSubset> {
    let mut first: HashMap<AddressKey, &EndpointAddress> = HashMap::new();
    let mut by_port: BTreeMap<&EndpointsPort, BTreeMap<AddressKey, bool>> = BTreeMap::new();
    for subset in subsets {
        for port in &subset.ports {
            for (list, ready) in [(&subset.addresses, true), (&subset.not_ready_addresses, false)] {
                for address in list {
                    let key = address_key(address);
                    first.entry(key.clone()).or_insert(address);
                    by_port
                        .entry(port)
                        .or_default()
                        .entry(key)
                        .and_modify(|r| *r = *r && ready)
                        .or_insert(ready);
                }
            }
        }
    }
    let mut groups: BTreeMap<Vec<(AddressKey, bool)>, Vec<EndpointsPort>> = BTreeMap::new();
    for (port, addresses) in by_port {
        groups
            .entry(addresses.into_iter().collect())
            .or_default()
            .push(port.clone());
    }
    let mut repacked: Vec<EndpointSubset> = groups
        .into_iter()
        .map(|(addresses, ports)| {
            let mut subset = EndpointSubset {
                ports,
                ..EndpointSubset::default()
            };
            for (key, ready) in addresses {
                let address = first[&key].clone();
                if ready {
                    subset.addresses.push(address);
                } else {
                    subset.not_ready_addresses.push(address);
                }
            }
            subset
        })
        .collect();
    repacked.sort_by(|a, b| a.ports.cmp(&b.ports));
    repacked
}

/// The desired endpoints of one (address type, ports) key: upstream's `EndpointSet`, where an
/// endpoint with the same address, hostname and `targetRef` namespace/name replaces the one
/// already there (`hashEndpoint`). Insertion order is kept for determinism.
#[derive(Default)]
struct EndpointSet {
    endpoints: Vec<Endpoint>,
    index: HashMap<(Vec<IpAddr>, String, String, String), usize>,
}

impl EndpointSet {
    fn insert(&mut self, endpoint: Endpoint) {
        let (namespace, name) = endpoint
            .target_ref
            .as_ref()
            .map(|(_, ns, n)| (ns.clone(), n.clone()))
            .unwrap_or_default();
        let key = (
            endpoint.addresses.clone(),
            endpoint.hostname.clone().unwrap_or_default(),
            namespace,
            name,
        );
        match self.index.get(&key) {
            Some(&at) => self.endpoints[at] = endpoint,
            None => {
                self.index.insert(key, self.endpoints.len());
                self.endpoints.push(endpoint);
            }
        }
    }
}

/// A new mirrored slice (`utils.go` `newEndpointSlice`, `epPortsToEpsPorts`).
///
/// Labels: the Endpoints' labels, all copied, then `kubernetes.io/service-name` set to the
/// Endpoints' name and `endpointslice.kubernetes.io/managed-by` to
/// [`MIRRORING_CONTROLLER_NAME`] (overwriting any copied value). Annotations: all but
/// [`ANNOTATION_LAST_CHANGE_TRIGGER_TIME`] and [`ANNOTATION_LAST_APPLIED_CONFIG`]. A
/// controller owner reference to the Endpoints. Ports: name (`Some("")` when unnamed), port
/// and protocol of the subset's ports, in order.
///
/// Upstream sets `generateName: <endpoints>-` and the API server appends a random suffix;
/// the caller picks `name` here.
pub fn new_mirrored_slice(
    endpoints: &Endpoints,
    ports: &[EndpointsPort],
    address_type: AddressType,
    name: String,
) -> EndpointSlice {
    let source = &endpoints.meta;
    let mut labels = source.labels.clone();
    labels.insert(LABEL_SERVICE_NAME.to_string(), source.name.clone());
    labels.insert(
        LABEL_MANAGED_BY.to_string(),
        MIRRORING_CONTROLLER_NAME.to_string(),
    );
    let annotations = source
        .annotations
        .iter()
        .filter(|(k, _)| *k != ANNOTATION_LAST_CHANGE_TRIGGER_TIME && *k != ANNOTATION_LAST_APPLIED_CONFIG)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    EndpointSlice {
        meta: ObjectMeta {
            name,
            namespace: source.namespace.clone(),
            labels,
            annotations,
            owner_references: vec![OwnerReference {
                kind: "Endpoints".to_string(),
                name: source.name.clone(),
                uid: source.uid.clone(),
                controller: true,
            }],
            ..ObjectMeta::default()
        },
        address_type,
        endpoints: Vec::new(),
        ports: ports
            .iter()
            .map(|p| EndpointPort {
                name: Some(p.name.clone()),
                port: Some(p.port),
                protocol: Some(p.protocol),
            })
            .collect(),
    }
}

/// The EndpointSlices the mirroring controller writes for `endpoints` on a fresh sync.
///
/// `service` is the Service of the same namespace and name (another one counts as missing);
/// `max_endpoints_per_subset` is `--mirroring-max-endpoints-per-subset`
/// ([`DEFAULT_MAX_ENDPOINTS_PER_SUBSET`]).
///
/// - Nothing when [`should_mirror`] says no ([`Mirrored::not_mirrored`]).
/// - The subsets are first repacked ([`repack_subsets`], `reconcile`).
/// - Per repacked subset, its ready then its not-ready addresses are taken in order until
///   `max_endpoints_per_subset` have been added; the rest are skipped unread. An invalid IP
///   ([`parse_ip_sloppy`]) is skipped and does not count towards the limit (`reconcile`).
/// - Each address becomes an endpoint ([`address_to_endpoint`]) in the slice of its address
///   type for the subset's ports (`desiredCalc`): one slice per (address type, ports) with
///   at least one endpoint, at most `max_endpoints_per_subset` endpoints
///   (`reconcileByPortMapping`). Endpoints keep the repacked order (upstream: set order).
/// - Events on the Endpoints (`reconcile`): `InvalidIPAddress` when any address was invalid;
///   `TooManyAddressesToMirror` when more addresses were skipped than were invalid, with the
///   total skipped count (invalid ones included, as upstream counts).
/// - An Endpoints being deleted gets no slice (`finalize` creates none), but its skipped
///   addresses and Events are still reported.
/// - Slices are named `<endpoints>-mirror-<n>` from 0 in output order; real names are
///   generated (`<endpoints>-<random>`).
pub fn mirror(service: &Service, endpoints: &Endpoints, max_endpoints_per_subset: usize) -> Mirrored {
    let mut out = Mirrored::default();
    if let Err(why) = should_mirror(Some(service), endpoints) {
        out.not_mirrored = Some(why);
        return out;
    }
    let mut invalid = 0usize;
    let mut skipped_total = 0usize;
    for subset in repack_subsets(&endpoints.subsets) {
        let mut by_type = [
            (AddressType::IPv4, EndpointSet::default()),
            (AddressType::IPv6, EndpointSet::default()),
        ];
        let mut added = 0usize;
        for (list, ready) in [(&subset.addresses, true), (&subset.not_ready_addresses, false)] {
            for address in list {
                let skip = |reason| SkippedAddress {
                    ip: address.ip.clone(),
                    ready,
                    reason,
                };
                if added >= max_endpoints_per_subset {
                    out.skipped.push(skip(AddressSkip::OverMaxPerSubset));
                    continue;
                }
                match address_to_endpoint(address, ready) {
                    Some((endpoint, address_type)) => {
                        added += 1;
                        let set = if address_type == AddressType::IPv4 { 0 } else { 1 };
                        by_type[set].1.insert(endpoint);
                    }
                    None => {
                        invalid += 1;
                        out.skipped.push(skip(AddressSkip::InvalidIp));
                    }
                }
            }
        }
        skipped_total += subset.addresses.len() + subset.not_ready_addresses.len() - added;
        for (address_type, set) in by_type {
            if set.endpoints.is_empty() {
                continue;
            }
            let name = format!("{}-mirror-{}", endpoints.meta.name, out.slices.len());
            let mut slice = new_mirrored_slice(endpoints, &subset.ports, address_type, name);
            slice.endpoints = set.endpoints.into_iter().take(max_endpoints_per_subset).collect();
            out.slices.push(slice);
        }
    }
    if invalid > 0 {
        out.events.push(ControllerEvent {
            event_type: EventType::Warning,
            reason: EVENT_INVALID_IP_ADDRESS.to_string(),
            message: format!("Skipped {invalid} invalid IP addresses when mirroring to EndpointSlices"),
        });
    }
    if skipped_total > invalid {
        out.events.push(ControllerEvent {
            event_type: EventType::Warning,
            reason: EVENT_TOO_MANY_ADDRESSES.to_string(),
            message: format!(
                "A max of {max_endpoints_per_subset} addresses can be mirrored to EndpointSlices per Endpoints subset. {skipped_total} addresses were skipped"
            ),
        });
    }
    if endpoints.meta.deletion_timestamp.is_some() {
        out.slices.clear();
        out.not_mirrored = Some(NotMirrored::EndpointsDeleting);
    }
    out
}

#[cfg(test)]
#[path = "mirroring_controller_tests.rs"]
mod controller_tests;
#[cfg(test)]
#[path = "mirroring_tests.rs"]
mod tests;
