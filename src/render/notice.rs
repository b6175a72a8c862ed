//! ctxgate's notices: the one type that writes and reads every notice
//! shape, as an attribute of the JSON output and as an outline line.
//!
//! A notice is an attribute in the reserved `ctxgate:` namespace
//! ([`is_reserved`], read by meaning). The trimmer drops every input
//! attribute there, ctxgate's exact shapes too, and counts them: a notice
//! in the output is always this trim's, its numbers this trim's own counts
//! (an input's could carry any digits). [`Notice::read`] reads an output's
//! notices back (the outline writer, tests). The shapes:
//!
//! | attribute | value | outline line |
//! |---|---|---|
//! | `ctxgate:omitted` | `{"children": N, "reasons": {reason: n, …}}` | `N children not sent: n reason, …` |
//! | `ctxgate:omitted`, compact | `{reason: n, …}` | `not sent: n reason, …` |
//! | `ctxgate:withheld` | `{"rule": id, "empty": bool}` | `withheld by id; it is (not) empty` |
//! | `ctxgate:cut` | `{"reason": "budget", "blocks": N}` | `content cut to fit: budget` |
//! | `ctxgate:cut`, a title | `{"reason": "budget", "title": true}` (and `blocks`) | `title cut to fit: budget` (`title and content …`) |
//! | `ctxgate:bare`, on the root only | `{"cut": N, "omitted": {reason: n, …}}` | `in all: N titles or contents cut; not sent: n reason, …` |
//! | `ctxgate:bare`, nothing cut | `{reason: n, …}` | `in all, not sent: n reason, …` |
//!
//! The bare notice is the one omitted notice of an answer cut to a budget
//! (the whole selection did not fit): it stands for the omitted notice of
//! every sent element (the children not sent under all of them, counted
//! per reason), which the elements then do not carry; on an answer sent as
//! its bare path (the budget held nothing more) it also stands for the cut
//! notice of every element whose title or content was cut (`cut` of them).
//! The report still names every element left out, by id and rule.
//!
//! Counts are whole numbers from 0 to 2^64 − 1 written as such (no `1e3`,
//! `-1`, `2.5`); a compact omitted notice has at least one reason and no
//! reason named `children` or `reasons`, and a bare notice with nothing cut
//! at least one and none named `cut` or `omitted`, so the two shapes of
//! either never read as one another. (An earlier ctxgate wrote the bare
//! notice with nothing cut as `{"cut": 0, "omitted": {…}}`: still read.)

use std::collections::BTreeMap;
use std::io::Write;

use serde_json::{Map, Value};

/// The namespace prefix, as ctxgate writes it.
pub const PREFIX: &str = "ctxgate:";

/// Whether an attribute key is in the reserved namespace: whether it reads
/// as [`PREFIX`] and more to a person, by [`crate::lookalike::name_skeleton`]
/// (case, look-alike letters of other scripts and colons, compatibility
/// forms, chars that do not show). The one test of the namespace: a key it
/// holds reserved is ctxgate's to write, and a provider's is dropped.
pub fn is_reserved(key: &str) -> bool {
    let bytes = key.as_bytes();
    if key.is_ascii() && !bytes.iter().any(|b| b.is_ascii_control()) {
        return bytes.len() >= PREFIX.len()
            && bytes[..PREFIX.len()].eq_ignore_ascii_case(PREFIX.as_bytes());
    }
    let mut read = crate::lookalike::name_skeleton(key);
    PREFIX.chars().all(|want| read.next() == Some(want))
}
/// Children not sent.
pub const OMITTED: &str = "ctxgate:omitted";
/// A masked element, or one the budget sent as a placeholder.
pub const WITHHELD: &str = "ctxgate:withheld";
/// Content or a title cut to fit.
pub const CUT: &str = "ctxgate:cut";
/// An answer cut to a budget: what every element's omitted notices (and,
/// on the bare path, cut notices) would say.
pub const BARE: &str = "ctxgate:bare";

