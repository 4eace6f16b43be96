//! Obtaining server builds: distribution packages, existing installs, binary tarballs.
//!
//! `versus server fetch SPEC` ends in [`fetch`], which registers a runnable build in the versus home:
//! - a line (`mariadb-10.5`, `mariadb-10.11`, `mariadb-11.8`, `mysql-9.7`) or one of its point versions
//!   (`mariadb-10.11.18`) is downloaded from the Debian archive with a private apt state and extracted into
//!   `builds/NAME/tree`, with a private runtime when it was built for another Debian release;
//! - `system` or a directory is registered where it is;
//! - a tarball file is unpacked into `builds/NAME/tree`.
//!
//! Work happens in a hidden staging directory that is renamed into place, and `build.json` is written last,
//! so a failed fetch leaves nothing registered.

mod apt;
mod broken;
mod debian;
mod debver;
mod layout;
mod local;
mod runtime;
mod sources;
mod spec;
mod tarball;
pub mod vendor;

use std::collections::HashSet;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::server::build::{Build, Flavor, Layout, Version};
use crate::server::home::Home;

pub use layout::{detect_layout, parse_version_output, probe};

/// Internal result whose error is a message; turned into [`Error::Fetch`] with the SPEC at the boundary.
type Msg<T> = std::result::Result<T, String>;

/// Options of `versus server fetch`.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Register under this name instead of the default (`mariadb-11.8.9`, `system` …).
    pub name: Option<String>,
    /// Fetch again even if a build of that name is registered, replacing it.
    pub force: bool,
    /// A mirror with the vendors' layout (`--mirror`); `VERSUS_MIRROR` when `None`.
    pub mirror: Option<String>,
    /// Use only the download cache (`--offline`).
    pub offline: bool,
    /// Prefer minimal tarballs (no debug binaries, no test suite) where the vendor has them.
    pub minimal: bool,
    /// The checksum to verify a vendor download against (`ALGO:hex`), when the vendor publishes none.
    pub checksum: Option<String>,
}

/// Obtains the server build described by `spec` and registers it in `home`. Progress lines go to `log`.
///
/// Without `opts.force`, a build already registered under the resulting name is returned as it is.
pub fn fetch(home: &Home, spec: &str, opts: &FetchOptions, log: &mut dyn FnMut(&str)) -> Result<Build> {
    let mut builds = fetch_all(home, spec, opts, log)?;
    match builds.len() {
        1 => Ok(builds.remove(0)),
        n => Err(fail(spec, format!("names {n} releases; fetch them with `versus server fetch {spec}`"))),
    }
}

/// Like [`fetch`], for SPECs that may name several releases (`mysql-8.0.30..8.0.36`): each is fetched once
/// and registered under its own name. The builds fetched before a failure stay registered.
pub fn fetch_all(home: &Home, spec: &str, opts: &FetchOptions, log: &mut dyn FnMut(&str)) -> Result<Vec<Build>> {
    if let Some(name) = &opts.name {
        check_name(name).map_err(|m| fail(spec, m))?;
    }
    let parsed = spec::parse(spec).map_err(|m| fail(spec, m))?;
    if !matches!(parsed, spec::Spec::Vendor(_)) {
        let flag = [(opts.mirror.is_some(), "--mirror"), (opts.offline, "--offline"), (opts.minimal, "--minimal")]
            .into_iter()
            .chain([(opts.checksum.is_some(), "--checksum")])
            .find(|(set, _)| *set);
        if let Some((_, flag)) = flag {
            return Err(fail(spec, format!("{flag} applies to vendor releases (mysql-8.0.36 …), not to this SPEC")));
        }
    }
    match parsed {
        spec::Spec::Line(line, point) => debian::fetch(home, spec, line, point, opts, log).map(|b| vec![b]),
        spec::Spec::Path(path) => local::fetch(home, spec, &path, opts, log).map(|b| vec![b]),
        spec::Spec::Tarball(file) => tarball::fetch(home, spec, &file, opts, log).map(|b| vec![b]),
        spec::Spec::Vendor(want) => vendor::fetch(home, spec, &want, opts, log),
    }
}

/// The point versions of `line` (`mariadb-10.11`) the Debian archive offers now, oldest first, each
/// with its fetchable SPEC (`mariadb-10.11.18`) as `release`, in the columns of
/// [`available_releases`]. Refreshes the private apt lists.
pub fn available(home: &Home, line: &str) -> Result<Vec<vendor::Offer>> {
    match spec::parse(line) {
        Ok(spec::Spec::Line(l, None)) => debian::available(home, line, l),
        Ok(_) => Err(fail(line, format!("not a version line; known lines: {}", spec::line_names()))),
        Err(m) => Err(fail(line, m)),
    }
}

