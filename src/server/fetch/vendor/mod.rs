//! Releases from the vendors' archives: Oracle MySQL, Percona Server and MariaDB generic Linux x86_64
//! tarballs, by version (`mysql-8.0.36`), newest of a series (`mysql-8.0`) or range (`mysql-8.0.30..8.0.36`).
//!
//! A release is resolved to candidate files (the catalog's listed ones first, then the file-name patterns,
//! best glibc not above the host's first), its checksum is taken from the catalog or read from the vendor
//! before the download starts, the file is downloaded into `cache/downloads/` (resumed when interrupted),
//! verified, unpacked into a staging directory, checked for shared libraries and probed, and only then
//! registered.

pub mod catalog;
pub mod checksum;
pub mod download;
pub mod libs;
mod listing;
pub mod sites;
pub mod unpack;
pub mod update;

use std::cmp::Ordering;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use self::catalog::Catalog;
use self::checksum::Checksum;
use self::download::{DownloadProgress, Http, HttpError, UNPACK_FACTOR, free_space, mb};
use self::sites::{ChecksumSource, Sites};
use super::{FetchOptions, Msg, Staging, existing, fail, finish_layout, layout, respec, tree_size};
use crate::error::Result;
use crate::server::build::{Build, Flavor, Source, Version};
use crate::server::home::Home;

pub use listing::{Offer, available};

/// Environment variable naming a mirror with the vendors' layout (as `--mirror`).
pub const MIRROR_ENV: &str = "VERSUS_MIRROR";

/// One release: flavor, version and, for Percona, its build number (`8.0.36-28`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Release {
    /// The flavor.
    pub flavor: Flavor,
    /// The server version.
    pub version: Version,
    /// Percona's release number after the dash.
    pub build: Option<u32>,
}

impl Release {
    /// Parses `8.0.36` or `8.0.36-28` for `flavor`.
    pub fn parse(flavor: Flavor, text: &str) -> Option<Release> {
        let (v, build) = match text.split_once('-') {
            Some((v, b)) => (v, Some(b.parse().ok()?)),
            None => (text, None),
        };
        let n: Vec<u32> = v.split('.').map(|p| p.parse().ok()).collect::<Option<_>>()?;
        (n.len() == 3).then(|| Release { flavor, version: Version::new(n[0], n[1], n[2]), build })
    }

    /// `8.0.36`, `8.0.36-28`.
    pub fn label(&self) -> String {
        match self.build {
            Some(b) => format!("{}-{b}", self.version),
            None => self.version.to_string(),
        }
    }

    /// True when the release belongs to the series `major.minor`.
    pub fn in_series(&self, major: u32, minor: u32) -> bool {
        self.version.major == major && self.version.minor == minor
    }
}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}-{}", self.flavor, self.label())
    }
}

impl PartialOrd for Release {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Release {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.flavor as u8, self.version, self.build).cmp(&(other.flavor as u8, other.version, other.build))
    }
}

/// What a vendor SPEC asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Want {
    /// One release (`mysql-8.0.36`, `percona-8.0.36-28`).
    One(Release),
    /// The newest release of a series (`mysql-8.0`).
    Newest(Flavor, u32, u32),
    /// Every known release from `from` to `to` inclusive; an open end stops at the end of `from`'s series.
    Range(Flavor, Release, Option<Release>),
}

/// Parses the part after the flavor: `8.0.36`, `8.0`, `8.0.36-28`, `8.0.30..8.0.36`, `5.7.40..`.
pub fn parse_want(flavor: Flavor, rest: &str) -> Msg<Want> {
    let bad = || format!("'{flavor}-{rest}' is not a release (8.0.36), a series (8.0) or a range (8.0.30..8.0.36)");
    if let Some((a, b)) = rest.split_once("..") {
        let from = Release::parse(flavor, a).ok_or_else(bad)?;
        let to = if b.is_empty() { None } else { Some(Release::parse(flavor, b).ok_or_else(bad)?) };
        if to.is_some_and(|t| t < from) {
            return Err(format!("the range {flavor}-{rest} ends before it starts"));
        }
        return Ok(Want::Range(flavor, from, to));
    }
    if let Some(r) = Release::parse(flavor, rest) {
        return Ok(Want::One(r));
    }
    let n: Vec<u32> = rest.split('.').map(|p| p.parse().ok()).collect::<Option<_>>().ok_or_else(bad)?;
    match n[..] {
        [major, minor] => Ok(Want::Newest(flavor, major, minor)),
        _ => Err(bad()),
    }
}

