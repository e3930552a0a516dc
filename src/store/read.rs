//! Reads of one view at a time: the detail of a space, the leases view, the audit view, and the
//! rows an action plans on. (The board's rows are kept current by [`super::sync`].)
//!
//! Queries that show ages select `now()` alongside the data, so ages and expiries are computed
//! against the database clock of the very same snapshot (domain contract §2). The
//! `(SELECT now()) clock LEFT JOIN (…) ON true` shape returns one row even when nothing
//! matches, so the clock is never missing. The pool's sessions default to read-only
//! transactions (see `connect`), so these statements cannot write.

use chrono::{DateTime, Utc};
use sqlx::postgres::PgRow;
use sqlx::{FromRow, PgConnection, Row};
use uuid::Uuid;

use super::rows::{AuditRow, BootstrapRow, ItemRow, LeaseRow};
use super::{Layout, StoreError};

/// Bootstrap columns, qualified with `b.`.
pub(super) const BOOTSTRAP_COLUMNS: &str = "b.id, b.tenant_id, b.knowledge_space_id, b.idempotency_key, \
    b.checkpoint, b.run_state, b.total_documents, b.completed_documents, b.worker_id, \
    b.lease_token, b.lease_expires_at, b.heartbeat_at, b.last_error_code, b.last_error_message, \
    b.row_version, b.published_publication_id, b.published_fingerprint, \
    b.published_head_revision, b.snapshot_metadata, b.created_at, b.updated_at, b.completed_at";

/// The lease columns of `l`, renamed with a `lease_` prefix; NULL where the table predates the
/// heartbeat columns.
fn prefixed_lease_columns(layout: &Layout) -> String {
    let (heartbeat, expires) = heartbeat_columns(layout);
    format!(
        "l.id AS lease_id, l.operation AS lease_operation, l.acquired_at AS lease_acquired_at, \
         {heartbeat} AS lease_heartbeat_at, {expires} AS lease_expires_at_"
    )
}

pub(crate) fn heartbeat_columns(layout: &Layout) -> (&'static str, &'static str) {
    if layout.lease_heartbeats {
        ("l.heartbeat_at", "l.expires_at")
    } else {
        ("NULL::timestamptz", "NULL::timestamptz")
    }
}

/// Lease columns under their own names, for `LeaseRow`.
pub(super) fn lease_columns(layout: &Layout) -> String {
    let (heartbeat, expires) = heartbeat_columns(layout);
    format!(
        "l.id, l.tenant_id, l.knowledge_space_id, l.operation, l.acquired_at, \
         {heartbeat} AS heartbeat_at, {expires} AS expires_at"
    )
}

/// The `lease_`-prefixed columns of a row as the lease of (`tenant_id`, `space`), if any.
fn prefixed_lease(
    row: &PgRow,
    tenant_id: &str,
    space: Uuid,
) -> Result<Option<LeaseRow>, sqlx::Error> {
    let Some(id) = row.try_get::<Option<Uuid>, _>("lease_id")? else {
        return Ok(None);
    };
    Ok(Some(LeaseRow {
        id,
        tenant_id: tenant_id.to_string(),
        knowledge_space_id: space,
        operation: row.try_get("lease_operation")?,
        acquired_at: row.try_get("lease_acquired_at")?,
        heartbeat_at: row.try_get("lease_heartbeat_at")?,
        expires_at: row.try_get("lease_expires_at_")?,
    }))
}

/// Everything the detail view shows about one bootstrap.
#[derive(Debug, Clone)]
pub struct DetailRows {
    pub db_now: DateTime<Utc>,
    pub bootstrap: BootstrapRow,
    pub lease: Option<LeaseRow>,
    /// (status, count) for every status that has items.
    pub(crate) item_counts: Vec<(String, i64)>,
    /// Failed items, lowest ordinal first, at most [`FAILED_ITEMS_SHOWN`].
    pub failed_items: Vec<ItemRow>,
    pub running_item: Option<ItemRow>,
    /// Most recent first; `None` when the database has no audit table.
    pub audit: Option<Vec<AuditRow>>,
}

pub(crate) const FAILED_ITEMS_SHOWN: i64 = 100;
pub(crate) const AUDIT_RECORDS_SHOWN: i64 = 20;

