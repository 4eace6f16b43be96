//! `versus server fetch` from the vendors' archives, against a mirror the tests serve on 127.0.0.1 with the
//! vendors' layout. Its tarballs are built from binaries this machine has: Debian's MySQL 9.7 repackaged
//! as Oracle's `mysql-9.7.x-linux-glibc2.28-x86_64.tar.xz`, and Debian's MariaDB 11.8 as a
//! `linux-systemd-x86_64` bintar, with the checksum files the vendors publish. Nothing is downloaded from
//! a vendor.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use common::mirror::Mirror;
use versus::server::fetch::vendor::checksum::{Algo, hash_file};
use versus::server::{Build, Home, Source};

/// A tarball built for the mirror.
struct Tarball {
    /// The release it claims to be (`9.7.4`).
    version: String,
    /// The file.
    path: PathBuf,
}

impl Tarball {
    fn name(&self) -> String {
        self.path.file_name().unwrap().to_string_lossy().into_owned()
    }
}

struct Tarballs {
    mysql: Tarball,
    mariadb: Tarball,
}

fn sh(cmd: &mut Command) {
    let out = cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"));
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

fn copy(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.parent().unwrap()).unwrap();
    sh(Command::new("cp").arg("-a").arg(from).arg(to));
}

/// Where the tarballs are kept between test runs, next to the fetched Debian builds.
fn cache_root() -> PathBuf {
    std::env::var_os("VERSUS_TEST_BUILDS")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("versus-test-builds"))
        .join("mirror")
}

/// Packs `top` (a directory under `src`) as `dest`, written atomically.
fn pack(src: &Path, top: &str, dest: &Path, flag: &str) {
    let tmp = dest.with_extension("tmp");
    sh(Command::new("tar").env("XZ_OPT", "-0 -T2").env("GZIP", "-1").arg(flag).arg(&tmp).arg("-C").arg(src).arg(top));
    std::fs::rename(&tmp, dest).unwrap();
}

/// Oracle's layout from Debian's MySQL 9.7 tree: bin/, share/ (errmsg, charsets), lib/plugin.
fn mysql_tarball(build: &Build, dir: &Path) -> Tarball {
    let version = build.version.to_string();
    let top = format!("mysql-{version}-linux-glibc2.28-x86_64");
    let path = dir.join(format!("{top}.tar.xz"));
    if !path.is_file() {
        let src = dir.join("src-mysql");
        let _ = std::fs::remove_dir_all(&src);
        let usr = build.root.join("usr");
        let t = src.join(&top);
        copy(&usr.join("sbin/mysqld"), &t.join("bin/mysqld"));
        for b in ["mysql", "mysqladmin", "my_print_defaults"] {
            copy(&usr.join("bin").join(b), &t.join("bin").join(b));
        }
        copy(&usr.join("share/mysql"), &t.join("share"));
        std::fs::create_dir_all(t.join("lib/plugin")).unwrap();
        pack(&src, &top, &path, "-cJf");
        std::fs::remove_dir_all(&src).unwrap();
    }
    Tarball { version, path }
}

/// MariaDB's bintar layout from Debian's MariaDB 11.8 tree: bin/, scripts/mariadb-install-db, share/,
/// lib/plugin. Debian's install script looks for `sbin/mariadbd` and `share/mariadb`; the bintar's own
/// script looks in `bin/` and `share/`, so the copy is pointed there.
fn mariadb_tarball(build: &Build, dir: &Path) -> Tarball {
    let version = build.version.to_string();
    let top = format!("mariadb-{version}-linux-systemd-x86_64");
    let path = dir.join(format!("{top}.tar.gz"));
    if !path.is_file() {
        let src = dir.join("src-mariadb");
        let _ = std::fs::remove_dir_all(&src);
        let usr = build.root.join("usr");
        let t = src.join(&top);
        copy(&usr.join("sbin/mariadbd"), &t.join("bin/mariadbd"));
        std::os::unix::fs::symlink("mariadbd", t.join("bin/mysqld")).unwrap();
        for b in ["mariadb", "mariadb-admin", "my_print_defaults", "resolveip"] {
            copy(&usr.join("bin").join(b), &t.join("bin").join(b));
        }
        let script = std::fs::read_to_string(usr.join("bin/mariadb-install-db")).unwrap();
        let script = script
            .replace("$basedir/sbin/mariadbd", "$basedir/bin/mariadbd")
            .replace("$basedir/share/mariadb", "$basedir/share");
        std::fs::create_dir_all(t.join("scripts")).unwrap();
        std::fs::write(t.join("scripts/mariadb-install-db"), script).unwrap();
        sh(Command::new("chmod").arg("755").arg(t.join("scripts/mariadb-install-db")));
        copy(&usr.join("share/mariadb"), &t.join("share"));
        std::fs::create_dir_all(t.join("lib/plugin")).unwrap();
        pack(&src, &top, &path, "-czf");
        std::fs::remove_dir_all(&src).unwrap();
    }
    Tarball { version, path }
}

