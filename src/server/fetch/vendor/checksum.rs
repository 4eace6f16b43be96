//! Checksums as the vendors publish them: `ALGO:hex` in catalogs, coreutils sum files (MariaDB's
//! `sha256sums.txt`, Percona's `.sha256sum` sidecars) and the MD5 on Oracle's download pages.

use std::fmt;
use std::io::Read;
use std::path::Path;

use sha2::digest::DynDigest;

/// A hash function a vendor publishes sums of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Algo {
    /// MD5 (Oracle's download pages, MariaDB's md5sums.txt).
    Md5,
    /// SHA-1 (MariaDB's sha1sums.txt).
    Sha1,
    /// SHA-256 (MariaDB's sha256sums.txt, Percona's sidecars).
    Sha256,
    /// SHA-512 (MariaDB's sha512sums.txt).
    Sha512,
}

impl Algo {
    fn parse(name: &str) -> Option<Algo> {
        match name.to_ascii_uppercase().replace('-', "").as_str() {
            "MD5" => Some(Algo::Md5),
            "SHA1" => Some(Algo::Sha1),
            "SHA256" => Some(Algo::Sha256),
            "SHA512" => Some(Algo::Sha512),
            _ => None,
        }
    }

    /// Length of the hex digest.
    pub fn hex_len(self) -> usize {
        match self {
            Algo::Md5 => 32,
            Algo::Sha1 => 40,
            Algo::Sha256 => 64,
            Algo::Sha512 => 128,
        }
    }

    fn hasher(self) -> Box<dyn DynDigest> {
        match self {
            Algo::Md5 => Box::new(md5::Md5::default()),
            Algo::Sha1 => Box::new(sha1::Sha1::default()),
            Algo::Sha256 => Box::new(sha2::Sha256::default()),
            Algo::Sha512 => Box::new(sha2::Sha512::default()),
        }
    }

    /// The name of MariaDB's sum file for this function (`sha256sums.txt`).
    pub fn sums_file(self) -> &'static str {
        match self {
            Algo::Md5 => "md5sums.txt",
            Algo::Sha1 => "sha1sums.txt",
            Algo::Sha256 => "sha256sums.txt",
            Algo::Sha512 => "sha512sums.txt",
        }
    }
}

impl fmt::Display for Algo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Algo::Md5 => "MD5",
            Algo::Sha1 => "SHA1",
            Algo::Sha256 => "SHA256",
            Algo::Sha512 => "SHA512",
        })
    }
}

/// A digest to check a file against: the function and the lowercase hex digest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checksum {
    /// The hash function.
    pub algo: Algo,
    /// Lowercase hex.
    pub hex: String,
}

impl Checksum {
    /// A checksum from a function and a hex digest of the right length.
    pub fn new(algo: Algo, hex: &str) -> Result<Checksum, String> {
        let hex = hex.trim().to_ascii_lowercase();
        if hex.len() != algo.hex_len() || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!("'{hex}' is not a {algo} digest ({} hex digits)", algo.hex_len()));
        }
        Ok(Checksum { algo, hex })
    }

    /// Parses `ALGO:hex` as catalogs write it (`MD5:597a…`, `SHA512: 7bf9…`; spaces around the colon allowed).
    pub fn parse(text: &str) -> Result<Checksum, String> {
        let (algo, hex) =
            text.split_once(':').ok_or_else(|| format!("'{text}' is not of the form ALGO:hex (MD5:…, SHA256:…)"))?;
        let algo = Algo::parse(algo.trim())
            .ok_or_else(|| format!("'{}' is not a known checksum (MD5, SHA1, SHA256, SHA512)", algo.trim()))?;
        Checksum::new(algo, hex)
    }

    /// Hashes the file at `path` and compares. `Err` carries the digest that was computed.
    pub fn verify(&self, path: &Path) -> std::io::Result<Result<(), String>> {
        let got = hash_file(path, self.algo)?;
        Ok(if got == self.hex { Ok(()) } else { Err(got) })
    }
}

impl fmt::Display for Checksum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.algo, self.hex)
    }
}

/// The lowercase hex digest of the file at `path`.
pub fn hash_file(path: &Path, algo: Algo) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = algo.hasher();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hasher.finalize().iter().map(|b| format!("{b:02x}")).collect())
}

/// The digest of `file` in a coreutils-format sum file (`<hex>  ./<file>`, `<hex> *<file>`), comparing base
/// names. Used for MariaDB's `sha256sums.txt` and Percona's `<file>.sha256sum`.
pub fn find_in_sums(text: &str, algo: Algo, file: &str) -> Option<Checksum> {
    text.lines().find_map(|line| {
        let (hex, name) = line.trim().split_once(char::is_whitespace)?;
        let name = name.trim_start().trim_start_matches('*');
        let name = name.strip_prefix("./").unwrap_or(name);
        let base = name.rsplit('/').next().unwrap_or(name);
        (base == file).then(|| Checksum::new(algo, hex).ok()).flatten()
    })
}

