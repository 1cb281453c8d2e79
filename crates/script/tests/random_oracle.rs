//! Differential test: random sequences (client generators, default_seed, hashes,
//! permute), script choice and log sampling against pgbench 18 for several seeds,
//! client and thread counts.

mod common;

use common::*;
use pgrush_script::{Seeds, choose_script, load_script, sample};
use pgrush_testkit::oracle::Which;

const RND: &str = "\\set m debug(:client_id)
\\set a random(1, 1000000)
\\set b random(-5000, 5000)
\\set e random_exponential(1, 1000, 2.5)
\\set g random_gaussian(1, 1000, 2.5)
\\set z random_zipfian(1, 1000, 1.5)
\\set z2 random_zipfian(-50, 5000000000, 1.001)
\\set z3 random_zipfian(1, 100, 999)
\\set e2 random_exponential(-4611686018427387903, 4611686018427387903, 0.1)
\\set g2 random_gaussian(0, 9223372036854775806, 50)
\\set w random(-4611686018427387904, 4611686018427387902)
\\set x debug(:a)
\\set x debug(:b)
\\set x debug(:e)
\\set x debug(:g)
\\set x debug(:z)
\\set x debug(:z2)
\\set x debug(:z3)
\\set x debug(:e2)
\\set x debug(:g2)
\\set x debug(:w)
\\set x debug(hash(:a))
\\set x debug(hash_fnv1a(:b))
\\set x debug(permute(:a, 1000000))
\\set x debug(permute(:b, 7, :a))
\\set x debug(:default_seed)
\\set x debug(:random_seed)
";

fn check(seed: &str, clients: usize, tx: usize, defines: &[(&str, &str)]) {
    check_with(Which::Pgbench18, seed, clients, tx, defines);
}

fn check_with(which: Which, seed: &str, clients: usize, tx: usize, defines: &[(&str, &str)]) {
    let mut args: Vec<String> = vec![
        "-c".into(),
        clients.to_string(),
        "-t".into(),
        tx.to_string(),
        format!("--random-seed={seed}"),
    ];
    for (k, v) in defines {
        args.push("-D".into());
        args.push(format!("{k}={v}"));
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = pgbench(which, "rnd.sql", RND, &argv, true);
    let script = load_script("rnd.sql", RND, 1).expect("loads");
    let seed_u64 = match pgrush_script::parse_seed_spec(seed) {
        Ok(pgrush_script::SeedSpec::Value(v)) => v,
        other => panic!("bad seed {other:?}"),
    };
    let sim = flatten(simulate(&script, clients, tx, seed_u64, defines));
    let want = by_client(&interesting(&out.stderr), 1);
    let got = by_client(&sim, 1);
    assert_eq!(want.len(), clients * tx, "{}", out.stderr);
    assert_eq!(want, got, "seed {seed}, {clients} clients");
}

#[test]
fn client_sequences_match() {
    check("12345", 2, 2, &[]);
    check("0", 3, 2, &[]);
    check("1", 1, 3, &[]);
    check("18446744073709551615", 2, 1, &[]);
    check("-1", 1, 1, &[]);
    check("777", 4, 1, &[("default_seed", "99")]);
    check("31337", 2, 1, &[("random_seed", "5")]);
}

#[test]
fn client_sequences_match_pgbench15() {
    check_with(Which::Pgbench15, "12345", 2, 2, &[]);
    check_with(Which::Pgbench15, "4242", 3, 1, &[("default_seed", "-1")]);
}

/// Parse pgbench log files: per thread, the script column of each line in order.
fn log_scripts(dir: &std::path::Path, prefix: &str, nthreads: usize) -> Vec<Vec<(u64, usize)>> {
    let mut files: Vec<std::path::PathBuf> = std::fs::read_dir(dir)
        .expect("read dir")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix))
        })
        .collect();
    files.sort_by_key(|p| {
        let n = p
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        // prefix.pid for thread 0, prefix.pid.tid otherwise
        n.split('.')
            .nth(2)
            .and_then(|t| t.parse::<usize>().ok())
            .unwrap_or(0)
    });
    assert_eq!(files.len(), nthreads, "{files:?}");
    files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .expect("log")
                .lines()
                .map(|l| {
                    let f: Vec<&str> = l.split(' ').collect();
                    (
                        f[1].parse().expect("tx no"),
                        f[3].parse().expect("script no"),
                    )
                })
                .collect()
        })
        .collect()
}

