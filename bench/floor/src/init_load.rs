//! `pgrush-floor init`: pgbench's tables loaded with the least client work.
//!
//! Before the clock starts: `-j` connections are opened and every row is generated
//! (framed as CopyData messages, or written to files for `--source file`). Timed: the
//! drop and create statements of pgbench, the load (branches and tellers in the
//! truncating transaction; accounts by one COPY FREEZE stream there, or by concurrent
//! streams: one per partition, truncated and loaded with FREEZE, or plain COPY of
//! ranges), then the vacuum and the primary keys spread over the connections as
//! `pgrush -i -j N` spreads them. Each stream writes its whole buffer with one blocking
//! `write_all`: the socket takes it as fast as the server reads.

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use crate::error::FloorError;
use crate::init_data::{self, Chunk, RowTable};
use crate::init_options::{InitOptions, Source, Streams};
use crate::setup::{self, Socket, Target};

/// The smallest `-j` (and CPU count) from which pgrush loads an ordinary
/// pgbench_accounts with parallel plain COPY streams.
const PARALLEL_MIN: u32 = 4;

/// Runs `sql` (simple protocol) and waits for ReadyForQuery.
fn exec(socket: &mut Socket, sql: &str) -> Result<(), FloorError> {
    let mut buf = BytesMut::new();
    frontend::query(sql, &mut buf)
        .map_err(|e| FloorError::Protocol(format!("encoding Query: {e}")))?;
    setup::send(socket, &buf)?;
    setup::until_ready(socket, |_, _| Ok(())).map_err(|e| in_statement(e, sql))
}

fn in_statement(e: FloorError, sql: &str) -> FloorError {
    match e {
        FloorError::Server(m) => FloorError::Server(format!("{m} (in: {sql})")),
        other => other,
    }
}

/// `COPY ... FROM STDIN`: waits for CopyInResponse, writes `framed` (CopyData messages
/// and the CopyDone) in one go and waits for the end.
fn copy_in(socket: &mut Socket, sql: &str, framed: &[u8]) -> Result<(), FloorError> {
    let mut buf = BytesMut::new();
    frontend::query(sql, &mut buf)
        .map_err(|e| FloorError::Protocol(format!("encoding Query: {e}")))?;
    setup::send(socket, &buf)?;
    setup::until_message(socket, b'G', |_, _| Ok(())).map_err(|e| in_statement(e, sql))?;
    setup::send(socket, framed)?;
    setup::until_ready(socket, |_, _| Ok(())).map_err(|e| in_statement(e, sql))
}

/// The CREATE TABLE statements of pgbench's `t` step (int account ids: scale below 20000).
fn create_statements(o: &InitOptions) -> Vec<String> {
    let accounts = if o.partitions > 0 {
        "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) partition by range (aid)".to_string()
    } else {
        "create table pgbench_accounts(aid    int not null,bid int,abalance int,filler char(84)) with (fillfactor=100)".to_string()
    };
    let mut out = vec![
        "create table pgbench_history(tid int,bid int,aid    int,delta int,mtime timestamp,filler char(22))".to_string(),
        "create table pgbench_tellers(tid int not null,bid int,tbalance int,filler char(84)) with (fillfactor=100)".to_string(),
        accounts,
        "create table pgbench_branches(bid int not null,bbalance int,filler char(88)) with (fillfactor=100)".to_string(),
    ];
    let total = i64::from(o.scale) * init_data::ACCOUNTS_PER_BRANCH;
    let size = (total + i64::from(o.partitions) - 1) / i64::from(o.partitions.max(1));
    for p in 1..=o.partitions {
        let lo = if p == 1 {
            "minvalue".to_string()
        } else {
            (i64::from(p - 1) * size + 1).to_string()
        };
        let hi = if p == o.partitions {
            "maxvalue".to_string()
        } else {
            (i64::from(p) * size + 1).to_string()
        };
        out.push(format!(
            "create table pgbench_accounts_{p}\n  partition of pgbench_accounts\n  for values from ({lo}) to ({hi}) with (fillfactor=100)"
        ));
    }
    out
}

