//! Why an archive cannot be unpacked, named from what the file holds (empty, another kind of file,
//! truncated, corrupt compressed data, a damaged tar inside) rather than from tar's messages, whose
//! first line is often a warning and whose last is "Error is not recoverable".

use std::io::{self, Read};
use std::path::Path;

/// The compressions an archive can come in, by their first bytes.
const MAGIC: &[(&[u8], &str)] =
    &[(b"\x1f\x8b", "gzip"), (b"\xfd7zXZ\x00", "xz"), (b"BZh", "bzip2"), (b"\x28\xb5\x2f\xfd", "zstd")];

/// The compression a file name promises.
const BY_NAME: &[(&str, &str)] =
    &[(".tar.gz", "gzip"), (".tgz", "gzip"), (".tar.xz", "xz"), (".txz", "xz"), (".tar", "tar")];

const BLOCK: usize = 512;

/// What is wrong with the archive `file`, or `None` when it reads whole to its end-of-archive marker
/// (or is compressed in a way this check does not read: bzip2, zstd). With `by_name`, content that
/// differs from what the name's extension promises is what is wrong (the unpacker goes by the name).
pub fn diagnose(file: &Path, by_name: bool) -> Option<String> {
    let mut f = match std::fs::File::open(file) {
        Ok(f) => f,
        Err(e) => return Some(format!("cannot read it: {e}")),
    };
    let mut head = Vec::with_capacity(BLOCK);
    if let Err(e) = (&mut f).take(BLOCK as u64).read_to_end(&mut head) {
        return Some(format!("cannot read it: {e}"));
    }
    let kind = match content_kind(&head) {
        Ok(k) => k,
        Err(what) => return Some(what),
    };
    let name = file.file_name().map(|n| n.to_string_lossy().to_ascii_lowercase()).unwrap_or_default();
    let promised = BY_NAME.iter().find(|(ext, _)| name.ends_with(ext));
    if let Some((ext, want)) = promised.filter(|(_, want)| by_name && *want != kind) {
        return Some(format!("its name ends in {ext} but it holds {kind} data, not {want}"));
    }
    let all = io::BufReader::new(io::Cursor::new(head).chain(f));
    let reader: Box<dyn Read> = match kind {
        "gzip" => Box::new(flate2::bufread::MultiGzDecoder::new(all)),
        "xz" => Box::new(liblzma::bufread::XzDecoder::new_multi_decoder(all)),
        "tar" => Box::new(all),
        _ => return None,
    };
    walk(reader, kind)
}

/// The compression of content starting with `head`, or what the file is instead of an archive.
fn content_kind(head: &[u8]) -> Result<&'static str, String> {
    if head.is_empty() {
        return Err("the file is empty".into());
    }
    if let Some((_, kind)) = MAGIC.iter().find(|(m, _)| head.starts_with(m)) {
        return Ok(kind);
    }
    if head.len() >= 262 && &head[257..262] == b"ustar" {
        return Ok("tar");
    }
    let text = String::from_utf8_lossy(head).trim_start().to_ascii_lowercase();
    if text.starts_with("<!doctype html") || text.starts_with("<html") || text.starts_with("<?xml") {
        return Err("it is a web page, not an archive (the server sent a page instead of the file)".into());
    }
    if head.starts_with(b"PK\x03\x04") {
        return Err("it is a zip file, not a tar archive".into());
    }
    let bytes: Vec<String> = head.iter().take(4).map(|b| format!("{b:02x}")).collect();
    Err(format!("it is not a gzip, xz or tar file (it starts with the bytes {})", bytes.join(" ")))
}

/// Reads the tar stream in `r` (decompressed from `kind`) header by header to its end-of-archive
/// marker; what stops it, if anything.
fn walk(mut r: Box<dyn Read>, kind: &str) -> Option<String> {
    let mut entries = 0usize;
    let mut last = String::new();
    let after = |entries: usize, last: &str| match entries {
        0 => "before its first entry".to_string(),
        1 => format!("after its first entry ({last})"),
        _ => format!("after {entries} entries (the last: {last})"),
    };
    let broken = |e: io::Error, entries: usize, last: &str| {
        if e.kind() == io::ErrorKind::UnexpectedEof {
            format!("truncated archive: the {kind} data end early, {}", after(entries, last))
        } else {
            let why = e.to_string();
            let why = if why.trim().is_empty() { format!("{:?}", e.kind()) } else { why };
            format!("corrupt {kind} data ({why}), {}", after(entries, last))
        }
    };
    loop {
        let mut h = [0u8; BLOCK];
        let n = match fill(&mut r, &mut h) {
            Ok(n) => n,
            Err(e) => return Some(broken(e, entries, &last)),
        };
        if n < BLOCK {
            return Some(format!(
                "truncated archive: it ends without its end-of-archive marker, {}",
                after(entries, &last)
            ));
        }
        if h.iter().all(|b| *b == 0) {
            return None;
        }
        let stored = octal(&h[148..156]);
        let sum: u64 =
            h.iter().enumerate().map(|(i, b)| if (148..156).contains(&i) { 32 } else { u64::from(*b) }).sum();
        if stored != Some(sum) {
            return Some(match entries {
                0 => format!("the {kind} data hold no tar archive (no valid tar header at their start)"),
                _ => format!("corrupt archive: a damaged tar header {}", after(entries, &last)),
            });
        }
        let Some(size) = entry_size(&h[124..136]) else {
            return Some(format!("corrupt archive: an entry of unreadable size {}", after(entries, &last)));
        };
        last = entry_name(&h);
        entries += 1;
        let padded = size.div_ceil(BLOCK as u64) * BLOCK as u64;
        match io::copy(&mut (&mut r).take(padded), &mut io::sink()) {
            Ok(n) if n == padded => {}
            Ok(_) => return Some(format!("truncated archive: entry {last} is cut short")),
            Err(e) => return Some(broken(e, entries, &last)),
        }
    }
}

