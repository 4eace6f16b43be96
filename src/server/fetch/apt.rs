//! A private apt state (lists, cache, sources and config under the versus cache) used to query and download
//! packages of any Debian suite without touching `/etc/apt` or the system's apt lists.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use super::Msg;
use super::debver;
use super::sources::Archives;

/// One package version an archive offers, as `apt-cache madison` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// Package name.
    pub package: String,
    /// Debian version (`1:10.11.19-0+deb12u1`).
    pub version: String,
    /// The suite serving it (`bookworm-security`).
    pub suite: String,
}

/// Parses `apt-cache madison` output: `pkg | version | URI suite/component arch Packages`.
pub fn parse_madison(text: &str) -> Vec<Offer> {
    let mut out = Vec::new();
    for line in text.lines() {
        let parts: Vec<&str> = line.split('|').map(str::trim).collect();
        let [package, version, origin] = parts[..] else { continue };
        if origin.ends_with("Sources") {
            continue;
        }
        let Some(dist) = origin.split_whitespace().nth(1) else { continue };
        let suite = dist.split('/').next().unwrap_or(dist);
        out.push(Offer { package: package.into(), version: version.into(), suite: suite.into() });
    }
    out
}

/// The fields of one `apt-cache show` record that dependency resolution needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Record {
    /// `Package:`.
    pub package: String,
    /// `Version:`.
    pub version: String,
    /// `Section:` (`libs`, `database` …).
    pub section: String,
    /// `Pre-Depends:` and `Depends:`, each as its alternatives' package names.
    pub depends: Vec<Vec<String>>,
}

impl Record {
    /// True for shared-library packages, which a private runtime must carry.
    pub fn is_library(&self) -> bool {
        let s = self.section.rsplit('/').next().unwrap_or("");
        s == "libs" || s == "oldlibs"
    }
}

/// Parses `apt-cache show` output into records.
pub fn parse_show(text: &str) -> Vec<Record> {
    let mut out = Vec::new();
    for stanza in text.split("\n\n") {
        let mut r = Record::default();
        for line in stanza.lines() {
            let Some((key, value)) = line.split_once(": ") else { continue };
            match key {
                "Package" => r.package = value.trim().into(),
                "Version" => r.version = value.trim().into(),
                "Section" => r.section = value.trim().into(),
                "Depends" | "Pre-Depends" => r.depends.extend(value.split(',').map(|dep| {
                    dep.split('|')
                        .filter_map(|alt| alt.split_whitespace().next())
                        .map(|name| name.split(':').next().unwrap_or(name).to_string())
                        .collect()
                })),
                _ => {}
            }
        }
        if !r.package.is_empty() && !r.version.is_empty() {
            out.push(r);
        }
    }
    out
}

/// The newest offer of `package` among `offers`.
pub fn newest<'a>(offers: &'a [Offer], package: &str) -> Option<&'a Offer> {
    offers.iter().filter(|o| o.package == package).max_by(|a, b| debver::compare(&a.version, &b.version))
}

/// apt configuration keys copied from the system's configuration so the private state reaches the archive the
/// same way (proxies, and `Check-Valid-Until` on machines that use a frozen mirror).
fn inherited(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    k.starts_with("acquire::")
        && (k.contains("proxy")
            || [
                "acquire::check-valid-until",
                "acquire::check-date",
                "acquire::retries",
                "acquire::forceipv4",
                "acquire::forceipv6",
            ]
            .contains(&k.as_str()))
}

/// A private apt state directory for a set of suites.
#[derive(Debug, Clone)]
pub struct PrivateApt {
    conf: PathBuf,
    /// The `URI suite` pairs it reads, for messages.
    pub origins: Vec<String>,
}

impl PrivateApt {
    /// Creates (or refreshes the configuration of) the state in `dir` reading `suites` from `archives`.
    /// Suites whose archive is not configured are left out and returned in the second value.
    pub fn prepare(dir: &Path, suites: &[&str], archives: &Archives) -> Msg<(PrivateApt, Vec<String>)> {
        let io = |p: &Path, e: std::io::Error| format!("cannot write {}: {e}", p.display());
        for sub in ["lists/partial", "cache/archives/partial", "empty"] {
            let d = dir.join(sub);
            crate::owned::create_dir_all(&d).map_err(|e| e.to_string())?;
        }
        let mut list = String::new();
        let mut origins = Vec::new();
        let mut missing = Vec::new();
        for suite in suites {
            match archives.uri_for(suite) {
                Some(uri) => {
                    list.push_str(&format!("deb [signed-by={}] {uri} {suite} main\n", archives.keyring));
                    origins.push(format!("{uri} {suite}"));
                }
                None => missing.push(suite.to_string()),
            }
        }
        let sources = dir.join("sources.list");
        std::fs::write(&sources, list).map_err(|e| io(&sources, e))?;
        let status = dir.join("status");
        if !status.exists() {
            std::fs::write(&status, "").map_err(|e| io(&status, e))?;
        }
        let d = dir.display();
        let mut conf = format!(
            "Dir::Etc::SourceList \"{d}/sources.list\";\nDir::Etc::SourceParts \"{d}/empty\";\n\
             Dir::Etc::Parts \"{d}/empty\";\nDir::Etc::Preferences \"{d}/empty/none\";\n\
             Dir::Etc::PreferencesParts \"{d}/empty\";\nDir::State \"{d}\";\nDir::State::Lists \"{d}/lists\";\n\
             Dir::State::status \"{d}/status\";\nDir::Cache \"{d}/cache\";\nAcquire::Languages \"none\";\n\
             APT::Sandbox::User \"root\";\n"
        );
        if let Ok(out) = Command::new("apt-config").arg("dump").env_remove("APT_CONFIG").output() {
            for line in String::from_utf8_lossy(&out.stdout).lines() {
                if line.split_whitespace().next().is_some_and(inherited) {
                    conf.push_str(line);
                    conf.push('\n');
                }
            }
        }
        let conf_path = dir.join("apt.conf");
        std::fs::write(&conf_path, conf).map_err(|e| io(&conf_path, e))?;
        Ok((PrivateApt { conf: conf_path, origins }, missing))
    }

