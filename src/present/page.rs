//! The frame every HTML page of versus shares: doctype, charset, the report's inline CSS, the title,
//! and a table of contents built from the page's own `<h2 id>` headings (so it is in page order).

use std::fmt::Write as _;

use super::svg::escape;

const CSS: &str = include_str!("templates/report.css");

/// The start of a page: doctype, charset, the report's CSS, `<title>`, up to the opened `<main>`.
pub fn page_start(title: &str, versus_version: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"versus {}\">\n<title>{}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n<main>\n",
        escape(versus_version),
        escape(title)
    )
}

/// Ends a page begun by [`page_start`]: the footer, and the table of contents of everything after
/// `head_end` (the end of the heading lines) inserted there.
pub fn page_end(out: &mut String, head_end: usize, versus_version: &str) {
    let _ = writeln!(out, "<footer>Made by versus {}.</footer>\n</main>\n</body>\n</html>", escape(versus_version));
    let nav = toc(&out[head_end..]);
    out.insert_str(head_end, &nav);
}

/// The table of contents of `body`: a link to every `<h2 id=…>`, in page order.
fn toc(body: &str) -> String {
    let mut nav = String::from("<nav><ol>");
    let mut rest = body;
    while let Some(i) = rest.find("<h2 ") {
        rest = &rest[i..];
        let Some(end) = rest.find("</h2>") else { break };
        let tag = &rest[..end];
        if let (Some(id_at), Some(close)) = (tag.find(" id=\""), tag.find('>')) {
            let id = &tag[id_at + 5..];
            let id = &id[..id.find('"').unwrap_or(0)];
            let _ = write!(nav, "<li><a href=\"#{id}\">{}</a></li>", &tag[close + 1..]);
        }
        rest = &rest[end..];
    }
    nav.push_str("</ol></nav>\n");
    nav
}
