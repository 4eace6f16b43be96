//! Typed errors of the versus library. Each variant names what is wrong and, where it helps, how to
//! fix it, so that `main` can print it on one line.

use std::path::PathBuf;

/// Result alias used across the library.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in versus, in words a user can act on.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A command-line option or value is wrong.
    #[error("{option}: {message}")]
    Option {
        /// The flag at fault, with its dashes (`--threads`).
        option: String,
        /// What is wrong and how to fix it.
        message: String,
    },
    /// A file could not be read, written or parsed (a control character in its path is escaped).
    #[error("{}: {message}", escape_controls(&path.display().to_string()))]
    File {
        /// The file at fault.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// No build of that name is registered.
    #[error("unknown build '{name}'; {hint}")]
    UnknownBuild {
        /// The name asked for.
        name: String,
        /// Which builds exist, or how to fetch one.
        hint: String,
    },
    /// Obtaining or registering a server build failed.
    #[error("fetch {spec}: {message}")]
    Fetch {
        /// The SPEC given to `server fetch`.
        spec: String,
        /// What went wrong.
        message: String,
    },
    /// A sandboxed server failed to initialise, start, or stop, or it died.
    #[error("server {name}: {message}")]
    Server {
        /// The sandbox name.
        name: String,
        /// What went wrong, with the server's own words where there are any.
        message: String,
    },
    /// An error reported by a MySQL-protocol server or the client library (on one line, whatever the
    /// layout of the statement in `context`).
    #[error("{}: {message}", one_line(context))]
    Sql {
        /// What versus was doing (the statement or step).
        context: String,
        /// The server error code, when the server sent one.
        code: Option<u16>,
        /// The message.
        message: String,
    },
    /// The user pressed Ctrl-C (or versus got SIGTERM).
    #[error("interrupted")]
    Interrupted,
    /// Any other failure, already phrased for the user.
    #[error("{0}")]
    Other(String),
}

impl Error {
    /// An [`Error::Option`] for the flag `option`. Control characters of the message (a hostile value
    /// quoted in it) are escaped: the error stays one line.
    pub fn option(option: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Option { option: option.into(), message: escape_controls(&message.into()) }
    }

    /// An [`Error::File`] for `path`.
    pub fn file(path: impl Into<PathBuf>, message: impl std::fmt::Display) -> Self {
        Error::File { path: path.into(), message: message.to_string() }
    }

    /// An [`Error::Server`] for the sandbox `name`.
    pub fn server(name: impl Into<String>, message: impl Into<String>) -> Self {
        Error::Server { name: name.into(), message: message.into() }
    }
}

/// `s` with its control characters (line breaks, tabs, NUL …) escaped as in Rust (`\n`): one line.
pub fn escape_controls(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { c.escape_default().to_string() } else { c.to_string() }).collect()
}

/// `s` with every run of whitespace (newlines included) as one space, trimmed.
fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sql_errors_are_one_line_whatever_the_statement_layout() {
        let e = Error::Sql {
            context: "query '        SELECT count(k)\n          FROM sbtest1'".into(),
            code: Some(1146),
            message: "error 1146: Table 'sbtest.sbtest1' doesn't exist".into(),
        };
        assert_eq!(
            e.to_string(),
            "query ' SELECT count(k) FROM sbtest1': error 1146: Table 'sbtest.sbtest1' doesn't exist"
        );
        assert_eq!(e.to_string().lines().count(), 1);
    }
}
