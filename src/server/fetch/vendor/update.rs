//! `versus server catalog update`: refresh the catalog from the vendors' own listings — MariaDB's downloads
//! REST API (every release of a series with its files' checksums) and Oracle's archive pages (the
//! releases of a series, and the MD5 of every file of a release). What is learned goes to
//! `cache/catalog.json`; listed facts in `data/releases.toml` are never replaced.

use std::time::{SystemTime, UNIX_EPOCH};

use serde_json::Value;

use super::catalog::{Catalog, Entry, Learned, learned_path};
use super::checksum::{Algo, Checksum};
use super::download::Http;
use super::sites::Sites;
use super::{Release, Want};
use crate::server::build::{Flavor, Version};

/// Where MariaDB's archive keeps a release's bintars (the URL recorded in the catalog).
const MARIADB_ARCHIVE: &str = "https://archive.mariadb.org";
/// Oracle's archive download URL (the URL recorded in the catalog).
const MYSQL_ARCHIVE: &str = "https://downloads.mysql.com/archives/get/p/23/file";

/// What an update found for one series.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeriesUpdate {
    /// `mariadb-10.6`.
    pub series: String,
    /// Releases seen in the listing.
    pub releases: usize,
    /// Entries with a checksum learned.
    pub entries: usize,
}

fn today() -> String {
    let days = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() / 86400).unwrap_or(0) as i64;
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!("{y:04}-{m:02}-{d:02}")
}

/// The Linux x86_64 bintars of a MariaDB REST API answer for a series (`/rest-api/mariadb/10.6/`), with the
/// strongest checksum each lists.
pub fn parse_mariadb_series(json: &Value, source: &str) -> Result<(usize, Vec<Entry>), String> {
    let releases = json.get("releases").and_then(Value::as_object).ok_or("the answer has no `releases` object")?;
    let mut out = Vec::new();
    for (version, rel) in releases {
        let Some(r) = Release::parse(Flavor::Mariadb, version) else { continue };
        let files = rel.get("files").and_then(Value::as_array).cloned().unwrap_or_default();
        for f in files {
            let s = |k: &str| f.get(k).and_then(Value::as_str).unwrap_or("");
            let name = s("file_name");
            let is_bintar = s("os") == "Linux"
                && s("cpu") == "x86_64"
                && (name.ends_with(".tar.gz") || name.ends_with(".tar.xz"))
                && name.starts_with(&format!("mariadb-{version}-linux"))
                && !name.contains("debug");
            if !is_bintar {
                continue;
            }
            let sums = f.get("checksum").cloned().unwrap_or(Value::Null);
            let checksum = [
                ("sha512sum", Algo::Sha512),
                ("sha256sum", Algo::Sha256),
                ("sha1sum", Algo::Sha1),
                ("md5sum", Algo::Md5),
            ]
            .iter()
            .find_map(|(k, algo)| sums.get(*k).and_then(Value::as_str).and_then(|h| Checksum::new(*algo, h).ok()));
            let dir = if name.contains("-systemd-") { "bintar-linux-systemd-x86_64" } else { "bintar-linux-x86_64" };
            out.push(Entry {
                flavor: Flavor::Mariadb,
                version: r.label(),
                file: name.to_string(),
                url: format!("{MARIADB_ARCHIVE}/mariadb-{version}/{dir}/{name}"),
                size: None,
                checksum: checksum.map(|c| c.to_string()).unwrap_or_else(|| "vendor".into()),
                minimal: false,
                source: source.to_string(),
            });
        }
    }
    Ok((releases.len(), out))
}

