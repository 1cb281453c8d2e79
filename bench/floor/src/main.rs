//! `pgrush-floor`: the floor client of `bench/compare`, the least work a PostgreSQL
//! client can do per transaction of pgbench's built-in select-only and tpcb-like
//! scripts.
//!
//! # Brief overview
//!
//! - [`options`] reads the pgbench options `bench/compare` passes (`-c -j -T -t -M -S
//!   -b -n -h -p -U -d`).
//! - [`setup`] connects with blocking I/O (trust authentication only), reads the scale
//!   from `pgbench_branches` and prepares the statements in prepared mode.
//! - [`workload`] encodes every round trip of the script once (a Query message, or
//!   Bind/Execute/Sync) and, per transaction, overwrites the zero-padded digits of the
//!   random parameters in place (a xorshift generator, pgbench's ranges).
//! - [`event_loop`] runs one thread's clients on one `mio::Poll` over non-blocking
//!   sockets, like pgbench and pgrush: per round trip one `write` and, when readable,
//!   `read`s until ReadyForQuery; [`response`] walks only the message headers.
//! - [`tpcc_new_order`] (`-b tpcc-client-new-order`) writes the statements of pgrush's
//!   TPC-C-like client-mode New-Order one round trip at a time, reading the order id and
//!   prices from the responses; [`work`] is what a client runs, either kind.
//! - [`uring_loop`] (`--io uring`) runs them on one io_uring instead: a multishot Recv
//!   per client over a provided-buffer ring ([`buf_ring`]) and one submission per loop
//!   pass for the Sends of all the clients ready for them.
//!
//! - `pgrush-floor init` ([`init_options`], [`init_data`], [`init_load`]) is the floor of
//!   `-i`: pgbench's rows generated before the clock starts and sent by `-j` COPY
//!   streams, then pgrush's vacuum and key steps (`bench/init-compare`'s third column).
//!
//! No statistics beyond a count: the report is pgbench's `number of transactions
//! actually processed` and `tps` lines. The floor never uses pgrush's engine.

mod buf_ring;
mod error;
mod event_loop;
mod init_data;
mod init_load;
mod init_options;
mod options;
mod response;
mod setup;
mod tpcc_new_order;
mod uring_loop;
mod work;
mod workload;

use std::process::ExitCode;
use std::sync::{Arc, Barrier};
use std::time::Instant;

use error::FloorError;
use event_loop::{Stop, ThreadClients};
use options::{IoMode, Limit, Options, Parsed, QueryMode, Script};
use setup::{Socket, Target};
use tpcc_new_order::NewOrder;
use uring_loop::UringClients;
use work::Work;
use workload::{Ranges, Transaction};

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1).peekable();
    if args.peek().map(String::as_str) == Some("init") {
        return init_main(args.skip(1));
    }
    match options::parse(args) {
        Ok(Parsed::Help) => {
            println!("{}", options::USAGE);
            ExitCode::SUCCESS
        }
        Ok(Parsed::Run(mut opts)) => match run(available_io(&mut opts)) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("pgrush-floor: {e}");
                ExitCode::from(2)
            }
        },
        Err(e) => {
            eprintln!("pgrush-floor: {e}\nTry \"pgrush-floor --help\" for more information.");
            ExitCode::from(1)
        }
    }
}

/// `pgrush-floor init ...`: the initialization floor (`init_load`).
fn init_main(args: impl Iterator<Item = String>) -> ExitCode {
    match init_options::parse_init(args) {
        Ok(init_options::InitParsed::Help) => {
            println!("{}", init_options::INIT_USAGE);
            ExitCode::SUCCESS
        }
        Ok(init_options::InitParsed::Run(opts)) => match init_load::run_init(&opts) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("pgrush-floor init: {e}");
                ExitCode::from(2)
            }
        },
        Err(e) => {
            eprintln!(
                "pgrush-floor init: {e}\nTry \"pgrush-floor init --help\" for more information."
            );
            ExitCode::from(1)
        }
    }
}

/// `opts` with `--io uring` replaced by epoll, after a one-line notice, where this
/// process may not use io_uring (an old kernel, `io_uring_disabled`, seccomp).
fn available_io(opts: &mut Options) -> &Options {
    if opts.io != IoMode::Epoll
        && let Err(e) = uring_loop::probe()
    {
        eprintln!("pgrush-floor: io_uring is not available ({e}): using epoll");
        opts.io = IoMode::Epoll;
    }
    opts
}

