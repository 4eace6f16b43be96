//! The line that tells a newcomer how to type `versus` as the README does, when the binary that runs is
//! not the `versus` their shell finds (the quick start builds it in `target/release/`).

use std::path::Path;

/// The shell command that puts `exe`'s directory first on the PATH, or `None` when the first `versus`
/// on `path` (a PATH value) already is `exe`.
pub fn hint(exe: &Path, path: Option<&std::ffi::OsStr>) -> Option<String> {
    let exe = std::fs::canonicalize(exe).ok()?;
    let found = path
        .into_iter()
        .flat_map(std::env::split_paths)
        .map(|d| d.join("versus"))
        .find(|p| p.is_file())
        .and_then(|p| std::fs::canonicalize(p).ok());
    if found.as_deref() == Some(exe.as_path()) {
        return None;
    }
    let dir = exe.parent()?.to_str()?;
    Some(format!("export PATH={}:\"$PATH\"", crate::shell::quote(dir)))
}

/// [`hint`] for the running binary and this process's PATH, as a line to print.
pub fn line() -> Option<String> {
    let exe = std::env::current_exe().ok()?;
    let cmd = hint(&exe, std::env::var_os("PATH").as_deref())?;
    Some(format!("to type `versus` as the README does, run: {cmd}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printed_command_makes_the_shell_find_this_binary() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("it's a dir");
        std::fs::create_dir(&bin).unwrap();
        let exe = bin.join("versus");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let cmd = hint(&exe, Some("/usr/bin:/bin".as_ref())).expect("a hint when PATH has no versus");
        let out = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("{cmd}; command -v versus"))
            .env("PATH", "/usr/bin:/bin")
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), exe.to_str().unwrap(), "{cmd}");
        let on_path = std::env::join_paths([bin.as_path(), Path::new("/usr/bin")]).unwrap();
        assert_eq!(hint(&exe, Some(&on_path)), None, "already the first versus on the PATH");
    }
}