const ITEM_JSON: &str = "json_build_object('bootstrap_id', i.bootstrap_id, \
    'document_asset_id', i.document_asset_id, 'document_version', i.document_version, \
    'document_sha256', i.document_sha256, 'ordinal', i.ordinal, \
    'compilation_attempt_id', i.compilation_attempt_id, 'status', i.status, \
    'last_error', i.last_error, 'updated_at', i.updated_at)";

/// The SQL of the detail query (public so a test can `EXPLAIN` it).
pub fn detail_sql(layout: &Layout) -> String {
    let audit = if layout.audit_table {
        format!(
            "(SELECT coalesce(json_agg(a ORDER BY a.at DESC, a.id DESC), '[]'::json) FROM ( \
               SELECT * FROM bootstrap_console.audit_log \
               WHERE tenant_id = b.tenant_id AND knowledge_space_id = b.knowledge_space_id \
               ORDER BY at DESC, id DESC LIMIT {AUDIT_RECORDS_SHOWN}) a)"
        )
    } else {
        "NULL::json".to_string()
    };
    format!(
        "SELECT now() AS db_now, {BOOTSTRAP_COLUMNS}, {lease}, \
           (SELECT coalesce(json_agg(json_build_array(c.status, c.n)), '[]'::json) FROM ( \
              SELECT i.status, count(*) AS n FROM legacy_space_publication_bootstrap_items i \
              WHERE i.bootstrap_id = b.id GROUP BY i.status) c) AS item_counts, \
           (SELECT coalesce(json_agg({ITEM_JSON} ORDER BY i.ordinal), '[]'::json) FROM ( \
              SELECT * FROM legacy_space_publication_bootstrap_items i \
              WHERE i.bootstrap_id = b.id AND i.status = 'failed' \
              ORDER BY i.ordinal LIMIT {FAILED_ITEMS_SHOWN}) i) AS failed_items, \
           (SELECT {ITEM_JSON} FROM legacy_space_publication_bootstrap_items i \
              WHERE i.bootstrap_id = b.id AND i.status = 'running' \
              ORDER BY i.ordinal LIMIT 1) AS running_item, \
           {audit} AS audit \
         FROM legacy_space_publication_bootstraps b \
         LEFT JOIN knowledge_space_mutation_leases l \
           ON l.tenant_id = b.tenant_id AND l.knowledge_space_id = b.knowledge_space_id \
         WHERE b.id = $1 AND ($2::text IS NULL OR b.tenant_id = $2)",
        lease = prefixed_lease_columns(layout)
    )
}

/// One bootstrap in depth, or `None` when there is no such bootstrap in scope.
pub async fn detail(
    conn: &mut PgConnection,
    layout: &Layout,
    bootstrap_id: Uuid,
    tenant: Option<&str>,
) -> Result<Option<DetailRows>, StoreError> {
    let row = crate::store::sql::query(sqlx::AssertSqlSafe(detail_sql(layout)))
        .bind(bootstrap_id)
        .bind(tenant)
        .fetch_optional(&mut *conn)
        .await?;
    let Some(row) = row else {
        return Ok(None);
    };
    let bootstrap = BootstrapRow::from_row(&row)?;
    let lease = prefixed_lease(&row, &bootstrap.tenant_id, bootstrap.knowledge_space_id)?;
    let counts: serde_json::Value = row.try_get("item_counts")?;
    let item_counts: Vec<(String, i64)> = serde_json::from_value(counts)?;
    let failed: serde_json::Value = row.try_get("failed_items")?;
    let running: Option<serde_json::Value> = row.try_get("running_item")?;
    let audit: Option<serde_json::Value> = row.try_get("audit")?;
    Ok(Some(DetailRows {
        db_now: row.try_get("db_now")?,
        bootstrap,
        lease,
        item_counts,
        failed_items: serde_json::from_value(failed)?,
        running_item: running.map(serde_json::from_value).transpose()?,
        audit: audit.map(serde_json::from_value).transpose()?,
    }))
}

/// A mutation lease and the bootstrap of its space, if that space has one.
#[derive(Debug, Clone)]
pub struct LeaseLine {
    pub lease: LeaseRow,
    pub bootstrap_id: Option<Uuid>,
    pub bootstrap_run_state: Option<String>,
    pub bootstrap_checkpoint: Option<String>,
}

#[derive(Debug, Clone)]
pub struct LeaseRows {
    pub db_now: DateTime<Utc>,
    pub lines: Vec<LeaseLine>,
}

