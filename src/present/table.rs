//! A table ready to be written in any format: its cells with their emphasis, its title, caption and
//! footnotes. Reports and workload sections lay their figures out as [`Table`]s, and the writers of
//! [`super::writers`] render them.

/// How a cell is emphasised.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tone {
    /// No emphasis.
    Plain,
    /// Called better than the baseline by its verdict.
    Better,
    /// Called worse than the baseline by its verdict.
    Worse,
    /// The baseline itself, or a value without meaning.
    Muted,
}

/// One table cell.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    /// What is written.
    pub text: String,
    /// Its emphasis.
    pub tone: Tone,
}

impl Cell {
    /// A cell without emphasis.
    pub fn plain(text: impl Into<String>) -> Cell {
        Cell { text: text.into(), tone: Tone::Plain }
    }

    /// A cell with `tone`.
    pub fn toned(text: impl Into<String>, tone: Tone) -> Cell {
        Cell { text: text.into(), tone }
    }
}

/// A table ready to be written.
#[derive(Debug, Clone, PartialEq)]
pub struct Table {
    /// Anchor (HTML id).
    pub id: String,
    /// Heading.
    pub title: String,
    /// One or two sentences under the heading.
    pub caption: Option<String>,
    /// Column headings.
    pub header: Vec<String>,
    /// Whether each column holds numbers (right-aligned).
    pub numeric: Vec<bool>,
    /// The rows.
    pub rows: Vec<Vec<Cell>>,
    /// Notes referred to as `[n]` in the cells.
    pub footnotes: Vec<String>,
}

impl Table {
    /// An empty table; `header` is (heading, numeric) per column.
    pub fn new(id: &str, title: impl Into<String>, header: Vec<(String, bool)>) -> Table {
        let (header, numeric) = header.into_iter().unzip();
        Table {
            id: id.into(),
            title: title.into(),
            caption: None,
            header,
            numeric,
            rows: Vec::new(),
            footnotes: Vec::new(),
        }
    }

    /// `[n]` for `note`, adding it to the footnotes when new.
    pub fn footnote(&mut self, note: &str) -> String {
        let i = match self.footnotes.iter().position(|n| n == note) {
            Some(i) => i,
            None => {
                self.footnotes.push(note.to_string());
                self.footnotes.len() - 1
            }
        };
        format!("[{}]", i + 1)
    }
}
