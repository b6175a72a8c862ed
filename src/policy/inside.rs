//! An element's ancestors as the policy sees them (`input.inside`): a
//! shared chain, so that a projection's cost does not grow with its depth.
//!
//! The trimmer builds one link per distinct ancestor chain, from its
//! parent's link, once: the chain's SHA-256 digest (the caches' key) is
//! the parent's digest plus one role and subrole, and each link holds its
//! `{role, subrole}` entry as a regorus value, built at most once and then
//! shared by every projection below it. So building a projection, hashing
//! it and looking it up cost the same at depth 1,000 as at depth 1; only
//! handing `input.inside` to regorus is one pointer copy per ancestor (see
//! [`Inside::to_value`]), which `max_projections × max_depth` bounds.

use std::fmt;
use std::sync::{Arc, OnceLock};

use regorus::Value;
use sha2::{Digest, Sha256};

use crate::model::Role;

/// A SHA-256 digest of a chain of ancestors.
pub(crate) type Digest32 = [u8; 32];

/// An element's ancestors' roles and subroles, nearest first. Cloning is
/// one reference count; equality and hashing compare the chains' SHA-256
/// digests (computed once per link), not the chains.
#[derive(Clone, Default)]
pub struct Inside<'a> {
    link: Option<Arc<Link<'a>>>,
}

struct Link<'a> {
    role: Role,
    subrole: Option<&'a str>,
    up: Option<Arc<Link<'a>>>,
    len: usize,
    digest: Digest32,
    /// `{"role": …, "subrole": …}` for regorus, built on first use.
    entry: OnceLock<Value>,
}

impl Drop for Link<'_> {
    // Iterative: a chain as deep as the tree would otherwise be dropped by
    // recursion, one frame per link.
    fn drop(&mut self) {
        let mut up = self.up.take();
        while let Some(link) = up {
            match Arc::try_unwrap(link) {
                Ok(mut link) => up = link.up.take(),
                Err(_) => break,
            }
        }
    }
}

/// The digest of no ancestors.
fn empty_digest() -> Digest32 {
    Sha256::digest(b"ctxgate inside v1").into()
}

impl<'a> Inside<'a> {
    /// No ancestors (the root's).
    pub fn new() -> Inside<'a> {
        Inside::default()
    }

    /// The ancestors of a child of an element whose role and subrole are
    /// given and whose own ancestors are `self`: that element, then
    /// `self`. Costs one SHA-256 of the subrole and a digest.
    pub fn child(&self, role: Role, subrole: Option<&'a str>) -> Inside<'a> {
        let mut hasher = Sha256::new();
        hasher.update(self.digest());
        hasher.update(role.as_str().as_bytes());
        match subrole {
            Some(s) => {
                hasher.update([1]);
                hasher.update((s.len() as u64).to_le_bytes());
                hasher.update(s.as_bytes());
            }
            None => hasher.update([0]),
        }
        Inside {
            link: Some(Arc::new(Link {
                role,
                subrole,
                up: self.link.clone(),
                len: self.len() + 1,
                digest: hasher.finalize().into(),
                entry: OnceLock::new(),
            })),
        }
    }

    /// How many ancestors.
    pub fn len(&self) -> usize {
        self.link.as_ref().map_or(0, |l| l.len)
    }

    /// Whether there are none (the root).
    #[cfg(any(test, feature = "internals"))]
    pub fn is_empty(&self) -> bool {
        self.link.is_none()
    }

    /// The ancestors' roles and subroles, nearest first.
    pub fn iter(&self) -> impl Iterator<Item = (Role, Option<&'a str>)> + '_ {
        self.links().map(|l| (l.role, l.subrole))
    }

    fn links(&self) -> impl Iterator<Item = &Link<'a>> + '_ {
        std::iter::successors(self.link.as_deref(), |l| l.up.as_deref())
    }

    /// An unambiguous SHA-256 of the chain (roles, subroles, order).
    pub(crate) fn digest(&self) -> Digest32 {
        match &self.link {
            Some(link) => link.digest,
            None => empty_digest(),
        }
    }

    /// `input.inside` for regorus: an array of `{role, subrole?}`, each
    /// entry shared with every other projection below the same ancestor.
    pub(crate) fn to_value(&self) -> Value {
        // Sized once: collecting from the chain (no size hint) grew the
        // array by doubling, a third of this function's cost at depth 1,000.
        let mut items: Vec<Value> = Vec::with_capacity(self.len());
        items.extend(self.links().map(|l| {
            l.entry
                .get_or_init(|| {
                    let mut entry = Value::new_object();
                    let map = entry.as_object_mut().expect("an object");
                    map.insert(Value::from("role"), Value::from(l.role.as_str()));
                    if let Some(s) = l.subrole {
                        map.insert(Value::from("subrole"), Value::from(s));
                    }
                    entry
                })
                .clone()
        }));
        Value::from(items)
    }
}

impl<'a> FromIterator<(Role, Option<&'a str>)> for Inside<'a> {
    /// From ancestors nearest first (as [`Inside::iter`] yields them).
    fn from_iter<I: IntoIterator<Item = (Role, Option<&'a str>)>>(iter: I) -> Self {
        let nearest_first: Vec<_> = iter.into_iter().collect();
        nearest_first
            .into_iter()
            .rev()
            .fold(Inside::new(), |inside, (role, subrole)| {
                inside.child(role, subrole)
            })
    }
}

impl<'a> From<Vec<(Role, Option<&'a str>)>> for Inside<'a> {
    /// From ancestors nearest first.
    fn from(nearest_first: Vec<(Role, Option<&'a str>)>) -> Self {
        nearest_first.into_iter().collect()
    }
}

impl PartialEq for Inside<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.digest() == other.digest()
    }
}

impl Eq for Inside<'_> {}

impl std::hash::Hash for Inside<'_> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        state.write(&self.digest());
    }
}

impl fmt::Debug for Inside<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_built_link_by_link_equals_one_collected_and_differs_from_others() {
        let a = Inside::new()
            .child(Role::Application, None)
            .child(Role::Window, Some("pane"));
        let b: Inside<'_> = vec![(Role::Window, Some("pane")), (Role::Application, None)].into();
        assert_eq!(a, b);
        assert_eq!(a.len(), 2);
        assert_eq!(
            a.iter().collect::<Vec<_>>(),
            [(Role::Window, Some("pane")), (Role::Application, None)]
        );
        // Order, subroles and their absence all count.
        let c: Inside<'_> = vec![(Role::Application, None), (Role::Window, Some("pane"))].into();
        let d: Inside<'_> = vec![(Role::Window, Some("")), (Role::Application, None)].into();
        let e: Inside<'_> = vec![(Role::Window, None), (Role::Application, None)].into();
        for other in [&c, &d, &e, &Inside::new()] {
            assert_ne!(&a, other);
        }
        let value: serde_json::Value =
            serde_json::from_str(&a.to_value().to_json_str().unwrap()).unwrap();
        assert_eq!(
            value,
            serde_json::json!([{"role": "Window", "subrole": "pane"}, {"role": "Application"}])
        );
    }

    #[test]
    fn a_chain_100000_deep_drops_without_recursion() {
        let handle = std::thread::Builder::new()
            .stack_size(64 * 1024)
            .spawn(|| {
                let mut inside = Inside::new();
                for _ in 0..100_000 {
                    inside = inside.child(Role::Group, None);
                }
                assert_eq!(inside.len(), 100_000);
                drop(inside);
            })
            .unwrap();
        handle.join().unwrap();
    }
}
