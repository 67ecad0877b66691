//! The `SimulationReport` as JSON (pretty, camelCase; schema
//! `docs/schemas/simulation-report.schema.json`).

use std::io::{self, Write};

use super::SimulationReport;

/// Writes the document and a newline.
pub fn write_json(report: &SimulationReport, out: &mut dyn Write) -> io::Result<()> {
    crate::encode::json_pretty(report, &mut *out)?;
    writeln!(out)
}
