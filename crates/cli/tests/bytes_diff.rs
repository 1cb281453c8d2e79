//! Scripts and values are bytes, as in pgbench (C strings): differential tests
//! against pgbench 18 with ISO-8859-1 scripts, `-D` values that are not UTF-8,
//! `\gset` of server bytes, `\shell`/`\setshell` bytes, and load/run-time error
//! messages that echo such bytes. What the server received is compared exactly
//! (stored values and `current_query()` read back as hex, and the statements and
//! parameters in the server log); stderr is compared byte for byte.

use std::io::Write;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use pgrush_cluster::Cluster;
use pgrush_testkit::oracle::{self, Which};

/// What a run printed, as bytes.
#[derive(Debug, PartialEq, Eq)]
struct Raw {
    stdout: Vec<u8>,
    stderr: Vec<u8>,
    code: i32,
}

/// A scratch directory; removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(files: &[(&str, &[u8])]) -> Dir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let p = std::env::temp_dir().join(format!(
            "pgrush-bytes-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("scratch");
        for (name, text) in files {
            std::fs::write(p.join(name), text).expect("write");
        }
        Dir(p)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Prog {
    Pgbench,
    Pgrush,
}

/// Runs `prog` in `dir` against database `db` with byte arguments.
fn run(prog: Prog, dir: &Path, db: &str, args: &[&[u8]]) -> Raw {
    run_input(prog, dir, db, args, b"")
}

/// [`run`] with `input` on standard input.
fn run_input(prog: Prog, dir: &Path, db: &str, args: &[&[u8]], input: &[u8]) -> Raw {
    run_with(prog, dir, &[("PGDATABASE", db.as_bytes())], args, input)
}

/// [`run`] in database `db` with more environment variables, given as bytes.
fn run_env(prog: Prog, dir: &Path, db: &[u8], env: &[(&str, &[u8])], args: &[&[u8]]) -> Raw {
    let env = [&[("PGDATABASE", db)][..], env].concat();
    run_with(prog, dir, &env, args, b"")
}

/// Runs `prog` in `dir` against the shared cluster with `env` (bytes) added.
fn run_with(prog: Prog, dir: &Path, env: &[(&str, &[u8])], args: &[&[u8]], input: &[u8]) -> Raw {
    let mut cmd = match prog {
        Prog::Pgrush => Command::new(env!("CARGO_BIN_EXE_pgrush")),
        Prog::Pgbench => oracle::require(Which::Pgbench18).command(),
    };
    cmd.current_dir(dir)
        .envs(pgrush_testkit::shared().env())
        .envs(env.iter().map(|(k, v)| (k, std::ffi::OsStr::from_bytes(v))))
        .env_remove("PGBENCH_RANDOM_SEED")
        .env_remove("PGCLIENTENCODING")
        .args(args.iter().map(|a| std::ffi::OsStr::from_bytes(a)))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("run");
    let mut stdin = child.stdin.take().expect("stdin");
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = child.wait_with_output().expect("wait");
    let _ = writer.join();
    Raw {
        stdout: out.stdout,
        stderr: out.stderr,
        code: out
            .status
            .code()
            .unwrap_or_else(|| 128 + out.status.signal().unwrap_or(0)),
    }
}

/// pgbench's bytes with its program name replaced by pgrush's (at line starts, and
/// after `starting vacuum...`, which ends without a newline).
fn renamed(b: &[u8]) -> Vec<u8> {
    const VACUUM: &[u8] = b"starting vacuum...";
    let mut out = Vec::with_capacity(b.len());
    for mut line in b.split_inclusive(|&c| c == b'\n') {
        if let Some(rest) = line.strip_prefix(VACUUM) {
            out.extend_from_slice(VACUUM);
            line = rest;
        }
        match line.strip_prefix(b"pgbench: ") {
            Some(rest) => {
                out.extend_from_slice(b"pgrush: ");
                out.extend_from_slice(rest);
            }
            None => out.extend_from_slice(line),
        }
    }
    out
}

fn show(b: &[u8]) -> String {
    b.escape_ascii().to_string()
}

/// Runs both programs; asserts equal exit codes and byte-identical stderr.
fn same_stderr(dir: &Path, db: &str, args: &[&[u8]]) -> (Raw, Raw) {
    same_stderr_input(dir, db, args, b"")
}

