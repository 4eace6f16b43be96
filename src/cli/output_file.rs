//! The one way a command writes a file the user named (`report -o`, `fleet -o`, `ibench -o`,
//! `explain --report`, `series --report`, `advise --cnf`): checked before anything runs, and again
//! just before the write, so that an output never replaces an input. Refused, whatever path spelling,
//! symbolic or hard link leads there (files are compared by device and inode):
//!
//! - a file the command reads (its results store, experiment file, option files);
//! - any results store (an SQLite database or its `-wal` file), any recovery file, any experiment file;
//! - a directory, or a link to nothing.
//!
//! The write goes to a new file beside the target, which is then renamed over it: a write that fails
//! half-way (a full disk) leaves the existing file as it was. A link is followed, so the file it
//! points to is replaced and the link stays; a device (`/dev/stdout`) is written to directly.

use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// The largest file whose text is read to tell whether it is a recovery or experiment file.
const SNIFF_LIMIT: u64 = 4 << 20;

/// A checked output file.
#[derive(Debug, Clone)]
pub struct OutputFile {
    flag: String,
    given: PathBuf,
    inputs: Vec<PathBuf>,
}

impl OutputFile {
    /// Checks `path`, given with `flag`, against `inputs` (every file the command reads; a path that
    /// does not exist yet is compared by name) and against what versus never writes over.
    ///
    /// Errors: [`Error::Option`] naming `flag` and the file, one line.
    pub fn check(flag: &str, path: &Path, inputs: &[PathBuf]) -> Result<OutputFile> {
        let out = OutputFile { flag: flag.to_string(), given: path.to_path_buf(), inputs: inputs.to_vec() };
        out.target()?;
        Ok(out)
    }

    /// The path as the user gave it.
    pub fn path(&self) -> &Path {
        &self.given
    }

    /// Writes `bytes` to the file: checked again, then written to a new file beside it that replaces
    /// it in one rename.
    pub fn write(&self, bytes: &[u8]) -> Result<()> {
        let target = self.target()?;
        if target.device {
            let mut f = std::fs::OpenOptions::new().write(true).open(&target.real).map_err(|e| self.cannot(e))?;
            return f.write_all(bytes).and_then(|()| f.flush()).map_err(|e| self.cannot(e));
        }
        let dir = target.real.parent().unwrap_or(Path::new("."));
        let name = target.real.file_name().unwrap_or_default().to_string_lossy();
        let tmp = dir.join(format!(".{name}.{}.versus-tmp", std::process::id()));
        let mode = target.mode.unwrap_or(0o666);
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&tmp)
            .map_err(|e| self.cannot(e))?;
        let written = f
            .write_all(bytes)
            .and_then(|()| f.sync_all())
            .and_then(|()| match target.mode {
                // create_new applied the umask; an existing file keeps its own mode.
                Some(m) => f.set_permissions(std::fs::Permissions::from_mode(m)),
                None => Ok(()),
            })
            .and_then(|()| std::fs::rename(&tmp, &target.real));
        if let Err(e) = written {
            let _ = crate::owned::discard_created(&tmp, &f);
            return Err(self.cannot(e));
        }
        Ok(())
    }

    fn cannot(&self, e: std::io::Error) -> Error {
        Error::option(&self.flag, format!("cannot write {}: {e}", self.given.display()))
    }

    fn refuse(&self, why: impl std::fmt::Display) -> Error {
        Error::option(
            &self.flag,
            format!("{} {why}; versus never writes its output over it: name another file", self.given.display()),
        )
    }

    /// Where the output goes, after links, and what is there now.
    fn target(&self) -> Result<Target> {
        let path = &self.given;
        if path.as_os_str().is_empty() {
            return Err(Error::option(&self.flag, "the file name is empty; name the file to write"));
        }
        let real = match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
                let dir = parent.canonicalize().map_err(|e| {
                    Error::option(&self.flag, format!("cannot write {}: its directory: {e}", path.display()))
                })?;
                dir.join(path.file_name().ok_or_else(|| self.refuse("names no file"))?)
            }
            Err(e) => return Err(self.cannot(e)),
            Ok(_) => match path.canonicalize() {
                Ok(p) => p,
                // A link into /proc to a pipe or a socket (`-o /dev/stdout | less`) has no path: written
                // in place.
                Err(_) => match std::fs::metadata(path) {
                    Ok(m) if !m.is_file() && !m.is_dir() => path.to_path_buf(),
                    _ => return Err(self.refuse("is a link to nothing")),
                },
            },
        };
        let meta = match std::fs::metadata(&real) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(self.cannot(e)),
            Ok(m) => Some(m),
        };
        for input in &self.inputs {
            if same_file(&real, meta.as_ref(), input) {
                return Err(self.refuse(format!("is {}, which this command reads", input.display())));
            }
        }
        let Some(meta) = meta else { return Ok(Target { real, device: false, mode: None }) };
        if meta.is_dir() {
            return Err(self.refuse("is a directory"));
        }
        if !meta.is_file() {
            return Ok(Target { real, device: true, mode: None });
        }
        if let Some(what) = protected(&real, meta.len()) {
            return Err(self.refuse(format!("is {what}")));
        }
        Ok(Target { real, device: false, mode: Some(meta.mode() & 0o7777) })
    }
}

/// The resolved output path; `device` when it is no regular file (written in place); the mode of the
/// file it replaces.
struct Target {
    real: PathBuf,
    device: bool,
    mode: Option<u32>,
}

