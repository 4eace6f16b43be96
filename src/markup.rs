//! Labels as text in what versus prints: names come from users' files and command lines, so every
//! format shows them literally, never as markup, an escape sequence or a line break. One module below the
//! reports and the workloads, so that each format and each workload's own report section use the same
//! rules.

use std::fmt::Write as _;

/// Text as markdown shows it literally, in a line or a table cell (labels come from users' files): no
/// raw HTML (`&`, `<`, `>` as entities), no emphasis, code, link, strike-through or table break (`\`,
/// `` ` ``, `*`, `[`, `]`, `~`, `|` and an `_` at a word's edge backslash-escaped), no line break.
pub fn escape(s: &str) -> String {
    literal(s, |out, c| {
        out.push('\\');
        out.push(c);
    })
}

/// Text inside an HTML block of the markdown (a `<summary>`): `&`, `<` and `>` as entities, and
/// markdown's punctuation too (a renderer that reads markdown there finds none), no line break (a blank
/// line would end the block).
pub fn html(s: &str) -> String {
    literal(s, |out, c| {
        let _ = write!(out, "&#{};", c as u32);
    })
}

/// `s` with HTML's specials as entities, control characters (line breaks) as spaces, and markdown's
/// punctuation written by `punct`. Inside a word (innodb_flush_log) an underscore is no emphasis.
fn literal(s: &str, punct: impl Fn(&mut String, char)) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let word = |j: Option<usize>| j.and_then(|j| chars.get(j)).is_some_and(|c| c.is_alphanumeric());
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '\\' | '`' | '*' | '[' | ']' | '~' | '|' => punct(&mut out, c),
            '_' if !(word(i.checked_sub(1)) && word(Some(i + 1))) => punct(&mut out, c),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// A label as markdown ([`escape`]) or the terminal ([`shown`]) shows it literally.
pub fn text(markdown: bool, s: &str) -> String {
    if markdown { escape(s) } else { shown(s) }
}

/// Text as the terminal shows it literally: a control character of a label (an escape sequence that
/// would recolour, move the cursor or retitle the terminal; a line break that would fake a row) as a
/// space.
pub fn shown(s: &str) -> String {
    s.chars().map(|c| if c.is_control() { ' ' } else { c }).collect()
}
