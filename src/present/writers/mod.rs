//! What a report section writes, whatever the format: a section made of headings, tables, lines and
//! figures is written once against [`Writer`], and each format (terminal text, markdown, HTML) renders
//! the pieces in its own markup, in a file of its own here. These are the primitives the whole-report
//! renderers (`report::terminal`, `report::markdown`, `report::html`) and the sections (explain,
//! advise, profile, statements) share; they import nothing of either, so that no section imports a
//! renderer that imports it back.

pub mod html;
pub mod markdown;
pub mod text;

use super::table::Table;

/// The pieces a section is made of, rendered by one format.
pub trait Writer {
    /// A section heading.
    fn heading(&mut self, text: &str);
    /// A table (its own title and caption included).
    fn table(&mut self, t: &Table);
    /// A paragraph of text.
    fn paragraph(&mut self, text: &str);
    /// A bulleted list.
    fn list(&mut self, items: &[String]);
    /// The sentences that sum a section up, right below its table: plain lines in the terminal, a
    /// list in markdown (the section's end then follows with [`Writer::end_section`]), a summary list
    /// in HTML. Nothing for no items.
    fn summary(&mut self, items: &[String]);
    /// The end of a section written with [`Writer::summary`] lines (a blank line in markdown).
    fn end_section(&mut self) {}
    /// A picture (an SVG document) with its caption, where the format can show one; text formats
    /// leave it out.
    fn figure(&mut self, caption: &str, svg: &str) {
        let _ = (caption, svg);
    }
    /// Whether [`Writer::figure`] shows anything (so that a section draws only when it does).
    fn shows_figures(&self) -> bool {
        false
    }
}
