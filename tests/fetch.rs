//! `versus server fetch`: existing installs, tarballs, bad input, and a real Debian line (network, ~25 MB).
//!
//! These tests need the system's MariaDB server (`/usr/sbin/mariadbd`, package mariadb-server) and tar; the
//! line test needs Debian's archive and patchelf.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use versus::Error;
use versus::server::fetch::{self, FetchOptions};
use versus::server::{Flavor, Home, Source};

fn temp_home() -> (tempfile::TempDir, Home) {
    let dir = tempfile::tempdir().unwrap();
    let home = Home::at(dir.path().join("home"));
    (dir, home)
}

fn quiet() -> impl FnMut(&str) {
    |_: &str| {}
}

/// The fetch error's message, failing the test if it is not a fetch error for `spec`.
fn fetch_error(home: &Home, spec: &str) -> String {
    match fetch::fetch(home, spec, &FetchOptions::default(), &mut quiet()) {
        Err(Error::Fetch { spec: s, message }) => {
            assert_eq!(s, spec);
            assert!(!message.contains('\n'), "one-line message: {message}");
            message
        }
        other => panic!("{spec}: expected a fetch error, got {other:?}"),
    }
}

/// Names in `builds/`, hidden staging directories included.
/// What is in `builds/` besides versus's own-directory marker.
fn builds_entries(home: &Home) -> Vec<String> {
    match std::fs::read_dir(home.builds_dir()) {
        Ok(d) => d
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n != versus::owned::MARKER)
            .collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn system_install_is_detected_probed_and_registered_in_place() {
    let layout = fetch::detect_layout(Path::new("/usr")).unwrap();
    assert_eq!(layout.basedir, Path::new("/usr"));
    assert_eq!(layout.server, Path::new("/usr/sbin/mariadbd"));
    assert_eq!(layout.install_db.as_deref(), Some(Path::new("/usr/bin/mariadb-install-db")));
    assert_eq!(layout.client.as_deref(), Some(Path::new("/usr/bin/mariadb")));
    assert_eq!(layout.admin.as_deref(), Some(Path::new("/usr/bin/mariadb-admin")));
    assert_eq!(layout.plugin_dir, Path::new("/usr/lib/mysql/plugin"));
    assert!(layout.messages_dir.join("english/errmsg.sys").is_file(), "{}", layout.messages_dir.display());
    let (flavor, version, version_string) = fetch::probe(&layout).unwrap();
    assert_eq!(flavor, Flavor::Mariadb);
    assert!(version_string.starts_with(&version.to_string()), "{version_string} vs {version}");

    let (_t, home) = temp_home();
    let mut lines = Vec::new();
    let build = fetch::fetch(&home, "system", &FetchOptions::default(), &mut |l| lines.push(l.to_string())).unwrap();
    assert_eq!(build.name, "system");
    assert_eq!(build.root, Path::new("/usr"));
    assert_eq!(build.source, Source::Path);
    assert_eq!((build.flavor, build.version), (flavor, version));
    assert_eq!(build.layout, layout);
    // The server's own files, not all of /usr.
    assert!(build.size_bytes > 20_000_000 && build.size_bytes < 1_000_000_000, "{}", build.size_bytes);
    assert_eq!(home.build("system").unwrap(), build);
    assert!(!lines.is_empty());

    // Again: a no-op that says so; with --name: a second registration named as asked.
    let mut again = Vec::new();
    let same = fetch::fetch(&home, "/usr/", &FetchOptions::default(), &mut |l| again.push(l.to_string())).unwrap();
    assert_eq!(same, build);
    assert!(again.iter().any(|l| l.contains("already")), "{again:?}");
    let named = FetchOptions { name: Some("sys".into()), force: false, ..Default::default() };
    assert_eq!(fetch::fetch(&home, "system", &named, &mut quiet()).unwrap().name, "sys");
    let forced = FetchOptions { name: None, force: true, ..Default::default() };
    assert_eq!(fetch::fetch(&home, "system", &forced, &mut quiet()).unwrap(), build);
    let names: Vec<String> = home.builds().unwrap().into_iter().map(|b| b.name).collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// A MariaDB bintar-shaped tarball made from the system install: a real copy of the server, the install
/// script, errmsg and one plugin.
fn make_bintar(dir: &Path, version: &str) -> PathBuf {
    let top = format!("mariadb-{version}-linux-systemd-x86_64");
    let root = dir.join("src").join(&top);
    for d in ["bin", "scripts", "share/english", "lib/plugin"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    std::fs::copy("/usr/sbin/mariadbd", root.join("bin/mariadbd")).unwrap();
    std::os::unix::fs::symlink("mariadbd", root.join("bin/mysqld")).unwrap();
    std::fs::copy("/usr/bin/mariadb-install-db", root.join("scripts/mariadb-install-db")).unwrap();
    std::fs::copy("/usr/bin/my_print_defaults", root.join("bin/my_print_defaults")).unwrap();
    std::fs::copy("/usr/share/mysql/english/errmsg.sys", root.join("share/english/errmsg.sys")).unwrap();
    std::fs::copy("/usr/lib/mysql/plugin/ha_blackhole.so", root.join("lib/plugin/ha_blackhole.so")).unwrap();
    let file = dir.join(format!("{top}.tar.gz"));
    let ok = Command::new("tar").arg("-czf").arg(&file).arg("-C").arg(dir.join("src")).arg(&top).status().unwrap();
    assert!(ok.success());
    file
}

#[test]
fn bintar_is_unpacked_detected_probed_and_registered() {
    let system = fetch::probe(&fetch::detect_layout(Path::new("/usr")).unwrap()).unwrap();
    let t = tempfile::tempdir().unwrap();
    let file = make_bintar(t.path(), &system.1.to_string());
    let (_h, home) = temp_home();
    let build = fetch::fetch(&home, file.to_str().unwrap(), &FetchOptions::default(), &mut quiet()).unwrap();
    assert_eq!(build.name, format!("mariadb-{}", system.1));
    assert_eq!((build.flavor, build.version, build.version_string.as_str()), (system.0, system.1, system.2.as_str()));
    assert_eq!(build.source, Source::Tarball { file: file.clone() });
    let tree = home.build_dir(&build.name).join("tree");
    assert_eq!(build.root, tree);
    let base = tree.join(format!("mariadb-{}-linux-systemd-x86_64", system.1));
    assert_eq!(build.layout.basedir, base);
    assert_eq!(build.layout.server, base.join("bin/mariadbd"));
    assert_eq!(build.layout.install_db, Some(base.join("scripts/mariadb-install-db")));
    assert_eq!(build.layout.client, None);
    assert_eq!(build.layout.plugin_dir, base.join("lib/plugin"));
    assert_eq!(build.layout.messages_dir, base.join("share"));
    assert!(build.size_bytes > 20_000_000, "the copied server is in the tree: {}", build.size_bytes);
    // The registered server runs from its final place.
    assert_eq!(fetch::probe(&build.layout).unwrap().1, system.1);
    assert_eq!(home.build(&build.name).unwrap(), build);
    assert_eq!(builds_entries(&home), vec![build.name.clone()], "no staging left behind");
}

#[test]
fn bad_specs_are_one_line_errors_and_leave_nothing_behind() {
    let (t, home) = temp_home();
    let e = fetch_error(&home, "mariadb-12.9");
    assert!(e.contains("no mariadb-12.9 releases in the catalog") && e.contains("mariadb-10.6"), "{e}");
    let e = fetch_error(&home, "debian:mariadb-12.9");
    assert!(e.contains("unknown line mariadb-12.9") && e.contains("mariadb-10.11") && e.contains("mysql-9.7"), "{e}");

    let empty = t.path().join("not-a-server");
    std::fs::create_dir_all(empty.join("bin")).unwrap();
    std::fs::write(empty.join("bin/mysql"), "client only").unwrap();
    let e = fetch_error(&home, empty.to_str().unwrap());
    assert!(e.contains(&format!("no mysqld or mariadbd under {}", empty.display())), "{e}");

    let notes = t.path().join("notes.txt");
    std::fs::write(&notes, "hello").unwrap();
    assert!(fetch_error(&home, notes.to_str().unwrap()).contains("is not a tarball"));

    // A broken tarball is named with what is wrong with it, never tar's warnings or nothing at all.
    let garbage = t.path().join("garbage.tar.gz");
    std::fs::write(&garbage, "this is not gzip data at all").unwrap();
    let e = fetch_error(&home, garbage.to_str().unwrap());
    assert!(
        e.ends_with(
            "is not a readable tarball: it is not a gzip, xz or tar file (it starts with the bytes 74 68 69 73)"
        ),
        "{e}"
    );
    let page = t.path().join("mariadb-11.8.9-linux-systemd-x86_64.tar.gz");
    std::fs::write(&page, "<!DOCTYPE html>\n<html><body>Not Found</body></html>\n").unwrap();
    let e = fetch_error(&home, page.to_str().unwrap());
    assert!(
        e.ends_with(
            "is not a readable tarball: it is a web page, not an archive (the server sent a page instead of the file)"
        ),
        "{e}"
    );
    let big = t.path().join("big/top");
    std::fs::create_dir_all(&big).unwrap();
    let mut noise = vec![0u8; 1 << 20];
    std::io::Read::read_exact(&mut std::fs::File::open("/dev/urandom").unwrap(), &mut noise).unwrap();
    std::fs::write(big.join("mariadbd"), noise).unwrap();
    for (name, flag, kind) in [("cut.tar.gz", "-czf", "gzip"), ("cut.tar.xz", "-cJf", "xz")] {
        let cut = t.path().join(name);
        let tar = Command::new("tar").arg(flag).arg(&cut).arg("-C").arg(t.path().join("big")).arg("top").status();
        assert!(tar.unwrap().success());
        let bytes = std::fs::read(&cut).unwrap();
        std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
        let e = fetch_error(&home, cut.to_str().unwrap());
        let want = format!("is not a readable tarball: truncated archive: the {kind} data end early, after ");
        assert!(e.contains(&want) && e.contains("top/mariadbd"), "{e}");
    }

    let docs = t.path().join("docs");
    std::fs::create_dir_all(docs.join("share/doc")).unwrap();
    std::fs::write(docs.join("share/doc/README"), "no server here").unwrap();
    let docs_tar = t.path().join("docs-1.0.tar.xz");
    assert!(
        Command::new("tar").arg("-cJf").arg(&docs_tar).arg("-C").arg(&docs).arg("share").status().unwrap().success()
    );
    let e = fetch_error(&home, docs_tar.to_str().unwrap());
    assert!(e.contains("holds no MySQL or MariaDB server") && e.contains("removed what was unpacked"), "{e}");

    assert!(fetch_error(&home, "/no/such/dir").contains("no such file or directory"));
    let bad_name = FetchOptions { name: Some("../x".into()), force: false, ..Default::default() };
    assert!(fetch::fetch(&home, "system", &bad_name, &mut quiet()).is_err());

    assert!(builds_entries(&home).is_empty(), "left behind: {:?}", builds_entries(&home));
    assert!(matches!(fetch::available(&home, "mariadb-12.9"), Err(Error::Fetch { .. })));
    assert!(matches!(fetch::available(&home, "system"), Err(Error::Fetch { .. })));
    assert_eq!(fetch::lines(), ["mariadb-10.5", "mariadb-10.11", "mariadb-11.8", "mysql-9.7"]);
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Initialises, starts, queries and stops the fetched server; returns what `SELECT VERSION()` said.
fn run_server(build: &versus::server::Build, dir: &Path) -> String {
    let l = &build.layout;
    let data = dir.join("data");
    let init = Command::new(l.install_db.as_ref().unwrap())
        .arg("--no-defaults")
        .arg(format!("--basedir={}", l.basedir.display()))
        .arg(format!("--datadir={}", data.display()))
        .args(["--user=root", "--auth-root-authentication-method=normal", "--skip-test-db"])
        .output()
        .unwrap();
    assert!(init.status.success(), "install-db: {}", String::from_utf8_lossy(&init.stderr));
    let port = free_port();
    let mut server = Command::new(&l.server)
        .arg("--no-defaults")
        .arg(format!("--basedir={}", l.basedir.display()))
        .arg(format!("--datadir={}", data.display()))
        .arg(format!("--plugin-dir={}", l.plugin_dir.display()))
        .arg(format!("--lc-messages-dir={}", l.messages_dir.display()))
        .args(["--user=root", "--bind-address=127.0.0.1", &format!("--port={port}")])
        .arg(format!("--socket={}", dir.join("s.sock").display()))
        .arg(format!("--log-error={}", dir.join("error.log").display()))
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let query = || {
        Command::new(l.client.as_ref().unwrap())
            .args(["--no-defaults", "-h127.0.0.1", &format!("-P{port}"), "-uroot", "-N", "-e", "SELECT VERSION()"])
            .stderr(Stdio::null())
            .output()
            .unwrap()
    };
    let started = Instant::now();
    let answer = loop {
        let out = query();
        if out.status.success() {
            break Ok(String::from_utf8_lossy(&out.stdout).trim().to_string());
        }
        if server.try_wait().unwrap().is_some() || started.elapsed() > Duration::from_secs(60) {
            break Err(std::fs::read_to_string(dir.join("error.log")).unwrap_or_default());
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let pid = nix::unistd::Pid::from_raw(server.id() as i32);
    let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    let status = server.wait().unwrap();
    let answer = answer.unwrap_or_else(|log| panic!("server did not answer: {log}"));
    assert!(status.success(), "clean shutdown: {status}");
    answer
}

#[test]
fn mariadb_11_8_is_fetched_from_debian_and_runs() {
    let (t, home) = temp_home();
    let e = fetch_error(&home, "mariadb-11.8.999");
    assert!(e.contains("mariadb-11.8.999 is not in the archive now; available: mariadb-11.8."), "{e}");

    let mut lines = Vec::new();
    let build =
        fetch::fetch(&home, "mariadb-11.8", &FetchOptions::default(), &mut |l| lines.push(l.to_string())).unwrap();
    assert_eq!(build.flavor, Flavor::Mariadb);
    assert_eq!((build.version.major, build.version.minor), (11, 8));
    assert_eq!(build.name, format!("mariadb-{}", build.version));
    assert!(build.version_string.contains("MariaDB"), "{}", build.version_string);
    let Source::Apt { suite, package_version, private_runtime } = &build.source else { panic!("{:?}", build.source) };
    assert!(suite.starts_with("trixie"), "{suite}");
    assert!(package_version.contains(&build.version.to_string()), "{package_version}");
    assert!(*private_runtime, "bookworm cannot run trixie binaries with its own glibc");
    assert_eq!(build.root, home.build_dir(&build.name).join("tree"));
    assert!(build.layout.server.starts_with(&build.root) && build.layout.server.ends_with("usr/sbin/mariadbd"));
    assert!(build.layout.install_db.as_ref().is_some_and(|p| p.is_file()));
    assert!(build.size_bytes > 100_000_000, "{}", build.size_bytes);
    assert!(lines.iter().any(|l| l.contains("patched")), "{lines:?}");
    assert!(home.cache_dir().join("apt/trixie/sources.list").is_file(), "private apt state in the versus cache");

    let listed = fetch::available(&home, "mariadb-11.8").unwrap();
    let row = listed.iter().find(|o| o.release == build.name).unwrap_or_else(|| panic!("{listed:?}"));
    assert!(row.registered && row.file.contains(package_version.as_str()), "{row:?}");

    // Fetching again, by point version or by line, returns the registered build without downloading.
    for spec in [build.name.as_str(), "mariadb-11.8"] {
        let mut again = Vec::new();
        let same = fetch::fetch(&home, spec, &FetchOptions::default(), &mut |l| again.push(l.to_string())).unwrap();
        assert_eq!(same, build);
        assert!(again.iter().any(|l| l.contains("already fetched")), "{again:?}");
        assert!(!again.iter().any(|l| l.contains("downloading")), "{again:?}");
    }

    let answer = run_server(&build, t.path());
    assert!(answer.starts_with(&build.version.to_string()), "{answer}");
    assert_eq!(builds_entries(&home), vec![build.name.clone()]);
}
