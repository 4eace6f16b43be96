//! Where the vendors keep their tarballs and checksums, or an internal mirror laid out like them.
//!
//! A mirror (`--mirror URL`, `VERSUS_MIRROR`) has the vendors' paths under one root:
//! - MySQL as on Oracle's CDN: `Downloads/MySQL-8.0/<file>` (current releases), `archives/mysql-8.0/<file>`
//!   (all releases), and the archive page `archives/community/?tpl=version&os=2&version=8.0.36` with the MD5s;
//! - MariaDB as on archive.mariadb.org: `mariadb-10.6.21/bintar-linux-systemd-x86_64/<file>` with the
//!   directory's `sha256sums.txt` (or md5/sha1/sha512), and the REST API under `rest-api/mariadb/`;
//! - Percona as on downloads.percona.com: `downloads/Percona-Server-8.0/Percona-Server-8.0.36-28/binary/tarball/<file>`
//!   with `<file>.sha256sum` beside it.

use super::Release;
use super::checksum::Algo;
use crate::server::build::Flavor;

/// Oracle's URL for current releases (redirects to the CDN).
const MYSQL_DOWNLOADS: &str = "https://dev.mysql.com/get/Downloads";
/// Oracle's URL for every release (product 23 is MySQL Community Server).
const MYSQL_ARCHIVE: &str = "https://downloads.mysql.com/archives/get/p/23/file";
/// Oracle's archive page, which lists the files of one release with their MD5.
const MYSQL_ARCHIVE_PAGE: &str = "https://downloads.mysql.com/archives/community/";
/// MariaDB's archive of every release.
const MARIADB_ARCHIVE: &str = "https://archive.mariadb.org";
/// MariaDB's downloads REST API.
const MARIADB_API: &str = "https://downloads.mariadb.org/rest-api/mariadb";
/// Percona's downloads.
const PERCONA_DOWNLOADS: &str = "https://downloads.percona.com/downloads";

/// How to reach a checksum that the catalog does not list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChecksumSource {
    /// A coreutils sum file listing the file (MariaDB's `sha256sums.txt`, Percona's sidecar).
    Sums { url: String, algo: Algo },
    /// Oracle's release page with an MD5 per file.
    MysqlPage { url: String },
}

/// The vendors' sites, or a mirror of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sites {
    mirror: Option<String>,
}

impl Sites {
    /// The vendors' own sites.
    pub fn official() -> Sites {
        Sites { mirror: None }
    }

    /// A mirror with the vendors' layout at `root` (`http://mirror.example/vendors`).
    pub fn mirror(root: &str) -> Result<Sites, String> {
        let root = root.trim().trim_end_matches('/');
        if !(root.starts_with("http://") || root.starts_with("https://")) || root.len() <= "https://".len() {
            return Err(format!("'{root}' is not an http:// or https:// URL"));
        }
        Ok(Sites { mirror: Some(root.to_string()) })
    }

    /// The mirror's root, if one is used.
    pub fn mirror_root(&self) -> Option<&str> {
        self.mirror.as_deref()
    }

    /// The URLs to try for `file` of `release`, in order. `listed` is the catalog's URL (the vendors' own
    /// sites only); `dir` is MariaDB's release directory (`bintar-linux-systemd-x86_64`).
    pub fn file_urls(&self, release: &Release, dir: Option<&str>, file: &str, listed: Option<&str>) -> Vec<String> {
        let v = release.version;
        let series = format!("{}.{}", v.major, v.minor);
        let mut urls: Vec<String> = match (&self.mirror, release.flavor) {
            (Some(m), Flavor::Mysql) => {
                vec![format!("{m}/Downloads/MySQL-{series}/{file}"), format!("{m}/archives/mysql-{series}/{file}")]
            }
            (None, Flavor::Mysql) => listed
                .into_iter()
                .map(String::from)
                .chain([format!("{MYSQL_DOWNLOADS}/MySQL-{series}/{file}"), format!("{MYSQL_ARCHIVE}/{file}")])
                .collect(),
            (m, Flavor::Mariadb) => {
                let root = m.as_deref().unwrap_or(MARIADB_ARCHIVE);
                let dir = dir.unwrap_or("bintar-linux-systemd-x86_64");
                vec![format!("{root}/mariadb-{}/{dir}/{file}", release.label())]
            }
            (m, Flavor::Percona) => {
                let root = m.as_ref().map(|m| format!("{m}/downloads")).unwrap_or_else(|| PERCONA_DOWNLOADS.into());
                vec![format!(
                    "{root}/{}/Percona-Server-{}/binary/tarball/{file}",
                    percona_series_dir(release),
                    release.label()
                )]
            }
        };
        let mut seen = std::collections::HashSet::new();
        urls.retain(|u| seen.insert(u.clone()));
        urls
    }

    /// Where the vendor publishes the checksum of `file`, downloaded from `url`, most trusted first.
    pub fn checksum_sources(&self, release: &Release, url: &str, file: &str) -> Vec<ChecksumSource> {
        let dir_of = |u: &str| u.rsplit_once('/').map(|(d, _)| d.to_string()).unwrap_or_default();
        match release.flavor {
            Flavor::Mysql => {
                let query = format!("?tpl=version&os=2&version={}", release.label());
                let page = match &self.mirror {
                    Some(m) => format!("{m}/archives/community/{query}"),
                    None => format!("{MYSQL_ARCHIVE_PAGE}{query}"),
                };
                vec![ChecksumSource::MysqlPage { url: page }]
            }
            Flavor::Mariadb => [Algo::Sha512, Algo::Sha256, Algo::Sha1, Algo::Md5]
                .into_iter()
                .map(|algo| ChecksumSource::Sums { url: format!("{}/{}", dir_of(url), algo.sums_file()), algo })
                .collect(),
            Flavor::Percona => {
                let _ = file;
                vec![ChecksumSource::Sums { url: format!("{url}.sha256sum"), algo: Algo::Sha256 }]
            }
        }
    }

