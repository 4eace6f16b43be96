//! my.cnf reader/writer: seed-config round trips, include resolution on disk, a differential check
//! against MariaDB's own `my_print_defaults`, property tests and a snapshot of a generated config.

use std::path::{Path, PathBuf};
use std::process::Command;

use proptest::prelude::*;
use versus::Error;
use versus::server::mycnf::{self, Directive, Entry, Line, MyCnf, Options, Section};

const SERVER: &[&str] = &["mysqld", "server", "mariadbd", "mariadb", "mysqld-8.0"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mycnf")
}

fn seed_files() -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(fixtures())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cnf"))
        .collect();
    files.push(fixtures().join("quirks/my.cnf"));
    files.sort();
    assert!(files.len() >= 5, "seed fixtures missing: {files:?}");
    files
}

/// (name, key, loose, values) of every effective option, in order.
fn summary(o: &Options) -> Vec<(String, String, bool, Vec<Option<String>>)> {
    o.iter().map(|e| (e.name.clone(), e.key.clone(), e.loose, e.values.clone())).collect()
}

#[test]
fn seed_configs_round_trip() {
    for path in seed_files() {
        let text = std::fs::read_to_string(&path).unwrap();
        let doc = MyCnf::read(&path).unwrap();
        // Untouched lines keep their text: byte-identical.
        assert_eq!(doc.to_text(), text, "{}", path.display());

        // The canonical form reads back as the same model and the same effective options...
        let mut normal = doc.clone();
        normal.normalize();
        let canonical = normal.to_text();
        let reread = MyCnf::parse(&canonical, &path).unwrap();
        assert_eq!(reread, doc, "{}", path.display());
        assert_eq!(summary(&reread.options(SERVER)), summary(&doc.options(SERVER)));
        // ...and is a fixed point: normalised files round-trip byte for byte.
        let mut again = reread.clone();
        again.normalize();
        assert_eq!(again.to_text(), canonical, "{}", path.display());
    }
}

#[test]
fn seed_config_values() {
    let o = mycnf::resolve(&fixtures().join("cz12a_c8r32.my80.cnf"), SERVER).unwrap();
    assert_eq!(o.value("innodb-buffer-pool-size"), Some(Some("23G")));
    assert_eq!(o.value("innodb_redo_log_capacity"), Some(Some("30G")));
    let w = o.get("innodb_log_writer_threads").unwrap();
    assert!(w.loose);
    assert_eq!((w.key.as_str(), w.value()), ("loose_innodb_log_writer_threads", Some("OFF")));
    // [mysqld_safe] is not a server group.
    assert!(!o.contains("malloc-lib"));
    assert_eq!(o.files(), [fixtures().join("cz12a_c8r32.my80.cnf")]);

    let o = mycnf::resolve(&fixtures().join("cz12a_c8r32.my84.cnf"), SERVER).unwrap();
    assert_eq!(o.value("mysql_native_password"), Some(Some("ON")));
    assert_eq!(o.value("innodb_buffer_pool_size"), Some(Some("23G")));
    let c = mycnf::resolve(&fixtures().join("cz12a_c8r32.my84.cnf"), &["client"]).unwrap();
    assert_eq!(c.value("ssl_mode"), Some(Some("DISABLED")));

    let o = mycnf::resolve(&fixtures().join("cy10a.my56.cnf"), SERVER).unwrap();
    assert_eq!(o.value("skip-name-resolve"), Some(None));
    let o = mycnf::resolve(&fixtures().join("cz12a_c8r32.ma1011.cnf"), &["mariadbd", "client-server"]).unwrap();
    assert_eq!(o.value("ssl"), Some(Some("0")));
    assert_eq!(o.get("ssl").unwrap().group, "client-server");
}

