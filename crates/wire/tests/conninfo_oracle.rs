//! `parse_conninfo` against libpq's own `PQconninfoParse` (pq-sys, bundled
//! libpq 18) on the corpus in tests/data/conninfo/corpus.txt: the same
//! keyword/value lists and the same error messages.

use std::ffi::{CStr, CString, c_char};

use pgrush_wire::conninfo::{KEYWORDS, parse_conninfo};

type Parsed = Result<Vec<(String, String)>, String>;

fn cstr(p: *const c_char) -> Option<String> {
    if p.is_null() {
        None
    } else {
        // SAFETY: libpq returns NUL-terminated strings that live until freed.
        Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    }
}

/// Walks a libpq option array, collecting (keyword, envvar, val).
///
/// # Safety
/// `opts` must be a live array returned by libpq, terminated by a NULL keyword.
unsafe fn walk(
    opts: *mut pq_sys::PQconninfoOption,
) -> Vec<(String, Option<String>, Option<String>)> {
    let mut out = Vec::new();
    let mut p = opts;
    // SAFETY: per the function contract.
    unsafe {
        while !(*p).keyword.is_null() {
            out.push((
                cstr((*p).keyword).unwrap_or_default(),
                cstr((*p).envvar),
                cstr((*p).val),
            ));
            p = p.add(1);
        }
    }
    out
}

fn libpq_parse(s: &str) -> Parsed {
    let c = CString::new(s).map_err(|e| e.to_string())?;
    let mut err: *mut c_char = std::ptr::null_mut();
    // SAFETY: valid C string and out-pointer.
    let opts = unsafe { pq_sys::PQconninfoParse(c.as_ptr(), &mut err) };
    if opts.is_null() {
        let msg = cstr(err).unwrap_or_else(|| "<no message>".into());
        // SAFETY: err was allocated by libpq (or is NULL).
        unsafe { pq_sys::PQfreemem(err.cast()) };
        return Err(msg.strip_suffix('\n').unwrap_or(&msg).to_string());
    }
    // SAFETY: opts is a live array from libpq, freed right after.
    let all = unsafe { walk(opts) };
    unsafe { pq_sys::PQconninfoFree(opts) };
    Ok(all
        .into_iter()
        .filter_map(|(k, _, v)| v.map(|v| (k, v)))
        .collect())
}

fn unescape(line: &str) -> String {
    let Some(body) = line.strip_prefix('@') else {
        return line.to_string();
    };
    let mut out = String::new();
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('v') => out.push('\u{b}'),
            Some('f') => out.push('\u{c}'),
            Some('r') => out.push('\r'),
            Some('\\') => out.push('\\'),
            Some(o) => {
                out.push('\\');
                out.push(o);
            }
            None => out.push('\\'),
        }
    }
    out
}

fn corpus() -> Vec<String> {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/data/conninfo/corpus.txt"
    );
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    text.lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(unescape)
        .collect()
}

#[test]
fn corpus_matches_libpq() {
    let corpus = corpus();
    assert!(
        corpus.len() >= 200,
        "corpus has only {} entries",
        corpus.len()
    );
    let mut failures = Vec::new();
    let (mut ok, mut err) = (0, 0);
    for s in &corpus {
        let expected = libpq_parse(s);
        let got = parse_conninfo(s).map_err(|e| e.to_string());
        match &expected {
            Ok(_) => ok += 1,
            Err(_) => err += 1,
        }
        if got != expected {
            failures.push(format!(
                "input {s:?}\n  libpq:  {expected:?}\n  pgrush: {got:?}"
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} mismatches:\n{}",
        failures.len(),
        failures.join("\n")
    );
    // The corpus must exercise both outcomes substantially.
    assert!(ok >= 80 && err >= 60, "ok={ok} err={err}");
}

#[test]
fn keyword_table_matches_libpq() {
    // SAFETY: PQconndefaults returns a live array (freed below) or NULL.
    let opts = unsafe { pq_sys::PQconndefaults() };
    assert!(!opts.is_null());
    let all = unsafe { walk(opts) };
    unsafe { pq_sys::PQconninfoFree(opts) };
    let libpq: Vec<(String, Option<String>)> = all.into_iter().map(|(k, e, _)| (k, e)).collect();
    let ours: Vec<(String, Option<String>)> = KEYWORDS
        .iter()
        .map(|k| (k.name.to_string(), k.envvar.map(str::to_string)))
        .collect();
    assert_eq!(ours, libpq);
}
