//! A small tmpfs for the tests that need a full or read-only disk (the tests run as root).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs of a given size mounted at `dir` for the life of the value.
pub struct SmallDisk {
    pub dir: PathBuf,
}

impl SmallDisk {
    /// Mounts a tmpfs of `size` (`mount`'s notation: `2m`, `64m`) at `dir`, creating it.
    pub fn mount(dir: &Path, size: &str) -> SmallDisk {
        std::fs::create_dir_all(dir).unwrap();
        let out = Command::new("mount").args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"]).arg(dir).output();
        assert!(out.as_ref().is_ok_and(|o| o.status.success()), "cannot mount a tmpfs (needs root): {out:?}");
        SmallDisk { dir: dir.to_path_buf() }
    }

    /// Writes zeros into `name` until the file system is full; returns its path.
    pub fn fill(&self, name: &str) -> PathBuf {
        use std::io::Write;
        let path = self.dir.join(name);
        let mut f = std::fs::File::create(&path).unwrap();
        let chunk = vec![0u8; 64 * 1024];
        while f.write_all(&chunk).is_ok() {}
        while f.write_all(&chunk[..512]).is_ok() {}
        let _ = f.sync_all();
        path
    }

    /// Mounts it again read-only.
    pub fn read_only(&self) {
        let st = Command::new("mount").args(["-o", "remount,ro"]).arg(&self.dir).status().unwrap();
        assert!(st.success(), "cannot remount {} read-only", self.dir.display());
    }
}

impl Drop for SmallDisk {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.dir).status();
    }
}
