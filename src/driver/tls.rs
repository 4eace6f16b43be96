//! TLS for client connections: sysbench's `--mysql-ssl` (1.0's on/off and master's modes) and the
//! certificate files, turned into the mysql crate's [`SslOpts`] (rustls).

use std::path::{Path, PathBuf};

use mysql::{ClientIdentity, SslOpts};

/// How a connection uses TLS, with the meanings of MySQL's `--ssl-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SslMode {
    /// Plain connections.
    #[default]
    Disabled,
    /// TLS when the server offers it, plain otherwise; the certificate is not verified.
    Preferred,
    /// TLS or fail; the certificate is not verified (also sysbench 1.0's `--mysql-ssl=on`).
    Required,
    /// TLS with the server certificate verified against the CA (`--mysql-ssl-ca`), host name not checked.
    VerifyCa,
    /// As VerifyCa, and the certificate must name the host connected to.
    VerifyIdentity,
}

impl SslMode {
    /// Parses a `--mysql-ssl` value: sysbench 1.0's boolean spellings (`on|true|1`, `off|false|0`, lower
    /// case, as for every sysbench boolean) or a mode name of sysbench master (any case, as MySQL's
    /// `--ssl-mode`). `None` when it is neither.
    pub fn parse(v: &str) -> Option<SslMode> {
        match v {
            "on" | "true" | "1" => return Some(SslMode::Required),
            "off" | "false" | "0" => return Some(SslMode::Disabled),
            _ => {}
        }
        Some(match v.to_ascii_uppercase().as_str() {
            "REQUIRED" => SslMode::Required,
            "DISABLED" => SslMode::Disabled,
            "PREFERRED" => SslMode::Preferred,
            "VERIFY_CA" => SslMode::VerifyCa,
            "VERIFY_IDENTITY" => SslMode::VerifyIdentity,
            _ => return None,
        })
    }

    /// Whether the server certificate is checked against a CA.
    pub fn verifies(self) -> bool {
        matches!(self, SslMode::VerifyCa | SslMode::VerifyIdentity)
    }
}

/// TLS settings of a connection.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize)]
pub struct Tls {
    /// Whether and how strictly TLS is used.
    pub mode: SslMode,
    /// PEM file of the CA certificates that may sign the server's certificate.
    pub ca: Option<PathBuf>,
    /// PEM file of the client certificate (with `key`, for users created `REQUIRE X509`).
    pub cert: Option<PathBuf>,
    /// PEM file of the client certificate's private key.
    pub key: Option<PathBuf>,
}

/// The files sysbench 1.0 passes with `--mysql-ssl=on`, looked up in the current directory.
pub const LEGACY_FILES: [&str; 3] = ["cacert.pem", "client-cert.pem", "client-key.pem"];

impl Tls {
    /// Whether connections use TLS at all.
    pub fn enabled(&self) -> bool {
        self.mode != SslMode::Disabled
    }

    /// Fills unset files from sysbench 1.0's names in `dir` (`cacert.pem`, `client-cert.pem`,
    /// `client-key.pem`) where those exist.
    pub fn with_legacy_files(mut self, dir: &Path) -> Tls {
        let found = |name: &str| Some(dir.join(name)).filter(|p| p.is_file());
        self.ca = self.ca.or_else(|| found(LEGACY_FILES[0]));
        if self.cert.is_none() && self.key.is_none() {
            self.cert = found(LEGACY_FILES[1]);
            self.key = found(LEGACY_FILES[2]);
        }
        self
    }

    /// The mysql crate's options, or None for plain connections.
    pub fn ssl_opts(&self) -> Option<SslOpts> {
        if !self.enabled() {
            return None;
        }
        let mut o = SslOpts::default()
            .with_danger_accept_invalid_certs(!self.mode.verifies())
            .with_danger_skip_domain_validation(self.mode != SslMode::VerifyIdentity);
        if let Some(ca) = &self.ca {
            o = o.with_root_cert_path(Some(ca.clone()));
        }
        if let (Some(cert), Some(key)) = (&self.cert, &self.key) {
            o = o.with_client_identity(Some(ClientIdentity::new(cert.clone(), key.clone())));
        }
        Some(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_and_on_off_spellings() {
        assert_eq!(SslMode::parse("on"), Some(SslMode::Required));
        assert_eq!(SslMode::parse("off"), Some(SslMode::Disabled));
        assert_eq!(SslMode::parse("1"), Some(SslMode::Required));
        // sysbench rejects these boolean spellings, so does versus.
        assert_eq!(SslMode::parse("Off"), None);
        assert_eq!(SslMode::parse("yes"), None);
        assert_eq!(SslMode::parse("no"), None);
        assert_eq!(SslMode::parse("verify_identity"), Some(SslMode::VerifyIdentity));
        assert_eq!(SslMode::parse("VERIFY_CA"), Some(SslMode::VerifyCa));
        assert_eq!(SslMode::parse("preferred"), Some(SslMode::Preferred));
        assert_eq!(SslMode::parse("maybe"), None);
        assert!(SslMode::VerifyCa.verifies() && !SslMode::Required.verifies());
    }

    #[test]
    fn legacy_files_fill_only_what_is_unset_and_present() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("cacert.pem"), "x").unwrap();
        let t = Tls { mode: SslMode::Required, ..Tls::default() }.with_legacy_files(dir.path());
        assert_eq!(t.ca, Some(dir.path().join("cacert.pem")));
        assert_eq!((t.cert, t.key), (None, None));
        std::fs::write(dir.path().join("client-cert.pem"), "x").unwrap();
        std::fs::write(dir.path().join("client-key.pem"), "x").unwrap();
        let own = PathBuf::from("/own/ca.pem");
        let t = Tls { mode: SslMode::Required, ca: Some(own.clone()), ..Tls::default() }.with_legacy_files(dir.path());
        assert_eq!(t.ca, Some(own));
        assert_eq!(t.key, Some(dir.path().join("client-key.pem")));
        assert!(Tls::default().ssl_opts().is_none());
        assert!(t.ssl_opts().is_some_and(|o| o.accept_invalid_certs() && o.client_identity().is_some()));
    }
}
