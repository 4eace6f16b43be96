//! A private runtime: a tree that carries its own C library and shared libraries, and whose programs are
//! patched with patchelf to load them (servers.md recipe 2a, option ii). The paths written into the ELF files
//! are absolute, so they must be those of the tree's final location.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::Msg;

/// ELF magic number.
const ELF_MAGIC: &[u8; 4] = b"\x7fELF";

/// The program header type of the interpreter entry.
const PT_INTERP: u32 = 3;

/// True when `bytes` (the start of a file) are a 64-bit little-endian ELF file with an interpreter, i.e. a
/// dynamically linked program. Other ELF classes are reported as dynamic so that patchelf decides.
pub fn is_dynamic_program(bytes: &[u8]) -> bool {
    if bytes.len() < 64 || &bytes[..4] != ELF_MAGIC {
        return false;
    }
    if bytes[4] != 2 || bytes[5] != 1 {
        return true;
    }
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as usize;
    let phoff = u64::from_le_bytes(bytes[0x20..0x28].try_into().unwrap_or([0; 8])) as usize;
    let (phentsize, phnum) = (u16_at(0x36), u16_at(0x38));
    (0..phnum).any(|i| {
        let at = phoff + i * phentsize;
        bytes.get(at..at + 4).is_some_and(|t| u32::from_le_bytes([t[0], t[1], t[2], t[3]]) == PT_INTERP)
    })
}

/// The library directories (`usr/lib/x86_64-linux-gnu`, `lib/x86_64-linux-gnu`) and the dynamic loader found
/// in `tree`, relative to it.
pub fn find_runtime(tree: &Path) -> Option<(Vec<PathBuf>, PathBuf)> {
    let mut dirs = Vec::new();
    let mut loader = None;
    for base in ["usr/lib", "lib"] {
        let Ok(entries) = std::fs::read_dir(tree.join(base)) else { continue };
        let mut subs: Vec<_> = entries.flatten().map(|e| e.file_name()).collect();
        subs.sort();
        for sub in subs {
            let name = sub.to_string_lossy();
            if !name.contains("-linux-gnu") {
                continue;
            }
            let rel = Path::new(base).join(&sub);
            if loader.is_none()
                && let Ok(files) = std::fs::read_dir(tree.join(&rel))
            {
                let mut found: Vec<_> = files
                    .flatten()
                    .map(|f| f.file_name().to_string_lossy().into_owned())
                    .filter(|f| f.starts_with("ld-linux") && f.contains(".so"))
                    .collect();
                found.sort();
                loader = found.first().map(|f| rel.join(f));
            }
            dirs.push(rel);
        }
    }
    Some((dirs, loader?))
}

/// The `patchelf` program, or an error telling how to install it.
pub fn patchelf() -> Msg<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path).map(|d| d.join("patchelf")).find(|p| p.is_file()).ok_or_else(|| {
        "this line needs a private runtime but patchelf is missing; install patchelf: apt-get install patchelf".into()
    })
}

/// Patches every dynamic ELF program in `staged/usr/bin` and `staged/usr/sbin` to use the loader and libraries of
/// the tree, written with the paths they will have once the tree is at `final_tree`. Returns how many files
/// were patched.
pub fn patch_tree(staged: &Path, final_tree: &Path) -> Msg<usize> {
    let patchelf = patchelf()?;
    let (dirs, loader) = find_runtime(staged)
        .ok_or_else(|| format!("no dynamic loader (ld-linux*.so) under {}/usr/lib or lib", staged.display()))?;
    let interpreter = final_tree.join(&loader);
    let rpath = dirs.iter().map(|d| final_tree.join(d).display().to_string()).collect::<Vec<_>>().join(":");
    let mut patched = 0;
    for sub in ["usr/bin", "usr/sbin"] {
        let Ok(entries) = std::fs::read_dir(staged.join(sub)) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(meta) = std::fs::symlink_metadata(&path) else { continue };
            if !meta.is_file() || !is_dynamic_program(&read_head(&path)) {
                continue;
            }
            let out = Command::new(&patchelf)
                .arg("--set-interpreter")
                .arg(&interpreter)
                .arg("--force-rpath")
                .arg("--set-rpath")
                .arg(&rpath)
                .arg(&path)
                .output()
                .map_err(|e| format!("cannot run patchelf: {e}"))?;
            if !out.status.success() {
                return Err(format!(
                    "patchelf {} failed: {}",
                    path.display(),
                    String::from_utf8_lossy(&out.stderr).lines().next().unwrap_or("")
                ));
            }
            patched += 1;
        }
    }
    Ok(patched)
}

/// The first 64 KiB of a file (enough for ELF program headers), or nothing if it cannot be read.
fn read_head(path: &Path) -> Vec<u8> {
    use std::io::Read;
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(64 * 1024).read_to_end(&mut buf);
    }
    buf
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recognises_dynamic_programs() {
        let sh = read_head(Path::new("/bin/sh"));
        assert!(is_dynamic_program(&sh), "/bin/sh is dynamically linked on Debian");
        assert!(!is_dynamic_program(b"#!/bin/sh\necho hello, this is a shell script and not an ELF file at all...\n"));
        // A shared library has no interpreter.
        let lib = std::fs::read_dir("/usr/lib/x86_64-linux-gnu")
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.file_name().is_some_and(|n| n.to_string_lossy().starts_with("libz.so.1.")));
        if let Some(lib) = lib {
            assert!(!is_dynamic_program(&read_head(&lib)), "{}", lib.display());
        }
    }

    #[test]
    fn finds_loader_and_library_dirs() {
        let t = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(t.path().join("usr/lib/x86_64-linux-gnu")).unwrap();
        std::fs::create_dir_all(t.path().join("lib/x86_64-linux-gnu")).unwrap();
        std::fs::create_dir_all(t.path().join("usr/lib/mysql")).unwrap();
        assert_eq!(find_runtime(t.path()), None, "no loader yet");
        std::fs::write(t.path().join("lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"), "").unwrap();
        let (dirs, loader) = find_runtime(t.path()).unwrap();
        assert_eq!(dirs, [PathBuf::from("usr/lib/x86_64-linux-gnu"), PathBuf::from("lib/x86_64-linux-gnu")]);
        assert_eq!(loader, PathBuf::from("lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"));
    }
}
