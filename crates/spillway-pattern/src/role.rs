//! [`Role`]: what the policies make of one collection, decided once per statement and
//! carried through it.

use crate::engine::{Engine, policies_on_side};
use crate::policy::Policy;

/// What a collection is to the declared policies. A collection is never both a main and a
/// side collection: declaring a policy refuses that.
pub enum Role<'p> {
    /// No policy involves it: statements run as they would without the pattern layer.
    Plain,
    /// The main collection of at least one policy: writes go through the [`Engine`], filters
    /// on managed fields are answered on logical documents.
    Main(Engine<'p>),
    /// The side collection of these policies: direct writes are checked against the layout,
    /// and the main documents they touch are brought back in step.
    Side(Vec<&'p Policy>),
}

impl<'p> Role<'p> {
    /// The role of `collection` among `policies`.
    pub fn of(collection: &'p str, policies: &'p [Policy]) -> Role<'p> {
        let engine = Engine::new(collection, policies);
        if !engine.is_empty() {
            return Role::Main(engine);
        }
        let side = policies_on_side(policies, collection);
        if side.is_empty() {
            Role::Plain
        } else {
            Role::Side(side)
        }
    }

    /// Whether no policy involves the collection.
    pub fn is_plain(&self) -> bool {
        matches!(self, Role::Plain)
    }

    /// The engine of a main collection.
    pub fn engine(&self) -> Option<&Engine<'p>> {
        match self {
            Role::Main(engine) => Some(engine),
            _ => None,
        }
    }
}
