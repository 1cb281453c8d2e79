//! Variables: names, interning, per-client storage and pgbench's string typing rules.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use bytes::BufMut;

use crate::error::{EvalError, VarError};
use crate::value::Value;
use pgrush_cconv::{WholeNumber, is_space, strtodouble, strtoint64};

/// Process-wide identifier of a variable name (interned once, O(1) lookups after).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VarId(u32);

impl VarId {
    /// The slot index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

#[derive(Default)]
struct Interner {
    ids: HashMap<Arc<[u8]>, u32>,
    names: Vec<Arc<[u8]>>,
}

fn interner() -> &'static RwLock<Interner> {
    static I: OnceLock<RwLock<Interner>> = OnceLock::new();
    I.get_or_init(|| RwLock::new(Interner::default()))
}

/// Intern a variable name (any bytes; validity is checked separately).
pub fn intern(name: &[u8]) -> VarId {
    if let Ok(g) = interner().read()
        && let Some(&id) = g.ids.get(name)
    {
        return VarId(id);
    }
    let mut g = match interner().write() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    if let Some(&id) = g.ids.get(name) {
        return VarId(id);
    }
    let id = g.names.len() as u32;
    let arc: Arc<[u8]> = Arc::from(name);
    g.names.push(arc.clone());
    g.ids.insert(arc, id);
    VarId(id)
}

/// Look a name up without interning it.
pub fn lookup_id(name: &[u8]) -> Option<VarId> {
    let g = match interner().read() {
        Ok(g) => g,
        Err(p) => p.into_inner(),
    };
    g.ids.get(name).map(|&i| VarId(i))
}

/// A reference to a variable, resolved at load time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VarRef {
    /// Interned identifier.
    pub id: VarId,
    /// The name as written (without the colon): the script's bytes.
    pub name: Arc<[u8]>,
}

impl VarRef {
    /// Resolve a name.
    pub fn new(name: impl AsRef<[u8]>) -> VarRef {
        let name = name.as_ref();
        VarRef {
            id: intern(name),
            name: Arc::from(name),
        }
    }
}

/// pgbench's variable name rule: `[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*`
/// (any byte with the high bit set counts as a letter, whatever the encoding).
pub fn valid_variable_name(name: impl AsRef<[u8]>) -> bool {
    let b = name.as_ref();
    match b.first() {
        None => false,
        Some(&c) if c >= 0x80 || c.is_ascii_alphabetic() || c == b'_' => b[1..]
            .iter()
            .all(|&c| c >= 0x80 || c.is_ascii_alphanumeric() || c == b'_'),
        Some(_) => false,
    }
}

/// One variable's content: the text it was given, or a typed value.
#[derive(Debug, Clone, PartialEq)]
pub enum VarValue {
    /// Text (from `-D`, `\gset`, `\aset`) as bytes, typed on use.
    Text(Vec<u8>),
    /// A typed value (from `\set`, `\setshell` and the automatic variables).
    Value(Value),
}

impl VarValue {
    /// The typed value, converting text with pgbench's rules.
    pub fn typed(&self, name: &[u8]) -> Result<Value, EvalError> {
        match self {
            VarValue::Value(v) => Ok(*v),
            VarValue::Text(s) => text_to_value(name, s),
        }
    }

    /// Append the string form used for SQL substitution and shell arguments (to a
    /// `Vec<u8>`, or a connection's output buffer).
    #[inline]
    pub fn write_text<B: BufMut>(&self, out: &mut B) {
        match self {
            VarValue::Text(s) => out.put_slice(s),
            VarValue::Value(v) => v.write_text(out),
        }
    }
}

/// Convert a variable's text to a typed value as pgbench does on first use.
pub fn text_to_value(name: &[u8], s: &[u8]) -> Result<Value, EvalError> {
    if s.is_empty() {
        return Err(EvalError::Silent);
    }
    let lower = s.to_ascii_lowercase();
    let n = lower.len();
    let prefix_of = |word: &[u8]| n <= word.len() && word[..n] == *lower;
    if lower == b"null" {
        return Ok(Value::Null);
    }
    if prefix_of(b"true") || prefix_of(b"yes") || lower == b"on" {
        return Ok(Value::Bool(true));
    }
    if prefix_of(b"false") || prefix_of(b"no") || lower == b"off" || lower == b"of" {
        return Ok(Value::Bool(false));
    }
    if is_an_int(s) {
        return match strtoint64(s) {
            WholeNumber::Ok(i) => Ok(Value::Int(i)),
            WholeNumber::Range => Err(EvalError::BigintRange(lossy(s))),
            WholeNumber::Syntax => Err(EvalError::BigintSyntax(lossy(s))),
        };
    }
    match strtodouble(s) {
        WholeNumber::Ok(d) => Ok(Value::Double(d)),
        _ => Err(EvalError::MalformedVariable {
            name: name.to_vec(),
            value: s.to_vec(),
        }),
    }
}

