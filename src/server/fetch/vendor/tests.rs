//! Resolution against the real entries of the vendors' listings (file names and URLs as published).

use super::*;

const HOST: Version = Version::new(2, 36, 0);

fn r(flavor: Flavor, v: &str) -> Release {
    Release::parse(flavor, v).unwrap()
}

fn best(flavor: Flavor, v: &str, minimal: bool) -> ReleaseFile {
    candidates(&Catalog::builtin(), &Sites::official(), &r(flavor, v), HOST, minimal).remove(0)
}

#[test]
fn mysql_8_0_36_is_the_glibc_2_28_tarball_with_its_archive_url() {
    let c = best(Flavor::Mysql, "8.0.36", false);
    assert_eq!(c.file, "mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz");
    assert!(c.urls.contains(
        &"https://downloads.mysql.com/archives/get/p/23/file/mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz".to_string()
    ));
    assert_eq!(c.urls[0], "https://dev.mysql.com/get/Downloads/MySQL-8.0/mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz");
    assert_eq!(c.size, Some(459718996));
    assert_eq!(c.checksum.unwrap().to_string(), "MD5:597a7520a80323b7d1819f0bad678324");
    let m = best(Flavor::Mysql, "8.0.36", true);
    assert_eq!(m.file, "mysql-8.0.36-linux-glibc2.17-x86_64-minimal.tar.xz");
    assert_eq!(m.checksum, None, "listed without a checksum: read from Oracle's page when fetched");
}

#[test]
fn listed_entries_of_5_5_to_9_5() {
    for (v, file, size, sum) in [
        ("5.5.62", "mysql-5.5.62-linux-glibc2.12-x86_64.tar.gz", Some(198993245), "SHA512:7bf9d740"),
        ("5.6.44", "mysql-5.6.44-linux-glibc2.12-x86_64.tar.gz", Some(329105487), "SHA512:cd638b1f"),
        ("5.7.26", "mysql-5.7.26-linux-glibc2.12-x86_64.tar.gz", Some(644869837), "SHA512:abc2e35b"),
        (
            "5.7.44",
            "mysql-5.7.44-linux-glibc2.12-x86_64.tar.gz",
            Some(694785800),
            "MD5:d7c8436bbf456e9a4398011a0c52bc40",
        ),
        ("8.0.15", "mysql-8.0.15-linux-glibc2.12-x86_64.tar.xz", Some(376303592), "SHA512:7bcb6e1b"),
        ("8.0.33", "mysql-8.0.33-linux-glibc2.28-x86_64.tar.gz", Some(539869923), "SHA512:31d58559"),
        ("8.4.0", "mysql-8.4.0-linux-glibc2.28-x86_64.tar.xz", Some(481157440), "MD5:fb98268a539ee9ec5ee6dabad1258229"),
        ("9.5.0", "mysql-9.5.0-linux-glibc2.28-x86_64.tar.xz", Some(986167928), "MD5:20544788df2bc6bfbfbe5a61b0d0e3db"),
    ] {
        let c = best(Flavor::Mysql, v, false);
        assert_eq!(c.file, file, "{v}");
        assert_eq!(c.size, size, "{v}");
        assert!(c.checksum.as_ref().unwrap().to_string().starts_with(sum), "{v}: {:?}", c.checksum);
        assert!(c.listed, "{v}");
    }
    // The listed archive URL comes first where the list has it.
    assert_eq!(
        best(Flavor::Mysql, "8.0.15", false).urls[0],
        "https://downloads.mysql.com/archives/get/p/23/file/mysql-8.0.15-linux-glibc2.12-x86_64.tar.xz"
    );
    for (v, file) in [
        ("8.0.20", "mysql-8.0.20-linux-x86_64-minimal.tar.xz"),
        ("8.0.26", "mysql-8.0.26-linux-glibc2.17-x86_64-minimal-rebuild.tar.xz"),
        ("8.0.31", "mysql-8.0.31-linux-glibc2.17-x86_64-minimal.tar.xz"),
        ("8.4.7", "mysql-8.4.7-linux-glibc2.17-x86_64-minimal.tar.xz"),
    ] {
        assert_eq!(best(Flavor::Mysql, v, true).file, file, "{v}");
    }
}

#[test]
fn unlisted_releases_are_named_by_pattern() {
    for (v, file) in [
        ("5.5.40", "mysql-5.5.40-linux2.6-x86_64.tar.gz"),
        ("5.6.21", "mysql-5.6.21-linux-glibc2.5-x86_64.tar.gz"),
        ("5.6.30", "mysql-5.6.30-linux-glibc2.5-x86_64.tar.gz"),
        ("5.6.51", "mysql-5.6.51-linux-glibc2.12-x86_64.tar.gz"),
        ("5.7.12", "mysql-5.7.12-linux-glibc2.5-x86_64.tar.gz"),
        ("5.7.25", "mysql-5.7.25-linux-glibc2.12-x86_64.tar.gz"),
        ("8.0.3", "mysql-8.0.3-rc-linux-glibc2.12-x86_64.tar.gz"),
        ("8.0.11", "mysql-8.0.11-linux-glibc2.12-x86_64.tar.gz"),
        ("8.0.30", "mysql-8.0.30-linux-glibc2.12-x86_64.tar.xz"),
        ("8.0.34", "mysql-8.0.34-linux-glibc2.28-x86_64.tar.gz"),
        ("8.0.44", "mysql-8.0.44-linux-glibc2.28-x86_64.tar.xz"),
        ("8.4.11", "mysql-8.4.11-linux-glibc2.28-x86_64.tar.xz"),
        ("9.7.2", "mysql-9.7.2-linux-glibc2.28-x86_64.tar.xz"),
    ] {
        let c = best(Flavor::Mysql, v, false);
        assert_eq!(c.file, file, "{v}");
        assert!(!c.listed && c.checksum.is_none() && c.size.is_none(), "{v}");
    }
    // An old host takes the old glibc build.
    let c =
        candidates(&Catalog::builtin(), &Sites::official(), &r(Flavor::Mysql, "8.0.44"), Version::new(2, 17, 0), false);
    assert_eq!(c[0].file, "mysql-8.0.44-linux-glibc2.17-x86_64.tar.xz");
    assert!(c.iter().all(|c| !c.file.contains("glibc2.28")));
}

