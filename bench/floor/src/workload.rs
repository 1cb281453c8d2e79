//! The statements of each script, encoded once into the bytes sent per round trip, with
//! the places where the random parameters go, so that a transaction only overwrites
//! digits in place.

use bytes::BytesMut;
use postgres_protocol::message::frontend;

use crate::error::FloorError;
use crate::options::{QueryMode, Script};

/// A random parameter of the built-in scripts, drawn once per transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    /// `random(1, 100000 * scale)`.
    Aid,
    /// `random(1, 10 * scale)`.
    Tid,
    /// `random(1, scale)`.
    Bid,
    /// `random(-5000, 5000)`.
    Delta,
}

const FIELDS: [Field; 4] = [Field::Aid, Field::Tid, Field::Bid, Field::Delta];

/// One piece of a statement's text.
#[derive(Debug, Clone, Copy)]
enum Piece {
    Sql(&'static str),
    Param(Field),
}

use Piece::{Param, Sql};

const SELECT_ONLY: &[&[Piece]] = &[&[
    Sql("SELECT abalance FROM pgbench_accounts WHERE aid = "),
    Param(Field::Aid),
]];

const TPCB_LIKE: &[&[Piece]] = &[
    &[Sql("BEGIN")],
    &[
        Sql("UPDATE pgbench_accounts SET abalance = abalance + "),
        Param(Field::Delta),
        Sql(" WHERE aid = "),
        Param(Field::Aid),
    ],
    &[
        Sql("SELECT abalance FROM pgbench_accounts WHERE aid = "),
        Param(Field::Aid),
    ],
    &[
        Sql("UPDATE pgbench_tellers SET tbalance = tbalance + "),
        Param(Field::Delta),
        Sql(" WHERE tid = "),
        Param(Field::Tid),
    ],
    &[
        Sql("UPDATE pgbench_branches SET bbalance = bbalance + "),
        Param(Field::Delta),
        Sql(" WHERE bid = "),
        Param(Field::Bid),
    ],
    &[
        Sql("INSERT INTO pgbench_history (tid, bid, aid, delta, mtime) VALUES ("),
        Param(Field::Tid),
        Sql(", "),
        Param(Field::Bid),
        Sql(", "),
        Param(Field::Aid),
        Sql(", "),
        Param(Field::Delta),
        Sql(", CURRENT_TIMESTAMP)"),
    ],
    &[Sql("END")],
];

fn statements(script: Script) -> &'static [&'static [Piece]] {
    match script {
        Script::SelectOnly => SELECT_ONLY,
        Script::TpcbLike => TPCB_LIKE,
        // Written per round trip (`tpcc_new_order`), not encoded once.
        Script::TpccClientNewOrder => &[],
    }
}

/// The ranges of the random parameters, from the scale factor.
#[derive(Debug, Clone, Copy)]
pub struct Ranges {
    accounts: u64,
    tellers: u64,
    branches: u64,
}

/// Width of `delta`'s text: a sign and four digits.
const DELTA_WIDTH: usize = 5;
const DELTA_MAX: i64 = 5000;

impl Ranges {
    /// pgbench's ranges at `scale`.
    pub fn new(scale: u64) -> Ranges {
        Ranges {
            accounts: 100_000 * scale,
            tellers: 10 * scale,
            branches: scale,
        }
    }

    /// How many characters the field's text always takes (zero-padded).
    fn width(&self, field: Field) -> usize {
        match field {
            Field::Aid => digits(self.accounts),
            Field::Tid => digits(self.tellers),
            Field::Bid => digits(self.branches),
            Field::Delta => DELTA_WIDTH,
        }
    }
}

fn digits(mut n: u64) -> usize {
    let mut d = 1;
    while n >= 10 {
        n /= 10;
        d += 1;
    }
    d
}

/// A place in a command's bytes where a field's text goes.
#[derive(Debug, Clone, Copy)]
struct Patch {
    offset: usize,
    width: usize,
    field: Field,
}

/// The bytes of one round trip (a Query, or Bind/Execute/Sync) and where to patch them.
#[derive(Debug, Clone)]
pub struct Command {
    /// The message(s) sent with one `send`.
    pub bytes: Vec<u8>,
    patches: Vec<Patch>,
}

/// The commands of one script as one client sends them, in order.
#[derive(Debug, Clone)]
pub struct Transaction {
    /// One entry per round trip.
    pub commands: Vec<Command>,
    /// The fields the script uses (select-only draws only the aid).
    used: Vec<Field>,
    ranges: Ranges,
    rng: XorShift,
}

/// The SQL text of a statement, parameters written as zero-padded placeholders (simple
/// mode) or as `$n` (prepared mode), and the placeholder offsets in the text.
fn render(pieces: &[Piece], ranges: &Ranges, mode: QueryMode) -> (String, Vec<(usize, Field)>) {
    let mut sql = String::new();
    let mut params = Vec::new();
    for piece in pieces {
        match *piece {
            Sql(text) => sql.push_str(text),
            Param(field) if mode == QueryMode::Simple => {
                params.push((sql.len(), field));
                sql.extend(std::iter::repeat_n('0', ranges.width(field)));
            }
            Param(field) => {
                params.push((sql.len(), field));
                sql.push_str(&format!("${}", params.len()));
            }
        }
    }
    (sql, params)
}