#[test]
fn quirks_fixture_resolves_includes() {
    let dir = fixtures().join("quirks");
    let o = mycnf::resolve(&dir.join("my.cnf"), SERVER).unwrap();
    let files: Vec<_> = o.files().iter().map(|p| p.strip_prefix(&dir).unwrap().to_path_buf()).collect();
    assert_eq!(
        files,
        [PathBuf::from("my.cnf"), "base.cnf".into(), "conf.d/10-early.cnf".into(), "conf.d/20-late.cnf".into()]
    );
    assert!(o.warnings().is_empty(), "{:?}", o.warnings());
    assert_eq!(o.value("port"), Some(Some("3306")));
    assert_eq!(o.value("skip_log_bin"), Some(None));
    assert_eq!(o.value("max_connections"), Some(Some("500")));
    assert_eq!(o.value("innodb_buffer_pool_size"), Some(Some("8G")));
    assert_eq!(o.value("plugin-load"), Some(Some("a.so;b.so")));
    assert_eq!(o.value("init_connect"), Some(Some("SET NAMES latin1")));
    assert_eq!(o.value("ft_boolean_syntax"), Some(Some(r#"+ -><()~*:""&|"#)));
    assert_eq!(o.value("log_error"), Some(Some("/var/log/mysql/error.log")));
    let p = o.get("plugin_load_add").unwrap();
    let plugins: Vec<_> = p.values.iter().flatten().map(String::as_str).collect();
    assert_eq!(plugins, ["ha_example.so", "auth_socket.so", "late.so"]);
    assert_eq!((p.path.as_deref(), p.line), (Some(dir.join("conf.d/20-late.cnf").as_path()), Some(3)));
    let c = mycnf::resolve(&dir.join("my.cnf"), &["client"]).unwrap();
    assert_eq!(c.value("socket"), Some(Some("/tmp/my sock.sock")));
}

/// Runs MariaDB's `my_print_defaults` on `file` (from its directory, as MySQL resolves relative
/// includes against the working directory) and folds its output with our rules.
fn print_defaults(file: &Path, groups: &[&str]) -> Option<Options> {
    let out = Command::new("my_print_defaults")
        .current_dir(file.parent().unwrap())
        .arg(format!("--defaults-file={}", file.display()))
        .args(groups)
        .output()
        .ok()?;
    assert!(out.status.success(), "my_print_defaults failed: {}", String::from_utf8_lossy(&out.stderr));
    let mut doc = MyCnf::new();
    let s = doc.section_mut("mysqld");
    for arg in String::from_utf8(out.stdout).unwrap().lines() {
        let arg = arg.strip_prefix("--").expect("--option");
        match arg.split_once('=') {
            Some((k, v)) => s.add(k, Some(v)),
            None => s.add(arg, None),
        };
    }
    Some(doc.options(&["mysqld"]))
}

#[test]
fn agrees_with_my_print_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let tricky = dir.path().join("tricky.cnf");
    std::fs::write(
        &tricky,
        concat!(
            "[MySQLd]\na=1\n[ mysqld]\nb=2\n[mysqld ]\nc=3\n[mysqld]  trailing junk\n",
            "x=it's # here\ny=\"a\\\"#b\" # c\nz=C:\\Program Files\\x\\\nw='hello\nv=\"\"\nu=\"\n",
            "t=a\\sb\\tc\nflag # =value\nk1 = 'x' 'y'\nloose_foo=1\nloose-foo\nsemi=a;b ;c\n",
            "  indented = yes\t\n\t; comment\n!unknown directive\n!include   missing.cnf  \n",
        ),
    )
    .unwrap();
    let mut files = seed_files();
    files.push(tricky);
    let mut compared = 0;
    for file in &files {
        let Some(theirs) = print_defaults(file, SERVER) else {
            eprintln!("my_print_defaults not installed; differential check skipped");
            return;
        };
        let ours = mycnf::resolve(file, SERVER).unwrap();
        assert_eq!(summary(&ours), summary(&theirs), "{}", file.display());
        compared += 1;
    }
    assert_eq!(compared, files.len());
}

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p
}

#[test]
fn includedir_reads_only_cnf_files_sorted_bytewise() {
    let d = tempfile::tempdir().unwrap();
    let top = write(d.path(), "my.cnf", "[mysqld]\n!includedir conf.d\nafter=1\n");
    write(d.path(), "conf.d/b.cnf", "[mysqld]\norder=b\n");
    write(d.path(), "conf.d/B.cnf", "[mysqld]\norder=B\n");
    write(d.path(), "conf.d/a.cnf", "[mysqld]\norder=a\n");
    write(d.path(), "conf.d/z.conf", "[mysqld]\norder=z\n");
    write(d.path(), "conf.d/c.cnf.bak", "[mysqld]\norder=c\n");
    write(d.path(), "conf.d/dir.cnf/inner.cnf", "[mysqld]\norder=inner\n");
    let o = mycnf::resolve(&top, SERVER).unwrap();
    let names: Vec<_> = o.files().iter().map(|p| p.file_name().unwrap().to_str().unwrap()).collect();
    assert_eq!(names, ["my.cnf", "B.cnf", "a.cnf", "b.cnf"]);
    assert_eq!(o.value("order"), Some(Some("b")));
    assert_eq!(o.value("after"), Some(Some("1")));
}

#[test]
fn include_paths_are_relative_to_the_including_file() {
    let d = tempfile::tempdir().unwrap();
    write(d.path(), "etc/my.cnf", "!include sub/one.cnf\n[mysqld]\nport=1\n");
    write(d.path(), "etc/sub/one.cnf", "[mysqld]\n!include two.cnf\nport=0\n");
    write(d.path(), "etc/sub/two.cnf", "[mysqld]\nsocket=/s\n");
    let abs = write(d.path(), "abs.cnf", "[mysqld]\nabs=yes\n");
    write(d.path(), "etc/three.cnf", &format!("!include {}\n", abs.display()));
    let o = mycnf::resolve(&d.path().join("etc/my.cnf"), SERVER).unwrap();
    assert_eq!(o.value("port"), Some(Some("1")));
    assert_eq!(o.value("socket"), Some(Some("/s")));
    let o = mycnf::resolve(&d.path().join("etc/three.cnf"), SERVER).unwrap();
    assert_eq!(o.value("abs"), Some(Some("yes")));
    // The same through a document in memory that lives at that path.
    let doc = MyCnf::read(&d.path().join("etc/my.cnf")).unwrap();
    assert_eq!(doc.resolve(&d.path().join("etc/my.cnf"), SERVER).unwrap().value("socket"), Some(Some("/s")));
}

#[test]
fn include_cycles_are_errors_naming_the_file() {
    let d = tempfile::tempdir().unwrap();
    let a = write(d.path(), "a.cnf", "[mysqld]\n!include b.cnf\n");
    write(d.path(), "b.cnf", "[mysqld]\n!include a.cnf\n");
    let err = mycnf::resolve(&a, SERVER).unwrap_err();
    let Error::File { path, message } = &err else { panic!("{err:?}") };
    assert_eq!(path, &d.path().join("a.cnf"));
    assert!(message.starts_with("include cycle ") && message.contains("b.cnf -> "), "{message}");
    let selfie = write(d.path(), "self.cnf", "!include self.cnf\n");
    assert!(mycnf::resolve(&selfie, SERVER).unwrap_err().to_string().contains("include cycle"));
    // Reading the same file twice is not a cycle.
    let diamond = write(d.path(), "top.cnf", "!include x.cnf\n!include x.cnf\n");
    write(d.path(), "x.cnf", "[mysqld]\nplugin-load-add=x.so\n");
    assert_eq!(mycnf::resolve(&diamond, SERVER).unwrap().get("plugin_load_add").unwrap().values.len(), 2);
}

#[test]
fn what_mysql_skips_becomes_a_warning_and_the_rest_errors() {
    let d = tempfile::tempdir().unwrap();
    let top = write(d.path(), "my.cnf", "[mysqld]\n!include gone.cnf\nport=1\n");
    let o = mycnf::resolve(&top, SERVER).unwrap();
    assert_eq!(o.value("port"), Some(Some("1")));
    assert!(o.warnings()[0].contains("gone.cnf does not exist; skipped"), "{:?}", o.warnings());

    let top = write(d.path(), "dir.cnf", "[mysqld]\n!includedir nowhere\n");
    let err = mycnf::resolve(&top, SERVER).unwrap_err().to_string();
    assert!(err.contains("nowhere: cannot read the directory named by '!includedir' in"), "{err}");

    let top = write(d.path(), "bad.cnf", "!include broken.cnf\n");
    write(d.path(), "broken.cnf", "# fine\nport=1\n");
    let err = mycnf::resolve(&top, SERVER).unwrap_err().to_string();
    assert!(err.contains("broken.cnf: line 2: an option outside any [group]"), "{err}");

    let err = mycnf::resolve(&d.path().join("absent.cnf"), SERVER).unwrap_err().to_string();
    assert!(err.contains("absent.cnf: the option file: cannot read"), "{err}");
}

/// An `!include` of a file that is no option file (a secret such as /etc/shadow) is refused by line
/// number: no error quotes a byte of what the included file holds, whichever rule the line breaks.
#[test]
fn a_refused_include_never_shows_the_included_text() {
    let d = tempfile::tempdir().unwrap();
    let secret = "s3cr3t-Hash$6$abc";
    let bodies = [
        format!("root:{secret}:19000:0:99999:7:::\n"),
        format!("[{secret}\n"),
        format!("[mysqld]\n ={secret}\n"),
        format!("{secret}=1\n[mysqld]\n"),
    ];
    for (i, body) in bodies.iter().enumerate() {
        write(d.path(), &format!("shadow{i}"), body);
        let top = write(d.path(), &format!("top{i}.cnf"), &format!("[mysqld]\nport=1\n!include shadow{i}\n"));
        let resolved = mycnf::resolve(&top, SERVER).unwrap_err().to_string();
        let checked = versus::server::managed::check_config_file(&top).unwrap_err().to_string();
        for err in [resolved, checked] {
            assert!(err.contains(&format!("shadow{i}: line ")), "{err}");
            assert!(!err.contains("s3cr3t") && !err.contains("root:"), "the included text leaked: {err}");
        }
    }
}

#[cfg(unix)]
#[test]
fn world_writable_files_are_ignored_like_mysql_does() {
    use std::os::unix::fs::PermissionsExt;
    let d = tempfile::tempdir().unwrap();
    let top = write(d.path(), "my.cnf", "[mysqld]\nport=1\n!include open.cnf\n");
    let open = write(d.path(), "open.cnf", "[mysqld]\nport=2\n");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o666)).unwrap();
    let o = mycnf::resolve(&top, SERVER).unwrap();
    assert_eq!(o.value("port"), Some(Some("1")));
    assert!(o.warnings()[0].contains("world-writable"), "{:?}", o.warnings());
}

