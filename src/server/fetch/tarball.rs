//! Unpacking an official binary tarball (MySQL `mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz`, a MariaDB bintar)
//! into the versus home.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use super::{FetchOptions, Staging, existing, fail, finish_layout, layout, respec, tree_size};
use crate::error::Result;
use crate::server::build::{Build, Source};
use crate::server::home::Home;

/// See [`super::fetch`].
pub fn fetch(home: &Home, spec: &str, file: &Path, opts: &FetchOptions, log: &mut dyn FnMut(&str)) -> Result<Build> {
    let started = Instant::now();
    let err = |m: String| fail(spec, m);
    let file = file.canonicalize().map_err(|e| err(format!("cannot read {}: {e}", file.display())))?;
    let stem = file.file_name().map(|n| n.to_string_lossy().split('.').next().unwrap_or("tarball").to_string());
    let staging = Staging::new(home, &stem.unwrap_or_default()).map_err(err)?;
    log(&format!("unpacking {}", file.display()));
    let out = Command::new("tar")
        .arg("-xf")
        .arg(&file)
        .arg("-C")
        .arg(staging.tree())
        .arg("--no-same-owner")
        .output()
        .map_err(|e| err(format!("cannot run tar: {e}")))?;
    if !out.status.success() {
        let why = super::broken::diagnose(&file, false)
            .unwrap_or_else(|| tar_reason(&String::from_utf8_lossy(&out.stderr), out.status));
        return Err(err(format!("{} is not a readable tarball: {why}", file.display())));
    }
    // Probed where it was unpacked: tarball binaries are not patched, so they run from anywhere.
    let staged = layout::detect_layout(&staging.tree()).map_err(|_| {
        err(format!(
            "{} holds no MySQL or MariaDB server (no bin/mysqld or bin/mariadbd); removed what was unpacked",
            file.display()
        ))
    })?;
    let (flavor, version, version_string) = layout::probe(&staged).map_err(|e| respec(spec, e))?;
    let name = opts.name.clone().unwrap_or_else(|| format!("{flavor}-{version}"));
    if !opts.force
        && let Some(build) = existing(home, &name)
    {
        log(&format!("{name} is already registered (use --force to unpack it again)"));
        return Ok(build);
    }
    let committed = staging.commit(home, &name).map_err(err)?;
    let tree = home.build_dir(&name).join("tree");
    let layout = layout::detect_layout(&tree).map_err(|e| respec(spec, e))?;
    let build = Build {
        name: name.clone(),
        flavor,
        version,
        version_string,
        root: tree.clone(),
        layout: finish_layout(layout, flavor, version),
        source: Source::Tarball { file },
        size_bytes: tree_size(&tree),
    };
    committed.register(home, build, started, log)
}

/// tar's reason for failing, when the archive itself looks whole: its first line that is neither a
/// warning nor its closing words, without the `tar: ` prefix; never empty.
fn tar_reason(stderr: &str, status: std::process::ExitStatus) -> String {
    const NOISE: &[&str] = &["warning", "ignoring unknown", "error is not recoverable", "exiting with failure status"];
    stderr
        .lines()
        .map(|l| l.trim().trim_start_matches("tar:").trim())
        .find(|l| !l.is_empty() && !NOISE.iter().any(|n| l.to_ascii_lowercase().contains(n)))
        .map(str::to_string)
        .unwrap_or_else(|| format!("tar failed ({status})"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    #[test]
    fn tar_reason_skips_warnings_and_closing_words() {
        let status = std::process::ExitStatus::from_raw(2 << 8);
        let stderr = "tar: Ignoring unknown extended header keyword 'LIBARCHIVE.xattr.security.selinux'\n\
                      tar: top/bin/x: Cannot open: Permission denied\n\
                      tar: Exiting with failure status due to previous errors\n";
        assert_eq!(tar_reason(stderr, status), "top/bin/x: Cannot open: Permission denied");
        let only_noise = "tar: Error is not recoverable: exiting now\n";
        assert_eq!(tar_reason(only_noise, status), "tar failed (exit status: 2)");
    }
}
