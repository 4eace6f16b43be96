//! Effective options: which value each option ends up with for a set of groups, following
//! `!include`/`!includedir` the way MySQL's `load_defaults` does.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::{Directive, DirectiveKind, Entry, Line, MyCnf, is_accumulating, normalize_key};
use crate::error::{Error, Result};

/// MySQL skips directives in files nested this deep (`max_recursion_level`).
const MAX_DEPTH: usize = 10;

/// One option after all files are read: its last value, or every value for [accumulating](super::ACCUMULATING)
/// keys, and where its last assignment came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EffectiveOption {
    /// The normalised name (`innodb_buffer_pool_size`), as [`normalize_key`] gives it.
    pub name: String,
    /// The key as last written (`loose-innodb-buffer-pool-size`).
    pub key: String,
    /// Whether the last assignment had a `loose-` prefix.
    pub loose: bool,
    /// The value (`None` for a flag); for accumulating keys every value in the order read.
    pub values: Vec<Option<String>>,
    /// The group of the last assignment, as written in its header.
    pub group: String,
    /// The file of the last assignment (`None` for a document that was not read from a file).
    pub path: Option<PathBuf>,
    /// The 1-based line of the last assignment, when the entry was read from text.
    pub line: Option<usize>,
}

impl EffectiveOption {
    /// The last value; `None` for a flag.
    pub fn value(&self) -> Option<&str> {
        self.values.last().and_then(|v| v.as_deref())
    }
}

/// The effective options for a set of groups, in the order each option first appeared, plus the files
/// read and anything skipped on the way.
#[derive(Debug, Clone, Default)]
pub struct Options {
    list: Vec<EffectiveOption>,
    index: HashMap<String, usize>,
    files: Vec<PathBuf>,
    warnings: Vec<String>,
}

impl Options {
    /// The option called `name` in any spelling (`-`/`_`, `loose-`).
    pub fn get(&self, name: &str) -> Option<&EffectiveOption> {
        self.index.get(&normalize_key(name)).map(|&i| &self.list[i])
    }

    /// `None` if `name` is not set, `Some(None)` for a flag, `Some(Some(value))` for the last value.
    pub fn value(&self, name: &str) -> Option<Option<&str>> {
        self.get(name).map(EffectiveOption::value)
    }

    /// Whether `name` is set at all.
    pub fn contains(&self, name: &str) -> bool {
        self.get(name).is_some()
    }

    /// All options, in the order they first appeared.
    pub fn iter(&self) -> impl Iterator<Item = &EffectiveOption> {
        self.list.iter()
    }

    /// How many distinct options are set.
    pub fn len(&self) -> usize {
        self.list.len()
    }

    /// Whether no option is set.
    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// The files read, in reading order (the top file first).
    pub fn files(&self) -> &[PathBuf] {
        &self.files
    }

    /// What was skipped as MySQL skips it (missing included files, world-writable files, directives
    /// nested too deep or not followed), one sentence each.
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    fn assign(&mut self, e: &Entry, group: &str, path: Option<&Path>) {
        let name = e.normalized();
        let value = e.value().map(str::to_string);
        let opt = match self.index.get(&name) {
            Some(&i) => &mut self.list[i],
            None => {
                self.index.insert(name.clone(), self.list.len());
                self.list.push(EffectiveOption {
                    name: name.clone(),
                    key: String::new(),
                    loose: false,
                    values: Vec::new(),
                    group: String::new(),
                    path: None,
                    line: None,
                });
                self.list.last_mut().expect("just pushed")
            }
        };
        if !is_accumulating(&name) {
            opt.values.clear();
        }
        opt.values.push(value);
        opt.key = e.key().to_string();
        opt.loose = e.is_loose();
        opt.group = group.to_string();
        opt.path = path.map(Path::to_path_buf);
        opt.line = e.line();
    }
}

/// Reads the option file `path` and returns the effective options of the groups `groups`, with MySQL's
/// rules:
///
/// - Options count when their group is one of `groups` (ASCII case-insensitive). The order of `groups`
///   does not matter: like MySQL, the last assignment in reading order wins, whatever its group.
/// - `-` and `_` are the same in names and a `loose-` prefix is ignored (see [`normalize_key`]);
///   [accumulating](super::ACCUMULATING) keys keep every value.
/// - `!include FILE` reads FILE at that point; `!includedir DIR` reads every `*.cnf` file in DIR,
///   sorted by name bytewise. Relative paths are relative to the directory of the including file
///   (MySQL uses its working directory, which for versus-generated files is the same when started there).
/// - As in MySQL, a missing included file and a world-writable file are skipped, and directives in files
///   nested 10 deep are skipped; each adds a [warning](Options::warnings). A missing `!includedir`
///   directory, an unreadable or malformed file and an include cycle are errors naming the file.
pub fn resolve(path: &Path, groups: &[&str]) -> Result<Options> {
    let mut walker = Walker::new(groups);
    if let Some(w) = world_writable(path) {
        walker.out.warnings.push(w);
        return Ok(walker.out);
    }
    let doc = MyCnf::read(path)?;
    walker.top(&doc, path)?;
    Ok(walker.out)
}