#[test]
fn nesting_deeper_than_ten_is_skipped() {
    let d = tempfile::tempdir().unwrap();
    for i in 0..12 {
        write(d.path(), &format!("f{i}.cnf"), &format!("[mysqld]\nlevel={i}\n!include f{}.cnf\n", i + 1));
    }
    let o = mycnf::resolve(&d.path().join("f0.cnf"), SERVER).unwrap();
    // f0 is level 0; the directive in f10 is skipped, as MySQL does.
    assert_eq!(o.value("level"), Some(Some("10")));
    assert_eq!(o.files().len(), 11);
    assert!(o.warnings()[0].contains("f10.cnf: '!include f11.cnf' skipped"), "{:?}", o.warnings());
}

#[test]
fn errors_are_one_line_naming_file_and_line() {
    let err = MyCnf::parse("[mysqld]\nport=1\n\n\n\n\n\n\n\n\n\n[client\n", Path::new("/x/my.cnf")).unwrap_err();
    assert_eq!(err.to_string(), "/x/my.cnf: line 12: a group header has no closing ']'");
    let mut doc = MyCnf::new();
    let err = doc.apply_overrides(&["=5"]).unwrap_err().to_string();
    assert_eq!(err, "--set: '=5' has no option name; write --set name=value or --set name");
    assert!(!err.contains('\n'));
}