/// The tarballs, built once (and kept for later runs) under a lock shared by all test processes.
fn tarballs() -> &'static Tarballs {
    static T: OnceLock<Tarballs> = OnceLock::new();
    T.get_or_init(|| {
        let mysql = common::fetched_build("mysql-9.7");
        let mariadb = common::fetched_build("mariadb-11.8");
        let dir = cache_root();
        std::fs::create_dir_all(&dir).unwrap();
        let lock = std::fs::File::create(dir.join(".lock")).unwrap();
        let _guard = nix::fcntl::Flock::lock(lock, nix::fcntl::FlockArg::LockExclusive).expect("flock");
        Tarballs { mysql: mysql_tarball(&mysql, &dir), mariadb: mariadb_tarball(&mariadb, &dir) }
    })
}

/// Oracle's archive page for one release: the version selector and the file with its MD5.
fn mysql_page(dir: &Path, versions: &[&str], files: &[(&str, &str)]) -> PathBuf {
    let mut html = String::from("<html><select id=\"version\">");
    for v in versions {
        html.push_str(&format!("<option value=\"{v}\">{v}</option>"));
    }
    html.push_str("</select><table>");
    for (file, md5) in files {
        html.push_str(&format!(
            "<tr><td class=\"sub-text\">({file})</td><td class=\"md5\">MD5: <code class=\"md5\">{md5}</code></td></tr>"
        ));
    }
    let path = dir.join(format!("page-{}.html", files.first().map(|f| f.0).unwrap_or("empty")));
    std::fs::write(&path, html + "</table></html>").unwrap();
    path
}

/// A MariaDB release directory's `sha256sums.txt`, as MariaDB writes it (`./` before the names).
fn sums(dir: &Path, file: &str, hex: &str) -> PathBuf {
    let path = dir.join(format!("sums-{file}.txt"));
    std::fs::write(&path, format!("{hex}  ./{file}\n{}  ./{file}.asc\n", "0".repeat(64))).unwrap();
    path
}

fn mysql_page_path(version: &str) -> String {
    format!("/archives/community/?tpl=version&os=2&version={version}")
}

fn mariadb_dir(version: &str) -> String {
    format!("/mariadb-{version}/bintar-linux-systemd-x86_64")
}

