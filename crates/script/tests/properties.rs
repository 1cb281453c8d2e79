//! Property tests (stable-toolchain fuzzing): loading and evaluating arbitrary input
//! never panics, errors render, and a few round trips hold.

use pgrush_script::format_g15;
use pgrush_script::{
    CommandKind, EvalContext, Prng, RawMessage, Value, Variables, load_script, parse_define,
    parse_script_weight, permute,
};
use proptest::prelude::*;

fn script_text() -> impl Strategy<Value = String> {
    // Mix of script-ish fragments and random characters.
    let frag = prop_oneof![
        Just("\\set x ".to_string()),
        Just("\\if ".to_string()),
        Just("\\elif ".to_string()),
        Just("\\else\n".to_string()),
        Just("\\endif\n".to_string()),
        Just("\\sleep ".to_string()),
        Just("\\gset ".to_string()),
        Just("\\aset".to_string()),
        Just("\\setshell v echo ".to_string()),
        Just("\\shell ".to_string()),
        Just("\\startpipeline\n".to_string()),
        Just("SELECT :a, ':b', $$x;y$$ ;".to_string()),
        Just("/* c /* d */".to_string()),
        Just("-- c\n".to_string()),
        Just("\\;".to_string()),
        Just("random(1, 10) + ".to_string()),
        Just("case when ".to_string()),
        Just("9223372036854775808".to_string()),
        Just("\\\n".to_string()),
        Just("\n".to_string()),
        "[ -~\n\t]{0,12}",
        any::<char>().prop_map(|c| c.to_string()),
    ];
    prop::collection::vec(frag, 0..24).prop_map(|v| v.concat())
}

fn expr_text() -> impl Strategy<Value = String> {
    let tok = prop_oneof![
        "[0-9]{1,20}",
        "[0-9]{1,3}\\.[0-9]{0,3}(e[-+]?[0-9]{1,3})?",
        Just(":i".to_string()),
        Just(":d".to_string()),
        Just(":b".to_string()),
        Just(":n".to_string()),
        Just(":s".to_string()),
        Just(":undefined".to_string()),
        prop::sample::select(vec![
            "+",
            "-",
            "*",
            "/",
            "%",
            "(",
            ")",
            ",",
            "&",
            "|",
            "#",
            "~",
            "<<",
            ">>",
            "=",
            "<>",
            "!=",
            "<",
            "<=",
            ">",
            ">=",
            "and",
            "or",
            "not",
            "is",
            "isnull",
            "notnull",
            "null",
            "true",
            "false",
            "case",
            "when",
            "then",
            "else",
            "end",
            "abs(",
            "least(",
            "greatest(",
            "debug(",
            "pi(",
            "sqrt(",
            "ln(",
            "exp(",
            "int(",
            "double(",
            "random(",
            "random_gaussian(",
            "random_exponential(",
            "random_zipfian(",
            "pow(",
            "hash(",
            "hash_fnv1a(",
            "permute(",
            "mod(",
            "9223372036854775807",
            "-9223372036854775808",
        ])
        .prop_map(str::to_string),
    ];
    prop::collection::vec(tok, 1..20).prop_map(|v| v.join(" "))
}

fn vars() -> Variables {
    let mut v = Variables::new();
    v.put_value("set", "i", Value::Int(-7)).unwrap();
    v.put_value("set", "d", Value::Double(2.5)).unwrap();
    v.put_value("set", "b", Value::Bool(true)).unwrap();
    v.put_value("set", "n", Value::Null).unwrap();
    v.put_value("set", "default_seed", Value::Int(42)).unwrap();
    v.put_text("option", "s", "1e5").unwrap();
    v
}

