//! `versus compare` and `versus report`: flags to a [`Selection`], the report to the terminal or a file.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

use super::output_file::OutputFile;
use crate::error::{Error, Result};
use crate::metric::Metric;
use crate::report::{self, Dimension, Format, Selection, terminal};
use crate::server::Home;
use crate::store::Store;

/// What to compare (shared by `compare` and `report`).
#[derive(Debug, Args)]
pub struct SelectArgs {
    /// Experiments to compare, by id or name (a name means its latest run) [default: the latest experiment].
    #[arg(value_name = "EXPERIMENT")]
    pub experiments: Vec<String>,
    #[command(flatten)]
    pub db: super::DbArg,
    /// What the compared sides are: targets, builds (within each config) or configs (within each build).
    #[arg(long, value_name = "WHAT", default_value = "target", value_parser = parse_dimension)]
    pub vs: Dimension,
    /// The side the others are compared with [default: the first target of the experiment].
    #[arg(long, value_name = "LABEL")]
    pub baseline: Option<String>,
    #[arg(long, value_name = "METRIC", default_value = "tps", value_parser = parse_metric,
          help = format!("{}.", Metric::names_for_help()))]
    pub metric: Metric,
    /// Only runs of this target (repeatable).
    #[arg(long = "target", value_name = "LABEL")]
    pub targets: Vec<String>,
    /// Only runs of this build (repeatable).
    #[arg(long = "build", value_name = "NAME")]
    pub builds: Vec<String>,
    /// Only runs with this config (repeatable).
    #[arg(long = "config", value_name = "NAME")]
    pub configs: Vec<String>,
    /// Only runs of this workload (repeatable).
    #[arg(long = "workload", value_name = "NAME")]
    pub workloads: Vec<String>,
    /// Only these thread counts (comma-separated or repeated).
    #[arg(long, value_name = "N", value_delimiter = ',')]
    pub threads: Vec<u32>,
    /// Confidence level of the intervals.
    #[arg(long, value_name = "LEVEL", default_value_t = crate::stats::DEFAULT_CONFIDENCE)]
    pub confidence: f64,
    /// Changes smaller than this are never called (e.g. 2% or 0.02) [default: the band `versus calibrate`
    /// measured for the runs' host class and workload, else 2%].
    #[arg(long, value_name = "FRACTION", value_parser = parse_fraction)]
    pub noise_band: Option<f64>,
    /// Compare runs of different workloads, or measured on different host classes, anyway (every
    /// output then says so).
    #[arg(long)]
    pub force: bool,
}

/// When to colour the terminal output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// When writing to a terminal and NO_COLOR is unset.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// `versus compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    #[command(flatten)]
    select: SelectArgs,
    /// Colour ratios beyond ±5 % (green better, red worse).
    #[arg(long, value_name = "WHEN", default_value = "auto")]
    color: ColorWhen,
    /// Print only the summary and the ratio table.
    #[arg(long)]
    brief: bool,
    /// Where the server's CPU went: each side's sampled CPU per transaction and the functions whose
    /// cost differs from the baseline's beyond the noise (runs of experiments with `profile = true`);
    /// printed even with --brief, and an error when no selected run was profiled.
    #[arg(long)]
    profile: bool,
}

/// `versus report`.
#[derive(Debug, Args)]
pub struct ReportArgs {
    #[command(flatten)]
    select: SelectArgs,
    /// markdown, json, csv, html or text [default: from the --output extension, else markdown].
    #[arg(long, value_name = "FORMAT", value_parser = parse_format)]
    format: Option<Format>,
    /// Write to this file instead of standard output.
    #[arg(long, short, value_name = "FILE")]
    output: Option<PathBuf>,
}

fn parse_dimension(s: &str) -> std::result::Result<Dimension, String> {
    match s.trim().to_ascii_lowercase().as_str() {
        "target" | "targets" => Ok(Dimension::Target),
        "build" | "builds" | "version" => Ok(Dimension::Build),
        "config" | "configs" => Ok(Dimension::Config),
        other => Err(format!("unknown '{other}'; choose target, build or config")),
    }
}