/// [`same_stderr`] with `input` on standard input.
fn same_stderr_input(dir: &Path, db: &str, args: &[&[u8]], input: &[u8]) -> (Raw, Raw) {
    let theirs = run_input(Prog::Pgbench, dir, db, args, input);
    let ours = run_input(Prog::Pgrush, dir, db, args, input);
    assert_eq!(
        show(&renamed(&theirs.stderr)),
        show(&ours.stderr),
        "stderr of {:?}",
        args.iter().map(|a| show(a)).collect::<Vec<_>>()
    );
    assert_eq!(theirs.code, ours.code, "exit code");
    (theirs, ours)
}

/// psql in `db` with SQL given as bytes, client encoding = the database's.
fn psql(db: &str, encoding: &str, sql: &[u8]) -> String {
    pgrush_testkit::shared()
        .psql_in(db, sql, &[("PGCLIENTENCODING", encoding)])
        .unwrap_or_else(|e| panic!("psql {}: {e}", show(sql)))
        .trim_end()
        .to_string()
}

/// A database with `encoding`, C collation, logging its statements or not.
fn database(name: &str, encoding: &str, log: bool) -> &'static Cluster {
    let c = pgrush_testkit::shared();
    let setting = if log { "all" } else { "none" };
    c.psql(&format!(
        "DROP DATABASE IF EXISTS {name}; CREATE DATABASE {name} ENCODING '{encoding}' \
         LC_COLLATE 'C' LC_CTYPE 'C' TEMPLATE template0; \
         ALTER DATABASE {name} SET log_statement = '{setting}'"
    ))
    .expect("create database");
    c
}

/// The statement, execute and parameter lines the server logged in the byte
/// range `span` of its log (the text after the level tag), as bytes.
fn logged_statements(c: &Cluster, span: std::ops::Range<usize>) -> Vec<Vec<u8>> {
    let log = std::fs::read(c.log_path()).unwrap_or_default();
    let tags: [&[u8]; 3] = [
        b"LOG:  statement: ",
        b"LOG:  execute ",
        b"DETAIL:  parameters: ",
    ];
    log.get(span)
        .unwrap_or_default()
        .split(|&b| b == b'\n')
        .filter_map(|l| {
            tags.iter().find_map(|t| {
                l.windows(t.len())
                    .position(|w| w == *t)
                    .map(|i| l[i..].to_vec())
            })
        })
        .collect()
}

fn log_len(c: &Cluster) -> usize {
    std::fs::metadata(c.log_path()).map_or(0, |m| m.len() as usize)
}

/// Only one test at a time runs statements in a logged database.
static LOG: Mutex<()> = Mutex::new(());

const TABLE_SQL: &[u8] = b"CREATE TABLE \"t\xe9\" (n int, v text, q text, \"c\xe9\" text)";

/// Hex of every row of the Latin-1-named table (value, query text, column).
fn table_hex(db: &str, encoding: &str) -> String {
    psql(
        db,
        encoding,
        b"SELECT n, encode(v::bytea, 'hex'), encode(q::bytea, 'hex'), \
          encode(\"c\xe9\"::bytea, 'hex') FROM \"t\xe9\" ORDER BY n, v, q",
    )
}

/// ISO-8859-1 script: non-ASCII bytes in a string literal, comments, a quoted
/// identifier, and a `-D` value substituted into SQL.
const LATIN1_SCRIPT: &[u8] = b"-- d\xe9but du script\n\
INSERT INTO \"t\xe9\" (n, v, q) VALUES (1, 'caf\xe9' /* comm\xe9ntaire */, current_query());\n\
INSERT INTO \"t\xe9\" (n, v, q, \"c\xe9\") VALUES (2, :val, current_query(), :val); -- fin \xe9\n";

/// Runs the Latin-1 script with both programs in each query mode and compares
/// what the server stored and logged.
fn latin1_script_in(db: &str, encoding: &str) {
    let _guard = LOG.lock().unwrap_or_else(|p| p.into_inner());
    let c = database(db, encoding, true);
    psql(db, encoding, TABLE_SQL);
    let dir = Dir::new(&[("latin1.sql", LATIN1_SCRIPT)]);
    for mode in ["simple", "extended", "prepared"] {
        let mut seen = Vec::new();
        for prog in [Prog::Pgbench, Prog::Pgrush] {
            psql(db, encoding, b"TRUNCATE \"t\xe9\"");
            let from = log_len(c);
            let out = run(
                prog,
                &dir.0,
                db,
                &[
                    b"-n",
                    b"-t",
                    b"1",
                    b"-M",
                    mode.as_bytes(),
                    b"-D",
                    b"val='\xe9t\xe9 \xa4'",
                    b"-f",
                    b"latin1.sql",
                ],
            );
            assert_eq!(out.code, 0, "{prog:?} {mode}: {}", show(&out.stderr));
            let logged = logged_statements(c, from..log_len(c));
            let rows = table_hex(db, encoding);
            // The Latin-1 bytes reached the server unchanged.
            assert!(rows.contains("636166e9"), "{prog:?} {mode}: {rows}");
            assert!(rows.contains("636f6d6de96e7461697265"), "{rows}");
            seen.push((rows, logged));
        }
        let (ours, theirs) = (seen.pop().expect("pgrush"), seen.pop().expect("pgbench"));
        assert_eq!(theirs.0, ours.0, "stored rows, -M {mode} in {encoding}");
        let shown = |v: &[Vec<u8>]| v.iter().map(|l| show(l)).collect::<Vec<_>>();
        assert!(!theirs.1.is_empty(), "log_statement lines expected");
        assert_eq!(shown(&theirs.1), shown(&ours.1), "logged, -M {mode}");
    }
}

