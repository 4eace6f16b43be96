//! Comparisons and reports: `versus compare` and `versus report`.
//!
//! One model, [`CompareReport`], is built from the results store by [`build_report`] (selection in
//! [`mod@select`], statistics in [`comparison`] via [`crate::stats`]); every export format renders that same
//! model, so all of them carry the same numbers. The text formats share their table layout
//! ([`tables`]) and number formatting ([`fmt`]).
//!
//! - [`terminal`]: the table `versus compare` prints, coloured.
//! - [`markdown`]: ready to paste into a blog post.
//! - [`json`]: the model itself (schema: `schemas/compare-report.schema.json`).
//! - [`csv`]: one row per case and side.
//! - [`html`]: a self-contained page with inline SVG charts (no JavaScript, no external resources).
//!
//! The markdown and HTML exports also carry the sections of [`mod@explain`]: changed defaults and
//! settings per candidate, the version series with change points, and `versus explain` attributions.

pub mod advise;
pub mod advise_section;
pub mod comparison;
pub mod csv;
pub mod explain;
pub mod fmt;
pub mod html;
pub mod json;
pub mod markdown;
pub mod model;
pub mod noise;
pub mod profile;
pub mod profile_model;
pub mod select;
pub mod summary;
pub mod tables;
pub mod terminal;
mod values;
pub mod variables;

use std::fmt as stdfmt;
use std::str::FromStr;

pub use comparison::build_report;
pub use model::{CiKind, CompareReport, Dimension, REPORT_FORMAT_VERSION, Verdict};
pub use select::{Selection, select};

use crate::error::Result;

/// An export format of `versus report`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// Markdown tables and text.
    Markdown,
    /// The model as JSON.
    Json,
    /// Comma-separated values, one row per case and side.
    Csv,
    /// A self-contained HTML page.
    Html,
    /// The terminal table, without colour.
    Text,
}

impl Format {
    /// Every format, by name.
    pub const ALL: [Format; 5] = [Format::Markdown, Format::Json, Format::Csv, Format::Html, Format::Text];

    /// `markdown`, `json`, `csv`, `html` or `text`.
    pub fn name(self) -> &'static str {
        match self {
            Format::Markdown => "markdown",
            Format::Json => "json",
            Format::Csv => "csv",
            Format::Html => "html",
            Format::Text => "text",
        }
    }

    /// The format a file name's extension suggests.
    pub fn from_extension(path: &std::path::Path) -> Option<Format> {
        match path.extension()?.to_str()?.to_ascii_lowercase().as_str() {
            "md" | "markdown" => Some(Format::Markdown),
            "json" => Some(Format::Json),
            "csv" => Some(Format::Csv),
            "html" | "htm" => Some(Format::Html),
            "txt" => Some(Format::Text),
            _ => None,
        }
    }
}

impl stdfmt::Display for Format {
    fn fmt(&self, f: &mut stdfmt::Formatter<'_>) -> stdfmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        let s = s.trim().to_ascii_lowercase();
        let alias = if s == "md" { "markdown" } else { s.as_str() };
        Format::ALL
            .into_iter()
            .find(|f| f.name() == alias)
            .ok_or_else(|| format!("unknown format '{s}'; choose one of markdown, json, csv, html, text"))
    }
}

/// Renders `report` in `format`.
pub fn render(report: &CompareReport, format: Format) -> Result<String> {
    Ok(match format {
        Format::Markdown => markdown::render(report),
        Format::Json => json::render(report)?,
        Format::Csv => csv::render(report),
        Format::Html => html::render(report),
        Format::Text => terminal::render(report, false),
    })
}