#[test]
fn mariadb_and_percona_entries() {
    let c = best(Flavor::Mariadb, "10.6.21", false);
    assert_eq!(
        c.urls,
        [
            "https://archive.mariadb.org/mariadb-10.6.21/bintar-linux-systemd-x86_64/mariadb-10.6.21-linux-systemd-x86_64.tar.gz"
        ]
    );
    assert_eq!(c.checksum, None);
    let c = best(Flavor::Mariadb, "10.11.9", false);
    assert_eq!(
        c.checksum.unwrap().to_string(),
        "SHA256:c45becf9f8e9e90d9e32d5f2b4378cac971ef7a54c2ba4b668625e203285b5cb"
    );
    assert_eq!(best(Flavor::Mariadb, "11.8.3", false).file, "mariadb-11.8.3-linux-systemd-x86_64.tar.gz");
    let c = best(Flavor::Percona, "8.0.36-28", false);
    assert_eq!(
        c.urls,
        [
            "https://downloads.percona.com/downloads/Percona-Server-8.0/Percona-Server-8.0.36-28/binary/tarball/Percona-Server-8.0.36-28-Linux.x86_64.glibc2.17-minimal.tar.gz"
        ]
    );
    assert_eq!(
        c.checksum.unwrap().to_string(),
        "SHA256:11d87ec3620befa14f08be6ee4161968081c61104ac9df89d49f577f449bc204"
    );
    // An unlisted Percona release takes the highest glibc not above the host's.
    assert_eq!(
        best(Flavor::Percona, "8.0.39-30", false).file,
        "Percona-Server-8.0.39-30-Linux.x86_64.glibc2.35.tar.gz"
    );
    assert_eq!(
        best(Flavor::Percona, "8.0.39-30", true).file,
        "Percona-Server-8.0.39-30-Linux.x86_64.glibc2.35-minimal.tar.gz"
    );
}

#[test]
fn series_ranges_and_bad_versions() {
    let cat = Catalog::builtin();
    let labels = |w: Want| resolve(&cat, &w).unwrap().iter().map(|r| r.label()).collect::<Vec<_>>();
    assert_eq!(labels(parse_want(Flavor::Mysql, "8.0").unwrap()), ["8.0.44"]);
    assert_eq!(
        labels(parse_want(Flavor::Mysql, "8.0.27..8.0.31").unwrap()),
        ["8.0.27", "8.0.28", "8.0.30", "8.0.31"],
        "8.0.29 was withdrawn"
    );
    assert_eq!(
        labels(parse_want(Flavor::Mysql, "5.7.40..").unwrap()),
        ["5.7.40", "5.7.41", "5.7.42", "5.7.43", "5.7.44"]
    );
    let across = labels(parse_want(Flavor::Mysql, "8.0.44..8.4.2").unwrap());
    assert_eq!(across, ["8.0.44", "8.4.0", "8.4.2"]);
    let e = resolve(&cat, &parse_want(Flavor::Mysql, "8.0.29").unwrap()).unwrap_err();
    assert!(e.starts_with("mysql-8.0.29 was withdrawn by the vendor; nearest: mysql-8.0.30, mysql-8.0.28"), "{e}");
    let e = resolve(&cat, &parse_want(Flavor::Mysql, "7.1.3").unwrap()).unwrap_err();
    assert!(e.starts_with("unknown release mysql-7.1.3; nearest known: mysql-"), "{e}");
    let e = resolve(&cat, &parse_want(Flavor::Percona, "8.0.36").unwrap()).unwrap_err();
    assert!(e.contains("percona-8.0.36-N") && e.contains("percona-8.0.36-28"), "{e}");
    let e = resolve(&cat, &parse_want(Flavor::Mysql, "6.0").unwrap()).unwrap_err();
    assert!(e.contains("no mysql-6.0 releases") && e.contains("mysql-8.4"), "{e}");
    // A release newer than the catalog is fetched by pattern.
    assert_eq!(labels(parse_want(Flavor::Mysql, "8.4.12").unwrap()), ["8.4.12"]);
}

#[test]
fn glibc_tags_in_names() {
    assert_eq!(glibc_in_name("mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz"), Some(Version::new(2, 28, 0)));
    assert_eq!(glibc_in_name("mariadb-10.4.3-linux-glibc_214-x86_64.tar.gz"), Some(Version::new(2, 14, 0)));
    assert_eq!(
        glibc_in_name("Percona-Server-8.0.36-28-Linux.x86_64.glibc2.35-minimal.tar.gz"),
        Some(Version::new(2, 35, 0))
    );
    assert_eq!(glibc_in_name("mysql-5.5.40-linux2.6-x86_64.tar.gz"), None);
}
