//! Differential test: how scripts are split into commands, the SQL text sent in
//! simple and extended mode (from pgbench's `--debug` lines) and the command texts
//! of the `-r` report, against pgbench 18.

mod common;

use common::*;
use pgrush_script::{CommandKind, EvalContext, Prng, Variables, load_script};

const SCRIPTS: &[&str] = &[
    "-- leading comment\n\\set aid 7\nSELECT 1, -- inline comment\n  2 /* block\n  comment */ ;\nSELECT 5 AS five \\gset\nSELECT :aid;\n   select 6\n",
    "SELECT 'a;b' AS x; SELECT $$c;d$$ AS y;\nSELECT 1 \\sleep 0\nSELECT 'it''s' AS z, \"quoted;ident\"\n  FROM (SELECT 1 AS \"quoted;ident\") s;  -- trailing comment\nSELECT 1;; SELECT 2;\n\\set x 1 + \\\n  2\nSELECT :x /* c1 /* nested */ c2 */;\n\\SET y 5\nSELECT :y;\nSELECT 1 AS aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa;\n",
    "SELECT 7 \\; SELECT 8;\nSELECT (1\n;\n)\n;\nSELECT $tag$ a;$b$ ;$ta$ $tag$ AS t;\nSELECT E'it\\'s;' AS e;\nSELECT U&'d\\0061t;a' AS u, B'101' AS b, X'1F' AS h, N'n;' AS n;\n",
    "\\set a 1\n\\set b 2.5\n\\set c true\n\\set d null\n\\set e 1.0/3\nSELECT :a, :b, :c, :d IS NULL, :e, ':a', \":a\"::text IS NOT NULL AS q, :a::int, :::a, x.y FROM (SELECT 1 AS y) x;\nSELECT :client_id + 0 AS c, :scale AS s, :random_seed AS r;\n",
    "SELECT 1\n  ;\n\n\n-- comment only\n/* c */ SELECT 2;\nSELECT 3 -- no semicolon at end",
    "CREATE OR REPLACE FUNCTION pg_temp.f() RETURNS int LANGUAGE sql BEGIN ATOMIC SELECT 1; SELECT 2; END;\nSELECT pg_temp.f();\n\\SLEEP 0 us\n\\sleep 0ms\n\\shell true\n\\setshell sh echo 4\nSELECT :sh;\n",
    "\\set x 5\r\nSELECT :x;\r\nSELECT\t:x\t+\t1;\r\n",
    "SELECT 1 AS a \\gset p_\nSELECT 2 AS b\n\\gset\nSELECT 3 AS c \\aset\nSELECT 4 AS e \\; SELECT 5 AS d \\aset q_\nSELECT :p_a + :b + :c + :q_d;\n",
    "\\if 1 = 1\nSELECT 'then';\n\\elif false\nSELECT 'elif';\n\\else\nSELECT 'else';\n\\endif\n\\if :client_id\nSELECT 'no';\n\\elif :client_id = 0\nSELECT 'yes';\n\\endif\n",
    "\\if false\nSELECT 1;\n\\else\nSELECT 2;\n\\endif\n\\if false\nSELECT 3;\n\\endif\n\\if false\n\\elif false\n\\else\nSELECT 4;\n\\endif\n",
    "SELECT a$b$c FROM (SELECT 1 AS a$b$c) t; SELECT $a1$x;y$a1$ AS d;\nSELECT $1$;\n",
    "SELECT '\\' AS bs; SELECT 'a' -- c ;\n 'b' AS cont;\nSELECT \"x\"\"y;\" FROM (SELECT 1 AS \"x\"\"y;\") t;\nselect 1 as\"a;\";\n",
    "\\set x 3\nSELECT \\:x AS a, 1 \\; SELECT 2;\nSELECT 1 /* unterminated ;\n",
    "SELECT 'unterminated ;\nmore;\n",
    "SELECT $q$ unterminated ;\n",
    "SELECT 1 AS one \\sleep 0\n;\n",
    "SELECT éèà AS \"ü\" FROM (SELECT 1 AS éèà) t;\nSELECT $é$ ; $é$;\n",
];

/// (what pgbench's --debug reports) events: `sending <sql>` or `executing \<argv>`.
fn oracle_events(stderr: &str) -> Vec<String> {
    let mut ev: Vec<String> = Vec::new();
    let mut cur: Option<String> = None;
    for l in stderr.lines() {
        if let Some(rest) = l.strip_prefix("pgbench: ") {
            if let Some(c) = cur.take() {
                ev.push(c);
            }
            if let Some(s) = rest.strip_prefix("client 0 sending ") {
                cur = Some(format!("sending {s}"));
            } else if let Some(s) = rest.strip_prefix("client 0 executing \\") {
                ev.push(format!("executing \\{s}"));
            }
        } else if let Some(c) = cur.as_mut() {
            c.push('\n');
            c.push_str(l);
        }
    }
    if let Some(c) = cur.take() {
        ev.push(c);
    }
    ev
}