/// The host's glibc version (`getconf GNU_LIBC_VERSION`), 2.17 when it cannot be told.
pub fn host_glibc() -> Version {
    std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .ok()
        .and_then(|o| Version::find_in(&String::from_utf8_lossy(&o.stdout)))
        .unwrap_or(Version::new(2, 17, 0))
}

/// The glibc a file name says its build needs (`…-glibc2.28-…` → 2.28; MariaDB's `glibc_214` → 2.14).
fn glibc_in_name(file: &str) -> Option<Version> {
    let rest = &file[file.find("glibc")? + 5..];
    if let Some(digits) = rest.strip_prefix("_2") {
        let minor: String = digits.chars().take_while(char::is_ascii_digit).collect();
        return minor.parse().ok().map(|m| Version::new(2, m, 0));
    }
    Version::find_in(rest)
}

/// The releases of a flavor the catalog knows, nearest to `to` first, for "did you mean" messages.
pub fn nearest(cat: &Catalog, to: &Release, n: usize) -> Vec<String> {
    let mut all: Vec<Release> =
        cat.series_of(to.flavor).into_iter().flat_map(|(a, b)| cat.releases(to.flavor, a, b)).collect();
    let key = |r: &Release| {
        let v = r.version;
        let same = v.major == to.version.major && v.minor == to.version.minor;
        let series_gap =
            (v.major as i64 * 100 + v.minor as i64 - to.version.major as i64 * 100 - to.version.minor as i64).abs();
        (!same, series_gap, (v.patch as i64 - to.version.patch as i64).abs(), std::cmp::Reverse(*r))
    };
    all.sort_by_key(key);
    all.into_iter().take(n).map(|r| r.to_string()).collect()
}

/// The releases `want` names, each once, oldest first.
pub fn resolve(cat: &Catalog, want: &Want) -> Msg<Vec<Release>> {
    let known = |flavor: Flavor| -> Vec<String> {
        cat.series_of(flavor).iter().map(|(a, b)| format!("{flavor}-{a}.{b}")).collect()
    };
    match want {
        Want::One(r) => {
            if cat.is_removed(r) {
                return Err(format!("{r} was withdrawn by the vendor; nearest: {}", nearest(cat, r, 4).join(", ")));
            }
            if r.flavor == Flavor::Percona && r.build.is_none() {
                let builds: Vec<String> = cat
                    .releases(r.flavor, r.version.major, r.version.minor)
                    .into_iter()
                    .filter(|k| k.version == r.version)
                    .map(|k| k.to_string())
                    .collect();
                let hint = if builds.is_empty() {
                    format!("known: {}", nearest(cat, r, 6).join(", "))
                } else {
                    builds.join(", ")
                };
                return Err(format!("Percona releases are named with their build number ({r}-N); {hint}"));
            }
            let listed =
                !cat.entries_for(r).is_empty() || cat.releases(r.flavor, r.version.major, r.version.minor).contains(r);
            if !listed && cat.pattern_files(r).is_empty() {
                return Err(format!("unknown release {r}; nearest known: {}", nearest(cat, r, 6).join(", ")));
            }
            Ok(vec![*r])
        }
        Want::Newest(flavor, major, minor) => match cat.releases(*flavor, *major, *minor).first() {
            Some(r) => Ok(vec![*r]),
            None => Err(format!(
                "no {flavor}-{major}.{minor} releases in the catalog; known series: {} (`versus server catalog update` refreshes it)",
                known(*flavor).join(", ")
            )),
        },
        Want::Range(flavor, from, to) => {
            let mut out: Vec<Release> = cat
                .series_of(*flavor)
                .into_iter()
                .flat_map(|(a, b)| cat.releases(*flavor, a, b))
                .filter(|r| *r >= *from)
                .filter(|r| match to {
                    Some(t) => r <= t,
                    None => r.in_series(from.version.major, from.version.minor),
                })
                .collect();
            out.sort();
            out.dedup();
            if out.is_empty() {
                return Err(format!(
                    "no known {flavor} releases in that range; nearest: {}",
                    nearest(cat, from, 6).join(", ")
                ));
            }
            Ok(out)
        }
    }
}

/// A file that may hold a release, with what is known about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReleaseFile {
    /// File name.
    pub file: String,
    /// URLs to try in order.
    pub urls: Vec<String>,
    /// Size when listed.
    pub size: Option<u64>,
    /// Checksum when listed.
    pub checksum: Option<Checksum>,
    /// True for a catalog entry, false for a file name built by pattern.
    pub listed: bool,
}