/// What each stream loads, made before the clock starts.
enum Payload {
    /// CopyData messages and the CopyDone.
    Framed(Vec<u8>),
    /// A file the server copies from.
    File(PathBuf),
    /// Nothing: the server generates the rows.
    Generated,
}

/// One stream's work in the load step.
struct Load {
    chunk: Chunk,
    payload: Payload,
}

impl Load {
    fn table(&self) -> String {
        match self.chunk.partition {
            Some(p) => format!("pgbench_accounts_{p}"),
            None => "pgbench_accounts".to_string(),
        }
    }

    /// Loads the chunk on `socket`; `freeze` when this transaction truncated the table.
    fn run(&self, socket: &mut Socket, freeze: bool) -> Result<(), FloorError> {
        let table = self.table();
        let with = if freeze { " with (freeze on)" } else { "" };
        match &self.payload {
            Payload::Framed(bytes) => {
                copy_in(socket, &format!("copy {table} from stdin{with}"), bytes)
            }
            Payload::File(path) => exec(
                socket,
                &format!("copy {table} from '{}'{with}", path.display()),
            ),
            Payload::Generated => exec(
                socket,
                &format!(
                    "insert into {table}(aid,bid,abalance,filler) select aid, (aid - 1) / {} + 1, 0, '' from generate_series({}, {}) as aid",
                    init_data::ACCOUNTS_PER_BRANCH,
                    self.chunk.lo,
                    self.chunk.hi
                ),
            ),
        }
    }
}

/// Files written for `--source file`, removed when dropped.
struct FileDir(Option<PathBuf>);

impl Drop for FileDir {
    fn drop(&mut self) {
        if let Some(dir) = &self.0 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn write_file(dir: &Path, name: &str, bytes: &[u8]) -> Result<PathBuf, FloorError> {
    use std::os::unix::fs::PermissionsExt;
    let path = dir.join(name);
    std::fs::write(&path, bytes)
        .map_err(|e| FloorError::io(format!("writing {}", path.display()), e))?;
    // The server may run as another user.
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644))
        .map_err(|e| FloorError::io(format!("chmod {}", path.display()), e))?;
    Ok(path)
}

/// Makes every stream's payload (in parallel, one thread per chunk).
fn prepare(chunks: Vec<Chunk>, source: Source, dir: &Path) -> Result<Vec<Load>, FloorError> {
    std::thread::scope(|scope| {
        let handles: Vec<_> = chunks
            .into_iter()
            .enumerate()
            .map(|(i, chunk)| {
                scope.spawn(move || {
                    let payload = match source {
                        Source::Client => Payload::Framed(init_data::copy_messages(
                            RowTable::Accounts,
                            chunk.lo,
                            chunk.hi,
                            b"",
                        )),
                        Source::File => Payload::File(write_file(
                            dir,
                            &format!("accounts-{i}.copy"),
                            &init_data::rows_text(RowTable::Accounts, chunk.lo, chunk.hi),
                        )?),
                        Source::Generate => Payload::Generated,
                    };
                    Ok(Load { chunk, payload })
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .map_err(|_| FloorError::Protocol("a thread panicked".into()))?
            })
            .collect()
    })
}

/// Runs `work` for every task over the connections, each on its own thread, taking
/// tasks in order; the first error is returned.
fn spread<T: Sync>(
    sockets: &mut [Socket],
    tasks: &[T],
    work: &(dyn Fn(&mut Socket, &T) -> Result<(), FloorError> + Sync),
) -> Result<(), FloorError> {
    let next = AtomicUsize::new(0);
    let first_error: Mutex<Option<FloorError>> = Mutex::new(None);
    std::thread::scope(|scope| {
        for socket in sockets.iter_mut().take(tasks.len().max(1)) {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(task) = tasks.get(i) else { break };
                    if let Err(e) = work(socket, task) {
                        next.store(tasks.len(), Ordering::SeqCst);
                        if let Ok(mut slot) = first_error.lock() {
                            slot.get_or_insert(e);
                        }
                        break;
                    }
                }
            });
        }
    });
    match first_error.into_inner() {
        Ok(Some(e)) => Err(e),
        _ => Ok(()),
    }
}

