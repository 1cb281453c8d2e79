//! Loading a script: splitting, meta-command parsing, `\gset` merging, conditional
//! structure checks and jump precomputation.

use crate::error::{LoadError, SyntaxError};
use crate::expr::{Expr, FastExpr, parse_expression};
use crate::meta::{SleepArg, SleepSpec, SleepUnit};
use crate::sql::{GsetKind, SqlCommand, sql_first_line};
use crate::sqlscan::{SqlScanner, Stop};
use crate::vars::VarRef;
use crate::words::{Word, next_word};

/// pgbench's `MAX_ARGS` (command word included).
const MAX_ARGS: usize = 256;

/// A loaded script.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// Description: the file name as given (bytes, as pgbench prints it), `-`, or
    /// `<builtin: ...>`.
    pub desc: Vec<u8>,
    /// Weight for script choice.
    pub weight: u32,
    /// Commands in order.
    pub commands: Vec<Command>,
}

/// Jump targets of a conditional command (indexes into `Script::commands`).
///
/// Execution as pgbench does it (checked against its `--debug` trace):
/// * `\if` true: continue with the next command. `\if` false: go to `next`; if it
///   is an `\elif`, evaluate it (true: continue after it, false: follow its
///   `next`); an `\else` or `\endif` target is not executed: continue after it.
/// * An `\elif` or `\else` reached in sequence (its block already ran a branch):
///   continue after `endif` (the `\endif` itself is not executed).
/// * `\endif` reached in sequence: continue with the next command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CondJumps {
    /// The next `\elif`, `\else` or `\endif` of the same block.
    pub next: usize,
    /// The block's `\endif`.
    pub endif: usize,
}

/// One command of a script.
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    /// What to do.
    pub kind: CommandKind,
    /// 1-based line number (of the backslash for meta commands, of the first
    /// character for SQL).
    pub line: usize,
    /// Text shown in the `-r` report: SQL's first line (at most 127 bytes), or the
    /// whole meta command from the backslash (continuations included); the
    /// script's bytes.
    pub first_line: Vec<u8>,
    /// Meta command words as pgbench keeps them (command word as written, then its
    /// arguments; for `\set` only the variable; for `\if`/`\elif` only the word).
    /// Empty for SQL. Used by `--debug` (`client N executing \<argv...>`).
    pub argv: Vec<Vec<u8>>,
    /// Jumps for `\if`, `\elif`, `\else` (None for other commands).
    pub cond: Option<CondJumps>,
}

/// The kinds of commands.
#[derive(Debug, Clone, PartialEq)]
pub enum CommandKind {
    /// An SQL command.
    Sql(SqlCommand),
    /// `\set var expr` (the name is validated at run time: `set: invalid variable name`).
    Set {
        /// Target variable.
        var: VarRef,
        /// Expression.
        expr: Expr,
        /// The expression compiled for the fast path, when it covers its form
        /// ([`Expr::compile_fast`]).
        fast: Option<FastExpr>,
    },
    /// `\sleep`.
    Sleep(SleepSpec),
    /// `\setshell var cmd args...` (`args[0]` is the program word).
    SetShell {
        /// Target variable.
        var: VarRef,
        /// Words after the variable; see [`crate::build_shell_command`].
        args: Vec<Vec<u8>>,
    },
    /// `\shell cmd args...`.
    Shell {
        /// Words; see [`crate::build_shell_command`].
        args: Vec<Vec<u8>>,
    },
    /// `\if expr`.
    If(Expr),
    /// `\elif expr`.
    Elif(Expr),
    /// `\else`.
    Else,
    /// `\endif`.
    EndIf,
    /// `\startpipeline`.
    StartPipeline,
    /// `\endpipeline`.
    EndPipeline,
    /// `\syncpipeline`.
    SyncPipeline,
}

impl Command {
    /// The meta command words joined by single spaces, as `--debug` shows them
    /// after `executing \\` (empty for SQL).
    pub fn argv_line(&self) -> Vec<u8> {
        self.argv.join(&b' ')
    }

    /// The SQL command, if this is one.
    pub fn sql(&self) -> Option<&SqlCommand> {
        match &self.kind {
            CommandKind::Sql(s) => Some(s),
            _ => None,
        }
    }

