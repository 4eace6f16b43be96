//! Nothing lost through a link: a symbolic link at any level of the versus home (the home itself,
//! `sandboxes/`, a sandbox, its datadir, `snapshots/`, a snapshot, `experiments/`, an experiment's work
//! directory and what is in it) that leads to a place versus did not make is refused with one line
//! naming the link and its target, and the place it leads to is left exactly as it was: nothing
//! written, emptied, deleted or given to another owner. Links to directories versus made are followed.

use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn versus(home: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_versus"))
        .args(args)
        .env("VERSUS_HOME", home)
        .env_remove("VERSUS_DB")
        .env_remove("RUST_BACKTRACE")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A directory of the user's: a file and a subdirectory with a file.
fn victim(path: &Path) -> PathBuf {
    std::fs::create_dir_all(path.join("sub")).unwrap();
    std::fs::write(path.join("precious.txt"), b"the user's data").unwrap();
    std::fs::write(path.join("sub/notes.txt"), b"more of it").unwrap();
    path.to_path_buf()
}

/// Everything about the tree at `dir` that a write, a removal, a chmod or a chown would change.
fn state(dir: &Path) -> BTreeMap<PathBuf, (u32, u32, u32, u64, i64, i64)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let m = std::fs::symlink_metadata(&p).unwrap();
        out.insert(
            p.strip_prefix(dir).unwrap().to_path_buf(),
            (m.mode(), m.uid(), m.gid(), m.len(), m.mtime(), m.mtime_nsec()),
        );
        if m.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().flatten().map(|e| e.path()));
        }
    }
    out
}

/// `out` is a refusal in one line that names `target`, the place the link leads to.
fn assert_refused(out: &Output, target: &Path, what: &str) {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(1), "{what}: {err}");
    assert!(err.starts_with("versus: error: ") && err.trim_end().lines().count() == 1, "{what}: {err}");
    assert!(err.contains("symbolic link") && err.contains(&target.display().to_string()), "{what}: {err}");
}

/// A versus home made by versus (`server fetch system` creates and marks it), stopped on drop.
struct Home {
    path: PathBuf,
}

impl Home {
    fn made_by_versus(path: &Path) -> Home {
        let out = versus(path, &["server", "fetch", "system"]);
        assert!(out.status.success(), "{}", stderr(&out));
        assert!(versus::owned::is_marked(path));
        Home { path: path.to_path_buf() }
    }
}

impl Drop for Home {
    fn drop(&mut self) {
        let _ = versus(&self.path, &["server", "stop", "--all"]);
    }
}

const EXPERIMENT: &str = r#"
name = "links"
builds = ["system"]
threads = [1]
duration = "1s"
prewarm = false
[[workloads]]
test = "oltp_point_select"
options = { tables = 1, table-size = 100 }
"#;

/// A level of the home, how a link is planted there, and the commands that write or delete there.
type Case<'a> = (&'a str, Box<dyn Fn(&Path, &Path)>, Vec<&'a [&'a str]>);

fn link_at(rel: &'static str) -> impl Fn(&Path, &Path) {
    move |home: &Path, target: &Path| {
        let link = home.join(rel);
        versus::owned::create_dir_all(link.parent().unwrap()).unwrap();
        symlink(target, &link).unwrap();
    }
}