/// Text of bytes known to be ASCII here (digits, signs and spaces).
fn lossy(s: &[u8]) -> String {
    String::from_utf8_lossy(s).into_owned()
}

fn is_an_int(b: &[u8]) -> bool {
    let mut i = 0;
    while i < b.len() && is_space(b[i]) {
        i += 1;
    }
    if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
        i += 1;
    }
    if i < b.len() && !b[i].is_ascii_digit() {
        return false;
    }
    while i < b.len() && b[i].is_ascii_digit() {
        i += 1;
    }
    i == b.len()
}

/// One client's variables, indexed by [`VarId`].
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Variables {
    slots: Vec<Option<VarValue>>,
}

impl Variables {
    /// No variables.
    pub fn new() -> Variables {
        Variables::default()
    }

    /// The variable's content, if defined.
    #[inline]
    pub fn get(&self, id: VarId) -> Option<&VarValue> {
        self.slots.get(id.index()).and_then(|s| s.as_ref())
    }

    /// Look a variable up by name.
    pub fn get_by_name(&self, name: impl AsRef<[u8]>) -> Option<&VarValue> {
        lookup_id(name.as_ref()).and_then(|id| self.get(id))
    }

    /// Whether a variable is defined.
    pub fn is_defined(&self, name: impl AsRef<[u8]>) -> bool {
        self.get_by_name(name).is_some()
    }

    /// Store without any name check (the name behind `id` must be valid).
    #[inline]
    pub fn set(&mut self, id: VarId, v: VarValue) {
        let i = id.index();
        if i >= self.slots.len() {
            self.slots.resize(i + 1, None);
        }
        self.slots[i] = Some(v);
    }

    /// Store a typed value under `name`, validating the name; `context` prefixes the
    /// error (`set`, `setshell`, `startup`).
    pub fn put_value(
        &mut self,
        context: &str,
        name: impl AsRef<[u8]>,
        v: Value,
    ) -> Result<(), VarError> {
        self.put(context, name.as_ref(), VarValue::Value(v))
    }

    /// Store a typed value in the variable `r` resolved at load time: O(1), no lock, no
    /// hashing once the variable exists. The name is validated (with pgbench's
    /// `CONTEXT: invalid variable name` error) only when the variable is created.
    #[inline]
    pub fn set_value(&mut self, context: &str, r: &VarRef, v: Value) -> Result<(), VarError> {
        match self.slots.get_mut(r.id.index()) {
            // Overwriting a value (the common `\set` in a loop) has nothing to drop.
            Some(Some(VarValue::Value(old))) => {
                *old = v;
                Ok(())
            }
            Some(slot @ Some(_)) => {
                *slot = Some(VarValue::Value(v));
                Ok(())
            }
            _ => {
                if !valid_variable_name(&r.name) {
                    return Err(VarError::InvalidName {
                        context: context.to_string(),
                        name: r.name.to_vec(),
                    });
                }
                self.set(r.id, VarValue::Value(v));
                Ok(())
            }
        }
    }

    /// Store text under `name` (`-D` uses context `option`, `\gset` `gset`, `\aset` `aset`).
    /// Both are bytes as pgbench keeps them (C strings, no encoding).
    pub fn put_text(
        &mut self,
        context: &str,
        name: impl AsRef<[u8]>,
        text: impl AsRef<[u8]>,
    ) -> Result<(), VarError> {
        let (name, text) = (name.as_ref(), text.as_ref());
        // Overwriting a text variable reuses its buffer (`\gset` in a loop allocates nothing).
        if let Some(id) = lookup_id(name)
            && let Some(Some(VarValue::Text(old))) = self.slots.get_mut(id.index())
        {
            old.clear();
            old.extend_from_slice(text);
            return Ok(());
        }
        self.put(context, name, VarValue::Text(text.to_vec()))
    }

    fn put(&mut self, context: &str, name: &[u8], v: VarValue) -> Result<(), VarError> {
        let id = match lookup_id(name) {
            Some(id) if self.get(id).is_some() => id,
            _ => {
                if !valid_variable_name(name) {
                    return Err(VarError::InvalidName {
                        context: context.to_string(),
                        name: name.to_vec(),
                    });
                }
                intern(name)
            }
        };
        self.set(id, v);
        Ok(())
    }

    /// Typed value of a variable for expression evaluation.
    pub fn value_of(&self, r: &VarRef) -> Result<Value, EvalError> {
        match self.get(r.id) {
            Some(v) => v.typed(&r.name),
            None => Err(EvalError::UndefinedVariable(r.name.to_vec())),
        }
    }

