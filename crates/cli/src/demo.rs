//! `pgrush demo`: the no-setup benchmark.
//!
//! Uses the server the environment or the command line names (`PGHOST`/`PGPORT`/
//! `PGDATABASE`, or `-h`/`-p`/`-d` after `demo`) when one answers; otherwise starts a
//! throwaway cluster from the local PostgreSQL binaries (`pgrush_cluster`). Then runs
//! pgrush's own initialization (`-i -s 10`) and a short benchmark (`-c 4 -j 2 -T 10
//! -P 1`) through the same code paths as the command line, prints the report (with the
//! throwaway cluster's durability settings, which make its tps no production figure),
//! and removes the throwaway cluster.

use std::ffi::OsString;
use std::net::{TcpStream, ToSocketAddrs};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use pgrush_cluster::Cluster;

use pgrush_run::Failure;
use pgrush_run::options::{Action, Options};

use crate::subcommand::{Invocation, Operands, Opt, Subcommand, positive};

/// How long the reachability probe waits for a TCP connection.
const PROBE_TIMEOUT: Duration = Duration::from_secs(3);

/// Unix socket directories libpq builds commonly default to.
const DEFAULT_SOCKET_DIRS: &[&str] = &["/var/run/postgresql", "/tmp"];

/// `pgrush demo`: its options and `--help`.
pub const COMMAND: Subcommand = Subcommand {
    name: "demo",
    args: "",
    summary: "benchmark a throwaway local cluster, no setup needed",
    about: "\
pgrush demo runs a first benchmark with no setup.

Usage:
  pgrush demo [-h HOST] [-p PORT] [-d DBNAME] [-U USER] [-s SCALE] [-T SECONDS]
              [-c CLIENTS] [-j THREADS] [--html FILE] [--json FILE]

Initializes pgbench tables (-i -s SCALE), runs a short benchmark
(-c 4 -j 2 -T SECONDS -P 1 --percentiles) and writes an HTML report of it
to FILE (default: pgrush-demo-DATE-TIME.html in the current directory).
Uses the server named by -h/-p/-d or by
PGHOST/PGPORT/PGDATABASE when it answers; otherwise starts a throwaway
PostgreSQL cluster from the local binaries and removes it afterwards.
The throwaway cluster runs with fsync, full_page_writes and synchronous_commit
off: fast, not crash-safe, so its tps is no figure for a production server.
Warning: initialization replaces the pgbench_* tables of the database used.

",
    options: &[
        Opt::HOST,
        Opt::PORT,
        Opt::valued(
            Some('d'),
            "dbname",
            "DBNAME",
            &["database name (or connection string)"],
        ),
        Opt::valued(Some('U'), "username", "USERNAME", &["user name"]),
        Opt::valued(
            Some('s'),
            "scale",
            "NUM",
            &["scale factor for initialization (default 10)"],
        ),
        Opt::valued(
            Some('T'),
            "time",
            "NUM",
            &["benchmark duration in seconds (default 10)"],
        ),
        Opt::valued(
            Some('c'),
            "client",
            "NUM",
            &["number of concurrent database clients (default 4)"],
        ),
        Opt::valued(Some('j'), "jobs", "NUM", &["number of threads (default 2)"]),
        Opt::valued(None, "html", "FILE", &["where to write the HTML report"]),
        Opt::valued(
            None,
            "json",
            "FILE",
            &["also write the run as JSON to FILE (- for stdout)"],
        ),
        Opt::HELP,
    ],
    notes: "",
    operands: Operands::Files,
    pgbench_options: false,
    run,
};

/// The demo's command line.
#[derive(Debug, Clone, PartialEq, Eq)]
struct DemoArgs {
    host: Option<String>,
    port: Option<String>,
    dbname: Option<String>,
    user: Option<String>,
    scale: u32,
    duration: u32,
    /// `-c`: the benchmark's clients.
    clients: u32,
    /// `-j`: the benchmark's threads.
    jobs: u32,
    /// `--json FILE`: where the run's JSON goes, if anywhere.
    json: Option<String>,
    /// `--html FILE`: where the HTML report goes (default: a dated file in the
    /// current directory).
    html: Option<String>,
}

impl Default for DemoArgs {
    fn default() -> Self {
        DemoArgs {
            host: None,
            port: None,
            dbname: None,
            user: None,
            scale: 10,
            duration: 10,
            clients: 4,
            jobs: 2,
            json: None,
            html: None,
        }
    }
}