#[test]
fn generated_server_config_snapshot() {
    let mut cnf = MyCnf::new();
    cnf.preamble_mut().push(Line::comment("Generated by versus for sandbox 'demo'."));
    cnf.section_mut("client").set("socket", Some("/tmp/versus/demo/mysql.sock")).set("user", Some("root"));
    cnf.section_mut("mysqld")
        .set("basedir", Some("/opt/versus/builds/demo/tree"))
        .set("datadir", Some("/opt/versus/sandboxes/demo/data"))
        .set("port", Some("3402"))
        .set("bind-address", Some("127.0.0.1"))
        .set("socket", Some("/tmp/versus/demo/mysql.sock"))
        .set("skip-log-bin", None)
        .set("local_infile", Some("ON"))
        .set("secure_file_priv", Some(""))
        .set("loose-innodb-idle-flush-pct", Some("1"))
        .add("plugin-load-add", Some("ha_example.so"))
        .add("plugin-load-add", Some("auth_socket.so"))
        .set("init_connect", Some("SET NAMES utf8mb4 # not a comment"))
        .set("log-error", Some("/tmp/versus/demo/my error.log"))
        .comment("from --set");
    cnf.apply_overrides(&["innodb_buffer_pool_size=1G", "port=3500", "plugin_load_add=x.so"]).unwrap();
    let text = cnf.to_text();
    insta::assert_snapshot!(text, @r#"
    # Generated by versus for sandbox 'demo'.

    [client]
    socket=/tmp/versus/demo/mysql.sock
    user=root

    [mysqld]
    basedir=/opt/versus/builds/demo/tree
    datadir=/opt/versus/sandboxes/demo/data
    port=3500
    bind-address=127.0.0.1
    socket=/tmp/versus/demo/mysql.sock
    skip-log-bin
    local_infile=ON
    secure_file_priv=
    loose-innodb-idle-flush-pct=1
    plugin-load-add=ha_example.so
    plugin-load-add=auth_socket.so
    init_connect="SET NAMES utf8mb4 # not a comment"
    log-error=/tmp/versus/demo/my error.log
    # from --set
    innodb_buffer_pool_size=1G
    plugin_load_add=x.so
    "#);
    // What we wrote is what MySQL reads back.
    let o = MyCnf::parse(&text, Path::new("gen.cnf")).unwrap().options(SERVER);
    assert_eq!(o.value("port"), Some(Some("3500")));
    assert_eq!(o.value("secure-file-priv"), Some(Some("")));
    assert_eq!(o.value("init_connect"), Some(Some("SET NAMES utf8mb4 # not a comment")));
    assert_eq!(o.get("plugin_load_add").unwrap().values.len(), 3);
}

// ---- property tests ----

fn key() -> impl Strategy<Value = String> {
    ("(loose[-_])?", "[a-z_][a-z0-9_.-]{0,15}").prop_map(|(p, k)| p + &k)
}

fn trimmed(s: String) -> String {
    s.trim_matches([' ', '\t', '\n', '\x0b', '\x0c', '\r']).to_string()
}

fn entry() -> impl Strategy<Value = Line> {
    (key(), proptest::option::of(any::<String>()), proptest::option::of("[^\n\r]{0,20}".prop_map(trimmed))).prop_map(
        |(k, v, c)| {
            let e = Entry::new(&k, v.as_deref());
            Line::Entry(match c {
                Some(c) => e.with_comment(&c),
                None => e,
            })
        },
    )
}

fn inert_line() -> impl Strategy<Value = Line> {
    prop_oneof![
        Just(Line::Blank),
        "[ \t]{0,2}[#;][^\n]{0,30}".prop_map(Line::Comment),
        ("[a-zA-Z0-9_./-]{1,20}", any::<bool>()).prop_map(|(p, dir)| Line::Directive(if dir {
            Directive::include_dir(&p)
        } else {
            Directive::include(&p)
        })),
    ]
}

fn document() -> impl Strategy<Value = MyCnf> {
    let section =
        ("( ?[a-zA-Z0-9_.-]{1,12})?", prop::collection::vec(prop_oneof![1 => inert_line(), 3 => entry()], 0..8));
    (prop::collection::vec(inert_line(), 0..4), prop::collection::vec(section, 0..5)).prop_map(|(pre, secs)| {
        let mut doc = MyCnf::new();
        *doc.preamble_mut() = pre;
        for (name, lines) in secs {
            let mut s = Section::new(&name);
            *s.lines_mut() = lines;
            doc.sections_mut().push(s);
        }
        doc
    })
}

/// An entry line as people write them: spaces around `=`, quotes, trailing comments.
fn messy_entry_line() -> impl Strategy<Value = String> {
    (
        "[ \t]{0,2}",
        key(),
        proptest::option::of(("[ \t]{0,2}", "[ \t]{0,2}", "[^\n#'\"]{0,12}|\"[^\n\"\\\\]{0,12}\"|'[^\n'\\\\]{0,12}'")),
        "[ \t]{0,2}",
        proptest::option::of("#[^\n]{0,12}"),
    )
        .prop_map(|(lead, k, v, trail, c)| {
            let mut s = lead + &k;
            if let Some((a, b, v)) = v {
                s += &format!("{a}={b}{v}");
            }
            s += &trail;
            s + &c.unwrap_or_default()
        })
}

proptest! {
    #[test]
    fn any_document_round_trips(doc in document()) {
        let text = doc.to_text();
        let back = MyCnf::parse(&text, Path::new("prop.cnf")).unwrap();
        prop_assert_eq!(&back, &doc, "text:\n{}", text);
        prop_assert_eq!(back.to_text(), text);
    }

    #[test]
    fn messy_files_keep_bytes_and_meaning(lines in prop::collection::vec(prop_oneof![
        3 => messy_entry_line(),
        1 => "[ \t]{0,2}[#;][^\n]{0,20}",
        1 => Just(String::new()),
    ], 0..12)) {
        let text = format!("[mysqld]\n{}", lines.iter().map(|l| format!("{l}\n")).collect::<String>());
        let doc = MyCnf::parse(&text, Path::new("messy.cnf")).unwrap();
        prop_assert_eq!(doc.to_text(), text.clone());
        let mut normal = doc.clone();
        normal.normalize();
        let back = MyCnf::parse(&normal.to_text(), Path::new("messy.cnf")).unwrap();
        prop_assert_eq!(back, doc);
    }

    #[test]
    fn set_then_read_gives_the_value(k in key(), v in proptest::option::of(any::<String>())) {
        let mut doc = MyCnf::new();
        doc.section_mut("mysqld").set("port", Some("1")).set(&k, v.as_deref());
        let o = MyCnf::parse(&doc.to_text(), Path::new("set.cnf")).unwrap().options(&["mysqld"]);
        prop_assert_eq!(o.value(&k), Some(v.as_deref()));
    }
}

/// Lines mixing every character that matters to the reader. Backslash-n/r escapes are left out because
/// `my_print_defaults` prints the decoded newline, which would split its output.
fn hostile_line() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "[ \t]{0,2}[a-z_][a-z0-9_-]{0,6}[ \t]{0,2}(=[a-z0-9 \t=;#'\"\\\\.\\[\\]]{0,14})?",
        1 => "[ \t]{0,2}\\[[ a-z_-]{0,8}\\][ a-z#]{0,4}",
        1 => "[ \t]{0,2}[#;!][ -~]{0,10}",
    ]
    .prop_filter("no \\n or \\r escapes", |l| !l.contains("\\n") && !l.contains("\\r"))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_files_agree_with_my_print_defaults(lines in prop::collection::vec(hostile_line(), 0..10)) {
        let dir = tempfile::tempdir().unwrap();
        let text = format!("[mysqld]\n{}", lines.iter().map(|l| format!("{l}\n")).collect::<String>());
        let file = write(dir.path(), "fuzz.cnf", &text);
        let Ok(ours) = mycnf::resolve(&file, SERVER) else {
            // Our errors are a subset of MySQL's; an empty option name is the one case MySQL passes on.
            let status = Command::new("my_print_defaults").arg(format!("--defaults-file={}", file.display())).arg("mysqld").output();
            if let Ok(out) = status {
                let printed = String::from_utf8_lossy(&out.stdout);
                prop_assert!(!out.status.success() || printed.lines().any(|l| l.starts_with("--=")), "we rejected what MySQL accepts:\n{text}");
            }
            return Ok(());
        };
        if let Some(theirs) = print_defaults(&file, SERVER) {
            prop_assert_eq!(summary(&ours), summary(&theirs), "text:\n{}", text);
        }
    }
}

