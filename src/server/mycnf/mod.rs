//! Configuration files in MySQL option-file format (my.cnf): reader and writer.
//!
//! [`MyCnf`] is an ordered document: lines before the first group header (the preamble), then the
//! sections in file order. Sections may repeat, keys may repeat, and comments, blank lines and
//! `!include`/`!includedir` directives are kept where they were. Lines read from a file keep their
//! original text until they are edited, so `parse` → `to_text` gives back the same bytes (blank lines
//! with stray whitespace and a missing final newline excepted).
//!
//! The reader follows the option-file rules of MySQL and MariaDB (`mysys/my_default`):
//! - `#` or `;` at the start of a line is a comment; later on a line only `#` starts a comment, and
//!   only outside single or double quotes (`;` mid-line is data, as in `plugin-load=a.so;b.so`).
//! - `key`, `key=value` and `key = value`; whitespace around keys and values is dropped.
//! - A value enclosed in matching quotes loses them; then `\n \t \r \b \s \\ \" \'` are unescaped
//!   and any other backslash is kept as it is.
//! - An option before the first `[group]` is an error, as it is for MySQL.
//!
//! Effective options (following includes, `-`/`_` equivalence, `loose-` prefixes, last value wins)
//! come from [`resolve`], [`MyCnf::resolve`] and [`MyCnf::options`].

mod model;
mod reader;
mod resolve;
mod writer;

use std::path::Path;

use crate::error::{Error, Result};

pub use model::{Directive, DirectiveKind, Entry, Line, Section};
pub use resolve::{EffectiveOption, Options, resolve};

/// Option names (normalised) whose every occurrence counts instead of the last one.
///
/// `plugin-load-add` and the replication/binlog filters append to a list; `performance-schema-instrument`
/// adds one rule per occurrence; `optimizer_switch` only changes the flags each occurrence names. For
/// these keys [`EffectiveOption::values`] keeps every value in order.
pub const ACCUMULATING: &[&str] = &[
    "plugin_load_add",
    "replicate_do_db",
    "replicate_ignore_db",
    "replicate_do_table",
    "replicate_ignore_table",
    "replicate_wild_do_table",
    "replicate_wild_ignore_table",
    "replicate_rewrite_db",
    "binlog_do_db",
    "binlog_ignore_db",
    "performance_schema_instrument",
    "optimizer_switch",
    "ignore_db_dir",
];

/// The flag name used in errors from [`parse_override`] and [`MyCnf::apply_overrides`].
pub const OVERRIDE_FLAG: &str = "--set";

/// The option name MySQL uses internally: `-` becomes `_` and a leading `loose-`/`loose_` is dropped.
///
/// Case is kept, because option names are case-sensitive for MySQL; `SHOW GLOBAL VARIABLES` names are
/// lower case, as are all documented option names.
///
/// ```
/// use versus::server::mycnf::normalize_key;
/// assert_eq!(normalize_key("innodb-buffer-pool-size"), "innodb_buffer_pool_size");
/// assert_eq!(normalize_key("loose-innodb-log-writer-threads"), "innodb_log_writer_threads");
/// ```
pub fn normalize_key(key: &str) -> String {
    let key = key.trim_matches(reader::is_space).replace('-', "_");
    match key.strip_prefix("loose_") {
        Some(rest) if !rest.is_empty() => rest.to_string(),
        _ => key,
    }
}

/// Whether every occurrence of `key` counts (see [`ACCUMULATING`]). `key` may be in any spelling.
pub fn is_accumulating(key: &str) -> bool {
    ACCUMULATING.contains(&normalize_key(key).as_str())
}

/// Why `key` cannot be written as an option name, or `None` if it can.
///
/// A valid name is ASCII, starts with a letter, digit or `_` and holds no whitespace, control character, `=`,
/// `#`, quote or `[`/`]`. Names from [`parse_override`] are always valid; the writer writes other keys
/// verbatim, so callers building configs must pass valid ones.
pub fn key_problem(key: &str) -> Option<&'static str> {
    let Some(first) = key.chars().next() else {
        return Some("it is empty");
    };
    if !key.is_ascii() {
        return Some("it must be ASCII");
    }
    if !(first.is_ascii_alphanumeric() || first == '_') {
        return Some("it must start with a letter, digit or '_' (no leading dashes)");
    }
    if key.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Some("it must not contain whitespace");
    }
    if key.chars().any(|c| matches!(c, '=' | '#' | '"' | '\'' | '[' | ']' | '\\')) {
        return Some("it must not contain = # quotes brackets or backslashes");
    }
    None
}