/// Runs the script with this crate: gset results are not known here, so commands
/// using `\gset` variables are compared by their template only in extended mode.
fn my_events(text: &str, extended: bool, gset_values: &[(&str, &str)]) -> Vec<String> {
    let script = load_script("s.sql", text, 1).expect("loads");
    let mut vars = Variables::new();
    pgrush_script::set_automatic_variables(&mut vars, &|_| false, 1, 0, Some(0), 0);
    let mut rng = Prng::from_seed(0);
    let mut ev = Vec::new();
    let mut i = 0;
    while i < script.commands.len() {
        let c = &script.commands[i];
        match &c.kind {
            CommandKind::Sql(s) => {
                let mut t = Vec::new();
                if extended {
                    t.extend_from_slice(&s.extended_text);
                } else {
                    s.write_simple(&vars, &mut t);
                }
                let t = String::from_utf8_lossy(&t);
                ev.push(format!("sending {}", t.trim_end_matches('\n')));
                if s.gset.is_some() {
                    for (k, v) in gset_values {
                        vars.put_text("gset", k, v).expect("gset");
                    }
                }
                i += 1;
            }
            CommandKind::SetShell { var, .. } => {
                ev.push(format!(
                    "executing \\{}",
                    String::from_utf8_lossy(&c.argv_line())
                ));
                vars.put_value("setshell", &var.name, pgrush_script::Value::Int(4))
                    .expect("put");
                i += 1;
            }
            CommandKind::Set { var, expr, .. } => {
                ev.push(format!(
                    "executing \\{}",
                    String::from_utf8_lossy(&c.argv_line())
                ));
                let mut dbg = Vec::new();
                let v = expr
                    .eval(&mut EvalContext {
                        vars: &vars,
                        rng: &mut rng,
                        script: 0,
                        command: i,
                        debug_out: &mut dbg,
                    })
                    .expect("eval");
                vars.put_value("set", &var.name, v).expect("put");
                i += 1;
            }
            CommandKind::If(e) => {
                ev.push(format!(
                    "executing \\{}",
                    String::from_utf8_lossy(&c.argv_line())
                ));
                let mut truth = eval_truth(e, &vars, &mut rng, i);
                let mut j = i;
                // on false, follow the jumps; \elif targets are evaluated (and logged)
                while !truth {
                    j = script.commands[j].cond.expect("jumps").next;
                    match &script.commands[j].kind {
                        CommandKind::Elif(e2) => {
                            ev.push(format!(
                                "executing \\{}",
                                String::from_utf8_lossy(&script.commands[j].argv_line())
                            ));
                            truth = eval_truth(e2, &vars, &mut rng, j);
                        }
                        _ => break,
                    }
                }
                i = j + 1;
            }
            CommandKind::Elif(_) | CommandKind::Else => {
                ev.push(format!(
                    "executing \\{}",
                    String::from_utf8_lossy(&c.argv_line())
                ));
                i = c.cond.expect("jumps").endif + 1;
            }
            _ => {
                ev.push(format!(
                    "executing \\{}",
                    String::from_utf8_lossy(&c.argv_line())
                ));
                i += 1;
            }
        }
    }
    ev
}

fn eval_truth(e: &pgrush_script::Expr, vars: &Variables, rng: &mut Prng, i: usize) -> bool {
    let mut dbg = Vec::new();
    e.eval(&mut EvalContext {
        vars,
        rng,
        script: 0,
        command: i,
        debug_out: &mut dbg,
    })
    .expect("eval")
    .truth()
}

fn report_texts(stdout: &str) -> String {
    let mut on = false;
    let mut out = Vec::new();
    for l in stdout.lines() {
        if l.contains("statement latencies in milliseconds") {
            on = true;
            continue;
        }
        if !on {
            continue;
        }
        let numeric = l.len() >= 27 && l[..27].split_whitespace().all(|w| w.parse::<f64>().is_ok());
        if numeric {
            out.push(l[27..].to_string());
        } else {
            out.push(l.to_string());
        }
    }
    out.join("\n")
}

#[test]
fn splitting_and_sent_text_match_pgbench18() {
    let gset = [
        ("five", "5"),
        ("p_a", "1"),
        ("b", "2"),
        ("c", "3"),
        ("q_d", "5"),
        ("q_e", "4"),
    ];
    for (i, text) in SCRIPTS.iter().enumerate() {
        let script = load_script("s.sql", text, 1).expect("loads");
        for mode in ["simple", "extended"] {
            let name = format!("split_{i}.sql");
            let out = pgbench18(
                &name,
                text,
                &[
                    "--debug",
                    "-r",
                    "-M",
                    mode,
                    "--random-seed=0",
                    "-D",
                    "default_seed=0",
                ],
                true,
            );
            let want = oracle_events(&out.stderr);
            let mut got = my_events(text, mode == "extended", &gset);
            if out.code != 0 {
                // a server error aborted the client: compare what was sent until then
                assert!(out.stderr.contains("aborted in command"), "{}", out.stderr);
                got.truncate(want.len());
            }
            assert_eq!(want, got, "script {text:?} mode {mode}");
            let firsts: Vec<String> = script
                .commands
                .iter()
                .map(|c| String::from_utf8_lossy(&c.first_line).into_owned())
                .collect();
            if out.code == 0 {
                assert_eq!(
                    report_texts(&out.stdout),
                    firsts.join("\n"),
                    "script {text:?}"
                );
            }
        }
    }
}
