//! Loading time grows linearly with a script's size: each test loads an input ten
//! times larger than a small one and bounds the time ratio (the small case is the
//! minimum of a few repetitions, so one slow run on a busy machine does not make
//! the bound tighter). A quadratic loader takes ~100 times longer on the large
//! input; the bound, 30 times, leaves room for noise and cache effects.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use pgrush_script::{CommandKind, Script, load_script};

/// Ten times the input must take less than this many times as long.
const MAX_RATIO: u32 = 30;

fn timed_load(text: &[u8]) -> (Duration, Script) {
    let start = Instant::now();
    let script = load_script("big.sql", text, 1).expect("the script loads");
    (start.elapsed(), script)
}

/// The timing tests of this binary run one at a time, so that they do not slow
/// each other down.
static TIMING: Mutex<()> = Mutex::new(());

/// Asserts that loading `big` (ten times `small`) stays within [`MAX_RATIO`].
fn assert_linear(what: &str, small: &[u8], big: &[u8]) -> Script {
    assert_linear_with(what, &mut |_| small.to_vec(), &mut |_| big.to_vec())
}

/// [`assert_linear`] with a fresh input for each repetition (`small(rep)`,
/// `big(rep)`): for inputs whose first load differs from later ones.
fn assert_linear_with(
    what: &str,
    small: &mut dyn FnMut(usize) -> Vec<u8>,
    big: &mut dyn FnMut(usize) -> Vec<u8>,
) -> Script {
    let _serial = TIMING.lock().unwrap_or_else(|e| e.into_inner());
    let small_time = (0..3)
        .map(|rep| timed_load(&small(rep)).0)
        .min()
        .expect("repetitions");
    let (mut big_time, mut script) = timed_load(&big(0));
    // More tries only while it looks too slow (a busy moment on the machine); a
    // quadratic loader is too slow every time.
    for rep in 1..3 {
        if big_time < small_time * MAX_RATIO {
            break;
        }
        (big_time, script) = timed_load(&big(rep));
    }
    assert!(
        big_time < small_time * MAX_RATIO,
        "{what}: 10x the input took {big_time:?}, the small input {small_time:?}: \
         more than {MAX_RATIO}x (loading is not linear)"
    );
    script
}

/// `n` lines `select i;`.
fn select_lines(n: usize) -> Vec<u8> {
    (1..=n)
        .flat_map(|i| format!("select {i};\n").into_bytes())
        .collect()
}

#[test]
fn many_short_commands_load_in_linear_time() {
    let script = assert_linear(
        "200,000 lines",
        &select_lines(20_000),
        &select_lines(200_000),
    );
    assert_eq!(script.commands.len(), 200_000);
    let last = script.commands.last().expect("commands");
    assert_eq!(last.line, 200_000);
    assert_eq!(last.first_line, b"select 200000;");
    assert_eq!(script.commands[99_999].line, 100_000);
}

/// One statement of about `bytes` bytes, over many lines, with identifiers,
/// numbers, quoted strings, variables and parentheses (every path of the SQL
/// scanner).
fn huge_statement(bytes: usize) -> Vec<u8> {
    let piece = b"  + length('abc''d') * (x1 + 42) - :v\n";
    let mut text = b"\\set v 1\nselect 0\n".to_vec();
    while text.len() < bytes {
        text.extend_from_slice(piece);
    }
    text.extend_from_slice(b";\nselect 1;\n");
    text
}

#[test]
fn one_huge_statement_loads_in_linear_time() {
    let big = huge_statement(10 << 20);
    let script = assert_linear("a 10 MB statement", &huge_statement(1 << 20), &big);
    assert_eq!(script.commands.len(), 3);
    let sql = script.commands[1].sql().expect("SQL");
    assert_eq!(
        sql.text.len(),
        big.len() - b"\\set v 1\n".len() - b"\nselect 1;\n".len()
    );
    assert_eq!(
        script.commands[2].line,
        big.iter().filter(|&&c| c == b'\n').count()
    );
}

/// `n` `\set` commands, each to a variable of its own, named `{prefix}_{i}`.
fn set_lines(prefix: &str, n: usize) -> Vec<u8> {
    (0..n)
        .flat_map(|i| format!("\\set {prefix}_{i} {i} + :{prefix}_0\n").into_bytes())
        .collect()
}

#[test]
fn many_set_variables_load_in_linear_time() {
    // New names each time: variable names are interned once per process.
    let script = assert_linear_with(
        "20,000 \\set variables",
        &mut |rep| set_lines(&format!("small{rep}"), 2_000),
        &mut |rep| set_lines(&format!("big{rep}"), 20_000),
    );
    assert_eq!(script.commands.len(), 20_000);
    let names: std::collections::HashSet<_> = script
        .commands
        .iter()
        .map(|c| match &c.kind {
            CommandKind::Set { var, .. } => var.id,
            other => panic!("not a \\set: {other:?}"),
        })
        .collect();
    assert_eq!(names.len(), 20_000);
}

/// pgbench keeps a script as a C string: a NUL byte ends it, wherever it is.
#[test]
fn a_nul_byte_ends_the_script() {
    let texts =
        |s: &Script| -> Vec<Vec<u8>> { s.commands.iter().map(|c| c.first_line.clone()).collect() };
    let s = load_script("nul.sql", b"select 1;\nselect 2\0 junk;\nselect 3;\n", 1).unwrap();
    assert_eq!(texts(&s), vec![b"select 1;".to_vec(), b"select 2".to_vec()]);
    assert_eq!(s.commands[1].sql().unwrap().text, b"select 2");

    let s = load_script("nul.sql", b"\\set x 1 +\x002\nselect :x;\n", 1);
    assert_eq!(
        s.unwrap_err().to_string(),
        "nul.sql:1: syntax error in command \"set\"\n\\set x 1 +\n         ^ error found here"
    );
    let s = load_script("nul.sql", b"\\set x 1\0 + 2\nselect :x;\n", 1).unwrap();
    assert_eq!(texts(&s), vec![b"\\set x 1".to_vec()]);

    let s = load_script("nul.sql", b"\0select 1;\n", 1);
    assert_eq!(
        s.unwrap_err().to_string(),
        "empty command list for script \"nul.sql\""
    );
}
