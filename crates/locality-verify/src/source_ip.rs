//! `X2s`'s second question: which address the backend saw the connection come from. Under
//! `externalTrafficPolicy: Local` kube-proxy delivers external traffic only to the node's own
//! endpoints and does not masquerade it, so the backend sees the client's own address (the
//! node of a hostNetwork client); under `Cluster` it masquerades to the receiving node's
//! address (upstream `pkg/proxy/iptables/proxier.go`, the `KUBE-EXT-*` chains: external
//! traffic is marked for masquerade unless the policy is Local).

use locality_model::objects::ClusterState;

use crate::env::Env;
use crate::error::VerifyError;
use crate::judge::Status;
use crate::probe::{Probe, Seen, Try};
use crate::record::CaseRecord;

/// Tries of the `clientip` question: every answer must show the client's address.
pub const SOURCE_TRIES: usize = 3;

/// The IP of a netexec `/clientip` answer (`IP:PORT`, IPv6 bracketed).
pub fn answer_ip(answer: &str) -> Option<&str> {
    let (ip, port) = answer.trim().rsplit_once(':')?;
    port.parse::<u16>().ok()?;
    Some(ip.trim_start_matches('[').trim_end_matches(']'))
}

/// Judges `clientip` tries against the client's address: PASS when every try answered with
/// it, FAIL when one answered with another (masqueraded), INCOMPLETE otherwise.
pub fn judge_source(client_ip: &str, tries: &[Try]) -> (Status, String) {
    let mut seen = Vec::new();
    for t in tries {
        let Seen::Answer { responder } = &t.seen else {
            return (
                Status::Incomplete,
                format!("the client-address question got no answer: {}", t.raw),
            );
        };
        match answer_ip(responder) {
            Some(ip) => seen.push(ip.to_string()),
            None => {
                return (
                    Status::Incomplete,
                    format!("the backend's /clientip answer {responder:?} is not IP:PORT"),
                );
            }
        }
    }
    if let Some(other) = seen.iter().find(|ip| *ip != client_ip) {
        return (
            Status::Fail,
            format!(
                "the backend saw the connection come from {other}, not from the client {client_ip}: the source was masqueraded"
            ),
        );
    }
    (
        Status::Pass,
        format!(
            "the backend saw the client's own address {client_ip} in {} of {} tries",
            seen.len(),
            tries.len()
        ),
    )
}

/// After a passing `X2s`: asks the backend [`SOURCE_TRIES`] times which address it saw, and
/// folds the judgement into `r` (a masqueraded source is a FAIL once it reproduces).
pub(crate) async fn check_preserved(
    env: &Env<'_>,
    snap: &ClusterState,
    client_node: &str,
    probe: &Probe,
    r: &mut CaseRecord,
) -> Result<(), VerifyError> {
    let client_ip = crate::env::node_ip(snap, client_node);
    let ask = Probe {
        request: "clientip",
        ..probe.clone()
    };
    let mut tries = env.round(&ask, SOURCE_TRIES).await?;
    let (mut status, mut why) = judge_source(&client_ip, &tries);
    if status == Status::Fail {
        // The automatic retry, as for every failure.
        env.cluster.sleep(env.opts.settle).await;
        let again = env.round(&ask, SOURCE_TRIES).await?;
        let (s2, w2) = judge_source(&client_ip, &again);
        tries.extend(again);
        (status, why) = if s2 == Status::Fail {
            (Status::Fail, format!("{why}; reproduced: {w2}"))
        } else {
            (
                Status::Incomplete,
                format!("a violation that did not reproduce: {why}; retry: {w2}"),
            )
        };
    }
    r.rounds += 1;
    r.tries.extend(tries);
    r.why = format!("{}; {why}", r.why);
    r.status = status;
    if let Some(n) = r.nodes.last_mut() {
        n.status = status;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answered(text: &str) -> Try {
        Try {
            channel: "proxy",
            client: "host-client-n2".into(),
            target: "10.0.0.1:30080".into(),
            protocol: "http",
            sent_ms: 0,
            received_ms: 1,
            seen: Seen::Answer {
                responder: text.into(),
            },
            raw: String::new(),
        }
    }

    #[test]
    fn the_client_address_must_be_the_one_the_backend_saw() {
        let own = [answered("10.0.0.2:40001"), answered("10.0.0.2:40002")];
        assert_eq!(judge_source("10.0.0.2", &own).0, Status::Pass);
        let masqueraded = [answered("10.0.0.2:40001"), answered("10.0.0.1:40002")];
        let (s, why) = judge_source("10.0.0.2", &masqueraded);
        assert_eq!(s, Status::Fail);
        assert!(why.contains("10.0.0.1") && why.contains("masqueraded"), "{why}");
        assert_eq!(
            judge_source("10.0.0.2", &[answered("web-a")]).0,
            Status::Incomplete
        );
        assert_eq!(answer_ip("[fd00::2]:4000"), Some("fd00::2"));
    }
}