#[test]
fn a_link_at_any_level_of_the_home_is_refused_before_a_server_starts() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("links.toml");
    std::fs::write(&file, EXPERIMENT).unwrap();
    let file = file.to_str().unwrap();
    let start: &[&str] = &["server", "start", "system", "--name", "s"];
    let fresh: &[&str] = &["server", "start", "system", "--name", "s", "--fresh"];
    let run: &[&str] = &["run", file];
    let cases: Vec<Case> = vec![
        ("sandboxes/", Box::new(link_at("sandboxes")), vec![start, &["server", "list"]]),
        ("sandboxes/NAME", Box::new(link_at("sandboxes/s")), vec![start, fresh, &["server", "stop", "s"]]),
        ("sandboxes/NAME/data", Box::new(link_at("sandboxes/s/data")), vec![start, fresh]),
        ("sandboxes/NAME/tmp", Box::new(link_at("sandboxes/s/tmp")), vec![start]),
        ("snapshots/", Box::new(link_at("snapshots")), vec![&["server", "snapshot", "s"], &["server", "restore", "s"]]),
        ("experiments/", Box::new(link_at("experiments")), vec![run]),
        ("experiments/NAME", Box::new(link_at("experiments/links")), vec![run]),
        ("experiments/NAME/run", Box::new(link_at("experiments/links/run")), vec![run]),
        ("experiments/NAME/prepare-0", Box::new(link_at("experiments/links/prepare-0")), vec![run]),
    ];
    for (i, (level, plant, commands)) in cases.iter().enumerate() {
        for (j, args) in commands.iter().enumerate() {
            let home = Home::made_by_versus(&t.path().join(format!("home-{i}-{j}")));
            let target = victim(&t.path().join(format!("victim-{i}-{j}")));
            plant(&home.path, &target);
            let before = state(&target);
            let out = versus(&home.path, args);
            assert_refused(&out, &target, &format!("{level}: {args:?}"));
            assert_eq!(state(&target), before, "{level}: {args:?} changed the user's directory");
        }
    }
}

#[test]
fn a_file_of_a_sandbox_that_is_a_link_is_not_written_through() {
    let t = tempfile::tempdir().unwrap();
    let home = Home::made_by_versus(&t.path().join("home"));
    let target = victim(&t.path().join("victim"));
    for name in ["root.password", "my.cnf", "error.log", "mysqld.pid", "sandbox.json"] {
        let sandbox = home.path.join("sandboxes/s");
        let _ = versus::owned::remove(&sandbox);
        versus::owned::create_dir_all(&sandbox).unwrap();
        symlink(target.join("precious.txt"), sandbox.join(name)).unwrap();
        let before = state(&target);
        let out = versus(&home.path, &["server", "start", "system", "--name", "s"]);
        assert_refused(&out, &target.join("precious.txt"), name);
        assert_eq!(state(&target), before, "{name}");
    }
}

