//! The one-pass reader against the two-pass one: for every fixture tree,
//! generated trees and malformed variants of each, `read_until` (one pass
//! when it is sure, two otherwise) gives exactly what `read_two_passes`
//! gives: the same answer and findings, or the same error.

// The tests are the `tests` module below (the file's convention, which
// `tests/layering.rs` reads: a unit test may use any layer); the gate's
// differential test uses its trees and breakages.
pub(crate) use tests::{element_pointers, fixtures, mutate, odd, MUTATIONS};

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use serde_json::{json, Value};

    use super::super::*;

    /// What a read gave, in a form two reads can be compared by.
    fn outcome(read: Result<Reading<'_>>) -> String {
        match read {
            Ok(reading) => format!(
                "ok {:?}\n{:?}\n{:?}",
                reading.answer, reading.findings, reading.upgraded_from
            ),
            Err(err) => format!("err {:?} {err} {:?}", err.kind(), err.pointer()),
        }
    }

    /// Reads `bytes` both ways and requires the same outcome; says whether the
    /// fast reader took it.
    fn same(bytes: &[u8], limits: &Limits) -> bool {
        let two = outcome(read_in_two_passes(bytes, limits, None));
        let now = outcome(read_until(bytes, limits, None));
        if now != two {
            panic!(
                "one pass and two differ on {}\none pass: {}\ntwo passes: {}",
                String::from_utf8_lossy(&bytes[..bytes.len().min(300)]),
                &now[..now.len().min(600)],
                &two[..two.len().min(600)],
            );
        }
        // The fast reader alone: what it reads is what the two passes read
        // (or it gives up).
        match read_fast_alone(bytes, limits) {
            Ok(Some(reading)) => {
                let alone = outcome(Ok(reading));
                assert!(
                    alone == two,
                    "the fast reader alone differs on {}\nalone: {}\ntwo passes: {}",
                    String::from_utf8_lossy(&bytes[..bytes.len().min(300)]),
                    &alone[..alone.len().min(600)],
                    &two[..two.len().min(600)],
                );
                true
            }
            _ => false,
        }
    }

    /// The fixture trees and a few generated ones, by name.
    pub(crate) fn fixtures() -> Vec<(String, Vec<u8>)> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/answers");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|x| x == "json"))
            .collect();
        files.sort();
        let mut out: Vec<(String, Vec<u8>)> = files
            .into_iter()
            .map(|p| (p.display().to_string(), std::fs::read(&p).unwrap()))
            .collect();
        for (n, seed) in [(1, 1), (40, 2), (300, 3), (2_000, 1)] {
            let answer = crate::synth::synth(n, seed);
            out.push((
                format!("synth {n} {seed}"),
                serde_json::to_vec(&answer).unwrap(),
            ));
        }
        out
    }

    /// JSON pointers of every element of an answer value, in document order.
    pub(crate) fn element_pointers(answer: &Value) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![("/root".to_string(), &answer["root"])];
        while let Some((at, element)) = stack.pop() {
            if let Some(children) = element.get("children").and_then(Value::as_array) {
                for (i, child) in children.iter().enumerate().rev() {
                    stack.push((format!("{at}/children/{i}"), child));
                }
            }
            out.push(at);
        }
        out
    }

    /// Each way a tree is broken here, applied to the element at `at`.
    pub(crate) const MUTATIONS: usize = 22;

    /// Escapes in every string field, words outside the role language (one
    /// that says a secret) at several depths, states of every kind, a
    /// byte-order mark: what the fixtures and generated trees lack.
    pub(crate) fn odd(answer: &Value, seed: usize) -> Vec<u8> {
        let mut v = answer.clone();
        for (i, at) in element_pointers(answer).iter().enumerate().skip(1) {
            let e = v.pointer_mut(at).unwrap();
            let k = i + seed;
            if k % 4 == 1 {
                e["role"] = json!(["Toolbar", "PasswordBox", "ΣRole\u{1F600}", "Spin\"ner"][k % 4]);
            }
            if k % 3 == 0 {
                let id = e["id"].as_str().unwrap().to_string();
                e["id"] = json!(format!("{id}\"\\\n\u{e9}"));
            }
            if k % 5 == 2 {
                e["title"] = json!(format!("t\"itle\t{k} \u{1}"));
                e["subrole"] = json!("sub\\role");
                e["url"] = json!("https://x/\"y\"");
            }
            match k % 6 {
                0 => e["visible"] = json!(false),
                1 => e["visible"] = json!(true),
                2 => e["selected"] = json!(k % 12 == 2),
                3 => e["hovered"] = json!(true),
                _ => {}
            }
            if k % 7 == 3 {
                e["attributes"] = json!({"name\"q": "v\\al", "n": k, "nested": {"a": [1, "b\n"]}});
            }
        }
        let mut out = b"\xEF\xBB\xBF".to_vec();
        out.extend(serde_json::to_vec(&v).unwrap());
        out
    }

    /// The answer with the element at `at` broken the `how`-th way.
    pub(crate) fn mutate(answer: &Value, at: &str, how: usize) -> Vec<u8> {
        let mut v = answer.clone();
        let root_id = v["root"]["id"].clone();
        let e = v.pointer_mut(at).unwrap();
        let text = |v: &Value| serde_json::to_vec(v).unwrap();
        match how {
            0 => e["title"] = json!(5),
            1 => e["visible"] = json!("yes"),
            2 => e["children"] = json!({"a": 1}),
            3 => e["content"] = json!("text"),
            4 => e["attributes"] = json!([1, 2]),
            5 => e["id"] = root_id,
            6 => e["content"] = json!([{"type": "text"}]),
            7 => e["content"] = json!([{"type": "nope", "x": [1, {"y": null}]}, 3]),
            8 => e["attributes"] = json!({"focused": true, "author": 3, "related": [{"x": 1}]}),
            9 => e["unknown"] = json!({"deep": [[[]]]}),
            10 => e["type"] = json!("pane"),
            11 => {
                e.as_object_mut().unwrap().remove("role");
            }
            12 => e["role"] = json!("Sprocket"),
            13 => e["focused"] = json!(true),
            14 => e["children"] = json!([7, [], {"id": "k", "role": "Text", "selected": true}]),
            15 => {
                let mut deep = json!("leaf");
                for _ in 0..140 {
                    deep = json!([deep]);
                }
                e["attributes"] = json!({ "nest": deep });
            }
            16 => e["content"] = json!([{"type": "text", "text": "a", "n": 1.5e300}]),
            17 => {
                // A repeated key, which a `Value` cannot hold: written as text.
                let mut bytes = text(&v);
                let key = br#""role":"#;
                if let Some(i) = bytes.windows(key.len()).position(|w| w == key) {
                    bytes.splice(i..i, br#""role":"Group","#.iter().copied());
                }
                return bytes;
            }
            18 => {
                let mut bytes = text(&v);
                bytes.truncate(bytes.len() * 2 / 3);
                return bytes;
            }
            19 => {
                let mut bytes = text(&v);
                bytes.extend_from_slice(b" 1e999");
                return bytes;
            }
            20 => {
                let bytes = text(&v);
                let s = String::from_utf8(bytes).unwrap();
                return s
                    .replacen(r#""role":"#, r#""x":"\ud800","role":"#, 1)
                    .into_bytes();
            }
            _ => {
                let mut bytes = text(&v);
                let mid = bytes.len() / 2;
                bytes[mid] = 0xFF;
                return bytes;
            }
        }
        text(&v)
    }

    /// Limits that make a tree of `n` elements, `depth` deep, break each of
    /// them by one.
    fn tight_limits(n: usize, depth: usize, bytes: usize) -> Vec<Limits> {
        let mut out = Vec::new();
        for (elements, max_depth) in [(n - 1, depth), (n, depth - 1), (n, depth)] {
            out.push(Limits {
                max_elements: elements.max(1),
                max_depth: max_depth.max(1),
                ..Limits::default()
            });
        }
        out.push(Limits {
            max_content_bytes: 40,
            ..Limits::default()
        });
        out.push(Limits {
            max_input_bytes: bytes - 1,
            ..Limits::default()
        });
        out
    }

    fn depth_of(answer: &Value) -> usize {
        element_pointers(answer)
            .iter()
            .map(|p| p.matches("/children/").count() + 1)
            .max()
            .unwrap_or(1)
    }

    #[test]
    fn one_pass_reads_what_two_passes_read() {
        let limits = Limits::default();
        let mut one_pass = 0;
        for (name, bytes) in fixtures() {
            one_pass += usize::from(same(&bytes, &limits));
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            let pointers = element_pointers(&value);
            for how in 0..MUTATIONS {
                for at in [
                    &pointers[0],
                    &pointers[pointers.len() / 2],
                    pointers.last().unwrap(),
                ] {
                    let broken = mutate(&value, at, how);
                    let one = same(&broken, &limits);
                    // What the reader finds is read again in two passes; what
                    // only the checker finds (a repeated id, an unknown role, a
                    // state under attributes, a forked focus) or nothing finds
                    // (a finite number) is read in one.
                    assert_eq!(
                        one,
                        [5, 8, 12, 13, 16].contains(&how),
                        "{name}: mutation {how} at {at}"
                    );
                }
            }
            for limits in tight_limits(pointers.len(), depth_of(&value), bytes.len()) {
                same(&bytes, &limits);
            }
        }
        // The clean trees are read in one pass (the fixtures with a warning are
        // not): the comparison is not of the two-pass reader with itself.
        assert!(one_pass >= 8, "{one_pass} of the trees read in one pass");
        // And by the fast reader, as written and compact.
        let mut by_fast = 0;
        for (_, bytes) in fixtures() {
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            let compact = serde_json::to_vec(&value).unwrap();
            let pretty = serde_json::to_vec_pretty(&value).unwrap();
            let taken = [
                same(&bytes, &limits),
                same(&compact, &limits),
                same(&pretty, &limits),
            ];
            assert_eq!(taken[1], taken[2]);
            by_fast += usize::from(taken[0]);
        }
        assert_eq!(by_fast, one_pass, "the fast reader reads every clean tree");
    }

    #[test]
    fn the_fast_reader_reads_a_clean_shape_and_gives_up_on_anything_else() {
        let limits = Limits::default();
        let answer = |root: &str| format!(r#"{{"protocol":"0.2.0","instance":"i","root":{root}}}"#);
        let leaf = |fields: &str| {
            answer(&format!(
                r#"{{"id":"a","role":"Application","children":[{{"id":"b","role":"Text",{fields}}}]}}"#
            ))
        };
        let taken = [
            answer(r#"{"id":"a","role":"Application"}"#),
            " \t\r\n{ \"protocol\" : \"0.2.0\" ,\n\"instance\":\"i\",\"root\":\t{\"id\" :\"a\", \"role\":\"Application\" , \"children\" : [ ] , \"content\": [ ] } }\n ".to_string(),
            leaf(r#""title":"a \"quoted\" \\ title \u00e9\ud83d\ude00\n""#),
            leaf(r#""title":"\\","url":"u\"","subrole":"\/""#),
            leaf(r#""selected":true,"focused":false,"visible":true,"hovered":false"#),
            leaf(r#""content":[{"type":"text","text":"one"},{ "type" : "text" , "text" : "two" }]"#),
            leaf(r#""content":[{"text":"first","type":"text"}]"#),
            leaf(r#""content":[{"type":"text","text":"t","annotations":{"audience":["user"]}}]"#),
            leaf(r#""content":[{"type":"image","data":"AAAA","mimeType":"image/png"}]"#),
            leaf(r#""content":[{"type":"te\u0078t","text":"escaped kind"}]"#),
            leaf(r#""content":[{"type":"resource","resource":{"uri":"u","text":"}]\"{["}}]"#),
            leaf(r#""content":[{"type":"widget","n":1}]"#),
            leaf(r#""attributes":{"author":"Ada","related":[{"relation":"reply-to","id":"a"}],"x":{"y":[1,2.5,-3e2,null,"}"]}}"#),
            leaf(r#""attributes":{}"#),
            answer(r#"{"id":"a","role":"Application","children":[{"id":"b","role":"Toolbar"}]}"#),
        ];
        for case in &taken {
            assert!(same(case.as_bytes(), &limits), "not taken: {case}");
        }
        let given_up = [
            leaf(r#""\u0074itle":"escaped key""#),
            leaf(r#""title":"t","title":"again""#),
            leaf(r#""name":"unknown field""#),
            leaf(r#""type":"0.1 field""#),
            leaf(r#""title":7"#),
            leaf(r#""title":null"#),
            leaf(r#""selected":"yes""#),
            leaf(r#""selected":truex"#),
            leaf(r#""title":"a	raw tab""#),
            leaf(r#""title":"bad \x escape""#),
            leaf(r#""title":"lone \ud800 surrogate""#),
            leaf(r#""title":"t","#),
            leaf(r#""attributes":[1]"#),
            leaf(r#""attributes":{"a":1,"a":2}"#),
            leaf(r#""attributes":{"a":{"b":1,"b":2}}"#),
            leaf(r#""attributes":{"n":1e999}"#),
            leaf(r#""attributes":{"a":"}"#),
            leaf(r#""attributes":{"a":1]"#),
            leaf(r#""content":[{"type":7,"text":"t"}]"#),
            leaf(r#""content":[{"type":"text"}]"#),
            leaf(r#""content":[{"type":"text","text":"t","type":"text"}]"#),
            leaf(r#""content":["text"]"#),
            leaf(r#""content":{"type":"text","text":"t"}"#),
            leaf(r#""children":{}"#),
            leaf(r#""children":[7]"#),
            answer(r#"{"role":"Application"}"#),
            answer(r#"{"id":"a"}"#),
            answer(r#"{"id":"a","role":"Application"} "#) + "x",
            answer(r#"{"id":"a","role":"Application"}"#) + "{}",
            answer(r#"[]"#),
            r#"{"protocol":"0.1","instance":"i","items":[{"id":"a","type":"pane"}]}"#.to_string(),
            r#"{"protocol":"0.2.0","instance":"i","root":{"id":"a","role":"Application"},"title":"t"}"#.to_string(),
        ];
        for case in &given_up {
            assert!(!same(case.as_bytes(), &limits), "taken: {case}");
        }
        // Every prefix of a clean answer (each cut is bad JSON).
        let whole = taken[12].as_bytes();
        for cut in 0..whole.len() {
            assert!(!same(&whole[..cut], &limits));
        }
        // Limits: the fast reader gives up at each, the two passes refuse.
        let tight = [
            Limits {
                max_elements: 1,
                ..Limits::default()
            },
            Limits {
                max_depth: 1,
                ..Limits::default()
            },
            Limits {
                max_content_bytes: 2,
                ..Limits::default()
            },
        ];
        for limits in &tight {
            assert!(!same(taken[5].as_bytes(), limits));
        }
    }

    #[test]
    fn nesting_near_the_limit_is_refused_as_the_scan_refuses_it() {
        // A value nested L levels inside attributes or a block of an element at
        // depth k, around the scan's limit (2 × max_depth + 65).
        for max_depth in [3, 4, 40] {
            let limits = Limits {
                max_depth,
                ..Limits::default()
            };
            for k in [1, max_depth - 1, max_depth] {
                for levels in [1, 60, 64, 65, 66, 67, 68, 70, 127, 128] {
                    let mut deep = json!(1);
                    for _ in 0..levels {
                        deep = json!([deep]);
                    }
                    for place in ["attributes", "content"] {
                        let mut element = json!({"id": "leaf", "role": "Text"});
                        match place {
                            "attributes" => element["attributes"] = json!({ "n": deep }),
                            _ => {
                                element["content"] =
                                    json!([{"type": "text", "text": "t", "n": deep}])
                            }
                        }
                        for level in (1..k).rev() {
                            let role = if level == 1 { "Application" } else { "Group" };
                            element = json!({"id": format!("e{level}"), "role": role, "children": [element]});
                        }
                        if k == 1 {
                            element["role"] = json!("Application");
                        }
                        let answer = json!({"protocol": "0.2.0", "instance": "i", "root": element});
                        same(&serde_json::to_vec(&answer).unwrap(), &limits);
                    }
                }
            }
        }
    }

    #[test]
    fn answers_other_than_a_clean_tree_are_read_in_two_passes() {
        let limits = Limits::default();
        let root = r#"{"id":"a","role":"Application"}"#;
        let cases = [
            format!(r#"{{"protocol":"0.2.0","instance":"i","root":{root}}}"#),
            format!("\u{FEFF}{{\"protocol\":\"0.2.0\",\"instance\":\"i\",\"root\":{root}}}"),
            format!(r#"{{"protocol":"0.2.0","instance":"i","root":{root},"title":"t"}}"#),
            format!(r#"{{"protocol":"0.2.0","instance":"i","root":{root},"items":[]}}"#),
            format!(r#"{{"protocol":"0.2.0","instance":"i","root":{root},"focus":{{}}}}"#),
            format!(r#"{{"protocol":"0.2.0","root":{root}}}"#),
            format!(r#"{{"protocol":"0.3.0","instance":"i","root":{root}}}"#),
            format!(r#"{{"instance":"i","root":{root}}}"#),
            r#"{"protocol":"0.2.0","instance":"i"}"#.to_string(),
            r#"{"protocol":"0.1","instance":"i","items":[{"id":"a","type":"pane"}]}"#.to_string(),
            r#"{"protocol":"0.1","instance":"i","items":[{"id":"a","type":"text","parent":"b"}],"focus":"a"}"#.to_string(),
            r#"{"protocol":"0.1","instance":"i","items":{"a":1}}"#.to_string(),
            r#"[{"protocol":"0.2.0"}]"#.to_string(),
            "7".to_string(),
            String::new(),
            format!(r#"{{"protocol":"0.2.0","instance":"i","root":{root},"x":[[[[1]]]]}}"#),
            format!(r#"{{"protocol":"0.2.0","instance":"i","root":{root},"protocol":"0.2.0"}}"#),
            format!("{}{{}}{}", "[".repeat(3000), "]".repeat(3000)),
        ];
        for case in &cases {
            same(case.as_bytes(), &limits);
        }
        // Attributes: few keys and many, a key written twice before and after
        // the pairs move into a map, a problem inside a value, not an object.
        let keys = |n: usize, repeat: Option<usize>| {
            let mut keys: Vec<String> = (0..n).map(|i| format!(r#""k{i}":{i}"#)).collect();
            if let Some(at) = repeat {
                keys.push(format!(r#""k{at}":"again""#));
            }
            format!("{{{}}}", keys.join(","))
        };
        let attributes = [
            keys(3, None),
            keys(3, Some(1)),
            keys(15, Some(0)),
            keys(16, None),
            keys(16, Some(15)),
            keys(40, Some(2)),
            keys(40, None),
            r#"{"a":{"b":1,"b":2},"c":3}"#.to_string(),
            r#"{"a":[1,{"x":1,"x":2}],"a":1}"#.to_string(),
            r#"[{"x":1,"x":2}]"#.to_string(),
            r#"[1,2]"#.to_string(),
            r#""text""#.to_string(),
            "{}".to_string(),
            r#"{"related":[{"relation":"reply-to","id":"a"}],"author":"Ada"}"#.to_string(),
        ];
        for attributes in attributes {
            assert_eq!(
                attributes_now(&attributes),
                attributes_before(&attributes),
                "{attributes}"
            );
            let json = format!(
                r#"{{"protocol":"0.2.0","instance":"i","root":{{"id":"a","role":"Application","attributes":{attributes}}}}}"#
            );
            same(json.as_bytes(), &limits);
        }
        assert!(same(cases[0].as_bytes(), &limits));
        assert!(same(cases[1].as_bytes(), &limits));
    }

    /// An element's `attributes` as the reader reads them now
    /// ([`value::AttributesSeed`]) and as it did (a [`value::BoundedValue`] at
    /// level 0, its object collected into `Attributes`).
    fn attributes_now(json: &str) -> String {
        use serde::de::DeserializeSeed;
        let mut de = serde_json::Deserializer::from_str(json);
        match value::AttributesSeed(&mut Vec::new()).deserialize(&mut de) {
            Ok(Ok(value::ReadAttributes::Object(attributes))) => format!("object {attributes:?}"),
            Ok(Ok(value::ReadAttributes::Other(other))) => format!("other {other:?}"),
            Ok(Err(problem)) => format!("problem {problem:?}"),
            Err(err) => format!("error {err}"),
        }
    }

    fn attributes_before(json: &str) -> String {
        use serde::de::DeserializeSeed;
        let mut de = serde_json::Deserializer::from_str(json);
        match value::BoundedValue(0).deserialize(&mut de) {
            Ok(Ok(Value::Object(object))) => format!(
                "object {:?}",
                object.into_iter().collect::<crate::model::Attributes>()
            ),
            Ok(Ok(other)) => format!("other {other:?}"),
            Ok(Err(problem)) => format!("problem {problem:?}"),
            Err(err) => format!("error {err}"),
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        #[test]
        fn generated_trees_and_their_breakages_read_alike(
            n in 1usize..400,
            seed in 0u64..1_000,
            pick in any::<prop::sample::Index>(),
            how in 0..MUTATIONS,
            cut in any::<prop::sample::Index>(),
        ) {
            let limits = Limits::default();
            let answer = crate::synth::synth(n, seed);
            let bytes = serde_json::to_vec(&answer).unwrap();
            prop_assert!(same(&bytes, &limits));
            // The fast reader takes it, and the same pretty-printed with every
            // non-ASCII character escaped (its decoding path).
            prop_assert!(same(&bytes, &limits));
            let pretty = serde_json::to_string_pretty(&answer).unwrap();
            let mut escaped = String::new();
            for c in pretty.chars() {
                if c.is_ascii() {
                    escaped.push(c);
                } else {
                    for unit in c.encode_utf16(&mut [0; 2]) {
                        escaped.push_str(&format!("\\u{unit:04x}"));
                    }
                }
            }
            prop_assert!(same(escaped.as_bytes(), &limits));
            let value: Value = serde_json::from_slice(&bytes).unwrap();
            let pointers = element_pointers(&value);
            let at = &pointers[pick.index(pointers.len())];
            same(&mutate(&value, at, how), &limits);
            // Any prefix of the bytes.
            same(&bytes[..cut.index(bytes.len() + 1)], &limits);
        }
    }
}