/// Every mutation lease in scope, oldest first (or only the lease `only`, whatever its tenant
/// when no scope is given).
pub async fn leases(
    conn: &mut PgConnection,
    layout: &Layout,
    tenant: Option<&str>,
    only: Option<Uuid>,
) -> Result<LeaseRows, StoreError> {
    let sql = format!(
        "SELECT clock.db_now, x.* \
         FROM (SELECT now() AS db_now) clock \
         LEFT JOIN ( \
           SELECT {lease}, b.id AS bootstrap_id, b.run_state AS bootstrap_run_state, \
                  b.checkpoint AS bootstrap_checkpoint \
           FROM knowledge_space_mutation_leases l \
           LEFT JOIN legacy_space_publication_bootstraps b \
             ON b.tenant_id = l.tenant_id AND b.knowledge_space_id = l.knowledge_space_id \
           WHERE ($1::text IS NULL OR l.tenant_id = $1) AND ($2::uuid IS NULL OR l.id = $2) \
         ) x ON true \
         ORDER BY x.acquired_at, x.id",
        lease = lease_columns(layout)
    );
    let rows = crate::store::sql::query(sqlx::AssertSqlSafe(sql))
        .bind(tenant)
        .bind(only)
        .fetch_all(&mut *conn)
        .await?;
    let mut db_now = None;
    let mut lines = Vec::with_capacity(rows.len());
    for row in &rows {
        db_now = Some(row.try_get("db_now")?);
        if row.try_get::<Option<Uuid>, _>("id")?.is_some() {
            lines.push(LeaseLine {
                lease: LeaseRow::from_row(row)?,
                bootstrap_id: row.try_get("bootstrap_id")?,
                bootstrap_run_state: row.try_get("bootstrap_run_state")?,
                bootstrap_checkpoint: row.try_get("bootstrap_checkpoint")?,
            });
        }
    }
    Ok(LeaseRows {
        db_now: db_now.ok_or(StoreError::NoClock)?,
        lines,
    })
}

/// The most recent audit records in scope, newest first.
pub async fn recent_audit(
    conn: &mut PgConnection,
    tenant: Option<&str>,
    limit: i64,
) -> Result<Vec<AuditRow>, StoreError> {
    let rows = crate::store::sql::query_as::<AuditRow>(
        "SELECT id, at, actor, host, ssh_client, action, tenant_id, knowledge_space_id, \
                bootstrap_id, lease_id, reason, row_before, row_after, outcome, \
                to_jsonb(a) ->> 'db_role' AS db_role \
         FROM bootstrap_console.audit_log a \
         WHERE ($1::text IS NULL OR tenant_id = $1) \
         ORDER BY at DESC, id DESC LIMIT $2",
    )
    .bind(tenant)
    .bind(limit)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows)
}

/// The last applied action of `action` on a space: its audit id, actor, host and request id.
pub(crate) async fn last_applied(
    conn: &mut PgConnection,
    (tenant, space): (&str, Uuid),
    action: &str,
) -> Result<Option<(i64, String, String, Option<Uuid>)>, StoreError> {
    Ok(crate::store::sql::query_as(
        "SELECT id, actor, host, request_id FROM bootstrap_console.audit_log \
         WHERE tenant_id = $1 AND knowledge_space_id = $2 AND action = $3 \
           AND outcome LIKE 'applied%' \
         ORDER BY at DESC, id DESC LIMIT 1",
    )
    .bind(tenant)
    .bind(space)
    .bind(action)
    .fetch_optional(&mut *conn)
    .await?)
}

/// Items of one bootstrap counted by status (for an action's plan).
pub(crate) async fn item_counts(
    conn: &mut PgConnection,
    bootstrap_id: Uuid,
) -> Result<Vec<(String, i64)>, StoreError> {
    let rows = crate::store::sql::query_as::<(String, i64)>(
        "SELECT status, count(*) FROM legacy_space_publication_bootstrap_items \
         WHERE bootstrap_id = $1 GROUP BY status",
    )
    .bind(bootstrap_id)
    .fetch_all(&mut *conn)
    .await?;
    Ok(rows)
}

