//! Pod `spec` (also workload templates) and `status`.

#[allow(unused_imports)]
use super::*;

/// `spec.nodeName`: a Node name when given (`ValidatePodSpec` checks it with
/// `ValidateNodeName`), else empty.
fn node_name_or_empty<'de, D: Deserializer<'de>>(d: D) -> Result<String, D::Error> {
    Ok(node_name(d)?.unwrap_or_default())
}

/// The scheduling-relevant part of a pod spec. `C` is how much of each container is read:
/// [`PodContainerW`] for Pods, [`ContainerW`] (with what data-plane detection reads) for
/// workload templates.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", bound(deserialize = "C: Deserialize<'de>"))]
pub(crate) struct PodSpecW<C = PodContainerW> {
    #[serde(default, deserialize_with = "node_name_or_empty")]
    pub(super) node_name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) host_network: bool,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) hostname: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) subdomain: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) containers: Vec<M<C>>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) init_containers: Vec<M<C>>,
    #[serde(default, deserialize_with = "labels")]
    pub(super) node_selector: m::Labels,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) tolerations: Vec<M<TolerationW>>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) affinity: M<AffinityW>,
    #[serde(default)]
    pub(super) termination_grace_period_seconds: Option<Int64>,
}

/// A Pod's container: what routing and the lifecycle read (the rest is skipped unread).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodContainerW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) ports: Vec<M<ContainerPortW>>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) restart_policy: String,
    #[serde(default)]
    pub(super) readiness_probe: Option<M<crate::lifecycle::ProbeW>>,
    #[serde(default)]
    pub(super) lifecycle: Option<M<crate::lifecycle::LifecycleW>>,
    #[serde(default)]
    pub(super) command: crate::lifecycle::DelayShutdownW,
    #[serde(default)]
    pub(super) args: crate::lifecycle::DelayShutdownW,
}

/// A workload template's container: as [`PodContainerW`], plus what data-plane detection
/// reads (name, image, literal env, command and args).
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct ContainerW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) ports: Vec<M<ContainerPortW>>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) restart_policy: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) image: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) env: Vec<M<EnvW>>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) command: Vec<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) args: Vec<String>,
    #[serde(default)]
    pub(super) readiness_probe: Option<M<crate::lifecycle::ProbeW>>,
    #[serde(default)]
    pub(super) lifecycle: Option<M<crate::lifecycle::LifecycleW>>,
}

/// `env[]`: only literal values are kept (`valueFrom` is not resolved).
#[derive(Deserialize, Default)]
pub(super) struct EnvW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) name: String,
    #[serde(default)]
    pub(super) value: Option<String>,
}

/// Reduces a container to what [`PodSpecW::into_model`] reads.
pub(crate) trait ContainerRead {
    /// The container as a Pod's.
    fn into_pod(self) -> PodContainerW;
}

impl ContainerRead for PodContainerW {
    fn into_pod(self) -> PodContainerW {
        self
    }
}

impl ContainerRead for ContainerW {
    fn into_pod(self) -> PodContainerW {
        let delay =
            crate::lifecycle::delay_shutdown(self.command.iter().chain(&self.args).map(String::as_str));
        PodContainerW {
            ports: self.ports,
            restart_policy: self.restart_policy,
            readiness_probe: self.readiness_probe,
            lifecycle: self.lifecycle,
            command: crate::lifecycle::DelayShutdownW(None),
            args: crate::lifecycle::DelayShutdownW(delay),
        }
    }
}

impl ContainerW {
    /// What data-plane detection reads of a workload's container.
    pub(super) fn facts(&self) -> m::ContainerFacts {
        m::ContainerFacts {
            name: self.name.clone(),
            image: self.image.clone(),
            env: self
                .env
                .iter()
                .filter_map(|M(e)| e.value.clone().map(|v| (e.name.clone(), v)))
                .collect(),
            args: self.command.iter().chain(&self.args).cloned().collect(),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct ContainerPortW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) name: String,
    pub(super) container_port: Port,
    #[serde(default)]
    pub(super) protocol: Option<ProtocolW>,
    #[serde(default)]
    pub(super) host_port: Option<Port0>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct TolerationW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) key: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) operator: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) value: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) effect: String,
    /// An `int64`, negative admitted as upstream does; `null` is unset.
    #[serde(default)]
    pub(super) toleration_seconds: Option<Int64>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct AffinityW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) node_affinity: M<NodeAffinityW>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct NodeAffinityW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) required_during_scheduling_ignored_during_execution: M<NodeSelectorW>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(super) struct NodeSelectorW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) node_selector_terms: Vec<M<NodeSelectorTermW>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
pub(super) struct NodeSelectorTermW {
    #[serde(default, deserialize_with = "nullable")]
    pub(super) match_expressions: Vec<M<RequirementW>>,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) match_fields: Vec<M<RequirementW>>,
}

#[derive(Deserialize)]
pub(super) struct RequirementW {
    pub(super) key: String,
    pub(super) operator: String,
    #[serde(default, deserialize_with = "nullable")]
    pub(super) values: Vec<String>,
}

impl RequirementW {
    pub(super) fn into_model(self) -> m::SelectorRequirement {
        m::SelectorRequirement {
            key: self.key,
            operator: self.operator,
            values: self.values,
        }
    }
}

