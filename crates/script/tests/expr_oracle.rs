//! Differential test: expressions evaluated by this crate vs pgbench 18's `debug()`
//! output and runtime error messages (each expression runs in its own client, so
//! an error only aborts that client).

mod common;

use common::*;
use pgrush_script::load_script;
use pgrush_testkit::oracle::Which;

/// Hand-written expressions (Appendix B of the behaviour notes and more).
const EXPRS: &[&str] = &[
    "1 + 2 * 3",
    "7 / 2",
    "-7 / 2",
    "-7 % 3",
    "7 % -3",
    "7.0 / 2",
    "7 % 2.5",
    "1e3",
    ".5",
    "3.",
    "1/3.0",
    "pi()",
    "5 & 3 | 8 # 1",
    "~5",
    "1 << 62",
    "1 << 64",
    "-8 >> 1",
    "1 < 2 and 3 > 2",
    "1 = 1.0",
    "1 <> 2",
    "1 != 2",
    "2 <= 2 or false",
    "not true",
    "NULL",
    "null is null",
    "1 is not null",
    "1 isnull",
    "1 notnull",
    "true is true",
    "1 is true",
    "null and true",
    "false and null",
    "null or true",
    "true or null",
    "case when 1 = 2 then 10 end",
    "case when 1 = 2 then 10 when 2 = 2 then 20 else 30 end",
    "CASE WHEN 0 THEN 1 ELSE 2 END",
    "case when 0.0 then 1 when null then 2 when 5 then 3 end",
    "abs(-5)",
    "abs(-5.5)",
    "least(3, 1.5, 2)",
    "greatest(3, 1, 2)",
    "least(5)",
    "sqrt(2)",
    "ln(10)",
    "exp(1)",
    "int(3.5)",
    "int(-3.5)",
    "int(2.5)",
    "double(3)",
    "pow(2, 10)",
    "power(2, 0.5)",
    "1.0 / 0",
    "-1.0 / 0",
    "0.0 / 0",
    "sqrt(-1)",
    "123456789012345678",
    "1234567.0 * 1000000000",
    "0.1 + 0.2",
    "1e-5",
    "1e20",
    "-9223372036854775808",
    "- 9223372036854775808",
    "9223372036854775807",
    "3 - -2",
    "+3",
    "2 * (3 + 4)",
    "1 + 2 = 3",
    "8 | 1 + 1",
    "1 & 3 = 1",
    "hash(0)",
    "hash_fnv1a(0)",
    "permute(0, 1)",
    "ABS(-1)",
    "random(5,5)",
    "debug(1)",
    "1.5e3 + 1",
    "10 % 3 * 2",
    "2 + 3 << 1",
    "not 1 = 2",
    "-9223372036854775807 - 1",
    "9223372036854775807 * -1",
    "5 / -1",
    "-9223372036854775808 % -1",
    "int(-0.5)",
    "int(1e18)",
    "abs(-9223372036854775808)",
    "1 < 2.5",
    "least(1, 2) + greatest(1.0, 2)",
    "null + 1",
    "least(null, 1)",
    "int(null)",
    "hash(:client_id, 1)",
    "exp(1000)",
    "1000000 * 1000000 * 1000000",
    "1000000 * 1000000 * 1000000 * 10",
    ":nosuch + 1",
    "1 / 0",
    "9223372036854775807 + 1",
    "random(5, 1)",
    "random_gaussian(1, 10, 1.5)",
    "random_zipfian(1, 10, 1.0)",
    "random_exponential(1, 10, 0)",
    "int(1e300)",
    "true + 1",
    "permute(1, 0)",
    "random(-9223372036854775808, 9223372036854775807)",
    "(-9223372036854775807 - 1) / -1",
    "not 1",
    "least(1, 2.5, :nosuch2)",
    "1 is null is null",
    "1 isnull notnull",
    "mod(7, 3)",
    "mod(-7.5, 2)",
    "-0.0",
    "100000000000000.5",
    "1 isnull < 2",
    "abs(true)",
    "abs(false)",
    "abs(null)",
    "greatest(1, 0.0/0, 3)",
    "least(0.0/0, 1)",
    "int(0.0/0)",
    "int(-1.0/0)",
    "random_gaussian(1,10,0.0/0)",
    "random_exponential(1,10,0.0/0)",
    "double(true)",
    "true + 1.5",
    "not null",
    "sqrt(true)",
    "1 << -1",
    "hash(1.5)",
    "permute(1.5,10)",
    "-(1.5)",
    "greatest(true)",
    "least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17)",
    "least(1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,1/0,17)",
    "exp(-1000)",
    "123456789.123456789",
    "case when 1 then 2 end is null",
    "5.0 % 0",
    "int(9223372036854775807.0)",
    "least(true, 1.5)",
    "greatest(,1)",
    ":default_seed",
    ":random_seed",
    ":scale",
    ":client_id",
    "hash(12345)",
    "hash_fnv1a(12345, 678)",
    "hash_murmur2(-1, 0)",
    "permute(3, 10)",
    "permute(123456, 1000000, 42)",
    "hash_fnv1a(-12345, 5)",
    "hash_murmur2(-7, -3)",
    "permute(-5, 7, -9)",
    "permute(123, 2, 0)",
    "permute(9223372036854775807, 1000003, 77)",
    "hash_fnv1a(9223372036854775807, -1)",
    "random(1, 1000000)",
    "random(-5000, 5000)",
    "random_exponential(1, 1000, 2.5)",
    "random_gaussian(1, 1000, 2.5)",
    "random_zipfian(1, 1000, 1.5)",
    "random_zipfian(1, 1, 1.5)",
    "random_zipfian(5, 5, 2)",
    "random_gaussian(3, 3, 2)",
    "random(-9223372036854775807, 0)",
    "random(0, 9223372036854775806)",
    "random_zipfian(1, 10, 1000.5)",
    "random_zipfian(1, 10, 1000)",
    "random_exponential(1, 10, -1)",
    "random_gaussian(1, 10, 2)",
    "debug(debug(2) + debug(3.5))",
    "case when true then debug(1) else debug(2) end",
    "false and debug(1) = 1",
    "true or debug(1) = 1",
    "null and debug(1) = 1",
    "debug(1) > debug(2)",
    "debug(1) >= debug(2.5)",
    "1 and true",
    "true and 1",
    "true or 1",
    "false or 1",
    "false or null",
    "null or null",
    "true and null",
    "case when null then 1 end",
    "case when 1 then null else 2 end",
    "1 = null",
    "null = null",
    "null is not null",
    "null isnull",
    "null notnull",
    "true is false",
    "false is not false",
    "true is not true",
    "1.5 is null",
    "(1 < 2) is true",
    "1 < 2 is true",
    "not not true",
    "- - 5",
    "-(-9223372036854775807 - 1)",
    "- -9223372036854775808",
    "~0",
    "~-1",
    "~1 + 2",
    "5 # 3",
    "12 & 10",
    "12 | 3",
    "1 << 3 << 2",
    "256 >> 2 >> 1",
    "1.5 << 1",
    "2.5 & 3",
    "3.5 | 0",
    "1 # 2.5",
    "-7.5 % 2",
    "7 % 0.4",
    "1 + 1.5",
    "1.5 - 1",
    "2 * 1.5",
    "3 / 1.5",
    "1 = 1",
    "1 < 1",
    "1.0 <= 1",
    "2 > 1.5",
    "2.0 >= 3",
    "1e308 * 10",
    "-1e308 * 10",
    "1e-300 / 1e10",
    "1e-300 / 1e300",
    "0.1 * 3",
    "1 / 3",
    "2 / 3.0",
    "1000000000000000000000.0",
    "1.0e15",
    "1.0e16",
    "123456789012345.6",
    "0.0001",
    "0.00001",
    "0.000123456789012345678",
    "sqrt(0)",
    "ln(0)",
    "ln(-1)",
    "exp(0)",
    "pow(0, 0)",
    "pow(-8, 1.0/3)",
    "pow(2, -1)",
    "pow(10, 308)",
    "pow(10, 309)",
    "power(-1, 0.5)",
    "int(2.5000001)",
    "int(-2.5)",
    "int(1.5)",
    "int(0.5)",
    "int(-1.5)",
    "int(9.223372036854775e18)",
    "int(-9.223372036854775808e18)",
    "double(-9223372036854775808)",
    "double(9223372036854775807)",
    "greatest(1, 2, 3, 2.5)",
    "least(-1, -2.5)",
    "greatest(null, 1)",
    "least(1, null)",
    "greatest(1.5)",
    "least(3, 2, 1)",
    "abs(-0.0)",
    "abs(0)",
    "abs(-9223372036854775807)",
    "pi() * 2",
    "int(pi() * 1000000)",
    "hash(-1)",
    "hash(9223372036854775807)",
    "hash_murmur2(0, 0)",
    "hash_fnv1a(0, 0)",
    "hash_fnv1a(1, 1)",
    "hash(1, -1)",
    "permute(0, 10, 0)",
    "permute(9, 10, 0)",
    "permute(10, 10, 0)",
    "permute(-1, 10, 0)",
    "permute(5, 1)",
    "permute(5, -1)",
    "permute(1, 2)",
    "permute(7, 3, 123456789)",
    "permute(42, 9223372036854775807, 1)",
    "permute(3, 10, null)",
    "hash(null)",
    "hash(1, null)",
    "random(null, 5)",
    "random(1.4, 1.6)",
    "random(true, 2)",
    "random_gaussian(1, 10, true)",
    "mod(7, 0)",
    "mod(null, 1)",
    "MOD(10, 4)",
    "Pi()",
    "SQRT(4)",
    "debug(null)",
    "debug(true)",
    "debug(1.5)",
    "case when 1 > 2 then 1 when 2 > 1 then 2 end",
    "case when 1 then 2 else 3 end + 1",
    "1 + case when false then 1 else 2 end * 3",
    "(1)",
    "((1 + 2) * (3 + 4))",
    "-(1 + 2)",
    "+(-3)",
    "1 - 2 - 3",
    "2 * 3 % 4",
    "100 / 10 / 5",
    "2 << 1 + 1",
    "not (1 = 1)",
    "not (null)",
    "true and true and false",
    "false or false or true",
    "true or false and false",
    "not false and false",
    "9223372036854775807 - -1",
    "-9223372036854775807 - 2",
    "4611686018427387904 * 2",
    "-4611686018427387904 * 2",
    "3037000500 * 3037000500",
    "9223372036854775807 / -1",
    "-9223372036854775807 / -1",
    "1 % 9223372036854775807",
];

