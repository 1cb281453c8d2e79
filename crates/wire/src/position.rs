//! The `LINE n: ...` / caret display libpq adds to errors that carry a cursor position.
//!
//! Behaviour (observable contract): the line containing the 1-based character position
//! is shown after `LINE n: `, tabs shown as spaces, and a `^` under the character. Lines
//! wider than 60 screen columns are cut: first on the right (keeping at least 10 columns
//! after the cursor), then on the left, with `...` marking each cut.

use crate::encoding::ClientEncoding;

const DISPLAY_SIZE: usize = 60;
const MIN_RIGHT_CUT: usize = 10;

/// Appends the cursor display for `position` (1-based, in characters) in `query`,
/// whose bytes are in the client encoding `encoding` (characters and their screen
/// widths follow that encoding's rules; the query ends at its first NUL, as a C
/// string does). Appends nothing when the position lies outside the query.
pub(crate) fn append_error_position(
    out: &mut Vec<u8>,
    query: &[u8],
    position: u32,
    encoding: ClientEncoding,
) {
    if position == 0 {
        return;
    }
    let query = query.split(|&b| b == 0).next().unwrap_or_default();
    let loc = (position - 1) as usize;
    // start[i] = byte offset and column[i] = screen column where character i
    // starts; one extra entry for the end of the scanned text.
    let mut start = Vec::new();
    let mut column = Vec::new();
    let mut line_no = 1usize;
    let mut begin = 0usize;
    let mut end: Option<usize> = None;
    let (mut offset, mut col, mut scanned) = (0usize, 0usize, 0usize);
    while offset < query.len() {
        let i = start.len();
        let c = query[offset];
        start.push(offset);
        column.push(col);
        scanned = i;
        if c == b'\r' || c == b'\n' {
            if i < loc {
                // A "\r\n" pair counts as one line break.
                if c == b'\r' || i == 0 || query[start[i - 1]] != b'\r' {
                    line_no += 1;
                }
                begin = i + 1;
            } else {
                end = Some(i);
                break;
            }
        }
        let (len, width) = match c {
            b'\t' => (1, 1),
            _ => encoding.next_char(&query[offset..]),
        };
        offset += len;
        col += width;
        scanned = i + 1;
    }
    let mut end = match end {
        Some(e) => e,
        None => {
            start.push(offset);
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
    out.extend_from_slice(prefix.as_bytes());
    // Tabs are shown as spaces.
    out.extend(
        query[start[begin]..start[end]]
            .iter()
            .map(|&b| if b == b'\t' { b' ' } else { b }),
    );
    if end_cut {
        out.extend_from_slice(b"...");
    }
    out.push(b'\n');
    let caret_col = prefix.len() + column[loc] - column[begin];
    out.extend(std::iter::repeat_n(b' ', caret_col));
    out.extend_from_slice(b"^\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(q: &str, pos: u32) -> String {
        let mut s = Vec::new();
        append_error_position(&mut s, q.as_bytes(), pos, ClientEncoding::Utf8);
        String::from_utf8(s).expect("UTF-8 in, UTF-8 out")
    }

    fn show_in(encoding: &str, q: &[u8], pos: u32) -> Vec<u8> {
        let mut s = Vec::new();
        append_error_position(&mut s, q, pos, ClientEncoding::from_name(encoding));
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

    #[test]
    fn wide_characters_move_the_caret_two_columns() {
        assert_eq!(
            show("select 日本, x", 12),
            "LINE 1: select 日本, x\n                     ^\n"
        );
    }

    #[test]
    fn multibyte_encodings_count_characters_not_bytes() {
        // EUC_JP "日本" then half-width "ｱ" (one column), then the cursor on "x".
        let q = b"select \xc6\xfc\xcb\xdc\x8e\xb1 x";
        let mut want = b"LINE 1: ".to_vec();
        want.extend_from_slice(q);
        want.extend_from_slice(b"\n");
        want.extend_from_slice(&[b' '; 8 + 7 + 4 + 1 + 1]);
        want.extend_from_slice(b"^\n");
        assert_eq!(show_in("EUC_JP", q, 12), want);
        // Read one byte per character, the same bytes put the caret further right.
        let latin = show_in("LATIN1", q, 15);
        assert!(latin.ends_with(&[&[b' '; 8 + 14][..], b"^\n"].concat()));
    }

    #[test]
    fn long_multibyte_line_is_cut_on_character_boundaries() {
        let mut q = b"select ".to_vec();
        for _ in 0..40 {
            q.extend_from_slice(b"\x93\xfa"); // SJIS "日"
        }
        q.extend_from_slice(b" bad");
        let s = show_in("SJIS", &q, 7 + 40 + 2);
        let line = s.split(|&b| b == b'\n').next().unwrap_or_default();
        assert!(line.starts_with(b"LINE 1: ..."), "{}", line.escape_ascii());
        // Only whole two-byte characters between the cut marks.
        let body = &line[b"LINE 1: ...".len()..];
        let kanji = body.iter().take_while(|&&b| b == 0x93 || b == 0xfa).count();
        assert_eq!(kanji % 2, 0, "{}", line.escape_ascii());
    }

    #[test]
    fn query_ends_at_nul() {
        assert_eq!(show("ab\0cd", 5), "");
        assert_eq!(show("ab\0cd", 3), "LINE 1: ab\n          ^\n");
    }
}
