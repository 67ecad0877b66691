//! `audit -o yaml`: the same `AuditReport` document as [`json`](super::json), in YAML.

use std::io::{self, Write};

use locality_audit::AuditReport;

use crate::header::ReportHeader;

/// Writes the report as one YAML document (with its `header`).
pub fn write_yaml(report: &AuditReport, header: &ReportHeader, out: &mut dyn Write) -> io::Result<()> {
    let doc = super::json::Document { report, header };
    let text = crate::encode::yaml_string(&doc)?;
    out.write_all(text.as_bytes())
}