#[test]
fn latin1_script_in_sql_ascii_database() {
    latin1_script_in("bytes_ascii", "SQL_ASCII");
}

#[test]
fn latin1_script_in_latin1_database() {
    latin1_script_in("bytes_latin1", "LATIN1");
}

/// `\gset` of server bytes (a Latin-1 value and column name) substituted into a
/// later command; `\shell` with Latin-1 words; `--debug` output.
#[test]
fn gset_and_shell_bytes() {
    let _guard = LOG.lock().unwrap_or_else(|p| p.into_inner());
    let (db, enc) = ("bytes_gset", "SQL_ASCII");
    database(db, enc, true);
    psql(db, enc, TABLE_SQL);
    let script: &[u8] = b"SELECT quote_literal('caf' || chr(233)) AS g, quote_literal(chr(164)) AS \"n\xe9\" \\gset p_\n\
INSERT INTO \"t\xe9\" (n, v, q, \"c\xe9\") VALUES (3, :p_g, current_query(), :p_n\xe9);\n\
\\shell printf '%s|\\351|%s' :p_n\xe9 \xe9t\xe9 > shell.out\n";
    for mode in ["simple", "extended", "prepared"] {
        let mut stored = Vec::new();
        for prog in [Prog::Pgbench, Prog::Pgrush] {
            psql(db, enc, b"TRUNCATE \"t\xe9\"");
            let dir = Dir::new(&[("g.sql", script)]);
            let out = run(
                prog,
                &dir.0,
                db,
                &[b"-n", b"-t", b"1", b"-M", mode.as_bytes(), b"-f", b"g.sql"],
            );
            assert_eq!(out.code, 0, "{prog:?} {mode}: {}", show(&out.stderr));
            let shell = std::fs::read(dir.0.join("shell.out")).expect("shell output");
            assert_eq!(show(&shell), show(b"\xa4|\xe9|\xe9t\xe9"));
            stored.push(table_hex(db, enc));
        }
        assert_eq!(stored[0], stored[1], "-M {mode}");
        assert!(stored[1].contains("27636166e927"), "{}", stored[1]);
    }
    // --debug echoes the bytes sent and the meta-command words.
    let dir = Dir::new(&[("g.sql", script)]);
    let args: &[&[u8]] = &[b"-n", b"-t", b"1", b"--debug", b"-f", b"g.sql"];
    let theirs = run(Prog::Pgbench, &dir.0, db, args);
    let ours = run(Prog::Pgrush, &dir.0, db, args);
    let keep = |b: &[u8]| {
        b.split(|&c| c == b'\n')
            .filter(|l| {
                l.windows(8).any(|w| w == b"sending " || w == b"executi")
                    && !l.windows(5).any(|w| w == b"BEGIN")
            })
            .map(|l| show(&renamed(l)))
            .collect::<Vec<_>>()
    };
    assert!(!keep(&theirs.stderr).is_empty());
    assert_eq!(keep(&theirs.stderr), keep(&ours.stderr));
}

/// `\setshell` reading a Latin-1 byte: the error echoes it raw (and `--debug`
/// shows the first argument raw when the output is an integer).
#[test]
fn setshell_bytes() {
    let db = "postgres";
    let dir = Dir::new(&[
        ("bad.sql", b"\\setshell x printf '\\351'\n"),
        ("ok.sql", b"\\setshell x printf '42' \xe9\n"),
    ]);
    let (_, ours) = same_stderr(&dir.0, db, &[b"-n", b"-t", b"1", b"-f", b"bad.sql"]);
    assert_eq!(ours.code, 2);
    let want: &[u8] = b"printf: shell command must return an integer (not \"\xe9\")";
    assert!(
        ours.stderr.windows(want.len()).any(|w| w == want),
        "{}",
        show(&ours.stderr)
    );
    let (theirs, _) = same_stderr(
        &dir.0,
        db,
        &[b"-n", b"-t", b"1", b"--debug", b"-f", b"ok.sql"],
    );
    assert_eq!(theirs.code, 0);
}