/// The MD5 that Oracle's download or archive page shows for `file`: the page lists `(<file>)` and then
/// `MD5: <code class="md5">hex</code>`.
pub fn find_on_mysql_page(html: &str, file: &str) -> Option<Checksum> {
    const CODE: &str = "<code class=\"md5\">";
    let at = html.find(&format!("({file})"))?;
    let rest = &html[at + 1..];
    let code = rest.find(CODE)?;
    // The next file's MD5 must not be taken for this one.
    if rest[..code].contains("(mysql") {
        return None;
    }
    let after = &rest[code + CODE.len()..];
    let end = after.find('<')?;
    Checksum::new(Algo::Md5, after[..end].trim()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_catalog_checksums() {
        let c = Checksum::parse("MD5:597a7520a80323b7d1819f0bad678324").unwrap();
        assert_eq!((c.algo, c.hex.as_str()), (Algo::Md5, "597a7520a80323b7d1819f0bad678324"));
        let c = Checksum::parse("SHA512: 7bf9d740a5e702ba53421b5b01a9d26e86e7cdc7fe8fa86871683c61be6395227bac6547136a9b080f4f918d249324e6754639924d04b89877a81496e6a52e4b").unwrap();
        assert_eq!(c.algo, Algo::Sha512);
        assert_eq!(c.to_string().len(), "SHA512:".len() + 128);
        let c = Checksum::parse("sha256 : 11D87EC3620BEFA14F08BE6EE4161968081C61104AC9DF89D49F577F449BC204").unwrap();
        assert_eq!(c.to_string(), "SHA256:11d87ec3620befa14f08be6ee4161968081c61104ac9df89d49f577f449bc204");
        assert!(Checksum::parse("MD5:abc").unwrap_err().contains("32 hex digits"));
        assert!(Checksum::parse("CRC32:abcd").unwrap_err().contains("not a known checksum"));
        assert!(Checksum::parse("597a7520a80323b7d1819f0bad678324").unwrap_err().contains("ALGO:hex"));
    }

    #[test]
    fn hashes_files() {
        let t = tempfile::tempdir().unwrap();
        let f = t.path().join("abc");
        std::fs::write(&f, "abc").unwrap();
        assert_eq!(hash_file(&f, Algo::Md5).unwrap(), "900150983cd24fb0d6963f7d28e17f72");
        assert_eq!(hash_file(&f, Algo::Sha1).unwrap(), "a9993e364706816aba3e25717850c26c9cd0d89d");
        assert_eq!(
            hash_file(&f, Algo::Sha256).unwrap(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let good = Checksum::parse("MD5:900150983cd24fb0d6963f7d28e17f72").unwrap();
        assert_eq!(good.verify(&f).unwrap(), Ok(()));
        let bad = Checksum::parse("MD5:00000000000000000000000000000000").unwrap();
        assert_eq!(bad.verify(&f).unwrap(), Err("900150983cd24fb0d6963f7d28e17f72".into()));
    }

    #[test]
    fn reads_mariadb_sum_files_and_percona_sidecars() {
        // As MariaDB's release script writes them: `sha256sum ./<file>`, for every file of the directory.
        let sums = "c45becf9f8e9e90d9e32d5f2b4378cac971ef7a54c2ba4b668625e203285b5cb  ./mariadb-10.11.9-linux-systemd-x86_64.tar.gz\n\
                    0000000000000000000000000000000000000000000000000000000000000000  ./mariadb-10.11.9-linux-systemd-x86_64.tar.gz.asc\n";
        let c = find_in_sums(sums, Algo::Sha256, "mariadb-10.11.9-linux-systemd-x86_64.tar.gz").unwrap();
        assert_eq!(c.hex, "c45becf9f8e9e90d9e32d5f2b4378cac971ef7a54c2ba4b668625e203285b5cb");
        assert_eq!(find_in_sums(sums, Algo::Sha256, "mariadb-10.6.9-linux-systemd-x86_64.tar.gz"), None);
        let sidecar = "11d87ec3620befa14f08be6ee4161968081c61104ac9df89d49f577f449bc204 *Percona-Server-8.0.36-28-Linux.x86_64.glibc2.17-minimal.tar.gz\n";
        let file = "Percona-Server-8.0.36-28-Linux.x86_64.glibc2.17-minimal.tar.gz";
        assert_eq!(
            find_in_sums(sidecar, Algo::Sha256, file).unwrap().to_string(),
            "SHA256:11d87ec3620befa14f08be6ee4161968081c61104ac9df89d49f577f449bc204"
        );
        assert_eq!(find_in_sums("garbage\n", Algo::Sha256, file), None);
    }

    #[test]
    fn reads_the_md5_of_one_file_on_oracles_page() {
        let html = r#"<td class="sub-text">(mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz)</td>
            <td class="md5">MD5: <code class="md5">597a7520a80323b7d1819f0bad678324</code></td>
            <td class="sub-text">(mysql-8.0.36-linux-glibc2.17-x86_64-minimal.tar.xz)</td>
            <td class="md5">MD5: <code class="md5">ffffffffffffffffffffffffffffffff</code></td>
            <td class="sub-text">(mysql-test-8.0.36-linux-glibc2.28-x86_64.tar.xz)</td>"#;
        let c = find_on_mysql_page(html, "mysql-8.0.36-linux-glibc2.28-x86_64.tar.xz").unwrap();
        assert_eq!(c.to_string(), "MD5:597a7520a80323b7d1819f0bad678324");
        let c = find_on_mysql_page(html, "mysql-8.0.36-linux-glibc2.17-x86_64-minimal.tar.xz").unwrap();
        assert_eq!(c.hex, "ffffffffffffffffffffffffffffffff");
        assert_eq!(find_on_mysql_page(html, "mysql-test-8.0.36-linux-glibc2.28-x86_64.tar.xz"), None);
        assert_eq!(find_on_mysql_page(html, "mysql-8.0.35-linux-glibc2.28-x86_64.tar.xz"), None);
    }
}
