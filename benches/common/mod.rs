//! Inputs shared by the benches, built once, outside any timed closure:
//! synthetic answers (`ctxgate::synth`) of 1k, 10k and 100k elements, and
//! 1M when `CTXGATE_BENCH_1M=1` (it takes minutes and ~1 GB).

#![allow(dead_code)]

use std::time::Duration;

use criterion::Criterion;
use serde::{Deserialize, Serialize};

/// The seed every bench uses, so figures are comparable across benches.
pub const SEED: u64 = 1;

/// The sizes to measure, in elements.
pub fn sizes() -> Vec<usize> {
    let mut sizes = vec![1_000, 10_000, 100_000];
    if std::env::var("CTXGATE_BENCH_1M").is_ok_and(|v| v == "1") {
        sizes.push(1_000_000);
    }
    sizes
}

/// A synthetic answer's compact JSON.
pub fn input(elements: usize) -> Vec<u8> {
    ctxgate::Format::Json
        .render(&ctxgate::synth::synth(elements, SEED))
        .into_bytes()
}

/// Short runs: the machine is shared. Large inputs get the fewest samples
/// criterion allows.
pub fn criterion() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .sample_size(10)
        .configure_from_args()
}

/// The floor's element: a plain mirror of the 0.2.0 element, no checks.
#[derive(Deserialize, Serialize)]
pub struct FloorAnswer {
    protocol: String,
    instance: String,
    root: FloorElement,
}

#[derive(Deserialize, Serialize)]
pub struct FloorElement {
    id: String,
    role: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    subrole: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    title: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    content: Vec<FloorContent>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    selected: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    focused: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    visible: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    hovered: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    children: Vec<FloorElement>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    attributes: Option<serde_json::Map<String, serde_json::Value>>,
}

#[derive(Deserialize, Serialize)]
pub struct FloorContent {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    text: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    data: Option<String>,
    #[serde(default, rename = "mimeType", skip_serializing_if = "Option::is_none")]
    mime_type: Option<String>,
}

/// The floor: parse into typed structs and serialize back.
pub fn floor_round_trip(bytes: &[u8]) -> Vec<u8> {
    let answer: FloorAnswer = serde_json::from_slice(bytes).expect("the floor parses");
    serde_json::to_vec(&answer).expect("the floor serializes")
}

/// The real trees of `tests/fixtures/`, as the answers' compact JSON, by
/// name, smallest first: every converted answer of `answers/` and the one
/// real tree under `realworld/raw/` larger than all of them (an AT-SPI
/// page of ~4,800 elements), imported here as `ctxgate import` would.
pub fn real_trees() -> Vec<(String, Vec<u8>)> {
    let fixtures = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures");
    let mut trees: Vec<(String, Vec<u8>)> = std::fs::read_dir(format!("{fixtures}/answers"))
        .expect("tests/fixtures/answers")
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "json"))
        .map(|path| {
            let name = path
                .file_stem()
                .expect("a file")
                .to_string_lossy()
                .into_owned();
            (name, std::fs::read(&path).expect("a readable fixture"))
        })
        .collect();
    let gz = std::fs::read(format!(
        "{fixtures}/realworld/raw/odilia-atspi/wcag_cache_items.json.gz"
    ))
    .expect("the AT-SPI WCAG page");
    // A plain gzip member: a 10-byte header, the deflate stream, 8 bytes.
    let raw = miniz_oxide::inflate::decompress_to_vec(&gz[10..gz.len() - 8]).expect("it inflates");
    let answer = ctxgate::import::import(ctxgate::import::Format::AtspiJson, &raw)
        .expect("the WCAG page imports");
    trees.push((
        "atspi-wcag (imported)".to_string(),
        ctxgate::Format::Json.render(&answer).into_bytes(),
    ));
    trees.sort_by_key(|(name, bytes)| (elements(bytes), name.clone()));
    trees
}

/// How many elements an answer's bytes hold.
pub fn elements(bytes: &[u8]) -> usize {
    let answer = ctxgate::read_conforming(bytes, &ctxgate::Limits::default()).expect("conforms");
    ctxgate::Tree::new(&answer.root).len()
}
