//! Fetching a line from the Debian archive: discover its point versions, download the server packages (and,
//! for other releases, their shared libraries), extract them, patch them, register the tree.

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

use super::apt::{self, Offer, PrivateApt};
use super::spec::Line;
use super::{
    FetchOptions, Msg, Staging, debver, existing, fail, finish_layout, layout, respec, runtime, sources, tree_size,
};
use crate::error::Result;
use crate::server::build::{Build, Source, Version};
use crate::server::home::Home;

/// The host's Debian release (`VERSION_CODENAME` in os-release), if any.
fn host_release() -> Option<String> {
    let text = std::fs::read_to_string("/etc/os-release").ok()?;
    text.lines().find_map(|l| l.strip_prefix("VERSION_CODENAME=")).map(|v| v.trim_matches('"').to_string())
}

/// Opens the private apt state of `line`'s release and refreshes its lists.
fn open(home: &Home, line: &Line, log: &mut dyn FnMut(&str)) -> Msg<PrivateApt> {
    let archives = sources::system_archives(Path::new("/etc/apt")).ok_or(
        "no Debian archive in /etc/apt/sources.list or /etc/apt/sources.list.d; distribution packages need one",
    )?;
    let dir = home.cache_dir().join("apt").join(line.release);
    let (apt, missing) = PrivateApt::prepare(&dir, line.suites, &archives)?;
    if !missing.is_empty() {
        log(&format!("no security archive in the system's apt sources: reading without {}", missing.join(", ")));
    }
    log(&format!("reading {}", apt.origins.join(", ")));
    apt.update()?;
    Ok(apt)
}

/// The point versions of `line` among `offers` of its server package, oldest first, each with the newest
/// Debian package of that upstream version.
pub(super) fn point_versions(offers: &[Offer], line: &Line) -> Vec<(Version, Offer)> {
    let mut by_version: BTreeMap<Version, Offer> = BTreeMap::new();
    for o in offers.iter().filter(|o| o.package == line.server_package) {
        let Some(v) = debver::upstream(&o.version).filter(|v| line.holds(*v)) else { continue };
        match by_version.get(&v) {
            Some(have) if debver::compare(&have.version, &o.version).is_ge() => {}
            _ => {
                by_version.insert(v, o.clone());
            }
        }
    }
    by_version.into_iter().collect()
}

/// The version of `line` to fetch: `point` if the archive has it, else the newest.
pub(super) fn choose(versions: &[(Version, Offer)], line: &Line, point: Option<Version>) -> Msg<(Version, Offer)> {
    let list = || versions.iter().map(|(v, _)| format!("{}-{v}", line.flavor)).collect::<Vec<_>>().join(", ");
    match point {
        Some(want) => versions
            .iter()
            .find(|(v, _)| *v == want)
            .cloned()
            .ok_or_else(|| format!("{}-{want} is not in the archive now; available: {}", line.flavor, list())),
        None => versions.last().cloned().ok_or_else(|| format!("the archive has no {} packages now", line.name())),
    }
}

/// See [`super::available`].
pub fn available(home: &Home, spec: &str, line: &Line) -> Result<Vec<super::vendor::Offer>> {
    let apt = open(home, line, &mut |_| {}).map_err(|m| fail(spec, m))?;
    let offers = apt.madison(&[line.server_package]).map_err(|m| fail(spec, m))?;
    Ok(listing(&offers, line, &|name| existing(home, name).is_some()))
}

/// The point versions of `line` among `offers`, oldest first, in the columns of the vendor listing: the
/// file is the server package, its Debian version and suite; apt checks every package it downloads
/// against the SHA256 of the signed archive index; the size and a cache are not known (`None`,
/// `false`). `registered` says whether a build of a name is registered.
pub(super) fn listing(offers: &[Offer], line: &Line, registered: &dyn Fn(&str) -> bool) -> Vec<super::vendor::Offer> {
    point_versions(offers, line)
        .into_iter()
        .map(|(v, o)| {
            let release = format!("{}-{v}", line.flavor);
            super::vendor::Offer {
                registered: registered(&release),
                release,
                file: format!("{} {} ({})", o.package, o.version, o.suite),
                size: None,
                checksum: Some("SHA256 (apt)".into()),
                listed: true,
                cached: false,
            }
        })
        .collect()
}

