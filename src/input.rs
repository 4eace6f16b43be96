//! Reading the files a user names (experiment files, SQL scripts, option files, value lists, recovery
//! files): regular files only, and no larger than any such file gets, so that `/dev/zero`, a FIFO, a
//! terminal or a directory given by mistake is one line instead of a hang or an exhausted memory.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::{Error, Result};

/// The largest input file versus reads (64 MiB): far above any experiment file, script or option file.
pub const MAX_INPUT_BYTES: u64 = 64 << 20;

/// The text of the input file `path`, or why it cannot be read (without the path; see [`read_text`]).
pub fn read_text_reason(path: &Path) -> std::result::Result<String, String> {
    String::from_utf8(read_bytes_reason(path)?)
        .map_err(|e| format!("is not UTF-8 text (invalid byte at offset {})", e.utf8_error().valid_up_to()))
}

/// The bytes of the input file `path` (a regular file of at most [`MAX_INPUT_BYTES`]), or why it
/// cannot be read, without the path.
pub fn read_bytes_reason(path: &Path) -> std::result::Result<Vec<u8>, String> {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
    let file = OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| format!("cannot read: {e}"))?;
    read_open(file)
}

fn read_open(file: File) -> std::result::Result<Vec<u8>, String> {
    let meta = file.metadata().map_err(|e| format!("cannot read: {e}"))?;
    if meta.is_dir() {
        return Err("is a directory; give a file".into());
    }
    if !meta.is_file() {
        return Err("is not a regular file (a device, a pipe or a socket); give a file".into());
    }
    if meta.len() > MAX_INPUT_BYTES {
        return Err(format!(
            "is {} MiB, larger than any input versus reads ({} MiB)",
            meta.len() >> 20,
            MAX_INPUT_BYTES >> 20
        ));
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_INPUT_BYTES + 1).read_to_end(&mut bytes).map_err(|e| format!("cannot read: {e}"))?;
    if bytes.len() as u64 > MAX_INPUT_BYTES {
        return Err(format!("grew past {} MiB while being read", MAX_INPUT_BYTES >> 20));
    }
    Ok(bytes)
}

/// The text of the input file `path`; an error names the file and says what is wrong with it.
pub fn read_text(path: &Path) -> Result<String> {
    read_text_reason(path).map_err(|why| Error::file(path, why))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_text_files_of_sane_size_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let ok = dir.path().join("ok.toml");
        std::fs::write(&ok, "name = \"x\"\n").unwrap();
        assert_eq!(read_text(&ok).unwrap(), "name = \"x\"\n");
        assert!(read_text_reason(dir.path()).unwrap_err().contains("is a directory"));
        assert!(read_text_reason(Path::new("/dev/zero")).unwrap_err().contains("not a regular file"));
        assert!(read_text_reason(Path::new("/dev/null")).unwrap_err().contains("not a regular file"));
        let fifo = dir.path().join("fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::S_IRWXU).unwrap();
        assert!(read_text_reason(&fifo).unwrap_err().contains("not a regular file"), "a FIFO must not block");
        let big = dir.path().join("big");
        let f = File::create(&big).unwrap();
        f.set_len(MAX_INPUT_BYTES + 1).unwrap();
        assert!(read_text_reason(&big).unwrap_err().contains("larger than any input"));
        let bin = dir.path().join("bin");
        std::fs::write(&bin, b"ab\xffcd").unwrap();
        assert!(read_text_reason(&bin).unwrap_err().contains("offset 2"));
        let err = read_text(&dir.path().join("missing")).unwrap_err().to_string();
        assert!(err.contains("missing") && err.contains("cannot read"), "{err}");
    }
}
