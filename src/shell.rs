//! Text for a shell: what versus prints as a command to paste (`versus import FILE`, the client command
//! of a sandbox) must survive a path with spaces or quotes.

/// `s` as one shell word: as it is when it holds only characters no shell treats specially, else in
/// single quotes (a `'` inside becomes `'\''`).
pub fn quote(s: &str) -> String {
    if !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-:=@,+".contains(c)) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::quote;

    #[test]
    fn only_special_words_are_quoted() {
        assert_eq!(quote("/usr/bin/versus"), "/usr/bin/versus");
        assert_eq!(quote("/tmp/with space/home"), "'/tmp/with space/home'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$HOME"), "'$HOME'");
    }
}
