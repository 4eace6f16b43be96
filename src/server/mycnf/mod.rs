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

mod reader;
mod resolve;
mod writer;

use std::path::Path;

use crate::error::{Error, Result};

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

/// One line of an option file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// An empty or whitespace-only line.
    Blank,
    /// A line MySQL ignores, kept verbatim without its newline: a `#` or `;` comment (possibly indented),
    /// or an unknown `!directive`. The writer puts `# ` in front of any text that would not read back as
    /// a comment.
    Comment(String),
    /// An option, `key`, `key=value`, with an optional trailing `#` comment.
    Entry(Entry),
    /// An `!include FILE` or `!includedir DIR` directive.
    Directive(Directive),
}

impl Line {
    /// A `# text` comment line (`#` alone for empty text).
    pub fn comment(text: &str) -> Line {
        if text.is_empty() { Line::Comment("#".to_string()) } else { Line::Comment(format!("# {text}")) }
    }
}

/// An option line: `key` (a flag) or `key=value`, with an optional trailing comment.
///
/// The key is kept as written (`loose-innodb-foo`); [`Entry::name`] and [`Entry::normalized`] give the
/// forms MySQL compares. Equality ignores the original text and line number.
#[derive(Debug, Clone)]
pub struct Entry {
    key: String,
    value: Option<String>,
    comment: Option<String>,
    raw: Option<String>,
    line: Option<usize>,
}

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key && self.value == other.value && self.comment == other.comment
    }
}

impl Eq for Entry {}

impl Entry {
    /// A new entry; `value` `None` makes a flag such as `skip-log-bin`.
    pub fn new(key: &str, value: Option<&str>) -> Self {
        Entry { key: key.to_string(), value: value.map(str::to_string), comment: None, raw: None, line: None }
    }

    /// The same entry with a trailing comment (written as `key=value # comment`).
    pub fn with_comment(mut self, comment: &str) -> Self {
        self.set_comment(Some(comment));
        self
    }

    /// The key as written, including any `loose-` prefix.
    pub fn key(&self) -> &str {
        &self.key
    }

    /// The key as written without its `loose-`/`loose_` prefix.
    pub fn name(&self) -> &str {
        strip_loose(&self.key)
    }

    /// The key as MySQL compares it (see [`normalize_key`]).
    pub fn normalized(&self) -> String {
        normalize_key(&self.key)
    }

    /// Whether the key has a `loose-` prefix (the server ignores it if it does not know the option).
    pub fn is_loose(&self) -> bool {
        strip_loose(&self.key).len() != self.key.len()
    }

    /// The value after quotes and escapes are removed; `None` for a flag.
    pub fn value(&self) -> Option<&str> {
        self.value.as_deref()
    }

    /// The trailing comment, without `#` and surrounding whitespace.
    pub fn comment(&self) -> Option<&str> {
        self.comment.as_deref()
    }

    /// The 1-based line this entry was read from, if it was read from text.
    pub fn line(&self) -> Option<usize> {
        self.line
    }

    /// Replaces the key (spelling and `loose-` prefix included).
    pub fn set_key(&mut self, key: &str) {
        self.key = key.to_string();
        self.raw = None;
    }

    /// Replaces the value; `None` makes the entry a flag.
    pub fn set_value(&mut self, value: Option<&str>) {
        self.value = value.map(str::to_string);
        self.raw = None;
    }

    /// Replaces or removes the trailing comment.
    pub fn set_comment(&mut self, comment: Option<&str>) {
        self.comment = comment.map(|c| c.trim_matches(reader::is_space).to_string());
        self.raw = None;
    }

    fn matches(&self, normalized: &str) -> bool {
        self.normalized() == normalized
    }
}

fn strip_loose(key: &str) -> &str {
    match key.strip_prefix("loose-").or_else(|| key.strip_prefix("loose_")) {
        Some(rest) if !rest.is_empty() => rest,
        _ => key,
    }
}

/// Which directive a [`Directive`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DirectiveKind {
    /// `!include FILE`: read one more option file.
    Include,
    /// `!includedir DIR`: read every `*.cnf` file in DIR, in byte order of their names.
    IncludeDir,
}

/// An `!include` or `!includedir` directive. The path is kept as written; relative paths are resolved
/// against the directory of the file holding the directive. Equality ignores the original text.
#[derive(Debug, Clone)]
pub struct Directive {
    kind: DirectiveKind,
    path: String,
    raw: Option<String>,
}

impl PartialEq for Directive {
    fn eq(&self, other: &Self) -> bool {
        self.kind == other.kind && self.path == other.path
    }
}

impl Eq for Directive {}

impl Directive {
    /// `!include path`.
    pub fn include(path: &str) -> Self {
        Directive { kind: DirectiveKind::Include, path: path.to_string(), raw: None }
    }

    /// `!includedir path`.
    pub fn include_dir(path: &str) -> Self {
        Directive { kind: DirectiveKind::IncludeDir, path: path.to_string(), raw: None }
    }

    /// Include or include-dir.
    pub fn kind(&self) -> DirectiveKind {
        self.kind
    }

    /// The path as written.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// A `[name]` group and the lines up to the next group header.
///
/// Names compare ASCII-case-insensitively, as MySQL compares group names. Equality ignores the
/// original header text.
#[derive(Debug, Clone)]
pub struct Section {
    name: String,
    header_raw: Option<String>,
    lines: Vec<Line>,
}

impl PartialEq for Section {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name && self.lines == other.lines
    }
}

impl Eq for Section {}

impl Section {
    /// An empty section `[name]`.
    pub fn new(name: &str) -> Self {
        Section { name: name.to_string(), header_raw: None, lines: Vec::new() }
    }