/// `versus ARGS` with its own home, no mirror from the environment unless `env` gives one.
fn versus(home: &Path, args: &[&str], env: &[(&str, &str)]) -> (bool, String, String) {
    let mut c = assert_cmd::Command::cargo_bin("versus").unwrap();
    c.env("VERSUS_HOME", home).env_remove("VERSUS_MIRROR").args(args).timeout(std::time::Duration::from_secs(600));
    for (k, v) in env {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Asserts a one-line error containing `needle`, and returns it.
fn fails(home: &Path, args: &[&str], needle: &str) -> String {
    let (ok, out, err) = versus(home, args, &[]);
    assert!(!ok, "{args:?} should fail:\n{out}{err}");
    assert!(!err.contains("panicked"), "{err}");
    let last = err.trim().lines().last().unwrap_or("").to_string();
    assert!(last.contains(needle), "{args:?}: expected '{needle}' in the error:\n{err}");
    assert!(last.starts_with("versus: error: "), "{last}");
    last
}

/// Entries of `dir` but versus's ownership marker, sorted.
fn entries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    v.retain(|n| n != versus::owned::MARKER);
    v.sort();
    v
}

/// Entries of `builds/`, staging directories included.
fn builds(home: &Path) -> Vec<String> {
    entries(&home.join("builds"))
}

/// Files in the download cache.
fn downloads(home: &Path) -> Vec<String> {
    entries(&home.join("cache/downloads"))
}

fn sysbench(port: u16, user: &str, password: &str, db: &str, rest: &[&str]) -> String {
    let mut args: Vec<String> = vec![
        "oltp_read_write".into(),
        "--tables=1".into(),
        "--table-size=1000".into(),
        "--mysql-host=127.0.0.1".into(),
        format!("--mysql-port={port}"),
        format!("--mysql-user={user}"),
        format!("--mysql-password={password}"),
        format!("--mysql-db={db}"),
    ];
    args.extend(rest.iter().map(|s| s.to_string()));
    let o = common::versus_sysbench(&args.iter().map(String::as_str).collect::<Vec<_>>());
    let text = common::output_text(&o);
    assert!(o.status.success(), "sysbench {rest:?}:\n{text}");
    text
}

/// Starts `build` in a sandbox, runs a short benchmark and stops it; returns `SELECT VERSION()`. The
/// config is one for every version: `innodb_redo_log_capacity` (MySQL 8.0.30+) is translated for MariaDB.
fn benchmark(build: Build) -> String {
    use mysql::prelude::Queryable;
    let mut sb = common::start(build, &["innodb_buffer_pool_size=64M", "innodb_redo_log_capacity=96M"]);
    let mut root = sb.connect_root().unwrap();
    let redo: Vec<(String, String)> = root.query("SHOW GLOBAL VARIABLES LIKE 'innodb_%log_%'").unwrap();
    let get = |k: &str| redo.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone());
    match get("innodb_redo_log_capacity") {
        Some(cap) => assert_eq!(cap, (96u64 << 20).to_string()),
        None => assert_eq!(get("innodb_log_file_size"), Some((96u64 << 20).to_string()), "{redo:?}"),
    }
    let i = sb.info().clone();
    sysbench(i.port, &i.user, &i.password, &i.database, &["--threads=2", "prepare"]);
    let out = sysbench(i.port, &i.user, &i.password, &i.database, &["--threads=2", "--events=200", "--time=0", "run"]);
    let line = out.lines().find(|l| l.trim_start().starts_with("transactions:")).unwrap_or("").to_string();
    assert!(line.contains("200"), "{line}\n{out}");
    sysbench(i.port, &i.user, &i.password, &i.database, &["cleanup"]);
    let version = sb.version().to_string();
    sb.stop().unwrap();
    assert!(!sb.is_running());
    version
}