    fn command(&self, program: &str) -> Command {
        tracing::debug!("{program} with APT_CONFIG={}", self.conf.display());
        let mut c = Command::new(program);
        c.env("APT_CONFIG", &self.conf).env("LC_ALL", "C").arg("-q");
        c
    }

    /// `apt-get update` on the private lists. apt reports unreachable archives as warnings and exits 0,
    /// so its output is read for failures too.
    pub fn update(&self) -> Msg<()> {
        let out = self
            .command("apt-get")
            .arg("update")
            .output()
            .map_err(|e| format!("cannot run apt-get (distribution packages need a Debian system): {e}"))?;
        let text = format!("{}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        let failed: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with("Err:") || l.starts_with("E:") || l.starts_with("W: Failed to fetch"))
            .collect();
        if !out.status.success() || !failed.is_empty() {
            let detail = text
                .lines()
                .find(|l| l.starts_with("W: Failed to fetch") || l.starts_with("E:"))
                .or(failed.first().copied())
                .unwrap_or("apt-get update failed")
                .trim_start_matches("W: ")
                .trim_start_matches("E: ");
            return Err(format!("cannot read {} ({detail})", self.origins.join(", ")));
        }
        Ok(())
    }

    /// Every version of `packages` the suites offer.
    pub fn madison(&self, packages: &[&str]) -> Msg<Vec<Offer>> {
        let out =
            self.command("apt-cache").arg("madison").args(packages).output().map_err(|e| format!("apt-cache: {e}"))?;
        Ok(parse_madison(&String::from_utf8_lossy(&out.stdout)))
    }

    /// `apt-cache show` records for `args` (`pkg` for the newest version or `pkg=version`). Names the suites do
    /// not have are left out.
    pub fn show(&self, args: &[String]) -> Msg<Vec<Record>> {
        let out = self
            .command("apt-cache")
            .args(["show", "--no-all-versions"])
            .args(args)
            .output()
            .map_err(|e| format!("apt-cache: {e}"))?;
        Ok(parse_show(&String::from_utf8_lossy(&out.stdout)))
    }

    /// The packages to download: `roots` (exact versions) plus, when `libraries` is set, the closure of
    /// their shared-library dependencies in the newest versions the suites hold.
    pub fn closure(&self, roots: &[(String, String)], libraries: bool) -> Msg<BTreeMap<String, String>> {
        let mut chosen = BTreeMap::new();
        let root_args: Vec<String> = roots.iter().map(|(p, v)| format!("{p}={v}")).collect();
        let records = self.show(&root_args)?;
        for (p, v) in roots {
            if !records.iter().any(|r| &r.package == p && &r.version == v) {
                return Err(format!("{p} {v} is not in {}", self.origins.join(", ")));
            }
            chosen.insert(p.clone(), v.clone());
        }
        if !libraries {
            return Ok(chosen);
        }
        let mut seen: HashSet<String> = roots.iter().map(|(p, _)| p.clone()).collect();
        let mut pending: Vec<Vec<String>> = records.iter().flat_map(|r| r.depends.clone()).collect();
        while !pending.is_empty() {
            let batch: Vec<Vec<String>> = std::mem::take(&mut pending)
                .into_iter()
                .filter(|alts| !alts.iter().any(|a| chosen.contains_key(a)))
                .filter(|alts| !alts.is_empty())
                .collect();
            let names: Vec<String> =
                batch.iter().map(|alts| alts[0].clone()).filter(|n| seen.insert(n.clone())).collect();
            if names.is_empty() {
                break;
            }
            let found = self.show(&names)?;
            for r in &found {
                if r.is_library() && !chosen.contains_key(&r.package) {
                    chosen.insert(r.package.clone(), r.version.clone());
                    pending.extend(r.depends.iter().cloned());
                }
            }
            // A dependency whose first alternative the suites lack (a virtual package): try the next one.
            for alts in batch {
                if alts.len() > 1 && names.contains(&alts[0]) && !found.iter().any(|r| r.package == alts[0]) {
                    pending.push(alts[1..].to_vec());
                }
            }
        }
        Ok(chosen)
    }

    /// Downloads `packages` (name → version) into `dir` and returns the `.deb` files.
    pub fn download(&self, packages: &BTreeMap<String, String>, dir: &Path) -> Msg<Vec<PathBuf>> {
        crate::owned::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        let args: Vec<String> = packages.iter().map(|(p, v)| format!("{p}={v}")).collect();
        let out = self
            .command("apt-get")
            .arg("download")
            .args(&args)
            .current_dir(dir)
            .output()
            .map_err(|e| format!("cannot run apt-get: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            let line = err.lines().find(|l| l.starts_with("E:")).unwrap_or("apt-get download failed");
            return Err(format!(
                "download from {} failed: {}",
                self.origins.join(", "),
                line.trim_start_matches("E: ")
            ));
        }
        let mut debs: Vec<PathBuf> = std::fs::read_dir(dir)
            .map_err(|e| format!("cannot read {}: {e}", dir.display()))?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "deb"))
            .collect();
        debs.sort();
        Ok(debs)
    }
}

