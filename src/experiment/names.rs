//! Names that label results (targets, configs, workloads): two names a report would print alike are
//! the same name, and a name with invisible parts is refused rather than stored.

use unicode_normalization::UnicodeNormalization;

/// Characters that print as nothing: zero-width spaces and joiners, word joiners, the byte-order mark
/// and the soft hyphen.
const INVISIBLE: &[char] = &[
    '\u{00AD}', '\u{200B}', '\u{200C}', '\u{200D}', '\u{200E}', '\u{200F}', '\u{2060}', '\u{2061}', '\u{2062}',
    '\u{2063}', '\u{2064}', '\u{FEFF}',
];

/// What is wrong with `name` as a label, if anything: empty, leading or trailing whitespace, a
/// control character, or a character that prints as nothing.
pub fn problem(name: &str) -> Option<&'static str> {
    if name.trim().is_empty() {
        Some("is empty")
    } else if name.trim() != name {
        Some("has leading or trailing whitespace")
    } else if name.chars().any(char::is_control) {
        Some("holds a control character")
    } else if name.chars().any(|c| INVISIBLE.contains(&c)) {
        Some("holds an invisible character (a zero-width space, joiner or soft hyphen)")
    } else {
        None
    }
}

/// The form two names are compared in: Unicode NFC of the trimmed name, so that `é` written as one
/// character or as `e` and a combining accent, or a name with a trailing space, are one name.
pub fn key(name: &str) -> String {
    name.trim().nfc().collect()
}

/// The first problem among `names` (labels of `what`, e.g. "target"): a [`problem`] of a name, or two
/// names with the same [`key`].
pub fn check<'a>(what: &str, names: impl IntoIterator<Item = &'a str>) -> Result<(), String> {
    let mut seen: std::collections::HashMap<String, &str> = std::collections::HashMap::new();
    for n in names {
        if let Some(p) = problem(n) {
            return Err(format!("{what} name {:?} {p}; write it without", n));
        }
        if let Some(first) = seen.insert(key(n), n) {
            return Err(if first == n {
                format!("two {what}s are named '{n}'; give them distinct names")
            } else {
                format!(
                    "{what} names {first:?} and {n:?} differ only in how their characters are encoded, so they print alike; write them the same or give them distinct names"
                )
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn names_that_print_alike_are_one_name() {
        assert!(check("target", ["a", "b"]).is_ok());
        assert_eq!(check("target", ["a", "a"]).unwrap_err(), "two targets are named 'a'; give them distinct names");
        let e = check("target", ["caf\u{e9}", "cafe\u{301}"]).unwrap_err();
        assert!(e.starts_with("target names \"café\" and \"cafe\\u{301}\" differ only in how"), "{e}");
        assert!(check("target", ["a ", "a"]).unwrap_err().contains("\"a \" has leading or trailing whitespace"));
        assert!(check("config", ["\u{a0}a"]).unwrap_err().contains("leading or trailing whitespace"));
        assert!(check("target", ["a\u{7}b"]).unwrap_err().contains("control character"));
        assert!(check("target", ["a\u{200b}b"]).unwrap_err().contains("invisible"));
        assert!(check("target", [""]).unwrap_err().contains("is empty"));
    }

    proptest! {
        #[test]
        fn equal_keys_are_refused_and_distinct_clean_names_pass(a in "\\PC{1,8}", b in "\\PC{1,8}") {
            let r = check("target", [a.as_str(), b.as_str()]);
            if problem(&a).is_none() && problem(&b).is_none() && key(&a) != key(&b) {
                prop_assert!(r.is_ok(), "{:?}", r);
            } else {
                let e = r.unwrap_err();
                prop_assert!(e.starts_with("target") || e.starts_with("two targets"), "{}", e);
                prop_assert!(!e.contains('\n'));
            }
        }
    }
}
