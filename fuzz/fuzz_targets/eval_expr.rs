//! Evaluator: any expression that parses must evaluate to a value or an error,
//! never panic or hang. The first 8 bytes seed the generator.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgrush_script::{CommandKind, EvalContext, Prng, Value, Variables, load_script};

fuzz_target!(|data: &[u8]| {
    if data.len() < 8 {
        return;
    }
    let seed = u64::from_le_bytes(data[..8].try_into().unwrap_or([0; 8]));
    let body = &data[8..];
    if body.contains(&b'\n') {
        return;
    }
    let mut text = b"\\set x ".to_vec();
    text.extend_from_slice(body);
    text.push(b'\n');
    let Ok(script) = load_script("fuzz.sql", &text, 1) else {
        return;
    };
    let mut vars = Variables::new();
    for (name, v) in [
        ("default_seed", Value::Int(seed as i64)),
        ("i", Value::Int(-7)),
        ("d", Value::Double(2.5)),
        ("b", Value::Bool(true)),
        ("n", Value::Null),
    ] {
        let _ = vars.put_value("set", name, v);
    }
    let _ = vars.put_text("option", "s", "1e5");
    let mut rng = Prng::from_seed(seed);
    let mut dbg = Vec::new();
    if let CommandKind::Set { expr, .. } = &script.commands[0].kind {
        let mut ctx = EvalContext {
            vars: &vars,
            rng: &mut rng,
            script: 0,
            command: 0,
            debug_out: &mut dbg,
        };
        let _ = expr.eval(&mut ctx);
    }
});