/// One bootstrap by id, without locking (for an action's plan).
pub async fn bootstrap(
    conn: &mut PgConnection,
    id: Uuid,
) -> Result<Option<BootstrapRow>, StoreError> {
    let sql = format!(
        "SELECT {BOOTSTRAP_COLUMNS} FROM legacy_space_publication_bootstraps b WHERE b.id = $1"
    );
    Ok(
        crate::store::sql::query_as::<BootstrapRow>(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?,
    )
}

/// Lease `id` as the lease view reads it, with the verdict of removing it as `seen` describes
/// (see [`super::rules`]), both from one snapshot and one clock, so the evidence shown and the
/// verdict are about the same row: `None` for the verdict when the lease is gone.
pub(crate) async fn lease_judged(
    db: &super::Db,
    id: Uuid,
    seen: &super::rules::LeaseSeen<'_>,
) -> Result<(LeaseRows, Option<Option<String>>), StoreError> {
    let mut tx = db.begin(super::db::TxKind::Snapshot).await?;
    let judged = lease_judged_in(&mut tx, db.layout(), id, seen).await;
    super::db::ended(tx, judged).await
}

async fn lease_judged_in(
    conn: &mut PgConnection,
    layout: &Layout,
    id: Uuid,
    seen: &super::rules::LeaseSeen<'_>,
) -> Result<(LeaseRows, Option<Option<String>>), StoreError> {
    use sqlx::Row;
    let rows = leases(&mut *conn, layout, None, Some(id)).await?;
    let sql = format!(
        "SELECT {} FROM knowledge_space_mutation_leases l WHERE l.id = $1",
        super::rules::lease_refusal(layout)
    );
    let query = crate::store::sql::query(sqlx::AssertSqlSafe(sql));
    let verdict = super::rules::bind_lease(query, id, seen)
        .fetch_optional(&mut *conn)
        .await?
        .map(|row| row.try_get("refusal"))
        .transpose()?;
    Ok((rows, verdict))
}

/// Bootstrap `id` as it is now, with the verdict of the action `seen` describes over it
/// (see [`super::rules`]): `None` for the verdict when the action holds.
pub(crate) async fn bootstrap_judged(
    conn: &mut PgConnection,
    id: Uuid,
    seen: &super::rules::BootstrapSeen<'_>,
) -> Result<Option<(BootstrapRow, Option<String>)>, StoreError> {
    use sqlx::{FromRow, Row};
    let sql = format!(
        "SELECT {BOOTSTRAP_COLUMNS}, {} FROM legacy_space_publication_bootstraps b WHERE b.id = $1",
        super::rules::BOOTSTRAP_REFUSAL
    );
    let query = crate::store::sql::query(sqlx::AssertSqlSafe(sql));
    let row = super::rules::bind_bootstrap(query, id, seen)
        .fetch_optional(&mut *conn)
        .await?;
    Ok(row
        .map(|row| Ok::<_, sqlx::Error>((BootstrapRow::from_row(&row)?, row.try_get("refusal")?)))
        .transpose()?)
}

/// Which table's primary key an id prefix is looked up in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IdTable {
    Bootstraps,
    Leases,
}

/// Up to `limit` ids between `first` and `last`, in order, in `tenant`'s scope when there is
/// one: a primary-key range, never a scan. With a scope, bootstraps are also found by their
/// space id (through the tenant's unique index), which is how the board shows them.
pub(crate) async fn ids_in_range(
    conn: &mut PgConnection,
    table: IdTable,
    (first, last): (Uuid, Uuid),
    tenant: Option<&str>,
    limit: i64,
) -> Result<Vec<Uuid>, StoreError> {
    let sql = match table {
        IdTable::Bootstraps => {
            "SELECT id FROM legacy_space_publication_bootstraps \
               WHERE id BETWEEN $1 AND $2 AND ($4::text IS NULL OR tenant_id = $4) \
             UNION SELECT id FROM legacy_space_publication_bootstraps \
               WHERE tenant_id = $4 AND knowledge_space_id BETWEEN $1 AND $2 \
             ORDER BY id LIMIT $3"
        }
        IdTable::Leases => {
            "SELECT id FROM knowledge_space_mutation_leases \
             WHERE id BETWEEN $1 AND $2 AND ($4::text IS NULL OR tenant_id = $4) \
             ORDER BY id LIMIT $3"
        }
    };
    Ok(crate::store::sql::query_scalar(sql)
        .bind(first)
        .bind(last)
        .bind(limit)
        .bind(tenant)
        .fetch_all(&mut *conn)
        .await?)
}