/// Load errors on lines holding Latin-1 bytes: message, echoed line and caret,
/// byte for byte, exit 1.
#[test]
fn load_errors_echo_bytes() {
    let cases: &[&[u8]] = &[
        b"\\set x 1 + caf\xe9(2)\n",
        b"\\s\xe9t x 1\n",
        b"\\sleep 1 \xe9s\n",
        b"\\sleep \xe9\n",
        b"SELECT '\xe9';\n\\set x 1 + * 2 -- \xe9\n",
        b"\\set x (1 + \\\n  \xe9\n",
        b"\\setshell x\n-- \xe9\n",
        b"\\shell echo \xe9\n\\gset\n",
        b"\\startpipeline \xe9\n",
        b"\\set x 1 \xe9 \xe8\n",
    ];
    for (i, text) in cases.iter().enumerate() {
        let name = format!("e{i}.sql");
        let dir = Dir::new(&[(&name, text)]);
        let (theirs, _) = same_stderr(&dir.0, "postgres", &[b"-n", b"-f", name.as_bytes()]);
        assert_eq!(theirs.code, 1, "{}", show(text));
        // The same script on standard input (`-f -`).
        let (theirs, _) = same_stderr_input(&dir.0, "postgres", &[b"-n", b"-f", b"-"], text);
        assert_eq!(theirs.code, 1, "stdin: {}", show(text));
    }
    // File names are bytes too: in load errors and open errors.
    let dir = Dir::new(&[]);
    let name: &[u8] = b"caf\xe9.sql";
    std::fs::write(dir.0.join(std::ffi::OsStr::from_bytes(name)), b"\\if 1\n").expect("write");
    let absent: &[u8] = b"absent\xe9.sql";
    for file in [name, absent] {
        let args: &[&[u8]] = &[b"-n", b"-f", file];
        let (theirs, ours) = same_stderr(&dir.0, "postgres", args);
        assert_eq!(theirs.code, 1);
        assert!(ours.stderr.contains(&0xe9), "{}", show(&ours.stderr));
    }
    // An SQL command with more than 255 variables, echoed in the error.
    let mut many = b"SELECT '\xe9'".to_vec();
    for _ in 0..256 {
        many.extend_from_slice(b", :v\xe9");
    }
    many.push(b'\n');
    let dir = Dir::new(&[("many.sql", &many)]);
    let (theirs, _) = same_stderr(
        &dir.0,
        "postgres",
        &[b"-M", b"extended", b"-f", b"many.sql"],
    );
    assert_eq!(theirs.code, 1);
}

/// `-D` names and values that are not UTF-8: name validation, typing errors
/// (`malformed variable`), `debug()` of such variables and run-time echoes.
#[test]
fn define_bytes() {
    let dir = Dir::new(&[
        ("malformed.sql", b"\\set x :v + 1\n"),
        ("name.sql", b"\\set x debug(:caf\xe9 + 1)\n"),
        ("utf8.sql", "\\set x debug(:é * 2)\n".as_bytes()),
        ("sleep.sql", b"\\sleep :v ms\n"),
        ("undefined.sql", b"\\set x debug(:ind\xe9fini)\n"),
        ("shell.sql", b"\\shell echo :ind\xe9fini\n"),
    ]);
    let t1: &[&[u8]] = &[b"-n", b"-t", b"1"];
    let runs: &[&[&[u8]]] = &[
        &[b"-D", b"v=\xe9t\xe9", b"-f", b"malformed.sql"],
        &[b"-D", b"v=1\xe9", b"-f", b"malformed.sql"],
        &[b"-D", b"caf\xe9=41", b"-f", b"name.sql"],
        &[b"-D", b"caf\xe9=\xff", b"-f", b"name.sql"],
        &["-D".as_bytes(), "é=21".as_bytes(), b"-f", b"utf8.sql"],
        &[b"-D", b"v=\xe9", b"-f", b"sleep.sql"],
        &[b"-f", b"undefined.sql"],
        &[b"-f", b"shell.sql"],
        &[b"-D", b"1\xe9=1", b"-f", b"name.sql"],
        &[b"-D", b"\xe9", b"-f", b"name.sql"],
        &[b"-D", b"\xe9=", b"-f", b"name.sql"],
        &[b"-D", b"\xe9=1", b"-f", b"name.sql"],
    ];
    for r in runs {
        // debug() output and error messages are on stderr.
        let _ = same_stderr(&dir.0, "postgres", &[t1, r].concat());
    }
}