#[test]
fn mysql_and_mariadb_are_fetched_resumed_verified_started_and_benchmarked() {
    let t = tarballs();
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let mirror = Mirror::start();
    // MySQL: only in the archive (the current-releases path answers 404), cut off halfway once.
    let (mv, mfile) = (&t.mysql.version, t.mysql.name());
    let archive_path = format!("/archives/mysql-9.7/{mfile}");
    mirror.put(&archive_path, &t.mysql.path);
    mirror.drop_midway(&archive_path, 1);
    let md5 = hash_file(&t.mysql.path, Algo::Md5).unwrap();
    mirror.put(&mysql_page_path(mv), mysql_page(work.path(), &[mv], &[(&mfile, &md5)]));
    // MariaDB: the bintar and the directory's sha256sums.txt.
    let (av, afile) = (&t.mariadb.version, t.mariadb.name());
    mirror.put(&format!("{}/{afile}", mariadb_dir(av)), &t.mariadb.path);
    let sha = hash_file(&t.mariadb.path, Algo::Sha256).unwrap();
    mirror.put(&format!("{}/sha256sums.txt", mariadb_dir(av)), sums(work.path(), &afile, &sha));

    let spec = format!("vendor:mysql-{mv}");
    let (ok, out, err) = versus(&home, &["server", "fetch", &spec, "--mirror", &mirror.url()], &[]);
    assert!(ok, "{out}{err}");
    assert!(out.contains(&format!("registered mysql-{mv} (mysql {mv}")), "{out}");
    assert!(err.contains(&format!("checksum MD5:{md5}")), "{err}");
    assert!(err.contains("connection dropped") && err.contains("resuming"), "{err}");
    let reqs = mirror.requests();
    assert!(reqs.contains(&format!("GET /Downloads/MySQL-9.7/{mfile}")), "the current-releases path first: {reqs:?}");
    assert!(reqs.iter().any(|r| r.starts_with(&format!("GET {archive_path} Range:"))), "resumed with Range: {reqs:?}");
    assert_eq!(downloads(&home), [mfile.clone(), format!("{mfile}.verified")]);

    // The mirror from the environment, as VERSUS_MIRROR.
    let spec = format!("vendor:mariadb-{av}");
    let (ok, out, err) = versus(&home, &["server", "fetch", &spec], &[("VERSUS_MIRROR", &mirror.url())]);
    assert!(ok, "{out}{err}");
    assert!(err.contains(&format!("checksum SHA256:{sha}")), "{err}");

    // Offline: from the cache, verified again, no request.
    let before = mirror.requests().len();
    let (ok, out, err) =
        versus(&home, &["server", "fetch", &format!("vendor:mysql-{mv}"), "--offline", "--name", "again"], &[]);
    assert!(ok, "{out}{err}");
    assert!(err.contains("in the download cache"), "{err}");
    assert_eq!(mirror.requests().len(), before, "offline made requests");

    let h = Home::at(&home);
    let mysql = h.build(&format!("mysql-{mv}")).unwrap();
    let Source::Vendor { url, checksum, file } = &mysql.source else { panic!("{:?}", mysql.source) };
    assert_eq!(url, &format!("{}{archive_path}", mirror.url()));
    assert_eq!(checksum, &format!("MD5:{md5}"));
    assert!(file.is_file());
    assert!(mysql.layout.server.ends_with("bin/mysqld") && mysql.layout.install_db.is_none());
    let mariadb = h.build(&format!("mariadb-{av}")).unwrap();
    assert!(mariadb.layout.install_db.as_ref().is_some_and(|p| p.ends_with("scripts/mariadb-install-db")));
    assert_eq!(builds(&home), ["again".to_string(), format!("mariadb-{av}"), format!("mysql-{mv}")]);

    // An option the version does not know is refused before the server starts, naming the version.
    let dir = tempfile::tempdir().unwrap();
    let mut spec = versus::server::SandboxSpec::new("qc", mysql.clone(), dir.path().join("sb"));
    spec.overrides = vec!["query_cache_type=1".into()];
    let e = versus::server::Sandbox::start(spec).unwrap_err().to_string();
    assert!(e.contains("the query cache was removed in MySQL 8.0.3") && e.contains(&format!("mysql {mv}")), "{e}");
    assert!(!dir.path().join("sb/data").exists(), "no datadir made");

    assert!(benchmark(mysql).starts_with(mv.as_str()));
    assert!(benchmark(mariadb).starts_with(av.as_str()));
}