/// Parses one `--set` override: `name=value` gives `(name, Some(value))`, a bare `name` a flag.
///
/// The name and value are trimmed, as MySQL trims them in option files. An empty or invalid name is an
/// [`Error::Option`] for `--set`.
pub fn parse_override(spec: &str) -> Result<(String, Option<String>)> {
    let (name, value) = match spec.split_once('=') {
        Some((n, v)) => (n.trim(), Some(v.trim().to_string())),
        None => (spec.trim(), None),
    };
    if name.is_empty() {
        return Err(Error::option(
            OVERRIDE_FLAG,
            format!("'{spec}' has no option name; write {OVERRIDE_FLAG} name=value or {OVERRIDE_FLAG} name"),
        ));
    }
    if let Some(problem) = key_problem(name) {
        return Err(Error::option(
            OVERRIDE_FLAG,
            format!("'{spec}': '{name}' is not a valid option name: {problem}; write {OVERRIDE_FLAG} name=value"),
        ));
    }
    Ok((name.to_string(), value))
}

/// An option file: preamble lines, then sections in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MyCnf {
    preamble: Vec<Line>,
    sections: Vec<Section>,
}

impl MyCnf {
    /// An empty document.
    pub fn new() -> Self {
        MyCnf::default()
    }

    /// Parses option-file text. `path` only names the file in errors, which look like
    /// `PATH: line 12: an option outside any [group] ...` (never the text of the line).
    pub fn parse(text: &str, path: &Path) -> Result<Self> {
        reader::parse(text).map_err(|e| Error::file(path, e))
    }

    /// Reads and parses one file (without following its includes).
    pub fn read(path: &Path) -> Result<Self> {
        let text = reader::read_text(path)?;
        MyCnf::parse(&text, path)
    }

    /// Writes [`MyCnf::to_text`] to `path`.
    pub fn write(&self, path: &Path) -> Result<()> {
        std::fs::write(path, self.to_text())
            .map_err(|e| Error::file(path, format!("cannot write the option file: {e}")))
    }

    /// The file text. Lines read from a file and not edited since keep their original text; everything
    /// else is written as `key=value` or a bare `key`, values quoted only when needed.
    pub fn to_text(&self) -> String {
        writer::write(self)
    }

    /// Forgets the original text of every line, so [`MyCnf::to_text`] writes the canonical form.
    pub fn normalize(&mut self) {
        let lines = self.preamble.iter_mut().chain(self.sections.iter_mut().flat_map(|s| {
            s.header_raw = None;
            s.lines.iter_mut()
        }));
        for line in lines {
            match line {
                Line::Entry(e) => e.raw = None,
                Line::Directive(d) => d.raw = None,
                Line::Blank | Line::Comment(_) => {}
            }
        }
    }

    /// Lines before the first section: comments, blank lines and directives (never options).
    pub fn preamble(&self) -> &[Line] {
        &self.preamble
    }

    /// The preamble, for edits. Entries put here are written before any group header, which MySQL
    /// rejects; put options in a section.
    pub fn preamble_mut(&mut self) -> &mut Vec<Line> {
        &mut self.preamble
    }

    /// The sections in file order.
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// The sections, for arbitrary edits.
    pub fn sections_mut(&mut self) -> &mut Vec<Section> {
        &mut self.sections
    }

    /// The last section called `name` (the one whose values win among sections of that name).
    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().rev().find(|s| s.is(name))
    }

    /// The last section called `name`, appended if there is none.
    pub fn section_mut(&mut self, name: &str) -> &mut Section {
        match self.sections.iter().rposition(|s| s.is(name)) {
            Some(i) => &mut self.sections[i],
            None => self.push_section(name),
        }
    }

    /// Appends a new section `name`, even if one exists already; a blank line separates it from what
    /// precedes it.
    pub fn push_section(&mut self, name: &str) -> &mut Section {
        let before = match self.sections.last_mut() {
            Some(s) => Some(&mut s.lines),
            None if !self.preamble.is_empty() => Some(&mut self.preamble),
            None => None,
        };
        if let Some(lines) = before
            && lines.last() != Some(&Line::Blank)
        {
            lines.push(Line::Blank);
        }
        self.sections.push(Section::new(name));
        self.sections.last_mut().expect("just pushed")
    }

    /// Removes every section called `name`; returns how many there were.
    pub fn remove_section(&mut self, name: &str) -> usize {
        let before = self.sections.len();
        self.sections.retain(|s| !s.is(name));
        before - self.sections.len()
    }

    /// Applies `--set` overrides (`name=value` or bare `name`) to the last `[mysqld]` section, created
    /// if missing. Accumulating keys ([`ACCUMULATING`]) are added; others replace the existing value.
    /// Nothing is changed if any override is malformed.
    pub fn apply_overrides<S: AsRef<str>>(&mut self, overrides: &[S]) -> Result<()> {
        let parsed = overrides.iter().map(|s| parse_override(s.as_ref())).collect::<Result<Vec<_>>>()?;
        if parsed.is_empty() {
            return Ok(());
        }
        let section = self.section_mut("mysqld");
        for (name, value) in &parsed {
            if is_accumulating(name) {
                section.add(name, value.as_deref());
            } else {
                section.set(name, value.as_deref());
            }
        }
        Ok(())
    }

    /// The effective options of the groups `groups`, from this document alone: directives are not
    /// followed (each one adds a warning). See [`resolve`] for the rules.
    pub fn options(&self, groups: &[&str]) -> Options {
        resolve::options_of(self, groups)
    }

    /// The effective options of the groups `groups` for this document read from `path`, following its
    /// `!include`/`!includedir` directives relative to `path`'s directory. See [`resolve`].
    pub fn resolve(&self, path: &Path, groups: &[&str]) -> Result<Options> {
        resolve::resolve_doc(self, path, groups)
    }
}

