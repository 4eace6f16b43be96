//! The lines of an option file: comments, entries, directives, and the sections holding them.

use super::normalize_key;
use super::reader::is_space;

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
    pub(super) key: String,
    pub(super) value: Option<String>,
    pub(super) comment: Option<String>,
    pub(super) raw: Option<String>,
    pub(super) line: Option<usize>,
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
        self.comment = comment.map(|c| c.trim_matches(is_space).to_string());
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
    pub(super) kind: DirectiveKind,
    pub(super) path: String,
    pub(super) raw: Option<String>,
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
    pub(super) name: String,
    pub(super) header_raw: Option<String>,
    pub(super) lines: Vec<Line>,
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