#[test]
fn bad_downloads_are_one_line_errors_and_leave_nothing_behind() {
    let t = tarballs();
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let mirror = Mirror::start();
    let url = mirror.url();
    let sha = hash_file(&t.mariadb.path, Algo::Sha256).unwrap();
    let serve_as = |version: &str, hex: &str| {
        let file = format!("mariadb-{version}-linux-systemd-x86_64.tar.gz");
        mirror.put(&format!("{}/{file}", mariadb_dir(version)), &t.mariadb.path);
        mirror.put(&format!("{}/sha256sums.txt", mariadb_dir(version)), sums(work.path(), &file, hex));
        format!("{}/{file}", mariadb_dir(version))
    };

    // A corrupted file: the published checksum does not match.
    serve_as("11.8.90", &"ab".repeat(32));
    let e = fails(
        &home,
        &["server", "fetch", "vendor:mariadb-11.8.90", "--mirror", &url],
        "checksum mismatch for mariadb-11.8.90",
    );
    assert!(
        e.contains(&format!("expected SHA256:{}", "ab".repeat(32))) && e.contains(&format!("got SHA256:{sha}")),
        "{e}"
    );
    assert!(downloads(&home).is_empty(), "{:?}", downloads(&home));

    // Not on the site at all.
    fails(&home, &["server", "fetch", "vendor:mariadb-11.8.91", "--mirror", &url], "is not on the vendor's site");
    // No network: nothing listens there.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let e = fails(
        &home,
        &["server", "fetch", "vendor:mariadb-11.8.9", "--mirror", &format!("http://127.0.0.1:{closed}")],
        "cannot reach 127.0.0.1",
    );
    assert!(e.contains("--offline") && e.contains("--mirror"), "{e}");
    fails(&home, &["server", "fetch", "vendor:mariadb-11.8.9", "--offline"], "is not in the download cache");
    fails(&home, &["server", "fetch", "mysql-7.1.3"], "unknown release mysql-7.1.3; nearest known: mysql-");
    fails(&home, &["server", "fetch", "mysql-8.0.29"], "was withdrawn by the vendor");
    fails(&home, &["server", "fetch", "system", "--mirror", &url], "--mirror applies to vendor releases");
    fails(
        &home,
        &["server", "fetch", "vendor:mysql-9.7.4", "--mirror", "ftp://x"],
        "is not an http:// or https:// URL",
    );

    // A tarball for another machine, behind a valid checksum.
    let arm = work.path().join("arm/mysql-9.7.91-linux-glibc2.28-x86_64");
    std::fs::create_dir_all(arm.join("bin")).unwrap();
    let mut elf = std::fs::read("/bin/true").unwrap();
    elf[18] = 183;
    elf[19] = 0;
    std::fs::write(arm.join("bin/mysqld"), elf).unwrap();
    let arm_tar = work.path().join("mysql-9.7.91-linux-glibc2.28-x86_64.tar.xz");
    pack(&work.path().join("arm"), "mysql-9.7.91-linux-glibc2.28-x86_64", &arm_tar, "-cJf");
    let arm_name = "mysql-9.7.91-linux-glibc2.28-x86_64.tar.xz";
    mirror.put(&format!("/Downloads/MySQL-9.7/{arm_name}"), &arm_tar);
    let md5 = hash_file(&arm_tar, Algo::Md5).unwrap();
    mirror.put(&mysql_page_path("9.7.91"), mysql_page(work.path(), &["9.7.91"], &[(arm_name, &md5)]));
    fails(&home, &["server", "fetch", "vendor:mysql-9.7.91", "--mirror", &url], "is built for aarch64");

    // A download cut off again and again is given up with its part kept; the next run resumes it. That file
    // then unpacks to another version than its name says: refused, nothing registered.
    let path = serve_as("11.8.93", &sha);
    mirror.drop_midway(&path, 1000);
    fails(&home, &["server", "fetch", "vendor:mariadb-11.8.93", "--mirror", &url], "kept in");
    assert!(downloads(&home).contains(&"mariadb-11.8.93-linux-systemd-x86_64.tar.gz.part".to_string()));
    mirror.drop_midway(&path, 0);
    let before = mirror.requests().len();
    fails(&home, &["server", "fetch", "vendor:mariadb-11.8.93", "--mirror", &url], "expected mariadb-11.8.93");
    assert!(mirror.requests()[before..].iter().any(|r| r.starts_with(&format!("GET {path} Range:"))), "resumed");

    // A tarball cut short at the vendor, its checksum published as it is: the reason names what is wrong.
    let bytes = std::fs::read(&t.mariadb.path).unwrap();
    let cut = work.path().join("cut.tar.gz");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let file = "mariadb-11.8.94-linux-systemd-x86_64.tar.gz";
    mirror.put(&format!("{}/{file}", mariadb_dir("11.8.94")), &cut);
    let cut_sha = hash_file(&cut, Algo::Sha256).unwrap();
    mirror.put(&format!("{}/sha256sums.txt", mariadb_dir("11.8.94")), sums(work.path(), file, &cut_sha));
    let e = fails(
        &home,
        &["server", "fetch", "vendor:mariadb-11.8.94", "--mirror", &url],
        "is not a readable tarball: truncated archive: the gzip data end early, after ",
    );
    assert!(!e.contains("failed to"), "not the tar crate's words: {e}");

    assert!(builds(&home).is_empty(), "left behind: {:?}", builds(&home));
    assert!(!downloads(&home).iter().any(|f| f.ends_with(".part")), "{:?}", downloads(&home));
}