/// The files that may hold `release` on a host with `glibc`, best first: listed files (known to exist)
/// before names built by pattern, then full before minimal tarballs (the reverse with `minimal`), then the
/// higher glibc.
pub fn candidates(cat: &Catalog, sites: &Sites, release: &Release, glibc: Version, minimal: bool) -> Vec<ReleaseFile> {
    let fits = |file: &str| glibc_in_name(file).is_none_or(|g| g <= glibc);
    let mut rows: Vec<(bool, bool, Option<Version>, ReleaseFile)> = Vec::new();
    for e in cat.entries_for(release) {
        if !fits(&e.file) {
            continue;
        }
        let dir = e.url.rsplit('/').nth(1).map(str::to_string);
        let urls = sites.file_urls(release, dir.as_deref(), &e.file, Some(&e.url));
        let c = ReleaseFile { file: e.file.clone(), urls, size: e.size, checksum: e.checksum(), listed: true };
        rows.push((true, e.minimal, glibc_in_name(&e.file), c));
    }
    for (path, g, is_min) in cat.pattern_files(release) {
        let (dir, file) = match path.rsplit_once('/') {
            Some((d, f)) => (Some(d.to_string()), f.to_string()),
            None => (None, path.clone()),
        };
        if g.is_some_and(|g| g > glibc) || rows.iter().any(|(_, _, _, c)| c.file == file) {
            continue;
        }
        let urls = sites.file_urls(release, dir.as_deref(), &file, None);
        rows.push((false, is_min, g, ReleaseFile { file, urls, size: None, checksum: None, listed: false }));
    }
    rows.sort_by(|a, b| {
        let pref = |r: &(bool, bool, Option<Version>, ReleaseFile)| (!r.0, r.1 != minimal, std::cmp::Reverse(r.2));
        pref(a).cmp(&pref(b))
    });
    rows.into_iter().map(|r| r.3).collect()
}

/// The download cache: `cache/downloads/FILE`, `FILE.part` while downloading, `FILE.verified` once checked.
pub fn cache_dir(home: &Home) -> PathBuf {
    home.cache_dir().join("downloads")
}

fn verified_record(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.verified", path.display()))
}

fn part_path(path: &Path) -> PathBuf {
    PathBuf::from(format!("{}.part", path.display()))
}

/// The cached, verified copy of `file`, with its checksum, if there is one that still matches.
pub fn cached(home: &Home, file: &str) -> Option<(PathBuf, Checksum, String)> {
    let path = cache_dir(home).join(file);
    let record = std::fs::read_to_string(verified_record(&path)).ok()?;
    let mut lines = record.lines();
    let sum = Checksum::parse(lines.next()?).ok()?;
    let url = lines.next().unwrap_or("").to_string();
    path.is_file().then_some((path, sum, url))
}

/// Reads the vendor's checksum of `file` (downloaded from `url`).
fn vendor_checksum(http: &Http, sites: &Sites, release: &Release, url: &str, file: &str) -> Msg<Checksum> {
    let mut tried = Vec::new();
    for source in sites.checksum_sources(release, url, file) {
        let (text, where_) = match &source {
            ChecksumSource::Sums { url, .. } | ChecksumSource::MysqlPage { url } => (http.get_text(url), url.clone()),
        };
        let text = match text {
            Ok(t) => t,
            Err(HttpError::NotFound(_)) => {
                tried.push(where_);
                continue;
            }
            Err(e) => return Err(format!("reading the checksum: {e}")),
        };
        let found = match &source {
            ChecksumSource::Sums { algo, .. } => checksum::find_in_sums(&text, *algo, file),
            ChecksumSource::MysqlPage { .. } => checksum::find_on_mysql_page(&text, file),
        };
        match found {
            Some(c) => return Ok(c),
            None => tried.push(where_),
        }
    }
    Err(format!(
        "no checksum for {file} is published at {}; pass --checksum ALGO:HEX from a source you trust",
        tried.join(", ")
    ))
}