const OPERANDS: &[&str] = &[
    "7",
    "-3",
    "2.5",
    "0",
    "true",
    "null",
    "9223372036854775807",
    "1e300",
];
const OPS: &[&str] = &[
    "+", "-", "*", "/", "%", "=", "<>", "<", "<=", ">", ">=", "&", "|", "#", "<<", ">>", "and",
    "or",
];

fn all_exprs() -> Vec<String> {
    let mut v: Vec<String> = EXPRS.iter().map(|s| s.to_string()).collect();
    for op in OPS {
        for a in OPERANDS {
            for b in OPERANDS {
                v.push(format!("{a} {op} {b}"));
            }
        }
    }
    v
}

fn check_batch(which: Which, idx: usize, exprs: &[String]) {
    let mut text = String::from("\\set m debug(:client_id)\n");
    for (k, e) in exprs.iter().enumerate() {
        let kw = if k == 0 { "\\if" } else { "\\elif" };
        text.push_str(&format!("{kw} :client_id = {k}\n\\set x debug({e})\n"));
    }
    text.push_str("\\endif\n");
    let name = format!("expr_{idx}.sql");
    let n = exprs.len().to_string();
    let out = pgbench(which, &name, &text, &["-c", &n, "--random-seed=1"], true);
    let script = load_script(&name, &text, 1).expect("batch loads");
    let sim = flatten(simulate(&script, exprs.len(), 1, 1, &[]));
    let mut want = by_client(&interesting(&out.stderr), 1);
    let mut got = by_client(&sim, 1);
    want.sort_by_key(|(c, _)| *c);
    got.sort_by_key(|(c, _)| *c);
    assert_eq!(want.len(), exprs.len(), "pgbench output:\n{}", out.stderr);
    for ((wc, w), (gc, g)) in want.iter().zip(got.iter()) {
        assert_eq!(wc, gc);
        assert_eq!(w, g, "expression {:?}", exprs[*wc as usize]);
    }
}

