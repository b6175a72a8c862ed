//! A JSON object's members as (key, the value's bytes as written), without
//! building the values: the answer inside a request is handed to the gate
//! as the bytes it arrived as, to be read once, with the gate's own limits.
//! Each value is skipped by serde_json's iterative skipper (no recursion,
//! so no depth limit and no stack to overflow), and its end read from the
//! stream's byte offset. This keeps serde_json's `raw_value` feature (what
//! `RawValue` would need) out of the build: features are crate-wide, so it
//! would change the serde_json the library reads every answer with too.

use serde::de::IgnoredAny;
use serde::Deserialize;

/// Why bytes are not an object's members: serde_json's error (with its
/// line and column) or a message.
#[derive(Debug)]
pub enum Problem {
    /// Not JSON.
    Json(serde_json::Error),
    /// JSON, but not an object, or an object that repeats a key.
    Shape(String),
}

/// The members of the object `bytes` holds, in order. A repeated key is a
/// problem: which of the two to believe is not for the server to guess.
pub fn members(bytes: &[u8]) -> Result<Vec<(String, &[u8])>, Problem> {
    let result = scan(bytes);
    if result.is_err() {
        // The precise error, with its position, if it is not JSON at all.
        if let Err(err) = serde_json::from_slice::<IgnoredAny>(bytes) {
            return Err(Problem::Json(err));
        }
    }
    let members = result?;
    for (n, (key, _)) in members.iter().enumerate() {
        if members[..n].iter().any(|(k, _)| k == key) {
            return Err(Problem::Shape(format!(
                "the key `{}` appears twice",
                key.escape_debug()
            )));
        }
    }
    Ok(members)
}

fn scan(bytes: &[u8]) -> Result<Vec<(String, &[u8])>, Problem> {
    let not_object = || Problem::Shape("expected a JSON object".to_string());
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return Err(not_object());
    }
    at = skip_ws(bytes, at + 1);
    let mut members = Vec::new();
    if bytes.get(at) == Some(&b'}') {
        return end(bytes, at + 1, members);
    }
    loop {
        if bytes.get(at) != Some(&b'"') {
            return Err(not_object());
        }
        let (key, len) = one::<String>(&bytes[at..])?;
        at = skip_ws(bytes, at + len);
        if bytes.get(at) != Some(&b':') {
            return Err(not_object());
        }
        at = skip_ws(bytes, at + 1);
        let (_, len) = one::<IgnoredAny>(&bytes[at..])?;
        members.push((key, &bytes[at..at + len]));
        at = skip_ws(bytes, at + len);
        match bytes.get(at) {
            Some(b',') => at = skip_ws(bytes, at + 1),
            Some(b'}') => return end(bytes, at + 1, members),
            _ => return Err(not_object()),
        }
    }
}

/// Only whitespace may follow the object.
fn end<'a>(
    bytes: &'a [u8],
    at: usize,
    members: Vec<(String, &'a [u8])>,
) -> Result<Vec<(String, &'a [u8])>, Problem> {
    if skip_ws(bytes, at) == bytes.len() {
        Ok(members)
    } else {
        Err(Problem::Shape("characters after the object".to_string()))
    }
}

/// One value at the start of `bytes`, and how many bytes it took.
fn one<'a, T: Deserialize<'a>>(bytes: &'a [u8]) -> Result<(T, usize), Problem> {
    let mut stream = serde_json::Deserializer::from_slice(bytes).into_iter::<T>();
    match stream.next() {
        Some(Ok(value)) => Ok((value, stream.byte_offset())),
        Some(Err(err)) => Err(Problem::Json(err)),
        None => Err(Problem::Shape("expected a value".to_string())),
    }
}

fn skip_ws(bytes: &[u8], mut at: usize) -> usize {
    while bytes
        .get(at)
        .is_some_and(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
    {
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(text: &str) -> Result<Vec<(String, String)>, String> {
        members(text.as_bytes())
            .map(|m| {
                m.into_iter()
                    .map(|(k, v)| (k, String::from_utf8(v.to_vec()).unwrap()))
                    .collect()
            })
            .map_err(|p| match p {
                Problem::Json(e) => format!("json: {e}"),
                Problem::Shape(s) => s,
            })
    }

    #[test]
    fn members_keep_their_bytes_as_written() {
        let pairs = |v: &[(&str, &str)]| -> Vec<(String, String)> {
            v.iter()
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .collect()
        };
        assert_eq!(
            keys(r#" { "a" : {"x": [1, "}"]} , "b\u0022":"s\"" ,"c":-1.5e3,"d":null} "#),
            Ok(pairs(&[
                ("a", r#"{"x": [1, "}"]}"#),
                ("b\"", r#""s\"""#),
                ("c", "-1.5e3"),
                ("d", "null")
            ]))
        );
        assert_eq!(keys("{}"), Ok(vec![]));
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(100_000), "]".repeat(100_000));
        assert_eq!(keys(&deep).unwrap()[0].1.len(), 200_000);
    }

    #[test]
    fn what_is_not_an_object_is_a_problem() {
        assert!(keys("[1]").unwrap_err().contains("expected a JSON object"));
        assert!(keys("{\"a\":1} x").unwrap_err().starts_with("json:"));
        assert!(keys("{\"a\":1}{}")
            .unwrap_err()
            .contains("trailing characters"));
        assert!(keys("{\"a\" 1}").unwrap_err().starts_with("json:"));
        assert!(keys("{\"a\":1,}").unwrap_err().starts_with("json:"));
        assert!(keys("{\"a\":1,\"a\":2}").unwrap_err().contains("twice"));
        assert!(keys("{\"a\":tru}").unwrap_err().starts_with("json:"));
        assert!(keys("").unwrap_err().starts_with("json:"));
    }
}