/// Fetches every release `want` names; see [`fetch_release`].
pub fn fetch(
    home: &Home,
    spec: &str,
    want: &Want,
    opts: &FetchOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<Build>> {
    let err = |m: String| fail(spec, m);
    let cat = Catalog::load(&home.cache_dir()).map_err(err)?;
    let releases = resolve(&cat, want).map_err(err)?;
    if releases.len() > 1 && (opts.name.is_some() || opts.checksum.is_some()) {
        return Err(err(format!(
            "{spec} names {} releases; --name and --checksum apply to one release only",
            releases.len()
        )));
    }
    let mut builds = Vec::new();
    for (i, r) in releases.iter().enumerate() {
        if releases.len() > 1 {
            log(&format!("[{}/{}] {r}", i + 1, releases.len()));
        }
        builds.push(fetch_release(home, spec, &cat, r, opts, log)?);
    }
    Ok(builds)
}

/// The sites to use: `--mirror`, else `VERSUS_MIRROR`, else the vendors'.
pub fn sites_for(opts: &FetchOptions) -> Msg<Sites> {
    let env = std::env::var(MIRROR_ENV).ok().filter(|v| !v.trim().is_empty());
    match opts.mirror.clone().or(env) {
        Some(m) => Sites::mirror(&m).map_err(|e| format!("--mirror: {e}")),
        None => Ok(Sites::official()),
    }
}

/// Downloads (or takes from the cache), verifies, unpacks, checks and registers one release.
pub fn fetch_release(
    home: &Home,
    spec: &str,
    cat: &Catalog,
    release: &Release,
    opts: &FetchOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Build> {
    let started = Instant::now();
    let err = |m: String| fail(spec, m);
    let name = opts.name.clone().unwrap_or_else(|| release.to_string());
    if !opts.force
        && let Some(build) = existing(home, &name)
    {
        log(&format!("{name} is already fetched (use --force to fetch it again)"));
        return Ok(build);
    }
    let given =
        opts.checksum.as_deref().map(Checksum::parse).transpose().map_err(|m| err(format!("--checksum: {m}")))?;
    let sites = sites_for(opts).map_err(err)?;
    let all = candidates(cat, &sites, release, host_glibc(), opts.minimal);
    if all.is_empty() {
        return Err(err(format!(
            "no Linux x86_64 tarball of {release} is known for this host's glibc {}",
            host_glibc()
        )));
    }
    let (path, sum, url) = match all.iter().find_map(|c| cached(home, &c.file)) {
        Some(hit) => {
            log(&format!("{}: in the download cache", hit.0.display()));
            hit
        }
        None if opts.offline => {
            return Err(err(format!(
                "{release} is not in the download cache ({}); run without --offline to download it",
                cache_dir(home).display()
            )));
        }
        None => download_release(home, &sites, release, &all, given.as_ref(), log).map_err(err)?,
    };
    // Verified again when taken from the cache: the file may have changed since.
    match sum.verify(&path) {
        Ok(Ok(())) => {}
        Ok(Err(got)) => {
            let _ = crate::owned::remove_file(&path);
            let _ = crate::owned::remove_file(&verified_record(&path));
            return Err(err(format!(
                "checksum mismatch for {}: expected {sum}, got {}:{got}; the file was removed, fetch again",
                file_name(&path),
                sum.algo
            )));
        }
        Err(e) => return Err(err(format!("cannot read {}: {e}", path.display()))),
    }
    install(home, spec, release, &name, &path, &url, &sum, started, log)
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}

/// Finds the first candidate the sites have, reads its checksum and downloads it into the cache.
fn download_release(
    home: &Home,
    sites: &Sites,
    release: &Release,
    all: &[ReleaseFile],
    given: Option<&Checksum>,
    log: &mut dyn FnMut(&str),
) -> Msg<(PathBuf, Checksum, String)> {
    let http = Http::new();
    let dir = cache_dir(home);
    crate::owned::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let mut missing = Vec::new();
    for c in all {
        unpack::check_platform_name(&c.file)?;
        for url in &c.urls {
            let path = dir.join(&c.file);
            let part = part_path(&path);
            // The checksum is known before the first byte of the tarball is read.
            let sum = match (given, &c.checksum) {
                (Some(g), _) => g.clone(),
                (None, Some(s)) => s.clone(),
                (None, None) => match vendor_checksum(&http, sites, release, url, &c.file) {
                    Ok(s) => s,
                    // Pattern names the vendor does not list are simply not there.
                    Err(_) if !c.listed && !part.exists() && probe_missing(&http, url) => {
                        missing.push(url.clone());
                        continue;
                    }
                    Err(m) => return Err(m),
                },
            };
            log(&format!("downloading {url} (checksum {sum})"));
            let builds = home.builds_dir();
            let room = |total: u64, remaining: u64| room_for(&dir, &builds, total, remaining);
            let mut progress = DownloadProgress::new(&c.file, log);
            match http.download(url, &part, &room, &mut progress) {
                Ok(size) => {
                    drop(progress);
                    if let Some(listed) = c.size.filter(|s| *s != size) {
                        let _ = crate::owned::remove_file(&part);
                        return Err(format!(
                            "{} is {size} bytes, the catalog lists {listed}; the download was removed",
                            c.file
                        ));
                    }
                    match sum.verify(&part).map_err(|e| format!("cannot read {}: {e}", part.display()))? {
                        Ok(()) => {}
                        Err(got) => {
                            let _ = crate::owned::remove_file(&part);
                            return Err(format!(
                                "checksum mismatch for {}: expected {sum}, got {}:{got}; the download was removed",
                                c.file, sum.algo
                            ));
                        }
                    }
                    std::fs::rename(&part, &path).map_err(|e| format!("cannot move {}: {e}", part.display()))?;
                    let record = verified_record(&path);
                    std::fs::write(&record, format!("{sum}\n{url}\n"))
                        .map_err(|e| format!("cannot write {}: {e}", record.display()))?;
                    return Ok((path, sum, url.clone()));
                }
                Err(HttpError::NotFound(u)) => {
                    if std::fs::metadata(&part).is_ok_and(|m| m.len() == 0) {
                        let _ = crate::owned::remove_file(&part);
                    }
                    missing.push(u);
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    }
    Err(format!("{release} is not on the vendor's site (not found: {})", missing.join(", ")))
}

/// True when `url` answers 404 (a file name built by pattern that does not exist).
fn probe_missing(http: &Http, url: &str) -> bool {
    matches!(http.head(url), Err(HttpError::NotFound(_)))
}

/// Checks that the download (`remaining` of `total` bytes still to come) and the unpacked tree fit.
fn room_for(downloads: &Path, builds: &Path, total: u64, remaining: u64) -> Msg<()> {
    let unpacked = total * UNPACK_FACTOR;
    let same = free_space(downloads) == free_space(builds);
    let checks: Vec<(&Path, u64)> =
        if same { vec![(downloads, remaining + unpacked)] } else { vec![(downloads, remaining), (builds, unpacked)] };
    for (dir, need) in checks {
        if let Some(free) = free_space(dir)
            && free < need
        {
            return Err(format!(
                "not enough disk space in {}: {} needed ({} to download, about {} unpacked), {} free",
                dir.display(),
                mb(need),
                mb(remaining),
                mb(unpacked),
                mb(free)
            ));
        }
    }
    Ok(())
}

/// Unpacks the verified tarball into staging, checks it and registers it as `name`.
#[allow(clippy::too_many_arguments)]
fn install(
    home: &Home,
    spec: &str,
    release: &Release,
    name: &str,
    tarball: &Path,
    url: &str,
    sum: &Checksum,
    started: Instant,
    log: &mut dyn FnMut(&str),
) -> Result<Build> {
    let err = |m: String| fail(spec, m);
    let staging = Staging::new(home, name).map_err(err)?;
    log(&format!("unpacking {}", file_name(tarball)));
    unpack::unpack(tarball, &staging.tree()).map_err(err)?;
    let staged = layout::detect_layout(&staging.tree()).map_err(|_| {
        err(format!("{} holds no MySQL or MariaDB server; removed what was unpacked", file_name(tarball)))
    })?;
    unpack::check_machine(&staged.server).map_err(err)?;
    let committed = staging.commit(home, name).map_err(err)?;
    let tree = home.build_dir(name).join("tree");
    let layout = layout::detect_layout(&tree).map_err(|e| respec(spec, e))?;
    let linked = libs::check(&layout.server, &libs::private_dir(&layout.server)).map_err(err)?;
    if !linked.is_empty() {
        log(&format!("linked {} from the host's renamed libraries into lib/private", linked.join(", ")));
    }
    let (flavor, version, version_string) = layout::probe(&layout).map_err(|e| respec(spec, e))?;
    let expected = release.flavor;
    let flavor_ok = flavor == expected || (expected == Flavor::Percona && flavor == Flavor::Mysql);
    if !flavor_ok || version != release.version {
        return Err(err(format!("the unpacked server says it is {flavor} {version_string}, expected {release}")));
    }
    let build = Build {
        name: name.to_string(),
        flavor: expected,
        version,
        version_string,
        root: tree.clone(),
        layout: finish_layout(layout, expected, version),
        source: Source::Vendor { url: url.to_string(), file: tarball.to_path_buf(), checksum: sum.to_string() },
        size_bytes: tree_size(&tree),
    };
    committed.register(home, build, started, log)
}

#[cfg(test)]
mod tests;
