//! Reading `audit --baseline FILE`: the findings of an earlier `locality audit` run, from
//! its SARIF log (`partialFingerprints."localityFinding/v1"`) or its `AuditReport` document
//! (`-o json` or `-o yaml`).

use locality_audit::Baseline;
use locality_audit::baseline::{FINGERPRINT_KEY, fingerprint, port_key};
use serde_json::Value;

/// Reads a baseline from `bytes` (the file `name`, for messages).
///
/// # Errors
/// A document that is neither JSON nor YAML, neither a SARIF log nor an `AuditReport`, a
/// SARIF run of another tool, or a finding or result without the fields that identify it:
/// the message names the file and the item.
pub fn read_baseline(name: &str, bytes: &[u8]) -> Result<Baseline, String> {
    let doc: Value = match serde_json::from_slice(bytes) {
        Ok(v) => v,
        Err(json) => {
            let text = std::str::from_utf8(bytes).map_err(|_| format!("{name}: not UTF-8 text"))?;
            serde_saphyr::from_str_with_options(text, yaml_options(text.len()))
                .map_err(|yaml| format!("{name}: neither JSON ({json}) nor YAML ({yaml})"))?
        }
    };
    if let Some(runs) = doc.get("runs").and_then(Value::as_array) {
        return from_sarif(name, runs);
    }
    match doc.get("kind").and_then(Value::as_str) {
        Some("AuditReport") => from_report(name, &doc),
        kind => Err(format!(
            "{name}: not a baseline: expected a SARIF log or an AuditReport written by `locality \
             audit`, got {}",
            kind.map_or_else(
                || "a document without `kind`".to_string(),
                |k| format!("kind {k:?}")
            )
        )),
    }
}

/// serde-saphyr's options for a baseline of `len` bytes: the budgets that grow with a
/// document (events, nodes, scalar bytes) scale with the file, as ingest's do, so the tool's
/// own `-o yaml` report of any size is read back; what size cannot explain (aliases, depth)
/// keeps the default caps.
fn yaml_options(len: usize) -> serde_saphyr::Options {
    let mut budget = serde_saphyr::Budget::default();
    let linear = len.saturating_mul(2).saturating_add(1_000_000);
    budget.max_events = linear;
    budget.max_nodes = linear;
    budget.max_total_scalar_bytes = len.saturating_add(64 << 20);
    budget.max_reader_input_bytes = None;
    let mut o = serde_saphyr::Options::default();
    o.budget = Some(budget);
    o
}

fn from_sarif(name: &str, runs: &[Value]) -> Result<Baseline, String> {
    let mut prints = Vec::new();
    for (r, run) in runs.iter().enumerate() {
        let tool = run
            .pointer("/tool/driver/name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if tool != "locality" {
            return Err(format!(
                "{name}: runs[{r}] is from tool {tool:?}, not locality: a baseline is a SARIF log \
                 written by `locality audit -o sarif`"
            ));
        }
        let results = run
            .get("results")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice);
        for (i, result) in results.iter().enumerate() {
            let print = result
                .get("partialFingerprints")
                .and_then(|p| p.get(FINGERPRINT_KEY))
                .and_then(Value::as_str)
                .ok_or_else(|| {
                    format!("{name}: runs[{r}].results[{i}] has no partialFingerprints.\"{FINGERPRINT_KEY}\"")
                })?;
            // Logs of earlier versions ended a port-less fingerprint with `:`.
            prints.push(print.trim_end_matches(':').to_string());
        }
    }
    Ok(Baseline::new(prints))
}

fn from_report(name: &str, doc: &Value) -> Result<Baseline, String> {
    let findings = doc
        .get("findings")
        .and_then(Value::as_array)
        .ok_or_else(|| format!("{name}: the AuditReport has no `findings` list"))?;
    let mut prints = Vec::with_capacity(findings.len());
    for (i, f) in findings.iter().enumerate() {
        let text = |v: Option<&Value>, field: &str| {
            v.and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| format!("{name}: findings[{i}].{field} is missing or not a string"))
        };
        let rule = text(f.get("rule"), "rule")?;
        let namespace = text(f.pointer("/service/namespace"), "service.namespace")?;
        let service = text(f.pointer("/service/name"), "service.name")?;
        let port = match f.get("port") {
            None | Some(Value::Null) => None,
            Some(p) => {
                let number = p
                    .get("port")
                    .and_then(Value::as_u64)
                    .ok_or_else(|| format!("{name}: findings[{i}].port.port is missing or not a number"))?;
                let protocol = text(p.get("protocol"), "port.protocol")?;
                let port_name = text(p.get("name"), "port.name")?;
                Some(port_key(&port_name, number, &protocol))
            }
        };
        let family = match f.get("ipFamily") {
            None | Some(Value::Null) => None,
            v => Some(text(v, "ipFamily")?),
        };
        prints.push(fingerprint(
            &rule,
            &namespace,
            &service,
            port.as_deref(),
            family.as_deref(),
        ));
    }
    Ok(Baseline::new(prints))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sarif_and_report_fingerprints_agree() {
        let sarif = br#"{"runs": [{"tool": {"driver": {"name": "locality"}}, "results": [
            {"partialFingerprints": {"localityFinding/v1": "LOC004:monitoring/agent:otlp:4317/TCP:IPv4"}},
            {"partialFingerprints": {"localityFinding/v1": "LOC011:web/api:"}}]}]}"#;
        let report = br#"{"kind": "AuditReport", "findings": [
            {"rule": "LOC004", "service": {"namespace": "monitoring", "name": "agent"},
             "port": {"name": "otlp", "protocol": "TCP", "port": 4317}, "ipFamily": "IPv4"},
            {"rule": "LOC011", "service": {"namespace": "web", "name": "api"}, "port": null}]}"#;
        let a = read_baseline("a.sarif", sarif).unwrap();
        let b = read_baseline("b.json", report).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.len(), 2);
        let yaml = b"kind: AuditReport\nfindings:\n- rule: LOC011\n  service: {namespace: web, name: api}\n";
        assert_eq!(read_baseline("c.yaml", yaml).unwrap().len(), 1);
    }

    #[test]
    fn results_without_the_fingerprint_are_refused() {
        let sarif = br#"{"runs": [{"tool": {"driver": {"name": "locality"}}, "results": [{}]}]}"#;
        let e = read_baseline("x.sarif", sarif).unwrap_err();
        assert!(e.contains("x.sarif: runs[0].results[0]"), "{e}");
    }
}
