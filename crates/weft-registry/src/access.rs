//! Who may do what: tenants, API tokens and the bearer check every request makes.

use crate::error::RegistryError;
use crate::ids::{Scope, TenantId};
use crate::model::{TenantRecord, TokenRecord};
use crate::registry::{Page, Principal, Registry, TenantState, paginate, put};
use crate::store::Table;
use crate::util::{base64url, now_rfc3339, random_bytes, sha256, sha256_hex};

impl Registry {
    /// On a registry with no tenant yet, creates the default tenant and an admin token and
    /// returns the token's secret (shown once; only its hash is kept). Otherwise `None`.
    pub fn bootstrap(&self) -> Result<Option<String>, RegistryError> {
        let mut state = self.write();
        if !state.tenants.is_empty() {
            return Ok(None);
        }
        let tenant = TenantRecord {
            id: TenantId::default_tenant(),
            name: "Default tenant".into(),
            created_at: now_rfc3339(),
        };
        let (token, secret) = new_token(&tenant.id, "bootstrap admin", vec![Scope::Admin])?;
        self.store.apply(&[
            put(Table::Tenants, tenant.id.to_string(), &tenant),
            put(Table::Tokens, token.id.clone(), &token),
        ])?;
        state.index_token(token);
        state
            .tenants
            .insert(tenant.id.clone(), TenantState::new(tenant));
        Ok(Some(secret))
    }

    /// Resolves a bearer secret; `None` when unknown or revoked.
    pub fn authenticate(&self, secret: &str) -> Option<Principal> {
        let state = self.read();
        let principal = state.tokens_by_hash.get(&sha256(secret.as_bytes()))?;
        let token = state.tokens.get(&principal.token_id)?;
        if token.revoked_at.is_some() || !state.tenants.contains_key(&token.tenant) {
            return None;
        }
        Some(principal.clone())
    }

    /// Creates a tenant.
    pub fn create_tenant(&self, id: TenantId, name: String) -> Result<TenantRecord, RegistryError> {
        let mut state = self.write();
        if state.tenants.contains_key(&id) {
            return Err(RegistryError::Conflict(format!(
                "tenant {id} already exists"
            )));
        }
        let record = TenantRecord {
            id,
            name,
            created_at: now_rfc3339(),
        };
        self.store
            .apply(&[put(Table::Tenants, record.id.to_string(), &record)])?;
        state
            .tenants
            .insert(record.id.clone(), TenantState::new(record.clone()));
        Ok(record)
    }

    /// Tenants in id order, after `cursor`.
    pub fn list_tenants(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<TenantRecord>, RegistryError> {
        let state = self.read();
        let records: Vec<(String, TenantRecord)> = state
            .tenants
            .values()
            .map(|t| (t.record.id.to_string(), t.record.clone()))
            .collect();
        paginate(records, after, limit)
    }

    /// Creates a token for `tenant`; returns it and its secret (shown once).
    pub fn create_token(
        &self,
        tenant: &TenantId,
        name: String,
        scopes: Vec<Scope>,
    ) -> Result<(TokenRecord, String), RegistryError> {
        if scopes.is_empty() {
            return Err(RegistryError::Invalid(
                "a token needs at least one scope".into(),
            ));
        }
        let mut state = self.write();
        if !state.tenants.contains_key(tenant) {
            return Err(RegistryError::not_found(format!("tenant {tenant}")));
        }
        let (token, secret) = new_token(tenant, &name, scopes)?;
        self.store
            .apply(&[put(Table::Tokens, token.id.clone(), &token)])?;
        state.index_token(token.clone());
        Ok((token, secret))
    }

    /// The tokens of `tenant`, in id order.
    pub fn list_tokens(
        &self,
        tenant: &TenantId,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Page<TokenRecord>, RegistryError> {
        let state = self.read();
        let records: Vec<(String, TokenRecord)> = state
            .tokens
            .values()
            .filter(|t| &t.tenant == tenant)
            .map(|t| (t.id.clone(), t.clone()))
            .collect();
        paginate(records, after, limit)
    }

    /// Revokes a token of `tenant` (idempotent). Another tenant's token is not found.
    pub fn revoke_token(&self, tenant: &TenantId, id: &str) -> Result<TokenRecord, RegistryError> {
        let mut state = self.write();
        let Some(token) = state.tokens.get(id).filter(|t| &t.tenant == tenant) else {
            return Err(RegistryError::not_found(format!("token {id}")));
        };
        if token.revoked_at.is_some() {
            return Ok(token.clone());
        }
        let mut revoked = token.clone();
        revoked.revoked_at = Some(now_rfc3339());
        self.store
            .apply(&[put(Table::Tokens, revoked.id.clone(), &revoked)])?;
        state.tokens.insert(revoked.id.clone(), revoked.clone());
        Ok(revoked)
    }

    /// The tenant a token belongs to, if the token exists.
    pub fn token_tenant(&self, id: &str) -> Option<TenantId> {
        self.read().tokens.get(id).map(|t| t.tenant.clone())
    }

    /// Whether `tenant` exists.
    pub fn tenant_exists(&self, tenant: &TenantId) -> bool {
        self.read().tenants.contains_key(tenant)
    }
}

fn new_token(
    tenant: &TenantId,
    name: &str,
    scopes: Vec<Scope>,
) -> Result<(TokenRecord, String), RegistryError> {
    let id_bytes = random_bytes::<8>()?;
    let id = format!(
        "tok_{}",
        id_bytes
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    );
    let secret = format!("weft_{}", base64url(&random_bytes::<32>()?));
    let mut scopes = scopes;
    scopes.sort();
    scopes.dedup();
    let token = TokenRecord {
        id,
        tenant: tenant.clone(),
        name: name.to_owned(),
        scopes,
        secret_sha256: sha256_hex(secret.as_bytes()),
        created_at: now_rfc3339(),
        revoked_at: None,
    };
    Ok((token, secret))
}
