//! Text → [`MyCnf`], line by line, with the rules of `search_default_file_with_buffer` in MySQL's and
//! MariaDB's `mysys/my_default`.

use std::path::Path;

use super::{Directive, DirectiveKind, Entry, Line, MyCnf, Section};
use crate::error::{Error, Result};

/// Whitespace as MySQL's `my_isspace` sees it in ASCII (it also counts byte 0xA0, see the writer).
pub(super) fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// What one line of text is.
#[derive(Debug)]
pub(super) enum Parsed {
    /// `[name]`.
    Header(String),
    /// Anything else.
    Line(Line),
}

/// Reads a file as UTF-8 text.
pub(super) fn read_text(path: &Path) -> Result<String> {
    let bytes =
        crate::input::read_bytes_reason(path).map_err(|why| Error::file(path, format!("the option file: {why}")))?;
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|&&b| b == b'\n').count() + 1;
        Error::file(path, format!("line {line}: not valid UTF-8; save the file as UTF-8"))
    })
}

/// Parses a whole document. Errors are `line N: what is wrong`, for the caller to put a path on; they
/// never quote the file's text: an `!include` may name a file the user cannot otherwise read (a
/// secret such as /etc/shadow), and its content must not reach the terminal or a log.
pub(super) fn parse(text: &str) -> std::result::Result<MyCnf, String> {
    let mut doc = MyCnf::new();
    if text.is_empty() {
        return Ok(doc);
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    for (i, raw) in body.split('\n').enumerate() {
        let n = i + 1;
        match parse_line(raw, n)? {
            Parsed::Header(name) => {
                doc.sections.push(Section { name, header_raw: Some(raw.to_string()), lines: Vec::new() })
            }
            Parsed::Line(line) => match doc.sections.last_mut() {
                Some(section) => section.lines.push(line),
                None => {
                    if matches!(line, Line::Entry(_)) {
                        return Err(format!(
                            "line {n}: an option outside any [group]; MySQL rejects options before the first \
                             group header, so put it under one such as [mysqld]"
                        ));
                    }
                    doc.preamble.push(line);
                }
            },
        }
    }
    Ok(doc)
}

/// Parses one line (without its `\n`); `n` is its 1-based number, for errors.
pub(super) fn parse_line(raw: &str, n: usize) -> std::result::Result<Parsed, String> {
    let t = raw.trim_start_matches(is_space);
    let Some(first) = t.chars().next() else {
        return Ok(Parsed::Line(Line::Blank));
    };
    match first {
        '#' | ';' => Ok(Parsed::Line(Line::Comment(raw.to_string()))),
        '!' => parse_directive(raw, &t[1..], n),
        '[' => {
            let Some(end) = t[1..].find(']') else {
                return Err(format!("line {n}: a group header has no closing ']'"));
            };
            // MySQL trims the end of the name only; anything after ']' is ignored.
            Ok(Parsed::Header(t[1..1 + end].trim_end_matches(is_space).to_string()))
        }
        _ => parse_entry(raw, t, n),
    }
}

fn parse_directive(raw: &str, after_bang: &str, n: usize) -> std::result::Result<Parsed, String> {
    let rest = after_bang.trim_start_matches(is_space);
    // `includedir` first: `include` is its prefix. The keyword must be followed by whitespace.
    for (word, kind) in [("includedir", DirectiveKind::IncludeDir), ("include", DirectiveKind::Include)] {
        let Some(arg) = rest.strip_prefix(word) else { continue };
        if !arg.chars().next().is_none_or(is_space) {
            continue;
        }
        // No comment stripping or unquoting: MySQL takes the rest of the line, trimmed.
        let path = arg.trim_matches(is_space);
        if path.is_empty() {
            let what = if kind == DirectiveKind::Include { "a file name" } else { "a directory name" };
            return Err(format!("line {n}: '!{word}' needs {what}"));
        }
        let d = Directive { kind, path: path.to_string(), raw: Some(raw.to_string()) };
        return Ok(Parsed::Line(Line::Directive(d)));
    }
    // MySQL silently ignores other directives.
    Ok(Parsed::Line(Line::Comment(raw.to_string())))
}

fn parse_entry(raw: &str, t: &str, n: usize) -> std::result::Result<Parsed, String> {
    let (content, comment) = split_comment(t);
    let (key, value) = match content.split_once('=') {
        Some((k, v)) => (k.trim_end_matches(is_space), Some(decode_value(v.trim_matches(is_space)))),
        None => (content.trim_end_matches(is_space), None),
    };
    if key.is_empty() {
        return Err(format!("line {n}: an option with an empty name; write name=value"));
    }
    Ok(Parsed::Line(Line::Entry(Entry {
        key: key.to_string(),
        value,
        comment: comment.map(|c| c.trim_matches(is_space).to_string()),
        raw: Some(raw.to_string()),
        line: Some(n),
    })))
}

/// Splits at the first `#` outside quotes (MySQL's `remove_end_comment`). Quotes are tracked over the
/// whole line, key included, and a backslash escapes the next character only inside quotes.
pub(super) fn split_comment(s: &str) -> (&str, Option<&str>) {
    let mut quote: Option<char> = None;
    let mut escape = false;
    for (i, c) in s.char_indices() {
        if (c == '\'' || c == '"') && !escape {
            match quote {
                None => quote = Some(c),
                Some(q) if q == c => quote = None,
                Some(_) => {}
            }
        }
        if quote.is_none() && c == '#' {
            return (&s[..i], Some(&s[i + 1..]));
        }
        escape = quote.is_some() && c == '\\' && !escape;
    }
    (s, None)
}

/// A trimmed value → its meaning: matching outer quotes go, then escapes are replaced. Unknown escapes
/// and a trailing lone backslash stay as written (so Windows paths mostly survive).
pub(super) fn decode_value(v: &str) -> String {
    let b = v.as_bytes();
    let inner =
        if b.len() >= 2 && (b[0] == b'"' || b[0] == b'\'') && b[b.len() - 1] == b[0] { &v[1..v.len() - 1] } else { v };
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(next) = chars.next() else {
            out.push('\\');
            break;
        };
        match next {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'b' => out.push('\x08'),
            's' => out.push(' '),
            '"' | '\'' | '\\' => out.push(next),
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> MyCnf {
        parse(text).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The (key, value, comment) of the single entry in `[s]\n{line}`.
    fn entry(line: &str) -> (String, Option<String>, Option<String>) {
        let d = doc(&format!("[s]\n{line}\n"));
        let e = d.sections()[0].entries().next().expect("one entry");
        (e.key().into(), e.value().map(Into::into), e.comment().map(Into::into))
    }

    fn kv(k: &str, v: Option<&str>, c: Option<&str>) -> (String, Option<String>, Option<String>) {
        (k.into(), v.map(Into::into), c.map(Into::into))
    }

    #[test]
    fn keys_values_and_flags() {
        assert_eq!(entry("port=3306"), kv("port", Some("3306"), None));
        assert_eq!(entry("  port  =   3306  "), kv("port", Some("3306"), None));
        assert_eq!(entry("skip-log-bin"), kv("skip-log-bin", None, None));
        assert_eq!(entry("\tskip-log-bin \r"), kv("skip-log-bin", None, None));
        assert_eq!(entry("sql_mode="), kv("sql_mode", Some(""), None));
        assert_eq!(entry("sql_mode = "), kv("sql_mode", Some(""), None));
        // Only the first '=' splits.
        assert_eq!(entry("optimizer_switch=index_merge=off"), kv("optimizer_switch", Some("index_merge=off"), None));
        // Inner spaces of a value stay.
        assert_eq!(entry("init_connect = SET NAMES utf8"), kv("init_connect", Some("SET NAMES utf8"), None));
    }

    #[test]
    fn trailing_comments_only_with_hash_outside_quotes() {
        assert_eq!(entry("port = 3306 # main"), kv("port", Some("3306"), Some("main")));
        // No whitespace is needed before '#'.
        assert_eq!(entry("port=3306#main"), kv("port", Some("3306"), Some("main")));
        assert_eq!(entry("skip-log-bin # no binlog"), kv("skip-log-bin", None, Some("no binlog")));
        assert_eq!(entry("x=1 #"), kv("x", Some("1"), Some("")));
        // ';' mid-line is data.
        assert_eq!(
            entry("plugin-load=a.so;b.so ; not a comment"),
            kv("plugin-load", Some("a.so;b.so ; not a comment"), None)
        );
        // '#' inside quotes is data.
        assert_eq!(entry("password = \"a#b\" # c"), kv("password", Some("a#b"), Some("c")));
        assert_eq!(entry("password = 'a#b'"), kv("password", Some("a#b"), None));
        // An escaped quote does not close the string.
        assert_eq!(entry(r##"x="a\"#b" # c"##), kv("x", Some("a\"#b"), Some("c")));
        // An unbalanced quote swallows the rest of the line, comment included, as in MySQL.
        assert_eq!(entry("x=it's # here"), kv("x", Some("it's # here"), None));
        // A comment can hide the '='.
        assert_eq!(entry("flag # =value"), kv("flag", None, Some("=value")));
    }

    #[test]
    fn quotes_are_stripped_only_when_matching() {
        assert_eq!(entry(r#"x="hello world""#).1.as_deref(), Some("hello world"));
        assert_eq!(entry("x='hello'").1.as_deref(), Some("hello"));
        assert_eq!(entry(r#"x="""#).1.as_deref(), Some(""));
        assert_eq!(entry(r#"x=""#).1.as_deref(), Some("\""));
        assert_eq!(entry(r#"x='a""#).1.as_deref(), Some("'a\""));
        assert_eq!(entry(r#"x=a"b"#).1.as_deref(), Some("a\"b"));
        assert_eq!(entry(r#"x=" padded ""#).1.as_deref(), Some(" padded "));
    }

    #[test]
    fn escapes_per_the_manual() {
        assert_eq!(entry(r#"x="a\nb\tc\\d\"e\'f""#).1.as_deref(), Some("a\nb\tc\\d\"e'f"));
        assert_eq!(entry(r"x=a\sb\rc\bd").1.as_deref(), Some("a b\rc\x08d"));
        // Escapes apply without quotes too; unknown ones keep the backslash.
        assert_eq!(entry(r"basedir=C:\Program Files\MySQL").1.as_deref(), Some(r"C:\Program Files\MySQL"));
        assert_eq!(entry(r"x=C:\new").1.as_deref(), Some("C:\new"));
        // A trailing lone backslash stays.
        assert_eq!(entry(r"x=a\").1.as_deref(), Some("a\\"));
    }

    #[test]
    fn comments_blanks_and_headers() {
        let d =
            doc("# top\n; also\n\n  # indented\n!unknown thing\n[mysqld]  # trailing text ignored\n[ client]\n[x ]\n");
        assert_eq!(
            d.preamble(),
            [
                Line::Comment("# top".into()),
                Line::Comment("; also".into()),
                Line::Blank,
                Line::Comment("  # indented".into()),
                Line::Comment("!unknown thing".into()),
            ]
        );
        let names: Vec<_> = d.sections().iter().map(Section::name).collect();
        // MySQL trims only the end of a group name.
        assert_eq!(names, ["mysqld", " client", "x"]);
    }

    #[test]
    fn directives_anywhere_and_kept_verbatim() {
        let d =
            doc("!include /etc/a.cnf\n[mysqld]\n!includedir   conf.d/  \nport=1\n!include\tb.cnf # not a comment\n");
        assert_eq!(d.preamble(), [Line::Directive(Directive::include("/etc/a.cnf"))]);
        let s = &d.sections()[0];
        assert_eq!(s.lines()[0], Line::Directive(Directive::include_dir("conf.d/")));
        assert_eq!(s.lines()[2], Line::Directive(Directive::include("b.cnf # not a comment")));
        // `!includedirx` and `!includex` are unknown directives, hence ignored.
        let d = doc("!includedirx /a\n!includes /b\n");
        assert!(d.preamble().iter().all(|l| matches!(l, Line::Comment(_))));
    }

    #[test]
    fn repeated_sections_and_keys_are_kept() {
        let d = doc("[mysqld]\nplugin-load-add=a.so\nplugin-load-add=b.so\n[client]\n[mysqld]\nport=1\n");
        assert_eq!(d.sections().len(), 3);
        assert_eq!(d.sections()[0].entries().count(), 2);
        assert_eq!(d.sections()[0].entries().map(|e| e.line()).collect::<Vec<_>>(), [Some(2), Some(3)]);
    }

    #[test]
    fn errors_name_the_line() {
        let err = parse("# c\n\nport=3306\n[mysqld]\n").unwrap_err();
        assert!(err.starts_with("line 3: an option outside any [group]"), "{err}");
        let err = parse("[mysqld]\nport=1\n[client\n").unwrap_err();
        assert_eq!(err, "line 3: a group header has no closing ']'");
        let err = parse("[mysqld]\n = 5\n").unwrap_err();
        assert!(err.starts_with("line 2: an option with an empty name"), "{err}");
        let err = parse("[mysqld]\n\n!include   \n").unwrap_err();
        assert_eq!(err, "line 3: '!include' needs a file name");
        let err = parse("!includedir\n").unwrap_err();
        assert_eq!(err, "line 1: '!includedir' needs a directory name");
    }

    #[test]
    fn read_text_reports_bad_utf8_line() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("bad.cnf");
        std::fs::write(&p, b"[mysqld]\n# caf\xe9\n").unwrap();
        let err = read_text(&p).unwrap_err().to_string();
        assert!(err.contains("line 2: not valid UTF-8"), "{err}");
        let err = read_text(&dir.path().join("missing.cnf")).unwrap_err().to_string();
        assert!(err.contains("missing.cnf: the option file: cannot read"), "{err}");
    }
}