/// Reads the command line with the demo's table; `Ok(None)` asks for `--help`.
fn parse(args: &[OsString]) -> Result<Option<DemoArgs>, Failure> {
    let Some(scan) = COMMAND.scan(args)? else {
        return Ok(None);
    };
    if let Some(first) = scan.operands.first() {
        return Err(COMMAND.usage(format!("unexpected argument \"{first}\"")));
    }
    let mut out = DemoArgs::default();
    for (found, value) in scan.options {
        let long = found.long();
        let value = value.unwrap_or_default();
        match long {
            "host" => out.host = Some(value),
            "port" => out.port = Some(value),
            "dbname" => out.dbname = Some(value),
            "username" => out.user = Some(value),
            "scale" => out.scale = positive(&COMMAND, long, &value)?,
            "time" => out.duration = positive(&COMMAND, long, &value)?,
            "client" => out.clients = positive(&COMMAND, long, &value)?,
            "jobs" => out.jobs = positive(&COMMAND, long, &value)?,
            "json" => out.json = Some(value),
            _ => out.html = Some(value),
        }
    }
    Ok(Some(out))
}

/// A server named by the command line or the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Configured {
    /// The host to probe (first of a list), `None` for libpq's default socket.
    host: Option<String>,
    /// The port to probe.
    port: u16,
    /// Where the setting came from, for the banner.
    origin: &'static str,
}

/// The configured server, if the command line or the environment names one.
fn configured(args: &DemoArgs, env: &dyn Fn(&str) -> Option<String>) -> Option<Configured> {
    let from_args = args.host.is_some() || args.port.is_some() || args.dbname.is_some();
    let from_env = pgrush_wire::conninfo::names_server(env);
    if !from_args && !from_env {
        return None;
    }
    let host = args
        .host
        .clone()
        .or_else(|| env("PGHOST"))
        .and_then(|h| h.split(',').next().map(str::to_string))
        .filter(|h| !h.is_empty());
    let port = args
        .port
        .clone()
        .or_else(|| env("PGPORT"))
        .and_then(|p| p.split(',').next().and_then(|p| p.trim().parse().ok()))
        .unwrap_or(5432);
    let origin = if from_args {
        "the command line"
    } else {
        "PGHOST/PGPORT/PGDATABASE"
    };
    Some(Configured { host, port, origin })
}

/// Whether something accepts connections where `conf` points (transport level only:
/// authentication problems are reported by the initialization itself).
fn reachable(conf: &Configured) -> Result<(), String> {
    let socket_in = |dir: &str| Path::new(dir).join(format!(".s.PGSQL.{}", conf.port));
    match conf.host.as_deref() {
        Some(dir) if dir.starts_with('/') => {
            let path = socket_in(dir);
            UnixStream::connect(&path)
                .map(drop)
                .map_err(|e| format!("{}: {e}", path.display()))
        }
        Some(host) => {
            let addrs = (host, conf.port)
                .to_socket_addrs()
                .map_err(|e| format!("{host}: {e}"))?;
            let mut last = format!("{host}: no address");
            for addr in addrs {
                match TcpStream::connect_timeout(&addr, PROBE_TIMEOUT) {
                    Ok(_) => return Ok(()),
                    Err(e) => last = format!("{addr}: {e}"),
                }
            }
            Err(last)
        }
        None => DEFAULT_SOCKET_DIRS
            .iter()
            .map(|dir| socket_in(dir))
            .find(|path| UnixStream::connect(path).is_ok())
            .map(drop)
            .ok_or_else(|| format!("no server on the default sockets, port {}", conf.port)),
    }
}

/// `180001` as `18.1`, `90624` as `9.6.24`.
fn version_text(num: u32) -> String {
    if num >= 100000 {
        format!("{}.{}", num / 10000, num % 10000)
    } else {
        format!("{}.{}.{}", num / 10000, num / 100 % 100, num % 100)
    }
}

/// The options of `pgrush -i -s SCALE` against `base`'s server.
fn init_options(base: &Options, scale: u32) -> Options {
    Options {
        action: Action::Init,
        scale: Some(scale),
        ..base.clone()
    }
}

/// The options of `pgrush -c CLIENTS -j THREADS -T SECONDS -P 1 --percentiles
/// --html=FILE [--json=FILE]` against `base`'s server.
fn bench_options(base: &Options, demo: &DemoArgs, html: &str) -> Options {
    Options {
        action: Action::Bench,
        clients: demo.clients,
        jobs: demo.jobs,
        duration: Some(demo.duration),
        progress: 1,
        percentiles: Some(pgrush_report::PercentileList::default()),
        html: Some(html.to_string()),
        json: demo.json.clone(),
        ..base.clone()
    }
}

/// The benchmark's command line as the demo prints it.
fn bench_command_line(demo: &DemoArgs, html: &str) -> String {
    let json = demo
        .json
        .as_ref()
        .map_or_else(String::new, |f| format!(" --json={f}"));
    format!(
        "pgrush -c {} -j {} -T {} -P 1 --percentiles --html={html}{json}",
        demo.clients, demo.jobs, demo.duration
    )
}

