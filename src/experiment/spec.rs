//! The experiment file (TOML): targets (builds × named configs, or external servers), workloads, thread
//! counts, duration, warm-up, repetitions and order. See docs/experiments.md for the format.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};

use crate::error::{Error, Result};
use crate::workload::ConnectionCharset;
pub use crate::workload::WorkloadDef;

/// An experiment file as written by the user.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    /// Experiment name, used to find it again (`versus run FILE --resume`).
    pub name: String,
    /// Free text for reports.
    #[serde(default)]
    pub description: Option<String>,
    /// Builds to cross with every config when no `[[targets]]` are listed.
    #[serde(default)]
    pub builds: Vec<String>,
    /// Named configurations: a base my.cnf plus overrides.
    #[serde(default)]
    pub configs: Vec<ConfigDef>,
    /// Explicit targets; when present `builds` × `configs` is not used.
    #[serde(default)]
    pub targets: Vec<TargetDef>,
    /// Workloads to run on every target.
    pub workloads: Vec<WorkloadDef>,
    /// Thread counts (connections) to run every workload at.
    #[serde(default = "default_threads")]
    pub threads: Vec<u32>,
    /// Measured seconds per run (`"60s"`, `"2m"` or a number of seconds).
    #[serde(default = "default_duration", deserialize_with = "de_duration", serialize_with = "ser_duration")]
    pub duration: Duration,
    /// Load run before measuring starts, discarded (sysbench `--warmup-time`).
    #[serde(default, deserialize_with = "de_duration", serialize_with = "ser_duration")]
    pub warmup: Duration,
    /// Load the tables into the buffer pool before each run (the workload's prewarm: for sysbench
    /// tests, ANALYZE TABLE and a scan of each table and its indexes).
    #[serde(default = "yes")]
    pub prewarm: bool,
    /// A pause after each server start (after prewarm), before the run: background work of the start
    /// (purge, page cleaning, the buffer pool dump's load) settles first. Not measured.
    #[serde(
        default,
        deserialize_with = "de_duration",
        serialize_with = "ser_duration",
        skip_serializing_if = "Duration::is_zero"
    )]
    pub settle: Duration,
    /// Sample the server's on-CPU stacks during each run's measured time (with `perf`), stored with the
    /// run: CPU per transaction per function (docs/profile.md). Sandboxed targets only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile: bool,
    /// Samples per second when profiling (default 199).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile_hz: Option<u32>,
    /// With `profile`: also record where the server's threads waited off the CPU (every context
    /// switch with its stack), stored with the run: off-CPU µs per transaction per function.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub profile_waits: bool,
    /// Pin each started server to one half of the CPUs versus may use and the client's threads to the
    /// other half (needs at least 2 CPUs; external servers are never pinned).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub pin_cpus: bool,
    /// Drop the OS page cache before each restore (needs root; drops the whole host's cache).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drop_caches: bool,
    /// Repetitions of every cell: a number, or adaptive `{ min, max, until }` (see [`Repetitions`]).
    #[serde(default)]
    pub repetitions: Repetitions,
    /// Execution order of the runs.
    #[serde(default)]
    pub order: Order,
    /// Seed of the shuffled order (and of the workloads' random numbers unless they set `rand-seed`).
    #[serde(default)]
    pub seed: Option<u64>,
}

/// In which order the runs of an experiment are executed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Order {
    /// Rounds of every cell, each round in a new random order (A B, B A, A B …): the default, so that
    /// slow drifts of the machine do not favour one cell.
    #[default]
    Shuffled,
    /// Rounds of every cell in file order (A B A B …).
    Interleaved,
    /// All repetitions of a cell before the next cell (A A B B); only for debugging an experiment.
    Sequential,
}

/// A named server configuration.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigDef {
    /// The name targets refer to.
    pub name: String,
    /// A base my.cnf, relative to the experiment file.
    #[serde(default)]
    pub file: Option<PathBuf>,
    /// Server options on top: `name = value`, or `name = true` for a bare flag such as `skip-log-bin`.
    #[serde(default)]
    pub set: toml::Table,
    /// Client side: the character set every connection of the workloads sets (`SET NAMES`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<String>,
    /// Client side: the connection collation (`SET NAMES … COLLATE`); needs `charset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<String>,
    /// Replicas beside the server (a replication topology; docs/replication.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication: Option<super::topology::ReplicationDef>,
}

