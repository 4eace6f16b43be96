//! Safe by default, as a user meets it: versus deletes only what it made (victim files survive every
//! way a name or a path reaches a removal), and names that would become paths are checked or made safe.

mod common;

use common::external_experiment;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn versus(home: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_versus"));
    c.args(args).env("VERSUS_HOME", home).env_remove("VERSUS_DB").env_remove("RUST_BACKTRACE").stdin(Stdio::null());
    c
}

/// A directory holding a file the user cares about.
fn victim(parent: &Path, name: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("precious.txt"), b"the user's data").unwrap();
    dir
}

fn assert_survived(dir: &Path) {
    assert_eq!(
        std::fs::read(dir.join("precious.txt")).unwrap_or_else(|e| panic!("{} was deleted: {e}", dir.display())),
        b"the user's data"
    );
}

fn stderr(o: &std::process::Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn experiment_names_that_look_like_paths_never_reach_the_users_files() {
    let server = common::start_server();
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let absolute = victim(t.path(), "absolute");
    let above = victim(t.path(), "above");
    let names = [absolute.display().to_string(), "../../above".to_string(), "with a space".into(), "x".repeat(300)];
    for (i, name) in names.iter().enumerate() {
        let file = t.path().join(format!("exp{i}.toml"));
        std::fs::write(&file, external_experiment(name, server.port)).unwrap();
        server.root_exec(&["DROP TABLE IF EXISTS sbtest.sbtest1"]);
        let out =
            versus(&home, &["run", file.to_str().unwrap()]).env("SAFETY_TEST_PW", &server.password).output().unwrap();
        assert!(out.status.success(), "{name:?}: {}", stderr(&out));
        let list = versus(&home, &["runs", name]).output().unwrap();
        assert!(String::from_utf8_lossy(&list.stdout).contains("done"), "{name:?} is kept as the label");
    }
    assert_survived(&absolute);
    assert_survived(&above);
    // Work directories stay inside the home, one per name.
    for e in std::fs::read_dir(home.join("experiments")).into_iter().flatten().flatten() {
        assert!(e.path().starts_with(home.join("experiments")), "{}", e.path().display());
    }
}

#[test]
fn fresh_never_empties_a_datadir_versus_did_not_make() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let out = versus(&home, &["server", "fetch", "system"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let data = victim(t.path(), "mydata");
    let out =
        versus(&home, &["server", "start", "system", "--name", "f", "--datadir", data.to_str().unwrap(), "--fresh"])
            .output()
            .unwrap();
    let err = stderr(&out);
    assert!(!out.status.success(), "{err}");
    assert!(err.starts_with("versus: error: ") && err.contains("not made by versus"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert_survived(&data);

    // A datadir versus initialised may be renewed with --fresh; the directory the user gave stays.
    let empty = t.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    for _ in 0..2 {
        let out = versus(
            &home,
            &["server", "start", "system", "--name", "g", "--datadir", empty.to_str().unwrap(), "--fresh"],
        )
        .output()
        .unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
        let stop = versus(&home, &["server", "stop", "g"]).output().unwrap();
        assert!(stop.status.success(), "{}", stderr(&stop));
    }
    assert!(empty.join("mysql").is_dir());
}

#[test]
fn sandbox_build_and_snapshot_names_are_checked_before_anything_is_touched() {
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let above = victim(t.path(), "above");
    let cases: [&[&str]; 6] = [
        &["server", "start", "system", "--name", "../../above"],
        &["server", "start", "../above"],
        &["server", "stop", "../../above"],
        &["server", "snapshot", "x", "--as", "../../above"],
        &["server", "restore", "../../above"],
        &["server", "fetch", "system", "--name", "../above"],
    ];
    for args in cases {
        let out = versus(&home, args).output().unwrap();
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(err.contains("is not a valid name") || err.contains("no such sandbox"), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    }
    assert_survived(&above);
}

#[test]
fn a_home_the_user_made_keeps_the_users_files_where_versus_would_write() {
    let t = tempfile::tempdir().unwrap();
    // VERSUS_HOME is a directory of the user's, with their own `snapshots/mine` in it.
    let home = t.path().join("work");
    let theirs = victim(&home.join("snapshots"), "mine");
    let out = versus(&home, &["server", "fetch", "system"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let out = versus(&home, &["server", "start", "system", "--name", "s"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let stop = versus(&home, &["server", "stop", "s"]).output().unwrap();
    assert!(stop.status.success(), "{}", stderr(&stop));
    let out = versus(&home, &["server", "snapshot", "s", "--as", "mine"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("versus did not create it") && err.trim_end().lines().count() == 1, "{err}");
    assert_survived(&theirs);
    // Snapshots versus made are replaced as before.
    for _ in 0..2 {
        let out = versus(&home, &["server", "snapshot", "s"]).output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let out = versus(&home, &["server", "restore", "s", "--no-start"]).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

/// A local OS account made for a test and removed when dropped.
struct LocalUser {
    name: String,
    uid: u32,
    gid: u32,
}

impl LocalUser {
    fn create(tag: &str) -> LocalUser {
        let name = format!("vsp{tag}{}", std::process::id());
        let out = Command::new("useradd").args(["-M", "-N", "-s", "/usr/sbin/nologin", &name]).output().unwrap();
        assert!(out.status.success(), "useradd (the test runs as root): {}", stderr(&out));
        let u = nix::unistd::User::from_name(&name).unwrap().expect("the new user");
        LocalUser { name, uid: u.uid.as_raw(), gid: u.gid.as_raw() }
    }

    /// Runs `sh -c script` as this user.
    fn sh(&self, script: &str) -> std::process::Output {
        use std::os::unix::process::CommandExt;
        Command::new("/bin/sh")
            .args(["-c", script])
            .current_dir("/")
            .stdin(Stdio::null())
            .gid(self.gid)
            .uid(self.uid)
            .output()
            .unwrap()
    }
}

impl Drop for LocalUser {
    fn drop(&mut self) {
        let _ = Command::new("userdel").arg(&self.name).output();
    }
}

fn mode(p: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).unwrap().permissions().mode() & 0o777
}

fn uid_of(pid: u32) -> u32 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|l| l.starts_with("Uid:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

/// The lockdown of one sandbox of `build`: the benchmark account cannot reach files or escalate, root is
/// reachable over the socket with the sandbox's password only, and another local user gets nowhere.
fn sandbox_is_locked_down(build: versus::server::Build, tag: &str) {
    use mysql::prelude::Queryable;
    use std::os::unix::fs::PermissionsExt;
    let t = tempfile::tempdir().unwrap();
    // Open the way to the sandbox, as a home below /var/lib or /srv would be, so that the server may run
    // as the unprivileged account.
    std::fs::set_permissions(t.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let spec = versus::server::SandboxSpec::new("lock", build, t.path().join("sb"));
    let sb = versus::server::Sandbox::start(spec).unwrap_or_else(|e| panic!("{e}"));
    let dir = sb.dir().to_path_buf();
    let files = dir.join("files");

    if let Ok(Some(mysql)) = nix::unistd::User::from_name(versus::server::lockdown::SERVER_ACCOUNT) {
        assert_eq!(uid_of(sb.pid()), mysql.uid.as_raw(), "the server runs as {}, not root", mysql.name);
    }
    for d in [dir.as_path(), sb.datadir(), files.as_path(), sb.socket().parent().unwrap()] {
        assert_eq!(mode(d), 0o700, "{}", d.display());
    }
    for f in ["root.password", "sandbox.json", "my.cnf", "init.sql"] {
        assert_eq!(mode(&dir.join(f)), 0o600, "{f}");
    }

    let mut root = sb.connect_root().expect("root over the socket with the generated password");
    // root at 'localhost' only (the install scripts also make root@<hostname>, on MariaDB with an empty
    // password), no anonymous account, and name resolution stays off (`--set` may not turn it on).
    let accounts: Vec<(String, String)> =
        root.query("SELECT user, host FROM mysql.user WHERE user IN ('root', '') ORDER BY host").unwrap();
    assert_eq!(accounts, [("root".to_string(), "localhost".to_string())]);
    let skip: Option<String> = root.query_first("SELECT @@skip_name_resolve").unwrap();
    assert_eq!(skip.as_deref(), Some("1"));
    let priv_dir: Option<String> = root.query_first("SELECT @@secure_file_priv").unwrap();
    assert_eq!(priv_dir.map(|p| p.trim_end_matches('/').to_string()), Some(files.display().to_string()));

    // The benchmark account: its workloads work, files and escalation do not.
    let mut c = sb.connect().expect("the benchmark account over TCP");
    c.query_drop("CREATE TABLE t (id INT PRIMARY KEY, v INT, KEY k (v))").unwrap();
    c.query_drop("INSERT INTO t VALUES (1, 1)").unwrap();
    c.query_drop("UPDATE t SET v = 2").unwrap();
    c.query_drop("ALTER TABLE t ADD INDEX k2 (v, id)").unwrap();
    c.query_drop("DELETE FROM t").unwrap();
    c.query_drop("DROP TABLE t").unwrap();
    for path in ["/etc/shadow", "/etc/passwd", &sb.root_password_file().display().to_string()] {
        let got: Option<Option<Vec<u8>>> = c.query_first(format!("SELECT LOAD_FILE('{path}')")).unwrap_or(None);
        assert!(got.flatten().is_none(), "LOAD_FILE('{path}') read a file");
    }
    let outfile = files.join("out.txt");
    for stmt in [
        format!("SELECT 'x' INTO OUTFILE '{}'", outfile.display()),
        format!("SELECT 'x' INTO DUMPFILE '{}'", files.join("dump.txt").display()),
        "GRANT ALL PRIVILEGES ON *.* TO 'sbtest'@'%'".into(),
        "GRANT SELECT ON `sbtest`.* TO 'sbtest'@'localhost' WITH GRANT OPTION".into(),
        "CREATE USER 'intruder'@'%' IDENTIFIED BY 'x'".into(),
        "SET GLOBAL general_log_file = '/tmp/versus-general.log'".into(),
        "SELECT * FROM mysql.user".into(),
        "CREATE DATABASE other_db".into(),
    ] {
        assert!(c.query_drop(&stmt).is_err(), "the benchmark account may not: {stmt}");
    }
    assert!(!outfile.exists());

    // root: never over TCP, with or without the password.
    let password = std::fs::read_to_string(sb.root_password_file()).unwrap().trim().to_string();
    assert!(versus::server::admin::connect_tcp(sb.port(), "root", None, None).is_err(), "root over TCP, no password");
    assert!(
        versus::server::admin::connect_tcp(sb.port(), "root", Some(&password), None).is_err(),
        "root over TCP with the password"
    );
    assert!(versus::server::admin::connect_socket(sb.socket(), "root", None).is_err(), "root without the password");

    // Another local user: no way through the socket, nothing to read in the sandbox.
    let other = LocalUser::create(tag);
    let client = "/usr/bin/mariadb";
    for user in ["-uroot", "-usbtest -psbpass"] {
        let out = other.sh(&format!("{client} --no-defaults -S '{}' {user} -e 'SELECT 1'", sb.socket().display()));
        let err = stderr(&out);
        assert!(!out.status.success() && err.contains("(13)"), "{user} through the socket: {err}");
    }
    for path in
        [sb.datadir().to_path_buf(), dir.join("root.password"), dir.join("my.cnf"), sb.datadir().join("ibdata1")]
    {
        let out = other.sh(&format!("cat '{0}' >/dev/null 2>&1 || ls '{0}' >/dev/null 2>&1", path.display()));
        assert!(!out.status.success(), "another user read {}", path.display());
    }
    drop(root);
}

#[test]
fn a_mariadb_sandbox_gives_nothing_away() {
    sandbox_is_locked_down(common::system_build(), "m");
}

#[test]
fn a_mariadb_11_8_sandbox_gives_nothing_away() {
    sandbox_is_locked_down(common::fetched_build("mariadb-11.8"), "n");
}

#[test]
fn a_mysql_9_7_sandbox_gives_nothing_away() {
    sandbox_is_locked_down(common::fetched_build("mysql-9.7"), "y");
}

#[test]
fn an_external_servers_tables_are_never_dropped_unless_the_target_says_so() {
    use mysql::prelude::Queryable;
    let server = common::start_server();
    server.root_exec(&[
        "CREATE TABLE sbtest.sbtest1 (id INT PRIMARY KEY, note VARCHAR(40))",
        "INSERT INTO sbtest.sbtest1 VALUES (1, 'the user''s row'), (2, 'another')",
    ]);
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let file = t.path().join("ext.toml");
    std::fs::write(&file, external_experiment("ext", server.port)).unwrap();
    let rows = || -> u64 {
        let mut c = server.root_conn();
        c.query_first("SELECT COUNT(*) FROM sbtest.sbtest1 WHERE note IS NOT NULL").unwrap().unwrap()
    };

    let dry = versus(&home, &["run", file.to_str().unwrap(), "--dry-run"])
        .env("SAFETY_TEST_PW", &server.password)
        .output()
        .unwrap();
    let plan = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{}", stderr(&dry));
    assert!(
        plan.contains("ext (external 127.0.0.1:")
            && plan.contains("prepare: CREATE TABLE sbtest.sbtest1; refused if any of them exists"),
        "{plan}"
    );
    assert!(plan.contains("runs: reads only; the tables are left in place"), "{plan}");

    let out = versus(&home, &["run", file.to_str().unwrap()]).env("SAFETY_TEST_PW", &server.password).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let list = versus(&home, &["runs", "ext"]).output().unwrap();
    let all = format!("{err}{}", String::from_utf8_lossy(&list.stdout));
    assert!(all.contains("table sbtest.sbtest1 already exists") && all.contains("replace_tables = true"), "{all}");
    assert_eq!(rows(), 2, "the user's rows survive");

    // With the target's consent, versus replaces its benchmark tables.
    let consenting = external_experiment("ext2", server.port)
        .replace("database = \"sbtest\"", "database = \"sbtest\"\nreplace_tables = true");
    std::fs::write(&file, consenting).unwrap();
    let dry = versus(&home, &["run", file.to_str().unwrap(), "--dry-run"])
        .env("SAFETY_TEST_PW", &server.password)
        .output()
        .unwrap();
    assert!(String::from_utf8_lossy(&dry.stdout).contains("DROP TABLE IF EXISTS and CREATE TABLE sbtest.sbtest1"));
    let out = versus(&home, &["run", file.to_str().unwrap()]).env("SAFETY_TEST_PW", &server.password).output().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn a_second_run_of_the_same_experiment_is_refused_while_the_first_runs() {
    let server = common::start_server();
    let t = tempfile::tempdir().unwrap();
    let home = t.path().join("home");
    let file = t.path().join("twice.toml");
    std::fs::write(&file, external_experiment("twice", server.port).replace("duration = \"1s\"", "duration = \"6s\""))
        .unwrap();
    let first = versus(&home, &["run", file.to_str().unwrap()])
        .env("SAFETY_TEST_PW", &server.password)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let lock = home.join("experiments/twice.lock");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !std::fs::read_to_string(&lock).is_ok_and(|s| s.contains(&format!("pid {}", first.id()))) {
        assert!(std::time::Instant::now() < deadline, "the first run never took its lock");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let second =
        versus(&home, &["run", file.to_str().unwrap()]).env("SAFETY_TEST_PW", &server.password).output().unwrap();
    let err = stderr(&second);
    assert_eq!(second.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(
        err.contains("experiment 'twice' is already running (pid ") && err.contains(&first.id().to_string()),
        "{err}"
    );
    let out = first.wait_with_output().unwrap();
    assert!(out.status.success(), "the first run is not disturbed");
    let runs = versus(&home, &["runs"]).output().unwrap();
    let listed = String::from_utf8_lossy(&runs.stdout).lines().filter(|l| l.contains("twice")).count();
    assert_eq!(listed, 1, "the second stored nothing");
}

#[test]
fn a_home_that_is_a_file_is_named_and_a_home_with_a_space_works() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("not-a-dir");
    std::fs::write(&file, b"the user's file").unwrap();
    let out = versus(&file, &["server", "fetch", "system"]).output().unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.starts_with("versus: error: VERSUS_HOME: ") && err.contains("is not a directory"), "{err}");
    assert_eq!(std::fs::read(&file).unwrap(), b"the user's file");

    let home = t.path().join("with space").join("home");
    let fetch = versus(&home, &["server", "fetch", "system"]).output().unwrap();
    assert!(fetch.status.success(), "{}", stderr(&fetch));
    let start = versus(&home, &["server", "start", "system", "--name", "sp"]).output().unwrap();
    // The printed client commands work as pasted into a shell, with the space in every path.
    let text = String::from_utf8_lossy(&start.stdout).into_owned();
    let hints: Vec<&str> =
        text.lines().skip_while(|l| *l != "connect with:").skip(1).take_while(|l| l.starts_with("  ")).collect();
    let ran: Vec<_> = hints
        .iter()
        .map(|h| Command::new("sh").arg("-c").arg(format!("{} -N -e 'SELECT 41 + 1'", h.trim())).output().unwrap())
        .collect();
    let stop = versus(&home, &["server", "stop", "sp"]).output().unwrap();
    assert!(start.status.success(), "a space in the home: {}", stderr(&start));
    assert!(stop.status.success(), "{}", stderr(&stop));
    assert_eq!(hints.len(), 2, "{text}");
    assert!(hints[1].contains("with space"), "the socket line names the socket: {text}");
    for (hint, out) in hints.iter().zip(&ran) {
        assert!(out.status.success() && String::from_utf8_lossy(&out.stdout).trim() == "42", "{hint}: {}", stderr(out));
    }
}
