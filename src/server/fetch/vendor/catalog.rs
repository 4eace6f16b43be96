//! The release catalog (`data/releases.toml`, plus what `server catalog update` stored in the versus
//! cache): which releases exist, the files the vendors publish for them, and how unlisted files are named.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Release;
use super::checksum::Checksum;
use crate::server::build::{Flavor, Version};

/// The catalog as compiled into versus.
const BUILTIN: &str = include_str!("../../../../data/releases.toml");

/// One published tarball.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// `mysql`, `mariadb` or `percona`.
    pub flavor: Flavor,
    /// The release (`8.0.36`; Percona `8.0.36-28`).
    pub version: String,
    /// The file name.
    pub file: String,
    /// The URL as the listing gives it.
    pub url: String,
    /// Size in bytes, when the listing gives it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<u64>,
    /// `ALGO:hex` as listed, or `vendor`: verify against the vendor's published checksum when fetched.
    pub checksum: String,
    /// A minimal tarball (no debug binaries, no test suite).
    #[serde(default)]
    pub minimal: bool,
    /// Where these facts come from.
    pub source: String,
}

impl Entry {
    /// The listed checksum, `None` when it is to be read from the vendor at fetch time.
    pub fn checksum(&self) -> Option<Checksum> {
        Checksum::parse(&self.checksum).ok()
    }
}

/// Which point releases of a series exist.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Series {
    /// The flavor.
    pub flavor: Flavor,
    /// `8.0`.
    pub series: String,
    /// Ranges of the last number: `11-28, 30-37` or `0`.
    pub patches: String,
    /// Releases withdrawn by the vendor.
    #[serde(default)]
    pub removed: Vec<u32>,
    /// Where these facts come from.
    pub source: String,
}

/// How files of a range of versions are named.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct Pattern {
    /// The flavor.
    pub flavor: Flavor,
    /// `8.0.35-8.4.10`, inclusive.
    pub versions: String,
    /// The glibc the build needs at least, when the name says.
    #[serde(default)]
    pub glibc: Option<String>,
    /// A minimal tarball.
    #[serde(default)]
    pub minimal: bool,
    /// The file name with `{v}` for the release; MariaDB's starts with the release directory.
    pub file: String,
}

#[derive(Debug, Deserialize)]
struct CatalogFile {
    #[serde(default)]
    release: Vec<Entry>,
    #[serde(default)]
    series: Vec<Series>,
    #[serde(default)]
    pattern: Vec<Pattern>,
}

/// What `server catalog update` learned, kept in the cache.
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct Learned {
    /// When it was written (seconds since the epoch).
    pub updated_at: u64,
    /// Tarballs with their listed facts.
    pub release: Vec<Entry>,
}

/// The releases versus knows about.
#[derive(Debug, Clone)]
pub struct Catalog {
    /// Published tarballs: the built-in ones, then learned ones.
    pub entries: Vec<Entry>,
    /// Existing point releases per series.
    pub series: Vec<Series>,
    /// File naming rules.
    pub patterns: Vec<Pattern>,
}

/// The file in the versus cache holding what `server catalog update` learned.
pub fn learned_path(cache: &Path) -> PathBuf {
    cache.join("catalog.json")
}

/// Parses `8.0.35` or `8.0.35-8.4.10` into an inclusive range.
fn version_range(text: &str) -> Option<(Version, Version)> {
    let one = |s: &str| {
        let n: Vec<u32> = s.trim().split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
        (n.len() == 3).then(|| Version::new(n[0], n[1], n[2]))
    };
    match text.split_once('-') {
        Some((a, b)) => Some((one(a)?, one(b)?)),
        None => one(text).map(|v| (v, v)),
    }
}

/// Parses `11-28, 30` into the numbers it covers.
fn patch_ranges(text: &str) -> Option<Vec<u32>> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (u32, u32) = (a.trim().parse().ok()?, b.trim().parse().ok()?);
                out.extend(a..=b);
            }
            None => out.push(part.parse().ok()?),
        }
    }
    Some(out)
}

impl Catalog {
    /// The catalog compiled into versus.
    pub fn builtin() -> Catalog {
        Catalog::parse(BUILTIN).expect("data/releases.toml is valid")
    }