/// Server errors and notices in a single-byte client encoding: the message, the
/// `LINE n:` echo of the query and the caret, byte for byte, in each query mode.
#[test]
fn server_messages_bytes() {
    let dir = Dir::new(&[
        (
            "err.sql",
            b"SELECT 'caf\xe9', caf\xe9 FROM (SELECT 1) AS s(x);\n",
        ),
        (
            "notice.sql",
            b"DO $$BEGIN RAISE NOTICE 'caf\xe9 %', 1; END$$;\nSELECT 1;\n",
        ),
        ("param.sql", b"SELECT 'x', :val::int;\n"),
        (
            "pipeline.sql",
            b"\\startpipeline\nSELECT 1;\nSELECT caf\xe9;\nSELECT 2;\n\\endpipeline\n",
        ),
    ]);
    for (db, enc) in [
        ("bytes_msg_latin1", "LATIN1"),
        ("bytes_msg_ascii", "SQL_ASCII"),
    ] {
        database(db, enc, false);
        for mode in ["simple", "extended", "prepared"] {
            let m = mode.as_bytes();
            let mut files = vec![(&b"err.sql"[..], 2), (b"notice.sql", 0)];
            if mode != "simple" {
                files.push((b"pipeline.sql", 2));
            }
            for (file, code) in files {
                let (theirs, ours) =
                    same_stderr(&dir.0, db, &[b"-n", b"-t", b"1", b"-M", m, b"-f", file]);
                assert_eq!(theirs.code, code, "{}", show(&theirs.stderr));
                assert!(ours.stderr.contains(&0xe9), "{}", show(&ours.stderr));
            }
            let args: &[&[u8]] = &[
                b"-n",
                b"-t",
                b"1",
                b"-M",
                m,
                b"-D",
                b"val=\xe9",
                b"-f",
                b"param.sql",
            ];
            let (theirs, _) = same_stderr(&dir.0, db, args);
            assert_eq!(theirs.code, 2);
        }
    }
}

/// A Latin-1 script with a Latin-1 file name, for the report tests: bytes in SQL
/// first lines (one continued on the next line), a comment and a meta command
/// (a Latin-1 variable name).
const REPORT_SCRIPT: &[u8] = b"-- d\xe9but\n\
SELECT 'caf\xe9' AS x;\n\
\\set v\xe9 1\n\
SELECT :v\xe9, 'cr\xe8me' -- comm\xe9nt\n  , 2;\n";

/// A scratch directory holding the report scripts under their Latin-1 names.
fn report_scripts() -> (Dir, &'static [u8], &'static [u8]) {
    let dir = Dir::new(&[]);
    let one: &[u8] = b"caf\xe9.sql";
    let two: &[u8] = b"\xe9t\xe9.sql";
    for (name, text) in [(one, REPORT_SCRIPT), (two, b"SELECT '\xe9t\xe9';\n")] {
        std::fs::write(dir.0.join(std::ffi::OsStr::from_bytes(name)), text).expect("write");
    }
    (dir, one, two)
}

/// Report bytes with numbers masked and the padding before them collapsed (widths
/// follow the numbers), the banner's program name replaced.
fn masked_report(stdout: &[u8]) -> String {
    let b = stdout
        .strip_prefix(b"pgbench (")
        .map_or(stdout.to_vec(), |rest| [&b"pgrush ("[..], rest].concat());
    let mut out: Vec<u8> = Vec::with_capacity(b.len());
    for &c in &pgrush_testkit::mask_numbers_bytes(&b) {
        if c == b'N' {
            while out.ends_with(b"  ") {
                out.pop();
            }
        }
        out.push(c);
    }
    show(&out)
}