/// One notice.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Notice {
    /// Children not sent, counted per reason (rule label, `scope`,
    /// `budget`); `compact` leaves the total out (it is the sum).
    Omitted {
        /// Count per reason.
        reasons: BTreeMap<String, u64>,
        /// The compact shape, for small budgets.
        compact: bool,
    },
    /// A placeholder: the rule that withheld the element, and whether it
    /// is empty.
    Withheld {
        /// The rule label (or `budget`).
        rule: String,
        /// Whether the element has nothing in it.
        empty: bool,
    },
    /// Content blocks cut or dropped, and whether the title was shortened.
    Cut {
        /// Why (ctxgate writes `budget`).
        reason: String,
        /// Content blocks cut or dropped.
        blocks: u64,
        /// Whether the title was shortened.
        title: bool,
    },
    /// An answer cut to a budget, on the root: elements whose title or
    /// content was cut without a notice of their own (the bare path), and
    /// children not sent under any sent element, per reason.
    Bare {
        /// Elements whose title or content was cut.
        cut: u64,
        /// Children not sent, under all sent elements, per reason.
        reasons: BTreeMap<String, u64>,
    },
}

/// What [`Notice::read`] made of a `ctxgate:` attribute.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// One of ctxgate's exact shapes.
    Notice(Notice),
    /// A notice whose shape is ctxgate's but a count of which is not a
    /// whole number from 0 to 2^64 − 1: not one ctxgate wrote.
    BadCount,
    /// Not ctxgate's: dropped.
    Foreign,
}

/// A whole number from 0 to 2^64 − 1, written as such.
fn whole(n: &Value) -> Option<u64> {
    n.as_u64()
        .filter(|_| !n.to_string().contains(['.', 'e', 'E']))
}

