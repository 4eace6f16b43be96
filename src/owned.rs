//! Guarded removal: versus deletes only what it made.
//!
//! Every directory versus creates gets a marker file ([`MARKER`]) recording its canonical path. A
//! removal ([`remove`], [`remove_contents`], [`remove_file`]) first canonicalises the path (without
//! following its last component) and then requires a valid marker on the path itself or on one of its
//! ancestors: the versus home, when versus created it, or any directory versus created below it. A
//! marker copied or moved elsewhere records another path and counts for nothing, so a copy of a versus
//! directory made by the user is as safe as any of the user's files. Every removal in versus goes
//! through this module.
//!
//! Names that become path components (sandbox, build and snapshot names) are checked by [`check_name`];
//! free-form names (experiments) are turned into a safe directory name by [`slug`].

use std::io::ErrorKind;
use std::path::{Component, Path, PathBuf};

use crate::error::{Error, Result};

/// The marker file in every directory versus created.
pub const MARKER: &str = ".versus-owned";

/// The datadir record written by earlier versions after initialising a datadir; it still marks that
/// datadir as made by versus.
const LEGACY_DATADIR_MARKER: &str = "versus.json";

/// Creates `path` and its missing parents, marking every directory it creates (not the ones that
/// already existed).
/// A symbolic link inside a directory versus made must lead to a directory versus made (see
/// [`check_links`]); a link above them all (the user's own) is followed.
pub fn create_dir_all(path: &Path) -> Result<()> {
    check_links(path)?;
    let path = std::path::absolute(path).map_err(|e| Error::file(path, e))?;
    let mut missing = Vec::new();
    let mut p = path.as_path();
    loop {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => break,
            Ok(m) if m.file_type().is_symlink() && p.is_dir() => break,
            Ok(_) => return Err(Error::file(p, "exists and is not a directory; choose another path")),
            Err(e) if e.kind() == ErrorKind::NotFound => missing.push(p.to_path_buf()),
            Err(e) => return Err(Error::file(p, e)),
        }
        match p.parent() {
            Some(parent) => p = parent,
            None => break,
        }
    }
    for dir in missing.iter().rev() {
        match std::fs::create_dir(dir) {
            Ok(()) => mark(dir)?,
            // Someone else (another versus) created it meanwhile: it is theirs to mark.
            Err(e) if e.kind() == ErrorKind::AlreadyExists && dir.is_dir() => {}
            Err(e) => return Err(Error::file(dir, e)),
        }
    }
    Ok(())
}

/// Creates a new directory `path` (its parent must exist) and marks it; an existing one is an error.
/// When the marker cannot be written, the directory just made (still empty) is removed again.
pub fn create_dir(path: &Path) -> Result<()> {
    std::fs::create_dir(path).map_err(|e| Error::file(path, e))?;
    mark(path).inspect_err(|_| {
        let _ = std::fs::remove_dir(path);
    })
}

/// A new directory of versus's own in the system's temporary directory, named
/// `{prefix}{pid}-{n}` (this process's id, then a number no other directory there has), marked.
pub fn create_temp_dir(prefix: &str) -> Result<PathBuf> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    loop {
        let n = (u64::from(nanos) << 16) ^ N.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("{prefix}{}-{n}", std::process::id()));
        match create_dir(&dir) {
            Err(_) if dir.exists() => continue,
            r => return r.map(|()| dir),
        }
    }
}

/// Records that versus made the directory `dir` (for directories it made by other means than
/// [`create_dir_all`]: a rename, a copy, a datadir initialisation). Only for directories versus made.
pub fn mark(dir: &Path) -> Result<()> {
    let canonical = std::fs::canonicalize(dir).map_err(|e| Error::file(dir, e))?;
    let text = serde_json::json!({ "created_by": "versus", "path": canonical }).to_string() + "\n";
    write_file(&canonical.join(MARKER), text.as_bytes(), 0o644)
}

/// True when `dir` carries a valid marker: one recording `dir`'s own canonical path.
/// A datadir versus initialised before markers existed counts too (its `versus.json` record).
pub fn is_marked(dir: &Path) -> bool {
    marked(dir, true)
}