    /// Parses a catalog file, checking every entry.
    pub fn parse(text: &str) -> Result<Catalog, String> {
        let file: CatalogFile = toml::from_str(text).map_err(|e| format!("not a release catalog: {e}"))?;
        for e in &file.release {
            if e.checksum != "vendor" {
                Checksum::parse(&e.checksum).map_err(|m| format!("{} {}: {m}", e.flavor, e.file))?;
            }
            Release::parse(e.flavor, &e.version).ok_or_else(|| format!("{}: bad version {}", e.file, e.version))?;
        }
        for s in &file.series {
            patch_ranges(&s.patches).ok_or_else(|| format!("{}-{}: bad patches {}", s.flavor, s.series, s.patches))?;
        }
        for p in &file.pattern {
            version_range(&p.versions).ok_or_else(|| format!("{}: bad versions {}", p.file, p.versions))?;
        }
        Ok(Catalog { entries: file.release, series: file.series, patterns: file.pattern })
    }

    /// The built-in catalog with what `server catalog update` stored in `cache` on top. A learned entry
    /// replaces a built-in one for the same file only when the built-in one has no checksum.
    pub fn load(cache: &Path) -> Result<Catalog, String> {
        let mut cat = Catalog::builtin();
        let path = learned_path(cache);
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(cat),
            Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
        };
        let learned: Learned = serde_json::from_str(&text).map_err(|e| {
            format!("{} is not a versus catalog ({e}); run `versus server catalog update`", path.display())
        })?;
        cat.merge(learned.release);
        Ok(cat)
    }

    /// Adds `entries`, keeping listed checksums: an entry for a file already known replaces it only when it
    /// brings a checksum or size the known one lacks.
    pub fn merge(&mut self, entries: Vec<Entry>) {
        for new in entries {
            match self.entries.iter_mut().find(|e| e.file == new.file && e.flavor == new.flavor) {
                Some(old) => {
                    if old.checksum().is_none() && new.checksum().is_some() {
                        old.checksum = new.checksum.clone();
                        old.source = new.source.clone();
                    }
                    if old.size.is_none() {
                        old.size = new.size;
                    }
                }
                None => self.entries.push(new),
            }
        }
    }

    /// The releases of `flavor` in the series `major.minor` the catalog knows, newest first.
    pub fn releases(&self, flavor: Flavor, major: u32, minor: u32) -> Vec<Release> {
        let mut set: BTreeSet<Release> = BTreeSet::new();
        for e in self.entries.iter().filter(|e| e.flavor == flavor) {
            if let Some(r) = Release::parse(flavor, &e.version).filter(|r| r.in_series(major, minor)) {
                set.insert(r);
            }
        }
        for s in self.series.iter().filter(|s| s.flavor == flavor && s.series == format!("{major}.{minor}")) {
            for p in patch_ranges(&s.patches).unwrap_or_default() {
                if !s.removed.contains(&p) {
                    set.insert(Release { flavor, version: Version::new(major, minor, p), build: None });
                }
            }
        }
        set.into_iter().rev().collect()
    }

    /// Every series of `flavor` the catalog knows (`8.0`, `8.4` …), oldest first.
    pub fn series_of(&self, flavor: Flavor) -> Vec<(u32, u32)> {
        let mut set = BTreeSet::new();
        for e in self.entries.iter().filter(|e| e.flavor == flavor) {
            if let Some(r) = Release::parse(flavor, &e.version) {
                set.insert((r.version.major, r.version.minor));
            }
        }
        for s in self.series.iter().filter(|s| s.flavor == flavor) {
            if let Some((a, b)) = s.series.split_once('.')
                && let (Ok(a), Ok(b)) = (a.parse(), b.parse())
            {
                set.insert((a, b));
            }
        }
        set.into_iter().collect()
    }

    /// True when the vendor withdrew `release`.
    pub fn is_removed(&self, release: &Release) -> bool {
        let v = release.version;
        self.series.iter().any(|s| {
            s.flavor == release.flavor && s.series == format!("{}.{}", v.major, v.minor) && s.removed.contains(&v.patch)
        })
    }

    /// The listed tarballs of `release`.
    pub fn entries_for(&self, release: &Release) -> Vec<&Entry> {
        self.entries
            .iter()
            .filter(|e| e.flavor == release.flavor && Release::parse(e.flavor, &e.version).as_ref() == Some(release))
            .collect()
    }

    /// The file names the patterns give for `release` (MariaDB's with their directory), with the glibc each
    /// needs and whether it is minimal.
    pub fn pattern_files(&self, release: &Release) -> Vec<(String, Option<Version>, bool)> {
        self.patterns
            .iter()
            .filter(|p| p.flavor == release.flavor)
            .filter(|p| version_range(&p.versions).is_some_and(|(a, b)| a <= release.version && release.version <= b))
            .map(|p| {
                let glibc = p.glibc.as_deref().and_then(Version::find_in);
                (p.file.replace("{v}", &release.label()), glibc, p.minimal)
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(flavor: Flavor, v: &str) -> Release {
        Release::parse(flavor, v).unwrap()
    }

    #[test]
    fn the_builtin_catalog_parses_and_lists_series_newest_first() {
        let c = Catalog::builtin();
        let v: Vec<String> = c.releases(Flavor::Mysql, 8, 0).iter().map(|r| r.label()).collect();
        assert_eq!(v.first().map(String::as_str), Some("8.0.44"));
        assert_eq!(v.last().map(String::as_str), Some("8.0.11"));
        assert!(!v.contains(&"8.0.29".to_string()) && !v.contains(&"8.0.38".to_string()), "withdrawn: {v:?}");
        assert!(c.is_removed(&r(Flavor::Mysql, "8.0.29")));
        let p: Vec<String> = c.releases(Flavor::Percona, 8, 0).iter().map(|r| r.label()).collect();
        assert_eq!(p, ["8.0.36-28"]);
        assert!(c.series_of(Flavor::Mysql).contains(&(8, 4)));
        assert!(c.series_of(Flavor::Mariadb).contains(&(10, 6)));
    }

    #[test]
    fn every_builtin_entry_is_checked_or_says_where_its_checksum_comes_from() {
        for e in Catalog::builtin().entries {
            assert!(e.checksum == "vendor" || e.checksum().is_some(), "{}", e.file);
            assert!(e.url.ends_with(&format!("/{}", e.file)), "{}", e.url);
            assert!(e.url.starts_with("https://"), "{}", e.url);
            assert!(!e.source.is_empty());
        }
    }

    #[test]
    fn learned_entries_fill_gaps_but_never_replace_listed_checksums() {
        let mut c = Catalog::builtin();
        let known = c.entries.iter().find(|e| e.version == "8.0.36" && !e.minimal).unwrap().clone();
        let mut forged = known.clone();
        forged.checksum = "MD5:00000000000000000000000000000000".into();
        let minimal = c.entries.iter().find(|e| e.version == "8.0.36" && e.minimal).unwrap().clone();
        let mut filled = minimal.clone();
        filled.checksum = "MD5:11111111111111111111111111111111".into();
        filled.size = Some(123);
        let mut new = known.clone();
        new.version = "8.0.45".into();
        new.file = "mysql-8.0.45-linux-glibc2.28-x86_64.tar.xz".into();
        c.merge(vec![forged, filled, new]);
        let get = |f: &str| c.entries.iter().find(|e| e.file == f).unwrap().clone();
        assert_eq!(get(&known.file).checksum, known.checksum);
        assert_eq!(get(&minimal.file).checksum, "MD5:11111111111111111111111111111111");
        assert_eq!(get(&minimal.file).size, Some(123));
        assert_eq!(c.releases(Flavor::Mysql, 8, 0)[0].label(), "8.0.45");
    }

    #[test]
    fn ranges_parse() {
        assert_eq!(patch_ranges("11-13, 15"), Some(vec![11, 12, 13, 15]));
        assert_eq!(patch_ranges("x"), None);
        assert_eq!(version_range("8.0.35-8.4.10"), Some((Version::new(8, 0, 35), Version::new(8, 4, 10))));
        assert_eq!(version_range("8.0"), None);
    }
}