// ---------- managed options in every spelling the server accepts ----------

/// Forms the server accepts in front of an option name.
const NAME_FORMS: &[&str] = &["", "loose-", "loose_", "skip-", "skip_", "disable-", "enable-", "maximum-", "maximum_"];

/// A spelling of a managed option: a prefix of its name (the server takes unique prefixes), `-` or `_`
/// at each separator, any letter case, and up to two of the forms above in front.
fn managed_spelling() -> impl Strategy<Value = (String, &'static str)> {
    use versus::server::managed::MANAGED;
    (0..MANAGED.len(), 1usize..40, any::<u64>(), prop::collection::vec(0..NAME_FORMS.len(), 0..3)).prop_map(
        |(i, cut, bits, forms)| {
            let name = MANAGED[i].0;
            let mut s: String = name
                .chars()
                .take(cut.min(name.len()))
                .enumerate()
                .map(|(k, c)| match (c, bits >> (k % 64) & 1) {
                    ('-', 1) => '_',
                    (c, 1) => c.to_ascii_uppercase(),
                    (c, _) => c,
                })
                .collect();
            for f in forms {
                s = format!("{}{s}", NAME_FORMS[f]);
            }
            (s, name)
        },
    )
}

proptest! {
    #[test]
    fn no_spelling_of_a_managed_option_gets_through_set(spelling in managed_spelling()) {
        let (s, name) = spelling;
        for text in [format!("{s}=0.0.0.0"), s.clone()] {
            let e = versus::server::config::parse_override(&text);
            prop_assert!(e.is_err(), "--set {} (a spelling of {}) was accepted", text, name);
            let msg = e.unwrap_err().to_string();
            prop_assert!(msg.starts_with("--set: ") && msg.contains("managed by versus"), "{}", msg);
        }
    }
}