    /// The MariaDB REST API URL listing the releases of a series (`…/rest-api/mariadb/10.6/`).
    pub fn mariadb_series_api(&self, major: u32, minor: u32) -> String {
        match &self.mirror {
            Some(m) => format!("{m}/rest-api/mariadb/{major}.{minor}/"),
            None => format!("{MARIADB_API}/{major}.{minor}/"),
        }
    }

    /// The Oracle archive page of one MySQL release (lists its files with their MD5).
    pub fn mysql_release_page(&self, release: &Release) -> String {
        match self.checksum_sources(release, "", "").into_iter().next() {
            Some(ChecksumSource::MysqlPage { url }) => url,
            _ => unreachable!("MySQL checksums come from the release page"),
        }
    }
}

/// Percona's directory for a series: `Percona-Server-8.0`; the 8.1–8.3 innovation releases share one.
fn percona_series_dir(release: &Release) -> String {
    let v = release.version;
    if v.major == 8 && (1..=3).contains(&v.minor) {
        "Percona-Server-innovative-release".to_string()
    } else {
        format!("Percona-Server-{}.{}", v.major, v.minor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(flavor: Flavor, v: &str) -> Release {
        Release::parse(flavor, v).unwrap()
    }

    #[test]
    fn mysql_urls_try_the_downloads_then_the_archive() {
        let s = Sites::official();
        let file = "mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz";
        assert_eq!(
            s.file_urls(&r(Flavor::Mysql, "8.0.36"), None, file, None),
            [
                "https://dev.mysql.com/get/Downloads/MySQL-8.0/mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz",
                "https://downloads.mysql.com/archives/get/p/23/file/mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz",
            ]
        );
        let listed = "https://downloads.mysql.com/archives/get/p/23/file/mysql-5.7.44-linux-glibc2.12-x86_64.tar.gz";
        let urls =
            s.file_urls(&r(Flavor::Mysql, "5.7.44"), None, "mysql-5.7.44-linux-glibc2.12-x86_64.tar.gz", Some(listed));
        assert_eq!(
            urls,
            [listed, "https://dev.mysql.com/get/Downloads/MySQL-5.7/mysql-5.7.44-linux-glibc2.12-x86_64.tar.gz"]
        );
        assert_eq!(
            s.mysql_release_page(&r(Flavor::Mysql, "8.0.36")),
            "https://downloads.mysql.com/archives/community/?tpl=version&os=2&version=8.0.36"
        );
    }

    #[test]
    fn mariadb_and_percona_urls() {
        let s = Sites::official();
        let m = r(Flavor::Mariadb, "10.6.21");
        let urls =
            s.file_urls(&m, Some("bintar-linux-systemd-x86_64"), "mariadb-10.6.21-linux-systemd-x86_64.tar.gz", None);
        assert_eq!(
            urls,
            [
                "https://archive.mariadb.org/mariadb-10.6.21/bintar-linux-systemd-x86_64/mariadb-10.6.21-linux-systemd-x86_64.tar.gz"
            ]
        );
        let sums = s.checksum_sources(&m, &urls[0], "");
        assert_eq!(
            sums[1],
            ChecksumSource::Sums {
                url: "https://archive.mariadb.org/mariadb-10.6.21/bintar-linux-systemd-x86_64/sha256sums.txt".into(),
                algo: Algo::Sha256
            }
        );
        let p = r(Flavor::Percona, "8.0.36-28");
        let file = "Percona-Server-8.0.36-28-Linux.x86_64.glibc2.17-minimal.tar.gz";
        let urls = s.file_urls(&p, None, file, None);
        assert_eq!(
            urls,
            [
                "https://downloads.percona.com/downloads/Percona-Server-8.0/Percona-Server-8.0.36-28/binary/tarball/Percona-Server-8.0.36-28-Linux.x86_64.glibc2.17-minimal.tar.gz"
            ]
        );
        assert_eq!(
            s.checksum_sources(&p, &urls[0], file),
            [ChecksumSource::Sums { url: format!("{}.sha256sum", urls[0]), algo: Algo::Sha256 }]
        );
        assert_eq!(s.mariadb_series_api(10, 6), "https://downloads.mariadb.org/rest-api/mariadb/10.6/");
    }

    #[test]
    fn mirrors_have_the_vendors_layout() {
        let s = Sites::mirror("http://127.0.0.1:8080/m/").unwrap();
        let urls = s.file_urls(&r(Flavor::Mysql, "9.7.4"), None, "f.tar.xz", Some("https://dev.mysql.com/x/f.tar.xz"));
        assert_eq!(
            urls,
            [
                "http://127.0.0.1:8080/m/Downloads/MySQL-9.7/f.tar.xz",
                "http://127.0.0.1:8080/m/archives/mysql-9.7/f.tar.xz"
            ]
        );
        assert_eq!(
            s.file_urls(&r(Flavor::Mariadb, "11.8.3"), None, "x.tar.gz", None),
            ["http://127.0.0.1:8080/m/mariadb-11.8.3/bintar-linux-systemd-x86_64/x.tar.gz"]
        );
        assert_eq!(
            s.file_urls(&r(Flavor::Percona, "8.3.0-1"), None, "p.tar.gz", None),
            [
                "http://127.0.0.1:8080/m/downloads/Percona-Server-innovative-release/Percona-Server-8.3.0-1/binary/tarball/p.tar.gz"
            ]
        );
        assert!(Sites::mirror("ftp://x").is_err());
        assert!(Sites::mirror("/srv/mirror").unwrap_err().contains("not an http"));
    }
}
