//! A re-implementation of glibc's `getopt_long` behaviour (glibc 2.26 and later).
//!
//! Covered: clusters of short options (`-nt5`), attached and separate option
//! values, `--name=value` and `--name value`, unique prefixes of long names,
//! exact-match priority, argument permutation (non-options are collected and
//! returned as positional arguments), `--` ending the options, and
//! `POSIXLY_CORRECT` (stop at the first non-option). Errors carry everything
//! needed to print glibc's exact message.
//!
//! Long options flagged as `extension` (options pgbench does not have) only
//! take part in prefix matching when no pgbench option matches, so every
//! abbreviation that pgbench accepts keeps its meaning.

use std::io::{self, Write};

/// Whether an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HasArg {
    /// The option takes no value.
    No,
    /// The option needs a value (attached or the next argument).
    Required,
    /// Long options only: a value only when attached with `=`.
    Optional,
}

/// One short option character.
#[derive(Debug, Clone, Copy)]
pub struct ShortOpt<T> {
    /// The option letter.
    pub ch: u8,
    /// Whether it takes a value.
    pub has_arg: HasArg,
    /// What the caller gets back.
    pub id: T,
}

/// One long option.
#[derive(Debug, Clone, Copy)]
pub struct LongOpt<T> {
    /// The name without the leading `--`.
    pub name: &'static str,
    /// Whether it takes a value.
    pub has_arg: HasArg,
    /// What the caller gets back.
    pub id: T,
    /// True for options beyond pgbench's table (lower prefix priority).
    pub extension: bool,
}

/// A recognised option with its value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found<'a, T> {
    /// The option's identifier.
    pub id: T,
    /// Its value, for options that take one.
    pub arg: Option<&'a [u8]>,
}

/// A complaint getopt_long prints itself (followed by pgbench's hint).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GetoptError {
    /// `invalid option -- 'x'`.
    InvalidShort(u8),
    /// `option requires an argument -- 'c'`.
    ShortNeedsArg(u8),
    /// `unrecognized option '--bogus=1'` (the whole text after `--`).
    Unrecognized(Vec<u8>),
    /// `option '--pro' is ambiguous; possibilities: ...`.
    Ambiguous {
        /// The text after `--` as typed (including any `=value`).
        typed: Vec<u8>,
        /// The matching option names, in table order.
        candidates: Vec<&'static str>,
    },
    /// `option '--debug' doesn't allow an argument`.
    NoArgAllowed(&'static str),
    /// `option '--time' requires an argument`.
    LongNeedsArg(&'static str),
}

impl GetoptError {
    /// Writes glibc's message line, prefixed with `argv0` as typed.
    pub fn write_to(&self, argv0: &[u8], out: &mut dyn Write) -> io::Result<()> {
        let mut line = argv0.to_vec();
        line.extend_from_slice(b": ");
        line.extend_from_slice(&self.message());
        line.push(b'\n');
        out.write_all(&line)
    }

    /// glibc's message without the program name and the newline
    /// (`invalid option -- 'x'`).
    pub fn message(&self) -> Vec<u8> {
        let mut line = Vec::new();
        match self {
            GetoptError::InvalidShort(c) => {
                line.extend_from_slice(b"invalid option -- '");
                line.push(*c);
                line.extend_from_slice(b"'");
            }
            GetoptError::ShortNeedsArg(c) => {
                line.extend_from_slice(b"option requires an argument -- '");
                line.push(*c);
                line.extend_from_slice(b"'");
            }
            GetoptError::Unrecognized(typed) => {
                line.extend_from_slice(b"unrecognized option '--");
                line.extend_from_slice(typed);
                line.extend_from_slice(b"'");
            }
            GetoptError::Ambiguous { typed, candidates } => {
                line.extend_from_slice(b"option '--");
                line.extend_from_slice(typed);
                line.extend_from_slice(b"' is ambiguous; possibilities:");
                for name in candidates {
                    line.extend_from_slice(b" '--");
                    line.extend_from_slice(name.as_bytes());
                    line.extend_from_slice(b"'");
                }
            }
            GetoptError::NoArgAllowed(name) => {
                line.extend_from_slice(b"option '--");
                line.extend_from_slice(name.as_bytes());
                line.extend_from_slice(b"' doesn't allow an argument");
            }
            GetoptError::LongNeedsArg(name) => {
                line.extend_from_slice(b"option '--");
                line.extend_from_slice(name.as_bytes());
                line.extend_from_slice(b"' requires an argument");
            }
        }
        line
    }
}

/// The scanner over argv (without argv[0]).
pub struct Getopt<'a, T> {
    args: &'a [Vec<u8>],
    shorts: &'a [ShortOpt<T>],
    longs: &'a [LongOpt<T>],
    /// Index of the next argument to examine.
    optind: usize,
    /// Position inside a cluster of short options: (argument index, byte offset).
    cluster: Option<(usize, usize)>,
    /// Indices of the non-option arguments, in order.
    positional: Vec<usize>,
    /// Stop at the first non-option (`POSIXLY_CORRECT`).
    require_order: bool,
    finished: bool,
}

