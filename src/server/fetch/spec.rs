//! What `versus server fetch SPEC` may be asked for: a distribution line (`mariadb-11.8`), a point version of
//! one (`mariadb-10.11.18`), `system`, a directory, or a tarball file.

use std::path::{Path, PathBuf};

use super::vendor;
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
    /// Releases from the vendors' archives.
    Vendor(vendor::Want),
}

/// File name endings `tar` can unpack and official tarballs use.
pub const TARBALL_ENDINGS: &[&str] = &[".tar.gz", ".tgz", ".tar.xz", ".txz", ".tar.zst", ".tar.bz2", ".tar"];

/// Splits `mysql-8.0.36` into the flavor and the rest.
fn flavor_and_rest(spec: &str) -> Option<(Flavor, &str)> {
    let (flavor, rest) = spec.split_once('-')?;
    let flavor = match flavor {
        "mariadb" => Flavor::Mariadb,
        "mysql" => Flavor::Mysql,
        "percona" => Flavor::Percona,
        _ => return None,
    };
    rest.starts_with(|c: char| c.is_ascii_digit()).then_some((flavor, rest))
}

/// The Debian line (and point version) `FLAVOR-X.Y[.Z]` names, if it is one.
fn debian_line(flavor: Flavor, rest: &str) -> Option<(&'static Line, Option<Version>)> {
    let nums: Vec<u32> = rest.split('.').map(|n| n.parse().ok()).collect::<Option<_>>()?;
    if !(2..=3).contains(&nums.len()) {
        return None;
    }
    let line = LINES.iter().find(|l| l.flavor == flavor && l.major == nums[0] && l.minor == nums[1])?;
    Some((line, nums.get(2).map(|&p| Version::new(nums[0], nums[1], p))))
}

/// Parses SPEC. Line names win over same-named files in the current directory; write `./mariadb-11.8` for
/// those. `FLAVOR-VERSION` is a Debian line when Debian ships that series (`mariadb-11.8`, `mysql-9.7`),
/// otherwise a vendor release; `debian:` and `vendor:` say which explicitly.
pub fn parse(spec: &str) -> Result<Spec, String> {
    if spec == "system" {
        return Ok(Spec::Path(PathBuf::from("/usr")));
    }
    if let Some(rest) = spec.strip_prefix("debian:") {
        let (flavor, r) =
            flavor_and_rest(rest).ok_or_else(|| format!("debian:{rest}: expected a line ({})", line_names()))?;
        let (line, point) = debian_line(flavor, r)
            .ok_or_else(|| format!("unknown line {rest}; Debian ships these lines: {}", line_names()))?;
        return Ok(Spec::Line(line, point));
    }
    if let Some(rest) = spec.strip_prefix("vendor:") {
        let (flavor, r) = flavor_and_rest(rest).ok_or_else(|| {
            format!("vendor:{rest}: expected FLAVOR-VERSION (mysql-8.0.36, percona-8.0.36-28, mariadb-10.6.21)")
        })?;
        return Ok(Spec::Vendor(vendor::parse_want(flavor, r)?));
    }
    if let Some((flavor, rest)) = flavor_and_rest(spec) {
        if let Some((line, point)) = debian_line(flavor, rest) {
            return Ok(Spec::Line(line, point));
        }
        return Ok(Spec::Vendor(vendor::parse_want(flavor, rest)?));
    }
    let path = Path::new(spec);
    let meta = std::fs::metadata(path).map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            format!(
                "no such file or directory; SPEC is a release (mysql-8.0.36, mariadb-10.6, percona-8.0.36-28), a Debian \
                 line ({}), `system`, an install directory or a tarball",
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
    fn other_versions_are_vendor_releases() {
        use vendor::{Release, Want};
        let r = |f, v| Release::parse(f, v).unwrap();
        assert_eq!(parse("mysql-8.0.36"), Ok(Spec::Vendor(Want::One(r(Flavor::Mysql, "8.0.36")))));
        assert_eq!(parse("mysql-8.0"), Ok(Spec::Vendor(Want::Newest(Flavor::Mysql, 8, 0))));
        assert_eq!(parse("percona-8.0.36-28"), Ok(Spec::Vendor(Want::One(r(Flavor::Percona, "8.0.36-28")))));
        assert_eq!(
            parse("mysql-8.0.30..8.0.36"),
            Ok(Spec::Vendor(Want::Range(Flavor::Mysql, r(Flavor::Mysql, "8.0.30"), Some(r(Flavor::Mysql, "8.0.36")))))
        );
        assert_eq!(
            parse("mysql-5.7.40.."),
            Ok(Spec::Vendor(Want::Range(Flavor::Mysql, r(Flavor::Mysql, "5.7.40"), None)))
        );
        assert_eq!(parse("vendor:mysql-9.7"), Ok(Spec::Vendor(Want::Newest(Flavor::Mysql, 9, 7))));
        assert_eq!(parse("debian:mysql-9.7"), Ok(Spec::Line(&LINES[3], None)));
        assert!(
            parse("debian:mysql-8.0").unwrap_err().starts_with("unknown line mysql-8.0; Debian ships these lines: ")
        );
        assert!(parse("mysql-8.0.36..8.0.30").unwrap_err().contains("ends before it starts"));
        assert!(parse("mysql-8.x").unwrap_err().contains("is not a release"));
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