    /// The meta command's word as written in the script (`SET`, `If`, `sleep`, ...),
    /// without the backslash: pgbench names `\set`, `\if` and `\elif` by it in
    /// their run-time messages. Empty for SQL.
    pub fn word(&self) -> &str {
        // A meta command's word matched a command name case-insensitively, so it
        // is ASCII.
        self.argv
            .first()
            .and_then(|w| std::str::from_utf8(w).ok())
            .unwrap_or("")
    }
}

impl Script {
    /// In extended and prepared modes pgbench rejects SQL commands with more than
    /// 255 variable references (after all options are parsed, exit 1).
    pub fn check_parameters(&self) -> Result<(), LoadError> {
        for c in &self.commands {
            if let CommandKind::Sql(s) = &c.kind
                && s.too_many_params()
            {
                let t = s.text.strip_suffix(b"\n").unwrap_or(&s.text);
                return Err(LoadError::TooManyArguments(t.to_vec()));
            }
        }
        Ok(())
    }

    /// Tree depth ([`Expr::depth`]) of the deepest `\set`, `\if` or `\elif`
    /// expression, 0 without any.
    pub fn max_expr_depth(&self) -> usize {
        self.commands
            .iter()
            .filter_map(|c| match &c.kind {
                CommandKind::Set { expr, .. } | CommandKind::If(expr) | CommandKind::Elif(expr) => {
                    Some(expr.depth())
                }
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// Stack bytes that evaluating this script's expressions may use, beyond the
    /// evaluating thread's own needs ([`crate::eval_stack_bytes`] of
    /// [`Script::max_expr_depth`]).
    pub fn eval_stack_bytes(&self) -> usize {
        crate::eval_stack_bytes(self.max_expr_depth())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Meta {
    Set,
    Sleep,
    SetShell,
    Shell,
    If,
    Elif,
    Else,
    EndIf,
    StartPipeline,
    EndPipeline,
    SyncPipeline,
    Gset,
    Aset,
}

fn meta_of(word: &[u8]) -> Option<Meta> {
    Some(match word.to_ascii_lowercase().as_slice() {
        b"set" => Meta::Set,
        b"sleep" => Meta::Sleep,
        b"setshell" => Meta::SetShell,
        b"shell" => Meta::Shell,
        b"if" => Meta::If,
        b"elif" => Meta::Elif,
        b"else" => Meta::Else,
        b"endif" => Meta::EndIf,
        b"startpipeline" => Meta::StartPipeline,
        b"endpipeline" => Meta::EndPipeline,
        b"syncpipeline" => Meta::SyncPipeline,
        b"gset" => Meta::Gset,
        b"aset" => Meta::Aset,
        _ => return None,
    })
}

struct Loader<'a> {
    desc: &'a [u8],
    buf: &'a [u8],
    /// Offsets of the script's newlines, in order: a line number is found by a
    /// binary search, not by counting from the start (which made loading
    /// quadratic in the number of commands).
    newlines: Vec<usize>,
}

enum Parsed {
    Cmd(Command),
    Gset(GsetKind, Vec<u8>),
}

impl<'a> Loader<'a> {
    fn new(desc: &'a [u8], buf: &'a [u8]) -> Self {
        let newlines = buf
            .iter()
            .enumerate()
            .filter_map(|(i, &c)| (c == b'\n').then_some(i))
            .collect();
        Loader {
            desc,
            buf,
            newlines,
        }
    }

    /// 1-based number of the line holding byte `offset` (1 + the newlines before it).
    fn lineno(&self, offset: usize) -> usize {
        1 + self.newlines.partition_point(|&nl| nl < offset)
    }

    fn substring(&self, start: usize, end: usize) -> Vec<u8> {
        let mut e = end.min(self.buf.len());
        while e > start && matches!(self.buf[e - 1], b'\n' | b'\r') {
            e -= 1;
        }
        self.buf[start..e].to_vec()
    }

    #[allow(clippy::too_many_arguments)]
    fn err(
        &self,
        line: usize,
        text: Option<Vec<u8>>,
        cmd: Option<&[u8]>,
        msg: &str,
        detail: Option<Vec<u8>>,
        column: Option<usize>,
    ) -> LoadError {
        LoadError::Syntax(Box::new(SyntaxError {
            source_name: self.desc.to_vec(),
            line,
            message: msg.to_string(),
            detail,
            command: cmd.map(<[u8]>::to_vec),
            text,
            column,
        }))
    }

    /// Parse the meta command whose backslash is at `start`; `pos` is after it.
    ///
    /// Reads the command word, then hands the rest of the line to the parser of
    /// that command's family: an expression (`\set`, `\if`, `\elif`) or words
    /// (everything else).
    fn backslash(&self, start: usize, pos: &mut usize) -> Result<Option<Parsed>, LoadError> {
        let line = self.lineno(start);
        let Some(first) = next_word(self.buf, pos) else {
            return Ok(None);
        };
        let meta = meta_of(&first.text);
        if let Some(m @ (Meta::Set | Meta::If | Meta::Elif)) = meta {
            let cmd = self.expression_command(m, first.text, start, line, pos)?;
            return Ok(Some(Parsed::Cmd(cmd)));
        }
        let mut cmd = self.read_words(first, start, line, pos)?;
        let kind = match meta {
            Some(Meta::Sleep) => self.sleep_command(&mut cmd)?,
            Some(Meta::SetShell) => self.setshell_command(&cmd)?,
            Some(Meta::Shell) => self.shell_command(&cmd)?,
            Some(
                m @ (Meta::Else
                | Meta::EndIf
                | Meta::StartPipeline
                | Meta::EndPipeline
                | Meta::SyncPipeline),
            ) => self.no_argument_command(&cmd, m)?,
            Some(m @ (Meta::Gset | Meta::Aset)) => return self.gset_command(&cmd, m).map(Some),
            _ => return Err(self.word_err(&cmd, "invalid command", None, None)),
        };
        Ok(Some(Parsed::Cmd(cmd.into_command(kind))))
    }

    /// `\set var expr`, `\if expr` or `\elif expr` (`meta` says which): the
    /// variable for `\set`, then the expression, which ends the command.
    fn expression_command(
        &self,
        meta: Meta,
        cmd_word: Vec<u8>,
        start: usize,
        line: usize,
        pos: &mut usize,
    ) -> Result<Command, LoadError> {
        let mut argv = vec![cmd_word.clone()];
        let mut var = None;
        if meta == Meta::Set {
            let Some(w) = next_word(self.buf, pos) else {
                return Err(self.err(line, None, Some(&cmd_word), "missing argument", None, None));
            };
            argv.push(w.text.clone());
            var = Some(w.text);
        }
        let parsed = match parse_expression(self.buf, *pos) {
            Ok(p) => p,
            Err(e) => {
                let full = self.substring(start, e.end);
                return Err(self.err(
                    line,
                    Some(full),
                    Some(&cmd_word),
                    &e.message,
                    e.detail,
                    Some(e.offset.saturating_sub(start)),
                ));
            }
        };
        *pos = parsed.end;
        let first_line = self.substring(start, parsed.end);
        let kind = match (meta, var) {
            (Meta::Set, Some(v)) => CommandKind::Set {
                var: VarRef::new(&v),
                fast: parsed.expr.compile_fast(),
                expr: parsed.expr,
            },
            (Meta::If, _) => CommandKind::If(parsed.expr),
            _ => CommandKind::Elif(parsed.expr),
        };
        Ok(Command {
            kind,
            line,
            first_line,
            argv,
            cond: None,
        })
    }

    /// The words of a meta command that takes words (all but `\set`, `\if` and
    /// `\elif`), up to the end of its line; `first` is the command word.
    fn read_words(
        &self,
        first: Word,
        start: usize,
        line: usize,
        pos: &mut usize,
    ) -> Result<MetaWords, LoadError> {
        let mut argv = vec![first.text.clone()];
        let mut words: Vec<Word> = vec![first];
        while let Some(w) = next_word(self.buf, pos) {
            if words.len() >= MAX_ARGS {
                return Err(self.err(
                    line,
                    None,
                    Some(&words[0].text),
                    "too many arguments",
                    None,
                    None,
                ));
            }
            argv.push(w.text.clone());
            words.push(w);
        }
        Ok(MetaWords {
            start,
            line,
            first_line: self.substring(start, *pos),
            words,
            argv,
        })
    }

    /// A syntax error in the word command `cmd`, shown with its whole text.
    fn word_err(
        &self,
        cmd: &MetaWords,
        msg: &str,
        detail: Option<Vec<u8>>,
        column: Option<usize>,
    ) -> LoadError {
        self.err(
            cmd.line,
            Some(cmd.first_line.clone()),
            Some(&cmd.words[0].text),
            msg,
            detail,
            column,
        )
    }

    /// `\sleep n [unit]`, `\sleep :var [unit]` or `\sleep <n><unit>` (the unit
    /// attached to the number, which pgbench adds to argv as a word of its own).
    fn sleep_command(&self, cmd: &mut MetaWords) -> Result<CommandKind, LoadError> {
        let argc = cmd.words.len();
        if argc < 2 {
            return Err(self.word_err(cmd, "missing argument", None, None));
        }
        if argc > 3 {
            let col = cmd.words[3].offset - cmd.start;
            return Err(self.word_err(cmd, "too many arguments", None, Some(col)));
        }
        let a1 = cmd.words[1].text.clone();
        let mut unit_word: Option<(Vec<u8>, usize)> =
            cmd.words.get(2).map(|w| (w.text.clone(), w.offset));
        let mut num = a1.clone();
        if !a1.starts_with(b":") {
            let (i, have_digit) = leading_integer(&a1);
            if i < a1.len() {
                if argc == 2 && have_digit {
                    unit_word = Some((a1[i..].to_vec(), cmd.words[1].offset + i));
                    // pgbench keeps the whole word as argv[1] and adds the unit.
                    cmd.argv.push(a1[i..].to_vec());
                    num = a1[..i].to_vec();
                } else {
                    return Err(self.word_err(
                        cmd,
                        "invalid sleep time, must be an integer",
                        Some(a1.clone()),
                        Some(cmd.words[1].offset - cmd.start),
                    ));
                }
            }
        }
        let unit = self.sleep_unit(cmd, unit_word)?;
        let arg = match num.strip_prefix(b":") {
            Some(v) => SleepArg::Var(VarRef::new(v)),
            None => SleepArg::Const(num),
        };
        Ok(CommandKind::Sleep(SleepSpec {
            cmd: cmd.words[0].text.clone(),
            arg,
            unit,
        }))
    }

    /// The unit of a `\sleep` (seconds without one); `unit_word` is its text and
    /// buffer offset.
    fn sleep_unit(
        &self,
        cmd: &MetaWords,
        unit_word: Option<(Vec<u8>, usize)>,
    ) -> Result<SleepUnit, LoadError> {
        Ok(match &unit_word {
            None => SleepUnit::S,
            Some((u, off)) => match u.to_ascii_lowercase().as_slice() {
                b"us" => SleepUnit::Us,
                b"ms" => SleepUnit::Ms,
                b"s" => SleepUnit::S,
                _ => {
                    return Err(self.word_err(
                        cmd,
                        "unrecognized time unit, must be us, ms or s",
                        Some(u.clone()),
                        Some(off - cmd.start),
                    ));
                }
            },
        })
    }

    /// `\setshell var command [args...]`.
    fn setshell_command(&self, cmd: &MetaWords) -> Result<CommandKind, LoadError> {
        if cmd.words.len() < 3 {
            return Err(self.word_err(cmd, "missing argument", None, None));
        }
        Ok(CommandKind::SetShell {
            var: VarRef::new(&cmd.words[1].text),
            args: cmd.words[2..].iter().map(|w| w.text.clone()).collect(),
        })
    }

    /// `\shell command [args...]`.
    fn shell_command(&self, cmd: &MetaWords) -> Result<CommandKind, LoadError> {
        if cmd.words.len() < 2 {
            return Err(self.word_err(cmd, "missing command", None, None));
        }
        Ok(CommandKind::Shell {
            args: cmd.words[1..].iter().map(|w| w.text.clone()).collect(),
        })
    }

    /// The commands without arguments: `\else`, `\endif` and the pipeline
    /// commands (`meta` says which).
    fn no_argument_command(&self, cmd: &MetaWords, meta: Meta) -> Result<CommandKind, LoadError> {
        if cmd.words.len() != 1 {
            return Err(self.word_err(cmd, "unexpected argument", None, None));
        }
        Ok(match meta {
            Meta::Else => CommandKind::Else,
            Meta::EndIf => CommandKind::EndIf,
            Meta::StartPipeline => CommandKind::StartPipeline,
            Meta::EndPipeline => CommandKind::EndPipeline,
            _ => CommandKind::SyncPipeline,
        })
    }

    /// `\gset [prefix]` or `\aset [prefix]` (`meta` says which), merged into the
    /// SQL command before it by the caller.
    fn gset_command(&self, cmd: &MetaWords, meta: Meta) -> Result<Parsed, LoadError> {
        if cmd.words.len() > 2 {
            return Err(self.word_err(cmd, "too many arguments", None, None));
        }
        let kind = if meta == Meta::Gset {
            GsetKind::Gset
        } else {
            GsetKind::Aset
        };
        let prefix = cmd.words.get(1).map(|w| w.text.clone()).unwrap_or_default();
        Ok(Parsed::Gset(kind, prefix))
    }
}

/// A meta command that takes words, as read up to the end of its line.
struct MetaWords {
    /// Buffer offset of the backslash.
    start: usize,
    /// 1-based line number of the backslash.
    line: usize,
    /// The command's text from the backslash (for messages and the `-r` report).
    first_line: Vec<u8>,
    /// The words, the command word first.
    words: Vec<Word>,
    /// The words as pgbench keeps them in argv (`\sleep` may add its unit).
    argv: Vec<Vec<u8>>,
}

impl MetaWords {
    /// The command of kind `kind` these words make.
    fn into_command(self, kind: CommandKind) -> Command {
        Command {
            kind,
            line: self.line,
            first_line: self.first_line,
            argv: self.argv,
            cond: None,
        }
    }
}

/// Where the optional sign and the digits that open `word` end, and whether
/// there was at least one digit (how pgbench splits `\sleep 10ms`).
fn leading_integer(word: &[u8]) -> (usize, bool) {
    let mut i = 0;
    if i < word.len() && (word[i] == b'+' || word[i] == b'-') {
        i += 1;
    }
    let have_digit = i < word.len() && word[i].is_ascii_digit();
    while i < word.len() && word[i].is_ascii_digit() {
        i += 1;
    }
    (i, have_digit)
}

/// Load a script from its text, taken as bytes as pgbench takes it (no encoding:
/// a Latin-1 script keeps its bytes in SQL text, meta-command words and echoed
/// lines). `source_name` is what pgbench shows in messages and reports (the file
/// name as given, bytes too, `-` for standard input, or the builtin's description);
/// it becomes the script's `desc`.
///
/// pgbench reads a script file into a C string before parsing it, so its script
/// ends at the first NUL byte: whatever follows one is ignored here too (for files,
/// standard input and every weight alike), even inside a quoted string or a
/// meta-command line.
pub fn load_script(
    source_name: impl AsRef<[u8]>,
    text: impl AsRef<[u8]>,
    weight: u32,
) -> Result<Script, LoadError> {
    let source_name = source_name.as_ref();
    let ld = Loader::new(source_name, c_string(text.as_ref()));
    let mut commands: Vec<Command> = Vec::new();
    let mut sc = SqlScanner::new(ld.buf);
    loop {
        let chunk = sc.scan();
        if let Some(first) = chunk.first {
            let t = skip_sql_comments(&chunk.text);
            if !t.is_empty() {
                let lead = chunk.text.len() - t.len();
                let line = ld.lineno(first + lead);
                let sql = SqlCommand::new(t.to_vec(), chunk.compound);
                commands.push(Command {
                    first_line: sql_first_line(&sql.text),
                    kind: CommandKind::Sql(sql),
                    line,
                    argv: Vec::new(),
                    cond: None,
                });
            }
        }
        match chunk.stop {
            Stop::Eof => break,
            Stop::Semicolon => {}
            Stop::Backslash => {
                let start = sc.pos - 1;
                let mut pos = sc.pos;
                let parsed = ld.backslash(start, &mut pos)?;
                sc.pos = pos;
                match parsed {
                    None => {}
                    Some(Parsed::Cmd(c)) => commands.push(c),
                    Some(Parsed::Gset(kind, prefix)) => {
                        let line = ld.lineno(start);
                        let gerr = |detail: Option<Vec<u8>>| {
                            LoadError::Syntax(Box::new(SyntaxError {
                                source_name: source_name.to_vec(),
                                line,
                                message: "\\gset must follow an SQL command".to_string(),
                                detail,
                                command: None,
                                text: None,
                                column: None,
                            }))
                        };
                        let Some(prev) = commands.last_mut() else {
                            return Err(gerr(None));
                        };
                        match &mut prev.kind {
                            CommandKind::Sql(s) if s.gset.is_none() => {
                                s.gset = Some((kind, prefix))
                            }
                            CommandKind::Sql(_) => return Err(gerr(None)),
                            _ => return Err(gerr(Some(prev.first_line.clone()))),
                        }
                    }
                }
            }
        }
    }
    if commands.is_empty() {
        return Err(LoadError::Empty(source_name.to_vec()));
    }
    check_conditionals(source_name, &mut commands)?;
    Ok(Script {
        desc: source_name.to_vec(),
        weight,
        commands,
    })
}

/// The text a C string holding `bytes` has: up to the first NUL byte.
fn c_string(bytes: &[u8]) -> &[u8] {
    match bytes.iter().position(|&b| b == 0) {
        Some(end) => &bytes[..end],
        None => bytes,
    }
}

/// pgbench's `skip_sql_comments`: leading whitespace and whole `--` lines.
fn skip_sql_comments(s: &[u8]) -> &[u8] {
    let mut t = s;
    loop {
        let lead = t
            .iter()
            .position(|&c| !matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c))
            .unwrap_or(t.len());
        let trimmed = &t[lead..];
        if let Some(rest) = trimmed.strip_prefix(b"--") {
            match rest.iter().position(|&c| c == b'\n') {
                Some(i) => t = &rest[i + 1..],
                None => return b"",
            }
        } else {
            return trimmed;
        }
    }
}

fn check_conditionals(desc: &[u8], cmds: &mut [Command]) -> Result<(), LoadError> {
    // Stack of (index of \if, index of last branch command, seen \else).
    let mut stack: Vec<(usize, usize, bool)> = Vec::new();
    let cerr = |n: usize, m: &str| LoadError::Condition {
        source_name: desc.to_vec(),
        command: n,
        message: m.to_string(),
    };
    let mut links: Vec<(usize, usize)> = Vec::new(); // (branch cmd, next branch cmd)
    let mut ends: Vec<(Vec<usize>, usize)> = Vec::new();
    let mut members: Vec<Vec<usize>> = Vec::new();
    for (i, cmd) in cmds.iter().enumerate() {
        match cmd.kind {
            CommandKind::If(_) => {
                stack.push((i, i, false));
                members.push(vec![i]);
            }
            CommandKind::Elif(_) | CommandKind::Else => {
                let is_else = matches!(cmd.kind, CommandKind::Else);
                let what = if is_else { "\\else" } else { "\\elif" };
                let Some(top) = stack.last_mut() else {
                    return Err(cerr(i + 1, &format!("{what} without matching \\if")));
                };
                if top.2 {
                    return Err(cerr(i + 1, &format!("{what} after \\else")));
                }
                links.push((top.1, i));
                top.1 = i;
                if is_else {
                    top.2 = true;
                }
                if let Some(m) = members.last_mut() {
                    m.push(i);
                }
            }
            CommandKind::EndIf => {
                let Some(top) = stack.pop() else {
                    return Err(cerr(i + 1, "\\endif without matching \\if"));
                };
                links.push((top.1, i));
                ends.push((members.pop().unwrap_or_default(), i));
            }
            _ => {}
        }
    }
    if !stack.is_empty() {
        return Err(cerr(cmds.len() + 1, "\\if without matching \\endif"));
    }
    for (from, to) in links {
        cmds[from].cond = Some(CondJumps {
            next: to,
            endif: to,
        });
    }
    for (mem, endif) in ends {
        for m in mem {
            if let Some(c) = cmds[m].cond.as_mut() {
                c.endif = endif;
            }
        }
    }
    Ok(())
}
