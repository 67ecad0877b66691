//! Which cluster to read: kubeconfig, context and namespace resolved as kubectl does.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::error::{LiveError, chain};
use crate::{LiveOptions, Target};

/// Where the kubeconfig comes from, in kubectl's order of precedence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum KubeconfigSource {
    /// `--kubeconfig PATH`.
    Flag(PathBuf),
    /// `KUBECONFIG`: the files of the list that exist, merged (first wins).
    Env(Vec<PathBuf>),
    /// `~/.kube/config`.
    Home(PathBuf),
    /// No kubeconfig, but running in a pod: the ServiceAccount token and CA.
    InCluster,
}

impl KubeconfigSource {
    fn describe(&self) -> String {
        match self {
            KubeconfigSource::Flag(p) | KubeconfigSource::Home(p) => p.display().to_string(),
            KubeconfigSource::Env(ps) => ps
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(if cfg!(windows) { ";" } else { ":" }),
            KubeconfigSource::InCluster => "in-cluster".to_owned(),
        }
    }
}

/// Picks the kubeconfig source from the flag, the `KUBECONFIG` value, the home directory
/// and whether an in-cluster ServiceAccount is mounted (pure: the caller reads the
/// environment, so this is testable).
///
/// As client-go's loading rules: files named in `KUBECONFIG` that do not exist are
/// ignored; an empty `KUBECONFIG` counts as unset.
pub(crate) fn pick_source(
    flag: Option<&Path>,
    env: Option<&OsStr>,
    home: Option<&Path>,
    in_cluster: bool,
) -> Result<KubeconfigSource, LiveError> {
    if let Some(p) = flag {
        return Ok(KubeconfigSource::Flag(p.to_path_buf()));
    }
    let mut looked = Vec::new();
    if let Some(value) = env {
        let listed: Vec<PathBuf> = std::env::split_paths(value)
            .filter(|p| !p.as_os_str().is_empty())
            .collect();
        if !listed.is_empty() {
            let existing: Vec<PathBuf> = listed.iter().filter(|p| p.is_file()).cloned().collect();
            if !existing.is_empty() {
                return Ok(KubeconfigSource::Env(existing));
            }
            // kubectl does not fall back to ~/.kube/config when KUBECONFIG is set.
            if in_cluster {
                return Ok(KubeconfigSource::InCluster);
            }
            return Err(LiveError::NoKubeconfig {
                detail: format!(
                    "KUBECONFIG names {} but none exists",
                    listed
                        .iter()
                        .map(|p| p.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            });
        }
    } else {
        looked.push("KUBECONFIG is not set".to_owned());
    }
    match home {
        Some(h) => {
            let p = h.join(".kube").join("config");
            if p.is_file() {
                return Ok(KubeconfigSource::Home(p));
            }
            looked.push(format!("{} does not exist", p.display()));
        }
        None => looked.push("no home directory".to_owned()),
    }
    if in_cluster {
        return Ok(KubeconfigSource::InCluster);
    }
    Err(LiveError::NoKubeconfig {
        detail: looked.join(", "),
    })
}

/// True when a ServiceAccount is mounted and the API server's address is in the
/// environment (what `rest.InClusterConfig` requires).
fn in_cluster_available() -> bool {
    std::env::var_os("KUBERNETES_SERVICE_HOST").is_some()
        && Path::new("/var/run/secrets/kubernetes.io/serviceaccount/token").is_file()
}

/// Reads the kubeconfig file(s) of a source (not for [`KubeconfigSource::InCluster`]).
fn read_kubeconfig(source: &KubeconfigSource) -> Result<Kubeconfig, LiveError> {
    let err = |e: kube::config::KubeconfigError| LiveError::Kubeconfig {
        source_name: source.describe(),
        message: chain(&e),
    };
    match source {
        KubeconfigSource::Flag(p) | KubeconfigSource::Home(p) => Kubeconfig::read_from(p).map_err(err),
        KubeconfigSource::Env(ps) => {
            let mut merged = Kubeconfig::default();
            for p in ps {
                merged = merged
                    .merge(Kubeconfig::read_from(p).map_err(err)?)
                    .map_err(err)?;
            }
            Ok(merged)
        }
        KubeconfigSource::InCluster => Ok(Kubeconfig::default()),
    }
}

/// The context `flag` names, else the kubeconfig's `current-context`; it must exist. The
/// error is the message for [`LiveError::Kubeconfig`].
fn choose_context(kubeconfig: &Kubeconfig, flag: Option<&str>) -> Result<String, String> {
    let known = || {
        let names: Vec<&str> = kubeconfig.contexts.iter().map(|c| c.name.as_str()).collect();
        if names.is_empty() {
            "it defines no contexts".to_owned()
        } else {
            format!("known contexts: {}", names.join(", "))
        }
    };
    let context = match (flag, &kubeconfig.current_context) {
        (Some(c), _) => c.to_owned(),
        (None, Some(c)) if !c.is_empty() => c.clone(),
        _ => {
            return Err(format!(
                "no current-context is set; pass --context NAME ({})",
                known()
            ));
        }
    };
    if !kubeconfig.contexts.iter().any(|c| c.name == context) {
        return Err(format!("context {context:?} not found ({})", known()));
    }
    Ok(context)
}

/// The context `opts` resolves to (`contexts[].context`), as kubectl would pick it; `None`
/// in-cluster.
///
/// Only the kubeconfig's structure is parsed: no credential is read from it or elsewhere
/// (no exec plugin or auth provider runs, no token or certificate file is opened) and
/// nothing is written.
fn chosen_context(opts: &LiveOptions) -> Result<Option<kube::config::Context>, LiveError> {
    let source = pick_source(
        opts.kubeconfig.as_deref(),
        std::env::var_os("KUBECONFIG").as_deref(),
        std::env::home_dir().as_deref(),
        in_cluster_available(),
    )?;
    if source == KubeconfigSource::InCluster {
        return Ok(None);
    }
    let kubeconfig = read_kubeconfig(&source)?;
    let context =
        choose_context(&kubeconfig, opts.context.as_deref()).map_err(|message| LiveError::Kubeconfig {
            source_name: source.describe(),
            message,
        })?;
    Ok(kubeconfig
        .contexts
        .into_iter()
        .find(|c| c.name == context)
        .and_then(|c| c.context))
}

/// The server of the context `opts` resolves to when its cluster has
/// `insecure-skip-tls-verify` set (`clusters[].cluster`); `None` otherwise and in-cluster.
/// Reads no credential, as [`context_user`].
pub(crate) fn context_insecure(opts: &LiveOptions) -> Result<Option<String>, LiveError> {
    let source = pick_source(
        opts.kubeconfig.as_deref(),
        std::env::var_os("KUBECONFIG").as_deref(),
        std::env::home_dir().as_deref(),
        in_cluster_available(),
    )?;
    if source == KubeconfigSource::InCluster {
        return Ok(None);
    }
    let kubeconfig = read_kubeconfig(&source)?;
    let Some(cluster) = chosen_context(opts)?.map(|c| c.cluster) else {
        return Ok(None);
    };
    Ok(kubeconfig
        .clusters
        .iter()
        .find(|c| c.name == cluster)
        .and_then(|c| c.cluster.as_ref())
        .filter(|c| c.insecure_skip_tls_verify == Some(true))
        .map(|c| crate::error::without_userinfo(c.server.as_deref().unwrap_or_default())))
}

/// The user name of the context `opts` resolves to (`contexts[].context.user`); `None`
/// in-cluster or when the context names no user.
pub(crate) fn context_user(opts: &LiveOptions) -> Result<Option<String>, LiveError> {
    Ok(chosen_context(opts)?
        .and_then(|c| c.user)
        .filter(|u| !u.is_empty()))
}

/// The namespace of the context `opts` resolves to (`contexts[].context.namespace`); `None`
/// in-cluster or when the context names none.
pub(crate) fn context_namespace(opts: &LiveOptions) -> Result<Option<String>, LiveError> {
    Ok(chosen_context(opts)?
        .and_then(|c| c.namespace)
        .filter(|n| !n.is_empty()))
}

/// A kube [`Config`](kube::Config) plus what the user should be told about it.
pub(crate) struct Resolved {
    pub config: kube::Config,
    pub target: Target,
}

/// How long one read from the connection may stall before the request fails.
const READ_TIMEOUT: Duration = Duration::from_secs(60);

/// Resolves `opts` as kubectl does: `--kubeconfig`, else `KUBECONFIG`, else
/// `~/.kube/config`, else in-cluster; `--context`, else `current-context`; `-n`, else the
/// context's namespace, else `default`; `-A` for all namespaces.
pub(crate) async fn resolve(opts: &LiveOptions) -> Result<Resolved, LiveError> {
    let source = pick_source(
        opts.kubeconfig.as_deref(),
        std::env::var_os("KUBECONFIG").as_deref(),
        std::env::home_dir().as_deref(),
        in_cluster_available(),
    )?;
    let source_name = source.describe();
    let kerr = |message: String| LiveError::Kubeconfig {
        source_name: source_name.clone(),
        message,
    };
    let (mut config, context) = if source == KubeconfigSource::InCluster {
        if let Some(ctx) = &opts.context {
            return Err(kerr(format!(
                "--context {ctx} given, but there is no kubeconfig (running in a pod)"
            )));
        }
        let config = kube::Config::incluster().map_err(|e| kerr(chain(&e)))?;
        (config, None)
    } else {
        let kubeconfig = read_kubeconfig(&source)?;
        let context = choose_context(&kubeconfig, opts.context.as_deref()).map_err(kerr)?;
        let options = KubeConfigOptions {
            context: Some(context.clone()),
            ..Default::default()
        };
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &options)
            .await
            .map_err(|e| kerr(format!("context {context:?}: {}", chain(&e))))?;
        (config, Some(context))
    };
    // Retries are ours (crate::fetch): kube's default policy retries 503 up to 15 times
    // with delays growing to minutes, and never retries a 500.
    config.default_retry = false;
    config.read_timeout = Some(READ_TIMEOUT);
    config.reset_reader_on_write = true;
    let namespace = if opts.all_namespaces {
        None
    } else {
        Some(
            opts.namespace
                .clone()
                .filter(|n| !n.is_empty())
                .unwrap_or_else(|| config.default_namespace.clone()),
        )
    };
    // Shown in messages and reports: never the URL's user information (a password).
    let server = crate::error::without_userinfo(config.cluster_url.to_string().trim_end_matches('/'));
    Ok(Resolved {
        target: Target {
            kubeconfig: source_name,
            context,
            server,
            namespace,
            insecure_skip_tls_verify: config.accept_invalid_certs,
        },
        config,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_wins_over_everything() {
        let s = pick_source(
            Some(Path::new("/x/config")),
            Some(OsStr::new("/y")),
            Some(Path::new("/")),
            true,
        )
        .unwrap();
        assert_eq!(s, KubeconfigSource::Flag("/x/config".into()));
    }

    #[test]
    fn kubeconfig_env_keeps_existing_files_in_order() {
        let dir = locality_testkit::files::TempDir::new("live-cfg");
        let a = dir.join("a");
        let b = dir.join("b");
        std::fs::write(&a, "").unwrap();
        std::fs::write(&b, "").unwrap();
        let missing = dir.join("missing");
        let list = std::env::join_paths([&b, &missing, &a]).unwrap();
        let s = pick_source(None, Some(&list), None, false).unwrap();
        assert_eq!(s, KubeconfigSource::Env(vec![b.clone(), a.clone()]));
        // Only missing files: as kubectl, not the home config instead.
        let list = std::env::join_paths([&missing]).unwrap();
        let home = dir.join("home");
        std::fs::create_dir_all(home.join(".kube")).unwrap();
        std::fs::write(home.join(".kube/config"), "").unwrap();
        let e = pick_source(None, Some(&list), Some(&home), false).unwrap_err();
        assert!(e.to_string().contains("KUBECONFIG names"), "{e}");
        assert!(e.to_string().contains("none exists"), "{e}");
        // Empty KUBECONFIG counts as unset.
        let s = pick_source(None, Some(OsStr::new("")), Some(&home), false).unwrap();
        assert_eq!(s, KubeconfigSource::Home(home.join(".kube/config")));
    }

    #[test]
    fn nothing_found_is_a_clear_error_unless_in_cluster() {
        let nowhere = Path::new("/nonexistent-locality-home");
        let e = pick_source(None, None, Some(nowhere), false).unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("no kubeconfig: KUBECONFIG is not set"), "{text}");
        assert!(text.contains("--kubeconfig"), "{text}");
        assert!(text.contains("-f FILE"), "{text}");
        assert!(matches!(e, LiveError::NoKubeconfig { .. }), "{e:?}");
        assert_eq!(
            pick_source(None, None, Some(nowhere), true).unwrap(),
            KubeconfigSource::InCluster
        );
    }
}

#[cfg(test)]
mod fuzz {
    use super::*;
    use proptest::prelude::*;

    const TOKEN: &str = "PlantedToken0123456789abcdefXYZ";
    const KEY: &str = "U0VDUkVUS0VZREFUQWFiY2RlZmdoaWprbG1ub3BxcnN0dXZ3eHl6MDEyMzQ1Njc4OQ==";
    const PASSWORD: &str = "Hunter2Planted";

    fn kubeconfig() -> String {
        format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\nclusters:\n- name: k\n  cluster:\n    server: https://admin:{PASSWORD}@10.0.0.1:6443\n    proxy-url: http://p:{PASSWORD}@proxy:3128\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\nusers:\n- name: u\n  user:\n    token: {TOKEN}\n    client-key-data: {KEY}\n    username: admin\n    password: {PASSWORD}\n"
        )
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2048, ..ProptestConfig::default() })]

        /// Byte-level fuzzing of kubeconfig reading: a kubeconfig with a few bytes
        /// changed reads, or fails with a message in which no secret it still holds
        /// appears.
        #[test]
        fn a_mutated_kubeconfig_never_shows_its_secrets(
            edits in proptest::collection::vec(
                (any::<usize>(), proptest::sample::select(b"{}[]:,\"'\n -&*!#|>\t".to_vec())),
                1..5,
            ),
        ) {
            let mut text = kubeconfig().into_bytes();
            for (at, b) in edits {
                let at = at % text.len();
                text[at] = b;
            }
            let text = String::from_utf8_lossy(&text).into_owned();
            if let Err(e) = Kubeconfig::from_yaml(&text) {
                let shown = chain(&e);
                prop_assert!(!shown.contains('\n'), "{}", shown);
                for secret in [TOKEN, KEY, PASSWORD] {
                    prop_assert!(
                        !(text.contains(secret) && shown.contains(secret)),
                        "{} shows {}",
                        shown,
                        secret
                    );
                }
            }
        }
    }
}
