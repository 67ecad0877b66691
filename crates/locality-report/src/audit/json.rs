//! `audit -o json`: the [`AuditReport`] serialized as-is, the stable `apiVersion:
//! locality/v1`, `kind: AuditReport` document (schema: the `locality-audit` README).

use std::io::{self, Write};

use locality_audit::AuditReport;
use serde::Serialize;

use crate::header::ReportHeader;

/// The document: the report's fields, then `header` (added in place: no field of the
/// report is renamed or removed).
#[derive(Serialize)]
pub(crate) struct Document<'a> {
    #[serde(flatten)]
    pub report: &'a AuditReport,
    pub header: &'a ReportHeader,
}

/// Writes the report as pretty-printed JSON followed by a newline.
pub fn write_json(report: &AuditReport, header: &ReportHeader, out: &mut dyn Write) -> io::Result<()> {
    let doc = Document { report, header };
    crate::encode::json_pretty(&doc, &mut *out)?;
    writeln!(out)
}