    /// The group name between the brackets.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Whether this is the group `name` (ASCII case-insensitive, as MySQL matches groups).
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }

    /// The lines after the header, in order.
    pub fn lines(&self) -> &[Line] {
        &self.lines
    }

    /// The lines, for arbitrary edits (inserting comments or directives at a place).
    pub fn lines_mut(&mut self) -> &mut Vec<Line> {
        &mut self.lines
    }

    /// The option entries in order.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.lines.iter().filter_map(|l| if let Line::Entry(e) = l { Some(e) } else { None })
    }

    /// The last entry whose normalised key equals that of `key` (the one MySQL would use).
    pub fn get(&self, key: &str) -> Option<&Entry> {
        let n = normalize_key(key);
        self.entries().filter(|e| e.matches(&n)).last()
    }

    /// Every entry whose normalised key equals that of `key`, in order.
    pub fn get_all<'a>(&'a self, key: &str) -> impl Iterator<Item = &'a Entry> {
        let n = normalize_key(key);
        self.entries().filter(move |e| e.matches(&n))
    }

    /// Sets `key` to `value` (`None` for a flag). The first entry with the same normalised key is
    /// replaced in place (its trailing comment is kept) and later ones are removed; without one the
    /// entry is appended after the last non-blank line.
    pub fn set(&mut self, key: &str, value: Option<&str>) -> &mut Self {
        let n = normalize_key(key);
        let mut found = false;
        self.lines.retain_mut(|line| match line {
            Line::Entry(e) if e.matches(&n) => {
                if found {
                    return false;
                }
                found = true;
                e.set_key(key);
                e.set_value(value);
                true
            }
            _ => true,
        });
        if !found {
            self.push_entry(Entry::new(key, value));
        }
        self
    }

    /// Appends `key=value` even if the key is already present (for `plugin-load-add` and the like).
    pub fn add(&mut self, key: &str, value: Option<&str>) -> &mut Self {
        self.push_entry(Entry::new(key, value));
        self
    }

    /// Removes every entry whose normalised key equals that of `key`; returns how many there were.
    pub fn remove(&mut self, key: &str) -> usize {
        let n = normalize_key(key);
        let before = self.lines.len();
        self.lines.retain(|l| !matches!(l, Line::Entry(e) if e.matches(&n)));
        before - self.lines.len()
    }

    /// Appends a `# text` comment line after the last non-blank line.
    pub fn comment(&mut self, text: &str) -> &mut Self {
        let at = self.insert_point();
        self.lines.insert(at, Line::comment(text));
        self
    }

    /// Appends an entry after the last non-blank line, so blank lines separating this section from the
    /// next one stay at the end.
    pub fn push_entry(&mut self, entry: Entry) {
        let at = self.insert_point();
        self.lines.insert(at, Line::Entry(entry));
    }

    fn insert_point(&self) -> usize {
        self.lines.iter().rposition(|l| *l != Line::Blank).map_or(0, |i| i + 1)
    }
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
    /// `PATH: line 12: option 'x' outside any [group] ...`.
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
    fn entry_names() {
        let e = Entry::new("loose-innodb-idle-flush-pct", Some("1"));
        assert!(e.is_loose());
        assert_eq!(e.name(), "innodb-idle-flush-pct");
        assert_eq!(e.normalized(), "innodb_idle_flush_pct");
        let f = Entry::new("skip-log-bin", None);
        assert!(!f.is_loose());
        assert_eq!(f.value(), None);
    }

    #[test]
    fn set_replaces_first_match_by_normalised_name_and_drops_later_ones() {
        let mut s = Section::new("mysqld");
        s.add("innodb-buffer-pool-size", Some("1G")).add("port", Some("1")).add("innodb_buffer_pool_size", Some("2G"));
        s.set("innodb_buffer_pool_size", Some("4G"));
        let got: Vec<_> = s.entries().map(|e| (e.key(), e.value())).collect();
        assert_eq!(got, [("innodb_buffer_pool_size", Some("4G")), ("port", Some("1"))]);
        s.set("skip-log-bin", None);
        assert_eq!(s.get("skip_log_bin").map(|e| e.value()), Some(None));
    }

    #[test]
    fn set_matches_loose_keys_and_keeps_trailing_comment() {
        let mut s = Section::new("mysqld");
        s.push_entry(Entry::new("loose-innodb-idle-flush-pct", Some("1")).with_comment("8.0.18+"));
        s.set("innodb_idle_flush_pct", Some("10"));
        let e = s.get("innodb-idle-flush-pct").expect("entry");
        assert_eq!((e.key(), e.value(), e.comment()), ("innodb_idle_flush_pct", Some("10"), Some("8.0.18+")));
    }

    #[test]
    fn add_keeps_repeats_and_remove_counts() {
        let mut s = Section::new("mysqld");
        s.add("plugin-load-add", Some("a.so")).add("plugin_load_add", Some("b.so")).add("port", Some("3306"));
        let all: Vec<_> = s.get_all("plugin-load-add").filter_map(Entry::value).collect();
        assert_eq!(all, ["a.so", "b.so"]);
        assert_eq!(s.get("plugin-load-add").and_then(Entry::value), Some("b.so"));
        assert_eq!(s.remove("plugin-load-add"), 2);
        assert_eq!(s.remove("plugin-load-add"), 0);
        assert_eq!(s.entries().count(), 1);
    }

    #[test]
    fn appends_go_before_trailing_blank_lines() {
        let mut s = Section::new("mysqld");
        s.add("a", Some("1"));
        s.lines_mut().push(Line::Blank);
        s.add("b", Some("2")).comment("note");
        assert_eq!(
            s.lines(),
            [
                Line::Entry(Entry::new("a", Some("1"))),
                Line::Entry(Entry::new("b", Some("2"))),
                Line::Comment("# note".into()),
                Line::Blank
            ]
        );
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
