//! Profiles: what `ctxgate mcp` knows of one upstream server. Which tools
//! answer a tree, in which import format and where in the result; which
//! tools are denied; whether the upstream runs in a private working folder
//! whose files its results link to; what is done with image blocks.
//!
//! A profile is a JSON object (the built-in ones are in `profiles/`):
//!
//! ```json
//! {
//!   "name": "macos-ax",
//!   "workdir": "inherit",
//!   "files": false,
//!   "images": "drop",
//!   "deny": ["take_screenshot"],
//!   "trees": [
//!     {"tools": ["get_ui_tree"], "format": "ax-json", "in": "json", "pointer": "/tree"}
//!   ]
//! }
//! ```
//!
//! `trees[].in` is `fenced` (a Markdown code block inside a text block:
//! ```` ```yaml ```` or ```` ```aria ```` for `aria`, ```` ```json ```` or none
//! for the others), `text` (the whole text block is the tree) or `json` (a text
//! block, or `structuredContent`, is a JSON object whose value at `pointer`
//! is the tree, or a string holding it). `tools` names tools, or `*` for
//! every tool. `workdir` is `private` (the upstream runs in a new folder
//! only this user can read, removed at exit) or `inherit`; `files: true`
//! replaces every link in a result to a file inside the upstream's working
//! folder with the file's content, trimmed or redacted. `images` is `drop`
//! (an image, audio or binary resource block becomes a notice) or `pass`.

use std::collections::BTreeSet;

use serde::Deserialize;

use crate::import::Format;

/// The built-in profiles, by name.
const BUILT_IN: &[(&str, &str)] = &[
    ("playwright", include_str!("profiles/playwright.json")),
    ("macos-ax", include_str!("profiles/macos-ax.json")),
];

/// Where a tree is in a tool's result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    /// A fenced block inside a text block.
    Fenced,
    /// The whole text block.
    Text,
    /// A JSON object's value at this pointer (a text block's JSON, or
    /// `structuredContent`).
    Json(String),
}

/// One `trees` entry.
#[derive(Debug, Clone)]
pub struct Tree {
    tools: Vec<String>,
    /// The import format.
    pub format: Format,
    /// Where the tree is.
    pub place: Place,
}