/// One server to measure: a build with a config, or an external server.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct TargetDef {
    /// Label in reports [default: `build` or `build/config`].
    #[serde(default)]
    pub name: Option<String>,
    /// A registered build (see `versus server list`).
    #[serde(default)]
    pub build: Option<String>,
    /// The name of a `[[configs]]` entry.
    #[serde(default)]
    pub config: Option<String>,
    /// Extra options for this target only, applied after the config's.
    #[serde(default)]
    pub set: toml::Table,
    /// An external server `HOST:PORT` (not started, restored or restarted by versus).
    #[serde(default)]
    pub address: Option<String>,
    /// External server: user.
    #[serde(default)]
    pub user: Option<String>,
    /// External server: the environment variable holding the password (never stored).
    #[serde(default)]
    pub password_env: Option<String>,
    /// External server: database.
    #[serde(default)]
    pub database: Option<String>,
    /// External server: let prepare drop and recreate benchmark tables that exist already there
    /// (without it, an existing table is an error and nothing is dropped).
    #[serde(default)]
    pub replace_tables: bool,
    /// Client side: the character set every connection of the workloads sets (`SET NAMES`), over the
    /// config's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub charset: Option<String>,
    /// Client side: the connection collation (`SET NAMES … COLLATE`); needs `charset`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub collation: Option<String>,
    /// Replicas beside the server (a replication topology; docs/replication.md).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replication: Option<super::topology::ReplicationDef>,
}

pub(super) fn default_threads() -> Vec<u32> {
    vec![1]
}
pub(super) fn default_duration() -> Duration {
    Duration::from_secs(60)
}
fn yes() -> bool {
    true
}

/// How many repetitions of every cell: a fixed number (`repetitions = 5`, min = max), or adaptive
/// (`repetitions = { min = 3, max = 30, until = "±3%" }`): `min` rounds, then one more shuffled round
/// at a time until every comparison is decisive or its interval is narrower than `until`, or `max`
/// rounds have run (see `stats::sequential`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Repetitions {
    /// Rounds always run.
    pub min: u32,
    /// Most rounds.
    pub max: u32,
    /// Stop once every comparison's interval is within ±`until` (a fraction, 0.03 for ±3 %).
    pub until: Option<f64>,
}

impl Default for Repetitions {
    fn default() -> Self {
        Repetitions::fixed(1)
    }
}

/// Most rounds an adaptive experiment may plan.
pub const MAX_REPETITIONS: u32 = 1000;

impl Repetitions {
    /// Exactly `n` repetitions.
    pub fn fixed(n: u32) -> Repetitions {
        Repetitions { min: n, max: n, until: None }
    }

    /// More rounds than `min` may be added.
    pub fn is_adaptive(&self) -> bool {
        self.max > self.min
    }

    /// `until` as written in files and on the command line (`±3%`).
    pub fn until_text(&self) -> Option<String> {
        self.until.map(|u| format!("±{}%", (u * 1000.0).round() / 10.0))
    }

    /// Refuses designs that cannot run, with the reason and a fix.
    pub fn check(&self) -> std::result::Result<(), String> {
        if self.min == 0 {
            return Err("`repetitions` must be at least 1".into());
        }
        if self.max < self.min {
            return Err(format!(
                "`repetitions`: max {} is below min {}; write e.g. {{ min = 3, max = 30 }}",
                self.max, self.min
            ));
        }
        if self.max > MAX_REPETITIONS {
            return Err(format!("`repetitions`: max {} is more than {MAX_REPETITIONS}", self.max));
        }
        if self.is_adaptive() && self.min < 2 {
            return Err(
                "`repetitions`: adaptive repetitions need min = 2 or more (the first look needs an interval)".into()
            );
        }
        Ok(())
    }
}

/// Parses `±3%`, `3%`, `+-3 %` or `3` (percent) into a fraction.
pub fn parse_until(text: &str) -> std::result::Result<f64, String> {
    let t = text.trim().trim_start_matches('±').trim_start_matches("+-").trim_start_matches("+/-");
    let t = t.trim().trim_end_matches('%').trim();
    match t.parse::<f64>() {
        Ok(p) if p > 0.0 && p < 100.0 => Ok(p / 100.0),
        _ => Err(format!("'{text}' is not a target width; write a percentage such as \"±3%\"")),
    }
}

impl Serialize for Repetitions {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        if !self.is_adaptive() && self.until.is_none() {
            return s.serialize_u32(self.min);
        }
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("min", &self.min)?;
        m.serialize_entry("max", &self.max)?;
        if let Some(u) = self.until_text() {
            m.serialize_entry("until", &u)?;
        }
        m.end()
    }
}

