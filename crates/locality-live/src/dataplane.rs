//! The data plane, the proxy mode and kube-proxy's version, read from `kube-system`
//! (docs/design.md §2 "Data planes", "Versions and skew").
//!
//! Order: the `kube-system/kube-proxy` DaemonSet (version from its image tag, mode from
//! `--proxy-mode` in its command or args), else the KubeProxyConfiguration in its ConfigMap
//! (`mode:`), else unknown. Without a kube-proxy DaemonSet: kube-proxy static pods (mode
//! unknown), a Cilium kube-proxy replacement (`cilium-config` `kube-proxy-replacement`,
//! else a `cilium` DaemonSet), else unknown. `Node.status.nodeInfo.kubeProxyVersion` is
//! never used (empty since 1.33).

use std::collections::BTreeMap;

use locality_model::matrix::DataPlane;
use locality_model::objects::Pod;
use locality_model::proxy::ProxyMode;
use locality_model::version::KubeVersion;
use serde::Deserialize;

use crate::error::LiveError;
use crate::fetch::{Api, Failure};

const DS_KUBE_PROXY: &str = "/apis/apps/v1/namespaces/kube-system/daemonsets/kube-proxy";
const DS_CILIUM: &str = "/apis/apps/v1/namespaces/kube-system/daemonsets/cilium";
const CM_PREFIX: &str = "/api/v1/namespaces/kube-system/configmaps/";

/// What the detection found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Detected {
    pub data_plane: DataPlane,
    pub source: String,
    pub kube_proxy_version: Option<KubeVersion>,
    pub notes: Vec<String>,
}

// ---------------------------------------------------------------------------------------
// Pure parts
// ---------------------------------------------------------------------------------------

/// The parts of a DaemonSet that tell kube-proxy's version and configuration.
#[derive(Debug, Default, Deserialize)]
pub(crate) struct DaemonSet {
    #[serde(default)]
    spec: DsSpec,
}

#[derive(Debug, Default, Deserialize)]
struct DsSpec {
    #[serde(default)]
    template: Template,
}

#[derive(Debug, Default, Deserialize)]
struct Template {
    #[serde(default)]
    spec: TemplateSpec,
}