/// A profile, read and checked.
#[derive(Debug, Clone)]
pub struct Profile {
    /// Its name.
    pub name: String,
    /// The upstream runs in a private working folder.
    pub private_workdir: bool,
    /// Links to files in the working folder are replaced by their content.
    pub files: bool,
    /// Image, audio and binary blocks become notices.
    pub drop_images: bool,
    /// Denied tools.
    pub deny: BTreeSet<String>,
    trees: Vec<Tree>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Raw {
    name: String,
    #[serde(default)]
    about: Option<String>,
    #[serde(default = "inherit")]
    workdir: String,
    #[serde(default)]
    files: bool,
    #[serde(default = "pass")]
    images: String,
    #[serde(default)]
    deny: Vec<String>,
    #[serde(default)]
    trees: Vec<RawTree>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTree {
    tools: Vec<String>,
    format: String,
    #[serde(rename = "in")]
    place: String,
    #[serde(default)]
    pointer: Option<String>,
}

fn inherit() -> String {
    "inherit".into()
}

fn pass() -> String {
    "pass".into()
}

impl Profile {
    /// A built-in profile by name, or a profile file.
    pub fn load(name_or_file: &str) -> Result<Profile, String> {
        if let Some((_, text)) = BUILT_IN.iter().find(|(n, _)| *n == name_or_file) {
            return Profile::parse(text, &format!("built-in profile `{name_or_file}`"));
        }
        let path = std::path::Path::new(name_or_file);
        if !path.exists() {
            let names: Vec<&str> = BUILT_IN.iter().map(|(n, _)| *n).collect();
            return Err(format!(
                "`{name_or_file}` is neither a built-in profile ({}) nor a file",
                names.join(", ")
            ));
        }
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("cannot read the profile `{}`: {e}", path.display()))?;
        Profile::parse(&text, &format!("profile `{}`", path.display()))
    }

    /// A profile from its JSON; `what` names it in messages.
    pub fn parse(text: &str, what: &str) -> Result<Profile, String> {
        let raw: Raw = serde_json::from_str(text).map_err(|e| format!("{what}: {e}"))?;
        let _ = raw.about;
        let private_workdir = match raw.workdir.as_str() {
            "private" => true,
            "inherit" => false,
            other => {
                return Err(format!(
                    "{what}: `workdir` is `{other}`; write `private` or `inherit`"
                ))
            }
        };
        let drop_images = match raw.images.as_str() {
            "drop" => true,
            "pass" => false,
            other => {
                return Err(format!(
                    "{what}: `images` is `{other}`; write `drop` or `pass`"
                ))
            }
        };
        let mut trees = Vec::new();
        for (i, tree) in raw.trees.into_iter().enumerate() {
            let format: Format = tree
                .format
                .parse()
                .map_err(|e| format!("{what}: /trees/{i}/format: {e}"))?;
            let place = match (tree.place.as_str(), tree.pointer) {
                ("fenced", None) => Place::Fenced,
                ("text", None) => Place::Text,
                ("json", Some(pointer)) if pointer.is_empty() || pointer.starts_with('/') => {
                    Place::Json(pointer)
                }
                ("json", _) => {
                    return Err(format!(
                        "{what}: /trees/{i}: `in: json` needs a `pointer` (a JSON pointer such as `/tree`, or `` for the whole object)"
                    ))
                }
                (other, Some(_)) if other == "fenced" || other == "text" => {
                    return Err(format!("{what}: /trees/{i}: `pointer` is only for `in: json`"))
                }
                (other, _) => {
                    return Err(format!(
                        "{what}: /trees/{i}/in is `{other}`; write `fenced`, `text` or `json`"
                    ))
                }
            };
            if tree.tools.is_empty() {
                return Err(format!(
                    "{what}: /trees/{i}/tools is empty; name tools, or `*`"
                ));
            }
            trees.push(Tree {
                tools: tree.tools,
                format,
                place,
            });
        }
        Ok(Profile {
            name: raw.name,
            private_workdir,
            files: raw.files,
            drop_images,
            deny: raw.deny.into_iter().collect(),
            trees,
        })
    }

    /// The trees a result of `tool` may hold (`None`: the tool is not
    /// known, as in `mcp-intercept`, so only `*` entries apply).
    pub fn trees_for<'a>(&'a self, tool: Option<&'a str>) -> impl Iterator<Item = &'a Tree> + 'a {
        self.trees.iter().filter(move |t| {
            t.tools
                .iter()
                .any(|name| name == "*" || Some(name.as_str()) == tool)
        })
    }

    /// Whether some entry reads trees of `format`.
    pub fn reads(&self, format: Format) -> bool {
        self.trees.iter().any(|t| t.format == format)
    }

    /// Whether `tool` is denied.
    pub fn denies(&self, tool: &str) -> bool {
        self.deny.contains(tool)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_built_in_profiles_load() {
        let p = Profile::load("playwright").unwrap();
        assert!(p.private_workdir && p.files && p.drop_images);
        assert!(p.denies("browser_evaluate") && !p.denies("browser_click"));
        assert_eq!(p.trees_for(Some("browser_click")).count(), 1);
        let ax = Profile::load("macos-ax").unwrap();
        assert_eq!(ax.trees_for(None).count(), 0);
        assert_eq!(
            ax.trees_for(Some("get_ui_tree")).next().unwrap().place,
            Place::Json("/tree".into())
        );
    }

    #[test]
    fn mistakes_are_named() {
        let table = [
            (
                r#"{"name":"x","trees":[{"tools":["t"],"format":"svg","in":"text"}]}"#,
                "/trees/0/format",
            ),
            (
                r#"{"name":"x","trees":[{"tools":["t"],"format":"aria","in":"json"}]}"#,
                "needs a `pointer`",
            ),
            (r#"{"name":"x","workdir":"tmp"}"#, "`workdir` is `tmp`"),
            (r#"{"name":"x","denny":[]}"#, "unknown field `denny`"),
        ];
        for (text, message) in table {
            let err = Profile::parse(text, "profile `p.json`").unwrap_err();
            assert!(err.contains(message), "{err}");
        }
        assert!(Profile::load("nonesuch")
            .unwrap_err()
            .contains("playwright, macos-ax"));
    }
}
