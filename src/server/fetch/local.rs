//! Registering an install that already exists (`system` = `/usr`, `/opt/mysql-8.0.36` …) where it is.

use std::path::Path;

use super::{FetchOptions, existing, fail, finish_layout, layout, respec, tree_size};
use crate::error::Result;
use crate::server::build::{Build, Layout, Source};
use crate::server::home::Home;

/// Directories shared with the rest of the system: their size is that of the server's own files.
const SHARED_PREFIXES: [&str; 3] = ["/", "/usr", "/usr/local"];

/// The disk usage of the server's files when the install lives in a shared prefix, else of the whole root.
fn install_size(root: &Path, layout: &Layout) -> u64 {
    if !SHARED_PREFIXES.iter().any(|p| root == Path::new(p)) {
        return tree_size(root);
    }
    let mut parts = vec![&layout.server, &layout.plugin_dir, &layout.messages_dir];
    parts.extend(layout.install_db.iter().chain(&layout.client).chain(&layout.admin));
    parts.into_iter().map(|p| tree_size(p)).sum()
}

/// See [`super::fetch`].
pub fn fetch(home: &Home, spec: &str, path: &Path, opts: &FetchOptions, log: &mut dyn FnMut(&str)) -> Result<Build> {
    let root = path.canonicalize().map_err(|e| fail(spec, format!("cannot read {}: {e}", path.display())))?;
    let layout = layout::detect_layout(&root).map_err(|e| {
        if spec == "system" {
            fail(spec, "no MariaDB or MySQL server in /usr (no sbin/mariadbd or sbin/mysqld); install mariadb-server")
        } else {
            respec(spec, e)
        }
    })?;
    let (flavor, version, version_string) = layout::probe(&layout).map_err(|e| respec(spec, e))?;
    let name = match &opts.name {
        Some(n) => n.clone(),
        None if root == Path::new("/usr") => "system".to_string(),
        None => format!("{flavor}-{version}"),
    };
    if !opts.force
        && let Some(build) = existing(home, &name)
    {
        log(&format!("{name} is already registered (use --force to register it again)"));
        return Ok(build);
    }
    let size_bytes = install_size(&root, &layout);
    let build = Build {
        name: name.clone(),
        flavor,
        version,
        version_string,
        root: root.clone(),
        layout: finish_layout(layout, flavor, version),
        source: Source::Path,
        size_bytes,
    };
    home.register(&build)?;
    log(&format!("registered {name}: {flavor} {version} at {} (not copied)", root.display()));
    Ok(build)
}
