use super::*;
use serde_json::json;

fn yaml(text: &str) -> Result<Value, ParseError> {
    parse(text, Format::Yaml, &Limits::default())
}

fn json_text(text: &str) -> Result<Value, ParseError> {
    parse(text, Format::Json, &Limits::default())
}

fn err(r: Result<Value, ParseError>) -> String {
    r.unwrap_err().to_string()
}

#[test]
fn plain_scalars_follow_the_yaml_1_2_core_schema() {
    let v = yaml(
        "a: 12\nb: -3\nc: 0x1F\nd: 0o17\ne: 0b101\nf: 1_000\ng: 2.5\nh: 1e3\ni: .5\nj: true\nk: False\n\
         l: ~\nm: null\nn:\no: yes\np: on\nq: 2001-12-14\nr: 1:30\ns: 010\nt: 2ms\nu: '12'\nv: \"true\"\n",
    )
    .unwrap();
    assert_eq!(
        v,
        json!({"a": 12, "b": -3, "c": 31, "d": 15, "e": 5, "f": 1000, "g": 2.5, "h": 1000.0, "i": 0.5,
               "j": true, "k": false, "l": null, "m": null, "n": null,
               // YAML 1.1's booleans, dates and sexagesimals are text; so is an integer with a
               // leading zero, which YAML 1.1 and 1.2 read as different numbers.
               "o": "yes", "p": "on", "q": "2001-12-14", "r": "1:30", "s": "010",
               "t": "2ms", "u": "12", "v": "true"})
    );
    assert_eq!(v["a"].as_u64(), Some(12), "integers stay integers");
}

#[test]
fn numbers_an_engine_cannot_use_are_refused_where_they_stand() {
    assert_eq!(err(yaml("name: x\nw: .inf\n")), "2:4: '.inf' is not a finite number");
    assert_eq!(err(yaml("w: -.NaN\n")), "1:4: '-.NaN' is not a finite number");
    let digits = "9".repeat(4400);
    assert_eq!(
        err(yaml(&format!("p: {digits}\n"))),
        "1:4: the number 999999999999999999999999... is too large (at most 64 bits)"
    );
    assert_eq!(err(yaml("p: 1e400\n")), "1:4: the number 1e400 is too large (at most 64 bits)");
    assert!(err(yaml("p: 18446744073709551616\n")).contains("too large"));
    assert_eq!(
        yaml("p: 18446744073709551615\nq: -9223372036854775808\n").unwrap(),
        json!({"p": u64::MAX, "q": i64::MIN})
    );
    let e = err(json_text(&format!("{{\"p\": {digits}}}")));
    assert!(e.starts_with("1:4406: not valid JSON: number out of range"), "{e}");
}

#[test]
fn tags_are_checked_and_only_the_core_schema_is_allowed() {
    assert_eq!(
        yaml("a: !!str 12\nb: !!int '7'\nc: !!float 2\nd: !!timestamp 2001-12-14\ne: ! 5\n").unwrap(),
        json!({"a": "12", "b": 7, "c": 2, "d": "2001-12-14", "e": "5"})
    );
    assert_eq!(
        err(yaml("tasks:\n- name: t\n  !!int period: 15ms\n")),
        "3:3: 'period' is not an integer (tagged !!int)"
    );
    assert_eq!(err(yaml("name: !!float abc\n")), "1:7: 'abc' is not a number (tagged !!float)");
    assert_eq!(
        err(yaml("links:\n- {from: ES1, !!timestamp to: SW1}\n")),
        "2:15: 'to' is not a date (tagged !!timestamp)"
    );
    assert_eq!(
        err(yaml("x: !!python/object/apply:os.system ['ls']\n")),
        "1:4: the tag !!python/object/apply:os.system is not allowed: a description holds text, numbers, \
         true/false, lists and mappings"
    );
    assert!(err(yaml("x: !custom 3\n")).contains("the tag !custom is not allowed"));
    assert!(err(yaml("x: !!binary aGVsbG8=\n")).contains("the tag !!binary is not allowed"));
    assert!(err(yaml("x: !!set {a, b}\n")).contains("the tag !!set is not allowed"));
    assert_eq!(err(yaml("x: !!map [1]\n")), "1:4: the tag !!map does not fit a list");
    assert_eq!(err(yaml("x: !!int 010\n")), "1:4: '010' is not an integer (tagged !!int)");
}