/// Up to `limit` ids whose 32-hex form ends with `digits`, in `tenant`'s scope when there is
/// one (bootstraps by their space id too): the only lookup of ids that cannot use an index.
pub(crate) async fn ids_with_suffix(
    conn: &mut PgConnection,
    table: IdTable,
    digits: &str,
    starting: Option<(Uuid, Uuid)>,
    tenant: Option<&str>,
    limit: i64,
) -> Result<Vec<Uuid>, StoreError> {
    // `$4`..`$5`: the ids the first digits of a both-ends form allow (all, without them).
    let sql = match table {
        IdTable::Bootstraps => {
            "SELECT id FROM legacy_space_publication_bootstraps \
             WHERE ($3::text IS NULL OR tenant_id = $3) \
               AND ((id BETWEEN $4 AND $5 AND right(replace(id::text, '-', ''), length($1)) = $1) \
                    OR (knowledge_space_id BETWEEN $4 AND $5 \
                        AND right(replace(knowledge_space_id::text, '-', ''), length($1)) = $1)) \
             ORDER BY id LIMIT $2"
        }
        IdTable::Leases => {
            "SELECT id FROM knowledge_space_mutation_leases \
             WHERE ($3::text IS NULL OR tenant_id = $3) AND id BETWEEN $4 AND $5 \
               AND right(replace(id::text, '-', ''), length($1)) = $1 ORDER BY id LIMIT $2"
        }
    };
    let (first, last) = starting.unwrap_or((Uuid::nil(), Uuid::max()));
    Ok(crate::store::sql::query_scalar(sql)
        .bind(digits)
        .bind(limit)
        .bind(tenant)
        .bind(first)
        .bind(last)
        .fetch_all(&mut *conn)
        .await?)
}

/// The ids next to each of `ids` in the bootstrap and lease tables' primary keys (two index
/// probes per table and id): all a prefix needs to tell `ids` from the rest.
pub(crate) async fn neighbour_ids(
    conn: &mut PgConnection,
    ids: &[Uuid],
) -> Result<Vec<Uuid>, StoreError> {
    Ok(crate::store::sql::query_scalar(
        "SELECT n.id FROM unnest($1::uuid[]) AS x(id), LATERAL ( \
           (SELECT id FROM legacy_space_publication_bootstraps WHERE id < x.id \
             ORDER BY id DESC LIMIT 1) \
           UNION ALL (SELECT id FROM legacy_space_publication_bootstraps WHERE id > x.id \
             ORDER BY id LIMIT 1) \
           UNION ALL (SELECT id FROM knowledge_space_mutation_leases WHERE id < x.id \
             ORDER BY id DESC LIMIT 1) \
           UNION ALL (SELECT id FROM knowledge_space_mutation_leases WHERE id > x.id \
             ORDER BY id LIMIT 1)) AS n(id)",
    )
    .bind(ids)
    .fetch_all(&mut *conn)
    .await?)
}

/// Every id the console shows in `tenant`'s scope (all tenants without one): bootstrap ids,
/// their spaces' ids, lease ids and their spaces' ids — what shown ids must be told apart from.
pub(crate) async fn ids_in_scope(
    conn: &mut PgConnection,
    tenant: Option<&str>,
) -> Result<Vec<Uuid>, StoreError> {
    // Sent as one byte string of 16-byte ids per table: 100,000 ids cost the client a copy,
    // not 100,000 rows to decode. A space id is sent only where it differs from its
    // bootstrap's id (never, for legacy spaces).
    type Packed = Option<Vec<u8>>;
    let (bootstraps, spaces, leases): (Packed, Packed, Packed) = crate::store::sql::query_as(
        "SELECT string_agg(uuid_send(b.id), ''::bytea), \
                    string_agg(uuid_send(b.knowledge_space_id), ''::bytea) \
                      FILTER (WHERE b.knowledge_space_id <> b.id), \
                    (SELECT string_agg(uuid_send(l.id) || uuid_send(l.knowledge_space_id), \
                                       ''::bytea) \
                       FROM knowledge_space_mutation_leases l \
                      WHERE $1::text IS NULL OR l.tenant_id = $1) \
             FROM legacy_space_publication_bootstraps b \
             WHERE $1::text IS NULL OR b.tenant_id = $1",
    )
    .bind(tenant)
    .fetch_one(&mut *conn)
    .await?;
    Ok([bootstraps, spaces, leases]
        .into_iter()
        .flatten()
        .flat_map(|bytes| {
            bytes
                .chunks_exact(16)
                .map(|id| Uuid::from_bytes(id.try_into().expect("16 bytes")))
                .collect::<Vec<_>>()
        })
        .collect())
}

