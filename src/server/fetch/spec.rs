//! What `versus server fetch SPEC` may be asked for: a distribution line (`mariadb-11.8`), a point version of
//! one (`mariadb-10.11.18`), `system`, a directory, or a tarball file.

use std::path::{Path, PathBuf};

use crate::server::build::{Flavor, Version};

/// A flavor and version line that Debian ships, and where.
#[derive(Debug, PartialEq, Eq)]
pub struct Line {
    /// MariaDB or MySQL.
    pub flavor: Flavor,
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
    /// The Debian release whose libraries the binaries were built against. When it is not the host's own
    /// release the tree gets a private runtime: a glibc check alone would miss renamed sonames (10.5 needs
    /// libssl1.1, 11.8 needs libaio.so.1t64), so the rule is by release.
    pub release: &'static str,
    /// Suites to read, the release and its security suite.
    pub suites: &'static [&'static str],
    /// The package whose version is the server's version.
    pub server_package: &'static str,
    /// Packages to extract (the server, its client, plugins and shared files), all at the server's version
    /// where the suite has it.
    pub packages: &'static [&'static str],
}

const MARIADB: &[&str] =
    &["mariadb-server-core", "mariadb-client-core", "mariadb-server", "mariadb-client", "mariadb-common"];

/// The lines `server fetch` knows, oldest first.
pub const LINES: &[Line] = &[
    Line {
        flavor: Flavor::Mariadb,
        major: 10,
        minor: 5,
        release: "bullseye",
        suites: &["bullseye", "bullseye-security"],
        server_package: "mariadb-server-core-10.5",
        packages: &[
            "mariadb-server-core-10.5",
            "mariadb-client-core-10.5",
            "mariadb-server-10.5",
            "mariadb-client-10.5",
            "mariadb-common",
        ],
    },
    Line {
        flavor: Flavor::Mariadb,
        major: 10,
        minor: 11,
        release: "bookworm",
        suites: &["bookworm", "bookworm-security"],
        server_package: "mariadb-server-core",
        packages: MARIADB,
    },
    Line {
        flavor: Flavor::Mariadb,
        major: 11,
        minor: 8,
        release: "trixie",
        suites: &["trixie", "trixie-security"],
        server_package: "mariadb-server-core",
        packages: MARIADB,
    },
    Line {
        flavor: Flavor::Mysql,
        major: 9,
        minor: 7,
        release: "sid",
        suites: &["sid"],
        server_package: "mysql-server-core",
        packages: &["mysql-server-core", "mysql-client-core"],
    },
];

impl Line {
    /// The line's name (`mariadb-11.8`).
    pub fn name(&self) -> String {
        format!("{}-{}.{}", self.flavor, self.major, self.minor)
    }

    /// True when `v` belongs to this line.
    pub fn holds(&self, v: Version) -> bool {
        v.major == self.major && v.minor == self.minor
    }
}

/// The names of all known lines, for messages.
pub fn line_names() -> String {
    LINES.iter().map(Line::name).collect::<Vec<_>>().join(", ")
}

/// A parsed SPEC.
#[derive(Debug, PartialEq, Eq)]
pub enum Spec {
    /// Distribution packages of a line, newest point version unless one is given.
    Line(&'static Line, Option<Version>),
    /// An existing install (`system` is `/usr`).
    Path(PathBuf),
    /// A binary tarball file.
    Tarball(PathBuf),
}

/// File name endings `tar` can unpack and official tarballs use.
pub const TARBALL_ENDINGS: &[&str] = &[".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.zst", ".tar.bz2", ".tar"];

/// `mariadb-11.8` → (Mariadb, [11, 8]); `mysql-9.7.4` → (Mysql, [9, 7, 4]); anything else → None.
fn flavor_version(spec: &str) -> Option<(Flavor, Vec<u32>)> {
    let (flavor, rest) = spec.split_once('-')?;
    let flavor = match flavor {
        "mariadb" => Flavor::Mariadb,
        "mysql" => Flavor::Mysql,
        "percona" => Flavor::Percona,
        _ => return None,
    };
    let nums: Vec<u32> = rest.split('.').map(|n| n.parse().ok()).collect::<Option<_>>()?;
    (2..=3).contains(&nums.len()).then_some((flavor, nums))
}

/// Parses SPEC. Line names win over same-named files in the current directory; write `./mariadb-11.8` for
/// those.
pub fn parse(spec: &str) -> Result<Spec, String> {
    if spec == "system" {
        return Ok(Spec::Path(PathBuf::from("/usr")));
    }
    if let Some((flavor, nums)) = flavor_version(spec) {
        let line = LINES
            .iter()
            .find(|l| l.flavor == flavor && l.major == nums[0] && l.minor == nums[1])
            .ok_or_else(|| format!("unknown line {}-{}.{}; known lines: {}", flavor, nums[0], nums[1], line_names()))?;
        return Ok(Spec::Line(line, nums.get(2).map(|&p| Version::new(nums[0], nums[1], p))));
    }
    let path = Path::new(spec);
    let meta = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "no such file or directory; SPEC is a line ({}), `system`, an install directory or a tarball",
                line_names()
            )
        } else {
            format!("cannot read {spec}: {e}")
        }
    })?;
    if meta.is_dir() {
        return Ok(Spec::Path(path.to_path_buf()));
    }
    let name = path.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    if TARBALL_ENDINGS.iter().any(|end| name.ends_with(end)) {
        Ok(Spec::Tarball(path.to_path_buf()))
    } else {
        Err(format!("{spec} is not a tarball (expected a .tar.gz, .tgz or .tar.xz file) nor an install directory"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_lines_and_point_versions() {
        assert_eq!(parse("mariadb-11.8"), Ok(Spec::Line(&LINES[2], None)));
        assert_eq!(parse("mariadb-10.11.18"), Ok(Spec::Line(&LINES[1], Some(Version::new(10, 11, 18)))));
        assert_eq!(parse("mysql-9.7"), Ok(Spec::Line(&LINES[3], None)));
        assert_eq!(parse("system"), Ok(Spec::Path("/usr".into())));
        assert_eq!(parse("/usr"), Ok(Spec::Path("/usr".into())));
    }

    #[test]
    fn unknown_lines_name_the_known_ones() {
        let e = parse("mariadb-12.9").unwrap_err();
        assert!(
            e.starts_with(
                "unknown line mariadb-12.9; known lines: mariadb-10.5, mariadb-10.11, mariadb-11.8, mysql-9.7"
            ),
            "{e}"
        );
        assert!(parse("mysql-8.0.36").unwrap_err().contains("unknown line mysql-8.0"));
    }

    #[test]
    fn files_must_be_tarballs() {
        let t = tempfile::tempdir().unwrap();
        let txt = t.path().join("notes.txt");
        std::fs::write(&txt, "x").unwrap();
        assert!(parse(txt.to_str().unwrap()).unwrap_err().contains("is not a tarball"));
        let tgz = t.path().join("mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz");
        std::fs::write(&tgz, "x").unwrap();
        assert_eq!(parse(tgz.to_str().unwrap()), Ok(Spec::Tarball(tgz)));
        assert!(parse("/no/such/thing").unwrap_err().contains("no such file or directory"));
    }
}