#[test]
fn a_key_given_twice_is_refused() {
    assert_eq!(err(yaml("name: a\nlinks: []\nname: b\n")), "3:1: key 'name' is given twice in one mapping");
    assert_eq!(
        err(json_text("{\"name\": \"a\",\n \"name\": \"b\"}")),
        "2:7: key 'name' is given twice in one mapping"
    );
}

#[test]
fn merge_keys_read_as_yaml_1_1_did() {
    let v = yaml(
        "base: &b {rate: 1Mbps, plane: A}\nother: &o {plane: B, from: X}\n\
         link: {<<: [*b, *o], from: Y}\n",
    )
    .unwrap();
    assert_eq!(v["link"], json!({"rate": "1Mbps", "plane": "A", "from": "Y"}));
    assert_eq!(err(yaml("a: {<<: 3}\n")), "1:9: a merge key '<<' takes a mapping or a list of mappings");
    // Quoted, it is an ordinary key.
    assert_eq!(yaml("a: {'<<': 3}\n").unwrap(), json!({"a": {"<<": 3}}));
}

#[test]
fn alias_bombs_stop_at_the_alias_limit() {
    // 9 levels of 9 references: 9^9 lists of "lol" if expanded.
    let mut text = String::from("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    for i in 1..10 {
        let refs = vec![format!("*a{}", i - 1); 9].join(", ");
        text.push_str(&format!("a{i}: &a{i} [{refs}]\n"));
    }
    let e = err(yaml(&text));
    assert!(
        e.ends_with(
            "aliases copy more values than the limit of 1,000,000 (raise it with --limit aliases=N or \
         RTNETLAB_LIMITS=aliases=N)"
        ),
        "{e}"
    );
    // A lower limit stops it sooner; a modest use of aliases passes.
    let tight = Limits { aliases: 50, ..Limits::default() };
    assert!(parse(&text, Format::Yaml, &tight).unwrap_err().message.contains("limit of 50"));
    let shared = "d: &d [ES2, ES3]\nf: [{to: *d}, {to: *d}]\n";
    assert_eq!(yaml(shared).unwrap()["f"][1]["to"], json!(["ES2", "ES3"]));
    assert_eq!(
        err(yaml("a: &a [*a]\n")),
        "1:8: an alias may not refer to a list or mapping that contains it"
    );
}

#[test]
fn nesting_stops_at_the_depth_limit_in_both_formats() {
    let deep = |n: usize| format!("{{\"d\": {}{}}}", "[".repeat(n), "]".repeat(n));
    let msg = "lists and mappings nest deeper than the limit of 64 levels (raise it with --limit depth=N or \
               RTNETLAB_LIMITS=depth=N)";
    // The top mapping is level 1: 63 lists inside it pass, 64 do not.
    assert!(json_text(&deep(63)).is_ok());
    // serde_json places it at the 64th '[' or just after it.
    for n in [64, 100_000] {
        let e = err(json_text(&deep(n)));
        assert!(e == format!("1:70: {msg}") || e == format!("1:71: {msg}"), "{e}");
    }
    let ydeep = |n: usize| format!("d: {}{}\n", "[".repeat(n), "]".repeat(n));
    assert!(yaml(&ydeep(63)).is_ok());
    assert_eq!(err(yaml(&ydeep(64))), format!("1:67: {msg}"));
    // Flow style deeper than 255 levels stops in the YAML scanner, before any value is built.
    assert_eq!(
        err(yaml(&ydeep(700))),
        "1:259: lists and mappings nest deeper than YAML's flow style allows here (255 levels)"
    );
    // The deepest limit allowed is read and dropped on a test thread's stack (2 MB).
    let limits = Limits { depth: super::super::limits::MAX_DEPTH, ..Limits::default() };
    let n = super::super::limits::MAX_DEPTH as usize - 1;
    assert!(parse(&deep(n), Format::Json, &limits).is_ok());
    let block = format!("d:\n{}x\n", "- ".repeat(n - 1));
    assert!(parse(&block, Format::Yaml, &limits).is_ok());
}