/// See [`super::fetch`].
pub fn fetch(
    home: &Home,
    spec: &str,
    line: &Line,
    point: Option<Version>,
    opts: &FetchOptions,
    log: &mut dyn FnMut(&str),
) -> Result<Build> {
    let started = Instant::now();
    let err = |m: String| fail(spec, m);
    // When the name is known without asking the archive, a registered build is returned offline.
    let known_name = opts.name.clone().or_else(|| point.map(|v| format!("{}-{v}", line.flavor)));
    if !opts.force
        && let Some(build) = known_name.and_then(|n| existing(home, &n))
    {
        log(&format!("{} is already fetched (use --force to fetch it again)", build.name));
        return Ok(build);
    }
    let apt = open(home, line, log).map_err(err)?;
    let offers = apt.madison(&[line.server_package]).map_err(err)?;
    let (version, server) = choose(&point_versions(&offers, line), line, point).map_err(err)?;
    let name = opts.name.clone().unwrap_or_else(|| format!("{}-{version}", line.flavor));
    if !opts.force
        && let Some(build) = existing(home, &name)
    {
        log(&format!("{name} is already fetched (use --force to fetch it again)"));
        return Ok(build);
    }
    let private = host_release().as_deref() != Some(line.release);
    if private {
        runtime::patchelf().map_err(err)?;
    }
    log(&format!("{name}: {} {} from {}", line.server_package, server.version, server.suite));

    // The line's packages at the server's exact version when offered (mariadb-common etc. come from the same
    // source), otherwise their newest.
    let root_offers = apt.madison(line.packages).map_err(err)?;
    let mut roots = Vec::new();
    for pkg in line.packages {
        let same = root_offers.iter().find(|o| o.package == *pkg && o.version == server.version);
        let offer = same.or_else(|| apt::newest(&root_offers, pkg));
        let offer = offer.ok_or_else(|| err(format!("{pkg} is not in {}", apt.origins.join(", "))))?;
        roots.push((offer.package.clone(), offer.version.clone()));
    }
    let packages = apt.closure(&roots, private).map_err(err)?;

    let staging = Staging::new(home, &name).map_err(err)?;
    log(&format!(
        "downloading {} packages{}",
        packages.len(),
        if private { " (server and its shared libraries: private runtime)" } else { "" }
    ));
    let debs = apt.download(&packages, &staging.dir.join("debs")).map_err(err)?;
    log(&format!("extracting {} packages", debs.len()));
    apt::extract(&debs, &staging.tree()).map_err(err)?;
    let _ = crate::owned::remove(&staging.dir.join("debs"));
    let final_tree = home.build_dir(&name).join("tree");
    if private {
        let n = runtime::patch_tree(&staging.tree(), &final_tree).map_err(err)?;
        log(&format!("patched {n} programs to use the tree's own C library"));
    }

    let committed = staging.commit(home, &name).map_err(err)?;
    let layout = layout::detect_layout(&final_tree).map_err(|e| respec(spec, e))?;
    let (flavor, found, version_string) = layout::probe(&layout).map_err(|e| respec(spec, e))?;
    if flavor != line.flavor || found != version {
        return Err(err(format!(
            "the extracted server says it is {flavor} {found}, expected {} {version}",
            line.flavor
        )));
    }
    let build = Build {
        name: name.clone(),
        flavor,
        version: found,
        version_string,
        root: final_tree.clone(),
        layout: finish_layout(layout, flavor, found),
        source: Source::Apt {
            suite: server.suite.clone(),
            package_version: server.version.clone(),
            private_runtime: private,
        },
        size_bytes: tree_size(&final_tree),
    };
    committed.register(home, build, started, log)
}

#[cfg(test)]
mod tests {
    use super::super::spec::LINES;
    use super::*;

    fn offer(package: &str, version: &str, suite: &str) -> Offer {
        Offer { package: package.into(), version: version.into(), suite: suite.into() }
    }

    #[test]
    fn chooses_point_versions() {
        let line = &LINES[1]; // mariadb-10.11
        let offers = [
            offer("mariadb-server-core", "1:10.11.19-0+deb12u1", "bookworm-security"),
            offer("mariadb-server-core", "1:10.11.18-0+deb12u1", "bookworm"),
            offer("mariadb-server-core", "1:10.11.18-0+deb12u2", "bookworm"),
            offer("mariadb-server-core", "1:11.4.2-1", "bookworm"),
            offer("mariadb-client-core", "1:10.11.20-0+deb12u1", "bookworm"),
        ];
        let v = point_versions(&offers, line);
        assert_eq!(v.iter().map(|(v, _)| v.to_string()).collect::<Vec<_>>(), ["10.11.18", "10.11.19"]);
        assert_eq!(v[0].1.version, "1:10.11.18-0+deb12u2", "newest Debian revision of a point version");
        let (newest, o) = choose(&v, line, None).unwrap();
        assert_eq!((newest, o.suite.as_str()), (Version::new(10, 11, 19), "bookworm-security"));
        assert_eq!(choose(&v, line, Some(Version::new(10, 11, 18))).unwrap().0, Version::new(10, 11, 18));
        let e = choose(&v, line, Some(Version::new(10, 11, 99))).unwrap_err();
        assert_eq!(e, "mariadb-10.11.99 is not in the archive now; available: mariadb-10.11.18, mariadb-10.11.19");
        assert!(choose(&[], line, None).unwrap_err().contains("no mariadb-10.11 packages"));
    }

    #[test]
    fn the_listing_has_the_vendor_columns() {
        let line = &LINES[1]; // mariadb-10.11
        let offers = crate::server::fetch::apt::parse_madison(
            "mariadb-server-core | 1:10.11.18-0+deb12u2 | http://deb.debian.org/debian bookworm/main amd64 Packages\n\
             mariadb-server-core | 1:10.11.19-0+deb12u1 | http://security.debian.org bookworm-security/main amd64 Packages\n",
        );
        let rows = listing(&offers, line, &|name| name == "mariadb-10.11.18");
        let got: Vec<(&str, &str, bool)> =
            rows.iter().map(|o| (o.release.as_str(), o.file.as_str(), o.registered)).collect();
        assert_eq!(
            got,
            [
                ("mariadb-10.11.18", "mariadb-server-core 1:10.11.18-0+deb12u2 (bookworm)", true),
                ("mariadb-10.11.19", "mariadb-server-core 1:10.11.19-0+deb12u1 (bookworm-security)", false),
            ]
        );
        assert!(rows.iter().all(|o| o.size.is_none() && !o.cached && o.checksum.as_deref() == Some("SHA256 (apt)")));
    }
}