fn parse_metric(s: &str) -> std::result::Result<Metric, String> {
    s.parse()
}

fn parse_format(s: &str) -> std::result::Result<Format, String> {
    s.parse()
}

/// `2%`, `2 %` or `0.02` as a fraction.
pub fn parse_fraction(s: &str) -> std::result::Result<f64, String> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(p) => (p.trim(), 100.0),
        None => (t, 1.0),
    };
    let v: f64 = num.parse().map_err(|_| format!("'{s}' is not a number; write e.g. 2% or 0.02"))?;
    let v = v / scale;
    if (0.0..1.0).contains(&v) { Ok(v) } else { Err(format!("'{s}' must lie in [0, 1) (e.g. 2% or 0.02)")) }
}

impl SelectArgs {
    fn selection(&self) -> Selection {
        Selection {
            experiments: self.experiments.clone(),
            vs: self.vs,
            baseline: self.baseline.clone(),
            metric: self.metric,
            targets: self.targets.clone(),
            builds: self.builds.clone(),
            configs: self.configs.clone(),
            workloads: self.workloads.clone(),
            threads: self.threads.clone(),
            confidence: self.confidence,
            noise_band: self.noise_band.unwrap_or(crate::stats::DEFAULT_NOISE_BAND),
            use_calibration: self.noise_band.is_none(),
            force: self.force,
        }
    }

    fn open(&self, home: &Home) -> Result<Store> {
        let location = self.db.location(home);
        if !location.exists() {
            return Err(Error::file(
                location.to_string(),
                "no results store here; run an experiment first (`versus run FILE`) or pass --db with its path",
            ));
        }
        super::open_read(&location)
    }
}

/// Runs `versus compare`.
pub fn compare(home: &Home, args: CompareArgs) -> Result<i32> {
    let store = args.select.open(home)?;
    let report = report::build_report(&store, &args.select.selection())?;
    if args.profile && report.profiles.is_empty() {
        return Err(Error::option(
            "--profile",
            "no selected run was profiled; add `profile = true` to the experiment file and run it again",
        ));
    }
    let color = match args.color {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => anstream::AutoStream::choice(&std::io::stdout()) != anstream::ColorChoice::Never,
    };
    let text = terminal::render_with(&report, &terminal::Options { color, brief: args.brief, profile: args.profile });
    super::output::print(&format!("{text}\n"))?;
    Ok(0)
}

/// Runs `versus report`.
pub fn report(home: &Home, args: ReportArgs) -> Result<i32> {
    let format = match (args.format, &args.output) {
        (Some(f), _) => f,
        (None, None) => Format::Markdown,
        (None, Some(path)) => Format::from_extension(path).ok_or_else(|| {
            Error::option(
                "--format",
                format!("cannot tell the format from '{}'; pass --format markdown|json|csv|html|text", path.display()),
            )
        })?,
    };
    let out = match &args.output {
        Some(path) => Some(OutputFile::check("--output", path, &args.select.db.inputs(home))?),
        None => None,
    };
    let store = args.select.open(home)?;
    let report = report::build_report(&store, &args.select.selection())?;
    let text = report::render(&report, format)?;
    match &out {
        Some(out) => {
            out.write(text.as_bytes())?;
            eprintln!("wrote {} ({format})", out.path().display());
        }
        None => {
            super::output::print(&text)?;
        }
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fractions() {
        assert_eq!(parse_fraction("2%"), Ok(0.02));
        assert_eq!(parse_fraction(" 5 % "), Ok(0.05));
        assert_eq!(parse_fraction("0.03"), Ok(0.03));
        assert!(parse_fraction("two").unwrap_err().contains("not a number"));
        assert!(parse_fraction("150%").is_err());
        assert_eq!(parse_dimension("Build"), Ok(Dimension::Build));
        assert!(parse_dimension("cpu").is_err());
    }
}