/// Seconds of each timed step.
#[derive(Debug, Default)]
struct Steps {
    drop: f64,
    create: f64,
    generate: f64,
    vacuum: f64,
    keys: f64,
}

/// User + system CPU seconds of this process so far.
fn cpu_seconds() -> f64 {
    // SAFETY: getrusage writes into the zeroed struct it is given.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: as above; RUSAGE_SELF is always valid.
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

/// True when an ordinary pgbench_accounts is loaded by one COPY FREEZE stream.
fn one_frozen_stream(o: &InitOptions) -> bool {
    match o.streams {
        Streams::Frozen => true,
        Streams::Parallel => false,
        Streams::Auto => {
            let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
            o.jobs < PARALLEL_MIN || cpus < PARALLEL_MIN as usize
        }
    }
}

/// `pgrush-floor init`: prepares, loads, prints pgbench's `done in` line and the
/// client's CPU seconds in the timed part.
pub fn run_init(o: &InitOptions) -> Result<(), FloorError> {
    let target = Target::resolve(&o.connection)?;
    let accounts = i64::from(o.scale) * init_data::ACCOUNTS_PER_BRANCH;
    let frozen = o.partitions == 0 && one_frozen_stream(o);
    let chunks = if frozen {
        init_data::plan(accounts, 1, 0)
    } else {
        init_data::plan(accounts, o.jobs, o.partitions)
    };
    let dir = if o.source == Source::File {
        let d = o
            .file_dir
            .join(format!("pgrush-init-floor-{}", std::process::id()));
        std::fs::create_dir_all(&d)
            .map_err(|e| FloorError::io(format!("creating {}", d.display()), e))?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o755))
            .map_err(|e| FloorError::io(format!("chmod {}", d.display()), e))?;
        FileDir(Some(d))
    } else {
        FileDir(None)
    };
    let loads = prepare(chunks, o.source, dir.0.as_deref().unwrap_or(Path::new(".")))?;
    let small = [
        (RowTable::Branches, i64::from(o.scale)),
        (
            RowTable::Tellers,
            i64::from(o.scale) * init_data::TELLERS_PER_BRANCH,
        ),
    ]
    .map(|(t, n)| (t, init_data::copy_messages(t, 1, n, b"\\.\n")));
    let mut sockets = (0..o.jobs)
        .map(|_| {
            let mut s = target.connect()?;
            exec(&mut s, "set synchronous_commit = on")?;
            Ok(s)
        })
        .collect::<Result<Vec<_>, FloorError>>()?;
    let version = setup::query_integer(
        &mut sockets[0],
        "select current_setting('server_version_num')::int",
    )?;

    let cpu0 = cpu_seconds();
    let start = Instant::now();
    let mut steps = Steps::default();
    let mut lap = Instant::now();
    let mut mark = |slot: &mut f64| {
        *slot = lap.elapsed().as_secs_f64();
        lap = Instant::now();
    };
    let main = &mut sockets[0];
    exec(
        main,
        "drop table if exists pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
    )?;
    mark(&mut steps.drop);
    for sql in create_statements(o) {
        exec(main, &sql)?;
    }
    mark(&mut steps.create);
    load(&mut sockets, o, frozen, &loads, &small)?;
    mark(&mut steps.generate);
    vacuum(&mut sockets, o, version)?;
    mark(&mut steps.vacuum);
    primary_keys(&mut sockets, o)?;
    mark(&mut steps.keys);
    let total = start.elapsed().as_secs_f64();
    let cpu = cpu_seconds() - cpu0;
    println!(
        "done in {total:.2} s (drop tables {:.2} s, create tables {:.2} s, {} {:.2} s, vacuum {:.2} s, primary keys {:.2} s).",
        steps.drop,
        steps.create,
        o.source.step_name(),
        steps.generate,
        steps.vacuum,
        steps.keys
    );
    println!("client CPU in the timed part: {cpu:.3} s");
    Ok(())
}