/// The name statement `index` is prepared under.
pub fn statement_name(index: usize) -> String {
    format!("P{index}")
}

/// The Parse messages of a script (prepared mode), followed by one Sync.
pub fn parse_messages(script: Script, ranges: &Ranges) -> Result<Vec<u8>, FloorError> {
    let mut buf = BytesMut::new();
    for (i, pieces) in statements(script).iter().enumerate() {
        let (sql, _) = render(pieces, ranges, QueryMode::Prepared);
        frontend::parse(&statement_name(i), &sql, std::iter::empty(), &mut buf)
            .map_err(|e| FloorError::Protocol(format!("encoding Parse: {e}")))?;
    }
    frontend::sync(&mut buf);
    Ok(buf.to_vec())
}

/// A simple-mode command: one Query message; the text starts 5 bytes in.
fn query_command(pieces: &[Piece], ranges: &Ranges) -> Result<Command, FloorError> {
    let (sql, params) = render(pieces, ranges, QueryMode::Simple);
    let mut buf = BytesMut::new();
    frontend::query(&sql, &mut buf)
        .map_err(|e| FloorError::Protocol(format!("encoding Query: {e}")))?;
    let patches = params
        .into_iter()
        .map(|(at, field)| Patch {
            offset: 5 + at,
            width: ranges.width(field),
            field,
        })
        .collect();
    Ok(Command {
        bytes: buf.to_vec(),
        patches,
    })
}

/// A prepared-mode command: Bind (text parameters, zero-padded placeholders), with
/// `describe` Describe of the portal, Execute and Sync. Bind's layout: tag, length,
/// "" portal, name, no formats (2 bytes), the parameter count (2), then per parameter
/// its length (4) and text.
fn bind_command(
    index: usize,
    pieces: &[Piece],
    ranges: &Ranges,
    describe: bool,
) -> Result<Command, FloorError> {
    let (_, params) = render(pieces, ranges, QueryMode::Prepared);
    let name = statement_name(index);
    let values: Vec<Vec<u8>> = params
        .iter()
        .map(|&(_, f)| vec![b'0'; ranges.width(f)])
        .collect();
    let mut buf = BytesMut::new();
    frontend::bind(
        "",
        &name,
        std::iter::empty(),
        values.iter(),
        |v, buf| {
            buf.extend_from_slice(v);
            Ok(postgres_protocol::IsNull::No)
        },
        std::iter::empty(),
        &mut buf,
    )
    .map_err(|_| FloorError::Protocol("encoding Bind".into()))?;
    let mut offset = 1 + 4 + 1 + name.len() + 1 + 2 + 2;
    let mut patches = Vec::new();
    for &(_, field) in &params {
        let width = ranges.width(field);
        patches.push(Patch {
            offset: offset + 4,
            width,
            field,
        });
        offset += 4 + width;
    }
    if describe {
        frontend::describe(b'P', "", &mut buf)
            .map_err(|e| FloorError::Protocol(format!("encoding Describe: {e}")))?;
    }
    frontend::execute("", 0, &mut buf)
        .map_err(|e| FloorError::Protocol(format!("encoding Execute: {e}")))?;
    frontend::sync(&mut buf);
    let bytes = buf.to_vec();
    for p in &patches {
        if bytes.get(p.offset..p.offset + p.width) != Some(&vec![b'0'; p.width][..]) {
            return Err(FloorError::Protocol(
                "Bind layout is not the expected one".into(),
            ));
        }
    }
    Ok(Command { bytes, patches })
}

impl Transaction {
    /// The commands of `script` in `mode` (prepared mode with Describe when
    /// `describe`) at `scale`, with a random generator seeded by `seed`.
    pub fn new(
        script: Script,
        (mode, describe): (QueryMode, bool),
        scale: u64,
        seed: u64,
    ) -> Result<Self, FloorError> {
        let ranges = Ranges::new(scale);
        let commands = statements(script)
            .iter()
            .enumerate()
            .map(|(i, pieces)| match mode {
                QueryMode::Simple => query_command(pieces, &ranges),
                QueryMode::Prepared => bind_command(i, pieces, &ranges, describe),
            })
            .collect::<Result<Vec<_>, _>>()?;
        let used = FIELDS
            .into_iter()
            .filter(|f| {
                commands
                    .iter()
                    .any(|c| c.patches.iter().any(|p| p.field == *f))
            })
            .collect();
        Ok(Transaction {
            commands,
            used,
            ranges,
            rng: XorShift::new(seed),
        })
    }