/// [`resolve`] for a document in memory that lives at `path`.
pub(super) fn resolve_doc(doc: &MyCnf, path: &Path, groups: &[&str]) -> Result<Options> {
    let mut walker = Walker::new(groups);
    walker.top(doc, path)?;
    Ok(walker.out)
}

/// The effective options of a document alone; directives are not followed.
pub(super) fn options_of(doc: &MyCnf, groups: &[&str]) -> Options {
    let mut walker = Walker::new(groups);
    walker.walk(doc, None, 0).expect("nothing to read without a path");
    walker.out
}

struct Walker<'a> {
    groups: &'a [&'a str],
    out: Options,
    /// Canonical paths of the files being read, outermost first, for cycle detection.
    stack: Vec<PathBuf>,
}

impl<'a> Walker<'a> {
    fn new(groups: &'a [&'a str]) -> Self {
        Walker { groups, out: Options::default(), stack: Vec::new() }
    }

    fn top(&mut self, doc: &MyCnf, path: &Path) -> Result<()> {
        let canon =
            std::fs::canonicalize(path).or_else(|_| std::path::absolute(path)).unwrap_or_else(|_| path.to_path_buf());
        self.stack.push(canon);
        self.out.files.push(path.to_path_buf());
        self.walk(doc, Some(path), 0)
    }

    fn walk(&mut self, doc: &MyCnf, path: Option<&Path>, depth: usize) -> Result<()> {
        for line in doc.preamble() {
            self.line(line, None, path, depth)?;
        }
        for s in doc.sections() {
            let group = self.groups.iter().any(|g| s.is(g)).then(|| s.name());
            for line in s.lines() {
                self.line(line, group, path, depth)?;
            }
        }
        Ok(())
    }

    fn line(&mut self, line: &Line, group: Option<&str>, path: Option<&Path>, depth: usize) -> Result<()> {
        match line {
            Line::Entry(e) => {
                if let Some(g) = group {
                    self.out.assign(e, g, path);
                }
                Ok(())
            }
            Line::Directive(d) => self.directive(d, path, depth),
            Line::Blank | Line::Comment(_) => Ok(()),
        }
    }

    fn directive(&mut self, d: &Directive, from: Option<&Path>, depth: usize) -> Result<()> {
        let word = match d.kind() {
            DirectiveKind::Include => "!include",
            DirectiveKind::IncludeDir => "!includedir",
        };
        let Some(from) = from else {
            self.out.warnings.push(format!("'{word} {}' not followed: the document has no file path", d.path()));
            return Ok(());
        };
        if depth >= MAX_DEPTH {
            self.out.warnings.push(format!(
                "{}: '{word} {}' skipped: includes nest more than {MAX_DEPTH} levels deep",
                from.display(),
                d.path()
            ));
            return Ok(());
        }
        let target = from.parent().unwrap_or(Path::new("")).join(d.path());
        match d.kind() {
            DirectiveKind::Include => self.include(&target, from, depth + 1),
            DirectiveKind::IncludeDir => {
                let read = std::fs::read_dir(&target).map_err(|e| {
                    Error::file(
                        &target,
                        format!("cannot read the directory named by '{word}' in {}: {e}", from.display()),
                    )
                })?;
                let mut names: Vec<_> = read
                    .filter_map(|entry| entry.ok())
                    .map(|entry| entry.file_name())
                    .filter(|n| n.as_encoded_bytes().ends_with(b".cnf") && target.join(n).is_file())
                    .collect();
                names.sort();
                for name in names {
                    self.include(&target.join(name), from, depth + 1)?;
                }
                Ok(())
            }
        }
    }

    fn include(&mut self, file: &Path, from: &Path, depth: usize) -> Result<()> {
        let canon = match std::fs::canonicalize(file) {
            Ok(c) => c,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                self.out.warnings.push(format!(
                    "{}: included file {} does not exist; skipped",
                    from.display(),
                    file.display()
                ));
                return Ok(());
            }
            Err(e) => return Err(Error::file(file, format!("cannot read the included option file: {e}"))),
        };
        if let Some(at) = self.stack.iter().position(|p| *p == canon) {
            let chain: Vec<String> = self.stack[at..].iter().chain([&canon]).map(|p| p.display().to_string()).collect();
            return Err(Error::file(
                file,
                format!("include cycle {}; remove one of these !include directives", chain.join(" -> ")),
            ));
        }
        if let Some(w) = world_writable(file) {
            self.out.warnings.push(w);
            return Ok(());
        }
        let doc = MyCnf::read(file)?;
        self.out.files.push(file.to_path_buf());
        self.stack.push(canon);
        self.walk(&doc, Some(file), depth)?;
        self.stack.pop();
        Ok(())
    }
}

