//! Finding the files of a server install (Debian tree, `/usr`, official MySQL tarball, MariaDB bintar) and
//! asking the server binary what it is.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::server::build::{Flavor, Layout, Version};

/// Where server binaries live below a basedir, in the order they are tried. `mariadbd` comes first because
/// MariaDB bintars keep `bin/mysqld` as a link to it.
const SERVER_PATHS: [&str; 6] =
    ["sbin/mariadbd", "bin/mariadbd", "libexec/mariadbd", "sbin/mysqld", "bin/mysqld", "libexec/mysqld"];

/// How long `SERVER --version` may take before it is considered hung.
const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

fn first_existing(base: &Path, candidates: &[&str]) -> Option<PathBuf> {
    candidates.iter().map(|c| base.join(c)).find(|p| p.exists())
}

fn server_in(base: &Path) -> Option<PathBuf> {
    SERVER_PATHS.iter().map(|c| base.join(c)).find(|p| p.is_file())
}

/// The basedir of the install under `root`: `root/usr` (Debian tree, `/`), `root` itself (`/usr`, a tarball
/// unpacked in place), or the single directory inside `root` (a tarball's top directory).
fn find_basedir(root: &Path) -> Option<(PathBuf, PathBuf)> {
    for base in [root.join("usr"), root.to_path_buf()] {
        if let Some(server) = server_in(&base) {
            return Some((base, server));
        }
    }
    let dirs: Vec<PathBuf> = std::fs::read_dir(root).ok()?.flatten().map(|e| e.path()).filter(|p| p.is_dir()).collect();
    match &dirs[..] {
        [only] => {
            for base in [only.join("usr"), only.clone()] {
                if let Some(server) = server_in(&base) {
                    return Some((base, server));
                }
            }
            None
        }
        _ => None,
    }
}

/// Finds the server binary, install-db script, client, admin tool, plugin directory and messages directory of
/// the install under `root`. `install_db` is whatever MariaDB-style script is present; callers drop it for
/// MySQL once [`probe`] has told the flavor.
pub fn detect_layout(root: &Path) -> Result<Layout> {
    let not_server = || Error::Fetch {
        spec: root.display().to_string(),
        message: format!("no mysqld or mariadbd under {} (looked in usr/sbin, sbin, bin, libexec)", root.display()),
    };
    let (base, server) = find_basedir(root).ok_or_else(not_server)?;
    let install_db = first_existing(
        &base,
        &["bin/mariadb-install-db", "scripts/mariadb-install-db", "bin/mysql_install_db", "scripts/mysql_install_db"],
    );
    let client = first_existing(&base, &["bin/mariadb", "bin/mysql"]);
    let admin = first_existing(&base, &["bin/mariadb-admin", "bin/mysqladmin"]);
    let plugin_dir = first_existing(
        &base,
        &[
            "lib/mysql/plugin",
            "lib/mariadb/plugin",
            "lib/plugin",
            "lib64/mysql/plugin",
            "lib64/mariadb/plugin",
            "lib64/plugin",
        ],
    )
    .unwrap_or_else(|| {
        // Debian-style trees keep plugins in lib/mysql/plugin, tarballs in lib/plugin.
        if server.parent().is_some_and(|p| p.ends_with("sbin")) {
            base.join("lib/mysql/plugin")
        } else {
            base.join("lib/plugin")
        }
    });
    let messages_dir = ["share/mariadb", "share/mysql", "share"]
        .iter()
        .map(|c| base.join(c))
        .find(|d| d.join("english/errmsg.sys").is_file())
        .or_else(|| first_existing(&base, &["share/mariadb", "share/mysql"]))
        .unwrap_or_else(|| base.join("share"));
    Ok(Layout { basedir: base, server, install_db, client, admin, plugin_dir, messages_dir })
}

/// Reads flavor, version and version string from `mysqld --version` output such as
/// `mariadbd  Ver 11.8.9-MariaDB-0+deb13u1 from Debian for debian-linux-gnu on x86_64 (Debian 13)` or
/// `/opt/mysql/bin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)`.
pub fn parse_version_output(text: &str) -> Option<(Flavor, Version, String)> {
    let line = text.lines().find(|l| l.contains(" Ver "))?;
    let after = &line[line.find(" Ver ")? + 5..];
    let version_string = after.split_whitespace().next()?.to_string();
    let version = Version::find_in(&version_string)?;
    // After " Ver ": the binary's path before it may name anything.
    let flavor = crate::server::flavor::flavor_named_in(after);
    Some((flavor, version, version_string))
}

