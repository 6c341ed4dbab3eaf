//! Identities the registry keeps apart: tenants, providers, nodes — and token scopes.

use std::fmt;

use serde::{Deserialize, Serialize};
use thiserror::Error;

/// Why an identifier was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{kind} {value:?} is invalid: {rule}")]
pub struct IdentityError {
    /// What kind of identifier (`tenant id`, `provider id`, `node id`).
    pub kind: &'static str,
    /// The rejected value.
    pub value: String,
    /// The rule it broke.
    pub rule: &'static str,
}

fn check(kind: &'static str, value: &str, max: usize) -> Result<(), IdentityError> {
    let fail = |rule| {
        Err(IdentityError {
            kind,
            value: value.to_owned(),
            rule,
        })
    };
    let mut chars = value.chars();
    match chars.next() {
        None => return fail("must not be empty"),
        Some(c) if !(c.is_ascii_lowercase() || c.is_ascii_digit()) => {
            return fail("must start with a lowercase letter or digit");
        }
        _ => {}
    }
    if value.len() > max {
        return fail("is too long");
    }
    if !chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '.' | '_' | '-'))
    {
        return fail("may contain only lowercase letters, digits, '.', '_' and '-'");
    }
    Ok(())
}

macro_rules! identity {
    ($(#[$doc:meta])* $name:ident, $kind:literal, $max:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
        #[cfg_attr(feature = "openapi", derive(utoipa::ToSchema), schema(value_type = String))]
        #[serde(try_from = "String", into = "String")]
        pub struct $name(String);

        impl $name {
            #[doc = concat!("Validates a ", $kind, ": `^[a-z0-9][a-z0-9._-]*$`, at most ", stringify!($max), " bytes.")]
            pub fn parse(value: &str) -> Result<Self, IdentityError> {
                check($kind, value, $max).map(|()| Self(value.to_owned()))
            }
            /// The identifier as a string slice.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TryFrom<String> for $name {
            type Error = IdentityError;
            fn try_from(value: String) -> Result<Self, Self::Error> {
                Self::parse(&value)
            }
        }

        impl From<$name> for String {
            fn from(value: $name) -> String {
                value.0
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

identity!(
    /// A tenant: the unit of isolation. Every resource belongs to exactly one.
    TenantId, "tenant id", 63
);
identity!(
    /// A provider: the identity that publishes descriptors and serves calls.
    ProviderId, "provider id", 128
);
identity!(
    /// A node: the transport endpoint a provider runs on.
    NodeId, "node id", 128
);

impl TenantId {
    /// The tenant created on first start.
    pub fn default_tenant() -> Self {
        TenantId("default".to_owned())
    }
}

/// What a token may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum Scope {
    /// Discover and describe capabilities, nodes, agents, features, events.
    #[serde(rename = "capabilities:read")]
    Read,
    /// Call capabilities.
    #[serde(rename = "capabilities:call")]
    Call,
    /// Register providers and publish descriptors.
    #[serde(rename = "capabilities:publish")]
    Publish,
    /// Manage tokens (and, in the default tenant, tenants). Implies every other scope.
    #[serde(rename = "admin")]
    Admin,
}

impl Scope {
    /// Every scope.
    pub const ALL: [Scope; 4] = [Scope::Read, Scope::Call, Scope::Publish, Scope::Admin];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "capabilities:read",
            Scope::Call => "capabilities:call",
            Scope::Publish => "capabilities:publish",
            Scope::Admin => "admin",
        }
    }

    /// Parses a wire name.
    pub fn parse(text: &str) -> Option<Scope> {
        Scope::ALL.into_iter().find(|s| s.as_str() == text)
    }
}

impl fmt::Display for Scope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identities_follow_the_grammar() {
        assert!(TenantId::parse("acme-1").is_ok());
        assert!(ProviderId::parse("whisper.gpu-0").is_ok());
        for bad in ["", "Acme", "-x", "a b", "a/b", "a:b"] {
            assert!(TenantId::parse(bad).is_err(), "{bad:?}");
            assert!(NodeId::parse(bad).is_err(), "{bad:?}");
        }
        assert!(TenantId::parse(&"a".repeat(63)).is_ok());
        assert!(TenantId::parse(&"a".repeat(64)).is_err());
        assert!(ProviderId::parse(&"a".repeat(128)).is_ok());
        assert!(ProviderId::parse(&"a".repeat(129)).is_err());
    }

    #[test]
    fn scopes_round_trip() {
        for scope in Scope::ALL {
            assert_eq!(Scope::parse(scope.as_str()), Some(scope));
        }
        assert_eq!(Scope::parse("capabilities:write"), None);
    }
}
