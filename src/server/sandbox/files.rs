//! The files of a sandbox directory: where its socket goes, whether its datadir may be used or
//! initialised, and the argument rewriting the install scripts need.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::owned;
use crate::server::flavor;

pub(super) fn absolute(p: &Path) -> Result<PathBuf> {
    std::path::absolute(p).map_err(|e| Error::file(p, e))
}

/// The socket goes into the sandbox directory unless that path would exceed the kernel's limit for
/// unix socket addresses (108 bytes); then it goes to /tmp under a name derived from the directory.
pub(super) fn socket_path(dir: &Path) -> PathBuf {
    let p = dir.join("mysqld.sock");
    if p.as_os_str().len() < 100 {
        return p;
    }
    let hash = dir
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf29ce484222325u64, |h, b| (h ^ *b as u64).wrapping_mul(0x100000001b3));
    std::env::temp_dir().join(format!("versus-{hash:016x}")).join("mysqld.sock")
}

/// The record, in the sandbox directory, of an initialisation under way: it names the datadir, which was
/// empty when the initialisation began, and is removed when the initialisation succeeds.
pub(super) fn init_record(dir: &Path) -> PathBuf {
    dir.join("initialising")
}

/// Writes the record of an initialisation of `datadir` begun by the process group `pgid` (once known).
pub(super) fn write_init_record(record: &Path, datadir: &Path, pgid: Option<u32>) -> Result<()> {
    let mut text = pgid.map_or_else(String::new, |p| p.to_string()).into_bytes();
    text.push(b'\n');
    text.extend_from_slice(datadir.as_os_str().as_encoded_bytes());
    owned::write_file(record, &text, 0o600)
}

/// The process group (when recorded) and the datadir of the initialisation `record` names.
fn read_init_record(record: &Path) -> Option<(Option<i32>, PathBuf)> {
    use std::os::unix::ffi::OsStringExt;
    let bytes = std::fs::read(record).ok()?;
    let nl = bytes.iter().position(|b| *b == b'\n')?;
    let pgid = std::str::from_utf8(&bytes[..nl]).ok().and_then(|p| p.parse().ok());
    Some((pgid, PathBuf::from(std::ffi::OsString::from_vec(bytes[nl + 1..].to_vec()))))
}

/// The process group of `pid` (field 5 of its stat).
fn group_of(pid: u32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(')')?.1.split_whitespace().nth(2)?.parse().ok()
}

