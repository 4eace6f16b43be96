//! Unpacking a verified tarball (`.tar.gz`, `.tar.xz`, `.tar`) into a staging directory, refusing entries
//! that would land outside it, and checking that it is a Linux x86_64 build.

use std::io::Read;
use std::path::Path;

/// Platform words in tarball names that are not Linux x86_64.
const OTHER_PLATFORMS: &[&str] =
    &["aarch64", "arm64", "i686", "i386", "-x86.", "macos", "darwin", "winx64", "win32", "solaris", "freebsd"];

/// The ELF machine number of x86-64.
const EM_X86_64: u16 = 62;

/// An error when the file name says the tarball is for another platform.
pub fn check_platform_name(file: &str) -> Result<(), String> {
    let lower = file.to_ascii_lowercase();
    if let Some(p) = OTHER_PLATFORMS.iter().find(|p| lower.contains(*p)) {
        return Err(format!(
            "{file} is a build for another platform ({}); versus runs Linux x86_64 builds",
            p.trim_matches(|c| c == '-' || c == '.')
        ));
    }
    Ok(())
}

/// An error when `binary` is an ELF file for another machine than x86-64.
pub fn check_machine(binary: &Path) -> Result<(), String> {
    let mut head = [0u8; 20];
    let mut f = std::fs::File::open(binary).map_err(|e| format!("cannot read {}: {e}", binary.display()))?;
    f.read_exact(&mut head).map_err(|e| format!("cannot read {}: {e}", binary.display()))?;
    if &head[..4] != b"\x7fELF" {
        return Err(format!("{} is not an ELF program", binary.display()));
    }
    let machine =
        if head[5] == 1 { u16::from_le_bytes([head[18], head[19]]) } else { u16::from_be_bytes([head[18], head[19]]) };
    if machine != EM_X86_64 {
        let name = match machine {
            3 => "i386",
            183 => "aarch64",
            40 => "arm",
            21 => "ppc64",
            22 => "s390",
            _ => "another machine",
        };
        return Err(format!(
            "{} is built for {name} (ELF machine {machine}); versus runs x86_64 builds",
            binary.display()
        ));
    }
    Ok(())
}

/// Unpacks `file` into `dest`, keeping permissions and links, refusing paths outside `dest`.
pub fn unpack(file: &Path, dest: &Path) -> Result<(), String> {
    let name = file.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let f = std::fs::File::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let f = std::io::BufReader::with_capacity(1 << 20, f);
    let reader: Box<dyn Read> = if name.ends_with(".tar.gz") || name.ends_with(".tgz") {
        Box::new(flate2::read::GzDecoder::new(f))
    } else if name.ends_with(".tar.xz") || name.ends_with(".txz") {
        Box::new(liblzma::read::XzDecoder::new(f))
    } else if name.ends_with(".tar") {
        Box::new(f)
    } else {
        return Err(format!("{} is not a .tar.gz, .tar.xz or .tar file", file.display()));
    };
    let mut archive = tar::Archive::new(reader);
    archive.set_preserve_permissions(true);
    archive.set_preserve_mtime(true);
    archive.set_overwrite(true);
    // What the file holds says what is wrong better than the tar crate's error (often only "failed to
    // unpack …", with the cause hidden behind it).
    let unreadable = |e: std::io::Error| {
        let why = crate::server::fetch::broken::diagnose(file, true).unwrap_or_else(|| cause_chain(&e));
        format!("{} is not a readable tarball: {why}", file.display())
    };
    for entry in archive.entries().map_err(unreadable)? {
        let mut entry = entry.map_err(unreadable)?;
        let path = entry.path().map_err(unreadable)?.into_owned();
        if !entry.unpack_in(dest).map_err(unreadable)? {
            return Err(format!(
                "{} holds an entry outside its directory ({}); refused",
                file.display(),
                path.display()
            ));
        }
    }
    Ok(())
}