impl<'a, T: Copy> Getopt<'a, T> {
    /// Starts scanning `args` (argv without argv[0]).
    pub fn new(
        args: &'a [Vec<u8>],
        shorts: &'a [ShortOpt<T>],
        longs: &'a [LongOpt<T>],
        require_order: bool,
    ) -> Self {
        Getopt {
            args,
            shorts,
            longs,
            optind: 0,
            cluster: None,
            positional: Vec::new(),
            require_order,
            finished: false,
        }
    }

    /// The non-option arguments seen so far; complete once [`Getopt::next_opt`]
    /// returned `None`.
    pub fn positional(&self) -> Vec<&'a [u8]> {
        self.positional
            .iter()
            .map(|&i| self.args[i].as_slice())
            .collect()
    }

    /// Returns the next option, an error, or `None` when the options are over.
    pub fn next_opt(&mut self) -> Option<Result<Found<'a, T>, GetoptError>> {
        if self.finished {
            return None;
        }
        if let Some((idx, pos)) = self.cluster {
            return Some(self.short_at(idx, pos));
        }
        loop {
            let Some(arg) = self.args.get(self.optind) else {
                self.finished = true;
                return None;
            };
            if arg.as_slice() == b"--" {
                self.positional.extend(self.optind + 1..self.args.len());
                self.optind = self.args.len();
                self.finished = true;
                return None;
            }
            if arg.first() != Some(&b'-') || arg.len() == 1 {
                if self.require_order {
                    self.positional.extend(self.optind..self.args.len());
                    self.optind = self.args.len();
                    self.finished = true;
                    return None;
                }
                self.positional.push(self.optind);
                self.optind += 1;
                continue;
            }
            let idx = self.optind;
            if arg[1] == b'-' {
                self.optind += 1;
                return Some(self.long(idx));
            }
            return Some(self.short_at(idx, 1));
        }
    }

    /// Handles the short option character at `args[idx][pos]`.
    fn short_at(&mut self, idx: usize, pos: usize) -> Result<Found<'a, T>, GetoptError> {
        let arg = &self.args[idx];
        let c = arg[pos];
        let rest = &arg[pos + 1..];
        self.cluster = None;
        if rest.is_empty() {
            self.optind = idx + 1;
        } else {
            self.cluster = Some((idx, pos + 1));
        }
        let Some(spec) = self.shorts.iter().find(|s| s.ch == c) else {
            return Err(GetoptError::InvalidShort(c));
        };
        match spec.has_arg {
            HasArg::No => Ok(Found {
                id: spec.id,
                arg: None,
            }),
            HasArg::Optional => {
                self.cluster = None;
                self.optind = idx + 1;
                Ok(Found {
                    id: spec.id,
                    arg: (!rest.is_empty()).then_some(rest),
                })
            }
            HasArg::Required => {
                self.cluster = None;
                if !rest.is_empty() {
                    self.optind = idx + 1;
                    return Ok(Found {
                        id: spec.id,
                        arg: Some(rest),
                    });
                }
                match self.args.get(self.optind) {
                    Some(value) => {
                        self.optind += 1;
                        Ok(Found {
                            id: spec.id,
                            arg: Some(value.as_slice()),
                        })
                    }
                    None => Err(GetoptError::ShortNeedsArg(c)),
                }
            }
        }
    }

    /// Handles the long option `args[idx]` (which starts with `--`); optind
    /// already points past it.
    fn long(&mut self, idx: usize) -> Result<Found<'a, T>, GetoptError> {
        let text = &self.args[idx][2..];
        let name_end = text.iter().position(|&b| b == b'=').unwrap_or(text.len());
        let name = &text[..name_end];
        let spec = self.lookup_long(name, text)?;
        if name_end < text.len() {
            return match spec.has_arg {
                HasArg::Required | HasArg::Optional => Ok(Found {
                    id: spec.id,
                    arg: Some(&text[name_end + 1..]),
                }),
                HasArg::No => Err(GetoptError::NoArgAllowed(spec.name)),
            };
        }
        match spec.has_arg {
            HasArg::No | HasArg::Optional => Ok(Found {
                id: spec.id,
                arg: None,
            }),
            HasArg::Required => match self.args.get(self.optind) {
                Some(value) => {
                    self.optind += 1;
                    Ok(Found {
                        id: spec.id,
                        arg: Some(value.as_slice()),
                    })
                }
                None => Err(GetoptError::LongNeedsArg(spec.name)),
            },
        }
    }

    /// Exact match first, then unique prefixes (pgbench's options before extensions).
    fn lookup_long(&self, name: &[u8], typed: &[u8]) -> Result<&'a LongOpt<T>, GetoptError> {
        if let Some(exact) = self.longs.iter().find(|l| l.name.as_bytes() == name) {
            return Ok(exact);
        }
        for extension in [false, true] {
            let matches: Vec<&'a LongOpt<T>> = self
                .longs
                .iter()
                .filter(|l| l.extension == extension && l.name.as_bytes().starts_with(name))
                .collect();
            match matches.as_slice() {
                [] => continue,
                [one] => return Ok(one),
                many => {
                    return Err(GetoptError::Ambiguous {
                        typed: typed.to_vec(),
                        candidates: many.iter().map(|l| l.name).collect(),
                    });
                }
            }
        }
        Err(GetoptError::Unrecognized(typed.to_vec()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHORTS: &[ShortOpt<char>] = &[
        ShortOpt {
            ch: b'n',
            has_arg: HasArg::No,
            id: 'n',
        },
        ShortOpt {
            ch: b't',
            has_arg: HasArg::Required,
            id: 't',
        },
        ShortOpt {
            ch: b'c',
            has_arg: HasArg::Required,
            id: 'c',
        },
    ];
    const LONGS: &[LongOpt<char>] = &[
        LongOpt {
            name: "progress",
            has_arg: HasArg::Required,
            id: 'P',
            extension: false,
        },
        LongOpt {
            name: "protocol",
            has_arg: HasArg::Required,
            id: 'M',
            extension: false,
        },
        LongOpt {
            name: "connect",
            has_arg: HasArg::No,
            id: 'C',
            extension: false,
        },
        LongOpt {
            name: "debug",
            has_arg: HasArg::No,
            id: 'd',
            extension: false,
        },
        LongOpt {
            name: "continue-on-error",
            has_arg: HasArg::No,
            id: 'E',
            extension: true,
        },
        LongOpt {
            name: "percentiles",
            has_arg: HasArg::Optional,
            id: '%',
            extension: true,
        },
    ];

    type Scan = (
        Vec<Result<(char, Option<String>), GetoptError>>,
        Vec<String>,
    );

    fn scan(args: &[&str], require_order: bool) -> Scan {
        let owned: Vec<Vec<u8>> = args.iter().map(|a| a.as_bytes().to_vec()).collect();
        let mut g = Getopt::new(&owned, SHORTS, LONGS, require_order);
        let mut out = Vec::new();
        while let Some(r) = g.next_opt() {
            let failed = r.is_err();
            out.push(r.map(|f| (f.id, f.arg.map(|a| String::from_utf8_lossy(a).into_owned()))));
            if failed {
                break;
            }
        }
        let pos = g
            .positional()
            .iter()
            .map(|p| String::from_utf8_lossy(p).into_owned())
            .collect();
        (out, pos)
    }

    fn ok(id: char, arg: Option<&str>) -> Result<(char, Option<String>), GetoptError> {
        Ok((id, arg.map(str::to_string)))
    }

    #[test]
    fn clusters_and_attached_values() {
        let (opts, pos) = scan(&["-nt5", "-c", "4", "-nn"], false);
        assert_eq!(
            opts,
            vec![
                ok('n', None),
                ok('t', Some("5")),
                ok('c', Some("4")),
                ok('n', None),
                ok('n', None)
            ]
        );
        assert!(pos.is_empty());
    }

    #[test]
    fn separate_value_may_look_like_an_option() {
        let (opts, _) = scan(&["-t", "-n", "--progress", "--x"], false);
        assert_eq!(opts, vec![ok('t', Some("-n")), ok('P', Some("--x"))]);
    }

    #[test]
    fn permutation_and_double_dash() {
        let (opts, pos) = scan(&["db", "-n", "-", "--", "-c", "x"], false);
        assert_eq!(opts, vec![ok('n', None)]);
        assert_eq!(pos, vec!["db", "-", "-c", "x"]);
    }

    #[test]
    fn require_order_stops_at_first_non_option() {
        let (opts, pos) = scan(&["-n", "db", "-c", "5"], true);
        assert_eq!(opts, vec![ok('n', None)]);
        assert_eq!(pos, vec!["db", "-c", "5"]);
    }

    #[test]
    fn long_prefixes_and_values() {
        let (opts, _) = scan(
            &["--progr=5", "--prot", "x", "--con", "--conti", "--time="],
            false,
        );
        assert_eq!(
            opts[..4],
            [
                ok('P', Some("5")),
                ok('M', Some("x")),
                ok('C', None),
                ok('E', None)
            ]
        );
        assert_eq!(opts[4], Err(GetoptError::Unrecognized(b"time=".to_vec())));
    }

    #[test]
    fn optional_values_only_with_equals() {
        let (opts, pos) = scan(&["--perc", "db", "--percentiles=", "--per=50,90"], false);
        assert_eq!(
            opts,
            vec![ok('%', None), ok('%', Some("")), ok('%', Some("50,90"))]
        );
        assert_eq!(pos, vec!["db"]);
    }

    #[test]
    fn empty_long_value_is_a_value() {
        let (opts, _) = scan(&["--progress="], false);
        assert_eq!(opts, vec![ok('P', Some(""))]);
    }

    #[test]
    fn long_errors() {
        let (opts, _) = scan(&["--pro=5"], false);
        assert_eq!(
            opts,
            vec![Err(GetoptError::Ambiguous {
                typed: b"pro=5".to_vec(),
                candidates: vec!["progress", "protocol"]
            })]
        );
        assert_eq!(
            scan(&["--debug=1"], false).0,
            vec![Err(GetoptError::NoArgAllowed("debug"))]
        );
        assert_eq!(
            scan(&["--prog"], false).0,
            vec![Err(GetoptError::LongNeedsArg("progress"))]
        );
    }

    #[test]
    fn short_errors() {
        assert_eq!(
            scan(&["-nx"], false).0,
            vec![ok('n', None), Err(GetoptError::InvalidShort(b'x'))]
        );
        assert_eq!(
            scan(&["-c"], false).0,
            vec![Err(GetoptError::ShortNeedsArg(b'c'))]
        );
    }

    #[test]
    fn messages() {
        let mut out = Vec::new();
        GetoptError::Ambiguous {
            typed: b"pro".to_vec(),
            candidates: vec!["progress", "protocol"],
        }
        .write_to(b"./pgrush", &mut out)
        .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "./pgrush: option '--pro' is ambiguous; possibilities: '--progress' '--protocol'\n"
        );
        let mut out = Vec::new();
        GetoptError::ShortNeedsArg(b'c')
            .write_to(b"pgrush", &mut out)
            .unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "pgrush: option requires an argument -- 'c'\n"
        );
    }
}
