//! [`MyCnf`] → text: original text for untouched lines, the canonical form for the rest.

use super::reader::{Parsed, is_space, parse_line};
use super::{DirectiveKind, Line, MyCnf};

/// The whole document as option-file text, one `\n` after every line.
pub(super) fn write(doc: &MyCnf) -> String {
    let mut out = String::new();
    for line in &doc.preamble {
        write_line(&mut out, line);
    }
    for s in &doc.sections {
        match &s.header_raw {
            Some(raw) => out.push_str(raw),
            None => {
                out.push('[');
                out.push_str(&s.name);
                out.push(']');
            }
        }
        out.push('\n');
        for line in &s.lines {
            write_line(&mut out, line);
        }
    }
    out
}

fn write_line(out: &mut String, line: &Line) {
    match line {
        Line::Blank => {}
        Line::Comment(text) => {
            for (i, part) in text.split('\n').enumerate() {
                if i > 0 {
                    out.push('\n');
                }
                // Text that would not read back as an ignored line becomes a `#` comment.
                if matches!(parse_line(part, 0), Ok(Parsed::Line(Line::Comment(_)))) {
                    out.push_str(part);
                } else if part.trim_matches(is_space).is_empty() {
                    out.push('#');
                } else {
                    out.push_str("# ");
                    out.push_str(part);
                }
            }
        }
        Line::Entry(e) => match &e.raw {
            Some(raw) => out.push_str(raw),
            None => {
                out.push_str(&e.key);
                if let Some(v) = &e.value {
                    out.push('=');
                    out.push_str(&encode_value(v));
                }
                if let Some(c) = &e.comment {
                    out.push_str(" #");
                    if !c.is_empty() {
                        out.push(' ');
                        out.push_str(&c.replace('\n', " "));
                    }
                }
            }
        },
        Line::Directive(d) => match &d.raw {
            Some(raw) => out.push_str(raw),
            None => {
                out.push_str(match d.kind {
                    DirectiveKind::Include => "!include ",
                    DirectiveKind::IncludeDir => "!includedir ",
                });
                out.push_str(&d.path);
            }
        },
    }
    out.push('\n');
}

/// Whether `v` must be quoted to read back as itself.
fn needs_quotes(v: &str) -> bool {
    let (Some(first), Some(last)) = (v.chars().next(), v.chars().next_back()) else {
        return false; // `key=` reads back as the empty string
    };
    // MySQL trims with latin1 `my_isspace`, which also counts byte 0xA0: the last byte of U+00A0,
    // 'à' and every other character whose UTF-8 form ends in 0xA0.
    let ends_in_a0 = last as u32 >= 0x80 && (last as u32 & 0x3f) == 0x20;
    first.is_whitespace()
        || last.is_whitespace()
        || ends_in_a0
        || v.chars().any(|c| matches!(c, '#' | '\\' | '"' | '\'') || c.is_control())
}

/// `v` as written after `=`: bare when that reads back the same, else in double quotes with `\\`, `\"`,
/// `\n`, `\t`, `\r` and `\b` escaped.
pub(super) fn encode_value(v: &str) -> String {
    if !needs_quotes(v) {
        return v.to_string();
    }
    let mut out = String::with_capacity(v.len() + 2);
    out.push('"');
    for c in v.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\x08' => out.push_str("\\b"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::super::reader::{decode_value, split_comment};
    use super::super::{Directive, Entry, Section};
    use super::*;

    /// What MySQL would read back from `key=<encoded>` (comment split, trim, unquote, unescape).
    fn read_back(encoded: &str) -> String {
        let (content, comment) = split_comment(encoded);
        assert_eq!(comment, None, "{encoded}");
        decode_value(content.trim_matches(is_space))
    }

    #[test]
    fn quotes_only_when_needed() {
        for plain in [
            "3306",
            "/var/lib/mysql",
            "O_DIRECT",
            "a.so;b.so",
            "STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION",
            "a b",
            "x=y",
            "ibdata1:512M:autoextend",
            "",
        ] {
            assert_eq!(encode_value(plain), plain);
        }
        assert_eq!(encode_value("a#b"), "\"a#b\"");
        assert_eq!(encode_value(" x"), "\" x\"");
        assert_eq!(encode_value("it's"), "\"it's\"");
        assert_eq!(encode_value(r"C:\data"), r#""C:\\data""#);
        assert_eq!(encode_value("say \"hi\"\n"), r#""say \"hi\"\n""#);
        assert_eq!(encode_value("voilà"), "\"voilà\"");
        assert_eq!(encode_value("café"), "café");
    }

    #[test]
    fn encoded_values_read_back() {
        for v in [
            "a#b",
            " x ",
            "it's # not a comment",
            "\"quoted\"",
            "'single'",
            r"C:\new\dir\",
            "tab\there",
            "\x08\r\n",
            "\u{a0}",
            "x\\",
        ] {
            assert_eq!(read_back(&encode_value(v)), v, "{v:?} → {}", encode_value(v));
        }
    }

    #[test]
    fn canonical_lines() {
        let mut doc = MyCnf::new();
        doc.preamble_mut().push(Line::comment("generated"));
        doc.preamble_mut().push(Line::Directive(Directive::include_dir("/etc/mysql/conf.d")));
        let mut s = Section::new("mysqld");
        s.add("port", Some("3306"));
        s.add("skip-log-bin", None);
        s.push_entry(Entry::new("loose-x", Some("a b")).with_comment("why"));
        s.push_entry(Entry::new("y", None).with_comment(""));
        s.lines_mut().push(Line::Comment("not a comment\n; two".into()));
        s.lines_mut().push(Line::Comment(String::new()));
        doc.sections_mut().push(s);
        assert_eq!(
            write(&doc),
            "# generated\n!includedir /etc/mysql/conf.d\n[mysqld]\nport=3306\nskip-log-bin\nloose-x=a b # why\ny #\n\
             # not a comment\n; two\n#\n"
        );
    }
}
