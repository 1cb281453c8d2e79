//! Builtin scripts, `-b` name lookup, `-b list`, `--show-script`, and `NAME@WEIGHT`.

use crate::error::{BuiltinError, LoadError, WeightError};
use crate::script::{Script, load_script};

/// A builtin script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Builtin {
    /// Name (`tpcb-like`, ...).
    pub name: &'static str,
    /// Description (`<builtin: TPC-B (sort of)>`), also the script's `desc`.
    pub desc: &'static str,
    /// Script text.
    pub text: &'static str,
}

impl Builtin {
    /// Load the builtin script with a weight.
    pub fn load(&self, weight: u32) -> Result<Script, LoadError> {
        load_script(self.desc, self.text, weight)
    }
}

/// The builtin scripts, in pgbench's order.
pub const BUILTINS: &[Builtin] = &[
    Builtin {
        name: "tpcb-like",
        desc: "<builtin: TPC-B (sort of)>",
        text: "\\set aid random(1, 100000 * :scale)\n\
\\set bid random(1, 1 * :scale)\n\
\\set tid random(1, 10 * :scale)\n\
\\set delta random(-5000, 5000)\n\
BEGIN;\n\
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
UPDATE pgbench_tellers SET tbalance = tbalance + :delta WHERE tid = :tid;\n\
UPDATE pgbench_branches SET bbalance = bbalance + :delta WHERE bid = :bid;\n\
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
END;\n",
    },
    Builtin {
        name: "simple-update",
        desc: "<builtin: simple update>",
        text: "\\set aid random(1, 100000 * :scale)\n\
\\set bid random(1, 1 * :scale)\n\
\\set tid random(1, 10 * :scale)\n\
\\set delta random(-5000, 5000)\n\
BEGIN;\n\
UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;\n\
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n\
INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES (:tid, :bid, :aid, :delta, CURRENT_TIMESTAMP);\n\
END;\n",
    },
    Builtin {
        name: "select-only",
        desc: "<builtin: select only>",
        text: "\\set aid random(1, 100000 * :scale)\n\
SELECT abalance FROM pgbench_accounts WHERE aid = :aid;\n",
    },
];

/// Find a builtin by unambiguous prefix (case-sensitive, as pgbench).
pub fn builtin_by_prefix(name: &str) -> Result<&'static Builtin, BuiltinError> {
    let found: Vec<&Builtin> = BUILTINS
        .iter()
        .filter(|b| b.name.starts_with(name))
        .collect();
    match found.len() {
        1 => Ok(found[0]),
        0 => Err(BuiltinError::NotFound(name.to_string())),
        n => Err(BuiltinError::Ambiguous {
            count: n,
            prefix: name.to_string(),
        }),
    }
}

/// The `Available builtin scripts:` block (stderr), including its final empty line.
pub fn builtin_list_text() -> String {
    let mut s = String::from("Available builtin scripts:\n");
    for b in BUILTINS {
        s.push_str(&format!("  {:>13}: {}\n", b.name, b.desc));
    }
    s.push('\n');
    s
}

/// What `--show-script=NAME` prints on stderr: `-- name: desc`, the text, an empty line.
pub fn show_script_text(name: &str) -> Result<String, BuiltinError> {
    let b = builtin_by_prefix(name)?;
    Ok(format!("-- {}: {}\n{}\n", b.name, b.desc, b.text))
}

/// Split `NAME[@WEIGHT]` at the last `@` (pgbench's `parseScriptWeight`).
pub fn parse_script_weight(spec: &str) -> Result<(String, u32), WeightError> {
    let Some(at) = spec.rfind('@') else {
        return Ok((spec.to_string(), 1));
    };
    let name = spec[..at].to_string();
    let w = &spec[at + 1..];
    let r = pgrush_cconv::strtol(w.as_bytes());
    if r.out_of_range || !r.is_whole(w.as_bytes()) {
        return Err(WeightError::Invalid(spec[at..].to_string()));
    }
    if r.value < 0 || r.value > i64::from(i32::MAX) {
        return Err(WeightError::OutOfRange(r.value));
    }
    Ok((name, r.value as u32))
}

/// pgbench's limit on the number of scripts (`at most 128 SQL scripts are allowed`).
pub const MAX_SCRIPTS: usize = 128;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes() {
        assert_eq!(builtin_by_prefix("se").unwrap().name, "select-only");
        assert_eq!(builtin_by_prefix("t").unwrap().name, "tpcb-like");
        assert_eq!(
            builtin_by_prefix("s").unwrap_err().to_string(),
            "ambiguous builtin name: 2 builtin scripts found for prefix \"s\""
        );
        assert_eq!(
            builtin_by_prefix("").unwrap_err().to_string(),
            "ambiguous builtin name: 3 builtin scripts found for prefix \"\""
        );
        assert_eq!(
            builtin_by_prefix("nosuch").unwrap_err().to_string(),
            "no builtin script found for name \"nosuch\""
        );
        for b in BUILTINS {
            assert!(b.load(1).is_ok());
        }
    }

    #[test]
    fn weights() {
        assert_eq!(parse_script_weight("a@b.sql@3"), Ok(("a@b.sql".into(), 3)));
        assert_eq!(parse_script_weight("x"), Ok(("x".into(), 1)));
        assert_eq!(parse_script_weight("x@ 5"), Ok(("x".into(), 5)));
        assert_eq!(
            parse_script_weight("x@y").unwrap_err().to_string(),
            "invalid weight specification: @y"
        );
        assert_eq!(
            parse_script_weight("x@").unwrap_err().to_string(),
            "invalid weight specification: @"
        );
        assert_eq!(
            parse_script_weight("x@-1").unwrap_err().to_string(),
            "weight specification out of range (0 .. 2147483647): -1"
        );
        assert_eq!(
            parse_script_weight("x@99999999999999999999")
                .unwrap_err()
                .to_string(),
            "invalid weight specification: @99999999999999999999"
        );
    }
}