/// The values the real server ends up with for a sandbox's option file (`mariadbd --help --verbose`),
/// or `None` when it rejects the file (an ambiguous prefix, an option without a value).
fn server_values(cnf: &Path) -> Option<std::collections::HashMap<String, String>> {
    let out = Command::new("/usr/sbin/mariadbd")
        .arg(format!("--defaults-file={}", cnf.display()))
        .args(["--help", "--verbose"])
        .output()
        .ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8_lossy(&out.stdout);
    Some(
        text.lines()
            .filter_map(|l| l.split_once(char::is_whitespace))
            .map(|(k, v)| (k.to_string(), v.trim().to_string()))
            .collect(),
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A base config (`--config`) may spell the options the sandbox sets in any way: the server still
    /// ends up on 127.0.0.1, the sandbox's port, socket and datadir (checked with the server itself).
    #[test]
    fn no_spelling_in_a_config_file_moves_the_sandbox(spelling in managed_spelling()) {
        let (s, name) = spelling;
        let hostile = match name {
            "bind-address" => "0.0.0.0",
            "port" => "3306",
            "datadir" | "socket" | "tmpdir" | "pid-file" | "secure-file-priv" | "basedir" => "/var/lib/mysql",
            _ => return Ok(()),
        };
        let t = tempfile::tempdir().unwrap();
        let base = write(t.path(), "base.cnf", &format!("[mysqld]\n{s}={hostile}\n[mariadb]\n{s}={hostile}\n"));
        let sb = t.path().join("sb");
        let required: Vec<(String, Option<String>)> = vec![
            ("datadir".into(), Some(sb.join("data").display().to_string())),
            ("tmpdir".into(), Some(sb.join("tmp").display().to_string())),
            ("bind-address".into(), Some("127.0.0.1".into())),
            ("port".into(), Some("3999".into())),
            ("socket".into(), Some(sb.join("mysqld.sock").display().to_string())),
            ("pid-file".into(), Some(sb.join("mysqld.pid").display().to_string())),
            ("secure-file-priv".into(), Some(sb.join("files").display().to_string())),
        ];
        let text = versus::server::config::render("p", "system", Some(&base), &required, &[]).unwrap();
        let cnf = write(t.path(), "my.cnf", &text);
        if let Some(v) = server_values(&cnf) {
            prop_assert_eq!(v.get("bind-address").map(String::as_str), Some("127.0.0.1"), "{}", text);
            prop_assert_eq!(v.get("port").map(String::as_str), Some("3999"), "{}", text);
            let data = format!("{}/", sb.join("data").display());
            prop_assert_eq!(v.get("datadir").map(String::as_str), Some(data.as_str()), "{}", text);
            let sock = sb.join("mysqld.sock").display().to_string();
            prop_assert_eq!(v.get("socket").map(String::as_str), Some(sock.as_str()), "{}", text);
        }
    }
}

#[test]
fn the_server_reads_unique_prefixes_which_is_why_the_sandbox_comes_last() {
    let t = tempfile::tempdir().unwrap();
    let base = write(t.path(), "base.cnf", "[mysqld]\nbind-addr=0.0.0.0\nloose_port=3306\n");
    let alone = versus::server::config::render("p", "system", Some(&base), &[], &[]).unwrap();
    let v = server_values(&write(t.path(), "alone.cnf", &alone)).expect("mariadbd --help reads the file");
    assert_eq!((v["bind-address"].as_str(), v["port"].as_str()), ("0.0.0.0", "3306"), "prefixes reach the options");
    let required = vec![
        ("bind-address".to_string(), Some("127.0.0.1".to_string())),
        ("port".to_string(), Some("3999".to_string())),
    ];
    let text = versus::server::config::render("p", "system", Some(&base), &required, &[]).unwrap();
    let v = server_values(&write(t.path(), "my.cnf", &text)).unwrap();
    assert_eq!((v["bind-address"].as_str(), v["port"].as_str()), ("127.0.0.1", "3999"));
    let e = versus::server::config::render("p", "system", Some(&base), &required, &["bind-addr=127.0.0.2".into()]);
    assert!(e.unwrap_err().to_string().contains("read by the server as 'bind-address'"));
}
