//! Can this host run the build? The shared libraries its server needs, checked with the dynamic loader,
//! with the Debian/Ubuntu package that provides each missing one; renamed sonames the host has under
//! another name (libaio.so.1 → libaio.so.1t64) are linked into the build's private library directory.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Sonames generic builds need, and the packages that provide them on Debian 12 / Ubuntu 24.04.
const PACKAGES: &[(&str, &str)] = &[
    ("libaio.so.1", "libaio1 (Debian 12, Ubuntu 22.04) or libaio1t64 (Ubuntu 24.04, Debian 13)"),
    ("libnuma.so.1", "libnuma1"),
    ("libtinfo.so.5", "libtinfo5"),
    ("libncurses.so.5", "libncurses5"),
    ("libtinfo.so.6", "libtinfo6"),
    ("libncurses.so.6", "libncurses6"),
    ("libsystemd.so.0", "libsystemd0"),
    ("libcrypt.so.1", "libcrypt1"),
    ("liburing.so.2", "liburing2"),
    ("libpcre2-8.so.0", "libpcre2-8-0"),
    ("libsnappy.so.1", "libsnappy1v5"),
    ("liblz4.so.1", "liblz4-1"),
    ("libzstd.so.1", "libzstd1"),
    ("libssl.so.3", "libssl3"),
    ("libcrypto.so.3", "libssl3"),
    ("libssl.so.1.1", "none on Debian 12 / Ubuntu 24.04: take a build that bundles OpenSSL (MySQL 8.0+ glibc builds)"),
    ("libssl.so.1.0.0", "none on Debian 12 / Ubuntu 24.04: take a Percona glibc2.x build instead of an ssl10x one"),
    ("libssl.so.10", "none on Debian/Ubuntu (a Red Hat soname): take a Percona glibc2.x build"),
    ("libcrypto.so.10", "none on Debian/Ubuntu (a Red Hat soname): take a Percona glibc2.x build"),
];

/// Sonames the host may carry under a new name (Debian's 64-bit time_t transition).
const RENAMED: &[(&str, &str)] = &[("libaio.so.1", "libaio.so.1t64")];

/// Host library directories searched for renamed sonames.
const HOST_LIB_DIRS: &[&str] = &["/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64"];

/// What the loader says about one binary.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Needs {
    /// Sonames not found.
    pub missing: Vec<String>,
    /// Symbol versions the host lacks (`GLIBC_2.38`), from "version `X' not found".
    pub versions: Vec<String>,
}

/// Reads `ldd` output.
pub fn parse_ldd(text: &str) -> Needs {
    let mut n = Needs::default();
    for line in text.lines() {
        let line = line.trim();
        if let Some((soname, rest)) = line.split_once("=>")
            && rest.trim() == "not found"
        {
            let s = soname.trim().to_string();
            if !n.missing.contains(&s) {
                n.missing.push(s);
            }
        }
        if let Some(at) = line.find("version `") {
            let rest = &line[at + 9..];
            if let Some(end) = rest.find('\'') {
                let v = rest[..end].to_string();
                if rest[end..].contains("not found") && !n.versions.contains(&v) {
                    n.versions.push(v);
                }
            }
        }
    }
    n
}

/// Asks the binary's own dynamic loader what it would load (`LD_TRACE_LOADED_OBJECTS`, what `ldd` does): the
/// loader lists the libraries and exits before any of the program runs. Using the binary's own loader
/// gives the right answer for builds with a private runtime too.
pub fn needs(binary: &Path) -> Result<Needs, String> {
    let out = Command::new(binary)
        .env("LD_TRACE_LOADED_OBJECTS", "1")
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("LD_PRELOAD")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot load {} (its dynamic loader is missing?): {e}", binary.display()))?;
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    Ok(parse_ldd(&text))
}

/// The package hint for a soname.
pub fn package_for(soname: &str) -> &'static str {
    PACKAGES.iter().find(|(s, _)| *s == soname).map(|(_, p)| *p).unwrap_or("unknown package")
}