impl<'de> Deserialize<'de> for Repetitions {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Table {
            min: u32,
            max: u32,
            #[serde(default)]
            until: Option<String>,
        }
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            Fixed(u32),
            Adaptive(Table),
        }
        let raw = Raw::deserialize(d).map_err(|_| {
            serde::de::Error::custom(
                "`repetitions` is a number (repetitions = 5) or a table { min = 3, max = 30, until = \"±3%\" }",
            )
        })?;
        Ok(match raw {
            Raw::Fixed(n) => Repetitions::fixed(n),
            Raw::Adaptive(t) => Repetitions {
                min: t.min,
                max: t.max,
                until: t.until.as_deref().map(parse_until).transpose().map_err(serde::de::Error::custom)?,
            },
        })
    }
}

fn de_duration<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Duration, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Raw {
        Secs(u64),
        Text(String),
    }
    match Raw::deserialize(d)? {
        Raw::Secs(s) => Ok(Duration::from_secs(s)),
        Raw::Text(t) => parse_duration(&t).map_err(serde::de::Error::custom),
    }
}

fn ser_duration<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&format!("{}s", d.as_secs()))
}

/// Parses `90`, `90s`, `2m`, `1h`, `1m30s` into a duration.
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    if let Ok(s) = t.parse::<u64>() {
        return Ok(Duration::from_secs(s));
    }
    let mut total = 0u64;
    let mut num = String::new();
    for c in t.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            _ => return Err(format!("'{text}' is not a duration; write e.g. \"90s\", \"2m\" or 90")),
        };
        let n: u64 =
            num.parse().map_err(|_| format!("'{text}' is not a duration; write e.g. \"90s\", \"2m\" or 90"))?;
        total = n
            .checked_mul(unit)
            .and_then(|x| total.checked_add(x))
            .ok_or_else(|| format!("'{text}' is too long a duration; write at most a few days, e.g. \"72h\""))?;
        num.clear();
    }
    if !num.is_empty() {
        return Err(format!("'{text}' is not a duration; write e.g. \"90s\", \"2m\" or 90"));
    }
    Ok(Duration::from_secs(total))
}

impl ExperimentFile {
    /// Reads and checks an experiment file; errors name the file, the key and the line.
    pub fn load(path: &Path) -> Result<(ExperimentFile, String)> {
        let text = crate::input::read_text(path)?;
        let spec = Self::parse(&text).map_err(|m| Error::file(path, m))?;
        Ok((spec, text))
    }

    /// Parses and checks experiment TOML text; the error is one line.
    pub fn parse(text: &str) -> std::result::Result<ExperimentFile, String> {
        let spec: ExperimentFile = toml::from_str(text).map_err(|e| one_line_toml_error(text, &e))?;
        spec.check()?;
        Ok(spec)
    }

    fn check(&self) -> std::result::Result<(), String> {
        if self.name.trim().is_empty() {
            return Err("`name` must not be empty".into());
        }
        if self.workloads.is_empty() {
            return Err("no [[workloads]]; add at least one, e.g. [[workloads]] test = \"oltp_read_write\"".into());
        }
        if self.targets.is_empty() && self.builds.is_empty() {
            return Err("no targets: list `builds = [...]` (crossed with [[configs]]) or [[targets]]".into());
        }
        self.repetitions.check()?;
        if self.repetitions.is_adaptive() && self.order == Order::Sequential {
            return Err("adaptive `repetitions` add whole rounds: use order = \"shuffled\" or \"interleaved\"".into());
        }
        if self.duration.is_zero() {
            return Err("`duration` must be more than 0 s".into());
        }
        let all_threads =
            self.workloads.iter().filter_map(|w| w.threads.as_ref()).chain(std::iter::once(&self.threads));
        for t in all_threads {
            if t.is_empty() || t.contains(&0) {
                return Err("`threads` must list thread counts of at least 1, e.g. threads = [1, 4]".into());
            }
        }
        let mut names = std::collections::HashSet::new();
        for c in &self.configs {
            if !names.insert(c.name.as_str()) {
                return Err(format!("config '{}' is defined twice", c.name));
            }
            check_set(&c.set, &format!("config '{}'", c.name))?;
            ConnectionCharset::new(c.charset.as_deref(), c.collation.as_deref())
                .map_err(|e| format!("config '{}': {e}", c.name))?;
        }
        for (i, t) in self.targets.iter().enumerate() {
            let what = t.name.clone().unwrap_or_else(|| format!("#{}", i + 1));
            match (&t.build, &t.address) {
                (Some(_), Some(_)) => return Err(format!("target {what}: give either `build` or `address`, not both")),
                (None, None) => {
                    return Err(format!("target {what}: needs `build` (a sandbox) or `address` (an external server)"));
                }
                (None, Some(a)) if t.config.is_some() || !t.set.is_empty() => {
                    return Err(format!("target {what}: the external server {a} cannot take `config` or `set`"));
                }
                (Some(_), None) if t.replace_tables => {
                    return Err(format!("target {what}: `replace_tables` is for external servers (`address`)"));
                }
                _ => {}
            }
            if let Some(c) = &t.config
                && !names.contains(c.as_str())
            {
                return Err(format!("target {what}: unknown config '{c}'; define it with [[configs]] name = \"{c}\""));
            }
            check_set(&t.set, &format!("target {what}"))?;
            ConnectionCharset::new(t.charset.as_deref(), t.collation.as_deref())
                .map_err(|e| format!("target {what}: {e}"))?;
        }
        let mut wnames = std::collections::HashSet::new();
        for w in &self.workloads {
            crate::workload::registry::check(w)?;
        }
        for w in &self.workloads {
            if !wnames.insert(w.label()) {
                return Err(format!("workload '{}' is listed twice; give one of them a `name`", w.label()));
            }
        }
        use super::names;
        names::check("config", self.configs.iter().map(|c| c.name.as_str()))?;
        names::check("target", self.targets.iter().filter_map(|t| t.name.as_deref()))?;
        let labels: Vec<String> = self.workloads.iter().map(|w| w.label()).collect();
        names::check("workload", labels.iter().map(String::as_str))?;
        Ok(())
    }
}