impl Notice {
    /// The attribute the notice is written under.
    pub fn key(&self) -> &'static str {
        match self {
            Notice::Omitted { .. } => OMITTED,
            Notice::Withheld { .. } => WITHHELD,
            Notice::Cut { .. } => CUT,
            Notice::Bare { .. } => BARE,
        }
    }

    /// The attribute's value.
    pub fn value(&self) -> Value {
        match self {
            Notice::Omitted { reasons, compact } => {
                let counts: Map<String, Value> = reasons
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(*v)))
                    .collect();
                if *compact {
                    Value::Object(counts)
                } else {
                    let total = reasons.values().fold(0u64, |sum, &n| sum.saturating_add(n));
                    let mut out = Map::new();
                    out.insert("children".into(), total.into());
                    out.insert("reasons".into(), Value::Object(counts));
                    Value::Object(out)
                }
            }
            Notice::Withheld { rule, empty } => {
                let mut out = Map::new();
                out.insert("rule".into(), rule.clone().into());
                out.insert("empty".into(), (*empty).into());
                Value::Object(out)
            }
            Notice::Cut {
                reason,
                blocks,
                title,
            } => {
                let mut out = Map::new();
                out.insert("reason".into(), reason.clone().into());
                if *blocks > 0 || !title {
                    out.insert("blocks".into(), (*blocks).into());
                }
                if *title {
                    out.insert("title".into(), true.into());
                }
                Value::Object(out)
            }
            Notice::Bare { cut, reasons } => {
                let counts: Map<String, Value> = reasons
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::from(*v)))
                    .collect();
                if *cut == 0 && !reasons.is_empty() {
                    // Nothing cut: the counts alone (8 o200k tokens less).
                    return Value::Object(counts);
                }
                let mut out = Map::new();
                out.insert("cut".into(), (*cut).into());
                out.insert("omitted".into(), Value::Object(counts));
                Value::Object(out)
            }
        }
    }

    /// Reads an attribute as one of the exact shapes ctxgate writes. The
    /// words inside (reasons, rules) are not judged here.
    pub fn read(key: &str, value: &Value) -> Read {
        let Value::Object(object) = value else {
            return Read::Foreign;
        };
        match key {
            OMITTED => {
                let counts = |reasons: &Map<String, Value>| {
                    let mut out = BTreeMap::new();
                    for (reason, n) in reasons {
                        out.insert(reason.clone(), whole(n)?);
                    }
                    Some(out)
                };
                let full =
                    object.len() == 2 && object.get("children").is_some_and(Value::is_number);
                match (full, object.get("reasons")) {
                    (true, Some(Value::Object(reasons))) => {
                        match (object.get("children").and_then(whole), counts(reasons)) {
                            (Some(_), Some(reasons)) => Read::Notice(Notice::Omitted {
                                reasons,
                                compact: false,
                            }),
                            _ => Read::BadCount,
                        }
                    }
                    _ if !object.is_empty()
                        && !object.contains_key("children")
                        && !object.contains_key("reasons")
                        && object.values().all(Value::is_number) =>
                    {
                        match counts(object) {
                            Some(reasons) => Read::Notice(Notice::Omitted {
                                reasons,
                                compact: true,
                            }),
                            None => Read::BadCount,
                        }
                    }
                    _ => Read::Foreign,
                }
            }
            WITHHELD => match (object.len(), object.get("rule"), object.get("empty")) {
                (2, Some(Value::String(rule)), Some(Value::Bool(empty))) => {
                    Read::Notice(Notice::Withheld {
                        rule: rule.clone(),
                        empty: *empty,
                    })
                }
                _ => Read::Foreign,
            },
            CUT => {
                let Some(Value::String(reason)) = object.get("reason") else {
                    return Read::Foreign;
                };
                let blocks = object.get("blocks").map(whole);
                let title = object.get("title");
                let notice = |blocks, title| {
                    Read::Notice(Notice::Cut {
                        reason: reason.clone(),
                        blocks,
                        title,
                    })
                };
                match (object.len(), blocks, title) {
                    (2, Some(Some(blocks)), None) => notice(blocks, false),
                    (2, None, Some(Value::Bool(true))) => notice(0, true),
                    (3, Some(Some(blocks)), Some(Value::Bool(true))) if blocks > 0 => {
                        notice(blocks, true)
                    }
                    _ => Read::Foreign,
                }
            }
            BARE => match (object.len(), object.get("cut"), object.get("omitted")) {
                (2, Some(cut), Some(Value::Object(omitted))) if cut.is_number() => {
                    if !omitted.values().all(Value::is_number) {
                        return Read::Foreign;
                    }
                    let mut reasons = BTreeMap::new();
                    for (reason, n) in omitted {
                        match whole(n) {
                            Some(n) => reasons.insert(reason.clone(), n),
                            None => return Read::BadCount,
                        };
                    }
                    match whole(cut) {
                        Some(cut) => Read::Notice(Notice::Bare { cut, reasons }),
                        None => Read::BadCount,
                    }
                }
                _ if !object.is_empty()
                    && !object.contains_key("cut")
                    && !object.contains_key("omitted")
                    && object.values().all(Value::is_number) =>
                {
                    let mut reasons = BTreeMap::new();
                    for (reason, n) in object {
                        match whole(n) {
                            Some(n) => reasons.insert(reason.clone(), n),
                            None => return Read::BadCount,
                        };
                    }
                    Read::Notice(Notice::Bare { cut: 0, reasons })
                }
                _ => Read::Foreign,
            },
            _ => Read::Foreign,
        }
    }

    /// The notices of an element's attributes, in the order an outline
    /// writes them (withheld, cut, omitted, bare); other shapes are skipped.
    pub fn of(attributes: &crate::model::Attributes) -> impl Iterator<Item = Notice> + '_ {
        [WITHHELD, CUT, OMITTED, BARE]
            .into_iter()
            .filter_map(|key| match Notice::read(key, attributes.get(key)?) {
                Read::Notice(notice) => Some(notice),
                _ => None,
            })
    }

    /// The notice's outline line after `[ctxgate] ` (without the line
    /// feed); `word` writes a rule or reason name as the outline does.
    pub fn outline(&self, out: &mut Vec<u8>, word: impl Fn(&mut Vec<u8>, &str)) {
        match self {
            Notice::Withheld { rule, empty } => {
                out.extend_from_slice(b"withheld by ");
                word(out, rule);
                out.extend_from_slice(match empty {
                    true => b"; it is empty",
                    false => b"; it is not empty",
                });
            }
            Notice::Cut {
                reason,
                blocks,
                title,
            } => {
                out.extend_from_slice(match (*title, *blocks > 0) {
                    (true, true) => b"title and content cut to fit: ".as_slice(),
                    (true, false) => b"title cut to fit: ",
                    (false, _) => b"content cut to fit: ",
                });
                word(out, reason);
            }
            Notice::Omitted { reasons, compact } => {
                if *compact {
                    out.extend_from_slice(b"not sent:");
                } else {
                    let count = reasons.values().fold(0u64, |sum, &n| sum.saturating_add(n));
                    let _ = write!(
                        out,
                        "{count} {} not sent:",
                        if count == 1 { "child" } else { "children" }
                    );
                }
                for (i, (reason, n)) in reasons.iter().enumerate() {
                    let _ = write!(out, "{}{n} ", if i == 0 { " " } else { ", " });
                    word(out, reason);
                }
            }
            Notice::Bare { cut, reasons } => {
                // Nothing cut (an answer cut to a budget, not bare): said
                // by leaving it out, at the budgets where a word counts.
                let first = match (cut, reasons.is_empty()) {
                    (0, false) => {
                        out.extend_from_slice(b"in all, not sent: ");
                        ""
                    }
                    _ => {
                        let _ = write!(out, "in all: {cut} titles or contents cut");
                        "; not sent: "
                    }
                };
                for (i, (reason, n)) in reasons.iter().enumerate() {
                    let _ = write!(out, "{}{n} ", if i == 0 { first } else { ", " });
                    word(out, reason);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn omitted(compact: bool) -> Notice {
        Notice::Omitted {
            reasons: [
                ("budget".to_string(), 3),
                ("prune:invisible".to_string(), 2),
            ]
            .into_iter()
            .collect(),
            compact,
        }
    }

    #[test]
    fn every_shape_reads_back_to_itself() {
        let shapes = [
            omitted(false),
            omitted(true),
            Notice::Withheld {
                rule: "mask:secure-text".into(),
                empty: true,
            },
            Notice::Cut {
                reason: "budget".into(),
                blocks: 2,
                title: false,
            },
            Notice::Cut {
                reason: "budget".into(),
                blocks: 0,
                title: true,
            },
            Notice::Cut {
                reason: "budget".into(),
                blocks: 1,
                title: true,
            },
            Notice::Bare {
                cut: 4,
                reasons: [("budget".to_string(), 9)].into_iter().collect(),
            },
            Notice::Bare {
                cut: 0,
                reasons: BTreeMap::new(),
            },
            Notice::Bare {
                cut: 0,
                reasons: [("budget".to_string(), 9), ("scope".to_string(), 2)]
                    .into_iter()
                    .collect(),
            },
        ];
        for notice in shapes {
            assert_eq!(
                Notice::read(notice.key(), &notice.value()),
                Read::Notice(notice.clone()),
                "{notice:?}"
            );
        }
        assert_eq!(
            omitted(false).value(),
            json!({"children": 5, "reasons": {"budget": 3, "prune:invisible": 2}})
        );
        assert_eq!(
            omitted(true).value(),
            json!({"budget": 3, "prune:invisible": 2})
        );
        // Nothing cut: the counts alone; an earlier ctxgate's shape for it
        // still reads as the same notice.
        let bare = Notice::Bare {
            cut: 0,
            reasons: [("budget".to_string(), 9)].into_iter().collect(),
        };
        assert_eq!(bare.value(), json!({"budget": 9}));
        assert_eq!(
            Notice::read(BARE, &json!({"cut": 0, "omitted": {"budget": 9}})),
            Read::Notice(bare)
        );
    }

    #[test]
    fn other_shapes_are_foreign_and_bad_counts_refused() {
        for (key, value) in [
            (OMITTED, json!({"children": 1})),
            (OMITTED, json!({})),
            (OMITTED, json!({"children": 1, "reasons": {"a": 1}, "x": 1})),
            (OMITTED, json!({"reasons": 1})),
            (OMITTED, json!({"budget": "1"})),
            (OMITTED, json!("1 budget")),
            (WITHHELD, json!({"rule": "x", "empty": true, "more": 1})),
            (WITHHELD, json!({"rule": 1, "empty": true})),
            (CUT, json!({"reason": "budget"})),
            (CUT, json!({"reason": "budget", "title": false})),
            (CUT, json!({"reason": "budget", "blocks": 0, "title": true})),
            (CUT, json!({"reason": "budget", "blocks": 1.5})),
            ("ctxgate:other", json!({"reason": "budget", "blocks": 1})),
            (BARE, json!({"cut": 1})),
            (BARE, json!({"cut": 1, "omitted": {"budget": "1"}})),
            (BARE, json!({"cut": 1, "omitted": {}, "x": 1})),
            (BARE, json!({"cut": "1", "omitted": {}})),
            (BARE, json!({})),
            (BARE, json!({"budget": "1"})),
            (BARE, json!({"budget": 1, "cut": 1})),
            (BARE, json!({"budget": 1, "omitted": 1})),
        ] {
            assert_eq!(Notice::read(key, &value), Read::Foreign, "{key} {value}");
        }
        for value in [
            json!({"children": 1e3, "reasons": {"budget": 1}}),
            json!({"children": 1, "reasons": {"budget": -1}}),
            json!({"budget": 2.5}),
            json!({"budget": 1e20}),
        ] {
            assert_eq!(Notice::read(OMITTED, &value), Read::BadCount, "{value}");
        }
        for value in [
            json!({"cut": 1e3, "omitted": {}}),
            json!({"cut": 1, "omitted": {"budget": -1}}),
            json!({"budget": -1}),
            json!({"budget": 1.5}),
        ] {
            assert_eq!(Notice::read(BARE, &value), Read::BadCount, "{value}");
        }
    }

    #[test]
    fn outline_lines() {
        let line = |n: &Notice| {
            let mut out = Vec::new();
            n.outline(&mut out, |out, w| out.extend_from_slice(w.as_bytes()));
            String::from_utf8(out).unwrap()
        };
        assert_eq!(
            line(&omitted(false)),
            "5 children not sent: 3 budget, 2 prune:invisible"
        );
        assert_eq!(
            line(&omitted(true)),
            "not sent: 3 budget, 2 prune:invisible"
        );
        assert_eq!(
            line(&Notice::Cut {
                reason: "budget".into(),
                blocks: 0,
                title: true
            }),
            "title cut to fit: budget"
        );
        assert_eq!(
            line(&Notice::Bare {
                cut: 2,
                reasons: [("budget".to_string(), 5), ("scope".to_string(), 1)]
                    .into_iter()
                    .collect(),
            }),
            "in all: 2 titles or contents cut; not sent: 5 budget, 1 scope"
        );
        assert_eq!(
            line(&Notice::Bare {
                cut: 0,
                reasons: [("budget".to_string(), 5)].into_iter().collect(),
            }),
            "in all, not sent: 5 budget"
        );
        assert_eq!(
            line(&Notice::Bare {
                cut: 0,
                reasons: BTreeMap::new(),
            }),
            "in all: 0 titles or contents cut"
        );
    }
}