#[test]
fn script_choice_matches_per_thread() {
    let dir = tmpdir().join("choice");
    std::fs::create_dir_all(&dir).expect("dir");
    for name in ["ca.sql", "cb.sql", "cc.sql"] {
        std::fs::write(dir.join(name), "\\set x 1\n").expect("write");
    }
    for (seed, clients, threads, tx) in [
        (777u64, 3usize, 2usize, 12usize),
        (5, 4, 3, 7),
        (99, 1, 1, 20),
    ] {
        let prefix = format!("choice_{seed}");
        let pgb = pgrush_testkit::oracle::require(pgrush_testkit::oracle::Which::Pgbench18);
        let mut cmd = pgb.command();
        cmd.current_dir(&dir);
        for (k, v) in cluster().env() {
            cmd.env(k, v);
        }
        cmd.args([
            "-n",
            "-t",
            &tx.to_string(),
            "-c",
            &clients.to_string(),
            "-j",
            &threads.to_string(),
        ]);
        cmd.arg(format!("--random-seed={seed}"));
        cmd.args([
            "-f",
            "ca.sql@2",
            "-f",
            "cb.sql@3",
            "-f",
            "cc.sql@1",
            "-l",
            "--log-prefix",
            &prefix,
        ]);
        let out = pgrush_testkit::run(&mut cmd);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let logs = log_scripts(&dir, &prefix, threads);
        let seeds = Seeds::plan(seed, clients, threads, false);
        for (t, lines) in logs.iter().enumerate() {
            let mut rng = seeds.threads[t].choose;
            let want: Vec<usize> = lines.iter().map(|(_, s)| *s).collect();
            let got: Vec<usize> = (0..want.len())
                .map(|_| choose_script(&mut rng, &[2, 3, 1]))
                .collect();
            assert_eq!(want, got, "seed {seed} thread {t}");
        }
    }
}

#[test]
fn log_sampling_matches() {
    let dir = tmpdir().join("sampling");
    std::fs::create_dir_all(&dir).expect("dir");
    std::fs::write(dir.join("one.sql"), "\\set x 1\n").expect("write");
    for (seed, rate) in [(4242u64, "0.5"), (1, "0.1"), (77, "0.9")] {
        let prefix = format!("sample_{seed}");
        let pgb = pgrush_testkit::oracle::require(pgrush_testkit::oracle::Which::Pgbench18);
        let mut cmd = pgb.command();
        cmd.current_dir(&dir);
        for (k, v) in cluster().env() {
            cmd.env(k, v);
        }
        cmd.args([
            "-n",
            "-t",
            "40",
            "-f",
            "one.sql",
            "-l",
            "--log-prefix",
            &prefix,
        ]);
        cmd.arg(format!("--random-seed={seed}"))
            .arg(format!("--sampling-rate={rate}"));
        let out = pgrush_testkit::run(&mut cmd);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let logs = log_scripts(&dir, &prefix, 1);
        let want: Vec<u64> = logs[0].iter().map(|(n, _)| *n).collect();
        let seeds = Seeds::plan(seed, 1, 1, false);
        let mut rng = seeds.threads[0].sample;
        let r: f64 = rate.parse().expect("rate");
        let got: Vec<u64> = (1..=40).filter(|_| sample(&mut rng, r)).collect();
        assert_eq!(want, got, "seed {seed}");
    }
}

#[test]
fn define_typing_matches() {
    let values = [
        "true",
        "y",
        "ye",
        "yes",
        "on",
        "of",
        "off",
        "o",
        "f",
        "n",
        "no",
        "false",
        "NULL",
        "null",
        "Null",
        " 12",
        "12 ",
        "1.5",
        "1.5 ",
        "0x10",
        "inf",
        "-inf",
        "nan",
        "1e400",
        "1e-400",
        "99999999999999999999",
        "-9223372036854775808",
        "+5",
        "-",
        "+",
        "  ",
        "abc",
        "1e5",
        ".5",
        "5.",
        "TRUE",
        "T",
        "Yes",
        "ON",
        "OFF",
        "0",
        "-0",
        "007",
        "1_000",
        "infinity",
        "0x1p3",
    ];
    let mut text = String::from("\\set m debug(:client_id)\n");
    let mut args: Vec<String> = vec!["-c".into(), values.len().to_string()];
    let mut defines = Vec::new();
    for (k, v) in values.iter().enumerate() {
        let kw = if k == 0 { "\\if" } else { "\\elif" };
        text.push_str(&format!(
            "{kw} :client_id = {k}\n\\set x debug(:v{k})\n\\set y debug(:v{k} + 0)\n"
        ));
        args.push("-D".into());
        args.push(format!("v{k}={v}"));
    }
    text.push_str("\\endif\n");
    let names: Vec<String> = (0..values.len()).map(|k| format!("v{k}")).collect();
    for (k, v) in values.iter().enumerate() {
        defines.push((names[k].as_str(), *v));
    }
    let argv: Vec<&str> = args.iter().map(String::as_str).collect();
    let script = load_script("defines.sql", &text, 1).expect("loads");
    // the seed is irrelevant here but must be fixed for both
    let sim = flatten(simulate(&script, values.len(), 1, 0, &defines));
    let out2 = pgbench18(
        "defines.sql",
        &text,
        &[argv.as_slice(), &["--random-seed=0"]].concat(),
        true,
    );
    let mut want = by_client(&interesting(&out2.stderr), 1);
    let mut got = by_client(&sim, 1);
    want.sort_by_key(|(c, _)| *c);
    got.sort_by_key(|(c, _)| *c);
    assert_eq!(want.len(), values.len(), "{}", out2.stderr);
    for ((c, w), (_, g)) in want.iter().zip(got.iter()) {
        assert_eq!(w, g, "value {:?}", values[*c as usize]);
    }
}