/// [`is_marked`], with `legacy` whether the datadir record of earlier versions counts.
fn marked(dir: &Path, legacy: bool) -> bool {
    let Ok(canonical) = std::fs::canonicalize(dir) else { return false };
    if let Ok(text) = std::fs::read_to_string(canonical.join(MARKER)) {
        return serde_json::from_str::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v["path"].as_str().map(PathBuf::from))
            .is_some_and(|p| p == canonical);
    }
    legacy && legacy_datadir(&canonical)
}

/// True when `dir` carries versus's own marker recording its canonical path (the datadir record of
/// earlier versions does not count: a copy of a datadir the user made has one too). What a symbolic
/// link must lead to.
pub fn has_own_marker(dir: &Path) -> bool {
    marked(dir, false)
}

fn legacy_datadir(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join(LEGACY_DATADIR_MARKER))
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .is_some_and(|v| v["build"].is_string())
        && dir.join("mysql").is_dir()
}

/// True when the canonical path `real` is a directory versus made, or lies inside one.
fn in_territory(real: &Path) -> bool {
    real.ancestors().any(|d| d != Path::new("/") && is_marked(d))
}

/// [`in_territory`] by versus's own markers only: where a symbolic link may lead.
fn link_may_lead_to(real: &Path) -> bool {
    real.ancestors().any(|d| d != Path::new("/") && has_own_marker(d))
}

/// Where `path` really is: every symbolic link on it resolved, the part that does not exist yet
/// appended as given. On the way, a link that lies inside a directory versus made (and with `last`, a
/// link as the final component wherever it lies) must lead to a directory versus made or into one;
/// any other is refused, naming the link and its target.
fn resolve(path: &Path, last: bool) -> Result<PathBuf> {
    let abs = std::path::absolute(path).map_err(|e| Error::file(path, e))?;
    let comps: Vec<Component> = abs.components().collect();
    let final_index = comps.iter().rposition(|c| matches!(c, Component::Normal(_)));
    let mut real = PathBuf::from("/");
    let mut missing = false;
    for (i, c) in comps.iter().enumerate() {
        let name = match c {
            Component::Normal(name) => name,
            Component::ParentDir => {
                real.pop();
                continue;
            }
            _ => continue,
        };
        let next = real.join(name);
        if missing {
            real = next;
            continue;
        }
        let meta = match std::fs::symlink_metadata(&next) {
            Ok(m) => m,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                missing = true;
                real = next;
                continue;
            }
            Err(e) => return Err(Error::file(&next, e)),
        };
        if !meta.file_type().is_symlink() {
            real = next;
            continue;
        }
        let guarded = (last && Some(i) == final_index) || in_territory(&real);
        match std::fs::canonicalize(&next) {
            Ok(target) if !guarded || link_may_lead_to(&target) => real = target,
            Ok(target) => return Err(link_refused(&next, &target)),
            Err(_) if guarded => {
                let target = std::fs::read_link(&next).unwrap_or_default();
                return Err(link_refused(&next, &target));
            }
            Err(e) => return Err(Error::file(&next, e)),
        }
    }
    Ok(real)
}

fn link_refused(link: &Path, target: &Path) -> Error {
    Error::file(
        link,
        format!(
            "is a symbolic link to {}, which versus did not make: versus writes, empties and deletes only in \
             directories it made; remove the link and versus makes its own there (`versus server start NAME` \
             creates its own datadir), or to keep versus's data elsewhere set VERSUS_HOME to that place",
            target.display()
        ),
    )
}

/// Checks the symbolic links on `path` (a link inside a directory versus made must lead to a
/// directory versus made, or into one; links above, the user's own, are followed) and returns where
/// `path` really is. For paths the user gave (a `--datadir`), and inside [`create_dir_all`].
pub fn check_links(path: &Path) -> Result<PathBuf> {
    resolve(path, false)
}

