//! The versus home: where builds, sandboxes, snapshots and caches live on disk.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::server::build::Build;

/// Environment variable that overrides the home directory.
pub const HOME_ENV: &str = "VERSUS_HOME";

/// The directories versus keeps in the home.
const ENTRIES: [&str; 9] =
    ["builds", "sandboxes", "snapshots", "experiments", "cache", "explain", "advise", "calibrate", "quickstart"];

/// The directory tree versus keeps its state in (default `~/.local/share/versus`).
#[derive(Debug, Clone)]
pub struct Home {
    root: PathBuf,
}

impl Home {
    /// The home at `root`, created on first use.
    pub fn at(root: impl Into<PathBuf>) -> Self {
        Home { root: root.into() }
    }

    /// The home chosen by `--home`, else `$VERSUS_HOME`, else the user's data directory.
    pub fn resolve(flag: Option<&Path>) -> Self {
        if let Some(p) = flag {
            return Home::at(p);
        }
        if let Some(p) = std::env::var_os(HOME_ENV).filter(|v| !v.is_empty()) {
            return Home::at(PathBuf::from(p));
        }
        let base = dirs::data_dir().unwrap_or_else(|| std::env::temp_dir().join("versus-data"));
        Home::at(base.join("versus"))
    }

    /// Refuses a home that cannot be one: an existing path that is not a directory (or a directory
    /// below a file). `what` names where the path came from (`--home`, `VERSUS_HOME`).
    pub fn check(&self, what: &str) -> Result<()> {
        let existing = self.root.ancestors().find(|p| p.exists());
        match existing {
            Some(p) if !p.is_dir() => Err(Error::option(
                what,
                format!(
                    "{} is not a directory ({} is a file); point {what} at a directory, or leave it unset for the \
                     default",
                    self.root.display(),
                    p.display()
                ),
            )),
            _ => self.check_links(what),
        }
    }

    /// The home itself may be a symbolic link only to a directory versus made (one carrying its
    /// marker); its own entries (`sandboxes/`, `snapshots/`, `experiments/` …) may be links only into
    /// directories versus made. Anything else is refused before a command writes or deletes there.
    fn check_links(&self, what: &str) -> Result<()> {
        if let Ok(m) = std::fs::symlink_metadata(&self.root)
            && m.file_type().is_symlink()
        {
            let target = std::fs::canonicalize(&self.root).unwrap_or_else(|_| self.root.clone());
            if !crate::owned::has_own_marker(&target) {
                return Err(Error::option(
                    what,
                    format!(
                        "{} is a symbolic link to {}, which versus did not make; set {what} to {} itself to keep \
                         versus's data there, or leave it unset for the default",
                        self.root.display(),
                        target.display(),
                        target.display()
                    ),
                ));
            }
        }
        for entry in ENTRIES {
            let p = self.root.join(entry);
            if std::fs::symlink_metadata(&p).is_ok_and(|m| m.file_type().is_symlink()) {
                crate::owned::check_dir(&p)?;
            }
        }
        Ok(())
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Registered builds: `builds/NAME/build.json`, and for fetched builds the tree in `builds/NAME/tree`.
    pub fn builds_dir(&self) -> PathBuf {
        self.root.join("builds")
    }

    /// The directory of the build `name`.
    pub fn build_dir(&self, name: &str) -> PathBuf {
        self.builds_dir().join(name)
    }

    /// Sandboxes started by `versus server start`: `sandboxes/NAME/`.
    pub fn sandboxes_dir(&self) -> PathBuf {
        self.root.join("sandboxes")
    }

    /// Datadir snapshots: `snapshots/NAME/`.
    pub fn snapshots_dir(&self) -> PathBuf {
        self.root.join("snapshots")
    }

    /// Downloads and private apt state: `cache/`.
    pub fn cache_dir(&self) -> PathBuf {
        self.root.join("cache")
    }

    /// Every registered build, sorted by flavor, version and name.
    pub fn builds(&self) -> Result<Vec<Build>> {
        let dir = self.builds_dir();
        let mut out = Vec::new();
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(Error::file(&dir, e)),
        };
        for entry in entries.flatten() {
            let manifest = entry.path().join("build.json");
            if manifest.is_file() {
                out.push(read_manifest(&manifest)?);
            }
        }
        out.sort_by(|a, b| (a.flavor as u8, a.version, &a.name).cmp(&(b.flavor as u8, b.version, &b.name)));
        Ok(out)
    }

    /// The build called `name`, or an error that lists the known ones.
    pub fn build(&self, name: &str) -> Result<Build> {
        crate::owned::check_name("build", name)?;
        let manifest = self.build_dir(name).join("build.json");
        if manifest.is_file() {
            return read_manifest(&manifest);
        }
        let known: Vec<String> = self.builds()?.into_iter().map(|b| b.name).collect();
        let hint = if known.is_empty() {
            "no builds are registered yet; run `versus server fetch system` or `versus server fetch mariadb-11.8`"
                .to_string()
        } else {
            format!("known builds: {} (see `versus server list`)", known.join(", "))
        };
        Err(Error::UnknownBuild { name: name.to_string(), hint })
    }

    /// Writes (or replaces) the manifest of `build`.
    pub fn register(&self, build: &Build) -> Result<()> {
        let dir = self.build_dir(&build.name);
        crate::owned::create_dir_all(&dir)?;
        let path = dir.join("build.json");
        let text = serde_json::to_string_pretty(build).expect("a build serialises");
        crate::owned::write_file(&path, (text + "\n").as_bytes(), 0o644)
    }
}

fn read_manifest(path: &Path) -> Result<Build> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::file(path, e))?;
    serde_json::from_str(&text).map_err(|e| Error::file(path, format!("not a versus build manifest: {e}")))
}