/// Unpacks each `.deb` into `tree` with `dpkg -x`.
pub fn extract(debs: &[PathBuf], tree: &Path) -> Msg<()> {
    for deb in debs {
        let out = Command::new("dpkg")
            .arg("-x")
            .arg(deb)
            .arg(tree)
            .output()
            .map_err(|e| format!("cannot run dpkg (distribution packages need a Debian system): {e}"))?;
        if !out.status.success() {
            return Err(format!("dpkg -x {} failed: {}", deb.display(), String::from_utf8_lossy(&out.stderr).trim()));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_madison_output() {
        let text = "mariadb-server-core | 1:10.11.19-0+deb12u1 | http://m.example/debian-security bookworm-security/main amd64 Packages\n\
                    mariadb-server-core | 1:10.11.18-0+deb12u1 | http://m.example/debian bookworm/main amd64 Packages\n\
                    mariadb | 1:10.11.18-0+deb12u1 | http://m.example/debian bookworm/main Sources\n\
                    \x20    libc6 |     2.43-7 | http://m.example/debian sid/main amd64 Packages\n\
                    garbage line\n";
        let o = parse_madison(text);
        assert_eq!(o.len(), 3);
        assert_eq!(
            o[0],
            Offer {
                package: "mariadb-server-core".into(),
                version: "1:10.11.19-0+deb12u1".into(),
                suite: "bookworm-security".into()
            }
        );
        assert_eq!(o[2].package, "libc6");
        assert_eq!(o[2].suite, "sid");
        assert_eq!(newest(&o, "mariadb-server-core").unwrap().version, "1:10.11.19-0+deb12u1");
        assert_eq!(newest(&o, "nothing"), None);
    }

    #[test]
    fn newest_uses_debian_order_not_listing_order() {
        let o = parse_madison(
            "p | 1:10.5.9-1 | http://m/debian bullseye/main amd64 Packages\n\
             p | 1:10.5.29-0+deb11u1 | http://m/debian-security bullseye-security/main amd64 Packages\n",
        );
        assert_eq!(newest(&o, "p").unwrap().suite, "bullseye-security");
    }

    #[test]
    fn parses_show_records() {
        let text = "Package: mariadb-server-core-10.5\nVersion: 1:10.5.29-0+deb11u1\nSection: database\n\
                    Depends: mariadb-common (>= 1:10.5.29), libaio1 (>= 0.3.93), libgcc-s1 | libgcc1, libc6:any\n\
                    Description: x\n second line: with colon\n\n\
                    Package: libc6\nVersion: 2.31-13\nSection: libs\nPre-Depends: libgcc-s1\nDepends: libcrypt1\n";
        let r = parse_show(text);
        assert_eq!(r.len(), 2);
        assert_eq!(
            r[0].depends,
            vec![vec!["mariadb-common"], vec!["libaio1"], vec!["libgcc-s1", "libgcc1"], vec!["libc6"]]
        );
        assert!(!r[0].is_library());
        assert!(r[1].is_library());
        assert_eq!(r[1].depends, vec![vec!["libgcc-s1"], vec!["libcrypt1"]]);
    }

    #[test]
    fn unreachable_archives_are_errors_naming_the_suite() {
        let t = tempfile::tempdir().unwrap();
        let archives = Archives {
            main: "http://127.0.0.1:9/debian".into(),
            security: None,
            keyring: super::super::sources::DEFAULT_KEYRING.into(),
        };
        let (apt, missing) = PrivateApt::prepare(t.path(), &["sid", "trixie-security"], &archives).unwrap();
        assert_eq!(missing, ["trixie-security"]);
        let e = apt.update().unwrap_err();
        assert!(e.starts_with("cannot read http://127.0.0.1:9/debian sid ("), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn inherits_only_access_settings() {
        assert!(inherited("Acquire::Check-Valid-Until"));
        assert!(inherited("Acquire::http::Proxy"));
        assert!(inherited("Acquire::https::Proxy::deb.example"));
        assert!(!inherited("Acquire::Languages"));
        assert!(!inherited("Dir::Cache::pkgcache"));
        assert!(!inherited("APT::Get::Proxy"));
    }
}