/// True when `spec` names vendor releases (`mysql-8.0`, `vendor:mariadb-11.8`), not a Debian line.
pub fn is_vendor_spec(spec: &str) -> bool {
    matches!(spec::parse(spec), Ok(spec::Spec::Vendor(_)))
}

/// The vendor releases a series or range SPEC covers, newest first, with what is known of each.
pub fn available_releases(home: &Home, spec: &str, opts: &FetchOptions) -> Result<Vec<vendor::Offer>> {
    match spec::parse(spec) {
        Ok(spec::Spec::Vendor(want)) => vendor::available(home, spec, &want, opts),
        Ok(_) => Err(fail(spec, "not a vendor series (mysql-8.0, percona-8.0, mariadb-10.6 …)")),
        Err(m) => Err(fail(spec, m)),
    }
}

/// Refreshes the catalog of the vendor series named in `series` (all known MySQL and MariaDB series when
/// empty) from the vendors' listings, through `opts.mirror` or `VERSUS_MIRROR` when set.
pub fn update_catalog(
    home: &Home,
    series: &[String],
    opts: &FetchOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Vec<vendor::update::SeriesUpdate>> {
    let mut wants = Vec::new();
    for s in series {
        let bare = s.strip_prefix("vendor:").unwrap_or(s);
        match spec::parse(&format!("vendor:{bare}")) {
            Ok(spec::Spec::Vendor(w)) => wants.push(w),
            Ok(_) => unreachable!("vendor: SPECs are vendor releases"),
            Err(m) => return Err(fail(s, m)),
        }
    }
    let sites = vendor::sites_for(opts).map_err(|m| fail("catalog update", m))?;
    vendor::update::update(&home.cache_dir(), &sites, &wants, log).map_err(|m| fail("catalog update", m))
}

/// Where `server catalog update` keeps what it learned.
pub fn learned_catalog(home: &Home) -> PathBuf {
    vendor::catalog::learned_path(&home.cache_dir())
}

/// The version lines that can be fetched from distribution packages (`mariadb-10.5` …).
pub fn lines() -> Vec<String> {
    spec::LINES.iter().map(spec::Line::name).collect()
}

fn fail(spec: &str, message: impl Into<String>) -> Error {
    Error::Fetch { spec: spec.to_string(), message: message.into() }
}

/// Puts `spec` into a fetch error raised deeper down (layout detection, probing).
fn respec(spec: &str, e: Error) -> Error {
    match e {
        Error::Fetch { message, .. } => fail(spec, message),
        other => other,
    }
}

/// Build names become directory names: keep them to a safe alphabet.
fn check_name(name: &str) -> Msg<()> {
    crate::owned::check_name("--name", name).map_err(|e| e.to_string())
}

/// The registered build `name`, if there is one.
fn existing(home: &Home, name: &str) -> Option<Build> {
    home.build_dir(name).join("build.json").is_file().then(|| home.build(name).ok()).flatten()
}

/// MySQL 5.7.6+ is initialised by the server itself; a `mysql_install_db` left in such a tree must not be
/// used. MariaDB and MySQL 5.5/5.6 keep their install script.
fn finish_layout(mut layout: Layout, flavor: Flavor, version: Version) -> Layout {
    if !crate::server::flavor::uses_install_script(flavor, version) {
        layout.install_db = None;
    }
    layout
}

/// Disk usage of the tree at `path` like `du -s`: allocated blocks, symlinks not followed, hard links once.
pub fn tree_size(path: &Path) -> u64 {
    let mut seen = HashSet::new();
    let mut total = 0;
    let mut stack = vec![path.to_path_buf()];
    while let Some(p) = stack.pop() {
        let Ok(meta) = std::fs::symlink_metadata(&p) else { continue };
        if meta.nlink() > 1 && !meta.is_dir() && !seen.insert((meta.dev(), meta.ino())) {
            continue;
        }
        total += meta.blocks() * 512;
        if meta.is_dir()
            && let Ok(entries) = std::fs::read_dir(&p)
        {
            stack.extend(entries.flatten().map(|e| e.path()));
        }
    }
    total
}

/// A hidden directory under `builds/` where a fetch assembles its tree; removed on drop unless committed.
struct Staging {
    dir: PathBuf,
}

impl Staging {
    fn new(home: &Home, label: &str) -> Msg<Staging> {
        let builds = home.builds_dir();
        sweep(&builds);
        let dir = builds.join(format!(".partial-{label}-{}", std::process::id()));
        crate::owned::remove(&dir).map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
        crate::owned::create_dir_all(&dir.join("tree")).map_err(|e| e.to_string())?;
        Ok(Staging { dir })
    }

    fn tree(&self) -> PathBuf {
        self.dir.join("tree")
    }

    /// Moves the staged directory to `builds/NAME`, setting a previous one aside until [`Committed::finish`].
    fn commit(self, home: &Home, name: &str) -> Msg<Committed> {
        let target = home.build_dir(name);
        let aside = home.builds_dir().join(format!(".old-{name}-{}", std::process::id()));
        let old = if target.exists() {
            std::fs::rename(&target, &aside).map_err(|e| format!("cannot move {} aside: {e}", target.display()))?;
            // The registered build versus made, under its new name.
            if aside.join("build.json").is_file() {
                crate::owned::mark(&aside).map_err(|e| e.to_string())?;
            }
            Some(aside)
        } else {
            None
        };
        if let Err(e) = std::fs::rename(&self.dir, &target) {
            if let Some(old) = &old {
                let _ = std::fs::rename(old, &target);
            }
            return Err(format!("cannot move {} to {}: {e}", self.dir.display(), target.display()));
        }
        crate::owned::mark(&target).map_err(|e| e.to_string())?;
        Ok(Committed { target, old, done: false })
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        let _ = crate::owned::remove(&self.dir);
    }
}

/// A staged tree moved into place but not yet registered; dropping it without [`Committed::finish`] removes it
/// and puts back the build it replaced.
struct Committed {
    target: PathBuf,
    old: Option<PathBuf>,
    done: bool,
}

impl Committed {
    /// Registers `build` (whose tree this commit moved into place), keeps the tree and logs how big it
    /// is and how long the fetch took.
    fn register(
        self,
        home: &Home,
        build: Build,
        started: std::time::Instant,
        log: &mut dyn FnMut(&str),
    ) -> Result<Build> {
        home.register(&build)?;
        self.finish();
        log(&format!(
            "registered {} ({} MB) in {:.1} s",
            build.name,
            build.size_bytes / 1_000_000,
            started.elapsed().as_secs_f64()
        ));
        Ok(build)
    }

    fn finish(mut self) {
        self.done = true;
        if let Some(old) = &self.old {
            let _ = crate::owned::remove(old);
        }
    }
}

impl Drop for Committed {
    fn drop(&mut self) {
        if !self.done {
            let _ = crate::owned::remove(&self.target);
            if let Some(old) = &self.old {
                let _ = std::fs::rename(old, &self.target);
            }
        }
    }
}

/// Removes staging directories of fetches that died, and puts back builds they had set aside.
fn sweep(builds: &Path) {
    let Ok(entries) = std::fs::read_dir(builds) else { return };
    for entry in entries.flatten() {
        let file = entry.file_name().to_string_lossy().into_owned();
        let Some((stem, pid)) = file.rsplit_once('-') else { continue };
        let alive = pid.parse::<u32>().is_ok_and(|p| Path::new(&format!("/proc/{p}")).exists());
        if alive {
            continue;
        }
        if file.starts_with(".partial-") {
            let _ = crate::owned::remove(&entry.path());
        } else if let Some(name) = stem.strip_prefix(".old-") {
            let target = builds.join(name);
            if target.join("build.json").is_file() {
                let _ = crate::owned::remove(&entry.path());
            } else {
                let _ = crate::owned::remove(&target);
                let _ = std::fs::rename(entry.path(), &target);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked() {
        assert!(check_name("mariadb-11.8.9").is_ok());
        assert!(check_name("my_build.2").is_ok());
        for bad in ["", ".hidden", "a/b", "x y", "../up"] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn size_counts_hard_links_once_and_not_symlink_targets() {
        let t = tempfile::tempdir().unwrap();
        let big = t.path().join("big");
        std::fs::write(&big, vec![7u8; 1 << 20]).unwrap();
        let one = tree_size(t.path());
        assert!(one >= 1 << 20, "{one}");
        std::fs::hard_link(&big, t.path().join("link")).unwrap();
        std::os::unix::fs::symlink("/usr", t.path().join("usr")).unwrap();
        let two = tree_size(t.path());
        assert!(two - one < 64 * 1024, "hard link or symlink target counted: {one} → {two}");
    }

    #[test]
    fn failed_commits_restore_the_previous_build() {
        let t = tempfile::tempdir().unwrap();
        let home = Home::at(t.path());
        std::fs::create_dir_all(home.build_dir("b")).unwrap();
        std::fs::write(home.build_dir("b").join("build.json"), "old").unwrap();
        let s = Staging::new(&home, "b").unwrap();
        std::fs::write(s.tree().join("new"), "").unwrap();
        let c = s.commit(&home, "b").unwrap();
        assert!(home.build_dir("b").join("tree/new").exists());
        drop(c);
        assert_eq!(std::fs::read_to_string(home.build_dir("b").join("build.json")).unwrap(), "old");
        assert!(!home.build_dir("b").join("tree/new").exists());
        let leftovers: Vec<_> =
            std::fs::read_dir(home.builds_dir()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(leftovers, ["b"]);
    }
}
