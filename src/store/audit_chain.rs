//! Reading the audit log's hash chain back (console schema unit 0004 writes it).
//!
//! The chain is recomputed here from each record's stored fields, with the expression written
//! out in this query rather than by calling the database's own `audit_record_hash()`: a
//! function replaced to hide a change would hide nothing from this one.

use sqlx::PgPool;

use super::StoreError;
use crate::domain::audit_chain::{ChainHead, Link};

/// The hashed form of record `r`, as unit 0004's `audit_record_hash(r, r.prev_hash)` has it.
const RECOMPUTED: &str = "sha256(convert_to(jsonb_build_array( \
    encode(r.prev_hash, 'hex'), r.id, \
    to_char(r.at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), \
    r.actor, r.host, r.ssh_client, r.action, r.tenant_id, r.knowledge_space_id, \
    r.bootstrap_id, r.lease_id, r.request_id, r.action_id, r.reason, \
    r.row_before, r.row_after, r.outcome)::text, 'UTF8'))";

/// How many records one statement reads: memory stays flat however long the log is.
pub const PAGE: i64 = 2_000;

#[derive(sqlx::FromRow)]
struct LinkRow {
    id: i64,
    chain_seq: i64,
    prev_hash: Option<Vec<u8>>,
    hash: Vec<u8>,
    recomputed: Vec<u8>,
}

impl From<LinkRow> for Link {
    fn from(row: LinkRow) -> Self {
        Self {
            id: row.id,
            seq: row.chain_seq,
            prev_hash: row.prev_hash,
            hash: row.hash,
            recomputed: row.recomputed,
        }
    }
}

/// The next page of the chain after position `after_seq`, in chain order.
pub async fn links_after(pool: &PgPool, after_seq: i64) -> Result<Vec<Link>, StoreError> {
    let sql = format!(
        "SELECT r.id, r.chain_seq, r.prev_hash, r.hash, {RECOMPUTED} AS recomputed \
         FROM bootstrap_console.audit_log r WHERE r.chain_seq > $1 \
         ORDER BY r.chain_seq LIMIT $2"
    );
    let rows = sqlx::query_as::<_, LinkRow>(sqlx::AssertSqlSafe(sql))
        .bind(after_seq)
        .bind(PAGE)
        .fetch_all(pool)
        .await?;
    Ok(rows.into_iter().map(Link::from).collect())
}

/// The record whose hash is `hash`, if one is: where a record's predecessor went.
pub async fn record_with_hash(pool: &PgPool, hash: &[u8]) -> Result<Option<i64>, StoreError> {
    Ok(sqlx::query_scalar(
        "SELECT id FROM bootstrap_console.audit_log WHERE hash = $1 ORDER BY chain_seq LIMIT 1",
    )
    .bind(hash)
    .fetch_optional(pool)
    .await?)
}

/// The last record of the chain.
pub async fn head(pool: &PgPool) -> Result<Option<ChainHead>, StoreError> {
    let row: Option<(i64, i64, Vec<u8>)> = sqlx::query_as(
        "SELECT id, chain_seq, hash FROM bootstrap_console.audit_log \
         ORDER BY chain_seq DESC LIMIT 1",
    )
    .fetch_optional(pool)
    .await?;
    Ok(row.map(|(id, seq, hash)| ChainHead { id, seq, hash }))
}
