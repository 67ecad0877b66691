//! The `SimulationReport` as JSON (pretty, camelCase; schema
//! `docs/schemas/simulation-report.schema.json`).

use std::io::{self, Write};

use super::SimulationReport;

/// Writes the document and a newline.
pub fn write_json(report: &SimulationReport, out: &mut dyn Write) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, report)?;
    writeln!(out)
}