/// The durability settings that make a throwaway cluster fast and not crash-safe.
const DURABILITY_SETTINGS: [&str; 3] = ["fsync", "full_page_writes", "synchronous_commit"];

/// The note printed with the report of a run on the throwaway cluster: its durability
/// settings as the server reports them, and what they mean for the tps.
fn durability_note(show: &dyn Fn(&str) -> Option<String>) -> String {
    let settings: Vec<String> = DURABILITY_SETTINGS
        .iter()
        .map(|name| format!("{name}={}", show(name).unwrap_or_else(|| "?".into())))
        .collect();
    format!(
        "pgrush demo: note: the throwaway cluster runs with {}\n\
         pgrush demo: fast but not crash-safe: its tps is no figure for a production server",
        settings.join(", ")
    )
}

/// `pgrush-demo-YYYYMMDD-HHMMSS.html` (UTC) for the time `unix_us`.
fn default_html_name(unix_us: i64) -> String {
    format!(
        "pgrush-demo-{}.html",
        pgrush_report::utc_time::file_stamp_utc(unix_us)
    )
}

/// The report's path as a person would open it: absolute when the file exists.
fn shown_path(file: &str) -> String {
    std::fs::canonicalize(file).map_or_else(|_| file.to_string(), |p| p.display().to_string())
}