/// Checks that versus may write into, empty or give away the directory `dir` it keeps its own things
/// in (a sandbox, a snapshot, an experiment's work): as [`check_links`], and when `dir` itself is a
/// symbolic link, wherever it lies, it must lead to a directory versus made or into one. Returns where
/// `dir` really is.
pub fn check_dir(dir: &Path) -> Result<PathBuf> {
    resolve(dir, true)
}

/// Opens the file `path` for writing, created with `mode` if missing, emptied with `truncate`; a
/// symbolic link there is refused, not followed (versus's own files are never links).
pub fn open_write(path: &Path, mode: u32, truncate: bool) -> Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(truncate)
        .mode(mode)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
        .map_err(|e| {
            if e.raw_os_error() == Some(nix::libc::ELOOP) {
                let target = std::fs::read_link(path).unwrap_or_default();
                Error::file(
                    path,
                    format!(
                        "is a symbolic link to {}: versus writes only its own files there; remove the link",
                        target.display()
                    ),
                )
            } else {
                Error::file(path, e)
            }
        })
}

/// Writes `bytes` to the file `path` (created with `mode`, or emptied first), never through a link.
pub fn write_file(path: &Path, bytes: &[u8], mode: u32) -> Result<()> {
    std::io::Write::write_all(&mut open_write(path, mode, true)?, bytes).map_err(|e| Error::file(path, e))
}

/// Checks every entry of the directory `dir` that is a symbolic link as [`check_dir`] does (a link
/// leads only into a directory versus made): for directories whose files versus or its servers write
/// (a sandbox's `error.log`, `mysqld.pid` …, an experiment's `run/`, `prepare-N/`). A missing `dir` is
/// fine.
pub fn check_entries(dir: &Path) -> Result<()> {
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if entry.file_type().is_ok_and(|t| t.is_symlink()) {
            check_dir(&entry.path())?;
        }
    }
    Ok(())
}

/// The canonical form of `path` with its last component not followed (a symbolic link stays the
/// link), or `None` when nothing is there.
fn locate(path: &Path) -> Result<Option<PathBuf>> {
    let abs = std::path::absolute(path).map_err(|e| Error::file(path, e))?;
    let (parent, last) = match abs.components().next_back() {
        Some(Component::Normal(last)) => (abs.parent().unwrap_or(Path::new("/")), Some(last.to_os_string())),
        _ => (abs.as_path(), None),
    };
    let parent = match std::fs::canonicalize(parent) {
        Ok(p) => p,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(Error::file(path, e)),
    };
    let full = match last {
        Some(l) => parent.join(l),
        None => parent,
    };
    match std::fs::symlink_metadata(&full) {
        Ok(_) => Ok(Some(full)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        Err(e) => Err(Error::file(path, e)),
    }
}

/// Checks that versus made `path` (it, or a directory above it, carries a valid marker) and returns
/// its canonical form; `None` when nothing is there.
pub fn check(path: &Path) -> Result<Option<PathBuf>> {
    let Some(full) = locate(path)? else { return Ok(None) };
    let is_dir = std::fs::symlink_metadata(&full).map(|m| m.is_dir()).unwrap_or(false);
    let start = if is_dir { Some(full.as_path()) } else { full.parent() };
    if start.into_iter().flat_map(Path::ancestors).any(|d| d != Path::new("/") && is_marked(d)) {
        return Ok(Some(full));
    }
    Err(Error::file(
        &full,
        format!(
            "not removed: versus did not create it (no {MARKER} marker in it or in a directory above it); \
             remove it yourself if it should go"
        ),
    ))
}

/// Removes the directory tree (or file) at `path` if versus made it; a missing path is fine.
pub fn remove(path: &Path) -> Result<()> {
    let Some(full) = check(path)? else { return Ok(()) };
    let (_held, target) = match (full.parent(), full.file_name()) {
        (Some(parent), Some(name)) => {
            let (held, via) = pin(parent)?;
            (Some(held), via.join(name))
        }
        _ => (None, full.clone()),
    };
    remove_entry(&target, &full)
}

/// Removes the entry at `target` (a directory tree, a file or a link, not followed), shown as `shown`.
fn remove_entry(target: &Path, shown: &Path) -> Result<()> {
    let meta = match std::fs::symlink_metadata(target) {
        Ok(m) => m,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(Error::file(shown, e)),
    };
    let r = if meta.is_dir() { std::fs::remove_dir_all(target) } else { std::fs::remove_file(target) };
    match r {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(Error::file(shown, e)),
    }
}

/// Holds the checked directory `dir` (a canonical path) open and returns a path that reaches it
/// through the open descriptor (`/proc/self/fd/N`): what is removed below it stays in that very
/// directory even if `dir` or a directory above it is swapped for a link after the check. Refused
/// when what was opened is no longer `dir`.
fn pin(dir: &Path) -> Result<(std::fs::File, PathBuf)> {
    use std::os::fd::AsRawFd;
    use std::os::unix::fs::OpenOptionsExt;
    let f = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_PATH | nix::libc::O_DIRECTORY | nix::libc::O_NOFOLLOW)
        .open(dir)
        .map_err(|e| Error::file(dir, format!("not removed: {e}")))?;
    let via = PathBuf::from(format!("/proc/self/fd/{}", f.as_raw_fd()));
    match std::fs::read_link(&via) {
        Ok(real) if real == dir => Ok((f, via)),
        Ok(real) => Err(Error::file(
            dir,
            format!("not removed: it changed while versus checked it (it leads to {} now)", real.display()),
        )),
        // Without /proc the checked path is all there is.
        Err(_) => Ok((f, dir.to_path_buf())),
    }
}

