//! Obtaining server builds: distribution packages, existing installs, binary tarballs.
//! (Interim: only `system`; the providers are being written on the `fetch` branch.)

use std::path::PathBuf;

use crate::error::{Error, Result};
use crate::server::build::{Build, Flavor, Layout, Source, Version};
use crate::server::home::Home;

/// Options of `versus server fetch`.
#[derive(Debug, Clone, Default)]
pub struct FetchOptions {
    /// Register under this name instead of the derived one.
    pub name: Option<String>,
    /// Fetch again even if the name is registered.
    pub force: bool,
}

/// Obtains the build described by `spec` and registers it in `home`.
pub fn fetch(home: &Home, spec: &str, opts: &FetchOptions, _log: &mut dyn FnMut(&str)) -> Result<Build> {
    if spec != "system" {
        return Err(Error::Fetch { spec: spec.into(), message: "not supported yet".into() });
    }
    let usr = PathBuf::from("/usr");
    let out = std::process::Command::new("/usr/sbin/mariadbd")
        .args(["--no-defaults", "--version"])
        .output()
        .map_err(|e| Error::Fetch { spec: spec.into(), message: e.to_string() })?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let version = Version::find_in(text.split("Ver").nth(1).unwrap_or(&text))
        .ok_or_else(|| Error::Fetch { spec: spec.into(), message: "no version".into() })?;
    let build = Build {
        name: opts.name.clone().unwrap_or_else(|| "system".into()),
        flavor: Flavor::Mariadb,
        version,
        version_string: version.to_string(),
        root: usr.clone(),
        layout: Layout {
            basedir: usr.clone(),
            server: usr.join("sbin/mariadbd"),
            install_db: Some(usr.join("bin/mariadb-install-db")),
            client: Some(usr.join("bin/mariadb")),
            admin: Some(usr.join("bin/mariadb-admin")),
            plugin_dir: usr.join("lib/mysql/plugin"),
            messages_dir: usr.join("share/mysql"),
        },
        source: Source::Path,
        size_bytes: 0,
    };
    home.register(&build)?;
    Ok(build)
}

/// Point versions of a version line that can be fetched now.
pub fn available(_home: &Home, line: &str) -> Result<Vec<String>> {
    Err(Error::Fetch { spec: line.into(), message: "not supported yet".into() })
}