    /// Iterate over defined variables as (name, content).
    pub fn iter(&self) -> impl Iterator<Item = (Arc<[u8]>, &VarValue)> + '_ {
        let g = match interner().read() {
            Ok(g) => g.names.clone(),
            Err(p) => p.into_inner().names.clone(),
        };
        self.slots
            .iter()
            .enumerate()
            .filter_map(move |(i, s)| s.as_ref().map(|v| (g[i].clone(), v)))
    }
}

/// Parse a `-D NAME=VALUE` argument (bytes, as the command line gives them):
/// returns (name, value) or pgbench's error.
pub fn parse_define(arg: &[u8]) -> Result<(Vec<u8>, Vec<u8>), VarError> {
    let split = arg
        .iter()
        .position(|&c| c == b'=')
        .map(|i| (&arg[..i], &arg[i + 1..]));
    match split {
        Some((name, value)) if !name.is_empty() && !value.is_empty() => {
            if !valid_variable_name(name) {
                return Err(VarError::InvalidName {
                    context: "option".to_string(),
                    name: name.to_vec(),
                });
            }
            Ok((name.to_vec(), value.to_vec()))
        }
        _ => Err(VarError::InvalidDefinition(arg.to_vec())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RawMessage;

    #[test]
    fn typing_rules() {
        let t = |s: &str| text_to_value(b"v", s.as_bytes());
        assert_eq!(t("true"), Ok(Value::Bool(true)));
        assert_eq!(t("y"), Ok(Value::Bool(true)));
        assert_eq!(t("of"), Ok(Value::Bool(false)));
        assert_eq!(t("NULL"), Ok(Value::Null));
        assert_eq!(t(" 12"), Ok(Value::Int(12)));
        assert_eq!(t("0x10"), Ok(Value::Double(16.0)));
        assert!(matches!(t("o"), Err(EvalError::MalformedVariable { .. })));
        assert!(matches!(
            t("1.5 "),
            Err(EvalError::MalformedVariable { .. })
        ));
        assert!(matches!(
            t("99999999999999999999"),
            Err(EvalError::BigintRange(_))
        ));
        assert_eq!(t(""), Err(EvalError::Silent));
    }

    #[test]
    fn define_parsing() {
        assert_eq!(parse_define(b"a=b=c"), Ok((b"a".to_vec(), b"b=c".to_vec())));
        assert!(matches!(
            parse_define(b"=1"),
            Err(VarError::InvalidDefinition(_))
        ));
        assert!(matches!(
            parse_define(b"x="),
            Err(VarError::InvalidDefinition(_))
        ));
        assert_eq!(
            parse_define(b"1x=2").unwrap_err().to_string(),
            "option: invalid variable name: \"1x\""
        );
        // Latin-1 bytes: a valid name, the value kept as is.
        assert_eq!(
            parse_define(b"caf\xe9=\xe9t\xe9"),
            Ok((b"caf\xe9".to_vec(), b"\xe9t\xe9".to_vec()))
        );
        assert_eq!(
            parse_define(b"1\xe9=x").unwrap_err().to_bytes(),
            b"option: invalid variable name: \"1\xe9\"".to_vec()
        );
    }

    #[test]
    fn set_value_by_ref() {
        let mut vars = Variables::new();
        let r = VarRef::new("set_value_ok");
        assert_eq!(vars.set_value("set", &r, Value::Int(1)), Ok(()));
        assert_eq!(vars.set_value("set", &r, Value::Int(2)), Ok(()));
        assert_eq!(vars.value_of(&r), Ok(Value::Int(2)));
        assert_eq!(
            vars.get_by_name("set_value_ok"),
            Some(&VarValue::Value(Value::Int(2)))
        );
        // Overwrites text given by -D / \gset.
        vars.put_text("gset", "set_value_txt", "abc").unwrap();
        let t = VarRef::new("set_value_txt");
        vars.set_value("set", &t, Value::Double(1.5)).unwrap();
        assert_eq!(vars.value_of(&t), Ok(Value::Double(1.5)));
        // Invalid names fail every time, with pgbench's message.
        let bad = VarRef::new("1bad");
        for _ in 0..2 {
            assert_eq!(
                vars.set_value("set", &bad, Value::Int(1))
                    .unwrap_err()
                    .to_string(),
                "set: invalid variable name: \"1bad\""
            );
        }
        assert!(vars.get(bad.id).is_none());
    }

    #[test]
    fn names() {
        assert!(valid_variable_name("_a1"));
        assert!(valid_variable_name("é"));
        assert!(valid_variable_name(b"\xe9t\xe9"));
        assert!(!valid_variable_name(b"1\xe9"));
        assert!(!valid_variable_name("?column?"));
        assert!(!valid_variable_name(""));
    }
}