/// Ends what outlived an interrupted initialisation: the processes of its group that run with this
/// sandbox's option file (the install script's subshells and its bootstrap server outlive versus,
/// which only ties the script itself to its own life).
fn end_leftovers(pgid: i32, cnf: &Path) {
    use nix::sys::signal::{Signal, kill};
    let arg = format!("--defaults-file={}", cnf.display());
    for _ in 0..50 {
        let left: Vec<u32> =
            crate::server::process::with_argument(&arg).into_iter().filter(|&p| group_of(p) == Some(pgid)).collect();
        if left.is_empty() {
            return;
        }
        for p in left {
            let _ = kill(nix::unistd::Pid::from_raw(p as i32), Signal::SIGKILL);
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// Decides whether the datadir must be initialised: true for a missing or empty one. A non-empty
/// datadir is reused only when versus initialised it for the same build; one whose initialisation was
/// interrupted ([`init_record`]) is emptied and initialised again, when versus made the directory (what
/// is left of that initialisation's processes is ended first). `cnf` is the sandbox's option file.
pub(super) fn prepare_datadir(fresh: bool, build: &str, datadir: &Path, record: &Path, cnf: &Path) -> Result<bool> {
    owned::check_links(datadir)?;
    if let Some((pgid, begun)) = read_init_record(record)
        && begun == datadir
        && !datadir.join("versus.json").exists()
    {
        if let Some(pgid) = pgid {
            end_leftovers(pgid, cnf);
        }
        if !is_empty_dir(datadir) {
            if owned::check(datadir).is_err() {
                return Err(Error::file(
                    datadir,
                    "an earlier start was interrupted while initialising this datadir, and versus did not create \
                     the directory: empty it yourself and start again",
                ));
            }
            owned::remove_contents(datadir)?;
        }
        return Ok(true);
    }
    if fresh && !is_empty_dir(datadir) {
        // Only a datadir versus made (or initialised) is emptied; anything else is refused before a file goes.
        owned::remove_contents(datadir).map_err(|_| {
            Error::file(
                datadir,
                "--fresh refused: the datadir is not empty and was not made by versus; give an empty or new directory",
            )
        })?;
    }
    if is_empty_dir(datadir) {
        return Ok(true);
    }
    let marker = datadir.join("versus.json");
    let owner = std::fs::read_to_string(&marker)
        .ok()
        .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
        .and_then(|v| v["build"].as_str().map(str::to_string));
    match owner {
        Some(b) if b == build => Ok(false),
        Some(b) => Err(Error::file(
            datadir,
            format!("the datadir was initialised by build '{b}', not '{build}'; start with --fresh to replace it"),
        )),
        None => Err(Error::file(
            datadir,
            "the datadir is not empty and was not made by versus; give an empty or new directory",
        )),
    }
}

/// Hands a datadir that versus made for one build to `build` (an in-place upgrade: a newer server
/// started on an older one's data files, as a replica of a newer version restored from its primary's
/// data is). A directory without versus's marker is refused.
pub fn adopt_datadir(datadir: &Path, build: &crate::server::Build) -> Result<()> {
    let marker = datadir.join("versus.json");
    if !marker.is_file() {
        return Err(Error::file(datadir, "not a datadir versus made; it cannot be handed to another build"));
    }
    let text = serde_json::json!({ "build": build.name, "version": build.version_string }).to_string() + "\n";
    std::fs::write(&marker, text).map_err(|e| Error::file(&marker, e))
}

/// True for a missing or empty directory.
fn is_empty_dir(dir: &Path) -> bool {
    match std::fs::read_dir(dir) {
        Ok(mut rd) => rd.next().is_none(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

pub(super) fn log_len(path: &Path) -> u64 {
    std::fs::metadata(path).map(|m| m.len()).unwrap_or(0)
}

/// The install scripts (`mariadb-install-db`, `mysql_install_db`) split paths at spaces. A path
/// argument with whitespace is replaced by a symbolic link without any, in a directory versus makes for
/// the purpose; it returns that directory, to be removed once the command ran.
pub(super) fn spaceless_paths(cmd: &mut flavor::CommandLine) -> Result<Option<PathBuf>> {
    if !cmd.args.iter().any(|a| a.contains(char::is_whitespace)) {
        return Ok(None);
    }
    let dir = owned::create_temp_dir("versus-init-")?;
    for (i, arg) in cmd.args.iter_mut().enumerate() {
        let Some((key, value)) = arg.split_once('=').filter(|(_, v)| v.contains(char::is_whitespace)) else {
            continue;
        };
        let link = dir.join(format!("p{i}"));
        let value = Path::new(value);
        // A path the command creates (the datadir) is reached through a link to its parent.
        let (target, tail) = match (value.exists(), value.parent(), value.file_name()) {
            (false, Some(parent), Some(name)) => (parent, Some(name)),
            _ => (value, None),
        };
        std::os::unix::fs::symlink(target, &link).map_err(|e| Error::file(&link, e))?;
        let shown = tail.map(|t| link.join(t)).unwrap_or(link);
        *arg = format!("{key}={}", shown.display());
    }
    Ok(Some(dir))
}

pub(super) fn summarize_output(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let errors: Vec<&str> = lines.iter().copied().filter(|l| l.contains("ERROR") || l.contains("error")).collect();
    let picked = if errors.is_empty() {
        &lines[lines.len().saturating_sub(3)..]
    } else {
        &errors[errors.len().saturating_sub(3)..]
    };
    if picked.is_empty() { "no output".into() } else { picked.join(" | ") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_directories_get_a_short_socket() {
        assert_eq!(socket_path(Path::new("/tmp/sb")), PathBuf::from("/tmp/sb/mysqld.sock"));
        let long = PathBuf::from("/tmp").join("d".repeat(120));
        let s = socket_path(&long);
        assert!(s.as_os_str().len() < 100 && s.starts_with(std::env::temp_dir()), "{s:?}");
        assert_eq!(s, socket_path(&long));
    }

    #[test]
    fn the_last_errors_of_the_output_are_its_summary() {
        let out = "error: harmless 1\nerror: harmless 2\nerror: harmless 3\nnote\n[ERROR] the real one\nbye\n";
        assert_eq!(summarize_output(out), "error: harmless 2 | error: harmless 3 | [ERROR] the real one");
        assert_eq!(summarize_output("a\nb\nc\nd\n"), "b | c | d");
        assert_eq!(summarize_output("\n"), "no output");
    }
}