/// The final report prints script names (`transaction type:`, `SQL script N:`) and
/// `-r` command lines as their bytes, as pgbench does: stdout compared byte for byte
/// (numbers masked) with pgbench 18's, for one and two scripts and in each query
/// mode; stderr and exit codes equal. `--debug` names the script raw too.
#[test]
fn report_prints_script_bytes() {
    let db = "bytes_report";
    database(db, "SQL_ASCII", false);
    let (dir, one, two) = report_scripts();
    let two_weighted = [two, b"@2"].concat();
    let runs: &[&[&[u8]]] = &[
        &[b"-f", one],
        &[b"-f", one, b"-f", &two_weighted],
        &[b"-M", b"prepared", b"-f", two, b"-f", one],
        &[b"-M", b"extended", b"--max-tries=2", b"-f", one],
    ];
    for r in runs {
        let args = [&[&b"-n"[..], b"-r", b"-t", b"2", b"--random-seed=7"][..], r].concat();
        let (theirs, ours) = same_stderr(&dir.0, db, &args);
        assert_eq!(theirs.code, 0, "{}", show(&theirs.stderr));
        assert_eq!(masked_report(&theirs.stdout), masked_report(&ours.stdout));
        let want: &[&[u8]] = &[b" SELECT 'caf\xe9' AS x;\n", b" \\set v\xe9 1\n"];
        for w in want {
            assert!(
                ours.stdout.windows(w.len()).any(|x| x == *w),
                "{}",
                show(&ours.stdout)
            );
        }
    }
    let executing = |b: &[u8]| {
        b.split(|&c| c == b'\n')
            .filter(|l| l.windows(17).any(|w| w == b"executing script "))
            .map(|l| show(&renamed(l)))
            .collect::<Vec<_>>()
    };
    let args: &[&[u8]] = &[b"-n", b"-t", b"1", b"--debug", b"-f", one];
    let theirs = run(Prog::Pgbench, &dir.0, db, args);
    let ours = run(Prog::Pgrush, &dir.0, db, args);
    assert_eq!(
        executing(&theirs.stderr),
        [show(b"pgrush: client 0 executing script \"caf\xe9.sql\"")]
    );
    assert_eq!(executing(&theirs.stderr), executing(&ours.stderr));
}

/// `--json` and `--html` of a run with Latin-1 script names and SQL are UTF-8 (those
/// bytes replaced by U+FFFD), and `pgrush report` reads the JSON back.
#[test]
fn json_of_latin1_scripts_is_utf8() {
    let db = "bytes_report_json";
    database(db, "SQL_ASCII", false);
    let (dir, one, two) = report_scripts();
    let args: &[&[u8]] = &[
        b"-n",
        b"-r",
        b"-t",
        b"2",
        b"-f",
        one,
        b"-f",
        two,
        b"--json=run.json",
        b"--html=run.html",
        b"--no-warnings",
    ];
    let out = run(Prog::Pgrush, &dir.0, db, args);
    assert_eq!(out.code, 0, "{}", show(&out.stderr));
    let json = std::fs::read(dir.0.join("run.json")).expect("run.json");
    let text = String::from_utf8(json).expect("the JSON document is UTF-8");
    let doc: serde_json::Value = serde_json::from_str(&text).expect("valid JSON");
    assert_eq!(doc["scripts"][0]["description"], "caf\u{fffd}.sql");
    assert_eq!(doc["scripts"][1]["description"], "\u{fffd}t\u{fffd}.sql");
    assert_eq!(
        doc["scripts"][0]["commands"][0]["text"],
        "SELECT 'caf\u{fffd}' AS x;"
    );
    let report = doc["report_text"].as_str().unwrap_or_default();
    assert!(
        report.contains("\nSQL script 2: \u{fffd}t\u{fffd}.sql\n"),
        "{report}"
    );
    assert!(report.contains(" SELECT :v\u{fffd}, 'cr\u{fffd}me' -- comm\u{fffd}nt\n"));
    let html = std::fs::read(dir.0.join("run.html")).expect("run.html");
    let html = String::from_utf8(html).expect("the HTML document is UTF-8");
    assert!(html.contains("caf\u{fffd}.sql"));
    let back = run(Prog::Pgrush, &dir.0, db, &[b"report", b"run.json"]);
    assert_eq!(back.code, 0, "{}", show(&back.stderr));
    assert!(!back.stdout.is_empty());
}

/// A view named pgbench_branches whose rows raise an error with Latin-1 bytes.
const FAILING_BRANCHES: &[u8] = b"CREATE FUNCTION f() RETURNS SETOF int LANGUAGE plpgsql AS \
$$BEGIN RAISE EXCEPTION 'caf\xe9 %', 1 USING DETAIL = 'd\xe9tail', HINT = 'h\xe9'; END$$; \
CREATE VIEW pgbench_branches AS SELECT * FROM f()";

