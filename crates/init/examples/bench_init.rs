//! Times `pgbench -i -s S` against `pgrush -i -s S -j N` on a throwaway cluster,
//! alternating the two programs, and prints each run, the medians and their ratio.
//!
//! `bench_init --pgrush PATH [--pgbench PATH] [--scale S] [--jobs N] [--pairs P]
//! [--extra "ARGS"]`; pgbench defaults to the pgbench 18 oracle, the cluster uses that
//! PostgreSQL 18 build (`PGRUSH_PG_BIN` overrides).

use pgrush_cluster::Cluster;
use pgrush_testkit::oracle;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Instant;

struct Args {
    pgrush: PathBuf,
    pgbench: Option<PathBuf>,
    scale: u32,
    jobs: u32,
    pairs: u32,
    extra: Vec<String>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        pgrush: PathBuf::from("target/release/pgrush"),
        pgbench: None,
        scale: 30,
        jobs: 2,
        pairs: 3,
        extra: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--pgrush" => a.pgrush = PathBuf::from(value()?),
            "--pgbench" => a.pgbench = Some(PathBuf::from(value()?)),
            "--scale" => a.scale = value()?.parse().map_err(|e| format!("--scale: {e}"))?,
            "--jobs" => a.jobs = value()?.parse().map_err(|e| format!("--jobs: {e}"))?,
            "--pairs" => a.pairs = value()?.parse().map_err(|e| format!("--pairs: {e}"))?,
            "--extra" => a.extra = value()?.split_whitespace().map(String::from).collect(),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

fn timed(mut cmd: Command, what: &str) -> Result<f64, String> {
    let (secs, summary) = timed_summary(&mut cmd, what)?;
    println!("  {what}: {secs:.2} s wall; {summary}");
    Ok(secs)
}

/// Runs `cmd`; returns the wall-clock seconds and its `done in ...` line.
fn timed_summary(cmd: &mut Command, what: &str) -> Result<(f64, String), String> {
    let start = Instant::now();
    let out = cmd
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let secs = start.elapsed().as_secs_f64();
    if !out.status.success() {
        return Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    let stderr = String::from_utf8_lossy(&out.stderr);
    let summary = stderr
        .lines()
        .rev()
        .find(|l| l.starts_with("done in"))
        .unwrap_or("")
        .to_string();
    Ok((secs, summary))
}

fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let n = s.len();
    if n == 0 {
        0.0
    } else if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

fn run() -> Result<(), String> {
    let args = parse()?;
    let pgbench18 = oracle::pgbench18().ok_or("pgbench 18 not found")?;
    let mut builder = Cluster::builder();
    if std::env::var_os(pgrush_cluster::PG_BIN_ENV).is_none()
        && let Some(bin) = pgbench18.path().parent()
    {
        builder = builder.bin_dir(bin);
    }
    let cluster = builder.start().map_err(|e| e.to_string())?;
    cluster
        .create_database("bench")
        .map_err(|e| e.to_string())?;
    let command = |program: Option<&PathBuf>| {
        let mut cmd = match program {
            Some(p) => Command::new(p),
            None => pgbench18.command(),
        };
        for var in [
            "PGHOST",
            "PGPORT",
            "PGUSER",
            "PGDATABASE",
            "PGSERVICE",
            "PGOPTIONS",
        ] {
            cmd.env_remove(var);
        }
        cmd.envs(cluster.env());
        cmd
    };
    let scale = args.scale.to_string();
    let jobs = args.jobs.to_string();
    println!(
        "server {} ({}), scale {}, pgrush -j {}, {} pairs, {} CPUs",
        cluster.version_num(),
        cluster.data_dir().display(),
        args.scale,
        args.jobs,
        args.pairs,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for pair in 1..=args.pairs {
        let mut pgb = command(args.pgbench.as_ref());
        pgb.args(["-i", "-s", &scale])
            .args(&args.extra)
            .arg("bench");
        let mut rush = command(Some(&args.pgrush));
        rush.args(["-i", "-s", &scale, "-j", &jobs])
            .args(&args.extra)
            .arg("bench");
        // Alternate which program goes first, so neither always meets a warmer server.
        let (t_pgb, t_rush) = if pair % 2 == 1 {
            let x = timed(pgb, "pgbench")?;
            (x, timed(rush, "pgrush")?)
        } else {
            let y = timed(rush, "pgrush")?;
            (timed(pgb, "pgbench")?, y)
        };
        println!("pair {pair}: pgbench {t_pgb:.2} s, pgrush {t_rush:.2} s");
        a.push(t_pgb);
        b.push(t_rush);
    }
    let (ma, mb) = (median(&a), median(&b));
    println!(
        "median: pgbench -i -s {scale} {ma:.2} s, pgrush -i -s {scale} -j {jobs} {mb:.2} s, ratio {:.3}",
        mb / ma
    );
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_init: {e}");
        std::process::exit(1);
    }
}