/// The bootstrap named by `id` as a bootstrap id, else as a space id (commands accept either),
/// in one round trip.
pub(crate) async fn bootstrap_by_id_or_space(
    conn: &mut PgConnection,
    id: Uuid,
) -> Result<Option<BootstrapRow>, StoreError> {
    let sql = format!(
        "(SELECT {BOOTSTRAP_COLUMNS} FROM legacy_space_publication_bootstraps b WHERE b.id = $1) \
         UNION ALL \
         (SELECT {BOOTSTRAP_COLUMNS} FROM legacy_space_publication_bootstraps b \
          WHERE b.knowledge_space_id = $1 AND b.id <> $1 ORDER BY b.created_at LIMIT 1) \
         LIMIT 1"
    );
    Ok(
        crate::store::sql::query_as::<BootstrapRow>(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?,
    )
}

/// One lease by id, without locking (for an action's plan).
pub async fn lease(
    conn: &mut PgConnection,
    layout: &Layout,
    id: Uuid,
) -> Result<Option<LeaseRow>, StoreError> {
    let sql = format!(
        "SELECT {} FROM knowledge_space_mutation_leases l WHERE l.id = $1",
        lease_columns(layout)
    );
    Ok(
        crate::store::sql::query_as::<LeaseRow>(sqlx::AssertSqlSafe(sql))
            .bind(id)
            .fetch_optional(&mut *conn)
            .await?,
    )
}

/// The lease currently on a space, if any (on the pool, or inside a write transaction).
pub(crate) async fn lease_of_space<'e, E: sqlx::PgExecutor<'e>>(
    executor: E,
    layout: &Layout,
    tenant: &str,
    space: Uuid,
) -> Result<Option<LeaseRow>, StoreError> {
    let sql = format!(
        "SELECT {} FROM knowledge_space_mutation_leases l \
         WHERE l.tenant_id = $1 AND l.knowledge_space_id = $2",
        lease_columns(layout)
    );
    Ok(
        crate::store::sql::query_as::<LeaseRow>(sqlx::AssertSqlSafe(sql))
            .bind(tenant)
            .bind(space)
            .fetch_optional(executor)
            .await?,
    )
}

/// The audit record of an applied action (its id, the action's name and its subject's id), if
/// it was applied before. A record that bears the action id but another action or subject is
/// not this action's: the database's functions refuse to act under that id.
pub(crate) async fn audit_of_action<'e, E: sqlx::PgExecutor<'e>>(
    executor: E,
    (action_id, action, subject): (Uuid, &str, Uuid),
) -> Result<Option<i64>, StoreError> {
    Ok(crate::store::sql::query_scalar(
        "SELECT id FROM bootstrap_console.audit_log \
         WHERE action_id = $1 AND action = $2 AND coalesce(bootstrap_id, lease_id) = $3",
    )
    .bind(action_id)
    .bind(action)
    .bind(subject)
    .fetch_optional(executor)
    .await?)
}

/// Whether `tenant` has bootstraps, and (when the platform's `knowledge_spaces` table can be
/// read) knowledge spaces.
pub(crate) async fn tenant_presence(
    conn: &mut PgConnection,
    tenant: &str,
) -> Result<(bool, Option<bool>), StoreError> {
    let bootstraps: bool = crate::store::sql::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM legacy_space_publication_bootstraps WHERE tenant_id = $1)",
    )
    .bind(tenant)
    .fetch_one(&mut *conn)
    .await?;
    if bootstraps {
        return Ok((true, Some(true)));
    }
    // The platform's own table: absent or unreadable, it just cannot tell.
    let spaces = crate::store::sql::query_scalar::<bool>(
        "SELECT EXISTS (SELECT 1 FROM knowledge_spaces WHERE tenant_id = $1)",
    )
    .bind(tenant)
    .fetch_one(&mut *conn)
    .await
    .ok();
    Ok((false, spaces))
}

/// Every tenant that has bootstraps (to suggest what a mistyped scope meant).
pub(crate) async fn bootstrap_tenants(conn: &mut PgConnection) -> Result<Vec<String>, StoreError> {
    Ok(crate::store::sql::query_scalar(
        "SELECT DISTINCT tenant_id FROM legacy_space_publication_bootstraps ORDER BY 1",
    )
    .fetch_all(&mut *conn)
    .await?)
}
