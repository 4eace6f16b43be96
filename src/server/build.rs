//! Server builds: a runnable MySQL-family server tree registered under a name.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The family a server belongs to; decides how it is initialised and configured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Flavor {
    /// MariaDB 10.x / 11.x.
    Mariadb,
    /// Oracle MySQL (5.7, 8.0, 8.4, 9.x), including distribution builds.
    Mysql,
    /// Percona Server for MySQL: MySQL's command line.
    Percona,
}

impl fmt::Display for Flavor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Flavor::Mariadb => "mariadb",
            Flavor::Mysql => "mysql",
            Flavor::Percona => "percona",
        })
    }
}

/// A dotted server version such as 10.11.19, ordered numerically.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Version {
    /// Major number (10, 8, 9 …).
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Patch number.
    pub patch: u32,
}

impl Version {
    /// A version from its three numbers.
    pub const fn new(major: u32, minor: u32, patch: u32) -> Self {
        Version { major, minor, patch }
    }

    /// Reads the first `X.Y[.Z]` found in `text` (`"10.11.19-MariaDB-0+deb12u1"`, `"Ver 9.7.4-2"`).
    pub fn find_in(text: &str) -> Option<Version> {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii_digit() && (i == 0 || !bytes[i - 1].is_ascii_alphanumeric()) {
                let rest = &text[i..];
                let end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
                let nums: Vec<u32> =
                    rest[..end].split('.').filter(|s| !s.is_empty()).map_while(|s| s.parse().ok()).collect();
                if nums.len() >= 2 {
                    return Some(Version::new(nums[0], nums[1], nums.get(2).copied().unwrap_or(0)));
                }
                i += end.max(1);
            } else {
                i += 1;
            }
        }
        None
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

/// Where a build came from, kept so `server list` can say it and a build can be fetched again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Source {
    /// Debian packages extracted into a private tree.
    Apt {
        /// The suite(s) the packages came from (`bookworm-security`, `trixie`, `sid` …).
        suite: String,
        /// The exact Debian package version of the server package.
        package_version: String,
        /// True when the tree carries its own C library and the ELF files were patched to use it.
        private_runtime: bool,
    },
    /// An install that already existed on this machine (not owned by versus).
    Path,
    /// An official binary tarball unpacked into the store.
    Tarball {
        /// The tarball file it was unpacked from.
        file: PathBuf,
    },
    /// A vendor's tarball, downloaded, verified and unpacked into the store.
    Vendor {
        /// Where it was downloaded from.
        url: String,
        /// The verified tarball in the download cache.
        file: PathBuf,
        /// The checksum it was verified against (`MD5:…`).
        checksum: String,
    },
}

/// The files of a server install that versus needs to run it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Layout {
    /// The server's `--basedir` (the directory holding `bin/` and `share/`).
    pub basedir: PathBuf,
    /// The server binary (`mariadbd` or `mysqld`).
    pub server: PathBuf,
    /// MariaDB's `mariadb-install-db`/`mysql_install_db` script; `None` for MySQL.
    pub install_db: Option<PathBuf>,
    /// The command-line client (`mariadb` or `mysql`), when the build has one.
    pub client: Option<PathBuf>,
    /// The admin tool (`mariadb-admin` or `mysqladmin`), when the build has one.
    pub admin: Option<PathBuf>,
    /// `--plugin-dir`.
    pub plugin_dir: PathBuf,
    /// `--lc-messages-dir` (the directory holding `english/errmsg.sys` or `errmsg.sys` per language).
    pub messages_dir: PathBuf,
}

/// A registered, runnable server build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Build {
    /// The name users refer to it by (`mariadb-10.11.19`, `mysql-9.7.4`, `system`).
    pub name: String,
    /// MariaDB, MySQL or Percona.
    pub flavor: Flavor,
    /// The version as numbers.
    pub version: Version,
    /// The full version string the server reports (`10.11.19-MariaDB-0+deb12u1`).
    pub version_string: String,
    /// The root of the tree (what `server list` shows as its path).
    pub root: PathBuf,
    /// The files inside the tree.
    pub layout: Layout,
    /// Where it came from.
    pub source: Source,
    /// Size of the tree on disk in bytes.
    pub size_bytes: u64,
}

impl Build {
    /// The client to print in "how to connect" hints, if the build ships one.
    pub fn client(&self) -> Option<&Path> {
        self.layout.client.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_versions_in_server_output() {
        assert_eq!(Version::find_in("10.11.19-MariaDB-0+deb12u1"), Some(Version::new(10, 11, 19)));
        assert_eq!(Version::find_in("/usr/sbin/mysqld  Ver 9.7.4-2 for Linux on x86_64"), Some(Version::new(9, 7, 4)));
        assert_eq!(Version::find_in("mariadbd  Ver 11.8.9-MariaDB-0+deb13u1"), Some(Version::new(11, 8, 9)));
        assert_eq!(Version::find_in("no digits"), None);
        assert!(Version::new(10, 11, 19) < Version::new(11, 8, 0));
    }
}