proptest! {
    // 256 cases by default; PROPTEST_CASES=N runs more.

    #[test]
    fn loading_never_panics(text in script_text()) {
        match load_script("p.sql", &text, 1) {
            Ok(s) => {
                prop_assert!(!s.commands.is_empty());
                let v = Variables::new();
                for c in &s.commands {
                    if let CommandKind::Sql(q) = &c.kind {
                        let mut out = Vec::new();
                        q.write_simple(&v, &mut out);
                        // nothing defined: the text is unchanged
                        prop_assert_eq!(&out, &q.text);
                        let dollars = |t: &[u8]| t.iter().filter(|&&c| c == b'$').count();
                        prop_assert_eq!(q.params().len(), dollars(&q.extended_text)
                            - dollars(&q.text));
                    }
                    if let Some(j) = c.cond {
                        prop_assert!(j.next < s.commands.len() && j.endif < s.commands.len());
                        prop_assert!(matches!(s.commands[j.endif].kind, CommandKind::EndIf));
                    }
                }
            }
            Err(e) => prop_assert!(!e.to_string().is_empty()),
        }
    }

    #[test]
    fn evaluation_never_panics(e in expr_text(), seed in any::<u64>()) {
        let text = format!("\\set x {e}\n");
        if let Ok(s) = load_script("p.sql", &text, 1) {
            let v = vars();
            let mut rng = Prng::from_seed(seed);
            let mut dbg = Vec::new();
            if let CommandKind::Set { expr, .. } = &s.commands[0].kind {
                let mut ctx = EvalContext { vars: &v, rng: &mut rng, script: 0, command: 0, debug_out: &mut dbg };
                if let Err(err) = expr.eval(&mut ctx) {
                    let _ = err.to_string();
                }
            }
        }
    }

    #[test]
    fn integers_round_trip(i in any::<i64>()) {
        let text = if i == i64::MIN { "\\set x -9223372036854775808\n".to_string() } else { format!("\\set x {i}\n") };
        let s = load_script("p.sql", &text, 1).unwrap();
        let v = Variables::new();
        let mut rng = Prng::from_seed(0);
        let mut dbg = Vec::new();
        let CommandKind::Set { expr, .. } = &s.commands[0].kind else { panic!("set") };
        let mut ctx = EvalContext { vars: &v, rng: &mut rng, script: 0, command: 0, debug_out: &mut dbg };
        prop_assert_eq!(expr.eval(&mut ctx).unwrap(), Value::Int(i));
        prop_assert_eq!(Value::Int(i).to_text(), i.to_string());
    }

    #[test]
    fn g15_round_trips_to_15_digits(d in any::<f64>()) {
        let s = format_g15(d);
        if d.is_finite() {
            let back: f64 = s.parse().unwrap();
            let rel = if d == 0.0 { back.abs() } else { ((back - d) / d).abs() };
            prop_assert!(rel < 1e-14, "{d} -> {s}");
        }
    }

    #[test]
    fn permute_is_a_permutation(size in 1i64..200, seed in any::<i64>()) {
        let mut seen = vec![false; size as usize];
        for v in 0..size {
            let p = permute(v, size, seed);
            prop_assert!((0..size).contains(&p));
            prop_assert!(!seen[p as usize]);
            seen[p as usize] = true;
        }
    }

    #[test]
    fn random_stays_in_range(lb in -1000i64..1000, span in 0i64..1000, seed in any::<u64>()) {
        let mut rng = Prng::from_seed(seed);
        let ub = lb + span;
        for _ in 0..20 {
            let r = rng.random(lb, ub);
            prop_assert!(r >= lb && r <= ub);
            let e = rng.exponential(lb, ub, 1.5);
            prop_assert!(e >= lb && e <= ub);
            let g = rng.gaussian(lb, ub, 2.5);
            prop_assert!(g >= lb && g <= ub);
            let z = rng.zipfian(lb, ub, 1.5);
            prop_assert!(z >= lb && z <= ub);
        }
    }

    #[test]
    fn weight_specs_never_panic(s in "[a-z@0-9 +-]{0,12}") {
        let _ = parse_script_weight(&s);
        let _ = parse_define(s.as_bytes());
    }

    #[test]
    fn loading_bytes_never_panics(text in proptest::collection::vec(any::<u8>(), 0..160)) {
        // Any bytes (not only UTF-8): SQL text is kept byte for byte, so every SQL
        // command's text is a slice of the input (unless `\:`/`\;` escapes were dropped).
        match load_script("p.sql", &text, 1) {
            Ok(s) => {
                for c in &s.commands {
                    if let CommandKind::Sql(q) = &c.kind {
                        let escapes = text.windows(2).any(|w| w == b"\\:" || w == b"\\;");
                        prop_assert!(escapes
                            || text.windows(q.text.len()).any(|w| w == &q.text[..]));
                    }
                }
            }
            Err(e) => prop_assert!(!e.to_bytes().is_empty()),
        }
    }
}
