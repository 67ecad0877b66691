//! Client restarts: a client pod (a netexec client, a probe loop) whose container restarted
//! while a case was probing has tries that are not evidence of the data plane (connections
//! lost with the process, a loop that began again), so the case is INCOMPLETE, never judged
//! on them. The run reads its pods' `restartCount` before and after each case.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::judge::Status;
use crate::record::CaseRecord;

/// How the reason of a case made INCOMPLETE by a restart begins.
const RESTARTED: &str = "the client restarted during the case";

/// Pod name → the sum of its containers' `restartCount`, from a pod list.
pub fn restart_counts(list: &Value) -> BTreeMap<String, u64> {
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| {
            let name = p["metadata"]["name"].as_str()?;
            let restarts = p["status"]["containerStatuses"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|c| c["restartCount"].as_u64())
                .sum();
            Some((name.to_string(), restarts))
        })
        .collect()
}

/// Marks `r` INCOMPLETE when a pod that made one of its tries restarted between `before`
/// and `after` (a PASS, a FAIL and an INCOMPLETE alike: the tries are not evidence).
pub fn judge_restarts(before: &BTreeMap<String, u64>, after: &BTreeMap<String, u64>, r: &mut CaseRecord) {
    // Not executed, or already judged (a case that read its own clients' restarts).
    if r.status == Status::NotExecuted || r.why.starts_with(RESTARTED) {
        return;
    }
    let mut clients: Vec<&str> = r.tries.iter().map(|t| t.client.as_str()).collect();
    clients.sort_unstable();
    clients.dedup();
    let restarted: Vec<String> = clients
        .iter()
        .filter_map(|c| {
            let (was, is) = (before.get(*c).copied().unwrap_or(0), after.get(*c).copied()?);
            (is > was).then(|| format!("{c} (restartCount {was} → {is})"))
        })
        .collect();
    if restarted.is_empty() {
        return;
    }
    r.why = format!(
        "{RESTARTED}: {}; its tries are not evidence (was {}: {})",
        restarted.join(", "),
        r.status.as_str(),
        r.why
    );
    r.status = Status::Incomplete;
    for n in &mut r.nodes {
        n.status = Status::Incomplete;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::case;
    use crate::probe::{Seen, Try};
    use crate::record::record;
    use serde_json::json;

    fn pods(counts: &[(&str, u64)]) -> Value {
        json!({"items": counts.iter().map(|(n, c)| json!({
            "metadata": {"name": n},
            "status": {"containerStatuses": [{"name": "netexec", "restartCount": c}]}
        })).collect::<Vec<_>>()})
    }

    #[test]
    fn a_client_that_restarted_during_the_case_makes_it_incomplete() {
        let mut r = record(case("B1").unwrap(), Some("node-a"));
        r.status = Status::Pass;
        r.why = "21 of 21 answered".into();
        r.tries = vec![Try {
            channel: "proxy",
            client: "client-n1".into(),
            target: "10.96.0.10:80".into(),
            protocol: "http",
            sent_ms: 0,
            received_ms: 1,
            seen: Seen::Answer {
                responder: "b-be-n1".into(),
            },
            raw: String::new(),
        }];
        let before = restart_counts(&pods(&[("client-n1", 0), ("client-n3", 0)]));
        // Another pod restarting does not matter.
        let other = restart_counts(&pods(&[("client-n1", 0), ("client-n3", 2)]));
        let mut same = r.clone();
        judge_restarts(&before, &other, &mut same);
        assert_eq!(same.status, Status::Pass);
        let after = restart_counts(&pods(&[("client-n1", 1), ("client-n3", 0)]));
        judge_restarts(&before, &after, &mut r);
        assert_eq!(r.status, Status::Incomplete);
        assert!(
            r.why.contains("client-n1 (restartCount 0 → 1)") && r.why.contains("was PASS"),
            "{}",
            r.why
        );
    }
}