#[test]
fn size_and_value_counts_are_limited() {
    let limits = Limits { size: 10, ..Limits::default() };
    assert_eq!(
        parse("name: abcdefgh\n", Format::Yaml, &limits).unwrap_err().to_string(),
        "the file has 15 bytes, more than the limit of 10 (raise it with --limit size=N or RTNETLAB_LIMITS=size=N)"
    );
    let limits = Limits { values: 5, ..Limits::default() };
    let e = parse("a: [1, 2, 3, 4, 5]\n", Format::Yaml, &limits).unwrap_err().to_string();
    assert!(e.contains("holds more values than the limit of 5"), "{e}");
    let e = parse("{\"a\": [1, 2, 3, 4, 5]}", Format::Json, &limits).unwrap_err().to_string();
    assert!(e.contains("holds more values than the limit of 5"), "{e}");
}

#[test]
fn control_characters_are_refused_in_any_text() {
    assert_eq!(
        err(yaml("name: \"ES\\0x\"\n")),
        "1:7: text may not hold control characters, got U+0000 in 'ES\\0x'"
    );
    assert!(err(json_text("{\"name\": \"a\\u001bb\"}")).contains("U+001B"));
    assert!(err(json_text("{\"a\\u0000\": 1}")).contains("U+0000"));
    // Line breaks and tabs are text (a description may span lines).
    assert_eq!(yaml("description: |\n  two\n  lines\n").unwrap()["description"], json!("two\nlines\n"));
}

#[test]
fn a_file_holds_one_document_and_something_in_it() {
    assert_eq!(err(yaml("")), "the file is empty");
    assert_eq!(err(yaml("# only a comment\n")), "the file is empty");
    assert_eq!(err(yaml("~\n")), "the file is empty");
    assert_eq!(err(json_text(" \n")), "the file is empty");
    assert_eq!(
        err(yaml("a: 1\n---\nb: 2\n")),
        "2:1: expected a single document in the file, found a second one"
    );
    assert_eq!(yaml("\u{feff}a: 1\n").unwrap(), json!({"a": 1}));
    assert!(err(yaml("[a, b\nc: d\n")).contains("not valid YAML"));
    assert!(err(json_text("{\"name\": ")).contains("not valid JSON: EOF while parsing a value"));
}

#[test]
fn keys_are_text_as_written() {
    assert_eq!(
        yaml("ports: {1: a, on: b, 0x10: c}\n").unwrap(),
        json!({"ports": {"1": "a", "on": "b", "0x10": "c"}})
    );
    assert_eq!(err(yaml("? [a, b]\n: c\n")), "1:3: a mapping key must be text or a number, got a list");
}

#[test]
fn a_refusal_for_a_limit_names_the_limit_passed() {
    let limits = Limits { depth: 2, values: 5, size: 40, ..Limits::default() };
    let limit = |text: &str, format| parse(text, format, &limits).expect_err("refused").limit;
    assert_eq!(limit(r#"{"a": {"b": {"c": 1}}}"#, Format::Json), Some("depth"));
    assert_eq!(limit("a: {b: {c: 1}}", Format::Yaml), Some("depth"));
    assert_eq!(limit("[1, 2, 3, 4, 5, 6]", Format::Json), Some("values"));
    let aliases = Limits { aliases: 3, ..Limits::default() };
    let refused = parse("a: &x [1, 2]\nb: *x\nc: *x", Format::Yaml, &aliases).expect_err("refused");
    assert_eq!(refused.limit, Some("aliases"));
    assert_eq!(limit(&format!("[{}]", "1, ".repeat(20)), Format::Json), Some("size"));
    assert_eq!(limit(r#"{"a": "#, Format::Json), None);
    assert_eq!(limit("a: [1", Format::Yaml), None);
}