/// True when the output at `real` (with its metadata, if it exists) is the file `input`: the same
/// device and inode, or, when either does not exist yet, the same resolved path.
fn same_file(real: &Path, meta: Option<&std::fs::Metadata>, input: &Path) -> bool {
    match (meta, std::fs::metadata(input)) {
        (Some(m), Ok(i)) => (m.dev(), m.ino()) == (i.dev(), i.ino()),
        _ => resolved(input).is_some_and(|i| i == real),
    }
}

/// `path` with every link and relative part resolved, as far as it exists.
fn resolved(path: &Path) -> Option<PathBuf> {
    if let Ok(p) = path.canonicalize() {
        return Some(p);
    }
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    Some(parent.canonicalize().ok()?.join(path.file_name()?))
}

/// What the existing regular file at `path` is, when versus must never write over it: a results
/// store, its write-ahead log, a recovery file or an experiment file.
pub fn protected(path: &Path, len: u64) -> Option<&'static str> {
    let name = path.file_name().unwrap_or_default().to_string_lossy();
    if name.ends_with(".recovery.json") || name.ends_with(".recovery.json.imported") {
        return Some("a recovery file");
    }
    let mut f = std::fs::File::open(path).ok()?;
    let mut head = [0u8; 16];
    let n = f.read(&mut head).ok()?;
    if is_sqlite(&head[..n]) {
        return Some("a results store (an SQLite database)");
    }
    if n >= 4 && matches!(u32::from_be_bytes([head[0], head[1], head[2], head[3]]), 0x377f_0682 | 0x377f_0683) {
        return Some("the write-ahead log of an SQLite database");
    }
    let beside = ["-wal", "-shm", "-journal"].iter().filter_map(|s| name.strip_suffix(s)).any(|db| {
        let mut head = [0u8; 16];
        let db = path.with_file_name(db);
        std::fs::File::open(db).and_then(|mut f| f.read(&mut head)).is_ok_and(|n| is_sqlite(&head[..n]))
    });
    if beside {
        return Some("a file of an SQLite database");
    }
    if len > SNIFF_LIMIT {
        return None;
    }
    let mut text = head[..n].to_vec();
    f.read_to_end(&mut text).ok()?;
    let text = String::from_utf8(text).ok()?;
    let json: Option<serde_json::Value> = serde_json::from_str(&text).ok();
    if json.as_ref().and_then(|j| j.get("kind")).and_then(|k| k.as_str()) == Some(crate::store::recovery::KIND) {
        return Some("a recovery file");
    }
    let toml: Option<toml::Table> = toml::from_str(&text).ok();
    if toml.is_some_and(|t| t.contains_key("workloads")) {
        return Some("an experiment file");
    }
    None
}

fn is_sqlite(head: &[u8]) -> bool {
    head == crate::store::SQLITE_HEADER
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_replace_through_links_and_keep_the_mode() {
        let d = tempfile::tempdir().unwrap();
        let file = d.path().join("r.md");
        let out = OutputFile::check("-o", &file, &[]).unwrap();
        out.write(b"one").unwrap();
        assert_eq!(std::fs::read(&file).unwrap(), b"one");
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.path().join("link.md");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        OutputFile::check("-o", &link, &[]).unwrap().write(b"two").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert_eq!(std::fs::read(&file).unwrap(), b"two");
        assert_eq!(std::fs::metadata(&file).unwrap().mode() & 0o777, 0o640);
        // Nothing is left beside it.
        assert_eq!(std::fs::read_dir(d.path()).unwrap().count(), 2);
    }

    #[test]
    fn inputs_and_protected_files_are_refused_also_when_they_appear_later() {
        let d = tempfile::tempdir().unwrap();
        let input = d.path().join("in.cnf");
        // Not there yet: compared by name.
        let err = OutputFile::check("--cnf", &d.path().join("./in.cnf"), std::slice::from_ref(&input));
        assert!(err.unwrap_err().to_string().contains("which this command reads"));
        let later = d.path().join("later.md");
        let out = OutputFile::check("-o", &later, &[]).unwrap();
        std::fs::write(&later, b"SQLite format 3\0rest of a database").unwrap();
        let err = out.write(b"report").unwrap_err().to_string();
        assert!(err.contains("a results store"), "{err}");
        assert_eq!(std::fs::read(&later).unwrap(), b"SQLite format 3\0rest of a database");
        std::fs::write(&input, "[mysqld]\n").unwrap();
        let err = OutputFile::check("--cnf", &input, std::slice::from_ref(&input)).unwrap_err().to_string();
        assert!(err.starts_with("--cnf: ") && err.contains("which this command reads"), "{err}");
    }

    #[test]
    fn what_is_protected() {
        let d = tempfile::tempdir().unwrap();
        let cases: [(&str, &[u8], Option<&str>); 6] = [
            ("a.db", b"SQLite format 3\0xxxx", Some("a results store (an SQLite database)")),
            ("a.db-wal", &[0x37, 0x7f, 0x06, 0x82, 0, 0], Some("the write-ahead log of an SQLite database")),
            ("a.db-shm", b"\0\0\0\0", Some("a file of an SQLite database")),
            ("x.json", br#"{"kind":"versus-recovered-run"}"#, Some("a recovery file")),
            ("e.txt", b"name = \"e\"\n[[workloads]]\ntest = \"oltp_read_only\"\n", Some("an experiment file")),
            ("r.md", b"# a report\n", None),
        ];
        for (name, bytes, want) in cases {
            let p = d.path().join(name);
            std::fs::write(&p, bytes).unwrap();
            assert_eq!(protected(&p, bytes.len() as u64), want, "{name}");
        }
    }
}
