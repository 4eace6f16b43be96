//! The stored runs a report selected, as the workloads see them, and the report sections the
//! workloads make of them.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde::Serialize;

use crate::present::writers::Writer;
use crate::present::writers::html::HtmlWriter;
use crate::present::writers::markdown::MarkdownWriter;
use crate::present::writers::text::TextWriter;

use crate::store::RunDetail;

/// One finished run chosen for a comparison.
#[derive(Debug, Clone, Copy)]
pub struct StoredRun<'a> {
    /// The run and its stored data.
    pub detail: &'a RunDetail,
    /// Index into [`StoredRuns::sides`].
    pub side: usize,
    /// The run's group within its side (its config when builds are compared, its build when configs
    /// are), if any.
    pub group: Option<&'a str>,
    /// Client threads.
    pub threads: u32,
    /// The decoded whole-run latency histogram, if stored.
    pub histogram: Option<&'a hdrhistogram::Histogram<u64>>,
}

impl StoredRun<'_> {
    /// The stored workload option `key` of the run's cell.
    pub fn option(&self, key: &str) -> Option<&serde_json::Value> {
        self.detail.run.cell.workload_options.get(key)
    }

    /// The status delta (or `versus.*` figure) `name`.
    pub fn status(&self, name: &str) -> Option<i64> {
        self.detail.status_deltas.iter().find(|(k, _)| k == name).map(|(_, v)| *v)
    }
}

/// The runs of a comparison.
#[derive(Debug, Clone)]
pub struct StoredRuns<'a> {
    /// Side labels, baseline first.
    pub sides: Vec<String>,
    /// The runs.
    pub runs: Vec<StoredRun<'a>>,
    /// Logical CPUs of the host of the first experiment, if known.
    pub logical_cpus: Option<u32>,
    /// Confidence level of the comparison's intervals.
    pub confidence: f64,
    /// Relative noise band of its verdicts.
    pub noise_band: f64,
}

/// Where a workload's section is written: the text of one export format.
pub enum SectionOut<'a> {
    /// Terminal text, coloured when `color`.
    Text {
        /// The text written so far.
        out: &'a mut String,
        /// ANSI colours.
        color: bool,
    },
    /// Markdown.
    Markdown(&'a mut String),
    /// An HTML section of the report's page (its headings are `<h2>`).
    Html(&'a mut String),
}

impl SectionOut<'_> {
    /// Runs `f` with the [`Writer`] of this format, for sections made of headings, tables and lines.
    pub fn with_writer(&mut self, f: impl FnOnce(&mut dyn Writer)) {
        match self {
            SectionOut::Text { out, color } => f(&mut TextWriter { out, color: *color }),
            SectionOut::Markdown(out) => f(&mut MarkdownWriter { out }),
            SectionOut::Html(out) => f(&mut HtmlWriter { out, headings: 0, table_level: 2 }),
        }
    }
}

/// One row that a workload's section adds to the CSV export, in the export's main columns (the
/// columns it leaves empty stay empty).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CsvRow {
    /// The workload's label.
    pub workload: String,
    /// The group (config or build), or empty.
    pub group: String,
    /// Client threads.
    pub threads: u32,
    /// The side's label.
    pub side: String,
    /// True for the baseline's row.
    pub baseline: bool,
    /// What the row measures.
    pub metric: String,
    /// Its unit.
    pub unit: String,
    /// Values it is made of.
    pub n: usize,
    /// Mean, median, standard deviation, minimum, maximum.
    pub mean: Option<f64>,
    /// See `mean`.
    pub median: Option<f64>,
    /// See `mean`.
    pub std_dev: Option<f64>,
    /// See `mean`.
    pub min: Option<f64>,
    /// See `mean`.
    pub max: Option<f64>,
    /// To the baseline (candidates).
    pub ratio: Option<f64>,
    /// The ratio's interval.
    pub ci: Option<(f64, f64)>,
    /// How the interval was made (the CSV's `ci_kind` word), or empty.
    pub ci_kind: String,
    /// The verdict's word (`baseline`, `faster`, `slower`, `no_significant_change`, `not_computed`).
    pub verdict: String,
    /// Notes.
    pub notes: Vec<String>,
}

/// A workload's own section of a comparison report: the figures that only its kind has (the Insert
/// Benchmark's Small Datum tables, a script's statements). Its kind makes it from the stored runs
/// ([`super::registry::Kind::sections`]) and reads it back from a report's JSON
/// ([`super::registry::Kind::read_section`]); it writes itself in every format, so that a new kind with a
/// section of its own changes no report code.
pub trait WorkloadSection: ToJson + std::fmt::Debug + Send + Sync {
    /// The key its kind's sections are listed under in the report's JSON (`ibench`, `statements`).
    fn key(&self) -> &'static str;
    /// Writes it; `index` counts this kind's sections in the report (for anchors).
    fn write(&self, index: usize, out: &mut SectionOut<'_>);
    /// The rows it adds to the CSV export (the default: none).
    fn csv_rows(&self) -> Vec<CsvRow> {
        Vec::new()
    }
}

/// A section's figures as JSON: every serialisable section has it.
pub trait ToJson {
    /// The JSON of `self`.
    fn to_json(&self) -> serde_json::Value;
}

impl<T: Serialize> ToJson for T {
    fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or_default()
    }
}

/// Reads a section of type `T` back from a report's JSON (for [`super::registry::Kind::read_section`]).
pub fn read<T: serde::de::DeserializeOwned + WorkloadSection + 'static>(
    value: &serde_json::Value,
) -> Result<Arc<dyn WorkloadSection>, String> {
    <T as serde::Deserialize>::deserialize(value)
        .map(|s| Arc::new(s) as Arc<dyn WorkloadSection>)
        .map_err(|e| format!("a workload section: {e}"))
}

/// The workloads' own sections of a comparison, in the order their kinds made them. In the report's
/// JSON each kind's sections are a list under its key, at the top level.
#[derive(Debug, Clone, Default)]
pub struct Sections(pub Vec<Arc<dyn WorkloadSection>>);

impl Sections {
    /// True when no workload added a section.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Writes every section in `out`, each kind's sections numbered from 0.
    pub fn write(&self, out: &mut SectionOut<'_>) {
        let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
        for s in &self.0 {
            let i = counts.entry(s.key()).or_default();
            s.write(*i, out);
            *i += 1;
        }
    }

    /// The sections under `key`, read as `T` (their kind's type), in order; those that do not read
    /// as `T` are left out.
    pub fn typed<T: serde::de::DeserializeOwned>(&self, key: &str) -> Vec<T> {
        self.0.iter().filter(|s| s.key() == key).filter_map(|s| serde_json::from_value(s.to_json()).ok()).collect()
    }

    /// Every section's CSV rows, in order.
    pub fn csv_rows(&self) -> Vec<CsvRow> {
        self.0.iter().flat_map(|s| s.csv_rows()).collect()
    }

    fn by_key(&self) -> BTreeMap<&'static str, Vec<serde_json::Value>> {
        let mut map: BTreeMap<&'static str, Vec<serde_json::Value>> = BTreeMap::new();
        for s in &self.0 {
            map.entry(s.key()).or_default().push(s.to_json());
        }
        map
    }
}

impl PartialEq for Sections {
    fn eq(&self, other: &Self) -> bool {
        self.by_key() == other.by_key()
    }
}

impl Serialize for Sections {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.by_key().serialize(serializer)
    }
}
