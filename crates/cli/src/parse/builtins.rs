//! pgbench's builtin scripts as far as option parsing needs them: lookup by
//! unique prefix, the `-b list` listing and the `--show-script` text.
//!
//! Temporary: this mirrors what `pgrush_script` will export; switch to it when
//! that crate provides `builtin_by_prefix`, `builtin_list_text` and `show_script_text`.

/// One builtin script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    /// Name as used with `-b`.
    pub name: &'static str,
    /// Description (`<builtin: ...>`).
    pub desc: &'static str,
    /// Script text (ends with a newline).
    pub script: &'static str,
}

/// The builtin scripts in pgbench's order.
pub const BUILTINS: [Builtin; 3] = [
    Builtin {
        name: "tpcb-like",
        desc: "<builtin: TPC-B (sort of)>",
        script: TPCB_LIKE,
    },
    Builtin {
        name: "simple-update",
        desc: "<builtin: simple update>",
        script: SIMPLE_UPDATE,
    },
    Builtin {
        name: "select-only",
        desc: "<builtin: select only>",
        script: "\\set aid random(1, 100000 * :scale)\n\
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    },
];

const TPCB_LIKE: &str = "\\set aid random(1, 100000 * :scale)\n\
\\set bid random(1, 1 * :scale)\n\
\\set tid random(1, 10 * :scale)\n\
\\set delta random(-5000, 5000)\n\
BEGIN;\n\
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n\
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
END;\n";

const SIMPLE_UPDATE: &str = "\\set aid random(1, 100000 * :scale)\n\
\\set bid random(1, 1 * :scale)\n\
\\set tid random(1, 10 * :scale)\n\
\\set delta random(-5000, 5000)\n\
BEGIN;\n\
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
END;\n";

/// Why a builtin name did not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LookupError {
    /// No builtin starts with the prefix.
    NotFound,
    /// This many builtins start with the prefix.
    Ambiguous(usize),
}

/// Finds the builtin whose name starts with `prefix` (bytes, as typed).
pub fn by_prefix(prefix: &[u8]) -> Result<&'static Builtin, LookupError> {
    let found: Vec<&'static Builtin> = BUILTINS
        .iter()
        .filter(|b| b.name.as_bytes().starts_with(prefix))
        .collect();
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(LookupError::NotFound),
        many => Err(LookupError::Ambiguous(many.len())),
    }
}

/// The `-b list` text: header, one `%13s: %s` line per script, empty line.
pub fn list_text() -> String {
    let mut s = String::from("Available builtin scripts:\n");
    for b in &BUILTINS {
        s.push_str(&format!("  {:>13}: {}\n", b.name, b.desc));
    }
    s.push('\n');
    s
}

/// The `--show-script` text: `-- name: desc`, the script, an empty line.
pub fn show_text(b: &Builtin) -> String {
    format!("-- {}: {}\n{}\n", b.name, b.desc, b.script)
}
