//! Advisory locks that keep two versus processes from working on the same thing at once (one experiment,
//! one sandbox). A lock is a file that holds the holder's PID and command line; the lock itself is an
//! `flock` on it, so it ends with the process however that ends, and the file is never removed.

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::path::Path;

use nix::fcntl::{Flock, FlockArg};

use crate::error::{Error, Result};

/// A held lock; dropping it releases the lock.
pub type Held = Flock<File>;

/// Takes the lock at `path` (its directory must exist), without waiting. When another process holds it,
/// `busy` gets that process's description ("pid N: versus …", or "another versus") and makes the error.
/// A symbolic link at `path` is refused, not followed ([`crate::owned::open_write`]).
pub fn take(path: &Path, busy: impl FnOnce(&str) -> Error) -> Result<Held> {
    let file = crate::owned::open_write(path, 0o600, false)?;
    let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(l) => l,
        Err((mut f, nix::errno::Errno::EWOULDBLOCK)) => {
            let mut holder = String::new();
            let _ = f.read_to_string(&mut holder);
            let holder = holder.trim();
            return Err(busy(if holder.is_empty() { "another versus" } else { holder }));
        }
        Err((_, e)) => return Err(Error::file(path, format!("cannot lock: {e}"))),
    };
    let me = format!("pid {}: {}", std::process::id(), std::env::args().collect::<Vec<_>>().join(" "));
    let _ = lock.set_len(0);
    let _ = lock.rewind();
    let _ = lock.write_all(me.as_bytes());
    Ok(lock)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_is_told_who_holds_the_lock_and_gets_it_once_released() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("x.lock");
        let first = take(&path, |_| Error::Other("unexpected".into())).unwrap();
        let err = take(&path, |h| Error::Other(format!("busy: {h}"))).unwrap_err().to_string();
        assert!(err.contains(&format!("busy: pid {}", std::process::id())), "{err}");
        drop(first);
        assert!(take(&path, |_| Error::Other("still busy".into())).is_ok());
    }

    #[test]
    fn a_link_in_place_of_the_lock_file_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("users-file");
        std::fs::write(&target, "keep me").unwrap();
        let link = dir.path().join("x.lock");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(take(&link, |_| Error::Other("busy".into())).is_err());
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    }
}