    /// What follows the response to command `command`: the index of the command to
    /// send next (the next one of this transaction, or the first of a new one, whose
    /// parameters are then drawn; `more` says whether a new one may start), or `None`
    /// when the client is done. `completed` counts the transactions that ended.
    pub fn after_response(
        &mut self,
        command: usize,
        more: bool,
        completed: &mut u64,
    ) -> Option<usize> {
        if command + 1 < self.commands.len() {
            return Some(command + 1);
        }
        *completed += 1;
        if !more {
            return None;
        }
        self.draw();
        Some(0)
    }

    /// Draws the next transaction's parameters and writes them into the commands.
    pub fn draw(&mut self) {
        let mut values = [0i64; FIELDS.len()];
        for &field in &self.used {
            values[field as usize] = match field {
                Field::Aid => 1 + self.rng.below(self.ranges.accounts) as i64,
                Field::Tid => 1 + self.rng.below(self.ranges.tellers) as i64,
                Field::Bid => 1 + self.rng.below(self.ranges.branches) as i64,
                Field::Delta => self.rng.below(2 * DELTA_MAX as u64 + 1) as i64 - DELTA_MAX,
            };
        }
        for command in &mut self.commands {
            for p in &command.patches {
                let value = values[p.field as usize];
                let signed = p.field == Field::Delta;
                write_padded(
                    &mut command.bytes[p.offset..p.offset + p.width],
                    value,
                    signed,
                );
            }
        }
    }
}

/// Writes `value` into `out` zero-padded; a `signed` one gets its sign first.
fn write_padded(out: &mut [u8], value: i64, signed: bool) {
    let mut n = value.unsigned_abs();
    let start = if signed && !out.is_empty() {
        out[0] = if value < 0 { b'-' } else { b'+' };
        1
    } else {
        0
    };
    for byte in out[start..].iter_mut().rev() {
        *byte = b'0' + (n % 10) as u8;
        n /= 10;
    }
}

/// A xorshift64* generator: a few instructions per number, plenty for choosing rows.
#[derive(Debug, Clone)]
pub struct XorShift(u64);

impl XorShift {
    /// A generator from a seed (any value; zero is replaced).
    pub fn new(seed: u64) -> XorShift {
        XorShift(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next number in `0..n` (`n` > 0), by multiplying instead of dividing
    /// (Lemire's method without the rejection step: the bias is negligible here).
    pub fn below(&mut self, n: u64) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        let r = x.wrapping_mul(0x2545_F491_4F6C_DD1D);
        ((u128::from(r) * u128::from(n)) >> 64) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn simple_select_gets_a_new_aid_in_range() {
        let mut t = Transaction::new(Script::SelectOnly, (QueryMode::Simple, false), 2, 7).unwrap();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..100 {
            t.draw();
            let bytes = &t.commands[0].bytes;
            let text = std::str::from_utf8(&bytes[5..bytes.len() - 1]).unwrap();
            let aid: u64 = text.rsplit(' ').next().unwrap().parse().unwrap();
            assert!((1..=200_000).contains(&aid), "{text}");
            assert_eq!(
                text.len(),
                "SELECT abalance FROM pgbench_accounts WHERE aid = ".len() + 6
            );
            seen.insert(aid);
        }
        assert!(seen.len() > 90);
    }

    #[test]
    fn delta_keeps_its_width_and_sign() {
        let mut buf = *b"00000";
        write_padded(&mut buf, -42, true);
        assert_eq!(&buf, b"-0042");
        write_padded(&mut buf, 5000, true);
        assert_eq!(&buf, b"+5000");
    }

    #[test]
    fn prepared_tpcb_patches_every_parameter() {
        let mut t = Transaction::new(Script::TpcbLike, (QueryMode::Prepared, false), 1, 3).unwrap();
        assert_eq!(t.commands.len(), 7);
        t.draw();
        let insert = &t.commands[5].bytes;
        // tid (2 digits), bid (1), aid (6), delta (5) as text parameters.
        let text = String::from_utf8_lossy(insert);
        assert!(text.contains('+') || text.contains('-'), "{text}");
    }

    /// The message tags of `bytes`, a run of frontend messages.
    fn tags(bytes: &[u8]) -> Vec<u8> {
        let mut tags = Vec::new();
        let mut at = 0;
        while at < bytes.len() {
            tags.push(bytes[at]);
            let len = u32::from_be_bytes(bytes[at + 1..at + 5].try_into().unwrap());
            at += 1 + len as usize;
        }
        tags
    }

    #[test]
    fn describe_goes_between_bind_and_execute() {
        let select = |describe| {
            let mut t = Transaction::new(Script::SelectOnly, (QueryMode::Prepared, describe), 1, 3)
                .unwrap();
            t.draw();
            t.commands.remove(0).bytes
        };
        let (plain, described) = (select(false), select(true));
        assert_eq!(tags(&plain), b"BES");
        assert_eq!(tags(&described), b"BDES");
        // The same Bind (same seed, same draw), then Describe of the unnamed portal.
        let bind_len = 1 + u32::from_be_bytes(plain[1..5].try_into().unwrap()) as usize;
        assert_eq!(plain[..bind_len], described[..bind_len]);
        assert_eq!(&described[bind_len..bind_len + 7], b"D\0\0\0\x06P\0");
    }
}