#[derive(Debug, Default, Deserialize)]
struct TemplateSpec {
    #[serde(default)]
    containers: Vec<Container>,
    #[serde(default)]
    volumes: Vec<Volume>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Container {
    #[serde(default)]
    name: String,
    #[serde(default)]
    image: String,
    #[serde(default)]
    command: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    volume_mounts: Vec<VolumeMount>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct VolumeMount {
    #[serde(default)]
    name: String,
    #[serde(default)]
    mount_path: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Volume {
    #[serde(default)]
    name: String,
    #[serde(default)]
    config_map: Option<NameRef>,
}

#[derive(Debug, Default, Deserialize)]
struct NameRef {
    #[serde(default)]
    name: String,
}

impl DaemonSet {
    /// The kube-proxy container: the one named `kube-proxy`, else the first.
    fn container(&self) -> Option<&Container> {
        let cs = &self.spec.template.spec.containers;
        cs.iter().find(|c| c.name == "kube-proxy").or_else(|| cs.first())
    }

    /// Command and args split into words (a `sh -c "kube-proxy --proxy-mode=ipvs"`
    /// wrapper included).
    fn words(&self) -> Vec<&str> {
        self.container()
            .map(|c| {
                c.command
                    .iter()
                    .chain(&c.args)
                    .flat_map(|a| a.split_whitespace())
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The value of `--NAME=V` or `--NAME V` in the command line.
    fn flag(&self, name: &str) -> Option<String> {
        flag_value(&self.words(), name)
    }

    /// The ConfigMap and key behind `--config=PATH`, through the container's volume
    /// mounts (e.g. kubeadm: `kube-proxy`, `config.conf`; EKS: `kube-proxy-config`,
    /// `config`).
    fn config_source(&self) -> Option<(String, String)> {
        let path = self.flag("config")?;
        let container = self.container()?;
        let (mount, rest) = container
            .volume_mounts
            .iter()
            .filter_map(|m| {
                let base = m.mount_path.trim_end_matches('/');
                let rest = path.strip_prefix(base)?.strip_prefix('/')?;
                Some((m, rest))
            })
            .max_by_key(|(m, _)| m.mount_path.len())?;
        let cm = self
            .spec
            .template
            .spec
            .volumes
            .iter()
            .find(|v| v.name == mount.name)?
            .config_map
            .as_ref()?;
        Some((cm.name.clone(), rest.to_owned()))
    }
}

/// `--name=value`, `--name value` (also with a single dash, as pflag accepts).
fn flag_value(words: &[&str], name: &str) -> Option<String> {
    let mut it = words.iter();
    while let Some(w) = it.next() {
        let Some(bare) = w.strip_prefix("--").or_else(|| w.strip_prefix('-')) else {
            continue;
        };
        if let Some(v) = bare.strip_prefix(name).and_then(|r| r.strip_prefix('=')) {
            return Some(v.trim_matches(['"', '\'']).to_owned());
        }
        if bare == name {
            return it.next().map(|v| v.trim_matches(['"', '\'']).to_owned());
        }
    }
    None
}

/// The version in an image reference's tag (`registry.k8s.io/kube-proxy:v1.35.2`,
/// `…/eks/kube-proxy:v1.29.0-minimal-eksbuild.1`, digests ignored); `None` without a tag.
pub(crate) fn image_version(image: &str) -> Option<KubeVersion> {
    let image = image.split('@').next().unwrap_or(image);
    let last = image.rsplit('/').next().unwrap_or(image);
    let (_, tag) = last.rsplit_once(':')?;
    KubeVersion::parse_loose(tag)
}

/// `mode` of a KubeProxyConfiguration (YAML or JSON); `Some("")` when empty or absent.
/// `None` when the text is not a configuration object.
pub(crate) fn config_mode(text: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct Conf {
        #[serde(default)]
        mode: Option<String>,
    }
    match serde_saphyr::from_str::<Conf>(text) {
        Ok(c) => Some(c.mode.unwrap_or_default().trim().to_owned()),
        Err(_) => {
            // A configuration serde-saphyr refuses: look for a top-level `mode:` line.
            let line = text.lines().find_map(|l| l.strip_prefix("mode:"));
            match line {
                Some(v) => Some(
                    v.split('#')
                        .next()
                        .unwrap_or("")
                        .trim()
                        .trim_matches(['"', '\''])
                        .to_owned(),
                ),
                None if text.contains("KubeProxyConfiguration") => Some(String::new()),
                None => None,
            }
        }
    }
}

/// Interprets a mode value. `""` is the version's default: iptables for kube-proxy up to
/// 1.36; from 1.37 on the default is planned to move to nftables, so it is unknown.
/// `version` is kube-proxy's, else the API server's (kube-proxy is never newer).
pub(crate) fn interpret_mode(
    value: &str,
    version: Option<KubeVersion>,
    what: &str,
    notes: &mut Vec<String>,
) -> (Option<ProxyMode>, String) {
    match value {
        "iptables" => (Some(ProxyMode::Iptables), format!("{what}: mode iptables")),
        "nftables" => (Some(ProxyMode::Nftables), format!("{what}: mode nftables")),
        "ipvs" => (Some(ProxyMode::Ipvs), format!("{what}: mode ipvs")),
        "" => match version {
            Some(v) if v <= KubeVersion::new(1, 36) => (
                Some(ProxyMode::Iptables),
                format!("{what}: mode \"\" (the default of kube-proxy {v}: iptables)"),
            ),
            Some(v) => {
                notes.push(format!(
                    "{what}: mode \"\" on kube-proxy {v}: the default is planned to move from iptables \
                     to nftables from 1.37, so the proxy mode is unknown; to state it: --proxy-mode"
                ));
                (
                    None,
                    format!("{what}: mode \"\" (default of kube-proxy {v}, not assumed)"),
                )
            }
            None => {
                notes.push(format!(
                    "{what}: mode \"\" and kube-proxy's version is unknown, so its default mode is \
                     unknown; to state it: --proxy-mode"
                ));
                (None, format!("{what}: mode \"\" (version unknown)"))
            }
        },
        other => {
            notes.push(format!(
                "{what}: mode {other:?} is not modelled (iptables, nftables, ipvs are); the proxy mode \
                 is treated as unknown"
            ));
            (None, format!("{what}: mode {other:?}"))
        }
    }
}

/// The ConfigMap's KubeProxyConfiguration text: `data[key]`, else the first value that
/// reads as one.
fn config_text(cm: &[u8], key: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct ConfigMap {
        #[serde(default)]
        data: BTreeMap<String, String>,
    }
    let cm: ConfigMap = serde_json::from_slice(cm).ok()?;
    if let Some(t) = cm.data.get(key) {
        return Some(t.clone());
    }
    cm.data
        .into_values()
        .find(|v| v.contains("KubeProxyConfiguration"))
}

/// `data[key]` of a ConfigMap.
fn cm_value(cm: &[u8], key: &str) -> Option<String> {
    #[derive(Deserialize)]
    struct ConfigMap {
        #[serde(default)]
        data: BTreeMap<String, String>,
    }
    serde_json::from_slice::<ConfigMap>(cm).ok()?.data.remove(key)
}

fn describe(f: &Failure) -> String {
    format!("{} {}: {}", f.code, f.reason, f.message)
}

// ---------------------------------------------------------------------------------------
// Detection
// ---------------------------------------------------------------------------------------

/// Finds the data plane. `pods` are the pods listed (for kube-proxy static pods);
/// `server_version` stands in for kube-proxy's when its image has no version tag.
pub(crate) async fn detect(
    api: &Api,
    pods: &[Pod],
    server_version: Option<KubeVersion>,
) -> Result<Detected, LiveError> {
    let mut notes = Vec::new();
    match api.get(DS_KUBE_PROXY).await? {
        Ok(body) => {
            let ds: DaemonSet = match serde_json::from_slice(&body) {
                Ok(ds) => ds,
                Err(e) => {
                    notes.push(format!("DaemonSet kube-system/kube-proxy could not be read: {e}"));
                    DaemonSet::default()
                }
            };
            let image = ds.container().map(|c| c.image.clone()).unwrap_or_default();
            let kube_proxy_version = image_version(&image);
            if kube_proxy_version.is_none() {
                notes.push(format!(
                    "kube-proxy's version is not in its image tag ({image:?}): assumed to be the API \
                     server's; to state it: --kube-proxy-version"
                ));
            }
            let version = kube_proxy_version.or(server_version);
            if let Some(mode) = ds.flag("proxy-mode") {
                let (m, source) = interpret_mode(
                    &mode,
                    version,
                    "DaemonSet kube-system/kube-proxy --proxy-mode",
                    &mut notes,
                );
                return Ok(Detected {
                    data_plane: DataPlane::KubeProxy(m),
                    source,
                    kube_proxy_version,
                    notes,
                });
            }
            let (cm, key) = ds
                .config_source()
                .unwrap_or_else(|| ("kube-proxy".to_owned(), "config.conf".to_owned()));
            let (mode, source) = from_configmap(api, &cm, &key, version, &mut notes).await?;
            Ok(Detected {
                data_plane: DataPlane::KubeProxy(mode),
                source,
                kube_proxy_version,
                notes,
            })
        }
        Err(f) if f.code == 404 => without_daemonset(api, pods, server_version, notes).await,
        Err(f) => {
            notes.push(format!(
                "cannot read DaemonSet kube-system/kube-proxy ({}): data plane, proxy mode and \
                 kube-proxy version unknown",
                describe(&f)
            ));
            Ok(Detected {
                data_plane: DataPlane::Unknown,
                source: "DaemonSet kube-system/kube-proxy not readable".to_owned(),
                kube_proxy_version: None,
                notes,
            })
        }
    }
}

/// Reads the mode from `kube-system/<cm>`, `data[key]`.
async fn from_configmap(
    api: &Api,
    cm: &str,
    key: &str,
    version: Option<KubeVersion>,
    notes: &mut Vec<String>,
) -> Result<(Option<ProxyMode>, String), LiveError> {
    let what = format!("ConfigMap kube-system/{cm} {key}");
    match api.get(&format!("{CM_PREFIX}{cm}")).await? {
        Ok(body) => match config_text(&body, key).as_deref().and_then(config_mode) {
            Some(mode) => Ok(interpret_mode(&mode, version, &what, notes)),
            None => {
                notes.push(format!(
                    "{what}: no KubeProxyConfiguration found; the proxy mode is unknown"
                ));
                Ok((None, format!("{what}: no configuration")))
            }
        },
        Err(f) => {
            notes.push(format!(
                "no --proxy-mode in DaemonSet kube-system/kube-proxy and ConfigMap kube-system/{cm} is \
                 not readable ({}): the proxy mode is unknown; to state it: --proxy-mode",
                describe(&f)
            ));
            Ok((None, format!("ConfigMap kube-system/{cm} not readable")))
        }
    }
}

/// No kube-proxy DaemonSet: static pods, a Cilium replacement, or unknown.
async fn without_daemonset(
    api: &Api,
    pods: &[Pod],
    server_version: Option<KubeVersion>,
    mut notes: Vec<String>,
) -> Result<Detected, LiveError> {
    let static_pod = pods.iter().any(|p| {
        p.meta.namespace == "kube-system"
            && (p.meta.name.starts_with("kube-proxy-")
                || p.meta.labels.get("component").is_some_and(|v| v == "kube-proxy")
                || p.meta.labels.get("k8s-app").is_some_and(|v| v == "kube-proxy"))
    });
    if static_pod {
        let (mode, source) =
            from_configmap(api, "kube-proxy", "config.conf", server_version, &mut notes).await?;
        return Ok(Detected {
            data_plane: DataPlane::KubeProxy(mode),
            source: format!("kube-proxy static pods in kube-system; {source}"),
            kube_proxy_version: None,
            notes,
        });
    }
    let cilium = |source: String, notes: Vec<String>| Detected {
        data_plane: DataPlane::Other("cilium".to_owned()),
        source,
        kube_proxy_version: None,
        notes,
    };
    match api.get(&format!("{CM_PREFIX}cilium-config")).await? {
        Ok(body) => {
            let kpr = cm_value(&body, "kube-proxy-replacement").unwrap_or_default();
            if matches!(kpr.trim(), "true" | "strict") {
                return Ok(cilium(
                    format!(
                        "ConfigMap kube-system/cilium-config: kube-proxy-replacement: {}",
                        kpr.trim()
                    ),
                    notes,
                ));
            }
            notes.push(format!(
                "Cilium is installed without full kube-proxy replacement (kube-proxy-replacement: \
                 {kpr:?}) and no kube-proxy DaemonSet was found: the data plane is unknown"
            ));
            return Ok(Detected {
                data_plane: DataPlane::Unknown,
                source: "no kube-proxy DaemonSet; Cilium without kube-proxy replacement".to_owned(),
                kube_proxy_version: None,
                notes,
            });
        }
        Err(f) if f.code != 404 => notes.push(format!(
            "ConfigMap kube-system/cilium-config not readable ({})",
            describe(&f)
        )),
        Err(_) => {}
    }
    if api.get(DS_CILIUM).await?.is_ok() {
        return Ok(cilium(
            "DaemonSet kube-system/cilium and no kube-proxy DaemonSet (kube-proxy replacement assumed)"
                .to_owned(),
            notes,
        ));
    }
    notes.push(
        "no kube-proxy DaemonSet in kube-system and no known replacement found (a managed control \
         plane or another data plane): the data plane is unknown; if it is kube-proxy, to state it: --proxy-mode"
            .to_owned(),
    );
    Ok(Detected {
        data_plane: DataPlane::Unknown,
        source: "no kube-proxy DaemonSet in kube-system".to_owned(),
        kube_proxy_version: None,
        notes,
    })
}

/// The known data plane (`locality_model::dataplane::detect`): the DaemonSets listed (their
/// containers as ingest read them), plus ConfigMap `cilium-config` where a `cilium`
/// DaemonSet runs and Calico's `default` FelixConfiguration where `calico-node` runs (each
/// read only then; unreadable ones are said to be).
pub(crate) async fn known(
    api: &Api,
    workloads: &[locality_model::objects::Workload],
) -> Result<locality_model::dataplane::Detection, LiveError> {
    use locality_model::dataplane::detect;
    let mut facts = detect::facts_from_workloads(workloads);
    if let Some(ds) = facts.daemonsets.iter().find(|d| d.name == "cilium") {
        let path = format!("/api/v1/namespaces/{}/configmaps/cilium-config", ds.namespace);
        match api.get(&path).await? {
            Ok(body) => {
                #[derive(Deserialize)]
                struct ConfigMap {
                    #[serde(default)]
                    data: BTreeMap<String, String>,
                }
                facts.cilium_config = serde_json::from_slice::<ConfigMap>(&body).ok().map(|c| c.data);
            }
            Err(f) => facts.looked_at.push(format!(
                "ConfigMap {}/cilium-config: {}",
                ds.namespace,
                describe(&f)
            )),
        }
    }
    if facts.daemonsets.iter().any(|d| d.name == "calico-node") {
        const FELIX: &str = "/apis/crd.projectcalico.org/v1/felixconfigurations/default";
        match api.get(FELIX).await? {
            Ok(body) => {
                let v: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
                facts.felix_bpf_enabled = v.pointer("/spec/bpfEnabled").and_then(serde_json::Value::as_bool);
            }
            Err(f) => facts
                .looked_at
                .push(format!("FelixConfiguration default: {}", describe(&f))),
        }
    }
    Ok(detect::detect(&facts))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ds(json: &str) -> DaemonSet {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn versions_from_image_tags() {
        let v = |s| image_version(s).map(|v| v.to_string());
        assert_eq!(v("registry.k8s.io/kube-proxy:v1.35.2").as_deref(), Some("1.35"));
        assert_eq!(
            v("602401143452.dkr.ecr.us-west-2.amazonaws.com/eks/kube-proxy:v1.29.0-minimal-eksbuild.1")
                .as_deref(),
            Some("1.29")
        );
        assert_eq!(v("localhost:5000/kube-proxy").as_deref(), None);
        assert_eq!(
            v("registry.k8s.io/kube-proxy:v1.33.1@sha256:0123abcd").as_deref(),
            Some("1.33")
        );
        assert_eq!(v("registry.k8s.io/kube-proxy@sha256:0123abcd").as_deref(), None);
        assert_eq!(v("kube-proxy:latest").as_deref(), None);
    }

    #[test]
    fn flags_in_args_command_and_shell_wrappers() {
        let d = ds(
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"kube-proxy","image":"x:v1.35.0",
            "command":["/usr/local/bin/kube-proxy","--config=/var/lib/kube-proxy/config.conf"],
            "args":["--proxy-mode","ipvs"]}]}}}}"#,
        );
        assert_eq!(d.flag("proxy-mode").as_deref(), Some("ipvs"));
        let d = ds(
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar"},{"name":"kube-proxy",
            "command":["/bin/sh","-c","exec kube-proxy --proxy-mode=nftables --v=2"]}]}}}}"#,
        );
        assert_eq!(d.flag("proxy-mode").as_deref(), Some("nftables"));
        assert_eq!(d.flag("config"), None);
    }

    #[test]
    fn config_source_follows_the_volume_mount() {
        let d = ds(
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"kube-proxy",
            "command":["kube-proxy","--config=/var/lib/kube-proxy-config/config"],
            "volumeMounts":[{"name":"config","mountPath":"/var/lib/kube-proxy-config/"},
                            {"name":"kubeconfig","mountPath":"/var/lib/kube-proxy/"}]}],
            "volumes":[{"name":"config","configMap":{"name":"kube-proxy-config"}},
                       {"name":"kubeconfig","configMap":{"name":"kube-proxy"}}]}}}}"#,
        );
        assert_eq!(
            d.config_source(),
            Some(("kube-proxy-config".to_owned(), "config".to_owned()))
        );
    }

    #[test]
    fn modes_from_configuration_text() {
        let kubeadm = "apiVersion: kubeproxy.config.k8s.io/v1alpha1\nbindAddress: 0.0.0.0\n\
                       clientConnection:\n  kubeconfig: /var/lib/kube-proxy/kubeconfig.conf\n\
                       iptables:\n  masqueradeAll: false\nkind: KubeProxyConfiguration\nmode: \"\"\n";
        assert_eq!(config_mode(kubeadm).as_deref(), Some(""));
        assert_eq!(
            config_mode("kind: KubeProxyConfiguration\nmode: ipvs\n").as_deref(),
            Some("ipvs")
        );
        assert_eq!(config_mode("kind: KubeProxyConfiguration\n").as_deref(), Some(""));
        assert_eq!(
            config_mode("{\"kind\":\"KubeProxyConfiguration\",\"mode\":\"nftables\"}").as_deref(),
            Some("nftables")
        );
    }

    #[test]
    fn empty_mode_is_iptables_only_up_to_1_36() {
        let mut notes = Vec::new();
        let (m, _) = interpret_mode("", Some(KubeVersion::new(1, 36)), "cm", &mut notes);
        assert_eq!(m, Some(ProxyMode::Iptables));
        assert!(notes.is_empty());
        let (m, _) = interpret_mode("", Some(KubeVersion::new(1, 37)), "cm", &mut notes);
        assert_eq!(m, None);
        assert!(notes[0].contains("nftables"), "{notes:?}");
        let (m, _) = interpret_mode("", None, "cm", &mut notes);
        assert_eq!(m, None);
        let (m, _) = interpret_mode("kernelspace", Some(KubeVersion::new(1, 30)), "cm", &mut notes);
        assert_eq!(m, None);
        let (m, _) = interpret_mode("nftables", None, "cm", &mut notes);
        assert_eq!(m, Some(ProxyMode::Nftables));
    }
}