/// pgrush's `v` with `-j N`: one table (or partition) per connection, accounts first.
fn vacuum(sockets: &mut [Socket], o: &InitOptions, version: u64) -> Result<(), FloorError> {
    let mut tables: Vec<String> = if o.partitions > 0 {
        (1..=o.partitions)
            .map(|p| format!("pgbench_accounts_{p}"))
            .collect()
    } else {
        vec!["pgbench_accounts".into()]
    };
    tables.extend(["pgbench_branches", "pgbench_tellers", "pgbench_history"].map(String::from));
    spread(sockets, &tables, &|s, t| {
        if t.starts_with("pgbench_accounts") {
            if version >= 160_000 {
                exec(s, "set vacuum_buffer_usage_limit = 0")?;
            }
            exec(s, &format!("vacuum (freeze, analyze) {t}"))
        } else {
            exec(s, &format!("vacuum analyze {t}"))
        }
    })?;
    if o.partitions > 0 {
        let only = if version >= 180_000 { "only " } else { "" };
        exec(&mut sockets[0], &format!("analyze {only}pgbench_accounts"))?;
    }
    Ok(())
}

/// pgrush's `p` with `-j N`: the keys concurrently, the accounts key (of an ordinary
/// table) with `-j - 1` parallel maintenance workers; a partitioned table's key last.
fn primary_keys(sockets: &mut [Socket], o: &InitOptions) -> Result<(), FloorError> {
    let mut tasks: Vec<(String, bool)> = if o.partitions > 0 {
        (1..=o.partitions)
            .map(|p| {
                (
                    format!("alter table pgbench_accounts_{p} add primary key (aid)"),
                    false,
                )
            })
            .collect()
    } else {
        vec![(
            "alter table pgbench_accounts add primary key (aid)".into(),
            true,
        )]
    };
    tasks.push((
        "alter table pgbench_branches add primary key (bid)".into(),
        false,
    ));
    tasks.push((
        "alter table pgbench_tellers add primary key (tid)".into(),
        false,
    ));
    let workers = o.jobs.saturating_sub(1).max(1);
    spread(sockets, &tasks, &|s, (sql, parallel)| {
        if *parallel {
            exec(
                s,
                &format!("set max_parallel_maintenance_workers = {workers}"),
            )?;
            exec(
                s,
                &format!(
                    "set maintenance_work_mem = '{}MB'",
                    64.max(32 * (workers + 1))
                ),
            )?;
        }
        exec(s, sql)
    })?;
    if o.partitions > 0 {
        exec(
            &mut sockets[0],
            "alter table pgbench_accounts add primary key (aid)",
        )?;
    }
    Ok(())
}

/// The `g` step: branches and tellers (and, in one frozen stream, the accounts) in the
/// truncating transaction on the first connection; otherwise the accounts' streams
/// spread over all connections.
fn load(
    sockets: &mut [Socket],
    o: &InitOptions,
    frozen: bool,
    loads: &[Load],
    small: &[(RowTable, Vec<u8>)],
) -> Result<(), FloorError> {
    let main = &mut sockets[0];
    exec(main, "begin")?;
    exec(
        main,
        "truncate table pgbench_accounts, pgbench_branches, pgbench_history, pgbench_tellers",
    )?;
    for (table, framed) in small {
        let name = match table {
            RowTable::Branches => "pgbench_branches",
            _ => "pgbench_tellers",
        };
        copy_in(
            main,
            &format!("copy {name} from stdin with (freeze on)"),
            framed,
        )?;
    }
    if frozen {
        for load in loads {
            // Generated rows cannot be frozen by an insert.
            load.run(main, o.source != Source::Generate)?;
        }
        exec(main, "commit")?;
    } else {
        exec(main, "commit")?;
        spread(sockets, loads, &|s, load| {
            if load.chunk.partition.is_some() {
                exec(s, "begin")?;
                exec(s, &format!("truncate table {}", load.table()))?;
                load.run(s, o.source != Source::Generate)?;
                exec(s, "commit")
            } else {
                load.run(s, false)
            }
        })?;
    }
    Ok(())
}