/// The pgbench tables (one branch, no data otherwise), and a trigger refusing to
/// truncate pgbench_history with a Latin-1 message.
const REFUSING_TRUNCATE: &[u8] = b"DROP VIEW pgbench_branches; \
CREATE TABLE pgbench_branches (bid int, bbalance int, filler char(88)); \
INSERT INTO pgbench_branches VALUES (1, 0); \
CREATE TABLE pgbench_tellers (tid int, bid int, tbalance int, filler char(84)); \
CREATE TABLE pgbench_accounts (aid int, bid int, abalance int, filler char(84)); \
CREATE TABLE pgbench_history (tid int, bid int, aid int, delta int, mtime timestamp, \
filler char(22)); \
CREATE FUNCTION tr() RETURNS trigger LANGUAGE plpgsql AS \
$$BEGIN RAISE EXCEPTION 'tronqu\xe9'; END$$; \
CREATE TRIGGER t BEFORE TRUNCATE ON pgbench_history FOR EACH STATEMENT EXECUTE FUNCTION tr()";

/// Server errors during setup in a single-byte client encoding, byte for byte: the
/// branch count query (exit 1), the pre-run vacuum's truncate (reported, ignored) and
/// `-i`'s failed statement with client- and server-side generation (exit 1).
#[test]
fn setup_messages_bytes() {
    let dir = Dir::new(&[("one.sql", b"SELECT 1;\n")]);
    let run_args: &[&[u8]] = &[b"-t", b"1", b"-f", b"one.sql"];
    for (db, enc) in [
        ("bytes_setup_ascii", "SQL_ASCII"),
        ("bytes_setup_latin1", "LATIN1"),
    ] {
        database(db, enc, false);
        psql(db, enc, FAILING_BRANCHES);
        // Builtin scripts need the scale: the branch count is queried.
        let (theirs, ours) = same_stderr(&dir.0, db, &[b"-n", b"-S", b"-t", b"1"]);
        assert_eq!(theirs.code, 1, "{}", show(&theirs.stderr));
        let want: &[u8] =
            b"could not count number of branches: ERROR:  caf\xe9 1\nDETAIL:  d\xe9tail\n";
        assert!(
            ours.stderr.windows(want.len()).any(|w| w == want),
            "{}",
            show(&ours.stderr)
        );
        psql(db, enc, REFUSING_TRUNCATE);
        let (theirs, ours) = same_stderr(&dir.0, db, run_args);
        assert_eq!(theirs.code, 0, "{}", show(&theirs.stderr));
        assert!(
            ours.stderr
                .starts_with(b"starting vacuum...pgrush: error: ERROR:  tronqu\xe9\n")
        );
        for steps in [&b"g"[..], b"G"] {
            let (theirs, ours) = same_stderr(&dir.0, db, &[b"-i", b"-I", steps]);
            assert_eq!(theirs.code, 1, "{}", show(&theirs.stderr));
            assert!(ours.stderr.contains(&0xe9), "{}", show(&ours.stderr));
        }
    }
}

/// Text (written in UTF-8 here) as the bytes of `encoding`, converted by the
/// server; asserts it holds no byte that pgbench's script scanner could take for
/// a quote, a backslash, a variable or the end of a command.
fn encoded(text: &str, encoding: &str) -> Vec<u8> {
    let hex = psql(
        "postgres",
        "UTF8",
        format!("SELECT encode(convert_to('{text}', '{encoding}'), 'hex')").as_bytes(),
    );
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex"))
        .collect();
    assert!(!bytes.is_empty(), "{text} in {encoding}");
    assert!(
        !bytes.iter().any(|b| b"\\':;".contains(b)),
        "{text} in {encoding}: {hex}"
    );
    bytes
}

