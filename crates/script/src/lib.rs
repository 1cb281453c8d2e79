//! pgbench's transaction-script language, pure (no I/O, no clock): builtin scripts,
//! script splitting and meta commands, expressions, variables and the random
//! number generators, all bit-compatible with pgbench 18.
//!
//! The engine loads scripts with [`load_script`] (or [`Builtin::load`]), keeps one
//! [`Variables`] and one expression [`Prng`] per client (see [`Seeds::plan`]),
//! evaluates `\set`/`\if` expressions with [`Expr::eval`], builds SQL text with
//! [`SqlCommand::write_simple`] / [`SqlCommand::params`], and follows
//! [`Command::cond`] jumps for conditionals.
//!
//! Bytes, not text: like pgbench (C strings), the crate takes a script as bytes
//! and keeps them: SQL text, meta-command words, variable names and values, `-D`
//! values and `\gset` results are `Vec<u8>`/`&[u8]`, so a Latin-1 script sends
//! exactly its bytes. Only keywords, function names and numbers are matched as
//! ASCII.
//!
//! Messages: every error's `Display` is pgbench's text without the
//! `pgbench: error: ` prefix, with bytes that are not UTF-8 replaced; the exact
//! bytes (what the CLI and engine write, as pgbench does) come from
//! [`RawMessage::to_bytes`]: the CLI writes `pgrush: error: ` then those bytes.
//!
//! Verification: `tests/` compares this crate with pgbench 18 (and 15) by running
//! the real program on generated scripts: ~1500 expressions through `debug()`,
//! 100+ malformed scripts (message, echoed line, caret), the SQL text sent in simple
//! and extended mode, `-r` command texts, random sequences, script choice, log
//! sampling and `-D` typing. `fuzz/` holds cargo-fuzz targets.
//!
//! Expression nesting is limited exactly as in pgbench, by a model of its bison
//! parser's stack (see `expr/parser.rs`): what pgbench rejects with `memory exhausted`
//! is rejected at the same token. Trees of any depth are handled without exhausting
//! a thread's stack (see [`Expr`]); evaluation needs [`Script::eval_stack_bytes`].
//!
//! Known deliberate deviations (inputs on which pgbench hangs or crashes):
//! `random_zipfian` with a NaN parameter is rejected with the range error (pgbench
//! loops forever); very long operator chains (`1+1+...`, 100000 operators) evaluate
//! (pgbench overflows its stack and crashes).
#![deny(missing_docs)]

mod builtin;
mod builtin_tpcc;
mod builtin_tpcc_client;
mod builtin_tpcc_think;
mod deck;
mod error;
mod expr;
mod meta;
mod named;
mod prng;
mod script;
mod sql;
mod sqlscan;
mod strconv;
mod value;
mod vars;
mod words;

pub use builtin::{
    BUILTINS, Builtin, MAX_SCRIPTS, builtin_by_prefix, builtin_list_text, parse_script_weight,
    show_script_text,
};
pub use builtin_tpcc::{NEW_ORDER_COMMITS, NEW_ORDER_COMMITS_SENT, TPCC_SCRIPTS, TPCC_WEIGHTS};
pub use builtin_tpcc_client::TPCC_CLIENT_SCRIPTS;
pub use builtin_tpcc_think::{
    TPCC_KEYING_S, TPCC_THINK_MAX_SCALE, TPCC_THINK_MEAN_S, with_keying_and_think,
};
pub use deck::CardDeck;
pub use error::{
    BuiltinError, EvalError, LoadError, MetaError, RawMessage, SyntaxError, VarError, WeightError,
};
pub use expr::{Arith, EvalContext, Expr, FastExpr, Func, IntExpr, eval_stack_bytes};
pub use meta::{
    SleepArg, SleepSpec, SleepUnit, build_shell_command, parse_setshell_output,
    setshell_first_line, setshell_line_len,
};
pub use named::{builtin_by_name, show_any_script_text, tpcc_script_named};
pub use prng::{
    Prng, SeedSlice, SeedSpec, Seeds, ThreadRngs, choose_script, hash_fnv1a, hash_murmur2,
    parse_seed_spec, permute, sample, seed_error_lines, throttle_delay_us, throttle_mean_us,
};
pub use script::{Command, CommandKind, CondJumps, Script, load_script};
pub use sql::{GsetKind, MAX_PARAMS, SqlCommand};
pub use strconv::format_g15;
pub use value::Value;
pub use vars::{VarId, VarRef, VarValue, Variables, parse_define, valid_variable_name};

/// Set the automatic variables pgbench defines for client `client_id` unless they
/// were given with `-D`: `scale`, `client_id`, `default_seed`, `random_seed`.
/// `default_seed` is `None` when it was given with `-D` (see [`Seeds::plan`]).
pub fn set_automatic_variables(
    vars: &mut Variables,
    defined_by_user: &dyn Fn(&str) -> bool,
    scale: i64,
    client_id: i64,
    default_seed: Option<i64>,
    random_seed: u64,
) {
    let mut put = |name: &str, v: i64| {
        if !defined_by_user(name) {
            let _ = vars.put_value("startup", name, Value::Int(v));
        }
    };
    put("scale", scale);
    put("client_id", client_id);
    if let Some(ds) = default_seed {
        put("default_seed", ds);
    }
    put("random_seed", random_seed as i64);
}