/// The versions of series `major.minor` in the version selector of an Oracle archive page
/// (`<option value="8.0.36">`).
pub fn parse_mysql_versions(html: &str, major: u32, minor: u32) -> Vec<Version> {
    let mut out: Vec<Version> = html
        .split("<option")
        .skip(1)
        .filter_map(|o| {
            let v = o.split("value=\"").nth(1)?.split('"').next()?;
            let r = Release::parse(Flavor::Mysql, v)?;
            r.in_series(major, minor).then_some(r.version)
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The generic Linux x86_64 server tarballs on an Oracle release page with their MD5 (test suites and
/// `.tar` bundles skipped).
pub fn parse_mysql_files(html: &str, version: Version, source: &str) -> Vec<Entry> {
    let mut out = Vec::new();
    let prefix = format!("(mysql-{version}");
    let mut rest = html;
    while let Some(at) = rest.find(&prefix) {
        rest = &rest[at + 1..];
        let Some(end) = rest.find(')') else { break };
        let file = &rest[..end];
        let wanted = file.contains("linux")
            && file.contains("x86_64")
            && (file.ends_with(".tar.gz") || file.ends_with(".tar.xz"))
            && !file.starts_with("mysql-test");
        if !wanted || out.iter().any(|e: &Entry| e.file == file) {
            continue;
        }
        if let Some(sum) = super::checksum::find_on_mysql_page(html, file) {
            out.push(Entry {
                flavor: Flavor::Mysql,
                version: version.to_string(),
                file: file.to_string(),
                url: format!("{MYSQL_ARCHIVE}/{file}"),
                size: None,
                checksum: sum.to_string(),
                minimal: file.contains("minimal"),
                source: source.to_string(),
            });
        }
    }
    out
}

/// Refreshes the series `wants` name (all MySQL and MariaDB series the catalog knows when empty) and
/// stores what was learned. Progress lines go to `log`.
pub fn update(
    cache: &std::path::Path,
    sites: &Sites,
    wants: &[Want],
    log: &mut dyn FnMut(&str),
) -> Result<Vec<SeriesUpdate>, String> {
    let cat = Catalog::load(cache)?;
    let mut series: Vec<(Flavor, u32, u32)> = wants
        .iter()
        .map(|w| match w {
            Want::Newest(f, a, b) => (*f, *a, *b),
            Want::One(r) | Want::Range(_, r, _) => (r.flavor, r.version.major, r.version.minor),
        })
        .collect();
    if series.is_empty() {
        for f in [Flavor::Mysql, Flavor::Mariadb] {
            series.extend(cat.series_of(f).into_iter().map(|(a, b)| (f, a, b)));
        }
    }
    let http = Http::new();
    let source = |what: &str| format!("{what} ({})", today());
    let mut learned = Vec::new();
    let mut report = Vec::new();
    for (flavor, major, minor) in series {
        let name = format!("{flavor}-{major}.{minor}");
        match flavor {
            Flavor::Mariadb => {
                let url = sites.mariadb_series_api(major, minor);
                let text = http.get_text(&url).map_err(|e| format!("{name}: {e}"))?;
                let json: Value = serde_json::from_str(&text).map_err(|e| format!("{name}: {url} is not JSON: {e}"))?;
                let (n, entries) = parse_mariadb_series(&json, &source("MariaDB downloads REST API"))
                    .map_err(|m| format!("{name}: {url}: {m}"))?;
                log(&format!("{name}: {n} releases, {} bintars", entries.len()));
                report.push(SeriesUpdate { series: name, releases: n, entries: entries.len() });
                learned.extend(entries);
            }
            Flavor::Mysql => {
                let known = cat.releases(flavor, major, minor);
                let probe = known.first().copied().unwrap_or(Release {
                    flavor,
                    version: Version::new(major, minor, 0),
                    build: None,
                });
                let page = http.get_text(&sites.mysql_release_page(&probe)).map_err(|e| format!("{name}: {e}"))?;
                let mut versions = parse_mysql_versions(&page, major, minor);
                versions.extend(known.iter().map(|r| r.version));
                versions.sort();
                versions.dedup();
                let mut entries = Vec::new();
                for v in &versions {
                    let r = Release { flavor, version: *v, build: None };
                    let listed = cat.entries_for(&r).iter().any(|e| e.checksum().is_some() && !e.minimal);
                    if listed {
                        continue;
                    }
                    let text = if *v == probe.version {
                        page.clone()
                    } else {
                        match http.get_text(&sites.mysql_release_page(&r)) {
                            Ok(t) => t,
                            Err(e) => {
                                log(&format!("{r}: {e}"));
                                continue;
                            }
                        }
                    };
                    entries.extend(parse_mysql_files(&text, *v, &source("Oracle archive page")));
                }
                log(&format!("{name}: {} releases, {} tarballs with an MD5", versions.len(), entries.len()));
                report.push(SeriesUpdate { series: name, releases: versions.len(), entries: entries.len() });
                learned.extend(entries);
            }
            Flavor::Percona => {
                return Err(format!(
                    "{name}: Percona publishes no release listing versus can read; fetch percona-X.Y.Z-N by name (its .sha256sum is read then)"
                ));
            }
        }
    }
    store(cache, learned)?;
    Ok(report)
}

/// Adds `entries` to `cache/catalog.json` (newer facts for the same file replace older learned ones).
fn store(cache: &std::path::Path, entries: Vec<Entry>) -> Result<(), String> {
    let path = learned_path(cache);
    let mut old: Learned = match std::fs::read_to_string(&path) {
        Ok(t) => serde_json::from_str(&t).unwrap_or_default(),
        Err(_) => Learned::default(),
    };
    for e in entries {
        old.release.retain(|o| !(o.flavor == e.flavor && o.file == e.file));
        old.release.push(e);
    }
    old.updated_at = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    crate::owned::create_dir_all(cache).map_err(|e| e.to_string())?;
    let tmp = path.with_extension("json.tmp");
    let text = serde_json::to_string_pretty(&old).expect("catalog serialises");
    std::fs::write(&tmp, text + "\n").map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &path).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_mariadb_rest_api() {
        let json: Value = serde_json::from_str(r#"{"releases": {
            "10.6.21": {"release_id": "10.6.21", "files": [
                {"file_name": "mariadb-10.6.21-linux-systemd-x86_64.tar.gz", "package_type": "gzipped tar file",
                 "os": "Linux", "cpu": "x86_64",
                 "checksum": {"md5sum": "0123456789abcdef0123456789abcdef", "sha1sum": null,
                              "sha256sum": "7c0ab150f8ea4114f6a488e03b73fbb7a9ee1d973749f7f567028e42535564fd", "sha512sum": ""}},
                {"file_name": "mariadb-10.6.21-winx64.msi", "os": "Windows", "cpu": "x86_64", "checksum": {}},
                {"file_name": "mariadb-10.6.21.tar.gz", "os": "Source", "cpu": null, "checksum": {}},
                {"file_name": "yum/", "package_type": null, "os": null, "cpu": null}
            ]},
            "10.6.20": {"release_id": "10.6.20", "files": []}
        }}"#).unwrap();
        let (n, e) = parse_mariadb_series(&json, "api").unwrap();
        assert_eq!((n, e.len()), (2, 1));
        assert_eq!(e[0].file, "mariadb-10.6.21-linux-systemd-x86_64.tar.gz");
        assert_eq!(
            e[0].url,
            "https://archive.mariadb.org/mariadb-10.6.21/bintar-linux-systemd-x86_64/mariadb-10.6.21-linux-systemd-x86_64.tar.gz"
        );
        assert_eq!(e[0].checksum, "SHA256:7c0ab150f8ea4114f6a488e03b73fbb7a9ee1d973749f7f567028e42535564fd");
        assert!(parse_mariadb_series(&serde_json::json!({"x": 1}), "api").is_err());
    }

    #[test]
    fn reads_oracle_archive_pages() {
        let html = r#"<select id="version"><option value="8.0.37">8.0.37</option><option value="8.0.36" selected>8.0.36</option>
            <option value="5.7.44">5.7.44</option></select>
            <td>(mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz)</td><td>MD5: <code class="md5">597a7520a80323b7d1819f0bad678324</code></td>
            <td>(mysql-8.0.36-linux-glibc2.28-aarch64.tar.xz)</td><td>MD5: <code class="md5">11111111111111111111111111111111</code></td>
            <td>(mysql-test-8.0.36-linux-glibc2.28-x86_64.tar.xz)</td><td>MD5: <code class="md5">22222222222222222222222222222222</code></td>
            <td>(mysql-8.0.36-linux-glibc2.17-x86_64-minimal.tar.xz)</td><td>MD5: <code class="md5">33333333333333333333333333333333</code></td>"#;
        assert_eq!(parse_mysql_versions(html, 8, 0), [Version::new(8, 0, 36), Version::new(8, 0, 37)]);
        let e = parse_mysql_files(html, Version::new(8, 0, 36), "page");
        let files: Vec<&str> = e.iter().map(|e| e.file.as_str()).collect();
        assert_eq!(
            files,
            ["mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz", "mysql-8.0.36-linux-glibc2.17-x86_64-minimal.tar.xz"]
        );
        assert_eq!(e[0].checksum, "MD5:597a7520a80323b7d1819f0bad678324");
        assert_eq!(
            e[0].url,
            "https://downloads.mysql.com/archives/get/p/23/file/mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz"
        );
        assert!(e[1].minimal);
    }

    #[test]
    fn dates_are_civil() {
        let d = today();
        assert_eq!(d.len(), 10);
        assert!(d.starts_with("20"), "{d}");
    }
}