/// Turns a `set` table into `--set`-style strings (`name=value`, or `name` for `true`).
pub fn set_to_overrides(set: &toml::Table, what: &str) -> std::result::Result<Vec<String>, String> {
    set.iter()
        .map(|(k, v)| match v {
            toml::Value::String(s) => Ok(format!("{k}={s}")),
            toml::Value::Integer(i) => Ok(format!("{k}={i}")),
            toml::Value::Float(f) => float_setting(*f).map(|v| format!("{k}={v}")).map_err(|m| format!("{what}: set.{k}: {m}")),
            toml::Value::Boolean(true) => Ok(k.clone()),
            _ => Err(format!(
                "{what}: set.{k} must be a string, a number, or true for a bare flag (write skip-{k} = true to turn a flag off)"
            )),
        })
        .collect()
}

/// A TOML float as a server option value: a fraction as written, a whole number as an integer when a
/// float holds it exactly (below 2^53), refused beyond (9.2e18 is not 9200000000000000000 to the user
/// who meant 2^63 - 1, and the server would clamp whatever it got).
fn float_setting(f: f64) -> std::result::Result<String, String> {
    const EXACT: f64 = (1u64 << f64::MANTISSA_DIGITS) as f64;
    if !f.is_finite() {
        return Err(format!("{f} is not a number a server option takes"));
    }
    if f.fract() != 0.0 {
        return Ok(f.to_string());
    }
    if f.abs() < EXACT {
        return Ok(format!("{}", f as i64));
    }
    Err(format!(
        "{f:e} is a float, which holds whole numbers exactly only below 2^53; write the integer itself (at most {}) \
         or a string",
        i64::MAX
    ))
}

fn check_set(set: &toml::Table, what: &str) -> std::result::Result<(), String> {
    set_to_overrides(set, what).map(|_| ())
}