#[test]
fn catalog_update_reads_the_vendors_listings() {
    let t = tarballs();
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let mirror = Mirror::start();
    let url = mirror.url();
    let (av, afile) = (&t.mariadb.version, t.mariadb.name());
    let sha = hash_file(&t.mariadb.path, Algo::Sha256).unwrap();
    let api = serde_json::json!({"releases": {
        av.as_str(): {"release_id": av, "files": [
            {"file_name": afile, "package_type": "gzipped tar file", "os": "Linux", "cpu": "x86_64",
             "checksum": {"md5sum": null, "sha1sum": null, "sha256sum": sha, "sha512sum": null}},
            {"file_name": format!("mariadb-{av}.tar.gz"), "os": "Source", "cpu": null, "checksum": {}}
        ]}
    }});
    let api_file = work.path().join("api.json");
    std::fs::write(&api_file, api.to_string()).unwrap();
    mirror.put("/rest-api/mariadb/11.8/", &api_file);
    mirror.put(&format!("{}/{afile}", mariadb_dir(av)), &t.mariadb.path);
    let (mv, mfile) = (&t.mysql.version, t.mysql.name());
    let md5 = hash_file(&t.mysql.path, Algo::Md5).unwrap();
    let page = mysql_page(work.path(), &[mv], &[(&mfile, &md5)]);
    mirror.put(&mysql_page_path("9.7.0"), &page);
    mirror.put(&mysql_page_path(mv), &page);

    let (ok, out, err) =
        versus(&home, &["server", "catalog", "update", "mariadb-11.8", "mysql-9.7", "--mirror", &url], &[]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("catalog updated: 2 series, 2 tarballs with checksums"), "{out}");
    assert!(home.join("cache/catalog.json").is_file());

    let (ok, out, err) = versus(&home, &["server", "available", "vendor:mariadb-11.8"], &[]);
    assert!(ok, "{out}{err}");
    let row = out.lines().find(|l| l.contains(&format!("mariadb-{av} "))).unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains(&afile) && row.contains("SHA256"), "{row}");
    let (ok, out, err) = versus(&home, &["server", "available", "vendor:mysql-9.7"], &[]);
    assert!(ok, "{out}{err}");
    let row = out.lines().find(|l| l.contains(&format!("mysql-{mv} "))).unwrap_or_else(|| panic!("{out}"));
    assert!(row.contains(&mfile) && row.contains("MD5"), "{row}");

    // Fetching now takes the checksum from the catalog: no sum file is asked for.
    let (ok, out, err) = versus(&home, &["server", "fetch", &format!("vendor:mariadb-{av}"), "--mirror", &url], &[]);
    assert!(ok, "{out}{err}");
    assert!(!mirror.requests().iter().any(|r| r.contains("sums.txt")), "{:?}", mirror.requests());
    let (ok, out, _) = versus(&home, &["server", "available", "vendor:mariadb-11.8"], &[]);
    let row = out.lines().find(|l| l.contains(&format!("mariadb-{av} "))).unwrap();
    assert!(ok && row.matches("yes").count() == 2, "cached and fetched: {row}");

    fails(
        &home,
        &["server", "catalog", "update", "percona-8.0", "--mirror", &url],
        "Percona publishes no release listing",
    );
}

