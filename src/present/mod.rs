//! What reports are drawn with, whatever they report: tables ([`table`]) and their numbers ([`fmt`]), the sections written once
//! for every format ([`writers`]: terminal text, markdown, HTML), SVG charts ([`svg`]) and the frame of
//! an HTML page ([`page`]). It knows nothing of comparisons or workloads, so that both the report
//! ([`crate::report`]) and the workloads' own sections ([`crate::workload`]) can use it.

pub mod fmt;
pub mod page;
pub mod svg;
pub mod table;
pub mod writers;
