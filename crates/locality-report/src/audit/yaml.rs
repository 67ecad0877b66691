//! `audit -o yaml`: the same `AuditReport` document as [`json`](super::json), in YAML.

use std::io::{self, Write};

use locality_audit::AuditReport;

/// Writes the report as one YAML document.
pub fn write_yaml(report: &AuditReport, out: &mut dyn Write) -> io::Result<()> {
    let text = serde_saphyr::to_string(report).map_err(io::Error::other)?;
    out.write_all(text.as_bytes())
}