impl<C: ContainerRead> PodSpecW<C> {
    pub(crate) fn into_model(self) -> m::PodSpec {
        // Named targetPorts resolve against app containers, then sidecars (init containers
        // with restartPolicy Always), as upstream `podutil.FindPort` does.
        let sidecars = self
            .init_containers
            .into_iter()
            .map(|M(c)| c.into_pod())
            .filter(|c| c.restart_policy == "Always");
        let mut lifecycle = m::PodLifecycle {
            termination_grace_period_seconds: self.termination_grace_period_seconds.map(|v| v.0),
            ..m::PodLifecycle::default()
        };
        let mut ports = Vec::new();
        for c in self
            .containers
            .into_iter()
            .map(|M(c)| c.into_pod())
            .chain(sidecars)
        {
            if lifecycle.readiness_probe.is_none() {
                lifecycle.readiness_probe = c.readiness_probe.map(|M(p)| p.into_model());
            }
            if let Some(d) = c.args.0.or(c.command.0) {
                lifecycle.shutdown_delay_seconds = Some(lifecycle.shutdown_delay_seconds.unwrap_or(0).max(d));
            }
            let pre_stop = c.lifecycle.and_then(|M(l)| l.pre_stop());
            lifecycle.pre_stop = crate::lifecycle::longer(lifecycle.pre_stop.take(), pre_stop);
            ports.extend(c.ports.into_iter().map(|M(p)| m::ContainerPort {
                name: p.name,
                container_port: p.container_port.0,
                protocol: protocol_or_tcp(p.protocol),
                host_port: p.host_port.map(|h| h.0).filter(|h| *h != 0),
            }));
        }
        m::PodSpec {
            node_name: self.node_name,
            host_network: self.host_network,
            hostname: self.hostname,
            subdomain: self.subdomain,
            ports,
            node_selector: self.node_selector,
            tolerations: self
                .tolerations
                .into_iter()
                .map(|M(t)| m::Toleration {
                    key: t.key,
                    operator: t.operator,
                    value: t.value,
                    effect: t.effect,
                    toleration_seconds: t.toleration_seconds.map(|s| s.0),
                })
                .collect(),
            required_node_affinity: self
                .affinity
                .0
                .node_affinity
                .0
                .required_during_scheduling_ignored_during_execution
                .0
                .node_selector_terms
                .into_iter()
                .map(|M(t)| m::NodeSelectorTerm {
                    match_expressions: t
                        .match_expressions
                        .into_iter()
                        .map(|x| x.0.into_model())
                        .collect(),
                    match_fields: t.match_fields.into_iter().map(|x| x.0.into_model()).collect(),
                })
                .collect(),
            lifecycle,
        }
    }
}

// ---------------------------------------------------------------------------------------
// Pod
// ---------------------------------------------------------------------------------------

#[derive(Deserialize, Clone, Copy)]
pub(super) enum PhaseW {
    Pending,
    Running,
    Succeeded,
    Failed,
    Unknown,
}

/// Pod `status`.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
pub(crate) struct PodStatusW {
    #[serde(default)]
    pub(super) phase: Option<PhaseW>,
    #[serde(default)]
    pub(super) conditions: ReadyW,
    #[serde(default, rename = "podIP")]
    pub(super) pod_ip: Option<OptIp>,
    #[serde(default, rename = "podIPs", deserialize_with = "nullable")]
    pub(super) pod_ips: Vec<M<PodIpW>>,
}

/// An IP address where `""` means absent.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OptIp(pub Option<IpAddr>);

impl<'de> Deserialize<'de> for OptIp {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OptIp;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("an IP address string")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<OptIp, E> {
                if v.is_empty() {
                    return Ok(OptIp(None));
                }
                parse_ip(v).map(|ip| OptIp(Some(ip))).map_err(E::custom)
            }
            fn visit_unit<E: de::Error>(self) -> Result<OptIp, E> {
                Ok(OptIp(None))
            }
            fn visit_none<E: de::Error>(self) -> Result<OptIp, E> {
                Ok(OptIp(None))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
pub(super) struct PodIpW {
    pub(super) ip: Ip,
}

pub(crate) fn build_pod(meta: m::ObjectMeta, spec: Option<PodSpecW>, status: Option<PodStatusW>) -> m::Pod {
    let status = status.unwrap_or_default();
    let pod_ips: Vec<IpAddr> = if status.pod_ips.is_empty() {
        status.pod_ip.and_then(|p| p.0).into_iter().collect()
    } else {
        status.pod_ips.iter().map(|p| p.ip.0).collect()
    };
    let phase = match status.phase {
        None | Some(PhaseW::Unknown) => m::PodPhase::Unknown,
        Some(PhaseW::Pending) => m::PodPhase::Pending,
        Some(PhaseW::Running) => m::PodPhase::Running,
        Some(PhaseW::Succeeded) => m::PodPhase::Succeeded,
        Some(PhaseW::Failed) => m::PodPhase::Failed,
    };
    m::Pod {
        meta,
        spec: spec.map(PodSpecW::into_model).unwrap_or_default(),
        phase,
        ready: status.conditions.0 == Some(true),
        pod_ips,
    }
}
