//! Datadir snapshots: copy a stopped server's datadir aside and put it back, so that data is prepared
//! once and every later run starts from the same bytes in seconds.

use std::path::Path;

use crate::error::{Error, Result};
use crate::owned;

/// Bytes used by the files under `path` (not following symbolic links).
pub fn tree_size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    if meta.is_dir() {
        std::fs::read_dir(path).map(|rd| rd.flatten().map(|e| tree_size(&e.path())).sum()).unwrap_or(0)
    } else {
        meta.len()
    }
}

/// Bytes available to an unprivileged writer on the filesystem that holds `path` (or its nearest
/// existing ancestor).
pub fn free_space(path: &Path) -> Result<u64> {
    let mut p = path;
    while !p.exists() {
        p = p.parent().unwrap_or(Path::new("/"));
    }
    let st = nix::sys::statvfs::statvfs(p).map_err(|e| Error::file(p, format!("cannot read free space: {e}")))?;
    Ok(st.blocks_available() as u64 * st.fragment_size() as u64)
}

/// Refuses a copy of `need` bytes onto a filesystem with `free` bytes, keeping 64 MiB spare.
pub fn check_space(dest: &Path, need: u64, free: u64) -> Result<()> {
    const SPARE: u64 = 64 << 20;
    if need.saturating_add(SPARE) > free {
        return Err(Error::file(
            dest,
            format!(
                "no disk space for the snapshot: it needs {} MiB and only {} MiB are free; free some space or \
                 set VERSUS_HOME to a larger filesystem",
                need.div_ceil(1 << 20),
                free >> 20
            ),
        ));
    }
    Ok(())
}

/// Copies `datadir` to `dest` (replacing an older snapshot there) and returns the bytes copied.
/// The server must be stopped: InnoDB files copied while it runs are not consistent.
pub fn save(datadir: &Path, dest: &Path) -> Result<u64> {
    if !datadir.is_dir() {
        return Err(Error::file(datadir, "no datadir to snapshot"));
    }
    let need = tree_size(datadir);
    check_space(dest, need, free_space(dest)?)?;
    let name = dest.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dest.with_file_name(format!("{name}.partial"));
    owned::check_dir(dest)?;
    owned::check_dir(&tmp)?;
    owned::remove(&tmp)?;
    if let Some(parent) = dest.parent() {
        owned::create_dir_all(parent)?;
    }
    owned::create_dir(&tmp)?;
    copy_children(datadir, &tmp)?;
    owned::remove(dest)?;
    std::fs::rename(&tmp, dest).map_err(|e| Error::file(dest, e))?;
    owned::mark(dest)?;
    Ok(need)
}

/// Replaces `datadir` with a copy of the snapshot at `snapshot`.
pub fn restore(snapshot: &Path, datadir: &Path) -> Result<()> {
    // Read only from a snapshot versus made, written only into a datadir versus made or filled.
    owned::check_dir(snapshot)?;
    owned::check_links(datadir)?;
    if !snapshot.is_dir() {
        return Err(Error::file(snapshot, "no such snapshot; make one with `versus server snapshot`"));
    }
    let need = tree_size(snapshot);
    let reclaimed = tree_size(datadir);
    check_space(datadir, need, free_space(datadir)?.saturating_add(reclaimed))?;
    owned::remove_contents(datadir)?;
    owned::create_dir_all(datadir)?;
    copy_children(snapshot, datadir)?;
    owned::mark(datadir)
}

/// Copies what is in the directory `from` into the existing directory `to`, and `from`'s permissions.
fn copy_children(from: &Path, to: &Path) -> Result<()> {
    let meta = std::fs::metadata(from).map_err(|e| Error::file(from, e))?;
    std::fs::set_permissions(to, meta.permissions()).map_err(|e| Error::file(to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| Error::file(from, e))? {
        let entry = entry.map_err(|e| Error::file(from, e))?;
        if entry.file_name() != owned::MARKER {
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path) -> Result<()> {
    let meta = std::fs::symlink_metadata(from).map_err(|e| Error::file(from, e))?;
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(from).map_err(|e| Error::file(from, e))?;
        std::os::unix::fs::symlink(target, to).map_err(|e| Error::file(to, e))
    } else if meta.is_dir() {
        std::fs::create_dir_all(to).map_err(|e| Error::file(to, e))?;
        std::fs::set_permissions(to, meta.permissions()).map_err(|e| Error::file(to, e))?;
        for entry in std::fs::read_dir(from).map_err(|e| Error::file(from, e))? {
            let entry = entry.map_err(|e| Error::file(from, e))?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        // std::fs::copy uses copy_file_range, which clones extents where the filesystem can.
        std::fs::copy(from, to).map(|_| ()).map_err(|e| Error::file(to, e))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn save_and_restore_round_trip_a_tree() {
        let dir = tempfile::tempdir().unwrap();
        let data = dir.path().join("data");
        std::fs::create_dir_all(data.join("sbtest")).unwrap();
        crate::owned::mark(&data).unwrap();
        std::fs::write(data.join("ibdata1"), vec![7u8; 100_000]).unwrap();
        std::fs::write(data.join("sbtest/t.ibd"), b"rows").unwrap();
        std::os::unix::fs::symlink("ibdata1", data.join("link")).unwrap();
        let snap = dir.path().join("snap");
        let marker = std::fs::metadata(data.join(crate::owned::MARKER)).unwrap().len();
        assert_eq!(save(&data, &snap).unwrap(), 100_004 + "ibdata1".len() as u64 + marker);
        assert!(crate::owned::is_marked(&snap), "the snapshot is versus's to replace");
        std::fs::write(data.join("sbtest/t.ibd"), b"changed").unwrap();
        std::fs::write(data.join("extra"), b"x").unwrap();
        restore(&snap, &data).unwrap();
        assert_eq!(std::fs::read(data.join("sbtest/t.ibd")).unwrap(), b"rows");
        assert!(!data.join("extra").exists());
        assert_eq!(std::fs::read_link(data.join("link")).unwrap(), Path::new("ibdata1"));
        let theirs = dir.path().join("theirs");
        std::fs::create_dir(&theirs).unwrap();
        std::fs::write(theirs.join("keep"), b"x").unwrap();
        assert!(restore(&snap, &theirs).is_err() && save(&data, &theirs).is_err());
        assert!(theirs.join("keep").is_file(), "a directory versus did not make is neither emptied nor replaced");
    }

    #[test]
    fn space_check_refuses_a_copy_that_does_not_fit() {
        let err = check_space(Path::new("/x/snap"), 500 << 20, 100 << 20).unwrap_err().to_string();
        assert!(err.starts_with("/x/snap: no disk space for the snapshot: it needs 500 MiB"), "{err}");
        assert!(check_space(Path::new("/x"), 1 << 20, 1 << 30).is_ok());
        assert!(restore(Path::new("/nonexistent/snap"), Path::new("/tmp/x")).is_err());
    }
}