/// Server errors whose cursor follows multibyte characters in a multibyte client
/// encoding other than UTF-8: the `LINE n:` caret counts characters and their
/// screen widths (two columns for the wide ones, one for half-width kana) as
/// libpq does, also where the line is cut to 60 columns. EUC_JP is a server
/// encoding; SJIS, GBK and BIG5 are client encodings of a UTF8 database.
#[test]
fn caret_counts_characters_in_multibyte_client_encodings() {
    let cases = [
        ("mb_eucjp", "EUC_JP", "ｱｲｳ日本語", "日本"),
        ("mb_sjis", "SJIS", "ｱｲｳ日本語", "日本"),
        ("mb_gbk", "GBK", "中文字符", "中文"),
        ("mb_big5", "BIG5", "中文字元", "中文"),
    ];
    for (db, encoding, literal, column) in cases {
        let c = if encoding == "EUC_JP" {
            database(db, encoding, false)
        } else {
            let c = database(db, "UTF8", false);
            c.psql(&format!(
                "ALTER DATABASE {db} SET client_encoding = '{encoding}'"
            ))
            .expect("set client_encoding");
            c
        };
        let _ = c;
        let lit = encoded(literal, encoding);
        let col = encoded(column, encoding);
        let wide = encoded(&literal.repeat(8), encoding);
        let short = [
            &b"SELECT '"[..],
            &lit,
            b"', ",
            &col,
            b" FROM (SELECT 1) AS s(x);\n",
        ]
        .concat();
        let long = [
            &b"SELECT '"[..],
            &wide,
            b"' AS a, 'x' AS b, ",
            &col,
            b" FROM (SELECT 1) AS s(x);\n",
        ]
        .concat();
        let second_line = [&b"SELECT 1,\n\t'"[..], &lit, b"', ", &col, b";\n"].concat();
        let dir = Dir::new(&[
            ("short.sql", &short),
            ("long.sql", &long),
            ("second.sql", &second_line),
        ]);
        for mode in ["simple", "prepared"] {
            for file in ["short.sql", "long.sql", "second.sql"] {
                let args: &[&[u8]] = &[
                    b"-n",
                    b"-t",
                    b"1",
                    b"-M",
                    mode.as_bytes(),
                    b"-f",
                    file.as_bytes(),
                ];
                let (theirs, ours) = same_stderr(&dir.0, db, args);
                assert_eq!(
                    theirs.code,
                    2,
                    "{encoding} {file}: {}",
                    show(&theirs.stderr)
                );
                assert!(
                    ours.stderr.windows(5).any(|w| w == b"LINE "),
                    "{encoding} {file}: {}",
                    show(&ours.stderr)
                );
            }
        }
    }
}

/// Connection parameters are bytes, as in libpq: a role and a database whose
/// names are ISO-8859-1 bytes (made in a SQL_ASCII database, where the server
/// checks no encoding), given with `-U`/`-d`, in a conninfo string, in
/// `PGUSER`/`PGDATABASE`, and a socket directory whose name is not UTF-8. The
/// runs that connect must connect; the ones that fail must print the same bytes.
#[test]
fn connection_parameters_are_bytes() {
    let c = database("bytes_conn_ascii", "SQL_ASCII", false);
    psql(
        "bytes_conn_ascii",
        "SQL_ASCII",
        b"DROP DATABASE IF EXISTS \"b\xe9se\"; DROP ROLE IF EXISTS \"r\xf4le\"; \
          CREATE ROLE \"r\xf4le\" LOGIN SUPERUSER; \
          CREATE DATABASE \"b\xe9se\" ENCODING 'SQL_ASCII' LC_COLLATE 'C' LC_CTYPE 'C' \
          TEMPLATE template0",
    );
    let dir = Dir::new(&[(
        "who.sql",
        b"SELECT 1 / (current_user = E'r\\xf4le' AND current_database() = E'b\\xe9se')::int;\n",
    )]);
    let who: &[&[u8]] = &[b"-n", b"-t", b"1", b"-f", b"who.sql"];
    fn with<'a>(who: &[&'a [u8]], extra: &[&'a [u8]]) -> Vec<&'a [u8]> {
        [who, extra].concat()
    }
    // Options, a conninfo string, and a URI with percent-encoded bytes.
    for args in [
        with(who, &[b"-U", b"r\xf4le", b"b\xe9se"]),
        with(who, &[b"-d", b"dbname=b\xe9se user=r\xf4le"]),
        with(who, &[b"-d", b"postgresql:///b%E9se?user=r%F4le"]),
    ] {
        let (theirs, ours) = same_stderr(&dir.0, "postgres", &args);
        assert_eq!((theirs.code, ours.code), (0, 0), "{}", show(&ours.stderr));
    }
    // The environment.
    for prog in [Prog::Pgbench, Prog::Pgrush] {
        let out = run_env(prog, &dir.0, b"b\xe9se", &[("PGUSER", b"r\xf4le")], who);
        assert_eq!(out.code, 0, "{prog:?}: {}", show(&out.stderr));
    }
    // Refusals echo the bytes: a role that does not exist, and a socket directory.
    let missing_role = with(who, &[b"-U", b"n\xe9ant", b"b\xe9se"]);
    let (theirs, _) = same_stderr(&dir.0, "postgres", &missing_role);
    assert!(theirs.stderr.contains(&0xe9), "{}", show(&theirs.stderr));
    let missing_dir = with(who, &[b"-h", b"/nonexistent/r\xe9pertoire", b"b\xe9se"]);
    let (theirs, _) = same_stderr(&dir.0, "postgres", &missing_dir);
    assert!(theirs.stderr.contains(&0xe9), "{}", show(&theirs.stderr));
    let _ = c;
}
