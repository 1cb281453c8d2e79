//! Times `pgbench -i -s S`, `pgrush -i -s S -j N` and, with `--floor`, the init floor
//! (`pgrush-floor init -s S -j N`) on a throwaway cluster, rotating which goes first, and
//! prints each run, the medians and the ratios.
//!
//! `bench_init --pgrush PATH [--pgbench PATH] [--floor PATH] [--server-limits]
//! [--scale S] [--jobs N] [--pairs P] [--extra "ARGS"] [--floor-args "ARGS"]`; pgbench
//! defaults to the pgbench 18 oracle, the cluster uses that PostgreSQL 18 build
//! (`PGRUSH_PG_BIN` overrides). `--server-limits` also runs the floor with
//! `--source generate` and `--source file` (nothing on the client) in every round.
//!
//! Per run: seconds (wall for pgbench and pgrush; the floor's own `done in` figure,
//! which leaves out generating its rows before the clock starts), the client's CPU
//! seconds (user + system from `wait4`; the floor's own figure for its timed part), its
//! peak RSS, and the server's CPU seconds (every process of the postmaster's tree, the
//! exited backends through the postmaster's children times, from `/proc`).

use pgrush_cluster::Cluster;
use pgrush_testkit::oracle;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

struct Args {
    pgrush: PathBuf,
    pgbench: Option<PathBuf>,
    floor: Option<PathBuf>,
    server_limits: bool,
    scale: u32,
    jobs: u32,
    pairs: u32,
    extra: Vec<String>,
    floor_args: Vec<String>,
}

fn parse() -> Result<Args, String> {
    let mut a = Args {
        pgrush: PathBuf::from("target/release/pgrush"),
        pgbench: None,
        floor: None,
        server_limits: false,
        scale: 30,
        jobs: 2,
        pairs: 3,
        extra: Vec::new(),
        floor_args: Vec::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        let words = |v: String| v.split_whitespace().map(String::from).collect();
        match flag.as_str() {
            "--pgrush" => a.pgrush = PathBuf::from(value()?),
            "--pgbench" => a.pgbench = Some(PathBuf::from(value()?)),
            "--floor" => a.floor = Some(PathBuf::from(value()?)),
            "--server-limits" => a.server_limits = true,
            "--scale" => a.scale = value()?.parse().map_err(|e| format!("--scale: {e}"))?,
            "--jobs" => a.jobs = value()?.parse().map_err(|e| format!("--jobs: {e}"))?,
            "--pairs" => a.pairs = value()?.parse().map_err(|e| format!("--pairs: {e}"))?,
            "--extra" => a.extra = words(value()?),
            "--floor-args" => a.floor_args = words(value()?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    if a.server_limits && a.floor.is_none() {
        return Err("--server-limits needs --floor".into());
    }
    Ok(a)
}

/// What one run cost.
#[derive(Debug, Clone, Copy)]
struct Cost {
    secs: f64,
    client_cpu: f64,
    rss_mib: f64,
    server_cpu: f64,
}

/// CPU seconds of the server so far: the postmaster's own and its exited children's,
/// plus every live child's.
fn server_cpu(data_dir: &Path) -> f64 {
    let pid_file = std::fs::read_to_string(data_dir.join("postmaster.pid")).unwrap_or_default();
    let pm: i64 = pid_file
        .lines()
        .next()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(0);
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) }.max(1) as f64;
    let mut ticks = 0u64;
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        let pid: i64 = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse().ok())
            .unwrap_or(-1);
        // Fields after the command name: state ppid ... utime(14) stime cutime cstime.
        let Some((_, rest)) = stat.rsplit_once(')') else {
            continue;
        };
        let f: Vec<&str> = rest.split_whitespace().collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
        let ppid = f.get(1).and_then(|v| v.parse::<i64>().ok()).unwrap_or(-1);
        if pid == pm {
            ticks += num(11) + num(12) + num(13) + num(14);
        } else if ppid == pm {
            ticks += num(11) + num(12);
        }
    }
    ticks as f64 / tick
}

/// Runs `cmd`, returning its cost and its output (stdout then stderr).
fn measure(mut cmd: Command, what: &str, data_dir: &Path) -> Result<(Cost, String), String> {
    let server0 = server_cpu(data_dir);
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let mut pipes = [
        child
            .stdout
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
        child
            .stderr
            .take()
            .map(|p| Box::new(p) as Box<dyn Read + Send>),
    ];
    let readers: Vec<_> = pipes
        .iter_mut()
        .filter_map(Option::take)
        .map(|mut p| {
            std::thread::spawn(move || {
                let mut s = String::new();
                let _ = p.read_to_string(&mut s);
                s
            })
        })
        .collect();
    // SAFETY: wait4 on our own child, into a zeroed rusage; std never waits for it after.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let mut status = 0;
    let pid = child.id() as libc::pid_t;
    if unsafe { libc::wait4(pid, &mut status, 0, &mut ru) } != pid {
        return Err(format!("wait4 failed for {what}"));
    }
    let secs = start.elapsed().as_secs_f64();
    // Let the postmaster reap the backends that ended with the client, so that their
    // CPU shows in its children times.
    std::thread::sleep(std::time::Duration::from_millis(200));
    let output: String = readers
        .into_iter()
        .map(|r| r.join().unwrap_or_default())
        .collect();
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) != 0 {
        return Err(format!("{what} failed (status {status}): {output}"));
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let cost = Cost {
        secs,
        client_cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        rss_mib: ru.ru_maxrss as f64 / 1024.0,
        server_cpu: server_cpu(data_dir) - server0,
    };
    Ok((cost, output))
}