/// The host file that provides `soname` under its new name, if any.
fn renamed_on_host(soname: &str) -> Option<PathBuf> {
    let (_, new) = RENAMED.iter().find(|(old, _)| *old == soname)?;
    HOST_LIB_DIRS.iter().map(|d| Path::new(d).join(new)).find(|p| p.exists())
}

/// The build's private library directory for `server` (`bin/../lib/private`, on the RUNPATH of MySQL 8.0.18+).
pub fn private_dir(server: &Path) -> PathBuf {
    server.parent().and_then(Path::parent).unwrap_or(Path::new("/")).join("lib/private")
}

/// Checks that `server` can be loaded; links renamed sonames into `private` ([`private_dir`]) and, when the
/// server does not search that directory yet, adds it to its RUNPATH with patchelf. Returns the sonames
/// linked, or one line naming what is missing and the packages that provide it.
pub fn check(server: &Path, private: &Path) -> Result<Vec<String>, String> {
    let mut n = needs(server)?;
    let mut linked = Vec::new();
    for soname in n.missing.clone() {
        if let Some(host) = renamed_on_host(&soname) {
            crate::owned::create_dir_all(private).map_err(|e| e.to_string())?;
            let link = private.join(&soname);
            if !link.exists() {
                std::os::unix::fs::symlink(&host, &link).map_err(|e| format!("cannot link {}: {e}", link.display()))?;
            }
            linked.push(soname);
        }
    }
    if !linked.is_empty() {
        n = needs(server)?;
        if n.missing.iter().any(|m| linked.contains(m)) {
            let patchelf = super::super::runtime::patchelf()?;
            let out = Command::new(patchelf)
                .arg("--add-rpath")
                .arg("$ORIGIN/../lib/private")
                .arg(server)
                .output()
                .map_err(|e| format!("cannot run patchelf: {e}"))?;
            if !out.status.success() {
                return Err(format!("patchelf {}: {}", server.display(), String::from_utf8_lossy(&out.stderr).trim()));
            }
            n = needs(server)?;
        }
    }
    if !n.versions.is_empty() {
        return Err(format!(
            "{} needs {} which this host's C library lacks; take a build for an older glibc (the highest glibc tag not above the host's)",
            server.display(),
            n.versions.join(", ")
        ));
    }
    if !n.missing.is_empty() {
        let list: Vec<String> = n.missing.iter().map(|s| format!("{s} (package {})", package_for(s))).collect();
        return Err(format!(
            "{} needs shared libraries this host lacks: {}; install them and fetch again",
            server.display(),
            list.join(", ")
        ));
    }
    Ok(linked)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_missing_sonames_and_symbol_versions() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd)\n\tlibaio.so.1 => not found\n\
                    \tlibnuma.so.1 => /lib/x86_64-linux-gnu/libnuma.so.1 (0x00007f)\n\
                    ./mysqld: /lib/x86_64-linux-gnu/libc.so.6: version `GLIBC_2.38' not found (required by ./mysqld)\n\
                    \tlibtinfo.so.5 => not found\n";
        let n = parse_ldd(text);
        assert_eq!(n.missing, ["libaio.so.1", "libtinfo.so.5"]);
        assert_eq!(n.versions, ["GLIBC_2.38"]);
        assert!(package_for("libaio.so.1").contains("libaio1t64"));
        assert_eq!(package_for("libnuma.so.1"), "libnuma1");
    }

    #[test]
    fn a_loadable_binary_passes_and_a_missing_library_is_named() {
        let t = tempfile::tempdir().unwrap();
        assert_eq!(check(Path::new("/bin/sh"), &t.path().join("private")), Ok(vec![]));
        // A copy of a host program made to need a library nobody has (patchelf is installed for the tests).
        let bin = t.path().join("prog");
        std::fs::copy("/bin/true", &bin).unwrap();
        let ok = Command::new("patchelf").arg("--add-needed").arg("libnuma.so.999").arg(&bin).status();
        if ok.is_ok_and(|s| s.success()) {
            let e = check(&bin, &t.path().join("private")).unwrap_err();
            assert!(e.contains("libnuma.so.999 (package unknown package)"), "{e}");
        }
    }
}
