//! `audit -o json`: the [`AuditReport`] serialized as-is, the stable `apiVersion:
//! locality/v1`, `kind: AuditReport` document (schema: the `locality-audit` README).

use std::io::{self, Write};

use locality_audit::AuditReport;

/// Writes the report as pretty-printed JSON followed by a newline.
pub fn write_json(report: &AuditReport, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report).map_err(io::Error::other)?;
    writeln!(out)
}