/// The number after `prefix` on the last line that starts with it.
fn figure(output: &str, prefix: &str) -> Option<f64> {
    let line = output.lines().rev().find(|l| l.starts_with(prefix))?;
    line[prefix.len()..].split_whitespace().next()?.parse().ok()
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

/// One program of the comparison.
struct Client {
    name: String,
    /// True for the floor: seconds and client CPU come from its own report.
    floor: bool,
    args: Vec<String>,
    program: Option<PathBuf>,
    costs: Vec<Cost>,
}

fn clients(args: &Args) -> Vec<Client> {
    let scale = args.scale.to_string();
    let jobs = args.jobs.to_string();
    let mut init: Vec<String> = vec!["-i".into(), "-s".into(), scale.clone()];
    init.extend(args.extra.iter().cloned());
    let mut rush = init.clone();
    rush.extend(["-j".to_string(), jobs.clone()]);
    let mut out = vec![
        Client {
            name: "pgbench".into(),
            floor: false,
            args: init,
            program: args.pgbench.clone(),
            costs: vec![],
        },
        Client {
            name: "pgrush".into(),
            floor: false,
            args: rush.clone(),
            program: Some(args.pgrush.clone()),
            costs: vec![],
        },
    ];
    let Some(floor) = &args.floor else { return out };
    let mut sources = vec![("floor", None)];
    if args.server_limits {
        sources.extend([
            ("server-generate", Some("generate")),
            ("server-file", Some("file")),
        ]);
    }
    for (name, source) in sources {
        let mut a = vec!["init".to_string()];
        a.extend(rush.iter().cloned());
        a.extend(args.floor_args.iter().cloned());
        if let Some(s) = source {
            a.push(format!("--source={s}"));
        }
        out.push(Client {
            name: name.into(),
            floor: true,
            args: a,
            program: Some(floor.clone()),
            costs: vec![],
        });
    }
    out
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
    println!(
        "server {} ({}), scale {}, pgrush -j {}, {} rounds, {} CPUs",
        cluster.version_num(),
        cluster.data_dir().display(),
        args.scale,
        args.jobs,
        args.pairs,
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    let mut all = clients(&args);
    let n = all.len();
    for round in 0..args.pairs as usize {
        println!("round {}:", round + 1);
        // Rotate which program goes first, so none always meets a warmer server.
        for k in 0..n {
            let c = &mut all[(round + k) % n];
            let mut cmd = command(c.program.as_ref());
            cmd.args(&c.args).arg("bench");
            let (mut cost, out) = measure(cmd, &c.name, cluster.data_dir())?;
            let done = out
                .lines()
                .rev()
                .find(|l| l.starts_with("done in"))
                .unwrap_or("");
            if c.floor {
                cost.secs = figure(&out, "done in").ok_or("no done in line from the floor")?;
                cost.client_cpu = figure(&out, "client CPU in the timed part:").unwrap_or(f64::NAN);
            }
            println!(
                "  {}: {:.2} s, client CPU {:.2} s, server CPU {:.2} s, peak RSS {:.1} MiB; {done}",
                c.name, cost.secs, cost.client_cpu, cost.server_cpu, cost.rss_mib
            );
            c.costs.push(cost);
        }
    }
    print_medians(&all, &args);
    Ok(())
}

fn print_medians(all: &[Client], args: &Args) {
    let m = |c: &Client, f: fn(&Cost) -> f64| median(&c.costs.iter().map(f).collect::<Vec<_>>());
    println!("medians ({} rounds):", args.pairs);
    println!(
        "  {:<16} {:>8} {:>11} {:>11} {:>9}",
        "client", "seconds", "client CPU", "server CPU", "RSS MiB"
    );
    for c in all {
        println!(
            "  {:<16} {:>8.2} {:>11.2} {:>11.2} {:>9.1}",
            c.name,
            m(c, |x| x.secs),
            m(c, |x| x.client_cpu),
            m(c, |x| x.server_cpu),
            m(c, |x| x.rss_mib)
        );
    }
    let paired = |a: &Client, b: &Client| {
        let r: Vec<f64> = a
            .costs
            .iter()
            .zip(&b.costs)
            .map(|(x, y)| x.secs / y.secs)
            .collect();
        median(&r)
    };
    let (scale, jobs) = (args.scale, args.jobs);
    let (pgb, rush) = (&all[0], &all[1]);
    println!(
        "median: pgbench -i -s {scale} {:.2} s, pgrush -i -s {scale} -j {jobs} {:.2} s, ratio {:.3} (paired {:.3})",
        m(pgb, |x| x.secs),
        m(rush, |x| x.secs),
        m(rush, |x| x.secs) / m(pgb, |x| x.secs),
        paired(rush, pgb)
    );
    if let Some(floor) = all.get(2) {
        println!(
            "floor: {:.2} s, pgrush/floor {:.3} (paired {:.3})",
            m(floor, |x| x.secs),
            m(rush, |x| x.secs) / m(floor, |x| x.secs),
            paired(rush, floor)
        );
    }
}

fn main() {
    if let Err(e) = run() {
        eprintln!("bench_init: {e}");
        std::process::exit(1);
    }
}
