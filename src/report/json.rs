//! The JSON export: the comparison model itself, pretty-printed, with every value unrounded. Its
//! layout is described by `schemas/compare-report.schema.json`.

use super::model::CompareReport;
use crate::error::{Error, Result};

/// The JSON text of `report`.
pub fn render(report: &CompareReport) -> Result<String> {
    let mut s = serde_json::to_string_pretty(report)
        .map_err(|e| Error::Other(format!("cannot write the report as JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}

/// Reads a report written by [`render`] back.
pub fn parse(text: &str) -> Result<CompareReport> {
    serde_json::from_str(text).map_err(|e| Error::Other(format!("not a versus comparison report: {e}")))
}