/// MySQL and MariaDB ignore world-writable option files; the warning if `path` is one.
fn world_writable(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = std::fs::metadata(path).ok()?;
        if meta.is_file() && meta.permissions().mode() & 0o002 != 0 {
            return Some(format!("{}: world-writable option file ignored, as MySQL ignores it", path.display()));
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(text: &str, groups: &[&str]) -> Options {
        MyCnf::parse(text, Path::new("t.cnf")).unwrap().options(groups)
    }

    const SERVER: &[&str] = &["mysqld", "server", "mariadbd", "mariadb", "mysqld-8.0"];

    #[test]
    fn last_value_wins_in_file_order_not_group_order() {
        let text = "[mysqld-8.0]\nport=1\n[mysqld]\nport=2\nsocket=/a\n[client]\nport=9\n[mysqld]\nsocket=/b\n";
        for groups in [SERVER, &["mysqld-8.0", "mysqld"][..]] {
            let o = opts(text, groups);
            assert_eq!(o.value("port"), Some(Some("2")));
            assert_eq!(o.value("socket"), Some(Some("/b")));
            assert_eq!(o.len(), 2);
        }
        let o = opts(text, &["client"]);
        assert_eq!(o.value("port"), Some(Some("9")));
        assert_eq!(o.get("port").unwrap().line, Some(7));
    }

    #[test]
    fn groups_match_case_insensitively() {
        let o = opts("[MySQLd]\nport=1\n", &["mysqld"]);
        assert_eq!(o.get("port").map(|e| e.group.as_str()), Some("MySQLd"));
    }

    #[test]
    fn spellings_and_loose_prefix_are_one_option() {
        let o = opts("[mysqld]\ninnodb-buffer-pool-size=1G\nloose_innodb_buffer_pool_size=2G\n", SERVER);
        let e = o.get("innodb_buffer_pool_size").unwrap();
        assert_eq!((e.value(), e.loose, e.key.as_str()), (Some("2G"), true, "loose_innodb_buffer_pool_size"));
        assert_eq!(o.len(), 1);
        let o = opts("[mysqld]\nloose-a=1\na=2\n", SERVER);
        assert!(!o.get("loose-a").unwrap().loose);
    }

    #[test]
    fn accumulating_keys_keep_every_value() {
        let o = opts(
            "[mysqld]\nplugin-load-add=a.so\nplugin_load=x.so\n[mariadbd]\nplugin_load_add=b.so\nplugin-load=y.so\n",
            SERVER,
        );
        assert_eq!(o.get("plugin_load_add").unwrap().values, [Some("a.so".into()), Some("b.so".into())]);
        assert_eq!(o.get("plugin_load").unwrap().values, [Some("y.so".into())]);
    }

    #[test]
    fn flags_and_order_of_first_appearance() {
        let o = opts("[mysqld]\nskip-log-bin\nport=1\nskip-log-bin=0\nskip_log_bin\n", SERVER);
        assert_eq!(o.value("skip-log-bin"), Some(None));
        assert_eq!(o.value("log-bin"), None);
        assert!(!o.contains("nope"));
        let names: Vec<_> = o.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["skip_log_bin", "port"]);
    }

    #[test]
    fn in_memory_documents_do_not_follow_directives() {
        let o = opts("!include /nonexistent/x.cnf\n[mysqld]\n!includedir /nonexistent\nport=1\n", SERVER);
        assert_eq!(o.value("port"), Some(Some("1")));
        assert_eq!(o.warnings().len(), 2);
        assert!(o.warnings()[0].contains("'!include /nonexistent/x.cnf' not followed"), "{:?}", o.warnings());
        assert!(o.files().is_empty());
    }
}
