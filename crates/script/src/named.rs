//! Builtin scripts looked up by their exact name, across pgbench's builtins and both
//! modes of the TPC-C-like workload (which `-b` does not offer).

use crate::builtin::{BUILTINS, Builtin};
use crate::builtin_tpcc::TPCC_SCRIPTS;
use crate::builtin_tpcc_client::TPCC_CLIENT_SCRIPTS;

/// The builtin called exactly `name`: one of pgbench's, or one of the TPC-C-like
/// workload's ([`TPCC_SCRIPTS`] and [`TPCC_CLIENT_SCRIPTS`], which `-b` does not
/// offer).
pub fn builtin_by_name(name: &str) -> Option<&'static Builtin> {
    BUILTINS
        .iter()
        .find(|b| b.name == name)
        .or_else(|| tpcc_script_named(name))
}

/// What `--show-script=NAME` prints: pgbench's builtin by prefix
/// ([`crate::show_script_text`]), or a TPC-C-like workload's script named exactly (so
/// that its text can be run alone with `-f`, as `bench/compare` does).
pub fn show_any_script_text(name: &str) -> Result<String, crate::BuiltinError> {
    match tpcc_script_named(name) {
        Some(b) => Ok(format!("-- {}: {}\n{}\n", b.name, b.desc, b.text)),
        None => crate::show_script_text(name),
    }
}

/// The TPC-C-like workload's script called exactly `name`, in either mode.
pub fn tpcc_script_named(name: &str) -> Option<&'static Builtin> {
    TPCC_SCRIPTS
        .iter()
        .chain(TPCC_CLIENT_SCRIPTS.iter())
        .find(|b| b.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_names_find_pgbenchs_and_both_tpcc_modes_scripts() {
        assert_eq!(builtin_by_name("tpcc-payment"), Some(&TPCC_SCRIPTS[1]));
        assert_eq!(
            builtin_by_name("select-only").map(|b| b.name),
            Some("select-only")
        );
        assert_eq!(builtin_by_name("select"), None);
        let client = &TPCC_CLIENT_SCRIPTS[0];
        assert_eq!(tpcc_script_named(client.name), Some(client));
        assert!(
            show_any_script_text(client.name)
                .unwrap()
                .contains(client.text)
        );
    }
}