/// `e` and the errors behind it, on one line (never empty).
fn cause_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut next = e.source();
    while let Some(c) = next {
        parts.push(c.to_string());
        next = c.source();
    }
    parts.retain(|p| !p.trim().is_empty());
    parts.dedup();
    if parts.is_empty() { "it cannot be read as a tar archive".into() } else { parts.join(": ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_other_platforms_are_refused() {
        assert!(check_platform_name("mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz").is_ok());
        assert!(check_platform_name("mariadb-10.6.21-linux-systemd-x86_64.tar.gz").is_ok());
        let e = check_platform_name("mysql-8.0.36-linux-glibc2.17-aarch64.tar.gz").unwrap_err();
        assert!(e.contains("another platform (aarch64)"), "{e}");
        assert!(check_platform_name("mysql-8.0.36-macos14-x86_64.tar.gz").is_err());
        assert!(check_platform_name("mariadb-10.5.9-linux-x86.tar.gz").is_err());
    }

    #[test]
    fn the_machine_of_a_binary_is_read() {
        assert!(check_machine(Path::new("/bin/sh")).is_ok());
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("arm");
        let mut head = std::fs::read("/bin/sh").unwrap()[..64].to_vec();
        head[18] = 183;
        head[19] = 0;
        std::fs::write(&f, &head).unwrap();
        assert!(check_machine(&f).unwrap_err().contains("built for aarch64"));
        std::fs::write(&f, "#!/bin/sh\necho not an ELF file at all\n").unwrap();
        assert!(check_machine(&f).unwrap_err().contains("not an ELF"));
    }

    #[test]
    fn unpacks_gzip_and_xz_and_refuses_escapes() {
        let t = tempfile::tempdir().unwrap();
        let src = t.path().join("src/top/bin");
        std::fs::create_dir_all(&src).unwrap();
        std::fs::write(src.join("tool"), "#!/bin/sh\n").unwrap();
        std::process::Command::new("chmod").arg("755").arg(src.join("tool")).status().unwrap();
        std::os::unix::fs::symlink("tool", src.join("link")).unwrap();
        for (flag, ext) in [("-czf", "tar.gz"), ("-cJf", "tar.xz")] {
            let file = t.path().join(format!("t.{ext}"));
            let mut tar = std::process::Command::new("tar");
            tar.arg(flag).arg(&file).arg("-C").arg(t.path().join("src")).arg("top");
            assert!(tar.status().unwrap().success());
            let dest = t.path().join(format!("out-{ext}"));
            std::fs::create_dir_all(&dest).unwrap();
            unpack(&file, &dest).unwrap();
            let tool = dest.join("top/bin/tool");
            assert_eq!(std::fs::read_to_string(&tool).unwrap(), "#!/bin/sh\n");
            let mode = std::os::unix::fs::PermissionsExt::mode(&std::fs::metadata(&tool).unwrap().permissions());
            assert_eq!(mode & 0o777, 0o755);
            assert_eq!(std::fs::read_link(dest.join("top/bin/link")).unwrap(), Path::new("tool"));
        }
        let bad = t.path().join("bad.tar.gz");
        std::fs::write(&bad, "not gzip").unwrap();
        let e = unpack(&bad, t.path()).unwrap_err();
        assert!(
            e.ends_with(
                "is not a readable tarball: it is not a gzip, xz or tar file (it starts with the bytes 6e 6f 74 20)"
            ),
            "{e}"
        );
        // An archive whose entry climbs out of the destination.
        let mut b = tar::Builder::new(Vec::new());
        let mut h = tar::Header::new_gnu();
        h.set_size(1);
        h.set_mode(0o644);
        h.as_gnu_mut().unwrap().name[..9].copy_from_slice(b"../escape");
        h.set_cksum();
        b.append(&h, &b"x"[..]).unwrap();
        let escape = t.path().join("escape.tar");
        std::fs::write(&escape, b.into_inner().unwrap()).unwrap();
        let dest = t.path().join("out-escape");
        std::fs::create_dir_all(&dest).unwrap();
        assert!(unpack(&escape, &dest).unwrap_err().contains("outside its directory"));
        assert!(!t.path().join("escape").exists());
    }
}