/// Runs `SERVER --no-defaults --version` and reads what server it is.
pub fn probe(layout: &Layout) -> Result<(Flavor, Version, String)> {
    let server = &layout.server;
    let fail = |message: String| Error::Fetch { spec: server.display().to_string(), message };
    let mut child = Command::new(server)
        .args(["--no-defaults", "--version"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| fail(format!("cannot run {}: {e}", server.display())))?;
    let started = Instant::now();
    loop {
        match child.try_wait() {
            Ok(Some(_)) => break,
            Ok(None) if started.elapsed() > PROBE_TIMEOUT => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(fail(format!("`{} --version` did not finish within {PROBE_TIMEOUT:?}", server.display())));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(fail(format!("waiting for {}: {e}", server.display()))),
        }
    }
    let out = child.wait_with_output().map_err(|e| fail(e.to_string()))?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = stderr.lines().find(|l| !l.trim().is_empty()).unwrap_or("no output");
        return Err(fail(format!("`{} --version` failed ({}): {why}", server.display(), out.status)));
    }
    parse_version_output(&stdout)
        .ok_or_else(|| fail(format!("`{} --version` printed no server version: {}", server.display(), stdout.trim())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_version_lines() {
        let (f, v, s) = parse_version_output(
            "/usr/sbin/mariadbd  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu on x86_64 (Debian 12)\n",
        )
        .unwrap();
        assert_eq!((f, v, s.as_str()), (Flavor::Mariadb, Version::new(10, 11, 19), "10.11.19-MariaDB-0+deb12u1"));
        let (f, v, s) =
            parse_version_output("/opt/m/bin/mysqld  Ver 8.0.36 for Linux on x86_64 (MySQL Community Server - GPL)")
                .unwrap();
        assert_eq!((f, v, s.as_str()), (Flavor::Mysql, Version::new(8, 0, 36), "8.0.36"));
        let (f, v, _) = parse_version_output("/usr/sbin/mysqld  Ver 9.7.4-2 for Linux on x86_64 ((Debian))").unwrap();
        assert_eq!((f, v), (Flavor::Mysql, Version::new(9, 7, 4)));
        let (f, _, s) =
            parse_version_output("bin/mysqld  Ver 8.0.36-28 for Linux on x86_64 (Percona Server (GPL), Release 28)")
                .unwrap();
        assert_eq!((f, s.as_str()), (Flavor::Percona, "8.0.36-28"));
        assert_eq!(parse_version_output("Usage: mysqld [OPTIONS]"), None);
    }

    #[test]
    fn finds_a_tarball_top_directory() {
        let t = tempfile::tempdir().unwrap();
        let top = t.path().join("mysql-8.0.36-linux-glibc2.28-x86_64");
        for d in ["bin", "lib/plugin", "share/english"] {
            std::fs::create_dir_all(top.join(d)).unwrap();
        }
        std::fs::write(top.join("bin/mysqld"), "").unwrap();
        std::fs::write(top.join("bin/mysql"), "").unwrap();
        std::fs::write(top.join("share/english/errmsg.sys"), "").unwrap();
        let l = detect_layout(t.path()).unwrap();
        assert_eq!(l.basedir, top);
        assert_eq!(l.server, top.join("bin/mysqld"));
        assert_eq!(l.client, Some(top.join("bin/mysql")));
        assert_eq!(l.admin, None);
        assert_eq!(l.install_db, None);
        assert_eq!(l.plugin_dir, top.join("lib/plugin"));
        assert_eq!(l.messages_dir, top.join("share"));
    }

    #[test]
    fn rejects_a_directory_without_a_server() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("bin")).unwrap();
        let e = detect_layout(t.path()).unwrap_err().to_string();
        assert!(e.contains("no mysqld or mariadbd under"), "{e}");
    }
}