/// Removes the file at `path` if versus made it (it lies in a directory versus made); a missing file
/// is fine.
pub fn remove_file(path: &Path) -> Result<()> {
    remove(path)
}

/// Removes the file at `path` that versus has just created and still holds open as `file` (a write
/// that failed half-way): removed only while `path` is still that very file (same device and inode).
pub fn discard_created(path: &Path, file: &std::fs::File) -> Result<()> {
    use std::os::unix::fs::MetadataExt;
    let ours = file.metadata().map_err(|e| Error::file(path, e))?;
    let there = std::fs::symlink_metadata(path).map_err(|e| Error::file(path, e))?;
    if (ours.dev(), ours.ino()) != (there.dev(), there.ino()) {
        return Err(Error::file(path, "not removed: it is no longer the file versus created"));
    }
    std::fs::remove_file(path).map_err(|e| Error::file(path, e))
}

/// Empties the directory `dir` (keeping it) if versus made it or filled it (a datadir versus
/// initialised in a directory the user gave); a missing directory is fine.
/// A `dir` that is a symbolic link is followed only to a directory versus made.
pub fn remove_contents(dir: &Path) -> Result<()> {
    let full = check_dir(dir)?;
    if std::fs::symlink_metadata(&full).is_err() {
        return Ok(());
    }
    if !in_territory(&full) {
        return Err(Error::file(
            &full,
            format!(
                "not emptied: versus did not create it (no {MARKER} marker in it or in a directory above it); \
                 empty it yourself if it should be"
            ),
        ));
    }
    let (_held, via) = pin(&full)?;
    for entry in std::fs::read_dir(&via).map_err(|e| Error::file(&full, e))? {
        let entry = entry.map_err(|e| Error::file(&full, e))?;
        remove_entry(&via.join(entry.file_name()), &full.join(entry.file_name()))?;
    }
    Ok(())
}

/// Checks a name that becomes a path component (a sandbox, build or snapshot name): 1 to 80 letters,
/// digits, `.`, `_` and `-`, not starting with `.`. `flag` names the option it came from.
pub fn check_name(flag: &str, name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= 80
        && !name.starts_with('.')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if ok {
        Ok(())
    } else {
        Err(Error::option(
            flag,
            format!(
                "{name:?} is not a valid name: use 1 to 80 letters, digits, '.', '_' and '-', not starting with '.'"
            ),
        ))
    }
}