#[test]
fn an_experiment_with_an_option_a_build_does_not_know_is_refused_before_it_runs() {
    let work = tempfile::tempdir().unwrap();
    let home = work.path().join("home");
    let (ok, out, err) = versus(&home, &["server", "fetch", "system"], &[]);
    assert!(ok, "{out}{err}");
    let file = work.path().join("exp.toml");
    // One config for several versions: innodb_file_format was removed in MariaDB 10.6.0.
    std::fs::write(
        &file,
        "name = \"formats\"\nbuilds = [\"system\"]\nthreads = [1]\nduration = \"2s\"\nrepetitions = 1\n\
         [[configs]]\nname = \"antelope\"\nset = { innodb_file_format = \"Antelope\" }\n\
         [[workloads]]\ntest = \"oltp_read_only\"\noptions = { tables = 1, table-size = 100 }\n",
    )
    .unwrap();
    let e = fails(
        &home,
        &["run", file.to_str().unwrap()],
        "innodb_file_format=Antelope: innodb_file_format was removed in MariaDB 10.6.0",
    );
    assert!(e.contains("target system/antelope: system: ") && e.contains("write loose-innodb_file_format"), "{e}");
    assert_eq!(entries(&home), ["builds"], "nothing ran, nothing was stored");
}

/// `diff-vars` marks a changed default that a release documents. No MySQL 8.0 or 8.4 binary can be had
/// on the test machine, so the two sides are snapshots with the documented defaults of 8.0.36 and 8.4.0
/// (as `SHOW GLOBAL VARIABLES` prints them), plus one difference no release documents.
#[test]
fn diff_vars_names_the_release_that_changed_a_default() {
    use versus::explain::{Snapshot, diff};
    use versus::report::explain::{OutputFormat, render_diff};
    let snap = |label: &str, version: &str, vars: &[(&str, &str)]| Snapshot {
        label: label.into(),
        build: Some(label.into()),
        server_version: Some(version.into()),
        variables: vars.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        explicit: Default::default(),
        session: Default::default(),
    };
    let a = snap(
        "mysql-8.0.36",
        "8.0.36",
        &[
            ("innodb_io_capacity", "200"),
            ("innodb_log_buffer_size", "16777216"),
            ("innodb_change_buffering", "all"),
            ("innodb_adaptive_hash_index", "ON"),
            ("innodb_flush_method", "fsync"),
            ("innodb_use_fdatasync", "OFF"),
            ("temptable_use_mmap", "ON"),
            ("table_open_cache", "4000"),
        ],
    );
    let b = snap(
        "mysql-8.4.0",
        "8.4.0",
        &[
            ("innodb_io_capacity", "10000"),
            ("innodb_log_buffer_size", "67108864"),
            ("innodb_change_buffering", "none"),
            ("innodb_adaptive_hash_index", "OFF"),
            ("innodb_flush_method", "O_DIRECT"),
            ("innodb_use_fdatasync", "ON"),
            ("temptable_use_mmap", "OFF"),
            ("table_open_cache", "2000"),
        ],
    );
    let d = diff(&a, &b);
    let doc = |n: &str| d.rows.iter().find(|r| r.name == n).and_then(|r| r.documented.clone());
    assert_eq!(doc("innodb_io_capacity").as_deref(), Some("MySQL 8.4.0 changed it: 200 → 10000"));
    assert_eq!(doc("innodb_change_buffering").as_deref(), Some("MySQL 8.4.0 changed it: all → none"));
    assert_eq!(doc("table_open_cache"), None, "no release documents this one");
    let text = render_diff(&d, false, OutputFormat::Markdown, false).unwrap();
    println!("{text}");
    assert!(text.contains("changed default (MySQL 8.4.0 changed it: fsync → O_DIRECT where supported)"), "{text}");
    // Across flavors nothing is attributed to a release.
    let maria = snap("mariadb-11.8.9", "11.8.9-MariaDB", &[("innodb_io_capacity", "200")]);
    assert!(diff(&maria, &b).rows.iter().all(|r| r.documented.is_none()));
}