#[test]
fn a_link_to_a_copy_of_a_datadir_the_user_made_is_refused() {
    // `cp -r data/* backup/`: the datadir record of earlier versions comes along, the marker does not.
    let t = tempfile::tempdir().unwrap();
    let home = Home::made_by_versus(&t.path().join("home"));
    let copy = victim(&t.path().join("backup"));
    std::fs::create_dir(copy.join("mysql")).unwrap();
    std::fs::write(copy.join("versus.json"), r#"{"build":"system","version":"10.11"}"#).unwrap();
    link_at("sandboxes/s/data")(&home.path, &copy);
    let before = state(&copy);
    for args in
        [&["server", "start", "system", "--name", "s", "--fresh"][..], &["server", "start", "system", "--name", "s"]]
    {
        let out = versus(&home.path, args);
        assert_refused(&out, &copy, &format!("{args:?}"));
    }
    assert_eq!(state(&copy), before);
}

#[test]
fn a_build_manifest_that_is_a_link_is_not_written_through() {
    let t = tempfile::tempdir().unwrap();
    let home = Home::made_by_versus(&t.path().join("home"));
    let target = victim(&t.path().join("victim"));
    let manifest = home.path.join("builds/system/build.json");
    std::fs::remove_file(&manifest).unwrap();
    symlink(target.join("precious.txt"), &manifest).unwrap();
    let before = state(&target);
    // Replaced as versus's own file or refused: either way the user's file is as it was.
    let _ = versus(&home.path, &["server", "fetch", "system", "--force"]);
    assert_eq!(state(&target), before);
}

#[test]
fn the_home_itself_is_followed_only_to_a_home_versus_made() {
    let t = tempfile::tempdir().unwrap();
    let target = victim(&t.path().join("victim"));
    let link = t.path().join("home");
    symlink(&target, &link).unwrap();
    let before = state(&target);
    for args in [&["server", "fetch", "system"][..], &["server", "start", "system", "--name", "s"], &["runs"]] {
        let out = versus(&link, args);
        assert_refused(&out, &target, &format!("{args:?}"));
        assert!(stderr(&out).starts_with("versus: error: VERSUS_HOME: "), "{}", stderr(&out));
    }
    assert_eq!(state(&target), before);

    // A link to a home versus made is followed.
    let real = Home::made_by_versus(&t.path().join("real"));
    let alias = t.path().join("alias");
    symlink(&real.path, &alias).unwrap();
    let out = versus(&alias, &["server", "list"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(String::from_utf8_lossy(&out.stdout).contains("system"), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn a_home_the_user_made_refuses_links_in_it_too() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("mine");
    std::fs::create_dir(&home).unwrap();
    let out = versus(&home, &["server", "fetch", "system"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let _guard = Home { path: home.clone() };
    // `sandboxes/` a link of the user's; then `sandboxes/` a directory of the user's, NAME a link in it.
    let first = victim(&t.path().join("victim-1"));
    symlink(&first, home.join("sandboxes")).unwrap();
    let before = state(&first);
    let out = versus(&home, &["server", "start", "system", "--name", "s"]);
    assert_refused(&out, &first, "sandboxes/");
    assert_eq!(state(&first), before);
    std::fs::remove_file(home.join("sandboxes")).unwrap();
    std::fs::create_dir(home.join("sandboxes")).unwrap();
    let second = victim(&t.path().join("victim-2"));
    symlink(&second, home.join("sandboxes/s")).unwrap();
    let before = state(&second);
    let out = versus(&home, &["server", "start", "system", "--name", "s"]);
    assert_refused(&out, &second, "sandboxes/NAME");
    assert_eq!(state(&second), before);
}

/// Swaps the entry `rel` of `home` for a link to `target` for the life of the value.
struct Swapped {
    entry: PathBuf,
    aside: PathBuf,
}

impl Swapped {
    fn new(home: &Path, rel: &str, target: &Path) -> Swapped {
        let entry = home.join(rel);
        let aside = home.join(format!("{}.aside", rel.replace('/', "_")));
        std::fs::rename(&entry, &aside).unwrap();
        symlink(target, &entry).unwrap();
        Swapped { entry, aside }
    }
}

impl Drop for Swapped {
    fn drop(&mut self) {
        std::fs::remove_file(&self.entry).unwrap();
        std::fs::rename(&self.aside, &self.entry).unwrap();
    }
}

#[test]
fn links_into_a_sandbox_that_exists_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let home = Home::made_by_versus(&t.path().join("home"));
    let h = home.path.as_path();
    for args in
        [&["server", "start", "system", "--name", "s"][..], &["server", "stop", "s"], &["server", "snapshot", "s"]]
    {
        let out = versus(h, args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
    let restore: &[&str] = &["server", "restore", "s", "--no-start"];
    let snapshot: &[&str] = &["server", "snapshot", "s"];
    let start: &[&str] = &["server", "start", "system", "--name", "s"];
    let fresh: &[&str] = &["server", "start", "system", "--name", "s", "--fresh"];
    // The user's directory: an empty one (a datadir would be initialised in it), one with files, and
    // a copy of the sandbox's own datadir or directory that the user moved away (its markers no longer
    // count: they record another path).
    let cases: [(&str, &[&[&str]]); 3] = [
        ("sandboxes/s/data", &[start, fresh, restore]),
        ("snapshots/s", &[snapshot, restore]),
        ("sandboxes/s", &[start, fresh, restore, snapshot]),
    ];
    for (i, (rel, commands)) in cases.iter().enumerate() {
        for (j, args) in commands.iter().enumerate() {
            // The copy (a whole datadir) is made for the first command of each level only.
            let kinds: &[&str] = if j == 0 { &["empty", "files", "moved"] } else { &["empty", "files"] };
            for (k, kind) in kinds.iter().enumerate() {
                let target = t.path().join(format!("victim-{i}-{j}-{k}"));
                match *kind {
                    "empty" => std::fs::create_dir(&target).unwrap(),
                    "files" => drop(victim(&target)),
                    _ => {
                        let out = Command::new("cp").arg("-a").arg(h.join(rel)).arg(&target).status().unwrap();
                        assert!(out.success());
                    }
                }
                let swapped = Swapped::new(h, rel, &target);
                let before = state(&target);
                let out = versus(h, args);
                drop(swapped);
                assert_refused(&out, &target, &format!("{rel} ({kind}): {args:?}"));
                assert_eq!(state(&target), before, "{rel} ({kind}): {args:?} changed the user's directory");
            }
        }
    }
    // With every link gone, the same commands work.
    for args in [restore, snapshot, fresh] {
        let out = versus(h, args);
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    }
}
