//! The narrow persistence interface the registry owns, and its embedded redb backend.
//!
//! The registry keeps its working state in memory and uses a [`Store`] only to make changes
//! durable and to load them back at start. The interface is deliberately small — named
//! tables of string keys and byte values, full scans, and atomic batches — so that a
//! clustered backend (NATS JetStream key-value buckets) can implement it beside the
//! embedded one.
//!
//! Contract every backend keeps: when [`Store::apply`] returns `Ok`, every write in the batch
//! is durable (survives `SIGKILL` and power loss as far as the medium allows) and visible to
//! later reads; when it returns `Err`, none of them is.

use std::path::Path;

use redb::{Database, ReadableDatabase, ReadableTable, TableDefinition};
use thiserror::Error;

/// The registry's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Table {
    /// Tenants, keyed by tenant id.
    Tenants,
    /// API tokens, keyed by token id (only a hash of each secret is stored).
    Tokens,
    /// Providers, keyed by `tenant/provider`.
    Providers,
    /// Revision histories, keyed by `tenant/id@version`.
    Versions,
    /// Canonical descriptor JSON, keyed by revision (content-addressed).
    Contents,
    /// The change feed, keyed by `tenant/{sequence:020}`.
    Events,
    /// Stored responses for idempotent replay, keyed by `tenant/route/key`.
    Idempotency,
    /// Each tenant's compatibility settings, keyed by tenant id.
    Compatibility,
}

impl Table {
    /// Every table.
    pub const ALL: [Table; 8] = [
        Table::Tenants,
        Table::Tokens,
        Table::Providers,
        Table::Versions,
        Table::Contents,
        Table::Events,
        Table::Idempotency,
        Table::Compatibility,
    ];

    /// The table's stable name (also its name on disk).
    pub fn name(self) -> &'static str {
        match self {
            Table::Tenants => "tenants",
            Table::Tokens => "tokens",
            Table::Providers => "providers",
            Table::Versions => "versions",
            Table::Contents => "contents",
            Table::Events => "events",
            Table::Idempotency => "idempotency",
            Table::Compatibility => "compatibility",
        }
    }
}

/// One change in an atomic batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Write {
    /// Set `key` to `value`.
    Put {
        /// The table.
        table: Table,
        /// The key.
        key: String,
        /// The new value.
        value: Vec<u8>,
    },
    /// Remove `key` (no error if absent).
    Delete {
        /// The table.
        table: Table,
        /// The key.
        key: String,
    },
}

/// A storage failure. The registry reports these as `internal` errors.
#[derive(Debug, Error)]
#[error("store: {0}")]
pub struct StoreError(String);

impl StoreError {
    fn of(context: &str, error: impl std::fmt::Display) -> Self {
        StoreError(format!("{context}: {error}"))
    }
}

/// Durable key-value storage for the registry.
pub trait Store: Send + Sync + 'static {
    /// Every entry of `table`, in key order.
    fn scan(&self, table: Table) -> Result<Vec<(String, Vec<u8>)>, StoreError>;
    /// Entries of `table` with keys in `[from, to)`, in key order, at most `limit`.
    fn range(
        &self,
        table: Table,
        from: &str,
        to: &str,
        limit: usize,
    ) -> Result<Vec<(String, Vec<u8>)>, StoreError>;
    /// One entry.
    fn get(&self, table: Table, key: &str) -> Result<Option<Vec<u8>>, StoreError>;
    /// Applies every write atomically and durably (see the module documentation).
    fn apply(&self, writes: &[Write]) -> Result<(), StoreError>;
}

/// The embedded store: one redb database file.
pub struct RedbStore {
    db: Database,
}

type Def = TableDefinition<'static, &'static str, &'static [u8]>;

fn def(table: Table) -> Def {
    TableDefinition::new(table.name())
}

impl RedbStore {
    /// Page cache size: the registry serves reads from memory, so the store's cache only
    /// needs to absorb writes and start-up scans.
    pub const CACHE_BYTES: usize = 32 * 1024 * 1024;

    /// Opens (or creates) the database at `path` and makes sure every table exists.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let db = Database::builder()
            .set_cache_size(Self::CACHE_BYTES)
            .create(path)
            .map_err(|e| StoreError::of("open database", e))?;
        let txn = db.begin_write().map_err(|e| StoreError::of("begin", e))?;
        for table in Table::ALL {
            txn.open_table(def(table))
                .map_err(|e| StoreError::of("create table", e))?;
        }
        txn.commit().map_err(|e| StoreError::of("commit", e))?;
        Ok(Self { db })
    }
}

impl Store for RedbStore {
    fn scan(&self, table: Table) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let txn = self
            .db
            .begin_read()
            .map_err(|e| StoreError::of("begin read", e))?;
        let t = txn
            .open_table(def(table))
            .map_err(|e| StoreError::of("open table", e))?;
        let mut out = Vec::new();
        for entry in t.iter().map_err(|e| StoreError::of("scan", e))? {
            let (k, v) = entry.map_err(|e| StoreError::of("scan", e))?;
            out.push((k.value().to_owned(), v.value().to_vec()));
        }
        Ok(out)
    }

    fn range(
        &self,
        table: Table,
        from: &str,
        to: &str,
        limit: usize,
    ) -> Result<Vec<(String, Vec<u8>)>, StoreError> {
        let txn = self
            .db
            .begin_read()
            .map_err(|e| StoreError::of("begin read", e))?;
        let t = txn
            .open_table(def(table))
            .map_err(|e| StoreError::of("open table", e))?;
        let mut out = Vec::new();
        for entry in t.range(from..to).map_err(|e| StoreError::of("range", e))? {
            if out.len() == limit {
                break;
            }
            let (k, v) = entry.map_err(|e| StoreError::of("range", e))?;
            out.push((k.value().to_owned(), v.value().to_vec()));
        }
        Ok(out)
    }

    fn get(&self, table: Table, key: &str) -> Result<Option<Vec<u8>>, StoreError> {
        let txn = self
            .db
            .begin_read()
            .map_err(|e| StoreError::of("begin read", e))?;
        let t = txn
            .open_table(def(table))
            .map_err(|e| StoreError::of("open table", e))?;
        Ok(t.get(key)
            .map_err(|e| StoreError::of("get", e))?
            .map(|v| v.value().to_vec()))
    }

    fn apply(&self, writes: &[Write]) -> Result<(), StoreError> {
        if writes.is_empty() {
            return Ok(());
        }
        let txn = self
            .db
            .begin_write()
            .map_err(|e| StoreError::of("begin", e))?;
        for write in writes {
            match write {
                Write::Put { table, key, value } => {
                    let mut t = txn
                        .open_table(def(*table))
                        .map_err(|e| StoreError::of("open table", e))?;
                    t.insert(key.as_str(), value.as_slice())
                        .map_err(|e| StoreError::of("insert", e))?;
                }
                Write::Delete { table, key } => {
                    let mut t = txn
                        .open_table(def(*table))
                        .map_err(|e| StoreError::of("open table", e))?;
                    t.remove(key.as_str())
                        .map_err(|e| StoreError::of("remove", e))?;
                }
            }
        }
        // Durability::Immediate (redb's default): commit returns after the data is synced.
        txn.commit().map_err(|e| StoreError::of("commit", e))
    }
}
