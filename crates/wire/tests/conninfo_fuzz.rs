//! Property tests of the connection-string parser and resolver: any input, keyword/value
//! or URI shaped, is either accepted or rejected with an error, never a panic; an accepted
//! string keeps only known keywords; and accepted keyword/value lists re-parse to the same
//! result when written back with quoting.

use pgrush_wire::conninfo::{ConnectRequest, KEYWORDS, parse_conninfo, resolve};
use proptest::prelude::*;

/// Pieces that steer random strings into the parser's interesting paths.
fn piece() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("postgresql://".to_string()),
        Just("postgres://".to_string()),
        Just("host=".to_string()),
        Just("port=".to_string()),
        Just("dbname=".to_string()),
        Just("sslmode=".to_string()),
        Just("=".to_string()),
        Just("'".to_string()),
        Just("\\".to_string()),
        Just(" ".to_string()),
        Just("@".to_string()),
        Just(":".to_string()),
        Just("/".to_string()),
        Just("?".to_string()),
        Just("&".to_string()),
        Just(",".to_string()),
        Just("[".to_string()),
        Just("]".to_string()),
        Just("%".to_string()),
        Just("%2F".to_string()),
        Just("%00".to_string()),
        "[a-z0-9_.-]{0,8}",
        any::<char>().prop_map(|c| c.to_string()),
    ]
}

fn conninfo_like() -> impl Strategy<Value = String> {
    proptest::collection::vec(piece(), 0..24).prop_map(|v| v.concat())
}

fn quote(value: &str) -> String {
    let escaped = value.replace('\\', "\\\\").replace('\'', "\\'");
    format!("'{escaped}'")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn parse_never_panics_and_keeps_known_keywords(s in conninfo_like()) {
        if let Ok(pairs) = parse_conninfo(&s) {
            for (keyword, _) in &pairs {
                prop_assert!(
                    KEYWORDS.iter().any(|k| k.name == keyword.as_str()),
                    "unknown keyword {keyword} accepted from {s:?}"
                );
            }
        }
    }

    #[test]
    fn accepted_pairs_round_trip(s in conninfo_like()) {
        if let Ok(pairs) = parse_conninfo(&s) {
            let written: Vec<String> = pairs
                .iter()
                .map(|(k, v)| format!("{k}={}", quote(v)))
                .collect();
            let again = parse_conninfo(&written.join(" "));
            prop_assert_eq!(again.ok(), Some(pairs), "from {:?}", s);
        }
    }

    #[test]
    fn resolve_never_panics(s in conninfo_like(), host in proptest::option::of("[a-z/,:0-9]{0,12}"), port in proptest::option::of("[0-9,a]{0,7}")) {
        let request = ConnectRequest {
            dbname: Some(s),
            host,
            port,
            ..Default::default()
        };
        let _ = resolve(&request);
    }
}