/// Runs the demo.
fn run(inv: &Invocation, args: &[OsString]) -> Result<i32, Failure> {
    let Some(demo) = parse(args)? else {
        return COMMAND.print_help(&inv.prog);
    };
    let env = |name: &str| std::env::var(name).ok();
    let mut base = Options {
        host: demo.host.clone(),
        port: demo.port.clone(),
        user: demo.user.clone(),
        dbname: demo.dbname.clone(),
        ..Options::default()
    };
    let mut cluster = None;
    let use_sandbox = match configured(&demo, &env) {
        Some(conf) => match reachable(&conf) {
            Ok(()) => {
                println!(
                    "pgrush demo: using the server configured by {} ({}, port {})",
                    conf.origin,
                    conf.host.as_deref().unwrap_or("default socket"),
                    conf.port
                );
                false
            }
            Err(why) => {
                println!(
                    "pgrush demo: the server configured by {} does not answer ({why}); \
                     using a throwaway cluster instead",
                    conf.origin
                );
                true
            }
        },
        None => {
            println!(
                "pgrush demo: no server configured (-h/-p/-d or PGHOST/PGPORT/PGDATABASE); \
                 using a throwaway cluster"
            );
            true
        }
    };
    if use_sandbox {
        let started = Cluster::builder()
            .setting("shared_buffers", "128MB")
            .start();
        let c = started
            .map_err(|e| Failure::error(format!("demo: cannot start a throwaway cluster: {e}")))?;
        println!(
            "pgrush demo: started PostgreSQL {} from {} (socket {}, port {}); it is removed at the end",
            version_text(c.version_num()),
            c.bin_dir().display(),
            c.socket_dir().display(),
            c.port()
        );
        base = Options {
            host: Some(c.socket_dir().display().to_string()),
            port: Some(c.port().to_string()),
            user: Some(c.superuser().to_string()),
            dbname: Some("postgres".to_string()),
            ..Options::default()
        };
        cluster = Some(c);
    }
    println!("pgrush demo: pgrush -i -s {}", demo.scale);
    let init = init_options(&base, demo.scale);
    let initialized = crate::init_cmd::run(&init, &crate::prompt::password).map(|()| 0);
    let mut status = pgrush_run::exit_status(initialized, &init.progname, &init.progname);
    let initialized = status == 0;
    if initialized {
        let html = demo
            .html
            .clone()
            .unwrap_or_else(|| default_html_name(pgrush_stats::wall_clock::unix_time_us()));
        println!("pgrush demo: {}", bench_command_line(&demo, &html));
        let plan = pgrush_run::RunPlan::resolve(bench_options(&base, &demo, &html));
        let ran = pgrush_run::run(&plan, &crate::prompt::password);
        status = pgrush_run::exit_status(ran, plan.prog(), plan.prog());
        if let Some(c) = &cluster {
            println!("{}", durability_note(&|name| c.show(name).ok()));
        }
        if status == 0 {
            println!("pgrush demo: HTML report written to {}", shown_path(&html));
        }
    }
    if let Some(c) = cluster {
        drop(c);
        println!("pgrush demo: throwaway cluster removed");
    }
    if !initialized {
        return Err(Failure::error(format!(
            "demo: initialization failed (exit status {status})"
        ))
        .with_status(status));
    }
    Ok(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<OsString> {
        list.iter().map(OsString::from).collect()
    }

    fn run_args(list: &[&str]) -> DemoArgs {
        match parse(&args(list)) {
            Ok(Some(a)) => a,
            other => panic!("{list:?}: {other:?}"),
        }
    }

    #[test]
    fn parses_connection_and_size_options() {
        let a = run_args(&[
            "-h", "/tmp", "-p5433", "-d", "bench", "-U", "me", "-s", "2", "-T1",
        ]);
        assert_eq!(a.host.as_deref(), Some("/tmp"));
        assert_eq!(a.port.as_deref(), Some("5433"));
        assert_eq!(a.dbname.as_deref(), Some("bench"));
        assert_eq!(a.user.as_deref(), Some("me"));
        assert_eq!((a.scale, a.duration), (2, 1));
        assert_eq!(run_args(&[]), DemoArgs::default());
        assert_eq!(parse(&args(&["--help"])), Ok(None));
        assert_eq!(
            run_args(&["--html", "a.html"]).html.as_deref(),
            Some("a.html")
        );
        assert_eq!(run_args(&["--html=b.html"]).html.as_deref(), Some("b.html"));
        assert!(parse(&args(&["--html"])).is_err());
    }

    #[test]
    fn rejects_bad_arguments() {
        for bad in [
            &["-x"][..],
            &["-p"],
            &["-s", "0"],
            &["-T", "ten"],
            &["mydb"],
        ] {
            let failure = parse(&args(bad)).unwrap_err();
            assert_eq!(failure.status(), 1, "{bad:?}");
        }
    }

    #[test]
    fn configured_from_args_or_environment() {
        let none = |_: &str| None;
        assert_eq!(configured(&DemoArgs::default(), &none), None);
        let env = |name: &str| match name {
            "PGHOST" => Some("db1,db2".to_string()),
            "PGPORT" => Some("6543".to_string()),
            _ => None,
        };
        let conf = configured(&DemoArgs::default(), &env).expect("from env");
        assert_eq!(conf.host.as_deref(), Some("db1"));
        assert_eq!(conf.port, 6543);
        assert_eq!(conf.origin, "PGHOST/PGPORT/PGDATABASE");
        let cli = DemoArgs {
            dbname: Some("x".into()),
            ..DemoArgs::default()
        };
        let conf = configured(&cli, &none).expect("from args");
        assert_eq!(
            (conf.host, conf.port, conf.origin),
            (None, 5432, "the command line")
        );
    }

    #[test]
    fn reachability_probe() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let conf = Configured {
            host: Some("127.0.0.1".into()),
            port,
            origin: "test",
        };
        assert_eq!(reachable(&conf), Ok(()));
        drop(listener);
        assert!(reachable(&conf).is_err());
        let dir = std::env::temp_dir().join(format!("pgrush-demo-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let sock = Configured {
            host: Some(dir.display().to_string()),
            port: 5999,
            origin: "test",
        };
        assert!(reachable(&sock).is_err());
        let server = std::os::unix::net::UnixListener::bind(dir.join(".s.PGSQL.5999")).unwrap();
        assert_eq!(reachable(&sock), Ok(()));
        drop(server);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn demo_options_match_the_command_line() {
        let base = Options {
            host: Some("/s".into()),
            port: Some("1".into()),
            ..Options::default()
        };
        let init = init_options(&base, 10);
        assert_eq!(init.action, Action::Init);
        assert_eq!(init.scale, Some(10));
        assert_eq!(init.host.as_deref(), Some("/s"));
        let bench = bench_options(&base, &DemoArgs::default(), "r.html");
        assert_eq!(bench.action, Action::Bench);
        assert_eq!(
            (bench.clients, bench.jobs, bench.duration, bench.progress),
            (4, 2, Some(10), 1)
        );
        assert_eq!(bench.html.as_deref(), Some("r.html"));
        assert_eq!(bench.json, None);
        let demo = run_args(&["-c", "8", "-j1", "--json", "r.json", "-T", "3"]);
        let bench = bench_options(&base, &demo, "r.html");
        assert_eq!((bench.clients, bench.jobs), (8, 1));
        assert_eq!(bench.json.as_deref(), Some("r.json"));
        assert_eq!(
            bench_command_line(&demo, "r.html"),
            "pgrush -c 8 -j 1 -T 3 -P 1 --percentiles --html=r.html --json=r.json"
        );
        let note = durability_note(&|name| (name != "fsync").then(|| "off".to_string()));
        assert!(
            note.contains("fsync=?, full_page_writes=off, synchronous_commit=off\n"),
            "{note}"
        );
        assert_eq!(
            bench.percentiles,
            Some(pgrush_report::PercentileList::default())
        );
        // 2026-11-23T17:55:01.5Z
        assert_eq!(
            default_html_name(1_795_456_501_500_000),
            "pgrush-demo-20261123-175501.html"
        );
        assert_eq!(bench.port.as_deref(), Some("1"));
        assert_eq!(version_text(180001), "18.1");
        assert_eq!(version_text(150010), "15.10");
        assert_eq!(version_text(90624), "9.6.24");
    }
}
