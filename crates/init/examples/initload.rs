//! A minimal driver of the initialization without the full CLI (for development and
//! benchmarking): `initload [-s N] [-j N] [-I STEPS] [-F N] [-q] [--partitions N]
//! [--hash] [--unlogged] [DBNAME]`; connection settings come from the environment.

use pgrush_init::wire_session::WireConnector;
use pgrush_init::{Console, InitConfig, Partitioning, parse_steps, run_init};
use pgrush_wire::conninfo::{ConnectRequest, resolve};

fn main() {
    let mut cfg = InitConfig::default();
    let mut parts = 0u32;
    let mut hash = false;
    let mut dbname = None;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut val = || args.next().unwrap_or_default();
        match a.as_str() {
            "-s" => cfg.scale = val().parse().unwrap_or(1),
            "-j" => cfg.jobs = val().parse().unwrap_or(1),
            "-F" => cfg.fillfactor = val().parse().unwrap_or(100),
            "-I" => cfg.steps = parse_steps(&val()).unwrap_or_default(),
            "-q" => cfg.quiet = true,
            "--partitions" => parts = val().parse().unwrap_or(0),
            "--hash" => hash = true,
            "--unlogged" => cfg.unlogged = true,
            "-i" => {}
            other => dbname = Some(other.to_string()),
        }
    }
    cfg.partitioning = match (parts, hash) {
        (0, _) => Partitioning::None,
        (n, true) => Partitioning::Hash(n),
        (n, false) => Partitioning::Range(n),
    };
    let request = ConnectRequest {
        dbname,
        fallback_application_name: Some("pgrush".into()),
        ..ConnectRequest::default()
    };
    let console = Console::stderr();
    let result = resolve(&request)
        .map_err(|e| pgrush_init::InitError::Connect(e.to_string()))
        .and_then(|params| run_init(&cfg, &WireConnector::new(params), &console));
    if let Err(e) = result {
        console.write(&e.render("pgrush"));
        std::process::exit(1);
    }
}