impl std::fmt::Display for MyCnf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_key_maps_dashes_and_strips_loose() {
        assert_eq!(normalize_key("innodb-buffer-pool-size"), "innodb_buffer_pool_size");
        assert_eq!(normalize_key("innodb_buffer_pool_size"), "innodb_buffer_pool_size");
        assert_eq!(normalize_key("loose-innodb-idle-flush-pct"), "innodb_idle_flush_pct");
        assert_eq!(normalize_key("loose_innodb_log_writer_threads"), "innodb_log_writer_threads");
        assert_eq!(normalize_key("  port "), "port");
        // Only the prefix goes, and a bare "loose" is a name of its own.
        assert_eq!(normalize_key("loose"), "loose");
        assert_eq!(normalize_key("loose-"), "loose_");
        assert_eq!(normalize_key("skip-log-bin"), "skip_log_bin");
        assert_eq!(normalize_key("Port"), "Port");
    }

    #[test]
    fn accumulating_keys_in_any_spelling() {
        assert!(is_accumulating("plugin-load-add"));
        assert!(is_accumulating("loose_plugin_load_add"));
        assert!(!is_accumulating("plugin-load"));
        assert!(!is_accumulating("port"));
    }

    #[test]
    fn section_mut_finds_last_case_insensitively_or_appends() {
        let mut c = MyCnf::new();
        c.section_mut("mysqld").set("port", Some("1"));
        c.push_section("client");
        c.push_section("MYSQLD").set("port", Some("2"));
        c.section_mut("mysqld").set("socket", Some("/tmp/s"));
        assert_eq!(c.sections().len(), 3);
        assert_eq!(c.sections()[2].get("socket").and_then(Entry::value), Some("/tmp/s"));
        assert_eq!(c.section("mysqld").and_then(|s| s.get("port")).and_then(Entry::value), Some("2"));
        assert_eq!(c.remove_section("mysqld"), 2);
        assert!(c.section("mysqld").is_none());
    }

    #[test]
    fn parse_override_forms() {
        assert_eq!(
            parse_override("innodb_buffer_pool_size=1G").unwrap(),
            ("innodb_buffer_pool_size".into(), Some("1G".into()))
        );
        assert_eq!(parse_override(" skip-log-bin ").unwrap(), ("skip-log-bin".into(), None));
        assert_eq!(parse_override("sql_mode=").unwrap(), ("sql_mode".into(), Some(String::new())));
        // Only the first '=' separates: the value may hold more.
        assert_eq!(
            parse_override("performance-schema-instrument=wait/%=ON").unwrap(),
            ("performance-schema-instrument".into(), Some("wait/%=ON".into()))
        );
    }

    #[test]
    fn parse_override_rejects_malformed() {
        for bad in ["=value", "", "  =1", "--port=1", "a b=1", "x#y=1", "[mysqld]"] {
            match parse_override(bad) {
                Err(Error::Option { option, message }) => {
                    assert_eq!(option, "--set");
                    assert!(message.contains(&format!("'{bad}'")), "{message}");
                }
                other => panic!("{bad:?} gave {other:?}"),
            }
        }
    }

    #[test]
    fn apply_overrides_sets_adds_and_is_atomic() {
        let mut c = MyCnf::new();
        c.section_mut("mysqld").set("port", Some("3306")).add("plugin-load-add", Some("a.so"));
        c.apply_overrides(&["port=3400", "skip-log-bin", "plugin_load_add=b.so"]).unwrap();
        let s = c.section("mysqld").unwrap();
        assert_eq!(s.get("port").and_then(Entry::value), Some("3400"));
        assert!(s.get("skip_log_bin").is_some_and(|e| e.value().is_none()));
        assert_eq!(s.get_all("plugin-load-add").count(), 2);

        let before = c.clone();
        let err = c.apply_overrides(&["port=1", "=2"]).unwrap_err();
        assert!(matches!(err, Error::Option { .. }));
        assert_eq!(c, before);
    }

    #[test]
    fn apply_overrides_creates_mysqld() {
        let mut c = MyCnf::new();
        c.section_mut("client").set("user", Some("root"));
        c.apply_overrides(&["max_connections=500"]).unwrap();
        assert_eq!(c.section("mysqld").and_then(|s| s.get("max-connections")).and_then(Entry::value), Some("500"));
    }

    #[test]
    fn key_problem_flags_unwritable_names() {
        assert_eq!(key_problem("innodb_buffer_pool_size"), None);
        assert_eq!(key_problem("loose-foo.bar"), None);
        assert!(key_problem("").is_some());
        assert!(key_problem("-x").is_some());
        assert!(key_problem("a=b").is_some());
        assert!(key_problem("a'b").is_some());
    }
}