/// Whether this crate evaluates `e` without error (with `--random-seed=1`, client 0).
fn evaluates_ok(e: &str) -> bool {
    let text = format!("\\set x debug({e})\n");
    let script = load_script("probe.sql", &text, 1).expect("expression parses");
    let sim = simulate(&script, 1, 1, 1, &[]);
    !sim.iter()
        .flat_map(|(_, l)| l)
        .any(|l| l.starts_with("pgbench: error"))
}

/// Expressions expected to succeed run one after another in a single client; a
/// divergence (including an unexpected error in pgbench) shows as a line mismatch.
fn check_sequential(which: Which, exprs: &[String]) {
    let mut text = String::from("\\set m debug(:client_id)\n");
    for e in exprs {
        text.push_str(&format!("\\set x debug({e})\n"));
    }
    let out = pgbench(which, "expr_seq.sql", &text, &["--random-seed=1"], true);
    let script = load_script("expr_seq.sql", &text, 1).expect("loads");
    let want = interesting(&out.stderr);
    let got = flatten(simulate(&script, 1, 1, 1, &[]));
    assert!(want.len() > exprs.len(), "{}", out.stderr);
    if let Some(k) = (0..want.len().max(got.len())).find(|&k| want.get(k) != got.get(k)) {
        panic!(
            "first difference at line {k}: pgbench {:?}, pgrush {:?} (command {:?})",
            want.get(k),
            got.get(k),
            want.get(k)
                .and_then(|l| l.split(['=', ')']).nth(2))
                .map(str::to_string)
        );
    }
}

#[test]
fn expressions_match_pgbench18() {
    let exprs = all_exprs();
    assert!(exprs.len() >= 300, "{}", exprs.len());
    let (ok, failing): (Vec<String>, Vec<String>) =
        exprs.into_iter().partition(|e| evaluates_ok(e));
    assert!(
        ok.len() > 300 && failing.len() > 100,
        "{} {}",
        ok.len(),
        failing.len()
    );
    check_sequential(Which::Pgbench18, &ok);
    for (i, chunk) in failing.chunks(60).enumerate() {
        check_batch(Which::Pgbench18, i, chunk);
    }
}

/// pgbench 15 evaluates expressions identically.
#[test]
fn expressions_match_pgbench15() {
    let exprs = all_exprs();
    let (ok, failing): (Vec<String>, Vec<String>) =
        exprs.into_iter().partition(|e| evaluates_ok(e));
    check_sequential(Which::Pgbench15, &ok);
    for (i, chunk) in failing.chunks(60).enumerate() {
        check_batch(Which::Pgbench15, i + 100, chunk);
    }
}
