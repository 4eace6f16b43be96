//! `versus server available mysql-8.0`: the releases of a series that can be fetched, newest first, with the
//! file that would be taken, its size and checksum when listed, and whether it is cached or registered.

use super::catalog::Catalog;
use super::{Want, cached, candidates, host_glibc, resolve, sites_for};
use crate::error::Result;
use crate::server::fetch::{FetchOptions, fail};
use crate::server::home::Home;

/// One fetchable release.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Offer {
    /// The SPEC that fetches it (`mysql-8.0.36`).
    pub release: String,
    /// The file that would be downloaded.
    pub file: String,
    /// Its size, when the catalog lists it.
    pub size: Option<u64>,
    /// `MD5:…` when the catalog lists it; `None`: read from the vendor when fetched.
    pub checksum: Option<String>,
    /// True when the catalog lists the file; false when its name comes from the naming pattern.
    pub listed: bool,
    /// True when a verified download is in the cache.
    pub cached: bool,
    /// True when a build of that name is registered.
    pub registered: bool,
}

/// The releases `want` (a series or a range) covers, newest first.
pub fn available(home: &Home, spec: &str, want: &Want, opts: &FetchOptions) -> Result<Vec<Offer>> {
    let err = |m: String| fail(spec, m);
    let cat = Catalog::load(&home.cache_dir()).map_err(err)?;
    let want = match want {
        Want::One(r) => Want::Newest(r.flavor, r.version.major, r.version.minor),
        w => w.clone(),
    };
    let releases = match &want {
        Want::Newest(f, a, b) => {
            let all = cat.releases(*f, *a, *b);
            if all.is_empty() {
                resolve(&cat, &want).map_err(err)?;
            }
            all
        }
        w => {
            let mut r = resolve(&cat, w).map_err(err)?;
            r.reverse();
            r
        }
    };
    let sites = sites_for(opts).map_err(err)?;
    let glibc = host_glibc();
    let mut out = Vec::new();
    for r in releases {
        let all = candidates(&cat, &sites, &r, glibc, opts.minimal);
        let Some(best) = all.first() else { continue };
        out.push(Offer {
            release: r.to_string(),
            file: best.file.clone(),
            size: best.size,
            checksum: best.checksum.as_ref().map(|c| c.to_string()),
            listed: best.listed,
            cached: all.iter().any(|c| cached(home, &c.file).is_some()),
            registered: home.build_dir(&r.to_string()).join("build.json").is_file(),
        });
    }
    Ok(out)
}