/// toml's messages span several lines with a source excerpt; keep the line number and the reason.
fn one_line_toml_error(text: &str, e: &toml::de::Error) -> String {
    let msg = e.message().trim().to_string();
    match e.span() {
        Some(span) => {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            let key = text.lines().nth(line - 1).unwrap_or("").trim();
            format!("line {line}: {msg} (at `{key}`)")
        }
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
name = "durability"
builds = ["system"]
threads = [1, 4]
duration = "30s"
warmup = 5
repetitions = 2
seed = 7

[[configs]]
name = "safe"
set = { innodb_flush_log_at_trx_commit = 1, sync_binlog = 1, log-bin = true }

[[configs]]
name = "fast"
set = { innodb_flush_log_at_trx_commit = 2, sync_binlog = 0, log-bin = true }

[[workloads]]
test = "oltp_write_only"
options = { tables = 4, table-size = 100000 }
"#;

    #[test]
    fn parses_the_documented_example() {
        let e = ExperimentFile::parse(EXAMPLE).unwrap();
        assert_eq!(e.duration, Duration::from_secs(30));
        assert_eq!(e.warmup, Duration::from_secs(5));
        assert_eq!(e.order, Order::Shuffled);
        assert!(e.prewarm);
        assert_eq!(
            set_to_overrides(&e.configs[0].set, "c").unwrap(),
            vec!["innodb_flush_log_at_trx_commit=1", "log-bin", "sync_binlog=1"]
        );
    }

    #[test]
    fn unknown_keys_and_wrong_types_name_the_key_and_line() {
        let err = ExperimentFile::parse(&EXAMPLE.replace("repetitions = 2", "repetitons = 2")).unwrap_err();
        assert!(err.starts_with("line 7: unknown field `repetitons`"), "{err}");
        assert!(!err.contains('\n'));
        let err = ExperimentFile::parse(&EXAMPLE.replace("threads = [1, 4]", "threads = \"four\"")).unwrap_err();
        assert!(err.starts_with("line 4: ") && err.contains("threads"), "{err}");
        let err = ExperimentFile::parse(&EXAMPLE.replace("\"30s\"", "\"30 parsecs\"")).unwrap_err();
        assert!(err.contains("not a duration"), "{err}");
    }

    #[test]
    fn semantic_mistakes_are_explained() {
        let cases = [
            ("threads = [1, 4]", "threads = [0]", "thread counts of at least 1"),
            ("repetitions = 2", "repetitions = 0", "at least 1"),
            ("builds = [\"system\"]", "", "no targets"),
            ("log-bin = true }\n\n[[workloads]]", "log-bin = false }\n\n[[workloads]]", "set.log-bin must be"),
        ];
        for (from, to, want) in cases {
            let err = ExperimentFile::parse(&EXAMPLE.replacen(from, to, 1)).unwrap_err();
            assert!(err.contains(want), "{from} -> {to}: {err}");
        }
        let t = format!("{EXAMPLE}\n[[targets]]\nbuild = \"system\"\nconfig = \"nope\"\n");
        assert!(ExperimentFile::parse(&t).unwrap_err().contains("unknown config 'nope'"));
        let t = format!("{EXAMPLE}\n[[targets]]\nname = \"x\"\nbuild = \"system\"\naddress = \"127.0.0.1:3306\"\n");
        assert!(ExperimentFile::parse(&t).unwrap_err().contains("target x: give either"));
    }

    #[test]
    fn repetitions_are_a_number_or_an_adaptive_table() {
        let e = ExperimentFile::parse(EXAMPLE).unwrap();
        assert_eq!(e.repetitions, Repetitions::fixed(2));
        let text = EXAMPLE.replace("repetitions = 2", "repetitions = { min = 3, max = 30, until = \"±3%\" }");
        let a = ExperimentFile::parse(&text).unwrap();
        assert_eq!(a.repetitions, Repetitions { min: 3, max: 30, until: Some(0.03) });
        assert!(a.repetitions.is_adaptive() && !e.repetitions.is_adaptive());
        // Written out and read back: the same experiment (the stored definition with flags applied).
        assert_eq!(ExperimentFile::parse(&toml::to_string(&a).unwrap()).unwrap(), a);
        assert!(toml::to_string(&e).unwrap().contains("repetitions = 2\n"), "a fixed number stays a number");
        let cases = [
            ("{ min = 3, max = 2 }", "max 2 is below min 3"),
            ("{ min = 1, max = 5 }", "min = 2 or more"),
            ("{ min = 3, max = 9, until = \"three\" }", "not a target width"),
            ("{ min = 3, max = 9, unil = \"3%\" }", "a number (repetitions = 5) or a table"),
            ("\"many\"", "a number (repetitions = 5) or a table"),
        ];
        for (value, want) in cases {
            let err = ExperimentFile::parse(&EXAMPLE.replace("repetitions = 2", &format!("repetitions = {value}")))
                .unwrap_err();
            assert!(err.contains(want), "{value}: {err}");
        }
        let seq = text.replace("seed = 7", "seed = 7\norder = \"sequential\"");
        assert!(ExperimentFile::parse(&seq).unwrap_err().contains("whole rounds"));
        assert_eq!(parse_until("±2.5%"), Ok(0.025));
        assert_eq!(parse_until("5"), Ok(0.05));
    }

    #[test]
    fn durations() {
        assert_eq!(parse_duration("90").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1m30s").unwrap(), Duration::from_secs(90));
        assert_eq!(parse_duration("1h").unwrap(), Duration::from_secs(3600));
        assert!(parse_duration("5x").is_err());
        assert!(parse_duration("5m3").is_err());
    }
}