/// Connects, runs the threads and prints the report.
fn run(opts: &Options) -> Result<(), FloorError> {
    let target = Target::resolve(&opts.connection)?;
    let scale = {
        let mut socket = target.connect()?;
        let sql = format!("SELECT count(*) FROM {}", opts.script.scale_table());
        setup::query_integer(&mut socket, &sql)?
    };
    if scale == 0 {
        return Err(FloorError::Usage(format!(
            "{} is empty: run pgbench -i (pgrush -i --workload tpcc) first",
            opts.script.scale_table()
        )));
    }
    let barrier = Arc::new(Barrier::new(opts.threads + 1));
    let mut handles = Vec::with_capacity(opts.threads);
    for thread in 0..opts.threads {
        let clients = clients_of(thread, opts);
        let (opts, target, barrier) = (opts.clone(), target.clone(), barrier.clone());
        handles.push(std::thread::spawn(move || {
            let ready = connect_all(&opts, &target, scale, clients);
            barrier.wait();
            let stop = match opts.limit {
                Limit::Duration(d) => Stop::At(Instant::now() + d),
                Limit::TransactionsPerClient(n) => Stop::After(n),
            };
            let connections = ready?;
            match opts.io {
                IoMode::Epoll => ThreadClients::new(connections)?.run(stop),
                IoMode::Uring => UringClients::new(connections)?.run(stop),
            }
        }));
    }
    barrier.wait();
    let start = Instant::now();
    let mut total = 0;
    let mut first_error = None;
    for handle in handles {
        match handle.join() {
            Ok(Ok(n)) => total += n,
            Ok(Err(e)) => first_error = first_error.or(Some(e)),
            Err(_) => {
                first_error = first_error.or(Some(FloorError::Protocol("a thread panicked".into())))
            }
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    if let Some(e) = first_error {
        return Err(e);
    }
    print_report(opts, scale, total, elapsed);
    Ok(())
}

/// The client numbers thread `thread` runs: pgbench's split, the first threads taking
/// one more when the clients do not divide evenly.
fn clients_of(thread: usize, opts: &Options) -> std::ops::Range<usize> {
    let (base, extra) = (opts.clients / opts.threads, opts.clients % opts.threads);
    let start = thread * base + thread.min(extra);
    start..start + base + usize::from(thread < extra)
}

/// Opens and (in prepared mode) prepares the connections of one thread.
fn connect_all(
    opts: &Options,
    target: &Target,
    scale: u64,
    clients: std::ops::Range<usize>,
) -> Result<Vec<(Socket, Work)>, FloorError> {
    let seed_base = u64::from(std::process::id()) << 32;
    let mut connections = Vec::with_capacity(clients.len());
    for client in clients {
        let mut socket = target.connect()?;
        if opts.mode == QueryMode::Prepared {
            let parse = workload::parse_messages(opts.script, &Ranges::new(scale))?;
            setup::send(&mut socket, &parse)?;
            setup::until_ready(&mut socket, |_, _| Ok(()))?;
        }
        let seed = seed_base ^ (client as u64 + 1);
        let work = match opts.script {
            Script::TpccClientNewOrder => {
                Work::NewOrder(Box::new(NewOrder::new(client, scale, seed)))
            }
            _ => Work::Fixed(Transaction::new(
                opts.script,
                (opts.mode, opts.describe),
                scale,
                seed,
            )?),
        };
        connections.push((socket, work));
    }
    Ok(connections)
}

/// pgbench's report lines, those `bench/compare` reads among them.
fn print_report(opts: &Options, scale: u64, total: u64, elapsed: f64) {
    println!("pgrush-floor (floor client, no statistics)");
    println!("transaction type: {}", opts.script.name());
    println!("scaling factor: {scale}");
    println!("query mode: {}", opts.mode.name());
    println!("number of clients: {}", opts.clients);
    println!("number of threads: {}", opts.threads);
    match opts.limit {
        Limit::Duration(d) => println!("duration: {} s", d.as_secs()),
        Limit::TransactionsPerClient(n) => println!("number of transactions per client: {n}"),
    }
    println!("number of transactions actually processed: {total}");
    let tps = if elapsed > 0.0 {
        total as f64 / elapsed
    } else {
        0.0
    };
    println!("tps = {tps:.6} (without initial connection time)");
}