/// Reads until `buf` is full or the stream ends; the bytes read.
fn fill(r: &mut dyn Read, buf: &mut [u8]) -> io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}

/// An octal header field (NUL- or space-terminated).
fn octal(field: &[u8]) -> Option<u64> {
    let text = std::str::from_utf8(field).ok()?.trim_matches(|c: char| c == '\0' || c == ' ');
    if text.is_empty() { Some(0) } else { u64::from_str_radix(text, 8).ok() }
}

/// An entry's size: octal, or GNU's base-256 for large files.
fn entry_size(field: &[u8]) -> Option<u64> {
    if field[0] & 0x80 != 0 {
        return field[1..].iter().try_fold(0u64, |n, b| n.checked_mul(256).map(|n| n | u64::from(*b)));
    }
    octal(field)
}

/// An entry's path (the ustar prefix, then the name).
fn entry_name(h: &[u8; BLOCK]) -> String {
    let text = |b: &[u8]| String::from_utf8_lossy(b.split(|c| *c == 0).next().unwrap_or_default()).into_owned();
    let (prefix, name) = (text(&h[345..500]), text(&h[..100]));
    if &h[257..262] == b"ustar" && !prefix.is_empty() { format!("{prefix}/{name}") } else { name }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    /// A tree of two files, one of 100 kB of incompressible bytes, packed with `flag` into `name`.
    fn archive(dir: &Path, name: &str, flag: &str) -> std::path::PathBuf {
        let src = dir.join("src/top");
        if !src.exists() {
            std::fs::create_dir_all(&src).unwrap();
            let mut noise = vec![0u8; 100_000];
            std::fs::File::open("/dev/urandom").unwrap().read_exact(&mut noise).unwrap();
            std::fs::write(src.join("big"), noise).unwrap();
            std::fs::write(src.join("small"), "x").unwrap();
        }
        let file = dir.join(name);
        let ok = Command::new("tar").arg(flag).arg(&file).arg("-C").arg(dir.join("src")).arg("top").status();
        assert!(ok.unwrap().success());
        file
    }

    fn cut(file: &Path, keep: usize) {
        let bytes = std::fs::read(file).unwrap();
        std::fs::write(file, &bytes[..keep]).unwrap();
    }

    #[test]
    fn whole_archives_have_nothing_wrong() {
        let t = tempfile::tempdir().unwrap();
        for (name, flag) in [("a.tar.gz", "-czf"), ("a.tar.xz", "-cJf"), ("a.tar", "-cf")] {
            assert_eq!(diagnose(&archive(t.path(), name, flag), true), None, "{name}");
        }
    }

    #[test]
    fn what_is_wrong_is_named() {
        let t = tempfile::tempdir().unwrap();
        for (name, flag, kind) in [("c.tar.gz", "-czf", "gzip"), ("c.tar.xz", "-cJf", "xz")] {
            let file = archive(t.path(), name, flag);
            cut(&file, std::fs::metadata(&file).unwrap().len() as usize / 2);
            let why = diagnose(&file, true).unwrap();
            assert!(why.starts_with(&format!("truncated archive: the {kind} data end early, after ")), "{why}");
        }
        let tar = archive(t.path(), "c.tar", "-cf");
        cut(&tar, 60_000);
        let why = diagnose(&tar, true).unwrap();
        assert!(why.starts_with("truncated archive: entry top/") && why.ends_with("is cut short"), "{why}");
        let gz = archive(t.path(), "d.tar.gz", "-czf");
        let mut bytes = std::fs::read(&gz).unwrap();
        for b in &mut bytes[10..30] {
            *b ^= 0x5a;
        }
        std::fs::write(&gz, bytes).unwrap();
        assert!(diagnose(&gz, true).unwrap().starts_with("corrupt gzip data ("), "{:?}", diagnose(&gz, true));
        let xz_named_gz = t.path().join("e.tar.gz");
        std::fs::copy(archive(t.path(), "e.tar.xz", "-cJf"), &xz_named_gz).unwrap();
        assert_eq!(diagnose(&xz_named_gz, true).unwrap(), "its name ends in .tar.gz but it holds xz data, not gzip");
        assert_eq!(diagnose(&xz_named_gz, false), None, "tar reads the content, whatever the name");
        let page = t.path().join("f.tar.gz");
        std::fs::write(&page, "\n<!DOCTYPE html><html><body>404 Not Found</body></html>").unwrap();
        assert!(diagnose(&page, true).unwrap().starts_with("it is a web page, not an archive"));
        std::fs::write(&page, "").unwrap();
        assert_eq!(diagnose(&page, true).unwrap(), "the file is empty");
        std::fs::write(&page, "this is not gzip data").unwrap();
        assert_eq!(
            diagnose(&page, true).unwrap(),
            "it is not a gzip, xz or tar file (it starts with the bytes 74 68 69 73)"
        );
        // gzip of something that is not a tar.
        let plain = t.path().join("g.tar.gz");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        io::Write::write_all(&mut gz, &[7u8; 2000]).unwrap();
        std::fs::write(&plain, gz.finish().unwrap()).unwrap();
        assert_eq!(
            diagnose(&plain, true).unwrap(),
            "the gzip data hold no tar archive (no valid tar header at their start)"
        );
    }
}
