//! Tables of text cells (a header row first, a label column first) in the three formats
//! the workflows print: aligned text, Markdown and CSV.

use pgrush_report::compare::shorten;

/// The output formats of a table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableFormat {
    /// Aligned columns for a terminal.
    Text,
    /// A Markdown table.
    Markdown,
    /// Comma-separated values (RFC 4180 quoting).
    Csv,
}

impl From<pgrush_report::compare::Format> for TableFormat {
    fn from(format: pgrush_report::compare::Format) -> TableFormat {
        use pgrush_report::compare::Format;
        match format {
            Format::Text => TableFormat::Text,
            Format::Markdown => TableFormat::Markdown,
            Format::Csv => TableFormat::Csv,
        }
    }
}

/// `rows` in `format`; in text the labels (first column) are cut to `label_width`
/// characters, the other columns right-aligned.
pub fn render_rows(rows: &[Vec<String>], format: TableFormat, label_width: usize) -> String {
    match format {
        TableFormat::Text => text_table(rows, label_width),
        TableFormat::Markdown => markdown_table(rows),
        TableFormat::Csv => rows
            .iter()
            .map(|r| r.iter().map(|c| csv_field(c)).collect::<Vec<_>>().join(","))
            .map(|line| line + "\n")
            .collect(),
    }
}

fn text_table(rows: &[Vec<String>], label_width: usize) -> String {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut r = r.clone();
            if let Some(label) = r.first_mut() {
                *label = shorten(label, label_width);
            }
            r
        })
        .collect();
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in &rows {
        let mut line = String::new();
        for (i, cell) in row.iter().enumerate() {
            let pad = widths[i] - cell.chars().count();
            if i == 0 {
                line.push_str(cell);
                line.push_str(&" ".repeat(pad));
            } else {
                line.push_str("  ");
                line.push_str(&" ".repeat(pad));
                line.push_str(cell);
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

fn markdown_table(rows: &[Vec<String>]) -> String {
    let escape = |s: &str| s.replace('|', "\\|");
    let mut out = String::new();
    for (n, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row.iter().map(|c| escape(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
        if n == 0 {
            let rule: Vec<&str> = (0..row.len())
                .map(|i| if i == 0 { "---" } else { "---:" })
                .collect();
            out.push_str(&format!("| {} |\n", rule.join(" | ")));
        }
    }
    out
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows() -> Vec<Vec<String>> {
        vec![
            vec!["".into(), "A".into(), "B".into()],
            vec!["capacity (tps)".into(), "800".into(), "1200.5".into()],
            vec!["slo".into(), "p99 < 5 ms, x|y".into(), "a,\"b\"".into()],
        ]
    }

    #[test]
    fn renders_the_three_formats() {
        let text = render_rows(&rows(), TableFormat::Text, 50);
        assert_eq!(
            text,
            "                              A       B\n\
             capacity (tps)              800  1200.5\n\
             slo             p99 < 5 ms, x|y   a,\"b\"\n"
        );
        let md = render_rows(&rows(), TableFormat::Markdown, 50);
        assert!(
            md.starts_with("|  | A | B |\n| --- | ---: | ---: |\n"),
            "{md}"
        );
        assert!(md.contains("x\\|y"), "{md}");
        let csv = render_rows(&rows(), TableFormat::Csv, 50);
        assert_eq!(
            csv,
            ",A,B\ncapacity (tps),800,1200.5\nslo,\"p99 < 5 ms, x|y\",\"a,\"\"b\"\"\"\n"
        );
    }
}
