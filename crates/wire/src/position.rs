//! The `LINE n: ...` / caret display libpq adds to errors that carry a cursor position.
//!
//! Behaviour (observable contract): the line containing the 1-based character position
//! is shown after `LINE n: `, tabs shown as spaces, and a `^` under the character. Lines
//! wider than 60 screen columns are cut: first on the right (keeping at least 10 columns
//! after the cursor), then on the left, with `...` marking each cut.

const DISPLAY_SIZE: usize = 60;
const MIN_RIGHT_CUT: usize = 10;

/// Screen width of one character (East Asian wide characters take two columns,
/// everything else, including control and combining characters, one).
fn char_width(c: char) -> usize {
    let u = c as u32;
    let wide = matches!(u,
        0x1100..=0x115F
        | 0x2E80..=0xA4CF
        | 0xAC00..=0xD7A3
        | 0xF900..=0xFAFF
        | 0xFE30..=0xFE6F
        | 0xFF00..=0xFF5F
        | 0xFFE0..=0xFFE6
        | 0x20000..=0x2FFFD
        | 0x30000..=0x3FFFD)
        && u != 0x303F;
    if wide { 2 } else { 1 }
}

/// Appends the cursor display for `position` (1-based, in characters) in `query`.
/// Appends nothing when the position lies outside the query.
pub(crate) fn append_error_position(out: &mut String, query: &str, position: u32) {
    if position == 0 {
        return;
    }
    let loc = (position - 1) as usize;
    let chars: Vec<char> = query
        .chars()
        .map(|c| if c == '\t' { ' ' } else { c })
        .collect();
    // column[i] = screen column where character i starts; one extra entry for the end.
    let mut column = Vec::with_capacity(chars.len() + 1);
    let mut line_no = 1usize;
    let mut begin = 0usize;
    let mut end: Option<usize> = None;
    let mut col = 0usize;
    let mut scanned = 0usize;
    for (i, &c) in chars.iter().enumerate() {
        column.push(col);
        scanned = i;
        if c == '\r' || c == '\n' {
            if i < loc {
                // A "\r\n" pair counts as one line break.
                if c == '\r' || i == 0 || chars[i - 1] != '\r' {
                    line_no += 1;
                }
                begin = i + 1;
            } else {
                end = Some(i);
                break;
            }
        }
        col += char_width(c);
        scanned = i + 1;
    }
    let mut end = match end {
        Some(e) => e,
        None => {
            column.push(col);
            scanned
        }
    };
    if loc > scanned {
        return;
    }
    let mut begin_cut = false;
    let mut end_cut = false;
    if column[end] - column[begin] > DISPLAY_SIZE {
        if column[begin] + DISPLAY_SIZE >= column[loc] + MIN_RIGHT_CUT {
            while column[end] - column[begin] > DISPLAY_SIZE {
                end -= 1;
            }
            end_cut = true;
        } else {
            while column[loc] + MIN_RIGHT_CUT < column[end] {
                end -= 1;
                end_cut = true;
            }
            while column[end] - column[begin] > DISPLAY_SIZE {
                begin += 1;
                begin_cut = true;
            }
        }
    }
    let prefix = format!("LINE {line_no}: {}", if begin_cut { "..." } else { "" });
    let prefix_width: usize = prefix.chars().map(char_width).sum();
    out.push_str(&prefix);
    out.extend(&chars[begin..end]);
    if end_cut {
        out.push_str("...");
    }
    out.push('\n');
    let caret_col = prefix_width + column[loc] - column[begin];
    out.extend(std::iter::repeat_n(' ', caret_col));
    out.push_str("^\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(q: &str, pos: u32) -> String {
        let mut s = String::new();
        append_error_position(&mut s, q, pos);
        s
    }

    #[test]
    fn single_line() {
        assert_eq!(
            show("select 1/0", 9),
            "LINE 1: select 1/0\n                ^\n"
        );
    }

    #[test]
    fn second_line_and_tab() {
        assert_eq!(
            show("select 1,\n\tfoo from t", 12),
            "LINE 2:  foo from t\n         ^\n"
        );
    }

    #[test]
    fn crlf_counts_once() {
        assert_eq!(show("a\r\nbb", 4), "LINE 2: bb\n        ^\n");
    }

    #[test]
    fn out_of_range_prints_nothing() {
        assert_eq!(show("abc", 10), "");
        assert_eq!(show("abc", 4), "LINE 1: abc\n           ^\n");
    }

    #[test]
    fn long_line_is_cut_on_both_sides() {
        let q = format!("{}X{}", "a".repeat(100), "b".repeat(100));
        let s = show(&q, 101);
        let first = s.lines().next().unwrap_or_default();
        assert!(first.starts_with("LINE 1: ..."), "{s}");
        assert!(first.ends_with("..."), "{s}");
        let caret = s.lines().nth(1).unwrap_or_default();
        assert_eq!(first.chars().nth(caret.len() - 1), Some('X'), "{s}");
    }

    #[test]
    fn long_line_cut_on_right_only() {
        let q = format!("selec {}", "x".repeat(100));
        let s = show(&q, 1);
        assert_eq!(
            s,
            format!("LINE 1: selec {}...\n        ^\n", "x".repeat(54))
        );
    }
}
