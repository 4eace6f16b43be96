//! What keeps a sandbox to itself: the OS account its server runs as, directories only that account
//! can enter (0700), files only it can read (0600), and a generated root password.
//!
//! When versus runs as root, the server runs as the unprivileged `mysql` account (made by the
//! distribution's server packages) if that account exists and can reach the server program, its plugin
//! and message directories and the directories above the sandbox (and the datadir); it is checked by
//! running `sh` as `mysql`. Otherwise the server runs as root, still confined by the rest: its
//! directories are 0700, `secure_file_priv` is inside the sandbox, root needs the generated password
//! and exists only at 'localhost' (the socket), and the benchmark account has no FILE, SUPER or GRANT
//! OPTION. When versus does not run as root the server runs as the same user as versus.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use nix::unistd::{Gid, Uid, User};

use crate::error::{Error, Result};

/// The unprivileged account a server started by root runs as, when it can.
pub const SERVER_ACCOUNT: &str = "mysql";

/// The OS account the server of a sandbox runs as.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Account {
    /// versus is not root: the server runs as versus's own user (no `user=` option).
    Same,
    /// versus is root and the server stays root (`user=root`).
    Root,
    /// versus is root and the server switches to this unprivileged account (`user=NAME`).
    Unprivileged {
        /// The account's name.
        name: String,
        /// Its uid.
        uid: u32,
        /// Its primary gid.
        gid: u32,
    },
}

impl Account {
    /// The `user=` option for the server, if any.
    pub fn option(&self) -> Option<&str> {
        match self {
            Account::Same => None,
            Account::Root => Some("root"),
            Account::Unprivileged { name, .. } => Some(name),
        }
    }

    /// The uid and gid the server is started under, when it is not versus's own.
    pub fn ids(&self) -> Option<(u32, u32)> {
        match self {
            Account::Unprivileged { uid, gid, .. } => Some((*uid, *gid)),
            Account::Same | Account::Root => None,
        }
    }

    /// The account named by a sandbox record (`None`: not recorded, or versus was not root).
    pub fn from_option(name: Option<&str>) -> Account {
        match name {
            None => Account::Same,
            Some("root") => Account::Root,
            Some(n) => match User::from_name(n) {
                Ok(Some(u)) => Account::Unprivileged { name: n.into(), uid: u.uid.as_raw(), gid: u.gid.as_raw() },
                _ => Account::Root,
            },
        }
    }

    /// Chooses the account for a server of `program` whose sandbox needs `dirs` reachable.
    pub fn choose(program: &Path, dirs: &[&Path]) -> Account {
        if !nix::unistd::geteuid().is_root() {
            return Account::Same;
        }
        let Ok(Some(user)) = User::from_name(SERVER_ACCOUNT) else { return Account::Root };
        if can_reach(&user, program, dirs) {
            Account::Unprivileged { name: user.name, uid: user.uid.as_raw(), gid: user.gid.as_raw() }
        } else {
            Account::Root
        }
    }

    /// Gives `path` to the account (files versus writes for the server, directories it works in).
    pub fn own(&self, path: &Path) -> Result<()> {
        if let Account::Unprivileged { uid, gid, .. } = self {
            nix::unistd::chown(path, Some(Uid::from_raw(*uid)), Some(Gid::from_raw(*gid)))
                .map_err(|e| Error::file(path, format!("cannot give it to the server's account: {e}")))?;
        }
        Ok(())
    }

    /// [`Account::own`] for a whole tree (a datadir restored from a snapshot by root).
    pub fn own_tree(&self, path: &Path) -> Result<()> {
        if !matches!(self, Account::Unprivileged { .. }) {
            return Ok(());
        }
        let mut stack = vec![path.to_path_buf()];
        while let Some(p) = stack.pop() {
            let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
            if meta.file_type().is_symlink() {
                continue;
            }
            self.own(&p)?;
            if meta.is_dir() {
                let entries = std::fs::read_dir(&p).map_err(|e| Error::file(&p, e))?;
                stack.extend(entries.flatten().map(|e| e.path()));
            }
        }
        Ok(())
    }
}

/// True when `user` can execute `program` and enter every one of `dirs`.
fn can_reach(user: &User, program: &Path, dirs: &[&Path]) -> bool {
    use std::os::unix::process::CommandExt;
    let script = r#"test -x "$1" || exit 1; shift; for d in "$@"; do cd "$d" || exit 1; done"#;
    std::process::Command::new("/bin/sh")
        .arg("-c")
        .arg(script)
        .arg("sh")
        .arg(program)
        .args(dirs)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .gid(user.gid.as_raw())
        .uid(user.uid.as_raw())
        .status()
        .is_ok_and(|s| s.success())
}

/// Makes `dir` enterable by its owner only.
pub fn private_dir(dir: &Path) -> Result<()> {
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(|e| Error::file(dir, e))
}

/// Writes `text` to `path` readable by its owner only (0600), replacing what was there.
pub fn write_private(path: &Path, text: &str) -> Result<()> {
    let mut f = crate::owned::open_write(path, 0o600, true)?;
    // An existing file keeps its mode on open: set it.
    f.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(|e| Error::file(path, e))?;
    f.write_all(text.as_bytes()).map_err(|e| Error::file(path, e))
}

/// A new random password (hex, 32 characters) from the kernel's generator.
pub fn generate_password() -> Result<String> {
    let mut bytes = [0u8; 16];
    let mut f = std::fs::File::open("/dev/urandom").map_err(|e| Error::file("/dev/urandom", e))?;
    std::io::Read::read_exact(&mut f, &mut bytes).map_err(|e| Error::file("/dev/urandom", e))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

/// The file in a sandbox directory that holds root's password.
pub fn root_password_file(dir: &Path) -> PathBuf {
    dir.join("root.password")
}

/// root's password of the sandbox in `dir`; `None` for a sandbox made before root had one.
pub fn read_root_password(dir: &Path) -> Option<String> {
    std::fs::read_to_string(root_password_file(dir)).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn private_files_and_dirs() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("secret");
        std::fs::write(&f, "old").unwrap();
        std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o644)).unwrap();
        write_private(&f, "new").unwrap();
        assert_eq!(std::fs::metadata(&f).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(std::fs::read_to_string(&f).unwrap(), "new");
        private_dir(t.path()).unwrap();
        assert_eq!(std::fs::metadata(t.path()).unwrap().permissions().mode() & 0o777, 0o700);
        let (a, b) = (generate_password().unwrap(), generate_password().unwrap());
        assert!(a.len() == 32 && a.chars().all(|c| c.is_ascii_hexdigit()) && a != b);
    }

    #[test]
    fn the_server_account_needs_to_reach_the_sandbox() {
        if !nix::unistd::geteuid().is_root() {
            assert_eq!(Account::choose(Path::new("/bin/sh"), &[]), Account::Same);
            return;
        }
        let t = tempfile::tempdir().unwrap();
        std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o700)).unwrap(); // root's alone
        let closed = Account::choose(Path::new("/bin/sh"), &[t.path()]);
        assert_eq!(closed, Account::Root);
        if User::from_name(SERVER_ACCOUNT).ok().flatten().is_some() {
            std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
            let open = Account::choose(Path::new("/bin/sh"), &[t.path()]);
            assert_eq!(open.option(), Some(SERVER_ACCOUNT));
        }
    }
}