/// A safe directory name for a free-form name (an experiment's): the name itself when it passes
/// [`check_name`], else its safe characters (others as `-`, at most 48) and a hash of the whole name,
/// so that different names never share a directory.
pub fn slug(name: &str) -> String {
    if check_name("", name).is_ok() {
        return name.to_string();
    }
    let mut s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') { c } else { '-' })
        .take(48)
        .collect();
    while s.starts_with('.') {
        s.replace_range(0..1, "_");
    }
    let hash = name.bytes().fold(0xcbf29ce484222325u64, |h, b| (h ^ b as u64).wrapping_mul(0x100000001b3));
    format!("{s}-{hash:016x}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_marked_trees_are_removed() {
        let t = tempfile::tempdir().unwrap();
        let victim = t.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("keep.txt"), b"mine").unwrap();
        let err = remove(&victim).unwrap_err().to_string();
        assert!(err.contains("not removed: versus did not create it"), "{err}");
        assert!(remove_contents(&victim).is_err() && remove_file(&victim.join("keep.txt")).is_err());
        assert!(victim.join("keep.txt").is_file());

        let made = t.path().join("home/experiments/x");
        create_dir_all(&made).unwrap();
        std::fs::write(made.join("f"), b"x").unwrap();
        assert!(is_marked(&t.path().join("home")) && is_marked(&made));
        assert!(!is_marked(t.path()), "an existing parent is not claimed");
        remove(&made.join("f")).unwrap();
        remove(&made).unwrap();
        assert!(!made.exists());
        remove(&made).unwrap();
    }

    #[test]
    fn dot_dot_and_symlinks_do_not_escape() {
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        create_dir_all(&home.join("experiments")).unwrap();
        let victim = t.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("keep.txt"), b"mine").unwrap();
        assert!(remove(&home.join("experiments/../../victim")).is_err());
        // A link inside a marked directory is removed as a link; its target stays.
        std::os::unix::fs::symlink(&victim, home.join("experiments/link")).unwrap();
        remove(&home.join("experiments/link")).unwrap();
        assert!(victim.join("keep.txt").is_file());
        // Through a link, the canonical path is outside: refused.
        std::os::unix::fs::symlink(&victim, home.join("l2")).unwrap();
        assert!(remove(&home.join("l2/keep.txt")).is_err());
        assert!(victim.join("keep.txt").is_file());
    }

    #[test]
    fn links_inside_versus_directories_lead_only_to_versus_directories() {
        use std::os::unix::fs::symlink;
        let t = tempfile::tempdir().unwrap();
        let home = t.path().join("home");
        create_dir_all(&home.join("sandboxes/s")).unwrap();
        let victim = t.path().join("victim");
        std::fs::create_dir(&victim).unwrap();
        std::fs::write(victim.join("keep.txt"), b"mine").unwrap();
        let data = home.join("sandboxes/s/data");
        symlink(&victim, &data).unwrap();
        for e in [check_dir(&data), check_links(&data)] {
            let e = e.unwrap_err().to_string();
            assert!(e.contains("is a symbolic link to") && e.contains(&*victim.to_string_lossy()), "{e}");
        }
        assert!(create_dir_all(&data.join("mysql")).is_err() && remove_contents(&data).is_err());
        assert!(victim.join("keep.txt").is_file() && !victim.join("mysql").exists());
        // Through `..` after the link: still where the link leads.
        assert!(check_links(&data.join("../data/x")).is_err());

        // A link the user put above versus's directories is followed by check_links, not by check_dir
        // when it is the directory itself.
        let theirs = t.path().join("theirs");
        symlink(t.path(), &theirs).unwrap();
        assert_eq!(
            check_links(&theirs.join("home/sandboxes")).unwrap(),
            home.join("sandboxes").canonicalize().unwrap()
        );
        assert!(check_dir(&theirs).is_err() && check_links(&theirs).is_ok());

        // A link to a directory versus made is followed, and emptied through.
        std::fs::remove_file(&data).unwrap();
        let other = home.join("sandboxes/other");
        create_dir_all(&other).unwrap();
        std::fs::write(other.join("f"), b"x").unwrap();
        symlink(&other, &data).unwrap();
        assert_eq!(check_dir(&data).unwrap(), other.canonicalize().unwrap());
        remove_contents(&data).unwrap();
        assert!(!other.join("f").exists() && other.is_dir());
        // A dangling link inside is refused too.
        let dangling = home.join("sandboxes/dangling");
        symlink(t.path().join("nowhere"), &dangling).unwrap();
        assert!(check_links(&dangling.join("x")).is_err());
    }

    #[test]
    fn a_directory_swapped_for_a_link_after_the_check_is_not_removed_from() {
        let t = tempfile::tempdir().unwrap();
        let real = t.path().canonicalize().unwrap().join("real");
        create_dir_all(&real.join("d")).unwrap();
        let (_held, via) = pin(&real.join("d")).unwrap();
        assert!(via.join(MARKER).is_file(), "the held directory is reached through its descriptor");
        // What was checked as `alias/d` is, once opened, another directory: refused.
        std::os::unix::fs::symlink(&real, t.path().join("alias")).unwrap();
        let alias = t.path().canonicalize().unwrap().join("alias/d");
        let e = pin(&alias).unwrap_err().to_string();
        assert!(e.contains("changed while versus checked it"), "{e}");
        // The last component itself a link: not opened at all.
        std::os::unix::fs::symlink(real.join("d"), real.join("l")).unwrap();
        assert!(pin(&real.join("l")).is_err());
        assert!(real.join("d").join(MARKER).is_file());
    }

    #[test]
    fn files_are_not_written_through_a_link() {
        let t = tempfile::tempdir().unwrap();
        let theirs = t.path().join("theirs.txt");
        std::fs::write(&theirs, b"mine").unwrap();
        let link = t.path().join("my.cnf");
        std::os::unix::fs::symlink(&theirs, &link).unwrap();
        let e = open_write(&link, 0o600, true).unwrap_err().to_string();
        assert!(e.contains("is a symbolic link to") && e.contains("theirs.txt"), "{e}");
        assert_eq!(std::fs::read(&theirs).unwrap(), b"mine");
        let own = t.path().join("own");
        std::io::Write::write_all(&mut open_write(&own, 0o600, true).unwrap(), b"x").unwrap();
        assert_eq!(std::fs::read(&own).unwrap(), b"x");
    }

    #[test]
    fn a_copied_or_moved_marker_counts_for_nothing() {
        let t = tempfile::tempdir().unwrap();
        let made = t.path().join("made");
        create_dir_all(&made).unwrap();
        let copy = t.path().join("copy");
        std::fs::create_dir(&copy).unwrap();
        std::fs::copy(made.join(MARKER), copy.join(MARKER)).unwrap();
        assert!(remove(&copy).is_err());
        let moved = t.path().join("moved");
        std::fs::rename(&made, &moved).unwrap();
        assert!(remove(&moved).is_err());
        mark(&moved).unwrap();
        remove(&moved).unwrap();
    }

    #[test]
    fn contents_of_a_filled_directory_go_the_directory_stays() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path().join("data");
        std::fs::create_dir(&d).unwrap();
        std::fs::create_dir(d.join("mysql")).unwrap();
        std::fs::write(d.join("ibdata1"), b"x").unwrap();
        assert!(remove_contents(&d).is_err());
        mark(&d).unwrap();
        remove_contents(&d).unwrap();
        assert!(d.is_dir() && std::fs::read_dir(&d).unwrap().next().is_none());
    }

    #[test]
    fn names_and_slugs() {
        assert!(check_name("--name", "mariadb-11.8.9").is_ok());
        for bad in ["", ".hidden", "a/b", "x y", "../up", &"x".repeat(81)] {
            let e = check_name("--name", bad).unwrap_err().to_string();
            assert!(e.starts_with("--name: "), "{e}");
        }
        assert_eq!(slug("durability"), "durability");
        for name in ["/tmp/x", "../../x", "a b", "..", &"y".repeat(300)] {
            let s = slug(name);
            assert!(check_name("", &s).is_ok(), "{name:?} -> {s:?}");
        }
        assert_ne!(slug("a b"), slug("a/b"));
    }
}
